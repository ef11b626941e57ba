/*
 * follow.c — find the soak's target again, launch and stop a command
 * (see follow.h).
 */
#include "soak/follow.h"

#include "proc/thread_watch.h"
#include "sample/target.h"
#include "proc/stat.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

bool vt_follow_cmdline(const struct vt_procfs *pfs, pid_t pid, char *out, size_t cap)
{
	size_t len, i;

	if (!vt_procfs_read_small(pfs, pid, "cmdline", out, cap, &len) || len == 0)
		return false;
	while (len > 0 && out[len - 1] == '\0')
		len--;
	for (i = 0; i < len; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	out[len] = '\0';
	return true;
}

static bool read_stat(const struct vt_procfs *pfs, pid_t pid, struct vt_proc_stat *st)
{
	char text[1024];
	size_t len;

	return vt_procfs_read_small(pfs, pid, "stat", text, sizeof(text), &len) &&
	       vt_proc_stat_parse(text, len, st, NULL) == VT_OK;
}

uint64_t vt_follow_start_ticks(const struct vt_procfs *pfs, pid_t pid)
{
	struct vt_proc_stat st;

	return read_stat(pfs, pid, &st) ? st.start_ticks : 0;
}

struct match {
	pid_t pid, ppid;
	uint64_t start;
};

static bool key_matches(const struct vt_procfs *pfs, const struct vt_follow_key *key, pid_t pid,
			const struct vt_proc_stat *st)
{
	char cmdline[sizeof(key->cmdline)];

	if (st->state == 'Z' || st->state == 'X' || st->start_ticks < key->min_start_ticks)
		return false;
	return key->cmdline[0] && vt_follow_cmdline(pfs, pid, cmdline, sizeof(cmdline)) &&
	       strcmp(cmdline, key->cmdline) == 0;
}

static int pidfile_pid(const struct vt_procfs *pfs, const char *path, pid_t *pid)
{
	char text[64];
	FILE *f = fopen(path, "re");
	long v;
	char *end;
	struct vt_proc_stat st;

	*pid = 0;
	if (!f)
		return VT_OK;    /* not written yet: the service may still be starting */
	if (!fgets(text, sizeof(text), f))
		text[0] = '\0';
	fclose(f);
	v = strtol(text, &end, 10);
	if (v <= 0 || v > INT32_MAX || (*end && !isspace((unsigned char)*end)))
		return VT_OK;    /* half-written or garbage: look again next tick */
	if (read_stat(pfs, (pid_t)v, &st) && st.state != 'Z' && st.state != 'X')
		*pid = (pid_t)v;
	return VT_OK;
}

/* A name: the one resolver every command uses (sample/target.h). */
static int find_name(const struct vt_procfs *pfs, const struct vt_follow_key *key, bool ambiguous_is_error,
		     pid_t *pid, size_t *tree_n, struct vt_err *err)
{
	struct vt_name_set set;
	size_t i;
	int rc = vt_target_name_find(pfs, key->name, key->exclude, key->min_start_ticks, 0, &set, err);

	if (rc == VT_OK && ambiguous_is_error)
		rc = vt_target_name_one(&set, key->name, pid, err);
	else if (rc == VT_OK && set.n)
		*pid = set.procs[0].root;    /* of several (after a restart, say), the oldest tree's root */
	for (i = 0; rc == VT_OK && *pid && tree_n && i < set.n; i++)
		*tree_n += set.procs[i].root == *pid;
	vt_name_set_release(&set);
	return rc;
}

int vt_follow_find(const struct vt_procfs *pfs, const struct vt_follow_key *key,
		   bool ambiguous_is_error, pid_t *pid, size_t *tree_n, struct vt_err *err)
{
	struct match *m = NULL, *grown;
	size_t n = 0, cap = 0, i, j, top = 0;
	struct dirent *de;
	DIR *dir;
	int fd;

	*pid = 0;
	if (tree_n)
		*tree_n = 0;
	if (key->pidfile)
		return pidfile_pid(pfs, key->pidfile, pid);
	if (key->name)
		return find_name(pfs, key, ambiguous_is_error, pid, tree_n, err);
	fd = openat(pfs->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return vt_err_set(err, VT_E_IO, errno, "cannot list %s: %s", pfs->proc_root, strerror(errno));
	}
	while ((de = readdir(dir))) {
		struct vt_proc_stat st;
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0 || (pid_t)v == key->exclude || !read_stat(pfs, (pid_t)v, &st) ||
		    !key_matches(pfs, key, (pid_t)v, &st))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if (!(grown = realloc(m, cap * sizeof(*m)))) {
				free(m);
				closedir(dir);
				return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
			}
			m = grown;
		}
		m[n++] = (struct match){ (pid_t)v, (pid_t)st.ppid, st.start_ticks };
	}
	closedir(dir);
	/* Forked children run the same command line: keep the ones whose parent does not match. */
	for (i = 0; i < n; i++) {
		bool child_of_match = false;

		for (j = 0; j < n; j++)
			child_of_match |= m[j].pid == m[i].ppid;
		if (!child_of_match)
			m[top++] = m[i];
	}
	if (top > 1 && ambiguous_is_error) {
		char list[256];
		size_t len = 0;

		for (i = 0; i < top && len < sizeof(list) - 16; i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? ", " : "",
						(int)m[i].pid);
		vt_err_set(err, VT_E_USAGE, 0, "%zu unrelated processes run '%s': %s", top, key->cmdline, list);
		vt_err_hint(err, "give the pid to soak");
		free(m);
		return VT_E_USAGE;
	}
	/* Of several (after a restart, say), the oldest is the service. */
	for (i = 1, j = 0; i < top; i++)
		if (m[i].start < m[j].start)
			j = i;
	if (top)
		*pid = m[j].pid;
	free(m);
	return VT_OK;
}

