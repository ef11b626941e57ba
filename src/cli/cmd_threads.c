/*
 * cmd_threads.c — `vitals threads PID [-i 5s] [--for D] [--watch] [--json]`.
 *
 * Holds the process's thread files open (cpu/thread_watch) and samples every
 * thread every 100 ms or so over the interval; rates come from the first and
 * the last sample, states, wchans and system calls from all of them.  With
 * --for or --watch it measures interval after interval, the last sample of
 * one being the first of the next, so no CPU falls between two reports.
 */
#include "cli/cli.h"
#include "cli/name_cli.h"
#include "base/clock.h"
#include "analyze/diagnose.h"
#include "analyze/rates.h"
#include "proc/access.h"
#include "proc/listen.h"
#include "render/view.h"
#include "sample/locks.h"
#include "sample/thread_sampler.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define THREADS_MAX_INTERVAL_S 3600.0
#define WATCH_DEFAULT_INTERVAL_S 2.0
#define THREADS_COST_FACTOR 100      /* the step: at least 100 times a sample's CPU */
#define THREADS_UNWINDS_PER_WORD 4   /* waiters of one lock unwound a sample: its kind and place */

enum { OPT_INTERVAL = 1, OPT_FOR, OPT_WATCH, OPT_TOP, OPT_JSON, OPT_NAME };

static const struct vt_option threads_options[] = {
	{ "interval", 'i', "DURATION", "measure over DURATION (default 5s, 2s with --watch;\n"
				       "at least 0.2s, at most 1h; 30, 30s, 5m)", OPT_INTERVAL },
	{ "for", 0, "DURATION", "measure interval after interval for DURATION and\n"
				"report each (back to back: no gap between them)", OPT_FOR },
	{ "watch", 0, NULL, "a live view, redrawn every interval, busiest threads\n"
			    "first, cut to the terminal's height; until q (or\n"
			    "Ctrl-C), or --for ends", OPT_WATCH },
	{ "top", 0, "N", "list at most the N busiest threads", OPT_TOP },
	{ "name", 0, "NAME", "the process called NAME (comm or argv[0]) instead\n"
			     "of a PID; refused when NAME is several processes", OPT_NAME },
	{ "json", 0, NULL, "machine-readable output (vitals.threads, docs/json.md);\n"
			   "with --for or --watch one object per line", OPT_JSON },
	{ 0 }
};

static const struct vt_exit_note threads_exits[] = {
	{ 1, "partial: the process exited during an interval; the part measured is shown" },
	{ 3, NULL }, { 4, "it exited before two samples" }, { 5, NULL }, { 6, "kernel thread" },
	{ 7, "zombie" }, { 64, "usage error (an interval below 0.2 s, or a thread id instead of a process id)" },
	{ -1, NULL },
};

static const char *const threads_examples[] = {
	"vitals threads PID",
	"vitals threads -i 5s PID",
	"vitals threads --watch PID",
	"vitals threads --for 10m --json PID",
	NULL,
};

