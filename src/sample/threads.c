/*
 * threads.c — samples of all threads of a process from a thread watch, and
 * tallies of what they were doing (see threads.h).  Reads nothing itself:
 * the watch reads.
 */
#include "sample/threads.h"

#include "base/scan.h"
#include "base/unknown.h"
#include "proc/syscall_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

/* Why a wchan or syscall read gave rc, for the column that shows it. */
static void unavailable(int rc, const char *access, char *why, size_t cap)
{
	if (rc == VT_TW_UNREAD)
		snprintf(why, cap, "not read");
	else if (rc == VT_E_PERM)
		snprintf(why, cap, "needs ptrace %s access", access);
	else if (rc == VT_E_NOTFOUND)
		snprintf(why, cap, "not in this kernel");
	else
		snprintf(why, cap, "%s", vt_code_str(rc));
}

/*
 * The timeout a wait in progress was given, from its arguments: poll's
 * third (int ms), epoll_wait's and epoll_pwait's fourth; negative is none.
 * The waits that take a pointer to a timespec (ppoll, select, futex,
 * epoll_pwait2) would need the target's memory read: unknown.
 */
static int64_t wait_timeout_ms(const char *name, const uint64_t *args)
{
	int32_t ms;

	if (!strcmp(name, "poll"))
		ms = (int32_t)(uint32_t)args[2];
	else if (!strcmp(name, "epoll_wait") || !strcmp(name, "epoll_pwait"))
		ms = (int32_t)(uint32_t)args[3];
	else
		return VT_TIMEOUT_UNKNOWN;
	return ms < 0 ? VT_TIMEOUT_NONE : ms;
}

static void snap_from_counts(const struct vt_thread_counts *c, long clk_tck, struct vt_thread_snap *t)
{
	memset(t, 0, sizeof(*t));
	t->tid = c->tid;
	memcpy(t->comm, c->comm, sizeof(t->comm));
	t->state = c->state;
	t->utime_ticks = c->utime_ticks;
	t->stime_ticks = c->stime_ticks;
	t->start_ticks = c->start_ticks;
	t->processor = c->processor;
	vt_thread_counters_of(c, clk_tck, t->counter);
	t->cpu_schedstat = vt_known(c->run_ns);

	t->wchan_ok = c->wchan_rc == VT_OK;
	if (t->wchan_ok)
		snprintf(t->wchan, sizeof(t->wchan), "%s", c->wchan);
	else
		unavailable(c->wchan_rc, "read", t->wchan_why, sizeof(t->wchan_why));

	t->syscall_ok = c->syscall_rc == VT_OK;
	if (!t->syscall_ok)
		unavailable(c->syscall_rc, "attach", t->syscall_why, sizeof(t->syscall_why));
	else
		vt_syscall_label(c->syscall, t->syscall, sizeof(t->syscall));
	t->timeout_ms = t->syscall_ok ? wait_timeout_ms(t->syscall, c->syscall_args) : VT_TIMEOUT_UNKNOWN;
	if (t->syscall_ok && c->syscall == SYS_futex) {
		t->futex_addr = c->syscall_args[0];
		t->futex_op = (uint32_t)c->syscall_args[1];
	}
	t->sp = c->syscall_sp;
	t->pc = c->syscall_pc;
}

static struct vt_thread_snap *snaps_from_counts(const struct vt_thread_counts *rows, size_t n, long clk_tck)
{
	struct vt_thread_snap *out = calloc(n ? n : 1, sizeof(*out));
	size_t i;

	for (i = 0; out && i < n; i++)
		snap_from_counts(&rows[i], clk_tck, &out[i]);
	return out;
}

int vt_threads_sample_from_watch(const struct vt_thread_watch *w, bool live, struct vt_threads_sample *out,
				 struct vt_err *err)
{
	const struct vt_thread_watch_proc *p = vt_thread_watch_process(w);
	const struct vt_thread_counts *rows, *gone;
	size_t n, ngone;

