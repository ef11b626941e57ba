/*
 * uprobe.c — the uprobe PMU read from sysfs, and probe events built.
 */
#include "perf/uprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <time.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PMU_DIR "/bus/event_source/devices/uprobe"

/* A small sysfs file into buf (NUL-terminated); its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, cap - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

bool vt_uprobe_parse_format(const char *text, size_t len, unsigned *bit)
{
	static const char prefix[] = "config:";
	size_t i = sizeof(prefix) - 1;
	unsigned v = 0;

	if (len < i + 1 || memcmp(text, prefix, i) != 0)
		return false;
	for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
		v = v * 10 + (unsigned)(text[i] - '0');
		if (v > 63)
			return false;
	}
	if (i == sizeof(prefix) - 1)
		return false;
	/* one bit: nothing but a newline after the number (no "-63" range) */
	if (i < len && !(text[i] == '\n' && i + 1 == len))
		return false;
	*bit = v;
	return true;
}

int vt_uprobe_pmu_read(const char *sysfs_root, struct vt_uprobe_pmu *out, struct vt_err *err)
{
	char path[512], buf[64], *end;
	unsigned long type;
	ssize_t n;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s" PMU_DIR "/type", sysfs_root ? sysfs_root : "/sys");
	n = read_small(path, buf, sizeof(buf));
	if (n < 0) {
		vt_err_set(err, VT_E_UNSUPPORTED, errno, "this kernel has no uprobe PMU (%s: %s)",
			   path, strerror(errno));
		vt_err_hint(err, "probes need Linux 4.17 or later built with CONFIG_UPROBE_EVENTS; "
			    "in a container, /sys must be the host's");
		return VT_E_UNSUPPORTED;
	}
	errno = 0;
	type = strtoul(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n') || type > UINT32_MAX)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "%s does not hold a PMU type", path);
	snprintf(path, sizeof(path), "%s" PMU_DIR "/format/retprobe", sysfs_root ? sysfs_root : "/sys");
	n = read_small(path, buf, sizeof(buf));
	if (n < 0 || !vt_uprobe_parse_format(buf, (size_t)n, &out->retprobe_bit))
		return vt_err_set(err, VT_E_UNSUPPORTED, n < 0 ? errno : 0,
				  "the uprobe PMU does not say how a return probe is asked for (%s)",
				  path);
	out->type = (uint32_t)type;
	return VT_OK;
}

void vt_uprobe_event(const struct vt_uprobe_pmu *pmu, const char *path, uint64_t offset, bool ret,
		     bool stack, struct vt_perf_event *out)
{
	memset(out, 0, sizeof(*out));
	out->type = pmu->type;
	out->config = ret ? 1ull << pmu->retprobe_bit : 0;
	out->config1 = (uint64_t)(uintptr_t)path;   /* uprobe_path */
	out->config2 = offset;                     /* probe_offset */
	out->stack = stack;
}

/* ---- a set of probes: tracefs with anchors, else the PMU ---- */

#define GROUP_PREFIX "vitals_"

static unsigned set_seq;   /* sets opened by this process */

struct vt_uprobe_set {
	char *path;
	size_t n;
	struct vt_perf_event events[VT_PERF_EVENTS_MAX];
	bool tracefs;
	char dir[64];             /* the tracefs mount */
	char group[32];           /* vitals_<pid> */
	bool defined[VT_PERF_EVENTS_MAX];
	int anchors[VT_PERF_EVENTS_MAX];
	char how[256];
};

/* Where tracefs is mounted ("/sys/kernel/tracing"), from /proc/self/mounts. */
static bool find_tracefs(char *dir, size_t cap)
{
	char line[1024], dev[256], mnt[512], type[64];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %511s %63s", dev, mnt, type) == 3 && !strcmp(type, "tracefs") &&
		    strlen(mnt) < cap) {
			memcpy(dir, mnt, strlen(mnt) + 1);
			found = true;
		}
	fclose(f);
	return found;
}

/* Append one line to uprobe_events; 0 or an errno. */
static int write_events(const char *dir, const char *line)
{
	char file[128];
	size_t len = strlen(line);
	ssize_t w;
	int fd, e = 0;

	snprintf(file, sizeof(file), "%s/uprobe_events", dir);
	fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return errno;
	do
		w = write(fd, line, len);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)len)
		e = w < 0 ? errno : EIO;
	close(fd);
	return e;
}

void vt_uprobe_remove_stale(const char *dir)
{
	char file[128], line[1200];
	FILE *f;

	snprintf(file, sizeof(file), "%s/uprobe_events", dir);
	f = fopen(file, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		/* "p:vitals_1234/e0 /path:0x..." */
		char *g = strchr(line, ':'), *slash, *end;
		char cmd[128];
		long pid;

		if (!g || strncmp(g + 1, GROUP_PREFIX, strlen(GROUP_PREFIX)))
			continue;
		g++;
		slash = strchr(g, '/');
		end = strchr(g, ' ');
		if (!slash || !end || end < slash || end - g > 100)
			continue;
		pid = strtol(g + strlen(GROUP_PREFIX), NULL, 10);
		if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(cmd, sizeof(cmd), "-:%.*s\n", (int)(end - g), g);
		write_events(dir, cmd);
	}
	fclose(f);
}