#define THREADS_DESCRIPTION \
"How much CPU a process uses now, which of its threads use it, and what they\n" \
"are doing.  vitals reads every thread's cumulative counters at the start and\n" \
"the end of the interval and divides the deltas by the interval: the figures\n" \
"are the rate over that interval, never a since-start average.  In between it\n" \
"samples every 100 ms (less often for a process so large that sampling would\n" \
"cost over 1% of a core, the first sample, which opens every thread's files,\n" \
"included: over 1 s a process of 1,000 threads gets its two ends only) to\n" \
"count thread states (R running or runnable, S sleeping, D uninterruptible,\n" \
"...), the kernel function each thread sleeps in (wchan) and the system call\n" \
"it is in.  Every thread's state is read each time; a thread whose schedstat\n" \
"(run time, timeslices, run-queue wait) has not moved since the sample\n" \
"before, in the same state, has not run: its wchan, system call and context\n" \
"switches are carried from that sample, not read again; a thread in state R\n" \
"has no wchan or system call to read.\n" \
"\n" \
"  sampled      thread states read (and how many had not run since the sample\n" \
"               before), waits read and carried, over the interval\n" \
"  process CPU  in cores (0.60 = 60% of one CPU), from the threads' schedstat\n" \
"               run time (nanoseconds); from /proc/PID/stat utime+stime (10 ms\n" \
"               ticks, includes exited threads) when schedstat is missing,\n" \
"               threads exited, or the ticks hold CPU that no thread's\n" \
"               schedstat does (threads that lived between two samples);\n" \
"               user/system split by the stat tick deltas; and\n" \
"               as a share of what it may use: the CPUs of its affinity mask, or\n" \
"               its cgroup's CPU quota (cpu.max) when that is smaller, with the\n" \
"               quota periods in which it was throttled\n" \
"  ps shows     (utime+stime) / time since start, what ps %CPU prints; a note\n" \
"               says when it differs from the interval rate by over 10 points\n" \
"  per thread   cores, share of the process, RUNQ (time runnable but waiting\n" \
"               for a CPU, share of the interval), voluntary and nonvoluntary\n" \
"               context switches per second (kept apart), last CPU, states,\n" \
"               most frequent wchan and system call, for each thread there\n" \
"               throughout the interval\n" \
"  short-lived  threads that started or ended during the interval, one row\n" \
"               (+-): their CPU is the process's minus that of the threads\n" \
"               there throughout, so it holds the threads no sample saw (a\n" \
"               thread per request lives a few ms), and the rows add up to\n" \
"               the process; counted when a sample saw one (--json lists each)\n" \
"  pools        threads there throughout whose names differ only by trailing\n" \
"               digits, with the spread of their CPU\n" \
"  diagnosis    stopped (every thread in state T: SIGSTOP, Ctrl-Z or a\n" \
"               debugger), idle, blocked on I/O, CPU throttled, core\n" \
"               contention (its threads want more CPUs than it may use), host\n" \
"               busy (its threads queued behind other processes), lock convoy,\n" \
"               busy poll (woken by a timer or timeout, doing little), serving\n" \
"               (woken by data or connections) or frequent wakeups that cannot\n" \
"               be told apart yet, accept stall (a listening TCP socket whose\n" \
"               queue of connections waiting for accept() was never empty at\n" \
"               the 100 ms reads), each with the figures it rests on;\n" \
"               otherwise \"no pattern\"\n" \
"  listening    each listening TCP socket: fewest and most connections\n" \
"               waiting for accept() over the reads, and its backlog limit\n"

#define THREADS_AFTER \
"Nothing is written to the target and it is never stopped.  wchan needs\n" \
"ptrace read access to the process, the system call ptrace attach access\n" \
"(same user and kernel.yama.ptrace_scope 0, or CAP_SYS_PTRACE); without it\n" \
"the column says why.\n"

struct threads_opts {
	double interval_s;
	bool interval_given;
	double for_s;          /* 0: one interval */
	bool watch;
	bool json;
	size_t top;            /* 0: all */
	const char *name;      /* --name, instead of a PID */
};

/* One run: the sampler, and the terminal while --watch reads its keys. */
struct threads_run {
	struct vt_procfs pfs;
	pid_t pid;
	struct vt_thread_sampler *sampler;
	volatile sig_atomic_t *stop;
	bool keys;                           /* --watch on a terminal: q quits */
	struct termios tty_saved;            /* restored when keys end */
	/* its listening sockets (the sampler's watch knows which), their accept queues read at every tick */
	struct vt_rates_listener listen[VT_RATES_LISTEN_MAX];
	size_t nlisten;
	unsigned listen_reads;
	/* the locks its threads wait on, counted at every sample of the interval */
	struct vt_lock_probe *lock_probe;
	struct vt_locks locks;
};

static int count_locks(void *ctx, const struct vt_threads_sample *s, struct vt_err *err)
{
	struct threads_run *run = ctx;

	return vt_lock_probe_sample(run->lock_probe, s, &run->locks, err);
}

