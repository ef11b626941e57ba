/*
 * snap_floor — the lower bound of one `vitals snap --light`: a small
 * program making the same reads, and nothing else.
 *
 *   snap_floor OPS_FILE
 *
 * bench/snap records once, with strace, the reads `vitals snap --light PID`
 * makes after the dynamic loader is done (bench/floor_ops.py) and writes
 * them to OPS_FILE, one a line (bench/threads does the same for `vitals
 * threads -i 1s`, every read kept, the second samples' too):
 *
 *   read PATH             open, read to the end (128 KiB at a time), close
 *   pread PATH OFF LEN    pread LEN bytes at OFF (each PATH opened once, and held)
 *   list PATH             open the directory and read all its entries
 *   readlink PATH         readlink
 *   stat PATH             stat
 *   vm PID ADDR LEN...    one process_vm_readv of LEN bytes at each ADDR (hex)
 *
 * PATH is as vitals named it (/proc/PID/root/usr/lib/..., /proc/PID/fd/3), so
 * the kernel does the same lookups; DIR//NAME is NAME opened in DIR, which is
 * opened once, as vitals opened it through a directory fd.  This program
 * parses nothing it reads, allocates nothing but its buffers and the names of
 * the files it holds, links libc only and prints nothing: a tool that needs
 * those bytes cannot cost less, whatever it does with them.
 * Exit 0, or 2 when OPS_FILE cannot be read (a read that fails is skipped,
 * as vitals would have seen it fail too).  Built and run by bench/snap.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static char buf[128 << 10];

/*
 * Open path: DIR//NAME (at the last "//") is NAME opened in the directory
 * DIR, held open (the traced command opened it through a directory fd),
 * else the whole path.
 */
static int open_at(const char *path, int flags)
{
	static struct {
		char path[PATH_MAX];
		int fd;
	} dirs[64];
	static size_t ndirs;
	const char *sep = NULL, *c;
	size_t len, i;

	for (c = path; (c = strstr(c, "//")) != NULL; c++)
		sep = c;                /* the last: DIR may hold "//" itself */
	if (!sep)
		return open(path, flags | O_CLOEXEC);
	len = (size_t)(sep - path);
	for (i = 0; i < ndirs; i++)
		if (strlen(dirs[i].path) == len && !strncmp(dirs[i].path, path, len))
			return openat(dirs[i].fd, sep + 2, flags | O_CLOEXEC);
	if (ndirs == sizeof(dirs) / sizeof(dirs[0]) || len >= PATH_MAX)
		return -1;
	memcpy(dirs[ndirs].path, path, len);
	dirs[ndirs].path[len] = '\0';
	dirs[ndirs].fd = open(dirs[ndirs].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return openat(dirs[ndirs++].fd, sep + 2, flags | O_CLOEXEC);
}

/*
 * The files opened for pread, kept open as vitals keeps an ELF file open while
 * it reads it, or a sampler its threads' counters: a hash on the path, so a
 * thousand threads' files cost the floor no search.
 */
#define OPENED_MAX 16384
static struct {
	char *path;
	int fd;
} opened[OPENED_MAX];
static size_t n_opened;

static int pread_fd(const char *path)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (const char *c = path; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	for (i = h % OPENED_MAX; opened[i].path; i = (i + 1) % OPENED_MAX)
		if (!strcmp(opened[i].path, path))
			return opened[i].fd;
	if (n_opened == OPENED_MAX / 2 || !(opened[i].path = strdup(path)))
		return -1;
	n_opened++;
	opened[i].fd = open_at(path, O_RDONLY);
	return opened[i].fd;
}

static void read_whole(const char *path)
{
	int fd = open_at(path, O_RDONLY);

	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void list_dir(const char *path)
{
	int fd = open_at(path, O_RDONLY | O_DIRECTORY);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (readdir(d))
		;
	closedir(d);
}

int main(int argc, char **argv)
{
	char line[PATH_MAX + 64], path[PATH_MAX];
	unsigned long long off, len, addr;
	struct rlimit nofile;
	struct stat st;
	FILE *ops;
	size_t i;
	int pid;

	if (argc != 2 || !(ops = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: snap_floor OPS_FILE\n");
		return 2;
	}
	/* as many files held as vitals holds: it raises its soft limit to the hard one too */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	while (fgets(line, sizeof(line), ops)) {
		if (line[0] == '\n')
			continue;
		if (sscanf(line, "read %4095s", path) == 1) {
			read_whole(path);
		} else if (sscanf(line, "pread %4095s %llu %llu", path, &off, &len) == 3) {
			int fd = pread_fd(path);

			while (fd >= 0 && len > 0) {
				size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
				ssize_t got = pread(fd, buf, n, (off_t)off);

				if (got <= 0)
					break;
				off += (unsigned long long)got;
				len -= (unsigned long long)got;
			}
		} else if (sscanf(line, "list %4095s", path) == 1) {
			list_dir(path);
		} else if (sscanf(line, "readlink %4095s", path) == 1) {
			if (readlink(path, buf, sizeof(buf)) < 0)
				continue;
		} else if (sscanf(line, "stat %4095s", path) == 1) {
			if (stat(path, &st) != 0)
				continue;
		} else if (sscanf(line, "vm %d", &pid) == 1) {
			struct iovec local[64], remote[64];
			size_t n = 0, used = 0;
			char *p = line + 3, *end;

			strtol(p, &p, 10);
			while (n < 64 && (addr = strtoull(p, &end, 16), end != p) &&
			       (len = strtoull(end, &p, 10), p != end)) {
				if (len > sizeof(buf) - used)
					len = sizeof(buf) - used;
				local[n].iov_base = buf + used;
				local[n].iov_len = (size_t)len;
				remote[n].iov_base = (void *)(uintptr_t)addr;
				remote[n].iov_len = (size_t)len;
				used += (size_t)len;
				n++;
			}
			if (process_vm_readv(pid, local, n, remote, n, 0) < 0)
				continue;
		} else {
			fprintf(stderr, "snap_floor: cannot read '%s'\n", line);
			return 2;
		}
	}
	fclose(ops);
	for (i = 0; i < OPENED_MAX; i++)
		if (opened[i].path && opened[i].fd >= 0)
			close(opened[i].fd);
	return 0;
}
