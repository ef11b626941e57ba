/*
 * io_wait: threads blocked on disk I/O, in uninterruptible sleep.
 *
 * --threads writers, named "writer-0" .., each own one file in --dir
 * (io_wait.PID.N) and loop over bursts: write --mb MiB to it, wait until
 * the device has it, then read it back --reads times with O_DIRECT,
 * checking what comes back.  All the waiting is in the kernel, in state
 * D ("disk sleep") in /proc/PID/task/TID/stat, with a wchan that names
 * the I/O wait (__iomap_dio_rw, folio_wait_bit, submit_bio_wait); the
 * threads use little CPU.  --mode picks how a burst is written:
 *
 *   direct     O_DIRECT|O_DSYNC pwrite()s, 1 MiB each, over the same
 *              blocks, then fdatasync(): each write waits for the device
 *   fdatasync  buffered pwrite()s over the same blocks, then fdatasync()
 *              waits for the writeback
 *   fsync      ftruncate() to 0, buffered write()s, then fsync()
 *
 * The read-back is there to spare the disk: a read waits in D as long
 * as a write of the same size, and wears nothing.  Flat out, writers
 * with --reads 0 write as fast as the device takes them (1.5-3 GB/s on
 * a 2-vCPU VM whose host caches the disk); the default --reads 16 cuts
 * the writes to a seventeenth of the I/O (~100 MB/s there, always over
 * the same blocks) and leaves the writers in D in 80-95% of samples,
 * as with --reads 0.  Each file stays at --mb MiB, so the disk in use is
 * threads x mb (32 MiB by default), and the files are removed at exit.
 * --dir must be on a real disk: tmpfs never blocks (a warning says so).
 *
 * The truth gives the bursts completed, the bytes written and read back
 * and the fsync()/fdatasync() calls completed, all writers together.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/statfs.h>

#include "common.h"

#define MAX_THREADS	64
#define CHUNK		(1 << 20)	/* bytes per write() or read() */
#define ALIGN		4096		/* O_DIRECT buffer, offset and length */
#define TMPFS_MAGIC_	0x01021994	/* linux/magic.h's TMPFS_MAGIC */

enum mode { MODE_DIRECT, MODE_FDATASYNC, MODE_FSYNC };
static const char *const mode_names[] = { "direct", "fdatasync", "fsync" };
#define NMODES	((int)(sizeof(mode_names) / sizeof(*mode_names)))

static struct {
	int threads;
	const char *dir;
	double mb;
	enum mode mode;
	int reads;
} opt = {
	.threads = 2,
	.dir = ".",
	.mb = 16,
	.mode = MODE_DIRECT,
	.reads = 16,
};

struct writer {
	pthread_t thread;
	char path[PATH_MAX];
	int fd;			/* for the writes: O_DIRECT|O_DSYNC in direct mode */
	int rfd;		/* for the read-back: O_DIRECT */
	unsigned char *buf;	/* CHUNK bytes to write, ALIGN-aligned */
	unsigned char *rbuf;	/* CHUNK bytes read back, ALIGN-aligned */
};

static struct writer writers[MAX_THREADS];
static size_t burst_bytes;	/* --mb in bytes, a multiple of ALIGN */
static atomic_int stop;
static _Atomic uint64_t bursts, bytes_written, bytes_read, fsyncs;

static size_t chunk_at(size_t done)
{
	return burst_bytes - done < CHUNK ? burst_bytes - done : CHUNK;
}

/* What a burst writes: byte 0 of each chunk its number, the rest 'round'. */
static unsigned char mark(uint64_t round)
{
	return (unsigned char)((round & 0x7f) | 0x80);
}

