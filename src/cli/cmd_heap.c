/*
 * cmd_heap.c — `vitals heap PID [--trim]`.
 */
#include "cli/cli.h"
#include "render/heap.h"
#include "sample/heap.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void heap_usage(FILE *out)
{
	fprintf(out,
"usage: vitals heap [options] PID\n"
"\n"
"The allocator's own figures, read from the running process without a restart\n"
"and without gdb: for glibc every mallinfo2() field (live, free-held, mmapped,\n"
"top pad, free chunks), live_fraction = uordblks / (arena + hblkhd), and per\n"
"arena from malloc_info() what each holds and what malloc_trim(0) could give\n"
"back; for jemalloc its stats.* after an epoch refresh.  Then a verdict: live\n"
"data (look for retention) or memory the allocator holds (trim, fewer arenas,\n"
"another allocator), with the figures it rests on.\n"
"\n"
"How: if the process runs the vitals agent (LD_PRELOAD=libvitals-agent.so) it\n"
"answers over its Unix socket.  Otherwise vitals calls the functions inside the\n"
"process with ptrace: it stops ONE thread that is blocked in a system call\n"
"(never the others) for tens of microseconds plus the call itself, blocks its\n"
"signals for the call, and restores every register, the signal mask and the\n"
"interrupted system call exactly (docs/inject.md).\n"
"\n"
"options:\n"
"  --trim          call malloc_trim(0) in the target (changes it: it releases\n"
"                  free pages, holding each arena's lock in turn) and report\n"
"                  RssAnon, committed and mallinfo2 before and after, measured\n"
"  --json          machine-readable output (schema vitals.heap, docs/json.md)\n"
"  --no-agent      use ptrace even when an agent answers\n"
"  --agent-only    never use ptrace\n"
"  --timeout MS    longest a single injected call may run (default 2000)\n"
"  -h, --help      this help\n"
"\n"
"exit status: 0 ok; 3 no such process; 4 it exited meanwhile; 5 ptrace not\n"
"permitted and no agent (the message says which rule); 6 kernel thread;\n"
"7 zombie; 8 allocator not supported; 10 a call timed out, 11 a call faulted\n"
"(both abandoned, the target restored); 64 usage.\n"
"\n"
"See vitals(1), docs/inject.md (why the ptrace call is safe) and docs/json.md.\n");
}

int cmd_heap(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "trim", no_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-agent", no_argument, NULL, 'A' },
		{ "agent-only", no_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vt_heap_opts opts = { .timeout_ms = 2000 };
	struct vt_heap_sample h;
	struct vt_heap_verdict v;
	struct vt_procfs pfs;
	struct vt_err err;
	bool json = false;
	int c, pid, rc;
	long page;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't': opts.trim = true; break;
		case 'j': json = true; break;
		case 'A': opts.no_agent = true; break;
		case 'a': opts.no_ptrace = true; break;
		case 'T':
			opts.timeout_ms = atoi(optarg);
			if (opts.timeout_ms < 10 || opts.timeout_ms > 600000)
				return vt_cli_usage_error("heap", "--timeout takes 10 to 600000 ms");
			break;
		case 'h': heap_usage(stdout); return 0;
		default: return vt_cli_usage_error("heap", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (opts.no_agent && opts.no_ptrace)
		return vt_cli_usage_error("heap", "--no-agent and --agent-only leave no way to read");
	if (optind != argc - 1)
		return vt_cli_usage_error("heap", optind == argc ? "which process? give one PID"
							       : "one PID at a time");
	if (!vt_cli_parse_pid(argv[optind], &pid))
		return vt_cli_usage_error("heap", "'%s' is not a process id", argv[optind]);
	if (vt_cli_open_procfs(&pfs, &err))
		return vt_cli_error(&err);
	rc = vt_heap_take(&pfs, pid, &opts, &h, &err);
	vt_procfs_close(&pfs);
	if (rc)
		return vt_cli_error(&err);
	page = sysconf(_SC_PAGESIZE);
	vt_heap_judge(&h, (uint64_t)page, &v);
	rc = json ? vt_render_heap_json(stdout, &h, &v, (uint64_t)page)
		  : vt_render_heap_text(stdout, &h, &v, (uint64_t)page);
	vt_heap_release(&h);
	if (rc) {
		fprintf(stderr, "vitals: cannot write output\n");
		return 2;
	}
	return 0;
}
