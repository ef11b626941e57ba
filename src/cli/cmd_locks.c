/*
 * cmd_locks.c — `vitals locks PID [--for 5s] [--json]`.
 *
 * Samples every thread as `vitals threads` does (sample/thread_sampler.h)
 * and, at each sample, the futex waits among them (sample/locks.h): which
 * lock, its kind, its holder, where its waiters take it.
 */
#include "cli/cli.h"
#include "cli/name_cli.h"
#include "analyze/rates.h"
#include "proc/access.h"
#include "render/locks.h"
#include "sample/locks.h"
#include "sample/thread_sampler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOCKS_MAX_S 3600.0
/* Samples 50 times a second (fewer on a process so large that a sample costs over 1 ms):
 * holder shares over a few seconds need hundreds of samples. */
#define LOCKS_STEP_NS 20000000ull

enum { OPT_FOR = 1, OPT_TOP, OPT_JSON, OPT_NAME };

static const struct vt_option locks_options[] = {
	{ "for", 0, "DURATION", "sample for DURATION (default 5s; at least 0.2s, at\n"
				"most 1h; 30, 30s, 5m)", OPT_FOR },
	{ "top", 0, "N", "describe at most the N most waited-on locks", OPT_TOP },
	{ "name", 0, "NAME", "the process called NAME (comm or argv[0]) instead\n"
			     "of a PID; refused when NAME is several processes", OPT_NAME },
	{ "json", 0, NULL, "machine-readable output (vitals.locks, docs/json.md)", OPT_JSON },
	{ 0 }
};

static const struct vt_exit_note locks_exits[] = {
	{ 1, "partial: the process exited while sampled; what was sampled is shown" },
	{ 3, NULL }, { 4, "it exited before the first sample" }, { 5, NULL }, { 6, "kernel thread" },
	{ 7, "zombie" }, { 64, "usage error" },
	{ -1, NULL },
};

static const char *const locks_examples[] = {
	"vitals locks PID",
	"vitals locks --for 30s PID",
	"vitals locks --json PID",
	NULL,
};

#define LOCKS_DESCRIPTION \
"Which locks the threads of a process wait on, what each lock is, who holds\n" \
"it and where its waiters take it.  Every 20 ms or so (jittered, so that a\n" \
"lock handed round in turns is not seen at one phase) vitals reads each\n" \
"thread's system call (/proc/PID/task/TID/syscall): a thread blocked on a\n" \
"lock sleeps in futex(2), whose first argument is the lock's address.  For\n" \
"each waiter\n" \
"it unwinds the user stack from a copy (process_vm_readv), without stopping\n" \
"the thread, and for each lock it reads the lock's own memory:\n" \
"\n" \
"  what it is   a glibc malloc arena's lock (main_arena found without debug\n" \
"               symbols), a named object (.symtab, .dynsym or a debug file),\n" \
"               the Python GIL (in CPython's _PyRuntime), an object on a\n" \
"               thread's stack, in the heap, or in memory shared with other\n" \
"               processes\n" \
"  its kind     from the glibc function the waiters wait in: a mutex,\n" \
"               rwlock or glibc's own lock is contention; a condition\n" \
"               variable, semaphore, barrier or join is waiting for work or\n" \
"               an event, never contention; a futex none of those waits on\n" \
"               is a raw futex, and vitals says so\n" \
"  its holder   a mutex's owner thread from its __owner field, a rwlock's\n" \
"               writer or readers, as shares of the samples; glibc's own\n" \
"               locks record no holder, which is said\n" \
"  its waiters  how many on average (thread-seconds of waiting per second)\n" \
"               and at most, their share of the process's thread time, which\n" \
"               threads, and the call sites: the first frame outside glibc\n" \
"               (file:line where the program has debug information)\n" \
"\n" \
"The glibc layouts read, and how an unknown one is told, are in\n" \
"docs/locks.md.\n"

#define LOCKS_AFTER \
"Nothing is written to the target and it is never stopped.  The system call\n" \
"and the memory reads need ptrace access to the process (same user and\n" \
"kernel.yama.ptrace_scope 0, or CAP_SYS_PTRACE); without it vitals says which\n" \
"part is missing and why.\n"

struct locks_opts {
	double for_s;
	size_t top;
	bool json;
	const char *name;
};

static int locks_option(void *ctx, int id, const char *arg)
{
	struct locks_opts *o = ctx;
	long top;
	int rc;

	switch (id) {
	case OPT_FOR:
		return vt_cli_duration(&vt_cmd_locks, "for", arg, VT_RATES_MIN_INTERVAL_S, LOCKS_MAX_S, &o->for_s);
	case OPT_TOP:
		if ((rc = vt_cli_count(&vt_cmd_locks, "top", arg, 1, VT_LOCKS_MAX, &top)))
			return rc;
		o->top = (size_t)top;
		return 0;
	case OPT_JSON: o->json = true; return 0;
	case OPT_NAME:
		if (o->name)
			return vt_cli_usage_error("locks", "one --name (locks reads one process)");
		o->name = arg;
		return 0;
	}
	return 0;
}

