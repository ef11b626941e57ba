/*
 * caps.c — probe, for one process, each way vitals reads it (see caps.h);
 * the words of each refusal come from caps_rules.c.
 *
 * Order: the target's status (exists? kernel thread? zombie?), then the
 * files snap reads, then the live probes: one PTRACE_SEIZE (heap and
 * profile's fallback), one disabled perf event, one page of memory and its
 * pagemap entry, the agent.  On a recorded /proc tree only the files are
 * read; the rest is "unknown".
 */
#include "sample/caps.h"
#include "alloc/agent_client.h"
#include "alloc/allocator.h"
#include "alloc/detect.h"
#include "inject/seize_probe.h"
#include "perf/perf_probe.h"
#include "proc/cgroup.h"
#include "proc/maps.h"
#include "proc/mem.h"
#include "proc/stat.h"
#include "proc/status.h"
#include "sample/heap.h"
#include "sample/target.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AGENT_TIMEOUT_MS 3000

struct probe {
	const struct vt_procfs *pfs;
	const struct vt_caps_opts *opts;
	struct vt_caps_report *r;
	struct vt_caps_target *t;
	pid_t pid;
	int fd;                          /* the process directory */
	struct vt_buf buf;
	struct vt_region_list maps;
	bool maps_ok;
	struct vt_alloc_info alloc;
	bool alloc_ok;
};

static struct vt_caps_feature *feat(struct probe *p, enum vt_caps_feature_id id)
{
	return &p->r->features[id];
}

static void say(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(char *dst, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, VT_CAPS_TEXT, fmt, ap);
	va_end(ap);
}

/* Add to the end of dst (a VT_CAPS_TEXT field). */
static void append(char *dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(char *dst, const char *fmt, ...)
{
	size_t n = strnlen(dst, VT_CAPS_TEXT - 1);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst + n, VT_CAPS_TEXT - n, fmt, ap);
	va_end(ap);
}

static void works(struct vt_caps_feature *f)
{
	f->status = VT_CAPS_WORKS;
	f->reason[0] = f->grant[0] = '\0';
	f->sys_errno = 0;
}

static void unknown(struct vt_caps_feature *f, const char *why)
{
	f->status = VT_CAPS_UNKNOWN;
	say(f->reason, "%s", why);
}

static bool denied(int e)
{
	return e == EACCES || e == EPERM;
}

