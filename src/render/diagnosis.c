/*
 * diagnosis.c — the thread diagnosis in words (see threads.h): each
 * finding's evidence from the figures its rule kept, and the findings as
 * text lines and as a JSON array.  vitals threads and the soak's thread
 * view (text, JSON, HTML) all print these.
 */
#include "render/json.h"
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

		w = snprintf(buf + used, cap - used, "%s thread %d (%s) %.0f%% of %u samples%s%s%s%s",
			     k ? ";" : "", (int)t->tid, t->comm, 100 * f->io.t[k].d_share, f->io.t[k].samples,
			     t->wchan[0] ? ", in " : "", t->wchan, t->syscall[0] ? ", syscall " : "", t->syscall);
		used += w > 0 ? (size_t)w : 0;
	}
	if (f->io.blocked > f->io.shown && used < cap)
		snprintf(buf + used, cap - used, "; %zu more", f->io.blocked - f->io.shown);
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
		snprintf(buf, cap, "%.2f threads runnable on average for %.2f usable cores; %.2f thread-seconds "
			 "per second waited on a run queue; nonvoluntary switches %.0f/s > voluntary %.0f/s",
			 f->contention.runnable, f->contention.usable_cores, f->contention.runq_per_s,
			 f->contention.nonvol_per_s, f->contention.vol_per_s);
		break;
	case VT_DIAG_CONVOY:
		snprintf(buf, cap, "%zu x %s: %.2f-%.2f cores each (near-equal); in futex wait in %.0f%% of "
			 "their samples, %.0f%% of their time off a CPU; %.0f voluntary switches/s each on "
			 "average", f->convoy.members, f->convoy.pool, f->convoy.min_cores,
			 f->convoy.max_cores, 100 * f->convoy.futex_share, 100 * f->convoy.futex_off_cpu_share,
			 f->convoy.vol_per_s);
		break;
	case VT_DIAG_BUSY_POLL:
		snprintf(buf, cap, "thread %d (%s) wakes %.0f times/s and uses %.1f µs of CPU per wakeup "
			 "(%.3f cores); sleeping in %s", (int)f->busy_poll.t.tid, f->busy_poll.t.comm,
			 f->busy_poll.wakeups_per_s, f->busy_poll.cpu_us, f->busy_poll.cores,
			 f->busy_poll.t.wchan[0] ? f->busy_poll.t.wchan
			 : f->busy_poll.wchan_ok ? "-" : "(wchan not readable)");
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
	case VT_DIAG_NONE:
	default:
		snprintf(buf, cap, "no rule's conditions all held (idle, blocked on I/O, CPU throttled, core "
			 "contention, lock convoy, busy poll)");
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

	for (i = 0; d && i < d->n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:o}", "pattern", vt_diag_name(d->f[i].kind), "evidence",
						     vt_json_text(vt_render_diag_evidence(&d->f[i], ev, sizeof(ev)))));
	return arr;
}
