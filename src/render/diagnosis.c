/*
 * diagnosis.c — the thread diagnosis in words (see threads.h): each
 * finding's evidence from the figures its rule kept, and the findings as
 * text lines and as a JSON array.  vitals threads and the soak's thread
 * view (text, JSON, HTML) all print these.
 */
#include "render/json.h"
#include "render/locks.h"
#include "render/table.h"
#include "render/threads.h"

#include <stdio.h>

/* "; thread 11 (writer-0) 80% of 50 samples, in folio_wait_bit, syscall fsync" and so on. */
static void io_evidence(const struct vt_diag_finding *f, char *buf, size_t cap)
{
	size_t used, k;
	int w;

	w = snprintf(buf, cap, "in uninterruptible sleep (state D, usually disk or network file system I/O):");
	used = w > 0 ? (size_t)w : 0;
	for (k = 0; k < f->io.shown && used < cap; k++) {
		const struct vt_diag_thread *t = &f->io.t[k].t;

		w = snprintf(buf + used, cap - used, "%s thread %d (%s) %.0f%% of %u sample%s%s%s%s%s",
			     k ? ";" : "", (int)t->tid, t->comm, 100 * f->io.t[k].d_share, f->io.t[k].samples,
			     f->io.t[k].samples == 1 ? "" : "s",
			     t->wchan[0] ? ", in " : "", t->wchan, t->syscall[0] ? ", syscall " : "", t->syscall);
		used += w > 0 ? (size_t)w : 0;
	}
	if (f->io.blocked > f->io.shown && used < cap)
		snprintf(buf + used, cap - used, "; %zu more", f->io.blocked - f->io.shown);
}

static void stopped_evidence(const struct vt_diag_finding *f, char *buf, size_t cap)
{
	char who[48];

	if (f->stopped.threads == 1)
		snprintf(who, sizeof(who), "its one thread was");
	else
		snprintf(who, sizeof(who), "all %zu threads were", f->stopped.threads);
	snprintf(buf, cap, "%s stopped (state T) in %.0f%% of %u thread samples: a SIGSTOP, Ctrl-Z "
		 "(SIGTSTP) or a debugger holds it; it runs again only on SIGCONT (or when the debugger "
		 "lets go)", who, 100 * f->stopped.share, f->stopped.samples);
}

static void contention_evidence(const struct vt_diag_finding *f, char *buf, size_t cap)
{
	char own[96] = "";

	if (f->contention.own_runq_per_s >= 0)
		snprintf(own, sizeof(own), ", %.2f of it behind its own threads",
			 f->contention.own_runq_per_s);
	snprintf(buf, cap, "its threads want %.2f CPUs (each one's CPU over its time not queued) for "
		 "%.2f usable cores; %.2f threads runnable on average, %.2f thread-seconds per second "
		 "waited on a run queue%s; nonvoluntary switches %.0f/s > voluntary %.0f/s",
		 f->contention.demand, f->contention.usable_cores, f->contention.runnable,
		 f->contention.runq_per_s, own, f->contention.nonvol_per_s, f->contention.vol_per_s);
}

static void host_busy_evidence(const struct vt_diag_finding *f, char *buf, size_t cap)
{
	char load[48] = "", some[64] = "";

	if (f->host_busy.load1 >= 0)
		snprintf(load, sizeof(load), "; host load %.2f on %d CPUs", f->host_busy.load1,
			 f->host_busy.host_ncpu);
	if (f->host_busy.cpu_some >= 0)
		snprintf(some, sizeof(some), "; some task waited for a CPU %.0f%% of the time",
			 100 * f->host_busy.cpu_some);
	snprintf(buf, cap, "its threads waited for a CPU %.2f thread-seconds per second, %.2f of it "
		 "behind other processes' tasks (%.1f of them runnable on average beside its %.2f)%s%s; "
		 "it used %.2f cores", f->host_busy.runq_per_s,
		 f->host_busy.host_runq_per_s, f->host_busy.others_runnable, f->host_busy.own_runnable,
		 load, some, f->host_busy.cores);
}

/* "poll_schedule_timeout, syscall poll" — where the thread was seen sleeping. */
static void sleeps_in(const struct vt_diag_finding *f, char *buf, size_t cap)
{
	const struct vt_diag_thread *t = &f->wake.t;

	snprintf(buf, cap, "%s%s%s", t->wchan[0] ? t->wchan : f->wake.wchan_ok ? "-" : "(wchan not readable)",
		 t->syscall[0] ? ", syscall " : "", t->syscall);
}