	memset(out, 0, sizeof(*out));
	rows = vt_thread_watch_rows(w, &n);
	gone = vt_thread_watch_exited(w, &ngone);
	if (live && n == 0)
		return vt_err_set(err, VT_E_GONE, 0, "process %d has no thread left", (int)p->pid);
	if (!live)
		n = 0;
	out->pid = p->pid;
	memcpy(out->comm, p->comm, sizeof(out->comm));
	out->mono_ns = p->mono_ns;
	out->utime_ticks = p->utime_ticks;
	out->stime_ticks = p->stime_ticks;
	out->start_ticks = p->start_ticks;
	out->clk_tck = p->clk_tck > 0 ? p->clk_tck : 100;
	out->threads = snaps_from_counts(rows, n, out->clk_tck);
	out->gone = snaps_from_counts(gone, ngone, out->clk_tck);
	if (!out->threads || !out->gone) {
		vt_threads_sample_release(out);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory sampling threads");
	}
	out->n = n;
	out->ngone = ngone;
	if (live) {
		struct vt_thread_watch_stats st;

		vt_thread_watch_stats(w, &st);
		out->reads = (struct vt_thread_reads){ st.stat_read, st.stat_carried, st.doing_read,
						       st.doing_carried, st.doing_running };
	}
	return VT_OK;
}

void vt_thread_reads_add(struct vt_thread_reads *a, const struct vt_thread_reads *b)
{
	a->stat_read += b->stat_read;
	a->stat_carried += b->stat_carried;
	a->doing_read += b->doing_read;
	a->doing_carried += b->doing_carried;
	a->doing_running += b->doing_running;
}

int vt_threads_sample_take(struct vt_thread_watch *w, unsigned flags,
			   struct vt_threads_sample *out, struct vt_err *err)
{
	struct vt_thread_watch_stats before, after;
	struct vt_err rerr;
	size_t nrows;
	int rc;

	memset(out, 0, sizeof(*out));
	vt_thread_watch_stats(w, &before);
	rc = vt_thread_watch_read(w, flags, &rerr);
	vt_thread_watch_stats(w, &after);
	/*
	 * A read that completed with one thread unreadable is still a sample;
	 * one that could read none, for want of descriptors or memory, is not
	 * a process without threads.
	 */
	if (rc != VT_OK && (after.reads == before.reads ||
			    (vt_code_resource(rerr.sys_errno) && (vt_thread_watch_rows(w, &nrows), nrows == 0)))) {
		if (err)
			*err = rerr;
		return rc;
	}
	return vt_threads_sample_from_watch(w, true, out, err);
}

void vt_threads_sample_release(struct vt_threads_sample *s)
{
	if (!s)
		return;
	free(s->threads);
	free(s->gone);
	s->threads = s->gone = NULL;
	s->n = s->ngone = 0;
}

