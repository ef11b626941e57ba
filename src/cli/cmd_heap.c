/*
 * cmd_heap.c — `vitals heap PID [--trim]`.
 */
#include "cli/cli.h"
#include "analyze/heap_verdict.h"
#include "render/view.h"
#include "sample/heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { OPT_TRIM = 1, OPT_JSON, OPT_NO_AGENT, OPT_AGENT_ONLY, OPT_TIMEOUT, OPT_NO_ARENAS };

static const struct vt_option heap_options[] = {
	{ "trim", 0, NULL, "call malloc_trim(0) in the target (changes it: it releases\n"
			   "free pages, holding each arena's lock in turn) and report\n"
			   "RssAnon, committed and mallinfo2 before and after, measured", OPT_TRIM },
	{ "json", 0, NULL, "machine-readable output (schema vitals.heap, docs/json.md)", OPT_JSON },
	{ "no-agent", 0, NULL, "use ptrace even when an agent answers", OPT_NO_AGENT },
	{ "agent-only", 0, NULL, "never use ptrace", OPT_AGENT_ONLY },
	{ "no-arenas", 0, NULL, "mallinfo2 alone: one call, the shortest stop, no per-arena\n"
				"table (glibc)", OPT_NO_ARENAS },
	{ "timeout", 0, "MS", "longest a single injected call may run (default 2000)", OPT_TIMEOUT },
	{ 0 }
};

static const struct vt_exit_note heap_exits[] = {
	{ 3, NULL }, { 4, "it exited meanwhile" },
	{ 5, "ptrace not permitted and no agent (the message says which rule)" },
	{ 6, "kernel thread" }, { 7, "zombie" },
	{ 8, "refused before any thread was stopped: a malloc it does not read, a sanitizer\n"
	     "runtime, a 32-bit or x32 program, a stopped process (docs/inject.md)" },
	{ 10, "a call timed out (abandoned, the target restored)" },
	{ 11, "a call faulted (abandoned, the target restored)" }, { -1, NULL },
};

static const char *const heap_examples[] = {
	"vitals heap PID",
	"vitals heap --trim PID",
	"vitals heap --json --no-agent PID",
	NULL,
};

struct heap_opts {
	struct vt_heap_opts heap;
	bool json;
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
	case OPT_TIMEOUT:
		if ((rc = vt_cli_count(&vt_cmd_heap, "timeout", arg, 10, 600000, &ms)))
			return rc;
		o->heap.timeout_ms = (int)ms;
		break;
	}
	return 0;
}

static int heap_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct heap_opts o = { .heap.arenas = true, .heap.blocks = true, .heap.timeout_ms = 2000 };
	struct vt_heap_sample h;
	struct vt_heap_verdict v;
	struct vt_heap_report report;
	struct vt_args args;
	struct vt_procfs pfs;
	struct vt_err err;
	int pid, rc;

	if ((rc = vt_cli_parse(cmd, argc, argv, heap_option, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (o.heap.no_agent && o.heap.no_ptrace)
		return vt_cli_usage_error("heap", "--no-agent and --agent-only leave no way to read");
	if (args.noperands != 1)
		return vt_cli_usage_error("heap", args.noperands == 0 ? "which process? give one PID"
								   : "one PID at a time");
	if (!vt_cli_parse_pid(args.operands[0], &pid))
		return vt_cli_usage_error("heap", "'%s' is not a process id", args.operands[0]);
	o.heap.thread_arenas = o.heap.arenas;     /* the THREADS column of the per-arena table */
	if (vt_cli_open_procfs(&pfs, &err))
		return vt_cli_error(&err);
	rc = vt_heap_take(&pfs, pid, &o.heap, &h, &err);
	vt_procfs_close(&pfs);
	if (rc)
		return vt_cli_error(&err);
	report = (struct vt_heap_report){ &h, &v, (uint64_t)sysconf(_SC_PAGESIZE) };
	vt_heap_judge(&h, report.page_size, &v);
	rc = vt_view(o.json ? "json" : "text")->heap(stdout, &report);
	vt_heap_release(&h);
	if ((rc = vt_cli_stdout_done("heap", rc)))
		return rc;
	return VT_EXIT_OK;
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
"host and 1-4 ms (median) on a busy one; it blocks that thread's signals for the\n"
"call and restores every register, the signal mask and the interrupted system\n"
"call exactly.  docs/inject.md gives the measurements and the remaining risks.\n",
	.options = heap_options,
	.exits = heap_exits,
	.examples = heap_examples,
	.run = heap_run,
};