/* Why a thread that wakes often is a poller, a server, or cannot be told. */
static void wake_why(const struct vt_diag_finding *f, const char *where, char *buf, size_t cap)
{
	double per = f->wake.io_calls_per_s / f->wake.wakeups_per_s;
	int n;

	switch (f->wake.wait) {
	case VT_WAIT_TIMER:
		snprintf(buf, cap, "sleeping in %s: a timer wakes it, not work", where);
		break;
	case VT_WAIT_TIMEOUT:
		snprintf(buf, cap, "sleeping in %s with a %lld ms timeout (the median seen), which accounts for the wakeups: "
			 "it wakes on the timeout and finds nothing to do", where, (long long)f->wake.timeout_ms);
		break;
	case VT_WAIT_DATA:
		if (f->wake.timeout_ms > 0)
			snprintf(buf, cap, "in %s, woken far more often than its %lld ms timeout (the median seen): by data or "
				 "connections", where, (long long)f->wake.timeout_ms);
		else
			snprintf(buf, cap, "in %s: woken by data or connections", where);
		break;
	case VT_WAIT_POLL:
		if (!f->wake.io_known)
			snprintf(buf, cap, "in %s; its timeout and the process's I/O counters cannot be read", where);
		else
			snprintf(buf, cap, "in %s (timeout not readable); the process made %.0f read/write calls/s, "
				 "%.2f per wakeup", where, f->wake.io_calls_per_s, per);
		break;
	case VT_WAIT_UNKNOWN:
	default:
		if (!f->wake.wchan_ok && !f->wake.syscall_ok)
			n = snprintf(buf, cap, "its wchan and system call cannot be read (ptrace access needed)");
		else if (!f->wake.t.wchan[0] && !f->wake.t.syscall[0])
			n = snprintf(buf, cap, "its waits were too short to be seen (asleep in %u of %u sample%s)",
				     f->wake.asleep, f->wake.samples, f->wake.samples == 1 ? "" : "s");
		else
			n = snprintf(buf, cap, "in %s, a wait vitals does not classify", where);
		if (f->kind == VT_DIAG_SERVING && n >= 0 && (size_t)n < cap)
			snprintf(buf + n, cap - (size_t)n, "; the process made %.0f read/write calls/s, %.2f per "
				 "wakeup: woken by work", f->wake.io_calls_per_s, per);
	}
}

static void wake_evidence(const struct vt_diag_finding *f, char *buf, size_t cap)
{
	char where[128], why[320], many[64] = "";

	sleeps_in(f, where, sizeof(where));
	wake_why(f, where, why, sizeof(why));
	if (f->kind == VT_DIAG_SERVING && f->wake.threads > 1)
		snprintf(many, sizeof(many), "%zu threads woken by work, the busiest: ", f->wake.threads);
	snprintf(buf, cap, "%s%sthread %d (%s) wakes %.0f times/s and uses %.1f µs of CPU per wakeup "
		 "(%.3f cores); %s", f->kind == VT_DIAG_WAKEUPS ? "cannot tell a busy poll from serving yet: " : "",
		 many, (int)f->wake.t.tid, f->wake.t.comm, f->wake.wakeups_per_s, f->wake.cpu_us, f->wake.cores, why);
}

/* A convoy: its lock first when the locks were read (what, kind, waiters, holder, call site). */
static void convoy_evidence(const struct vt_diag_finding *f, char *buf, size_t cap)
{
	const struct vt_lock *k = f->convoy.lock;
	size_t len = 0;
	int n;

	if (k) {
		char what[256], holders[384], site[256];

		n = snprintf(buf, cap, "on %s, a %s (%.0f%% of their lock waits): %.2f threads waiting on "
			     "average, held by %s; taken at %s; ",
			     vt_render_lock_what(k, what, sizeof(what)), vt_lock_kind_name(k->kind),
			     100 * f->convoy.lock_share, f->convoy.lock_waiting,
			     vt_render_lock_holders(k, 3, holders, sizeof(holders)),
			     k->nsites ? vt_text_printable(k->sites[0].where, site, sizeof(site)) : "a site not read");
		len = n > 0 && (size_t)n < cap ? (size_t)n : 0;
	}
	snprintf(buf + len, cap - len, "%zu x %s: %.2f-%.2f cores each (near-equal); in futex wait in %.0f%% of "
		 "their samples, %.0f%% of those they slept in; %.0f voluntary switches/s each on "
		 "average", f->convoy.members, f->convoy.pool, f->convoy.min_cores,
		 f->convoy.max_cores, 100 * f->convoy.futex_share, 100 * f->convoy.futex_sleep_share,
		 f->convoy.vol_per_s);
}

