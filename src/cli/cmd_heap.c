/*
 * cmd_heap.c — `vitals heap PID [--trim]`.
 */
#include "cli/cli.h"
#include "analyze/heap_verdict.h"
#include "analyze/refill.h"
#include "base/unknown.h"
#include "render/view.h"
#include "sample/heap.h"
#include "base/clock.h"
#include "sample/trim_follow.h"
#include "sample/watch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_TRIM = 1, OPT_JSON, OPT_NO_AGENT, OPT_AGENT_ONLY, OPT_TIMEOUT, OPT_NO_ARENAS, OPT_FOLLOW,
       OPT_FOLLOW_EVERY, OPT_TRIM_PERIOD, OPT_LEAD_IN, OPT_HTML, OPT_FORCE };

static const struct vt_option heap_options[] = {
	{ "trim", 0, NULL, "call malloc_trim(0) in the target (changes it: it releases\n"
			   "free pages, holding each arena's lock in turn) and report\n"
			   "RssAnon, committed and mallinfo2 before and after, measured", OPT_TRIM },
	{ "follow", 0, "DURATION", "with --trim: then follow the refill this long (2m, 30s):\n"
				   "committed every --follow-every, the curve, its half-life,\n"
				   "the level it returns to and when, and what a periodic\n"
				   "trim would hold (reads only; Ctrl-C ends it, the curve so\n"
				   "far reported)", OPT_FOLLOW },
	{ "follow-every", 0, "DURATION", "the follow's interval (default: --follow / 120, from\n"
					 "0.1s to 1s)", OPT_FOLLOW_EVERY },
	{ "trim-period", 0, "DURATION", "with --follow: the trim period the verdict computes the\n"
					"relief for (default: near the half-life)", OPT_TRIM_PERIOD },
	{ "lead-in", 0, "DURATION", "with --follow: read committed this long before the trim,\n"
				    "at the follow's interval, to know whether it was still\n"
				    "growing (default: --follow / 12, from 2s to 10s; 0:\n"
				    "none)", OPT_LEAD_IN },
	{ "html", 0, "FILE", "with --follow: the refill's chart and verdict as one HTML\n"
			     "file", OPT_HTML },
	{ "force", 0, NULL, "overwrite the --html file", OPT_FORCE },
	{ "json", 0, NULL, "machine-readable output (schema vitals.heap, docs/json.md)", OPT_JSON },
	{ "no-agent", 0, NULL, "use ptrace even when an agent answers", OPT_NO_AGENT },
	{ "agent-only", 0, NULL, "never use ptrace", OPT_AGENT_ONLY },
	{ "no-arenas", 0, NULL, "mallinfo2 alone: one call, the shortest stop, no per-arena\n"
				"table (glibc)", OPT_NO_ARENAS },
	{ "timeout", 0, "MS", "longest a single injected call may run (default 2000)", OPT_TIMEOUT },
	{ 0 }
};

static const struct vt_exit_note heap_exits[] = {
	{ 3, NULL },
	{ 4, "it exited meanwhile (with --follow: the curve up to its exit is reported)" },
	{ 5, "ptrace not permitted and no agent (the message says which rule)" },
	{ 6, "kernel thread" }, { 7, "zombie" },
	{ 8, "refused before any thread was stopped: a malloc it does not read, a sanitizer\n"
	     "runtime, a 32-bit or x32 program (docs/inject.md)" },
	{ 10, "a call timed out (abandoned, the target restored)" },
	{ 11, "a call faulted (abandoned, the target restored)" },
	{ 14, "not right now, nothing touched: the process is stopped (SIGSTOP, Ctrl-Z), or\n"
	      "no thread was where a call is safe" },
	{ 130, "--follow stopped on request (Ctrl-C, SIGTERM): the trim had returned, the curve so far\n"
	       "is reported" },
	{ -1, NULL },
};

static const char *const heap_examples[] = {
	"vitals heap PID",
	"vitals heap --trim PID",
	"vitals heap --trim --follow 2m PID",
	"vitals heap --json --no-agent PID",
	NULL,
};

struct heap_opts {
	struct vt_heap_opts heap;
	bool json;
	double follow_s, follow_every_s, trim_period_s;   /* 0: not given */
	double lead_s;                /* NAN: not given */
	const char *html;
	bool force;
};