/* every thread's counters, state and wait; what has not changed since the sample before is carried */
#define TW_FLAGS (VT_TW_CSW | VT_TW_WCHAN | VT_TW_SYSCALL | VT_TW_CARRY)

/*
 * --watch on a terminal reads keys: the terminal stops echoing and hands
 * over each key at once (ISIG stays: Ctrl-C and Ctrl-Z work as usual).
 */
static void keys_start(struct threads_run *run)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO) ||
	    tcgetattr(STDIN_FILENO, &run->tty_saved) != 0)
		return;
	raw = run->tty_saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	run->keys = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
}

static void keys_end(struct threads_run *run)
{
	if (run->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &run->tty_saved);
	run->keys = false;
}

/* Read the keys waiting: q (or Q) asks to stop; not Esc, which starts arrow keys. */
static void keys_read(struct threads_run *run)
{
	char key[32];
	ssize_t got, i;

	got = read(STDIN_FILENO, key, sizeof(key));
	if (got == 0)           /* the terminal hung up: stop listening, go on */
		run->keys = false;
	for (i = 0; i < got; i++)
		if (key[i] == 'q' || key[i] == 'Q')
			*run->stop = 1;
}

/* At an interval's start: no queue read yet. */
static void listen_begin(struct threads_run *run)
{
	run->nlisten = 0;
	run->listen_reads = 0;
}

/* One read of its listeners' queues: each one's fewest and most waiting so far. */
static void listen_read(struct threads_run *run)
{
	struct vt_listen_sock socks[VT_RATES_LISTEN_MAX];
	size_t n = 0, dropped = 0, i, k;
	const char *via;

	/* another user's process: its fds are not ours to list, nothing is read */
	if (vt_watch_listen(vt_thread_sampler_watch(run->sampler), vt_mono_s(), socks, VT_RATES_LISTEN_MAX, &n,
			    &dropped, &via, NULL) != VT_OK)
		return;
	for (i = 0; i < n; i++) {
		struct vt_rates_listener *l = NULL;

		for (k = 0; k < run->nlisten && !l; k++)
			if (!strcmp(run->listen[k].address, socks[i].address))
				l = &run->listen[k];
		if (!l && run->nlisten < VT_RATES_LISTEN_MAX && !run->listen_reads) {
			l = &run->listen[run->nlisten++];
			snprintf(l->address, sizeof(l->address), "%s", socks[i].address);
			l->min_queue = socks[i].queue;
			l->max_queue = socks[i].queue;
			l->backlog = socks[i].backlog == VT_LISTEN_UNKNOWN ? UINT32_MAX : socks[i].backlog;
		}
		if (!l)
			continue;   /* one opened since the interval began: judged from the next */
		if (socks[i].queue < l->min_queue)
			l->min_queue = socks[i].queue;
		if (socks[i].queue > l->max_queue)
			l->max_queue = socks[i].queue;
	}
	run->listen_reads++;
}

/*
 * The sampler's wait, at every tick: read the accept queues, then wait
 * until mono_ns or a stop request (Ctrl-C, or q with keys on).
 */
static void wait_until(void *ctx, uint64_t mono_ns)
{
	struct threads_run *run = ctx;
	struct pollfd in = { .fd = STDIN_FILENO, .events = POLLIN };
	uint64_t now;

	listen_read(run);
	while (!*run->stop && run->keys && (now = vt_mono_ns()) < mono_ns) {
		uint64_t left = mono_ns - now;
		struct timespec ts = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
		int ready = ppoll(&in, 1, &ts, NULL);

		if (ready > 0 && (in.revents & POLLIN))
			keys_read(run);
		else if (ready > 0)
			run->keys = false;      /* POLLHUP/POLLERR: no more keys */
	}
	if (!*run->stop && !run->keys)
		vt_sleep_until_ns(mono_ns, run->stop);
}

