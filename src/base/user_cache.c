/*
 * user_cache.c — the user's cache directory of vitals (see user_cache.h).
 */
#include "base/user_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A directory we may trust: ours, and writable by nobody else. */
static bool dir_ours(int dfd)
{
	struct stat st;

	return fstat(dfd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

int vt_user_cache_dir(bool create)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char base[4096], path[4200];
	struct stat st;
	int dfd;

	if (xdg && xdg[0] == '/') {
		snprintf(base, sizeof(base), "%s", xdg);
	} else if (home && home[0] == '/') {
		if ((size_t)snprintf(base, sizeof(base), "%s/.cache", home) >= sizeof(base))
			return -1;
		if (create && stat(base, &st) < 0 && errno == ENOENT &&
		    stat(home, &st) == 0 && st.st_uid == geteuid())
			(void)mkdir(base, 0700);
	} else {
		return -1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/vitals", base) >= sizeof(path))
		return -1;
	if (create && stat(base, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
		(void)mkdir(path, 0700);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	if (!dir_ours(dfd)) {
		close(dfd);
		return -1;
	}
	return dfd;
}

bool vt_user_cache_read(int dfd, const char *name, char *buf, size_t cap, size_t *len)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	bool ok;
	int fd;

	*len = 0;
	if (!cap)
		return false;
	buf[0] = '\0';
	if ((fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	     !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size >= 0 && (size_t)st.st_size < cap;
	while (ok && got + 1 < cap && (n = read(fd, buf + got, cap - 1 - got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ok = false;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[ok ? got : 0] = '\0';
	*len = ok ? got : 0;
	return ok;
}

static bool write_all(int fd, const char *s, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, s, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		s += n;
		len -= (size_t)n;
	}
	return true;
}

bool vt_user_cache_replace(int dfd, const char *name, const char *text, size_t len)
{
	struct timespec now;
	char tmp[128];
	bool ok;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.%d.%lx", name, (int)getpid(),
			     (unsigned long)now.tv_nsec) >= sizeof(tmp))
		return false;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	ok = write_all(fd, text, len);
	ok = close(fd) == 0 && ok;
	if (ok && renameat(dfd, tmp, dfd, name) == 0)
		return true;
	unlinkat(dfd, tmp, 0);
	return false;
}