static int heap_option(void *ctx, int id, const char *arg)
{
	struct heap_opts *o = ctx;
	long ms;
	int rc;

	switch (id) {
	case OPT_TRIM: o->heap.trim = true; break;
	case OPT_JSON: o->json = true; break;
	case OPT_NO_AGENT: o->heap.no_agent = true; break;
	case OPT_AGENT_ONLY: o->heap.no_ptrace = true; break;
	case OPT_NO_ARENAS: o->heap.arenas = false; break;
	case OPT_FOLLOW: return vt_cli_duration(&vt_cmd_heap, "follow", arg, 1, 7 * 86400, &o->follow_s);
	case OPT_FOLLOW_EVERY: return vt_cli_duration(&vt_cmd_heap, "follow-every", arg, 0.05, 3600, &o->follow_every_s);
	case OPT_HTML: o->html = arg; break;
	case OPT_FORCE: o->force = true; break;
	case OPT_TRIM_PERIOD: return vt_cli_duration(&vt_cmd_heap, "trim-period", arg, 0.1, 0, &o->trim_period_s);
	case OPT_LEAD_IN: return vt_cli_duration(&vt_cmd_heap, "lead-in", arg, 0, 3600, &o->lead_s);
	case OPT_TIMEOUT:
		if ((rc = vt_cli_count(&vt_cmd_heap, "timeout", arg, 10, 600000, &ms)))
			return rc;
		o->heap.timeout_ms = (int)ms;
		break;
	}
	return 0;
}

struct html_out {
	const struct vt_heap_sample *h;
	const struct vt_heap_refill *r;
};

static int write_html(FILE *f, const void *ctx, struct vt_err *err)
{
	const struct html_out *o = ctx;

	(void)err;
	return vt_render_heap_html(f, o->h, o->r);
}

/* The follow's progress on stderr: redrawn on a terminal, a line every 30 s elsewhere. */
struct follow_show {
	double before;                /* committed before the trim */
	double after;
	bool tty, drawn;
	double last_line;
};

static void follow_progress(void *ctx, const struct vt_trim_follow *f, double left_s)
{
	struct follow_show *sh = ctx;
	double c = f->committed[f->n - 1], t = f->t_s[f->n - 1], back = NAN;
	char now[32], left[32];

	if (!sh->tty && t - sh->last_line < 30)
		return;
	sh->last_line = t;
	if (isfinite(c) && sh->before > sh->after)
		back = 100 * (c - sh->after) / (sh->before - sh->after);
	fprintf(stderr, "%svitals heap: following the refill, %s left: committed %s, %.0f%% of what the "
		"trim returned is back%s", sh->tty ? "\r\033[K" : "",
		vt_fmt_span(left_s < 0 ? 0 : left_s, left, sizeof(left)), vt_fmt_size(c, now, sizeof(now)),
		isfinite(back) ? back : 0.0, sh->tty ? "" : "\n");
	sh->drawn = sh->tty;
}

/*
 * Before the trim: committed read for o->lead_s at the follow's interval,
 * its least-squares slope into *slope (bytes/s), so the verdict can tell a
 * refill from growth that was going on anyway.  Reads only.  The target
 * exiting, or Ctrl-C, ends the command here: no trim was made.
 */
static int lead_in(struct vt_watch *w, int pid, const struct heap_opts *o, volatile sig_atomic_t *stop,
		   double *slope)
{
	struct vt_trim_follow lead = { 0 };
	struct vt_trim_follow_opts lo = { o->lead_s, o->follow_every_s, stop, NULL, NULL };
	struct vt_proc_status st;
	struct vt_err err;
	char span[32];
	double t0 = vt_mono_s();
	int rc;

	if ((rc = vt_watch_status(w, &st, &err)))
		return vt_cli_error(&err);
	fprintf(stderr, "vitals heap: reading committed for %s before the trim: was it still growing?\n",
		vt_fmt_span(o->lead_s, span, sizeof(span)));
	rc = vt_trim_follow_run(w, t0, vt_known(st.rss_anon) && vt_known(st.vm_swap)
				? (double)(st.rss_anon + st.vm_swap) : NAN, &lo, &lead, &err);
	if (rc) {
		vt_trim_follow_release(&lead);
		return vt_cli_error(&err);
	}
	*slope = vt_refill_slope(lead.t_s, lead.committed, lead.n);
	rc = lead.end;
	vt_trim_follow_release(&lead);
	if (rc == VT_FOLLOW_GONE) {
		fprintf(stderr, "vitals heap: process %d exited before the trim: nothing was trimmed\n", pid);
		return vt_code_exit(VT_E_GONE);
	}
	if (rc == VT_FOLLOW_STOPPED) {
		fprintf(stderr, "vitals heap: stopped on request before the trim: nothing was trimmed\n");
		return VT_EXIT_STOPPED;
	}
	return VT_EXIT_OK;
}