/* Terminal size for --watch; false when stdout is not a terminal. */
static bool term_size(size_t *rows, size_t *cols)
{
	if (!vt_cli_terminal_size(rows, cols) || *rows == 0)
		return false;
	if (*cols == 0)
		*cols = 80;
	return true;
}

/*
 * Print text cut to rows lines, each to cols characters (UTF-8: continuation
 * bytes take no column), so a redraw never scrolls; the last line says how
 * many lines were left out.
 */
static void print_cut(const char *text, size_t rows, size_t cols)
{
	size_t lines = 0, total = 0, col = 0;
	const char *p;

	for (p = text; *p; p++)
		total += *p == '\n';
	for (p = text; *p && (total <= rows || lines + 1 < rows); p++) {
		if (*p == '\n') {
			fputs("\033[K\n", stdout);     /* clear what a longer line left */
			lines++;
			col = 0;
			continue;
		}
		if (((unsigned char)*p & 0xC0) != 0x80)
			col++;
		if (col <= cols)
			fputc(*p, stdout);
	}
	if (total > rows)
		printf("  ... %zu more lines (a taller terminal, or --top N)\033[K\n", total - lines);
	fputs("\033[J", stdout);                   /* and below the last line */
}

/* One report: text, a redrawn screen, or a JSON object. */
static int report(const struct threads_opts *o, const struct vt_threads_rates *r,
		  const struct vt_diagnosis *d, double elapsed_s, unsigned nth, bool keys)
{
	bool repeated = o->watch || o->for_s > 0;
	struct vt_threads_report tr = { r, d, { .by_cpu = o->watch || o->top, .max_rows = o->top }, repeated };
	const struct vt_view *view = vt_view(o->json ? "json" : "text");
	char *text = NULL;
	size_t len = 0, rows, cols;
	FILE *mem;
	int rc;

	if (o->json || !o->watch) {
		if (repeated && !o->json)
			printf("%s--- interval %u, %.1f s after start ---\n", nth > 1 ? "\n" : "", nth,
			       elapsed_s);
		return view->threads(stdout, &tr);
	}
	mem = open_memstream(&text, &len);
	if (!mem)
		return -1;
	fprintf(mem, "vitals threads %d, every %.1f s, %.0f s so far%s\n", (int)r->pid, o->interval_s,
		elapsed_s, keys ? "; q quits" : o->for_s > 0 ? "" : "; Ctrl-C ends");
	rc = view->threads(mem, &tr);
	if (fclose(mem) != 0 || rc != 0) {
		free(text);
		return -1;
	}
	if (term_size(&rows, &cols)) {
		fputs("\033[H", stdout);          /* home, then overwrite: redraw in place (tmux too) */
		print_cut(text, rows, cols);
	} else {
		if (nth > 1)
			fputc('\n', stdout);
		fputs(text, stdout);
	}
	free(text);
	return fflush(stdout) == 0 ? 0 : -1;
}

/* Once: why wchan or the system call could not be read, and what to do. */
static void note_unreadable(struct threads_run *run, const struct vt_threads_rates *r, long uid)
{
	char reason[256], hint[256];
	size_t i;

	for (i = 0; i < r->n; i++)
		if ((!r->threads[i].wchan_ok || !r->threads[i].syscall_ok) &&
		    (strstr(r->threads[i].wchan_why, "ptrace") ||
		     strstr(r->threads[i].syscall_why, "ptrace")))
			break;
	if (i == r->n)
		return;
	vt_access_explain(&run->pfs, "wchan and syscall", uid, vt_thread_sampler_dirfd(run->sampler), reason, sizeof(reason),
			  hint, sizeof(hint));
	fprintf(stderr, "vitals: note: %s%s%s\n", reason, hint[0] ? "; " : "", hint);
}