/* Open name in the process directory and read a little: 0 or the errno. */
static int try_read(struct probe *p, const char *name)
{
	char small[256];
	int fd = openat(p->fd, name, O_RDONLY | O_CLOEXEC), e;

	if (fd < 0)
		return errno;
	e = read(fd, small, sizeof(small)) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* ---- the target -------------------------------------------------------------- */

/* Is vitals one of pid's ancestors (Yama scope 1 lets those attach)? */
static bool vitals_is_ancestor(struct probe *p)
{
	struct vt_proc_status st;
	char rel[48];
	long at = p->t->pid;
	int steps;

	if (!p->pfs->live)
		return false;
	for (steps = 0; steps < 256 && at > 1; steps++) {
		snprintf(rel, sizeof(rel), "%ld/status", at);
		if (vt_procfs_read(p->pfs, rel, &p->buf, NULL) != VT_OK ||
		    vt_proc_status_parse(p->buf.data, p->buf.len, &st, NULL) != VT_OK)
			return false;
		at = (long)st.ppid;
		if (at == (long)getpid())
			return true;
	}
	return false;
}

static int read_target(struct probe *p, struct vt_err *err)
{
	struct vt_caps_target *t = p->t;
	struct vt_proc_status status;
	struct vt_proc_stat st;
	struct stat sb;
	int rc;

	if ((rc = vt_target_check(p->fd, p->pid, &p->buf, &st, &status, err)))
		return rc;
	t->pid = p->pid;
	snprintf(t->comm, sizeof(t->comm), "%s", st.comm);
	t->state = status.state;
	t->uid_real = (long)status.uid_real;
	t->uid_eff = (long)status.uid_eff;
	t->tracer_pid = (long)status.tracer_pid;
	t->seccomp = (int)status.seccomp;
	/* A non-dumpable process's files belong to root (proc(5)). */
	t->dumpable = !(fstatat(p->fd, "environ", &sb, 0) == 0 && sb.st_uid == 0 && t->uid_real > 0);
	t->descendant = vitals_is_ancestor(p);
	return VT_OK;
}

/* ---- snap's files ---------------------------------------------------------- */

static void check_file(struct probe *p, enum vt_caps_feature_id id, const char *name, bool attach)
{
	struct vt_caps_feature *f = feat(p, id);
	int e = try_read(p, name);

	say(f->how, "opened and read /proc/%d/%s", (int)p->pid, name);
	if (!e) {
		works(f);
	} else if (denied(e)) {
		f->sys_errno = e;
		vt_caps_explain_ptrace(&p->r->host, p->t, attach, name, f);
	} else {
		f->sys_errno = e;
		unknown(f, strerror(e));
	}
}

static void check_snap(struct probe *p)
{
	struct vt_caps_feature *f = feat(p, VT_CAPS_SNAP_STATUS);
	struct vt_cgroup_mem cg;
	struct vt_err e;
	int rc;

	say(f->how, "read /proc/%d/stat and status", (int)p->pid);
	works(f);
	check_file(p, VT_CAPS_SNAP_MAPS, "maps", false);
	check_file(p, VT_CAPS_SNAP_SMAPS, "smaps", false);
	check_file(p, VT_CAPS_SNAP_ENVIRON, "environ", false);
	if (feat(p, VT_CAPS_SNAP_ENVIRON)->status == VT_CAPS_REFUSED)
		append(feat(p, VT_CAPS_SNAP_ENVIRON)->reason, "; without it snap assumes glibc's default arena cap (8 x CPUs)");

	f = feat(p, VT_CAPS_SNAP_CGROUP);
	say(f->how, "read /proc/%d/cgroup and the memory controller's files", (int)p->pid);
	rc = vt_cgroup_read(p->pfs, p->fd, &cg, &e);
	if (rc == VT_OK) {
		works(f);
		if (cg.version == 0)
			say(f->reason, "the process has no memory cgroup with a limit to read");
	} else if (rc == VT_E_NOTFOUND) {
		f->status = VT_CAPS_REFUSED;
		say(f->reason, "%s", e.msg);
		say(f->grant, "let vitals see the host's cgroup filesystem (in a container: -v "
		    "/sys/fs/cgroup:/sys/fs/cgroup:ro, and --cgroupns=host)");
	} else {
		unknown(f, e.msg);
	}

	f = feat(p, VT_CAPS_FILES);
	say(f->how, "opened /proc/%d/root (the process's own view of its files)", (int)p->pid);
	rc = openat(p->fd, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rc >= 0) {
		close(rc);
		works(f);
	} else if (denied(errno)) {
		f->sys_errno = errno;
		vt_caps_explain_ptrace(&p->r->host, p->t, false, "/proc/PID/root", f);
		append(f->reason, "; vitals then uses the host's copy of a file when it "
		    "is the same one (device and inode)");
	} else {
		f->sys_errno = errno;
		unknown(f, strerror(errno));
	}
}

/* The allocator, from maps (needs maps); "" when it cannot be told. */
static void read_allocator(struct probe *p)
{
	struct vt_err e;
	size_t i;

	if (vt_target_allocator(p->pfs, p->fd, p->pid, p->t->uid_real, &p->buf, &p->maps, &p->alloc, &e) != VT_OK)
		return;
	p->maps_ok = p->alloc_ok = true;
	if (p->alloc.kind != VT_ALLOC_UNKNOWN)
		snprintf(p->t->allocator, sizeof(p->t->allocator), "%s", vt_alloc_kind_name(p->alloc.kind));
	for (i = 0; i < p->maps.n; i++)
		if (strstr(p->maps.v[i].path, "libvitals-agent"))
			p->t->agent_mapped = true;
}

/* ---- ptrace ---------------------------------------------------------------- */

static void not_applicable(struct vt_caps_feature *f, const char *grant, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void not_applicable(struct vt_caps_feature *f, const char *grant, const char *fmt, ...)
{
	va_list ap;

	f->status = VT_CAPS_NOT_APPLICABLE;
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
	snprintf(f->grant, sizeof(f->grant), "%s", grant ? grant : "");
}

static void tracer_comm(struct probe *p, long tracer, char *out, size_t cap)
{
	char rel[48];

	snprintf(rel, sizeof(rel), "%ld/comm", tracer);
	snprintf(out, cap, "?");
	if (vt_procfs_read(p->pfs, rel, &p->buf, NULL) == VT_OK && p->buf.len)
		snprintf(out, cap, "%.*s", (int)strcspn(p->buf.data, "\n"), p->buf.data);
}

/* The seize itself, shared by heap.ptrace and profile.ptrace: fills f. */
static void check_seize(struct probe *p, struct vt_caps_feature *f)
{
	const struct vt_caps_target *t = p->t;
	char comm[64], grant[VT_CAPS_TEXT];
	bool released;
	int e;

	if (t->tracer_pid > 0) {
		tracer_comm(p, t->tracer_pid, comm, sizeof(comm));
		say(f->how, "read TracerPid in /proc/%d/status", (int)p->pid);
		f->status = VT_CAPS_REFUSED;
		f->sys_errno = EPERM;
		say(f->reason, "the process is already traced by %ld (%s), and a process has one tracer",
		    t->tracer_pid, comm);
		snprintf(grant, sizeof(grant), "detach the debugger or tracer (%s) first", comm);
		say(f->grant, "%s", grant);
		return;
	}
	if (t->state == 'T' || t->state == 't') {
		say(f->how, "read State in /proc/%d/status", (int)p->pid);
		not_applicable(f, NULL, "the process is stopped (state %c): vitals does not stop it further",
			       t->state);
		say(f->grant, "kill -CONT %d", (int)p->pid);
		return;
	}
	e = vt_inject_seize_probe(p->pfs, p->pid, p->pid, &released);
	say(f->how, "PTRACE_SEIZE of thread %d from a thread of vitals that then exited: %s", (int)p->pid,
	    e ? "refused" : released ? "seized and released without a stop" :
	    "seized; the kernel releases it as that thread ends (no stop)");
	if (!e) {
		works(f);
	} else if (denied(e)) {
		f->sys_errno = e;
		vt_caps_explain_ptrace(&p->r->host, t, true, "ptrace", f);
	} else {
		f->sys_errno = e;
		unknown(f, strerror(e));
	}
}

static bool allocator_unsupported(struct probe *p, struct vt_caps_feature *f, bool glibc_only)
{
	char names[128];

	if (!p->alloc_ok)
		return false;
	if (p->alloc.sanitizer[0]) {
		not_applicable(f, "run a build without -fsanitize", "the process runs under %s, whose runtime "
			       "owns malloc", p->alloc.sanitizer);
		return true;
	}
	if (p->alloc.kind == VT_ALLOC_GLIBC && p->alloc.is_static) {
		not_applicable(f, NULL, "the process links glibc statically: its malloc functions are not exported");
		return true;
	}
	if (p->alloc.kind == VT_ALLOC_GLIBC || (!glibc_only && vt_heap_reads(p->alloc.kind)))
		return false;
	not_applicable(f, NULL, "its malloc is %s (%s); this reads %s", vt_alloc_kind_name(p->alloc.kind),
		       p->alloc.evidence, glibc_only ? "glibc malloc only" : vt_allocators_read(names, sizeof(names)));
	return true;
}

static void check_ptrace(struct probe *p)
{
	struct vt_caps_feature *heap = feat(p, VT_CAPS_HEAP_PTRACE), *prof = feat(p, VT_CAPS_PROFILE_PTRACE);
	const struct vt_host_caps *h = &p->r->host;

	check_seize(p, prof);
	*heap = *prof;
	heap->id = VT_CAPS_HEAP_PTRACE;
	if (heap->status != VT_CAPS_WORKS || allocator_unsupported(p, heap, false))
		return;
	/* A call into a thread with a seccomp filter suspends the filter meanwhile. */
	if (p->t->seccomp == 2 && (!vt_cap_has(h->self.cap_eff, VT_CAP_SYS_ADMIN) || h->self.seccomp != 0)) {
		heap->status = VT_CAPS_REFUSED;
		heap->sys_errno = EPERM;
		say(heap->reason, "the process runs under a seccomp filter: a call into it must suspend the "
		    "filter (PTRACE_O_SUSPEND_SECCOMP), which needs CAP_SYS_ADMIN%s",
		    h->self.seccomp != 0 ? " and vitals itself without seccomp" : "");
		say(heap->grant, "run vitals as root outside any seccomp filter, or start the target with "
		    "the agent (LD_PRELOAD=%s)", p->opts->agent_path ? p->opts->agent_path : "libvitals-agent.so");
	}
}

/* ---- threads' wchan and syscall ------------------------------------------------- */

static void check_threads(struct probe *p)
{
	struct vt_caps_feature *f = feat(p, VT_CAPS_THREADS_WCHAN);
	char name[48];
	int e;

	snprintf(name, sizeof(name), "task/%d/syscall", (int)p->pid);
	e = try_read(p, name);
	say(f->how, "read /proc/%d/%s (wchan reads \"0\" where syscall is refused)", (int)p->pid, name);
	if (!e) {
		works(f);
	} else if (denied(e)) {
		f->sys_errno = e;
		vt_caps_explain_ptrace(&p->r->host, p->t, true, "syscall", f);
	} else {
		f->sys_errno = e;
		unknown(f, strerror(e));
	}
}

/* ---- perf events ---------------------------------------------------------- */

static void check_perf(struct probe *p)
{
	struct vt_caps_feature *f = feat(p, VT_CAPS_PROFILE_PERF);
	const struct vt_host_caps *h = &p->r->host;
	char grant[VT_CAPS_TEXT];
	int e = vt_perf_probe(p->pid, true), eu;

	say(f->how, "perf_event_open of a disabled software cpu-clock event on thread %d, closed at once",
	    (int)p->pid);
	if (!e) {
		works(f);
		return;
	}
	if (e == ENOSYS || e == ENOENT || e == EOPNOTSUPP || e == ENODEV) {
		f->sys_errno = e;
		not_applicable(f, NULL, "this kernel has no cpu-clock perf events (%s): vitals profile uses ptrace",
			       strerror(e));
		return;
	}
	if (!denied(e)) {
		f->sys_errno = e;
		unknown(f, strerror(e));
		return;
	}
	eu = vt_perf_probe(p->pid, false);
	if (!eu) {
		works(f);
		append(f->how, "; with kernel samples: %s", strerror(e));
		say(f->reason, "user space only: kernel.perf_event_paranoid is %ld, so time in system "
		    "calls and the kernel is not sampled (profile takes it from /proc)", h->perf_event_paranoid);
		if (h->self.caps_known && !vt_cap_has(h->self.cap_bnd, VT_CAP_PERFMON))
			snprintf(grant, sizeof(grant), "sudo sysctl kernel.perf_event_paranoid=1");
		else
			snprintf(grant, sizeof(grant), "sudo sysctl kernel.perf_event_paranoid=1, or sudo setcap "
				 "cap_perfmon+ep \"$(command -v vitals)\"");
		say(f->grant, "%s", grant);
		return;
	}
	vt_caps_explain_perf(h, p->t, eu, f);
}

/* ---- the agent ---------------------------------------------------------- */

/*
 * The agent's directory in the target's /tmp exists but is not the
 * target's own, mode 700 (another user created it first): the agent
 * refuses to serve from it.  Says so in f; false when that is not why.
 */
static bool agent_dir_taken(struct probe *p, struct vt_caps_feature *f)
{
	char dir[512];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/%d/root" VT_AGENT_DIR_FMT, p->pfs->proc_root, (int)p->pid,
		 (unsigned)p->t->uid_eff);
	if (lstat(dir, &st) < 0 || (S_ISDIR(st.st_mode) && st.st_uid == (uid_t)p->t->uid_eff &&
				    (st.st_mode & 077) == 0))
		return false;
	f->status = VT_CAPS_REFUSED;
	say(f->reason, "the agent's directory " VT_AGENT_DIR_FMT " is not the target's own (owner %u, "
	    "mode %03o; it wants uid %ld, mode 700): another user may have created it, and the agent "
	    "will not serve from it", (unsigned)p->t->uid_eff, (unsigned)st.st_uid,
	    (unsigned)(st.st_mode & 0777), p->t->uid_eff);
	say(f->grant, "remove " VT_AGENT_DIR_FMT " and restart the target, or start it with an "
	    "XDG_RUNTIME_DIR of its own", (unsigned)p->t->uid_eff);
	return true;
}

static void check_agent(struct probe *p)
{
	struct vt_caps_feature *f = feat(p, VT_CAPS_HEAP_AGENT);
	const char *lib = p->opts->agent_path ? p->opts->agent_path : "libvitals-agent.so";
	struct vt_agent_reply reply;
	struct vt_err e;
	char path[512], start[600];
	int rc;

	snprintf(start, sizeof(start), "start the target with LD_PRELOAD=%s", lib);
	if (allocator_unsupported(p, f, true))
		return;
	rc = vt_agent_find(p->pfs, p->pid, (uid_t)p->t->uid_eff, path, sizeof(path));
	say(f->how, "looked for the agent's socket (%s)", path[0] ? path : "none");
	if (rc == VT_E_NOTFOUND) {
		if (p->t->agent_mapped && agent_dir_taken(p, f))
			return;
		if (p->t->agent_mapped) {
			f->status = VT_CAPS_REFUSED;
			say(f->reason, "libvitals-agent.so is loaded but no socket of it was found (looked for '%s')",
			    path);
			say(f->grant, "the target needs a writable XDG_RUNTIME_DIR or /tmp for the socket; "
			    "see the agent's log (VITALS_AGENT_DEBUG=1 at its start)");
		} else {
			not_applicable(f, start, "no agent in the process (libvitals-agent.so is %s its maps)",
				       p->maps_ok ? "not in" : "not known to be in");
		}
		return;
	}
	if (rc == VT_E_PERM) {
		f->status = VT_CAPS_REFUSED;
		f->sys_errno = EACCES;
		say(f->reason, "cannot enter the process's directories to find its socket ('%s')", path);
		say(f->grant, "run vitals as the target's user (uid %ld) or as root; in a container, run "
		    "vitals inside it (docker exec) so its /tmp is vitals' own", p->t->uid_eff);
		return;
	}
	if (rc != VT_OK) {
		unknown(f, "the process exited while its agent was looked for");
		return;
	}
	rc = vt_agent_query(path, p->pid, false, AGENT_TIMEOUT_MS, &reply, &e);
	say(f->how, "asked the agent at %s for its heap figures (read-only)", path);
	if (rc == VT_OK) {
		works(f);
		say(f->reason, "agent protocol %d, glibc %s", reply.version, reply.glibc);
	} else {
		f->status = VT_CAPS_REFUSED;
		f->sys_errno = e.sys_errno;
		say(f->reason, "%s", e.msg);
		say(f->grant, "%s", e.hint[0] ? e.hint : "run vitals as the target's user or as root (the "
		    "agent serves only them)");
	}
	vt_agent_reply_release(&reply);
}

/* ---- census: one page of memory, its pagemap entry ---------------------------- */

static const struct vt_region *readable_region(const struct vt_region_list *maps)
{
	size_t i;

	for (i = 0; i < maps->n; i++) {
		const struct vt_region *r = &maps->v[i];
		if (r->perms[0] == 'r' && r->end > r->start && strcmp(r->path, "[vvar]") &&
		    strcmp(r->path, "[vvar_vclock]") && strcmp(r->path, "[vsyscall]"))
			return r;
	}
	return NULL;
}

static void check_census(struct probe *p)
{
	struct vt_caps_feature *f = feat(p, VT_CAPS_CENSUS);
	long page = p->pfs->page_size > 0 ? p->pfs->page_size : 4096;
	const struct vt_region *r;
	struct vt_err e;
	uint64_t entry = 0;
	char *one;
	int fd, rc;

	if (allocator_unsupported(p, f, true))
		return;
	if (!p->maps_ok) {
		/* The kernel checks access before the address: a read at 0 says EPERM, or EFAULT. */
		rc = vt_mem_read(p->pid, 0, &entry, 1, &e);
		say(f->how, "process_vm_readv at address 0 (its mappings are unknown)");
		f->sys_errno = e.sys_errno;
		if (rc == VT_E_PERM)
			vt_caps_explain_ptrace(&p->r->host, p->t, true, "process_vm_readv", f);
		else
			unknown(f, "its memory may be read, but its mappings could not be");
		return;
	}
	if (!(r = readable_region(&p->maps))) {
		unknown(f, "no readable mapping to try");
		return;
	}
	if (!(one = malloc((size_t)page))) {
		unknown(f, "out of memory");
		return;
	}
	rc = vt_mem_read(p->pid, r->start, one, (size_t)page, &e);
	free(one);
	say(f->how, "process_vm_readv of the page at 0x%llx", (unsigned long long)r->start);
	if (rc == VT_E_PERM) {
		f->sys_errno = e.sys_errno;
		vt_caps_explain_ptrace(&p->r->host, p->t, true, "process_vm_readv", f);
		return;
	}
	if (rc) {
		f->sys_errno = e.sys_errno;
		unknown(f, e.msg);
		return;
	}
	fd = openat(p->fd, "pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, &entry, sizeof(entry), (off_t)(r->start / (uint64_t)page * sizeof(entry))) !=
			      (ssize_t)sizeof(entry)) {
		int err_no = errno;
		if (fd >= 0)
			close(fd);
		f->sys_errno = err_no;
		append(f->how, ", and its /proc/%d/pagemap entry", (int)p->pid);
		if (denied(err_no))
			vt_caps_explain_ptrace(&p->r->host, p->t, false, "pagemap", f);
		else
			unknown(f, strerror(err_no));
		return;
	}
	close(fd);
	append(f->how, ", and its /proc/%d/pagemap entry", (int)p->pid);
	works(f);
	/* bit 63 present, 62 swapped, 0-54 the frame number (zero without CAP_SYS_ADMIN) */
	if ((entry >> 63) & 1)
		say(f->reason, "%s", (entry & ((UINT64_C(1) << 55) - 1))
		    ? "pagemap shows physical frame numbers too (CAP_SYS_ADMIN); the census needs only the present bits"
		    : "pagemap's present and swapped bits are read; frame numbers read as 0 without "
		      "CAP_SYS_ADMIN, which the census does not need");
}

/* ---- the whole ------------------------------------------------------------- */

static void init_features(struct vt_caps_report *r)
{
	int i;

	for (i = 0; i < VT_CAPS__FEATURES; i++) {
		memset(&r->features[i], 0, sizeof(r->features[i]));
		r->features[i].id = (enum vt_caps_feature_id)i;
		r->features[i].status = VT_CAPS_UNKNOWN;
	}
}

/* /proc/PID exists but cannot be entered: hidepid=1 (or noaccess). */
static void hidden(struct vt_caps_report *r, pid_t pid)
{
	const struct vt_host_caps *h = &r->host;
	int i;

	for (i = 0; i < VT_CAPS__FEATURES; i++) {
		struct vt_caps_feature *f = &r->features[i];
		f->status = VT_CAPS_REFUSED;
		f->sys_errno = EACCES;
		say(f->how, "opened /proc/%d", (int)pid);
		say(f->reason, "/proc/%d cannot be entered: /proc is mounted with hidepid=%s", (int)pid,
		    h->hidepid[0] ? h->hidepid : "1");
		say(f->grant, "run vitals as the target's user or as root%s, or remount /proc with "
		    "hidepid=0 (sudo mount -o remount,hidepid=0 /proc)",
		    h->hidepid_gid >= 0 ? ", or add vitals' user to the proc mount's gid= group" : "");
	}
}

int vt_caps_take(const struct vt_procfs *pfs, pid_t pid, const struct vt_caps_opts *opts,
		 struct vt_caps_report *out, struct vt_err *err)
{
	static const struct vt_caps_opts no_opts;
	struct probe p = { pfs, opts ? opts : &no_opts, out, &out->target, pid, -1, VT_BUF_INIT(VT_PROC_FILE_MAX) };
	int rc, i;

	memset(out, 0, sizeof(*out));
	vt_host_caps_read(pfs, &out->host);
	vt_caps_describe_host(out);
	out->live = pfs->live;
	if (pid <= 0)
		return VT_OK;
	init_features(out);
	out->target.pid = pid;
	rc = vt_pid_open(pfs, pid, &p.fd, err);
	if (rc == VT_E_PERM) {
		out->has_target = true;
		hidden(out, pid);
		return VT_OK;
	}
	if (rc)
		goto out;
	if ((rc = read_target(&p, err)))
		goto out;
	out->has_target = true;
	check_snap(&p);
	read_allocator(&p);
	if (pfs->live) {
		check_ptrace(&p);
		check_threads(&p);
		check_perf(&p);
		check_agent(&p);
		check_census(&p);
	} else {
		check_threads(&p);
		for (i = 0; i < VT_CAPS__FEATURES; i++)
			if (out->features[i].status == VT_CAPS_UNKNOWN && !out->features[i].reason[0])
				say(out->features[i].reason, "not tried: a recorded /proc tree");
	}
	if (vt_target_exited(p.fd, pid, &p.buf))
		rc = vt_err_set(err, VT_E_GONE, ESRCH, "process %d exited while vitals was checking it", (int)pid);
out:
	if (p.fd >= 0)
		close(p.fd);
	vt_buf_release(&p.buf);
	vt_region_list_release(&p.maps);
	return rc;
}

bool vt_caps_partial(const struct vt_caps_report *r)
{
	int i;

	if (!r->has_target)
		return false;
	for (i = 0; i < VT_CAPS__FEATURES; i++)
		if (r->features[i].status == VT_CAPS_REFUSED)
			return true;
	return false;
}
