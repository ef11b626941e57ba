/*
 * snap_floor — the lower bound of one `vitals snap --light`: a small
 * program making the same reads, and nothing else.
 *
 *   snap_floor OPS_FILE
 *
 * bench/snap records once, with strace, the reads `vitals snap --light PID`
 * makes after the dynamic loader is done (bench/snap.py: floor_ops) and
 * writes them to OPS_FILE, one a line:
 *
 *   read PATH             open, read to the end (128 KiB at a time), close
 *   pread PATH OFF LEN    pread LEN bytes at OFF (each PATH opened once)
 *   list PATH             open the directory and read all its entries
 *   readlink PATH         readlink
 *   stat PATH             stat
 *   vm PID ADDR LEN...    one process_vm_readv of LEN bytes at each ADDR (hex)
 *
 * PATH is as vitals named it (/proc/PID/root/usr/lib/..., /proc/PID/fd/3), so
 * the kernel does the same lookups.  This program parses nothing it reads,
 * allocates nothing but its buffers, links libc only and prints nothing: a
 * tool that needs those bytes cannot cost less, whatever it does with them.
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
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static char buf[128 << 10];

/* the files opened for pread, kept open as vitals keeps an ELF file open while it reads it */
static struct {
	char path[PATH_MAX];
	int fd;
} opened[64];
static size_t n_opened;

static int pread_fd(const char *path)
{
	size_t i;

	for (i = 0; i < n_opened; i++)
		if (!strcmp(opened[i].path, path))
			return opened[i].fd;
	if (n_opened == sizeof(opened) / sizeof(opened[0]))
		return -1;
	snprintf(opened[n_opened].path, sizeof(opened[n_opened].path), "%s", path);
	opened[n_opened].fd = open(path, O_RDONLY | O_CLOEXEC);
	return opened[n_opened++].fd;
}

static void read_whole(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

static void list_dir(const char *path)
{
	DIR *d = opendir(path);

	if (!d)
		return;
	while (readdir(d))
		;
	closedir(d);
}

int main(int argc, char **argv)
{
	char line[PATH_MAX + 64], path[PATH_MAX];
	unsigned long long off, len, addr;
	struct stat st;
	FILE *ops;
	size_t i;
	int pid;

	if (argc != 2 || !(ops = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: snap_floor OPS_FILE\n");
		return 2;
	}
	while (fgets(line, sizeof(line), ops)) {
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
	for (i = 0; i < n_opened; i++)
		if (opened[i].fd >= 0)
			close(opened[i].fd);
	return 0;
}