static int heap_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct heap_opts o = { .heap.arenas = true, .heap.blocks = true, .heap.timeout_ms = 2000, .lead_s = NAN };
	struct vt_heap_sample h;
	struct vt_heap_verdict v;
	struct vt_heap_report report;
	struct vt_trim_follow follow = { 0 };
	struct vt_refill_verdict rv;
	struct vt_heap_refill refill = { 0 };
	struct vt_args args;
	struct vt_procfs pfs;
	struct vt_watch *w = NULL;
	struct vt_err err;
	volatile sig_atomic_t *stop = NULL;
	double lead_slope = NAN;
	int pid, rc, status = VT_EXIT_OK;

	if ((rc = vt_cli_parse(cmd, argc, argv, heap_option, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (o.heap.no_agent && o.heap.no_ptrace)
		return vt_cli_usage_error("heap", "--no-agent and --agent-only leave no way to read");
	if (o.follow_s > 0 && !o.heap.trim)
		return vt_cli_usage_error("heap", "--follow follows the refill after a trim: give --trim too");
	if ((o.follow_every_s > 0 || o.trim_period_s > 0 || isfinite(o.lead_s)) && !(o.follow_s > 0))
		return vt_cli_usage_error("heap", "--%s is for --follow", o.follow_every_s > 0 ? "follow-every"
					  : o.trim_period_s > 0 ? "trim-period" : "lead-in");
	if (o.html && !(o.follow_s > 0))
		return vt_cli_usage_error("heap", "--html draws the refill: give --trim --follow too");
	/* said now, not after the trim and its follow */
	if (o.html && !o.force && lstat(o.html, &(struct stat){ 0 }) == 0)
		return vt_cli_usage_error("heap", "'%s' already exists: give another --html, or --force to "
					  "overwrite it", o.html);
	if (o.follow_s > 0 && o.follow_every_s > o.follow_s)
		return vt_cli_usage_error("heap", "--follow-every is longer than --follow");
	if (args.noperands != 1)
		return vt_cli_usage_error("heap", args.noperands == 0 ? "which process? give one PID"
								   : "one PID at a time");
	if (!vt_cli_parse_pid(args.operands[0], &pid))
		return vt_cli_usage_error("heap", "'%s' is not a process id", args.operands[0]);
	if (o.follow_s > 0 && !(o.follow_every_s > 0))
		o.follow_every_s = fmin(1, fmax(0.1, o.follow_s / 120));
	if (o.follow_s > 0 && !isfinite(o.lead_s))
		o.lead_s = fmin(10, fmax(2, o.follow_s / 12));
	o.heap.thread_arenas = o.heap.arenas;     /* the THREADS column of the per-arena table */
	if (vt_cli_open_procfs(&pfs, &err))
		return vt_cli_error(&err);
	if (o.follow_s > 0) {
		/* held open before the trim: the follow reads this process, never a reused pid */
		if ((rc = vt_watch_open(&pfs, pid, &(struct vt_watch_opts){ 0 }, &w, NULL, NULL, &err))) {
			vt_procfs_close(&pfs);
			return vt_cli_error(&err);
		}
		/* from here Ctrl-C lets a trim under way finish, then ends the follow */
		vt_cli_catch_stop(&stop);
		if (o.lead_s > 0 && (status = lead_in(w, pid, &o, stop, &lead_slope)) != VT_EXIT_OK) {
			vt_watch_close(w);
			vt_procfs_close(&pfs);
			return status;
		}
	}
	rc = vt_heap_take(&pfs, pid, &o.heap, &h, &err);
	if (rc) {
		vt_watch_close(w);
		vt_procfs_close(&pfs);
		return vt_cli_error(&err);
	}
	if (w && h.trim.done) {
		struct follow_show sh = { (double)h.trim.committed_before, (double)h.trim.committed_after,
					  isatty(STDERR_FILENO) != 0, false, 0 };
		struct vt_trim_follow_opts fo = { o.follow_s, o.follow_every_s, stop, follow_progress, &sh };
		char span[32], every[32];

		if (!sh.tty)
			fprintf(stderr, "vitals heap: following the refill for %s, committed every %s; Ctrl-C ends it\n",
				vt_fmt_span(o.follow_s, span, sizeof(span)),
				vt_fmt_span(o.follow_every_s, every, sizeof(every)));
		rc = vt_trim_follow_run(w, h.trim.after_mono_s,
					vt_known(h.trim.committed_after) ? (double)h.trim.committed_after : NAN, &fo,
					&follow, &err);
		if (sh.drawn)
			fputs("\r\033[K", stderr);
		if (rc) {
			status = vt_cli_error(&err);
			goto out;
		}
		refill.follow = &follow;
		refill.utf8 = vt_cli_utf8();
		if (vt_refill_judge(&(struct vt_refill_input){ follow.t_s, follow.committed, follow.n,
							       vt_known(h.trim.committed_before)
							       ? (double)h.trim.committed_before : NAN,
							       follow.every_s, o.trim_period_s,
							       isfinite(lead_slope) ? o.lead_s : 0, lead_slope }, &rv) == 0)
			refill.verdict = &rv;
		if (follow.end == VT_FOLLOW_GONE)
			fprintf(stderr, "vitals heap: process %d exited during the follow; the curve up to then is "
				"reported\n", pid);
		else if (follow.end == VT_FOLLOW_STOPPED)
			fprintf(stderr, "vitals heap: the follow was stopped on request; the curve so far is reported\n");
	} else if (w) {
		fprintf(stderr, "vitals heap: note: the trim's figures were not returned; nothing to follow\n");
	}
	report = (struct vt_heap_report){ &h, &v, (uint64_t)sysconf(_SC_PAGESIZE), w ? &refill : NULL };
	vt_heap_judge(&h, report.page_size, &v);
	rc = vt_view(o.json ? "json" : "text")->heap(stdout, &report);
	if ((status = vt_cli_stdout_done("heap", rc)))
		goto out;
	if (o.html && refill.follow &&
	    (status = vt_cli_write_out("heap", o.html, o.force, write_html, &(struct html_out){ &h, &refill })))
		goto out;
	if (refill.follow && follow.end == VT_FOLLOW_GONE)
		status = vt_code_exit(VT_E_GONE);
	else if (refill.follow && follow.end == VT_FOLLOW_STOPPED)
		status = VT_EXIT_STOPPED;
out:
	vt_heap_release(&h);
	vt_trim_follow_release(&follow);
	vt_watch_close(w);
	vt_procfs_close(&pfs);
	return status;
}

const struct vt_command vt_cmd_heap = {
	.name = "heap",
	.summary = "the allocator's own figures from a running process, without gdb",
	.synopsis = "[options] PID",
	.description =
"The allocator's own figures, read from the running process without a restart\n"
"and without gdb: for glibc every mallinfo2() field (live in the arenas and in\n"
"mmapped chunks, free-held, top pad, free chunks), live_fraction =\n"
"(uordblks + hblkhd) / (arena + hblkhd), and per arena from malloc_info() what\n"
"each holds, what malloc_trim(0) could give back and which threads allocate from\n"
"it (THREADS: each thread's glibc thread_arena, read from its memory with\n"
"process_vm_readv before the calls, nothing stopped for it, no debug symbols; ?\n"
"and a note saying why when it cannot be read); for jemalloc its stats.*\n"
"after an epoch refresh, for gperftools tcmalloc its numeric properties.  For\n"
"glibc also every malloc'd block it finds in the anonymous mappings (mmapped\n"
"chunks, walked header by header, read with process_vm_readv, nothing stopped):\n"
"address, size, resident bytes and the shape of its first bytes, redacted, held\n"
"against mallinfo2's hblks and hblkhd.  Then a verdict: live data the program holds (whether\n"
"it keeps growing is a question for vitals soak) or memory the allocator holds\n"
"(trim, fewer arenas, another allocator), with the figures it rests on.\n"
"\n"
"How: if the process runs the vitals agent (LD_PRELOAD=libvitals-agent.so) it\n"
"answers over its Unix socket.  Otherwise vitals calls the functions inside the\n"
"process with ptrace: it stops ONE thread that is blocked in a system call\n"
"(never the others), the called functions included, for about 0.1 ms on a quiet\n"
"host and under 1 ms (median) on a busy one; it blocks that thread's signals for the\n"
"call and restores every register, the signal mask and the interrupted system\n"
"call exactly.  docs/inject.md gives the measurements and the remaining risks.\n",
	.options = heap_options,
	.exits = heap_exits,
	.examples = heap_examples,
	.libs = VT_CMD_LIBELF,
	.run = heap_run,
};
