/*
 * task.c — enumerate threads and read their syscall state.
 */
#include "proc/task.h"
#include "base/scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int vt_task_list(int pid_fd, pid_t **tids, size_t *n, struct vt_err *err)
{
	struct dirent *de;
	size_t count = 0, cap = 0;
	pid_t *v = NULL, *nv;
	DIR *dir;
	int fd, e;

	*tids = NULL;
	*n = 0;
	fd = openat(pid_fd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		return vt_err_set(err, vt_code_from_errno(e), e, "cannot list threads: %s", strerror(e));
	}
	dir = fdopendir(fd);
	if (!dir) {
		e = errno;
		close(fd);
		return vt_err_set(err, VT_E_IO, e, "cannot list threads: %s", strerror(e));
	}
	errno = 0;
	while ((de = readdir(dir)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (count == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(dir);
				return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory listing threads");
			}
			v = nv;
		}
		v[count++] = (pid_t)tid;
	}
	e = errno;
	closedir(dir);
	if (e) {
		free(v);
		return vt_err_set(err, vt_code_from_errno(e), e, "cannot list threads: %s", strerror(e));
	}
	*tids = v;
	*n = count;
	return VT_OK;
}

bool vt_syscall_parse_sp_pc(const char *buf, size_t len, uint64_t *sp, uint64_t *pc)
{
	struct vt_scan s = vt_scan_init(buf, len);
	const char *words[9], *w;
	size_t wl, nwords = 0;
	uint64_t v[2];

	while (nwords < 9 && vt_scan_word(&s, &w, &wl))
		words[nwords++] = w;
	if (nwords != 3 && nwords != 9)
		return false;
	for (size_t i = 0; i < 2; i++) {
		w = words[nwords - 2 + i];
		s = vt_scan_init(w, (size_t)(buf + len - w));
		if (!vt_scan_char(&s, '0') || !vt_scan_char(&s, 'x') || !vt_scan_hex(&s, &v[i]))
			return false;
	}
	*sp = v[0];
	if (pc)
		*pc = v[1];
	return true;
}

bool vt_syscall_parse_sp(const char *buf, size_t len, uint64_t *sp)
{
	return vt_syscall_parse_sp_pc(buf, len, sp, NULL);
}