/* Write 'len' bytes at 'off' (or at the file offset if off < 0). */
static void write_all(int fd, const unsigned char *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = off < 0 ? write(fd, buf, len) : pwrite(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(n < 0 ? "write" : "write returned 0");
		atomic_fetch_add_explicit(&bytes_written, (uint64_t)n,
					  memory_order_relaxed);
		buf += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
}

/* Read back one chunk written in 'round' at 'off' and check it. */
static void read_back(struct writer *w, size_t off, size_t len, uint64_t round)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(w->rfd, w->rbuf + got, len - got,
				  (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die(n < 0 ? "read back" : "read back: short file");
		atomic_fetch_add_explicit(&bytes_read, (uint64_t)n,
					  memory_order_relaxed);
		got += (size_t)n;
	}
	if (w->rbuf[0] != (unsigned char)(off >> 20) || w->rbuf[1] != mark(round)) {
		errno = EIO;
		die("read back: not what was written");
	}
}

/* One burst and its read-back; false if told to stop in the middle. */
static bool burst(struct writer *w, uint64_t round)
{
	size_t done;
	int pass, rc;

	if (opt.mode == MODE_FSYNC) {
		if (ftruncate(w->fd, 0))
			die("ftruncate");
		if (lseek(w->fd, 0, SEEK_SET) < 0)
			die("lseek");
	}
	/* Fresh bytes each round: nothing below us can skip or dedupe them. */
	memset(w->buf, mark(round), ALIGN);
	for (done = 0; done < burst_bytes; done += chunk_at(done)) {
		if (atomic_load_explicit(&stop, memory_order_relaxed))
			return false;
		w->buf[0] = (unsigned char)(done >> 20);
		write_all(w->fd, w->buf, chunk_at(done),
			  opt.mode == MODE_FSYNC ? -1 : (off_t)done);
	}
	rc = opt.mode == MODE_FSYNC ? fsync(w->fd) : fdatasync(w->fd);
	if (rc)
		die(opt.mode == MODE_FSYNC ? "fsync" : "fdatasync");
	atomic_fetch_add(&fsyncs, 1);
	atomic_fetch_add(&bursts, 1);
	for (pass = 0; pass < opt.reads; pass++)
		for (done = 0; done < burst_bytes; done += chunk_at(done)) {
			if (atomic_load_explicit(&stop, memory_order_relaxed))
				return false;
			read_back(w, done, chunk_at(done), round);
		}
	return true;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t round = 0;

	while (!atomic_load(&stop) && burst(w, round))
		round++;
	return NULL;
}

static unsigned char *aligned_buffer(void)
{
	void *p;

	check(posix_memalign(&p, ALIGN, CHUNK), "posix_memalign");
	memset(p, 0, CHUNK);
	return p;
}

/* Open every writer's file before any starts: a bad --dir fails at once. */
static void open_files(void)
{
	int flags = O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, i;
	struct statfs fs;

	if (statfs(opt.dir, &fs))
		die(opt.dir);
	if (fs.f_type == TMPFS_MAGIC_)
		fprintf(stderr, "%s: warning: %s is on tmpfs, which never blocks: "
			"expect no D state\n", program_invocation_short_name,
			opt.dir);
	if (opt.mode == MODE_DIRECT)
		flags |= O_DIRECT | O_DSYNC;
	for (i = 0; i < opt.threads; i++) {
		struct writer *w = &writers[i];

		if (snprintf(w->path, sizeof(w->path), "%s/io_wait.%d.%d",
			     opt.dir, (int)getpid(), i) >= (int)sizeof(w->path)) {
			errno = ENAMETOOLONG;
			die(opt.dir);
		}
		w->fd = open(w->path, flags, 0600);
		if (w->fd < 0)
			die(w->path);
		w->rfd = open(w->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
		if (w->rfd < 0)
			die(w->path);
		w->buf = aligned_buffer();
		w->rbuf = aligned_buffer();
	}
}

static void start_writers(void)
{
	int i;

	for (i = 0; i < opt.threads; i++)
		start_thread(&writers[i].thread, NULL, writer_main, &writers[i],
			     "writer", i);
}

static void stop_writers(void)
{
	int i;

	atomic_store(&stop, 1);
	for (i = 0; i < opt.threads; i++) {
		check(pthread_join(writers[i].thread, NULL), "pthread_join");
		if (close(writers[i].fd) || close(writers[i].rfd))
			die("close");
		if (unlink(writers[i].path))
			die(writers[i].path);
		free(writers[i].buf);
		free(writers[i].rbuf);
	}
}

/* 's' as a JSON string. */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase);

	if (!f)
		return;
	fprintf(f, ",\"threads\":%d,\"dir\":", opt.threads);
	json_string(f, opt.dir);
	fprintf(f, ",\"mb\":%g,\"mode\":\"%s\",\"reads\":%d,\"bursts\":%" PRIu64
		",\"bytes_written\":%" PRIu64 ",\"bytes_read\":%" PRIu64
		",\"fsyncs\":%" PRIu64, opt.mb, mode_names[opt.mode], opt.reads,
		atomic_load(&bursts), atomic_load(&bytes_written),
		atomic_load(&bytes_read), atomic_load(&fsyncs));
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	int i;

	switch (val) {
	case 'n':
		opt.threads = parse_num(name, arg, 1, MAX_THREADS);
		break;
	case 'd':
		if (!*arg) {
			fprintf(stderr, "%s: --dir needs a directory\n",
				program_invocation_short_name);
			exit(EXIT_USAGE);
		}
		opt.dir = arg;
		break;
	case 'm':
		opt.mb = parse_num(name, arg, 1.0 / 256, 1024);
		break;
	case 'M':
		for (i = 0; i < NMODES && strcmp(arg, mode_names[i]); i++)
			;
		if (i == NMODES) {
			fprintf(stderr, "%s: bad value '%s' for --mode, expected direct, fdatasync or fsync\n",
				program_invocation_short_name, arg);
			exit(EXIT_USAGE);
		}
		opt.mode = (enum mode)i;
		break;
	case 'r':
		opt.reads = parse_num(name, arg, 0, 1000);
		break;
	}
}

static const struct option options[] = {
	{ "threads", required_argument, NULL, 'n' },
	{ "dir", required_argument, NULL, 'd' },
	{ "mb", required_argument, NULL, 'm' },
	{ "mode", required_argument, NULL, 'M' },
	{ "reads", required_argument, NULL, 'r' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: io_wait [options]\n"
	"  --seconds N   exit after N seconds (default 60)\n"
	"  --truth FILE  append ground truth as JSON lines\n"
	"  --threads N   writer threads, one file each (default 2, max 64)\n"
	"  --dir DIR     where the files go: a real disk, not tmpfs\n"
	"                (default: the current directory)\n"
	"  --mb N        MiB per burst, the size of each file (default 16,\n"
	"                1/256 to 1024)\n"
	"  --mode M      how a burst is written: direct (default, O_DIRECT\n"
	"                and O_DSYNC), fdatasync or fsync (buffered)\n"
	"  --reads N     O_DIRECT read-backs of each burst (default 16, 0-1000)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	parse_options(argc, argv, &cli);
	/* Whole ALIGN blocks, at least one: O_DIRECT needs them. */
	burst_bytes = (size_t)(opt.mb * (1 << 20)) / ALIGN * ALIGN;
	if (burst_bytes < ALIGN)
		burst_bytes = ALIGN;
	open_files();
	target_begin(NULL);
	start_writers();
	main_loop(&(struct main_loop){ .report = truth_write,
				       .phase = "writing" });
	stop_writers();
	truth_write("exit");
	truth_close();
	return 0;
}