/*
 * The task the anchors are opened on: kthreadd (pid 2) when it is a kernel
 * thread here (not in a pid namespace where pid 2 is some process), whose
 * missing memory map matches no probe, so the anchors put no breakpoint
 * anywhere; else vitals itself, whose own calls of the probed functions then
 * trap.  *own says which.
 */
static pid_t anchor_task(bool *own)
{
	char buf[512], *rp;
	unsigned long flags = 0;
	ssize_t n;
	int fd = open("/proc/2/stat", O_RDONLY | O_CLOEXEC);

	*own = true;
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	/* after ") ": state ppid pgrp session tty_nr tpgid flags */
	if (!rp || sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) != 1 || !(flags & 0x00200000ul))
		return 0;
	*own = false;
	return 2;
}

static int sys_perf_open(struct perf_event_attr *a, pid_t pid)
{
	return (int)syscall(SYS_perf_event_open, a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Define the probes in tracefs and anchor them; false (with why) when not possible. */
static bool open_tracefs(struct vt_uprobe_set *s, const struct vt_uprobe_spec *specs,
			 bool allow_mount, char *why, size_t why_cap)
{
	bool mounted = false, own;
	pid_t anchor = anchor_task(&own);

	if (!find_tracefs(s->dir, sizeof(s->dir))) {
		if (!allow_mount) {
			snprintf(why, why_cap, "tracefs is not mounted");
			return false;
		}
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0) {
			snprintf(why, why_cap, "tracefs is not mounted and cannot be: %s", strerror(errno));
			return false;
		}
		snprintf(s->dir, sizeof(s->dir), "/sys/kernel/tracing");
		mounted = true;
	}
	vt_uprobe_remove_stale(s->dir);
	/* a group of its own per set: an event name met again in one group would add
	 * this file's probe to that event, not make a new one */
	snprintf(s->group, sizeof(s->group), GROUP_PREFIX "%d_%u", (int)getpid(), ++set_seq);
	for (size_t i = 0; i < s->n; i++) {
		char line[4400], idfile[192], buf[32];
		struct perf_event_attr a;
		int e;

		snprintf(line, sizeof(line), "%c:%s/e%zu %s:0x%llx\n", specs[i].ret ? 'r' : 'p', s->group,
			 i, s->path, (unsigned long long)specs[i].offset);
		if ((e = write_events(s->dir, line))) {
			snprintf(why, why_cap, "%s/uprobe_events refused a probe: %s", s->dir, strerror(e));
			return false;
		}
		s->defined[i] = true;
		snprintf(idfile, sizeof(idfile), "%s/events/%s/e%zu/id", s->dir, s->group, i);
		if (read_small(idfile, buf, sizeof(buf)) <= 0) {
			snprintf(why, why_cap, "the probe's id is unreadable: %s", strerror(errno));
			return false;
		}
		memset(&s->events[i], 0, sizeof(s->events[i]));
		s->events[i].type = PERF_TYPE_TRACEPOINT;
		s->events[i].config = strtoull(buf, NULL, 10);
		s->events[i].stack = specs[i].stack;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = s->events[i].config;
		a.sample_period = 1;
		a.disabled = 1;
		a.exclude_kernel = 1;
		s->anchors[i] = sys_perf_open(&a, anchor);
		if (s->anchors[i] < 0 && anchor) {   /* kthreadd refused: vitals itself */
			anchor = 0;
			own = true;
			s->anchors[i] = sys_perf_open(&a, 0);
		}
		if (s->anchors[i] < 0) {
			snprintf(why, why_cap, "the probes' anchor was refused: %s", strerror(errno));
			return false;
		}
	}
	snprintf(s->how, sizeof(s->how), "tracefs (%s%s), anchored on %s", s->dir,
		 mounted ? ", mounted by vitals as perf does" : "",
		 own ? "vitals (its own calls trap)" : "a kernel thread");
	return true;
}

static void close_tracefs(struct vt_uprobe_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->anchors[i] >= 0)
			close(s->anchors[i]);
		s->anchors[i] = -1;
	}
	for (size_t i = 0; i < s->n; i++) {
		char line[64];

		if (!s->defined[i])
			continue;
		snprintf(line, sizeof(line), "-:%s/e%zu\n", s->group, i);
		write_events(s->dir, line);
		s->defined[i] = false;
	}
}