static int parse_args(const struct vt_command *cmd, int argc, char **argv, struct locks_opts *o, int *pid)
{
	struct vt_args args;
	int rc;

	memset(o, 0, sizeof(*o));
	o->for_s = 5;
	if ((rc = vt_cli_parse(cmd, argc, argv, locks_option, o, &args)))
		return rc;
	if (o->name && args.noperands)
		return vt_cli_usage_error("locks", "give a PID or --name, not both");
	if (o->name)
		return 0;
	if (args.noperands == 0)
		return vt_cli_usage_error("locks", "which process? give a PID or --name NAME");
	if (args.noperands > 1)
		return vt_cli_usage_error("locks", "unexpected argument '%s' (one PID)", args.operands[1]);
	if (!vt_cli_parse_pid(args.operands[0], pid))
		return vt_cli_usage_error("locks", "'%s' is not a process id", args.operands[0]);
	return 0;
}

struct locks_run {
	struct vt_lock_probe *probe;
	struct vt_locks locks;
};

static int on_sample(void *ctx, const struct vt_threads_sample *s, struct vt_err *err)
{
	struct locks_run *run = ctx;

	return vt_lock_probe_sample(run->probe, s, &run->locks, err);
}

static int locks_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct locks_run run = { 0 };
	struct vt_sampler_hook hook = { on_sample, &run };
	struct vt_thread_sampler *sampler = NULL;
	struct vt_threads_interval iv;
	struct vt_procfs pfs;
	struct locks_opts o;
	struct vt_err err;
	volatile sig_atomic_t *stop = NULL;
	int pid = 0, rc, exit_status = 0;

	rc = parse_args(cmd, argc, argv, &o, &pid);
	if (rc != 0)
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	vt_err_clear(&err);
	if (vt_cli_open_procfs(&pfs, &err))
		return vt_cli_error(&err);
	if (o.name && (exit_status = vt_cli_name_pid(&pfs, "locks", o.name, "vitals locks", true, &pid)))
		goto out;
	vt_cli_catch_stop(&stop);
	if (vt_thread_sampler_open(&pfs, pid, stop, &sampler, &err) != VT_OK ||
	    vt_lock_probe_open(&pfs, pid, vt_thread_sampler_dirfd(sampler), &run.probe, &err) != VT_OK) {
		exit_status = vt_cli_error(&err);
		goto out;
	}
	vt_thread_sampler_set_hook(sampler, &hook);
	vt_thread_sampler_set_step_min(sampler, LOCKS_STEP_NS);
	rc = vt_thread_sampler_measure(sampler, o.for_s, VT_TW_SYSCALL, &iv, &err);
	if (rc != VT_OK) {
		exit_status = vt_cli_error(&err);
		goto out;
	}
	if (run.locks.thread_samples && run.locks.syscall_unread == run.locks.thread_samples) {
		/* no wait could be read at all: an error, not an empty table */
		char reason[256], hint[256];

		vt_access_explain(&pfs, "the threads' system calls (/proc/PID/task/TID/syscall)",
				  (long)vt_thread_sampler_status(sampler)->uid_real, vt_thread_sampler_dirfd(sampler),
				  reason, sizeof(reason), hint, sizeof(hint));
		vt_err_set(&err, VT_E_PERM, EPERM, "%s: which locks its threads wait on cannot be read", reason);
		if (hint[0])
			vt_err_hint(&err, "%s", hint);
		exit_status = vt_cli_error(&err);
		goto out;
	}
	if (iv.exited) {
		fprintf(stderr, "vitals: note: process %d exited after %.2f s; what was sampled before is shown\n",
			pid, iv.interval_s);
		exit_status = VT_EXIT_PARTIAL;
	}
	if (!iv.exited)
		vt_lock_probe_find_chunks(run.probe, &run.locks);
	rc = o.json ? vt_render_locks_json(stdout, &run.locks, false)
		    : vt_render_locks_text(stdout, &run.locks, o.top);
	if ((rc = vt_cli_stdout_done("locks", rc)))
		exit_status = rc;
out:
	vt_thread_sampler_close(sampler);
	vt_lock_probe_close(run.probe);
	vt_locks_release(&run.locks);
	vt_procfs_close(&pfs);
	return exit_status;
}

const struct vt_command vt_cmd_locks = {
	.name = "locks",
	.summary = "which locks threads wait on: what each is, its holder, its call sites",
	.synopsis = "[options] PID\n"
		    "[options] --name NAME",
	.description = LOCKS_DESCRIPTION,
	.options = locks_options,
	.after = LOCKS_AFTER,
	.exits = locks_exits,
	.examples = locks_examples,
	.libs = VT_CMD_LIBDW,
	.run = locks_run,
};
