/*
 * locks_text.c — the locks table and each lock's account, in words.
 */
#include "render/locks.h"
#include "render/table.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

double vt_lock_waiting(const struct vt_locks *l, const struct vt_lock *k)
{
	return l->samples ? (double)k->waits / l->samples : 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

const char *vt_render_lock_what(const struct vt_lock *k, char *buf, size_t cap)
{
	char text[200];

	switch (k->place) {
	case VT_LOCK_AT_ARENA:
		if (k->arena == 0)
			snprintf(buf, cap, "glibc malloc arena 0 of %u (main_arena)", k->narenas);
		else
			snprintf(buf, cap, "glibc malloc arena %u of %u", k->arena, k->narenas);
		break;
	case VT_LOCK_AT_SYMBOL: {
		char module[64];

		/* both are the target's: a symbol or a file name may hold any bytes */
		snprintf(text, sizeof(text), "%s", k->symbol);
		vt_text_sanitize(text);
		snprintf(module, sizeof(module), "%s", k->module);
		vt_text_sanitize(module);
		if (k->python_gil)
			snprintf(buf, cap, "the Python GIL (%s+0x%llx in %s)", text,
				 (unsigned long long)k->symbol_off, module);
		else if (k->symbol_off)
			snprintf(buf, cap, "%s+0x%llx (%s)", text, (unsigned long long)k->symbol_off, module);
		else
			snprintf(buf, cap, "%s (%s)", text, module);
		break;
	}
	case VT_LOCK_AT_STACK:
		snprintf(buf, cap, "on thread %d's stack", (int)k->stack_tid);
		break;
	case VT_LOCK_AT_SHARED:
		snprintf(text, sizeof(text), "%s", k->mapping[0] ? k->mapping : "anonymous shared memory");
		vt_text_sanitize(text);
		snprintf(buf, cap, "memory shared with other processes (%s)", text);
		break;
	case VT_LOCK_AT_FILE:
		if (k->module[0]) {
			/* where in the file: addr2line or gdb on it names the variable */
			snprintf(text, sizeof(text), "%s", k->module);
			vt_text_sanitize(text);
			snprintf(buf, cap, "%s+0x%llx (static data, no symbol)", text,
				 (unsigned long long)k->symbol_off);
			break;
		}
		snprintf(text, sizeof(text), "%s", k->mapping);
		vt_text_sanitize(text);
		snprintf(buf, cap, "in %s's data, no symbol", text);
		break;
	case VT_LOCK_AT_HEAP:
		if (k->chunk)
			snprintf(buf, cap, "a heap object: %llu-byte chunk, +0x%llx",
				 (unsigned long long)k->chunk_size,
				 (unsigned long long)(k->addr - k->chunk >= 16 ? k->addr - k->chunk - 16 : 0));
		else
			snprintf(buf, cap, "%s", !strcmp(k->mapping, "[heap]") ? "a heap object ([heap])"
						 : "a heap object (anonymous memory: an arena heap or a mapping)");
		break;
	default:
		snprintf(buf, cap, "unmapped when looked at (freed, or the process exited)");
	}
	return buf;
}

const char *vt_render_lock_meaning(const struct vt_lock *k, char *buf, size_t cap)
{
	if (k->place == VT_LOCK_AT_ARENA)
		snprintf(buf, cap, "allocator contention: threads wait for a malloc arena's lock; "
			 "MALLOC_ARENA_MAX is the lever (more arenas), or fewer allocating threads");
	else if (k->python_gil)
		snprintf(buf, cap, "Python threads wait for the GIL: one runs Python code at a time, "
			 "more threads add no CPU");
	else if (k->kind == VT_LOCK_LIBC)
		snprintf(buf, cap, "a lock inside glibc that is no malloc arena's (stdio, the loader, ...): "
			 "see the call sites");
	else if (k->place == VT_LOCK_AT_SHARED && vt_lock_kind_contended(k->kind))
		snprintf(buf, cap, "contention on a lock shared with other processes");
	else if (vt_lock_kind_contended(k->kind))
		snprintf(buf, cap, "contention on an application lock: the holder's critical section is "
			 "what the waiters wait for");
	else if (k->kind == VT_LOCK_RAW)
		snprintf(buf, cap, "a futex no glibc primitive known here waits on: its kind cannot be told, "
			 "so neither contention nor idleness is said");
	else
		snprintf(buf, cap, "threads waiting to be woken (for work or an event): not contention");
	return buf;
}

const char *vt_render_lock_holders(const struct vt_lock *k, size_t max, char *buf, size_t cap)
{
	/* one thread past max is named rather than counted as "1 others" */
	size_t len = 0, i, shown = max && max + 1 < k->nholders ? max : k->nholders;
	unsigned rest = 0;
	char comm[64];

	buf[0] = '\0';
	if (!k->owner_reads) {
		snprintf(buf, cap, "not known: %s", k->holder_why[0] ? k->holder_why
						   : k->layout_why[0] ? k->layout_why : "its owner was not read");
		return buf;
	}
	for (i = shown; i < k->nholders; i++)
		rest += k->holders[i].n;
	for (i = 0; i < shown && len < cap; i++) {
		const struct vt_lock_thread *h = &k->holders[i];
		int n = snprintf(buf + len, cap - len, "%s%s (%d) %.0f%%", i ? ", " : "",
				 vt_text_printable(h->comm, comm, sizeof(comm)), (int)h->tid,
				 share(h->n, k->owner_reads));
		if (n > 0)
			len += (size_t)n;
	}
	if (rest && len < cap) {
		int n = snprintf(buf + len, cap - len, ", %zu others %.0f%%", k->nholders - shown,
				 share(rest, k->owner_reads));
		if (n > 0)
			len += (size_t)n;
	}
	if (k->readers && len < cap) {
		int n = snprintf(buf + len, cap - len, "%sreaders %.0f%% (%.1f on average)", len ? ", " : "",
				 share(k->readers, k->owner_reads), (double)k->readers_sum / k->readers);
		if (n > 0)
			len += (size_t)n;
	}
	if (k->owner_foreign && len < cap) {
		int n = snprintf(buf + len, cap - len, "%sa tid of no thread here (%d) %.0f%%", len ? ", " : "",
				 (int)k->foreign_tid, share(k->owner_foreign, k->owner_reads));
		if (n > 0)
			len += (size_t)n;
	}
	if (k->owner_free && len < cap)
		snprintf(buf + len, cap - len, "%sfree when read %.0f%% (a handoff)", len ? ", " : "",
			 share(k->owner_free, k->owner_reads));
	return buf;
}

/* The lock rows in order of waits, most first (ties: first seen). */
static void order(const struct vt_locks *l, size_t *idx)
{
	size_t i, j;

	for (i = 0; i < l->n; i++)
		idx[i] = i;
	for (i = 1; i < l->n; i++)
		for (j = i; j > 0 && l->v[idx[j]].waits > l->v[idx[j - 1]].waits; j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
}

static void lock_account(FILE *out, const struct vt_locks *l, const struct vt_lock *k, size_t nth)
{
	char what[256], text[512], comm[64];
	size_t i;

	fprintf(out, "\nlock %zu: %s, a %s at 0x%llx\n", nth, vt_render_lock_what(k, what, sizeof(what)),
		vt_lock_kind_name(k->kind), (unsigned long long)k->addr);
	fprintf(out, "  waiting    %.2f threads on average (thread-seconds per second), %u at most; "
		"%.0f%% of the process's thread time; in %u of %u samples\n",
		vt_lock_waiting(l, k), k->peak, share(k->waits, l->thread_samples), k->samples, l->samples);
	if (vt_lock_kind_contended(k->kind) || k->owner_reads || k->holder_why[0])
		fprintf(out, "  held by    %s\n", vt_render_lock_holders(k, 0, text, sizeof(text)));
	if (k->nholders) {
		unsigned held = 0, ran = 0;

		for (i = 0; i < k->nholders; i++) {
			held += k->holders[i].n;
			ran += k->holders[i].running;
		}
		/* what the holder was doing: on a CPU is a critical section running; asleep is
		 * a holder blocked while it holds the lock, which every waiter then waits for */
		fprintf(out, "  holder     on a CPU (state R) in %.0f%% of the samples it was read holding it%s\n",
			share(ran, held), ran * 2 < held ? ": asleep or blocked while holding it (I/O, another lock) in the rest" : "");
	}
	if (k->nholder_frames) {
		unsigned all = k->holder_frames_other;

		for (i = 0; i < k->nholder_frames; i++)
			all += k->holder_frames[i].n;
		fprintf(out, "  holder ran");
		for (i = 0; i < k->nholder_frames && i < 3; i++)
			fprintf(out, "%s %s %.0f%%", i ? "," : "", vt_text_printable(k->holder_frames[i].where, text,
										    sizeof(text)),
				share(k->holder_frames[i].n, all));
		fprintf(out, " (the top of its last stack sampled on a CPU)\n");
	}
	fputs("  waiters   ", out);
	for (i = 0; i < k->nwaiters; i++)
		fprintf(out, "%s %s (%d) %.0f%%", i ? "," : "",
			vt_text_printable(k->waiters[i].comm, comm, sizeof(comm)), (int)k->waiters[i].tid,
			share(k->waiters[i].n, l->samples));
	fputs(" of the samples\n", out);
	for (i = 0; i < k->nsites; i++)
		fprintf(out, "  %s %s  %.0f%%\n", i ? "          " : "taken at  ",
			vt_text_printable(k->sites[i].where, text, sizeof(text)), share(k->sites[i].n, k->waits));
	if (k->sites_other)
		fprintf(out, "             other call sites %.0f%%\n", share(k->sites_other, k->waits));
	if (k->sites_unknown)
		fprintf(out, "  %s stack not read %.0f%% (it woke while read, or no stack to read)\n",
			k->nsites ? "          " : "taken at  ", share(k->sites_unknown, k->waits));
	fprintf(out, "  kind       %s: ", vt_lock_kind_name(k->kind));
	if (k->layout_votes && k->layout_votes >= k->kind_votes[k->kind])
		fprintf(out, "from its memory (glibc's sem_t: value 0, waiters counted), the waiters' stacks "
			"passing through glibc functions with no public name (%u of %" PRIu64 ")\n",
			k->layout_votes, k->waits);
	else if (k->kind_votes[k->kind] && k->rust_std)
		fprintf(out, "Rust's std::sync (its slow path in the waiters' stacks: %u of %" PRIu64 " said so)\n",
			k->kind_votes[k->kind], k->waits);
	else if (k->kind_votes[k->kind])
		fprintf(out, "from the waiters' stacks (%u of %" PRIu64 " said so)\n", k->kind_votes[k->kind],
			k->waits);
	else
		fprintf(out, "no waiter's stack named a glibc lock function (or none could be read)\n");
	if (k->place == VT_LOCK_AT_ARENA) {
		fputs("  its users ", out);
		if (k->users_why[0])
			fprintf(out, " not known: %s", k->users_why);
		for (i = 0; !k->users_why[0] && i < k->nusers; i++)
			fprintf(out, "%s %s (%d)", i ? "," : "", vt_text_printable(k->users[i].comm, comm, sizeof(comm)),
				(int)k->users[i].tid);
		if (!k->users_why[0] && !k->nusers)
			fputs(" none of the threads now", out);
		if (k->users_more)
			fprintf(out, " and %u more", k->users_more);
		fputs(" (threads whose glibc thread_arena it is)\n", out);
	}
	if (k->layout_why[0])
		fprintf(out, "  layout     %s\n", k->layout_why);
	if (k->place == VT_LOCK_AT_HEAP && k->chunk)
		fprintf(out, "  chunk      0x%llx, %llu bytes: vitals census %d counts the chunks of this size\n",
			(unsigned long long)k->chunk, (unsigned long long)k->chunk_size, (int)l->pid);
	else if (k->place == VT_LOCK_AT_HEAP && k->chunk_why[0])
		fprintf(out, "  chunk      not found: %s\n", k->chunk_why);
	fprintf(out, "  means      %s\n", vt_render_lock_meaning(k, text, sizeof(text)));
}

void vt_render_locks_table(FILE *out, const struct vt_locks *l, size_t max_locks)
{
	size_t idx[VT_LOCKS_MAX], i, shown;
	struct vt_table t;
	char what[256];

	order(l, idx);
	vt_table_init(&t, 6);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_align(&t, 3, VT_RIGHT);
	vt_table_align(&t, 4, VT_RIGHT);
	vt_table_cell(&t, "LOCK");
	vt_table_cell(&t, "KIND");
	vt_table_cell(&t, "WAITING");
	vt_table_cell(&t, "PEAK");
	vt_table_cell(&t, "SHARE");
	vt_table_cell(&t, "HELD BY");
	shown = max_locks && max_locks < l->n ? max_locks : l->n;
	for (i = 0; i < shown; i++) {
		const struct vt_lock *k = &l->v[idx[i]];
		char holders[512], clipped[256];

		vt_table_cell(&t, "%s", vt_text_clip_middle(vt_render_lock_what(k, what, sizeof(what)), 48,
							    clipped, sizeof(clipped)));
		vt_table_cell(&t, "%s", vt_lock_kind_name(k->kind));
		vt_table_cell(&t, "%.2f", vt_lock_waiting(l, k));
		vt_table_cell(&t, "%u", k->peak);
		vt_table_cell(&t, "%.0f%%", share(k->waits, l->thread_samples));
		if (k->owner_reads)
			vt_table_cell(&t, "%s", vt_render_lock_holders(k, 2, holders, sizeof(holders)));
		else
			vt_table_cell(&t, "%s", vt_lock_kind_contended(k->kind) || k->python_gil ? "not recorded" : "-");
	}
	vt_table_print(&t, out, 2, true);
	vt_table_release(&t);
	if (shown < l->n)
		fprintf(out, "  ... %zu more locks\n", l->n - shown);
	if (l->untracked)
		fprintf(out, "  and waits on more than %d locks: %" PRIu64 " waiter-samples not in a row\n",
			VT_LOCKS_MAX, l->untracked);
}

int vt_render_locks_text(FILE *out, const struct vt_locks *l, size_t max_locks)
{
	size_t idx[VT_LOCKS_MAX], i, shown;
	double secs = (double)(l->last_ns - l->first_ns) / 1e9;

	fprintf(out, "locks of process %d: %u samples over %.1f s; %.2f threads in a futex wait on "
		"average, of %.1f\n", (int)l->pid, l->samples, secs,
		l->samples ? (double)l->futex_waits / l->samples : 0,
		l->samples ? (double)l->thread_samples / l->samples : 0);
	if (l->syscall_unread)
		fprintf(out, "  note: the system call of %.0f%% of the threads' samples could not be read (%s): "
			"their waits are not counted\n", share(l->syscall_unread, l->thread_samples), l->syscall_why);
	if (l->stacks_why[0])
		fprintf(out, "  note: %s; kinds and call sites are not known\n", l->stacks_why);
	if (l->arenas_why[0])
		fprintf(out, "  note: %s; arena locks are not named\n", l->arenas_why);
	if (l->n == 0) {
		fprintf(out, "\nno thread waited on a lock in any sample\n");
		return ferror(out) ? -1 : 0;
	}
	fputc('\n', out);
	vt_render_locks_table(out, l, max_locks);
	order(l, idx);
	shown = max_locks && max_locks < l->n ? max_locks : l->n;
	for (i = 0; i < shown; i++)
		lock_account(out, l, &l->v[idx[i]], i + 1);
	fputs("\nWAITING: threads waiting on it on average (thread-seconds per second); SHARE: of the\n"
	      "process's thread time; HELD BY: shares of the samples its owner was read in\n", out);
	return ferror(out) ? -1 : 0;
}

/* Waiting on the lock at addr over the looks of half h: 0 when it had none there. */
static double half_waiting(const struct vt_locks *h, uint64_t addr)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		if (h->v[i].addr == addr)
			return vt_lock_waiting(h, &h->v[i]);
	return 0;
}

void vt_render_lock_history_text(FILE *out, const struct vt_lock_history *h, size_t max_locks)
{
	const struct vt_locks *l = h ? &h->all : NULL;
	size_t idx[VT_LOCKS_MAX], i, shown;
	struct vt_table t;
	char what[256], clipped[256];

	if (!h)
		return;
	if (!h->looks) {
		fprintf(out, "\nlocks: not recorded (%s)\n", h->why);
		return;
	}
	fprintf(out, "\nlocks its threads waited on (%zu looks at the threads cadence, %.0f–%.0f s; "
		"%.2f threads in a futex wait on average, of %.1f):\n", h->looks, h->t_first, h->t_last,
		(double)l->futex_waits / l->samples, (double)l->thread_samples / l->samples);
	if (l->n == 0) {
		fprintf(out, "  no thread waited on a lock at any look\n");
		return;
	}
	vt_render_locks_table(out, l, max_locks);
	if (h->early.samples && h->late.samples) {
		order(l, idx);
		shown = max_locks && max_locks < l->n ? max_locks : l->n;
		fprintf(out, "\n  over the soak: threads waiting on average, first half (%u looks, from %.0f s) "
			"and second (%u looks, from %.0f s)\n", h->early.samples, h->t_first, h->late.samples,
			h->t_split);
		vt_table_init(&t, 4);
		vt_table_align(&t, 1, VT_RIGHT);
		vt_table_align(&t, 2, VT_RIGHT);
		vt_table_cell(&t, "LOCK");
		vt_table_cell(&t, "FIRST");
		vt_table_cell(&t, "SECOND");
		vt_table_cell(&t, "CHANGE");
		for (i = 0; i < shown; i++) {
			const struct vt_lock *k = &l->v[idx[i]];
			double a = half_waiting(&h->early, k->addr), b = half_waiting(&h->late, k->addr);

			vt_table_cell(&t, "%s", vt_text_clip_middle(vt_render_lock_what(k, what, sizeof(what)), 48,
								    clipped, sizeof(clipped)));
			vt_table_cell(&t, "%.2f", a);
			vt_table_cell(&t, "%.2f", b);
			vt_table_cell(&t, "%s", a == 0 && b > 0 ? "new" : b == 0 && a > 0 ? "gone"
					       : b > a * 1.5 + 0.05 ? "grew" : a > b * 1.5 + 0.05 ? "fell" : "same");
		}
		vt_table_print(&t, out, 4, true);
		vt_table_release(&t);
	} else {
		fprintf(out, "  (one look: no change over the soak can be told yet)\n");
	}
	order(l, idx);
	lock_account(out, l, &l->v[idx[0]], 1);
}
