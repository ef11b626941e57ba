/*
 * cmd_census.c — `vitals census PID [--needle S]... [--top N] [--reveal] [--json] [--consistent]`.
 */
#include "cli/cli.h"
#include "render/view.h"
#include "sample/census.h"

#include <stdio.h>
#include <string.h>

enum { OPT_NEEDLE = 1, OPT_TOP, OPT_NO_FRAGMENTS, OPT_REVEAL, OPT_JSON, OPT_CONSISTENT, OPT_MAX_STOP };

static const struct vt_option census_options[] = {
	{ "needle", 0, "STRING", "count STRING in live and in free chunks, per MB (repeatable,\n"
				 "up to 16; 1-256 bytes)", OPT_NEEDLE },
	{ "top", 0, "N", "most repeated strings, fragments and allocation shapes shown\n"
			 "(default 10)", OPT_TOP },
	{ "no-fragments", 0, NULL, "do not look for the most repeated fragments (pieces of text\n"
				   "that many chunks share): on a heap that is mostly text the\n"
				   "census then reads several times faster", OPT_NO_FRAGMENTS },
	{ "reveal", 0, NULL, "show the strings found, not their length, hash and first 4\n"
			     "characters (needs the same privilege as reading the memory,\n"
			     "which the census already has: beware of where the output goes)", OPT_REVEAL },
	{ "json", 0, NULL, "machine-readable output (schema vitals.census, docs/json.md)", OPT_JSON },
	{ "consistent", 0, NULL, "stop every thread for the walk (ptrace), at most --max-stop,\n"
				 "so that the heap cannot change under it", OPT_CONSISTENT },
	{ "max-stop", 0, "MS", "--consistent: longest the threads stay stopped (default 2000):\n"
			       "past it the walk ends, the threads run on, and nothing is reported", OPT_MAX_STOP },
	{ 0 }
};

static const struct vt_exit_note census_exits[] = {
	{ 3, NULL }, { 4, "it exited meanwhile" },
	{ 5, "its memory may not be read (the message says which rule)" },
	{ 6, "kernel thread" }, { 7, "zombie" },
	{ 8, "not glibc malloc (jemalloc, musl, a sanitizer, static glibc), glibc older than\n"
	     "2.27, or main_arena not found" },
	{ 10, "--consistent: the threads could not be stopped, or the walk outran --max-stop;\n"
	      "every thread was let go" }, { -1, NULL },
};

static const char *const census_examples[] = {
	"vitals census PID",
	"vitals census --needle session_id --top 20 PID",
	"vitals census --json --consistent PID",
	NULL,
};

struct census_cli {
	struct vt_census_opts census;
	const char *needles[VT_CONTENT_NEEDLES_MAX];
	bool reveal, json;
};

static int census_option(void *ctx, int id, const char *arg)
{
	struct census_cli *o = ctx;
	long n;
	int rc;

	switch (id) {
	case OPT_NEEDLE:
		if (o->census.nneedles == VT_CONTENT_NEEDLES_MAX)
			return vt_cli_usage_error("census", "at most %d --needle", VT_CONTENT_NEEDLES_MAX);
		if (!arg[0] || strlen(arg) > VT_CONTENT_NEEDLE_LEN_MAX)
			return vt_cli_usage_error("census", "a --needle is 1 to %d bytes", VT_CONTENT_NEEDLE_LEN_MAX);
		o->needles[o->census.nneedles++] = arg;
		break;
	case OPT_TOP:
		if ((rc = vt_cli_count(&vt_cmd_census, "top", arg, 0, VT_CENSUS_TOP_MAX, &n)))
			return rc;
		o->census.top = (size_t)n;
		break;
	case OPT_NO_FRAGMENTS: o->census.no_fragments = true; break;
	case OPT_REVEAL: o->reveal = true; break;
	case OPT_JSON: o->json = true; break;
	case OPT_CONSISTENT: o->census.consistent = true; break;
	case OPT_MAX_STOP:
		if ((rc = vt_cli_count(&vt_cmd_census, "max-stop", arg, 10, 60000, &n)))
			return rc;
		o->census.stop_ms = (int)n;
		break;
	}
	return 0;
}