const char *vt_render_diag_evidence(const struct vt_diag_finding *f, char *buf, size_t cap)
{
	if (!cap)
		return buf;
	switch (f->kind) {
	case VT_DIAG_IDLE:
		snprintf(buf, cap, "the process used %.4f cores (%.1f ms of CPU) over %.2f s",
			 f->idle.cores, f->idle.cpu_s * 1e3, f->idle.interval_s);
		break;
	case VT_DIAG_CONTENTION:
		contention_evidence(f, buf, cap);
		break;
	case VT_DIAG_HOST_BUSY:
		host_busy_evidence(f, buf, cap);
		break;
	case VT_DIAG_CONVOY:
		convoy_evidence(f, buf, cap);
		break;
	case VT_DIAG_BUSY_POLL:
	case VT_DIAG_SERVING:
	case VT_DIAG_WAKEUPS:
		wake_evidence(f, buf, cap);
		break;
	case VT_DIAG_IO:
		io_evidence(f, buf, cap);
		break;
	case VT_DIAG_THROTTLED:
		snprintf(buf, cap, "its cgroup's quota of %.2f cores (%.80s) throttled it in %llu of %llu "
			 "periods, %.2f s held back over %.2f s; it used %.2f cores", f->throttled.quota_cores,
			 f->throttled.quota_dir[0] ? f->throttled.quota_dir : "?",
			 (unsigned long long)f->throttled.throttled_periods,
			 (unsigned long long)f->throttled.periods, f->throttled.throttled_s,
			 f->throttled.interval_s, f->throttled.cores);
		break;
	case VT_DIAG_ACCEPT_STALL: {
		char backlog[32] = "";

		if (f->stall.recorded) {
			snprintf(buf, cap, "%zu accept-queue stall%s, %.1f s in all: connections waited for "
				 "accept() that nothing took (listed below); the threads were not idle but "
				 "stuck", f->stall.recorded, f->stall.recorded == 1 ? "" : "s", f->stall.recorded_s);
			break;
		}
		if (f->stall.l.backlog != UINT32_MAX)
			snprintf(backlog, sizeof(backlog), ", backlog %u", f->stall.l.backlog);
		snprintf(buf, cap, "%s had connections waiting for accept() at all %u reads over %.1f s "
			 "(%u to %u waiting%s)%s: it stopped accepting, or accepts slower than they "
			 "arrive; the threads' wchan and system call say which thread should take them", f->stall.l.address, f->stall.reads,
			 f->stall.interval_s, f->stall.l.min_queue, f->stall.l.max_queue, backlog,
			 f->stall.listeners > 1 ? ", and more listeners like it" : "");
		break;
	}
	case VT_DIAG_STOPPED:
		stopped_evidence(f, buf, cap);
		break;
	case VT_DIAG_NONE:
	default:
		snprintf(buf, cap, "no rule's conditions all held (stopped, idle, blocked on I/O, CPU throttled, "
			 "core contention, host busy, lock convoy, busy poll, serving, accept stall)");
	}
	return buf;
}

void vt_render_diagnosis_text(FILE *out, const struct vt_diagnosis *d)
{
	char ev[VT_DIAG_EVIDENCE_MAX];
	size_t i;

	for (i = 0; d && i < d->n; i++) {
		vt_render_diag_evidence(&d->f[i], ev, sizeof(ev));
		vt_text_sanitize(ev);          /* it quotes thread names */
		fprintf(out, "  %s: %s\n", vt_diag_name(d->f[i].kind), ev);
	}
}

json_t *vt_render_diagnosis_json(const struct vt_diagnosis *d)
{
	json_t *arr = json_array();
	char ev[VT_DIAG_EVIDENCE_MAX];
	size_t i;

	for (i = 0; d && i < d->n; i++) {
		const struct vt_diag_finding *f = &d->f[i];
		json_t *o = json_pack("{s:s, s:o}", "pattern", vt_diag_name(f->kind), "evidence",
				      vt_json_text(vt_render_diag_evidence(f, ev, sizeof(ev))));

		/* a convoy's lock, as "address" in the locks member */
		if (o && f->kind == VT_DIAG_CONVOY && f->convoy.lock) {
			char addr[24];

			snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)f->convoy.lock->addr);
			json_object_set_new(o, "lock", json_string(addr));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}
