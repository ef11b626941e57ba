/*
 * cmd_caps.c — `vitals caps [--json] [PID]`: what works here, and what to grant.
 */
#include "cli/cli.h"
#include "render/view.h"
#include "sample/caps.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { OPT_JSON = 1 };

static const struct vt_option caps_options[] = {
	{ "json", 0, NULL, "machine-readable output (schema vitals.caps, docs/json.md)", OPT_JSON },
	{ 0 }
};

static const struct vt_exit_note caps_exits[] = {
	{ 0, "everything checked works (or does not apply to this process)" },
	{ 1, "some feature is refused: the report says which rule refuses it and what grants it" },
	{ 3, NULL }, { 4, "it exited meanwhile" }, { 6, "kernel thread" }, { 7, "zombie" },
	{ -1, NULL },
};

static const char *const caps_examples[] = {
	"vitals caps",
	"vitals caps PID",
	"vitals caps --json PID",
	NULL,
};

/*
 * libvitals-agent.so beside this vitals: <dir>/agent/ in a build tree,
 * <prefix>/lib/vitals/ once installed.  NULL when neither is there.
 */
static const char *agent_beside(char *path, size_t cap)
{
	static const char *const rel[] = { "agent/libvitals-agent.so", "../lib/vitals/libvitals-agent.so" };
	char self[PATH_MAX], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;
	size_t i;

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	if (!(slash = strrchr(self, '/')))
		return NULL;
	*slash = '\0';
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if ((size_t)snprintf(path, cap, "%.*s/%s", (int)(cap / 2), self, rel[i]) >= cap)
			continue;
		if (access(path, R_OK) == 0 && realpath(path, real)) {
			snprintf(path, cap, "%s", real);
			return path;
		}
	}
	return NULL;
}

static int caps_option(void *ctx, int id, const char *arg)
{
	(void)arg;
	if (id == OPT_JSON)
		*(bool *)ctx = true;
	return 0;
}

static int caps_run(const struct vt_command *cmd, int argc, char **argv)
{
	static struct vt_caps_report report;   /* some 10 KB: not on the stack */
	struct vt_caps_opts opts = { 0 };
	char agent[PATH_MAX];
	struct vt_args args;
	struct vt_procfs pfs;
	struct vt_err err;
	bool json = false;
	int pid = 0, rc;

	if ((rc = vt_cli_parse(cmd, argc, argv, caps_option, &json, &args)))
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	if (args.noperands > 1)
		return vt_cli_usage_error("caps", "one PID at a time");
	if (args.noperands == 1 && !vt_cli_parse_pid(args.operands[0], &pid))
		return vt_cli_usage_error("caps", "'%s' is not a process id", args.operands[0]);
	if (vt_cli_open_procfs(&pfs, &err))
		return vt_cli_error(&err);
	opts.agent_path = agent_beside(agent, sizeof(agent));
	rc = vt_caps_take(&pfs, pid, &opts, &report, &err);
	vt_procfs_close(&pfs);
	if (rc)
		return vt_cli_error(&err);
	if ((rc = vt_cli_stdout_done("caps", vt_view(json ? "json" : "text")->caps(stdout, &report))))
		return rc;
	return vt_caps_partial(&report) ? VT_EXIT_PARTIAL : VT_EXIT_OK;
}

const struct vt_command vt_cmd_caps = {
	.name = "caps",
	.summary = "what works here, and what to grant: ptrace, perf events, the agent, /proc",
	.synopsis = "[--json] [PID]",
	.description =
"Without a PID: the settings of this host and of vitals itself that decide what\n"
"vitals may do to other processes, each with what it means: kernel.yama.ptrace_scope,\n"
"kernel.perf_event_paranoid, kernel.kptr_restrict, vitals' uid and effective\n"
"capabilities (CapEff, decoded), no_new_privs, its seccomp mode, cgroup v1 or v2,\n"
"whether PSI is there, hidepid on /proc, the kernel.\n"
"\n"
"With a PID, for each way vitals reads that process: snap's files (status, maps,\n"
"smaps, environ for the arena cap, the cgroup's), its files through /proc/PID/root,\n"
"heap by ptrace and by the agent, threads' wchan and syscall, profile by perf events\n"
"and by ptrace, and census (process_vm_readv and pagemap): whether it works, and if\n"
"not the rule that refuses it (ptrace_scope, another uid, a missing CAP_SYS_PTRACE,\n"
"CAP_PERFMON or CAP_SYS_ADMIN, perf_event_paranoid, vitals' own seccomp filter,\n"
"hidepid, no agent) and the command or setting that grants it.\n"
"\n"
"Each is asked of the kernel, never guessed, and nothing harms the target: files are\n"
"opened and read; ptrace is PTRACE_SEIZE, which does not stop the process, made by a\n"
"thread of vitals that exits at once, so the kernel releases the target (also if\n"
"vitals is killed then); a disabled perf event is opened and closed; one page of\n"
"memory and its pagemap entry are read; an agent, if any, is asked for its read-only\n"
"figures.  The target is never stopped nor signalled.\n",
	.options = caps_options,
	.exits = caps_exits,
	.examples = caps_examples,
	.run = caps_run,
};