static int threads_option(void *ctx, int id, const char *arg)
{
	struct threads_opts *o = ctx;
	long top;
	int rc;

	switch (id) {
	case OPT_INTERVAL:
		o->interval_given = true;
		return vt_cli_duration(&vt_cmd_threads, "interval", arg, VT_RATES_MIN_INTERVAL_S,
				       THREADS_MAX_INTERVAL_S, &o->interval_s);
	case OPT_FOR:
		if ((rc = vt_cli_duration(&vt_cmd_threads, "for", arg, 0, 0, &o->for_s)))
			return rc;
		if (o->for_s <= 0)
			return vt_cli_usage_error("threads", "--for '%s' is not a positive duration", arg);
		return 0;
	case OPT_WATCH: o->watch = true; return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_NAME:
		if (o->name)
			return vt_cli_usage_error("threads", "one --name (threads reads one process)");
		o->name = arg;
		return 0;
	case OPT_TOP:
		if ((rc = vt_cli_count(&vt_cmd_threads, "top", arg, 1, 1000000, &top)))
			return rc;
		o->top = (size_t)top;
		return 0;
	}
	return 0;
}

static int parse_args(const struct vt_command *cmd, int argc, char **argv, struct threads_opts *o, int *pid)
{
	struct vt_args args;
	int rc;

	memset(o, 0, sizeof(*o));
	o->interval_s = 5;
	if ((rc = vt_cli_parse(cmd, argc, argv, threads_option, o, &args)))
		return rc;
	if (o->watch && !o->interval_given)
		o->interval_s = WATCH_DEFAULT_INTERVAL_S;
	if (o->for_s > 0 && o->for_s < o->interval_s)
		return vt_cli_usage_error("threads", "--for %.1fs is shorter than the interval of %.1fs",
					  o->for_s, o->interval_s);
	if (o->name && args.noperands)
		return vt_cli_usage_error("threads", "give a PID or --name, not both");
	if (o->name)
		return 0;      /* resolved once /proc is open */
	if (args.noperands == 0)
		return vt_cli_usage_error("threads", "which process? give a PID or --name NAME");
	if (args.noperands > 1)
		return vt_cli_usage_error("threads", "unexpected argument '%s' (one PID)", args.operands[1]);
	if (!vt_cli_parse_pid(args.operands[0], pid))
		return vt_cli_usage_error("threads", "'%s' is not a process id", args.operands[0]);
	return 0;
}