int vt_uprobe_set_open(const char *path, const struct vt_uprobe_spec *specs, size_t n,
		       bool allow_mount, struct vt_uprobe_set **out, struct vt_err *err)
{
	struct vt_uprobe_set *s;
	struct vt_uprobe_pmu pmu;
	char why[192];
	int rc;

	*out = NULL;
	if (n == 0 || n > VT_PERF_EVENTS_MAX)
		return vt_err_set(err, VT_E_USAGE, 0, "%zu probes: 1 to %u are possible", n,
				  (unsigned)VT_PERF_EVENTS_MAX);
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	}
	s->n = n;
	for (size_t i = 0; i < VT_PERF_EVENTS_MAX; i++)
		s->anchors[i] = -1;
	if (open_tracefs(s, specs, allow_mount, why, sizeof(why))) {
		s->tracefs = true;
		*out = s;
		return VT_OK;
	}
	close_tracefs(s);
	if ((rc = vt_uprobe_pmu_read(NULL, &pmu, err))) {
		free(s->path);
		free(s);
		return rc;
	}
	for (size_t i = 0; i < n; i++)
		vt_uprobe_event(&pmu, s->path, specs[i].offset, specs[i].ret, specs[i].stack,
				&s->events[i]);
	snprintf(s->how, sizeof(s->how), "uprobe PMU (%s: each probe takes ~50 ms to close)", why);
	*out = s;
	return VT_OK;
}

const struct vt_perf_event *vt_uprobe_set_events(const struct vt_uprobe_set *s)
{
	return s->events;
}

const char *vt_uprobe_set_how(const struct vt_uprobe_set *s)
{
	return s->how;
}

bool vt_uprobe_set_cheap_close(const struct vt_uprobe_set *s)
{
	return s->tracefs;
}

void vt_uprobe_set_close(struct vt_uprobe_set **sp)
{
	struct vt_uprobe_set *s = sp ? *sp : NULL;

	if (!s)
		return;
	if (s->tracefs)
		close_tracefs(s);
	free(s->path);
	free(s);
	*sp = NULL;
}

/* ---- what a probe hit costs ---- */

#define CALIBRATE_ROUNDS 1000

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t time_malloc_free(void)
{
	void *(*volatile do_malloc)(size_t) = malloc;
	void (*volatile do_free)(void *) = free;
	uint64_t t0 = mono_ns(), best = UINT64_MAX;

	/* the fastest of a few rounds: the least disturbed by the rest of the box */
	for (int k = 0; k < 3; k++) {
		t0 = mono_ns();
		for (int i = 0; i < CALIBRATE_ROUNDS; i++)
			do_free(do_malloc(48));
		if (mono_ns() - t0 < best)
			best = mono_ns() - t0;
	}
	return best;
}

/* Where code address addr lies in its file: the file and the offset, from the
 * loaded objects' program headers. */
struct code_place {
	uintptr_t addr;
	uint64_t offset;
	char file[PATH_MAX];
	bool found;
};

static int find_place(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct code_place *w = ctx;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || w->addr < lo || w->addr >= lo + ph->p_memsz)
			continue;
		w->offset = w->addr - lo + ph->p_offset;
		if (info->dlpi_name && info->dlpi_name[0])
			snprintf(w->file, sizeof(w->file), "%s", info->dlpi_name);
		else if (readlink("/proc/self/exe", w->file, sizeof(w->file) - 1) < 0)
			return 0;
		w->found = true;
		return 1;
	}
	return 0;
}

double vt_uprobe_hit_ns(uint64_t base_ns, uint32_t stack_bytes)
{
	struct code_place m = { .addr = (uintptr_t)malloc }, f = { .addr = (uintptr_t)free };
	struct vt_uprobe_spec specs[3];
	struct vt_uprobe_set *set = NULL;
	struct vt_perf *pf = NULL;
	struct vt_perf_opts po = { .stack_bytes = stack_bytes };
	uint64_t probed;
	double ns = NAN;

	dl_iterate_phdr(find_place, &m);
	dl_iterate_phdr(find_place, &f);
	if (!base_ns || !m.found || !f.found || strcmp(m.file, f.file))
		return NAN;
	specs[0] = (struct vt_uprobe_spec){ m.offset, true, false };
	specs[1] = (struct vt_uprobe_spec){ m.offset, false, true };
	specs[2] = (struct vt_uprobe_spec){ f.offset, false, false };
	if (vt_uprobe_set_open(m.file, specs, 3, false, &set, NULL) != VT_OK)
		return NAN;
	po.events = vt_uprobe_set_events(set);
	po.nevents = 3;
	po.ring_pages = 64;
	if (vt_perf_open(getpid(), &po, &pf, NULL) == VT_OK) {
		probed = time_malloc_free();
		vt_perf_close(&pf);
		if (probed > base_ns)
			ns = (double)(probed - base_ns) / (3.0 * CALIBRATE_ROUNDS);
	}
	vt_uprobe_set_close(&set);
	return ns;
}


uint64_t vt_uprobe_calibration_base(void)
{
	return time_malloc_free();
}