static const struct vt_thread_snap *snap_find(const struct vt_thread_snap *rows, size_t n, pid_t tid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].tid == tid)
			return &rows[mid];
		if (rows[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct vt_thread_snap *vt_threads_sample_find(const struct vt_threads_sample *s, pid_t tid)
{
	return snap_find(s->threads, s->n, tid);
}

/* ---- tallies ---- */

int vt_state_index(char c)
{
	switch (c) {
	case 'R': return 0;
	case 'S': return 1;
	case 'D': return 2;
	case 'T': case 't': return 3;
	case 'Z': case 'X': return 4;
	case 'I': return 5;
	default: return 6;
	}
}

void vt_name_tally_add(struct vt_name_tally *slots, const char *name)
{
	int i;

	if (!*name)
		return;
	for (i = 0; i < VT_WCHAN_SLOTS; i++) {
		if (slots[i].count && !strcmp(slots[i].name, name)) {
			slots[i].count++;
			return;
		}
		if (!slots[i].count) {
			vt_copy_str(slots[i].name, sizeof(slots[i].name), name, strlen(name));
			slots[i].count = 1;
			return;
		}
	}
}

bool vt_name_tally_top(const struct vt_name_tally *slots, char *out, size_t cap,
		       unsigned *count)
{
	const struct vt_name_tally *top = NULL;
	int i;

	for (i = 0; i < VT_WCHAN_SLOTS; i++)
		if (slots[i].count && (!top || slots[i].count > top->count))
			top = &slots[i];
	if (!top)
		return false;
	vt_copy_str(out, cap, top->name, strlen(top->name));
	*count = top->count;
	return true;
}

void vt_timeout_tally_add(struct vt_timeout_tally *t, int64_t ms)
{
	int k = 0;

	if (ms < 0)
		return;
	while (k < VT_TIMEOUT_OCTAVES - 1 && ms >= (int64_t)1 << k)
		k++;
	t->n[k]++;
	t->sum_ms[k] += ms;
}

int64_t vt_timeout_tally_median(const struct vt_timeout_tally *t)
{
	uint64_t total = 0, below = 0;
	int k;

	for (k = 0; k < VT_TIMEOUT_OCTAVES; k++)
		total += t->n[k];
	if (!total)
		return -1;
	for (k = 0; k < VT_TIMEOUT_OCTAVES; k++) {
		below += t->n[k];
		if (2 * below >= total)
			break;
	}
	return t->sum_ms[k] / t->n[k];
}

void vt_thread_tally_add(struct vt_thread_tally *t, const struct vt_thread_snap *s)
{
	if (!t->seen) {
		t->tid = s->tid;
		t->start_ticks = s->start_ticks;
	}
	t->seen++;
	t->states[vt_state_index(s->state)]++;
	if (s->wchan_ok)
		vt_name_tally_add(t->wchans, s->wchan);
	if (s->syscall_ok)
		vt_name_tally_add(t->calls, s->syscall);
	if (!s->syscall_ok || s->timeout_ms == VT_TIMEOUT_UNKNOWN)
		return;
	if (s->timeout_ms == VT_TIMEOUT_NONE) {
		t->untimed++;
	} else {
		vt_timeout_tally_add(&t->timeouts, s->timeout_ms);
		t->timed++;
	}
}

void vt_thread_tally_doing(const struct vt_thread_tally *t, struct vt_thread_doing *out)
{
	memset(out, 0, sizeof(*out));
	out->seen = t->seen;
	out->n_r = t->states[VT_STATE_R];
	out->n_s = t->states[VT_STATE_S];
	out->n_d = t->states[VT_STATE_D];
	vt_name_tally_top(t->wchans, out->wchan, sizeof(out->wchan), &out->wchan_n);
	vt_name_tally_top(t->calls, out->syscall, sizeof(out->syscall), &out->syscall_n);
	out->timed = t->timed;
	out->untimed = t->untimed;
	out->timeout_ms = vt_timeout_tally_median(&t->timeouts);
}

const struct vt_thread_tally *vt_thread_tallies_find(const struct vt_thread_tallies *set, pid_t tid,
						     uint64_t start_ticks)
{
	size_t lo = 0, hi = set->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->t[mid].tid == tid)
			return set->t[mid].start_ticks == start_ticks ? &set->t[mid] : NULL;
		if (set->t[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int vt_thread_tallies_count(struct vt_thread_tallies *set, const struct vt_threads_sample *s,
			    struct vt_err *err)
{
	struct vt_thread_tally *next = calloc(s->n ? s->n : 1, sizeof(*next));
	size_t i;

	if (!next)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	for (i = 0; i < s->n; i++) {
		const struct vt_thread_tally *old = vt_thread_tallies_find(set, s->threads[i].tid,
									  s->threads[i].start_ticks);

		if (old)
			next[i] = *old;
		vt_thread_tally_add(&next[i], &s->threads[i]);
	}
	free(set->t);
	set->t = next;
	set->n = s->n;
	return VT_OK;
}

void vt_thread_tallies_release(struct vt_thread_tallies *set)
{
	free(set->t);
	set->t = NULL;
	set->n = 0;
}