static int threads_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct threads_run run = { 0 };
	struct vt_sampler_wait keys_wait = { wait_until, &run };
	struct vt_sampler_hook lock_hook = { count_locks, &run };
	struct threads_opts o;
	struct vt_threads_interval iv;
	struct vt_threads_rates rates;
	struct vt_diagnosis diag;
	struct vt_err err;
	bool exited = false, repeated;
	bool have_pfs = false;
	uint64_t t_start;
	unsigned nth = 0;
	int pid, rc, exit_status = 0;

	rc = parse_args(cmd, argc, argv, &o, &pid);
	if (rc != 0)
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	repeated = o.watch || o.for_s > 0;
	vt_err_clear(&err);
	if (vt_cli_open_procfs(&run.pfs, &err))
		return vt_cli_error(&err);
	have_pfs = true;
	if (o.name && (exit_status = vt_cli_name_pid(&run.pfs, "threads", o.name, "vitals threads", true, &pid)))
		goto out;
	run.pid = pid;
	vt_cli_catch_stop(&run.stop);
	if (vt_thread_sampler_open(&run.pfs, pid, run.stop, &run.sampler, &err) != VT_OK) {
		exit_status = vt_cli_error(&err);
		goto out;
	}
	/* the locks are one part of the picture: without them (no memory, no fd left) the
	 * rest is still measured, and the convoy verdict goes unnamed, as it says */
	if (vt_lock_probe_open(&run.pfs, pid, vt_thread_sampler_dirfd(run.sampler), &run.lock_probe, &err) == VT_OK) {
		/* each lock's kind and place, which a few of its waiters' stacks say; its call
		 * sites are vitals locks's */
		vt_lock_probe_per_word(run.lock_probe, THREADS_UNWINDS_PER_WORD);
		vt_thread_sampler_set_hook(run.sampler, &lock_hook);
	}
	else if (err.code != VT_E_GONE)   /* gone: the sampler's first look says it */
		fprintf(stderr, "vitals: note: the locks its threads wait on are not read: %s\n", err.msg);
	if (o.watch && !o.json)
		keys_start(&run);
	/* sampling stays under 1% of a core: on thousands of threads a sample every 100 ms would
	 * cost more than top -H reading them twice */
	vt_thread_sampler_set_cost_factor(run.sampler, THREADS_COST_FACTOR);
	/* every tick: the keys of --watch, and the accept queues */
	vt_thread_sampler_set_wait(run.sampler, &keys_wait);
	t_start = vt_mono_ns();

	while (!exited) {
		double elapsed;

		listen_begin(&run);
		vt_locks_release(&run.locks);
		rc = vt_thread_sampler_measure(run.sampler, o.interval_s, TW_FLAGS, &iv, &err);
		if (rc != VT_OK) {
			exit_status = vt_cli_error(&err);
			goto out;
		}
		exited = iv.exited;
		if (iv.n < 2 || iv.interval_s < VT_RATES_MIN_INTERVAL_S) {
			if (exited && nth == 0) {
				vt_err_set(&err, VT_E_GONE, 0, "process %d exited before it could be measured",
					   pid);
				exit_status = vt_cli_error(&err);
			} else if (exited) {
				fprintf(stderr, "vitals: note: process %d exited\n", pid);
				exit_status = VT_EXIT_PARTIAL;
			}
			break;      /* Ctrl-C too soon after the last report: nothing more to say */
		}
		if (exited)
			fprintf(stderr, "vitals: note: process %d exited during the interval; "
				"the figures cover the %.2f s measured before it did\n", pid, iv.interval_s);
		rc = vt_threads_rates_compute(iv.samples, iv.n, iv.allowance.ncpu, &rates, &err);
		if (rc != VT_OK) {
			exit_status = vt_cli_error(&err);
			goto out;
		}
		vt_threads_rates_set_allowance(&rates, &iv.allowance);
		vt_threads_rates_set_host(&rates, &iv.host);
		rates.process_exited = exited;
		rates.self_cpu_s = iv.self_cpu_s;
		memcpy(rates.listen, run.listen, sizeof(rates.listen));
		rates.nlisten = run.nlisten;
		rates.listen_reads = run.listen_reads;
		rates.locks = run.lock_probe ? &run.locks : NULL;
		if (run.lock_probe)
			vt_lock_probe_find_chunks(run.lock_probe, &run.locks);
		vt_diagnose(&rates, &diag);
		elapsed = (double)(iv.samples[iv.n - 1].mono_ns - t_start) / 1e9;
		rc = report(&o, &rates, &diag, elapsed, ++nth, run.keys);
		if (nth == 1)
			note_unreadable(&run, &rates, (long)vt_thread_sampler_status(run.sampler)->uid_real);
		vt_threads_rates_release(&rates);
		if ((rc = vt_cli_stdout_done("threads", rc))) {
			exit_status = rc;
			goto out;
		}
		if (exited)
			exit_status = VT_EXIT_PARTIAL;
		if (!repeated || *run.stop || (o.for_s > 0 && elapsed + o.interval_s > o.for_s + 0.05))
			break;
		vt_thread_sampler_next(run.sampler);
	}
out:
	keys_end(&run);
	vt_thread_sampler_close(run.sampler);
	vt_lock_probe_close(run.lock_probe);
	vt_locks_release(&run.locks);
	if (have_pfs)
		vt_procfs_close(&run.pfs);
	return exit_status;
}

const struct vt_command vt_cmd_threads = {
	.name = "threads",
	.summary = "CPU of a process and its threads now (deltas), states, diagnosis",
	.synopsis = "[options] PID\n"
		    "[options] --name NAME",
	.description = THREADS_DESCRIPTION,
	.options = threads_options,
	.after = THREADS_AFTER,
	.exits = threads_exits,
	.examples = threads_examples,
	.libs = VT_CMD_LIBDW,
	.run = threads_run,
};