static int census_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct census_cli o = { .census = { .top = 10, .stop_ms = 2000 } };
	struct vt_census c;
	struct vt_args args;
	struct vt_procfs pfs;
	struct vt_err err;
	int pid, rc;

	o.census.needles = o.needles;
	if ((rc = vt_cli_parse(cmd, argc, argv, census_option, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (args.noperands != 1)
		return vt_cli_usage_error("census", args.noperands == 0 ? "which process? give one PID"
									 : "one PID at a time");
	if (!vt_cli_parse_pid(args.operands[0], &pid))
		return vt_cli_usage_error("census", "'%s' is not a process id", args.operands[0]);
	if (vt_cli_open_procfs(&pfs, &err))
		return vt_cli_error(&err);
	rc = vt_census_take(&pfs, pid, &o.census, &c, &err);
	vt_procfs_close(&pfs);
	if (rc)
		return vt_cli_error(&err);
	rc = vt_view(o.json ? "json" : "text")->census(stdout, &(struct vt_census_report){ &c, o.reveal });
	vt_census_release(&c);
	if ((rc = vt_cli_stdout_done("census", rc)))
		return rc;
	return VT_EXIT_OK;
}

const struct vt_command vt_cmd_census = {
	.name = "census",
	.summary = "what fills the heap: live and free chunks told apart, and what they hold",
	.synopsis = "[options] PID",
	.description =
"Walks glibc malloc's own chunk headers from outside the process (process_vm_readv;\n"
"no gdb, no debug symbols, no restart) and tells live chunks from free ones, per\n"
"arena: in use, free in the bins, in the fast bins, in the threads' tcaches, the top\n"
"chunk, and the chunks mmapped alone.  For the free bytes it says how many sit on\n"
"resident pages (from /proc/PID/pagemap: the physical cost of fragmentation) and how\n"
"many whole resident pages malloc_trim(0) could give back.  Its totals add up as\n"
"mallinfo2() would, all ten fields.  Per arena too, how many threads allocate from\n"
"it (threads: each thread's glibc thread_arena, read from its memory after the\n"
"walk; ? and a note saying why when it cannot be read).\n"
"\n"
"Then a census of what the live chunks and the free chunks hold, each apart: zero\n"
"bytes, text, base64 and hex blobs, the most repeated strings (counted in bounded\n"
"memory), each --needle per MB, the chunk sizes and the top allocation shapes (chunk\n"
"size by what its first 16 bytes hold).  Strings are shown as length, hash and\n"
"first 4 characters unless --reveal.\n"
"\n"
"And the most repeated fragments, live and free apart: text of 12 bytes or more that\n"
"many chunks share, whole strings or not (an identity copied into records that are\n"
"each unique), found without --needle.  The count is of chunks holding it (once\n"
"however often one chunk does), as a range when it may be off: an upper and a lower\n"
"bound.  A fragment of 20 bytes or more is always sampled; a shorter one when one\n"
"of its 12-byte pieces is.  It is shown grown as far as 98% of its copies agree (at\n"
"most 140 bytes), redacted like a string; one inside a string shown above that\n"
"occurs as often is not shown again.  Fixed memory: about 10 MiB a side.\n"
"\n"
"main_arena is found from the code of the target's mallinfo2 (the address it loads)\n"
"and checked against the ring of arenas.  By default nothing is stopped: headers are\n"
"checked and a torn one is read again (the counts say how often, and what was\n"
"skipped); --consistent stops every thread for the walk instead, at most --max-stop.\n"
"Only resident pages are read; glibc 2.27 or later on x86-64.\n",
	.options = census_options,
	.exits = census_exits,
	.examples = census_examples,
	.libs = VT_CMD_LIBELF,
	.run = census_run,
};