int vt_launch(char *const *argv, char *const *env_add, int output_fd, pid_t *child,
	      struct vt_err *err)
{
	int pipefd[2], child_errno = 0;
	pid_t pid;
	ssize_t n;

	*child = 0;
	if (!argv || !argv[0])
		return vt_err_set(err, VT_E_USAGE, 0, "no command to run");
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return vt_err_set(err, VT_E_FAIL, errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return vt_err_set(err, VT_E_FAIL, errno, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int out, e;
		size_t i;

		close(pipefd[0]);
		setpgid(0, 0);
		/* vitals launched it: it does not outlive a vitals killed with -9 */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		/* the caller made the output file (base/outfile.h): nothing is opened by name here */
		out = output_fd >= 0 ? output_fd : open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (out >= 0) {
			dup2(out, STDOUT_FILENO);
			dup2(out, STDERR_FILENO);
		}
		/* not the terminal: in its own process group, a read would stop it (SIGTTIN) */
		out = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (out >= 0)
			dup2(out, STDIN_FILENO);
		for (i = 0; env_add && env_add[i]; i++)
			if (strchr(env_add[i], '='))
				putenv(env_add[i]);
			else
				unsetenv(env_add[i]);
		vt_thread_watch_nofile_restore();
		execvp(argv[0], argv);
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	do
		n = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(child_errno)) {
		waitpid(pid, NULL, 0);
		vt_err_set(err, VT_E_NOPROC, child_errno, "cannot run '%s': %s", argv[0], strerror(child_errno));
		vt_err_hint(err, child_errno == ENOENT ? "check the command name and PATH" : "");
		return VT_E_NOPROC;
	}
	*child = pid;
	return VT_OK;
}

bool vt_launch_reap(pid_t child, int *status)
{
	int st;

	if (child <= 0 || waitpid(child, &st, WNOHANG) != child)
		return false;
	*status = st;
	return true;
}

void vt_launch_stop(pid_t child, double grace_s, int *status)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	double waited = 0;

	*status = -1;
	if (child <= 0)
		return;
	if (vt_launch_reap(child, status))
		return;
	kill(child, SIGTERM);
	while (waited < grace_s) {
		if (vt_launch_reap(child, status))
			return;
		nanosleep(&pause, NULL);
		waited += 0.02;
	}
	kill(child, SIGKILL);
	waitpid(child, status, 0);
}
