/*
 * cmd_snap.c — `vitals snap PID [PID...]`.
 */
#include "cli/cli.h"
#include "cli/name_cli.h"
#include "elf/elf_libs.h"
#include "render/view.h"
#include "sample/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_JSON = 1, OPT_LIGHT, OPT_MIN_REGION, OPT_ALL_REGIONS, OPT_NO_MEMORY, OPT_NAME };

static const struct vt_option snap_options[] = {
	{ "json", 0, NULL, "machine-readable output (schema vitals.snap, docs/json.md)", OPT_JSON },
	{ "light", 0, NULL, "read /proc/PID/maps instead of smaps and skip the\n"
			    "per-thread files: no per-region Rss or thread states,\n"
			    "but no page-table walk either (see COST)", OPT_LIGHT },
	{ "min-region", 0, "SIZE", "list regions of at least SIZE (default 8M; 0 = all)", OPT_MIN_REGION },
	{ "all-regions", 0, NULL, "list every mapping, guards and reservations included", OPT_ALL_REGIONS },
	{ "no-memory", 0, NULL, "do not read target memory (heap_info and chunk headers)", OPT_NO_MEMORY },
	{ "name", 0, "NAME", "the process called NAME (comm or argv[0]) instead\n"
			     "of PIDs; refused when NAME is several processes", OPT_NAME },
	{ 0 }
};

static const struct vt_exit_note snap_exits[] = {
	{ 1, "partial: a part could not be read; a note says which and why" },
	{ 3, NULL }, { 4, "it exited while being read" }, { 5, NULL }, { 6, "it is a kernel thread" },
	{ 7, "it is a zombie" }, { -1, NULL },
};

static const char *const snap_examples[] = {
	"vitals snap PID",
	"vitals snap PID1 PID2",
	"vitals snap --json PID",
	"vitals snap --light --min-region 64M PID",
	NULL,
};

struct snap_opts {
	struct vt_snap_report report;
	struct vt_sample_opts sample;
	bool json;
	const char *name;            /* --name, instead of PIDs */
};

static int snap_option(void *ctx, int id, const char *arg)
{
	struct snap_opts *o = ctx;

	switch (id) {
	case OPT_JSON: o->json = true; return 0;
	case OPT_LIGHT: o->sample.light = true; return 0;
	case OPT_ALL_REGIONS: o->report.all_regions = true; return 0;
	case OPT_NO_MEMORY: o->sample.no_memory = true; return 0;
	case OPT_NAME:
		if (o->name)
			return vt_cli_usage_error("snap", "one --name (several processes are given as PIDs)");
		o->name = arg;
		return 0;
	case OPT_MIN_REGION: return vt_cli_size(&vt_cmd_snap, "min-region", arg, &o->report.min_region);
	}
	return 0;
}

static int snap_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct snap_opts o = { .report.min_region = 8ull << 20, .sample.listeners = true };
	struct vt_sample *samples = NULL;
	struct vt_snap_failure *failures = NULL;
	struct vt_args args;
	struct vt_procfs pfs;
	struct vt_err err;
	int rc, i, npids, *pids, status = VT_EXIT_OK;
	bool partial = false;

	if ((rc = vt_cli_parse(cmd, argc, argv, snap_option, &o, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	/*
	 * libelf serves allocator detection only.  A full snap opens it first,
	 * while descriptors are plenty (it holds files per thread later); --light
	 * holds none, and most often has the answer remembered (alloc/detect_cache.h):
	 * libelf is opened there only when the detection runs.
	 */
	if (!o.sample.light)
		(void)vt_libelf_load(NULL);
	npids = o.name ? 1 : (int)args.noperands;
	if (o.name && args.noperands)
		return vt_cli_usage_error("snap", "give PIDs or --name, not both");
	if (npids <= 0)
		return vt_cli_usage_error("snap", "which process? give one or more PIDs, or --name NAME");
	pids = calloc((size_t)npids, sizeof(*pids));
	samples = calloc((size_t)npids, sizeof(*samples));
	failures = calloc((size_t)npids, sizeof(*failures));
	if (!pids || !samples || !failures) {
		free(pids);
		free(samples);
		free(failures);
		return vt_cli_nomem("snap");
	}
	for (i = 0; !o.name && i < npids; i++) {
		if (!vt_cli_parse_pid(args.operands[i], &pids[i])) {
			status = vt_cli_usage_error("snap", "'%s' is not a process id", args.operands[i]);
			goto out;
		}
	}
	if (vt_cli_open_procfs(&pfs, &err)) {
		status = vt_cli_error(&err);
		goto out;
	}
	if (o.name && (status = vt_cli_name_pid(&pfs, "snap", o.name, "vitals snap", true, &pids[0]))) {
		vt_procfs_close(&pfs);
		goto out;
	}
	for (i = 0; i < npids; i++) {
		vt_err_clear(&err);
		if (vt_sample_take(&pfs, pids[i], &o.sample, &samples[o.report.n], &err) == VT_OK) {
			partial |= vt_sample_partial(&samples[o.report.n]);
			o.report.n++;
			continue;
		}
		failures[o.report.n_failures].pid = pids[i];
		failures[o.report.n_failures++].err = err;
		if (status == VT_EXIT_OK)
			status = vt_code_exit(err.code);
		vt_cli_error(&err);
	}
	vt_procfs_close(&pfs);
	o.report.samples = samples;
	o.report.failures = failures;
	if ((o.report.n || o.json) &&
	    (rc = vt_cli_stdout_done("snap", vt_view(o.json ? "json" : "text")->snap(stdout, &o.report))))
		status = rc;
	if (status == VT_EXIT_OK && partial)
		status = VT_EXIT_PARTIAL;
	for (i = 0; i < (int)o.report.n; i++)
		vt_sample_release(&samples[i]);
out:
	free(pids);
	free(samples);
	free(failures);
	return status;
}

const struct vt_command vt_cmd_snap = {
	.name = "snap",
	.summary = "what a running process's memory is made of",
	.synopsis = "[options] PID [PID...]\n"
		    "[options] --name NAME",
	.description =
"What a running process's memory is made of: the kernel's counters (RSS split\n"
"into anonymous, file and shared; swap; committed = RssAnon + VmSwap), every\n"
"large region with its resident share and what it is (glibc main heap, arena\n"
"heap, thread stack, mmapped chunk, file, other allocator), the glibc arenas and\n"
"the cap in force with its source, which malloc the process runs, its memory\n"
"cgroup (usage, limit, swap, events, pressure), and the TCP sockets it listens\n"
"on: address, connections waiting for accept(), backlog limit, and its network\n"
"namespace's listen overflows and drops.  Several PIDs are shown side by side.\n"
"Nothing is written to the target and it is never stopped.\n",
	.options = snap_options,
	.after =
"COST: reading /proc/PID/smaps walks the target's page tables under its mmap\n"
"lock.  On a 2 GB, 5,000-mapping process the kernel spends 20-70 ms producing\n"
"it, and the target's own mmap/munmap wait about as long (pmap -X does the\n"
"same).  --light reads maps and no per-thread files: no page-table walk.\n"
"\n"
"With several PIDs, the first failure's status is returned and the others are\n"
"still shown.\n",
	.exits = snap_exits,
	.examples = snap_examples,
	.libs = 0,              /* libelf: opened by snap_run, see there */
	.run = snap_run,
};
