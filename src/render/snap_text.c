/*
 * snap_text.c — `vitals snap` as aligned text: one column per process for
 * the summary sections, then one region table per process, then what could
 * not be read and why.
 */
#include "render/blocks.h"
#include "render/render.h"
#include "base/unknown.h"
#include "render/table.h"

#include <string.h>
#include <time.h>

#define B(v) vt_fmt_bytes((v), bufs[(slot++) % 8], 32)

/* Row-building helpers: key, one value per process, meaning. */
struct grid {
	struct vt_table t;
	size_t n;
};

static void grid_init(struct grid *g, const struct vt_snap_report *r, const char *title)
{
	size_t i;

	g->n = r->n;
	vt_table_init(&g->t, (int)r->n + 2);
	for (i = 0; i < r->n; i++)
		vt_table_align(&g->t, (int)i + 1, VT_RIGHT);
	vt_table_cell(&g->t, "%s", title);
	for (i = 0; i < r->n; i++) {
		if (r->labels && r->labels[i])
			vt_table_cell(&g->t, "%s", r->labels[i]);
		else
			vt_table_cell(&g->t, "pid %d", (int)r->samples[i].pid);
	}
	vt_table_cell(&g->t, "%s", "");
}

static void grid_print(struct grid *g, FILE *out)
{
	vt_table_print(&g->t, out, 0, true);
	vt_table_release(&g->t);
	fputc('\n', out);
}

/* " 1T 2Z +1 other": the rarer thread states, only those a thread is in (64 bytes do). */
static void rare_states(const struct vt_thread_states *t, char *buf, size_t cap)
{
	size_t used = 0;
	int w;

	buf[0] = '\0';
	if (t->stopped && (w = snprintf(buf + used, cap - used, " %dT", t->stopped)) > 0)
		used += (size_t)w < cap - used ? (size_t)w : cap - used - 1;
	if (t->zombie && (w = snprintf(buf + used, cap - used, " %dZ", t->zombie)) > 0)
		used += (size_t)w < cap - used ? (size_t)w : cap - used - 1;
	if (t->other)
		snprintf(buf + used, cap - used, " +%d other", t->other);
}

static void print_identity(FILE *out, const struct vt_snap_report *r)
{
	struct grid g;
	char buf[64];
	size_t i;
	bool any_rare = false;

	grid_init(&g, r, "PROCESS");
	for (i = 0, vt_table_cell(&g.t, "comm"); i < r->n; i++)
		vt_table_cell(&g.t, "%s", r->samples[i].comm);
	vt_table_cell(&g.t, "%s", "");
	for (i = 0, vt_table_cell(&g.t, "uptime"); i < r->n; i++)
		vt_table_cell(&g.t, "%s", vt_fmt_span(r->samples[i].uptime_s, buf, sizeof(buf)));
	vt_table_cell(&g.t, "since the process started");
	for (i = 0, vt_table_cell(&g.t, "threads"); i < r->n; i++)
		vt_table_cell(&g.t, "%lld", (long long)r->samples[i].num_threads);
	vt_table_cell(&g.t, "%s", "");
	for (i = 0, vt_table_cell(&g.t, "  by state"); i < r->n; i++) {
		const struct vt_thread_states *t = &r->samples[i].threads;
		char more[64] = "";

		if (!r->samples[i].threads_st.available) {
			vt_table_cell(&g.t, r->samples[i].threads_st.skipped ? "not read" : "n/a");
			continue;
		}
		rare_states(t, more, sizeof(more));
		any_rare |= t->stopped || t->zombie;
		vt_table_cell(&g.t, "%dR %dS %dD%s", t->running, t->sleeping, t->disk, more);
	}
	vt_table_cell(&g.t, any_rare ? "running, sleeping, uninterruptible (disk), T stopped, Z zombie"
				     : "running, sleeping, uninterruptible (disk)");
	grid_print(&g, out);
	for (i = 0; i < r->n; i++)
		fprintf(out, "  %d: %s\n", (int)r->samples[i].pid,
			r->samples[i].cmdline && *r->samples[i].cmdline ? r->samples[i].cmdline
								       : "(no command line)");
	fputc('\n', out);
}

static void print_memory(FILE *out, const struct vt_snap_report *r)
{
	char bufs[8][32];
	unsigned slot = 0;
	struct grid g;
	size_t i;
	int f;

	grid_init(&g, r, "MEMORY");
	for (f = 0; f < VT_M_COUNT; f++) {
		if (!(vt_metrics[f].flags & VT_MF_SNAP))
			continue;
		vt_table_cell(&g.t, "%s", vt_metrics[f].label);
		for (i = 0; i < r->n; i++)
			vt_table_cell(&g.t, "%s", vt_fmt_value(vt_metrics[f].unit,
								   vt_metrics[f].of_sample(&r->samples[i]),
								   bufs[(slot++) % 8], 32));
		vt_table_cell(&g.t, "%s", vt_metrics[f].meaning);
	}
	grid_print(&g, out);
}

/* A column of another allocator has no glibc figure: "n/a" (vt_sample_maybe_glibc). */
static bool other_allocator(struct grid *g, const struct vt_sample *s)
{
	if (vt_sample_maybe_glibc(s))
		return false;
	vt_table_cell(&g->t, "n/a");
	return true;
}

/* A column whose mappings were not read has no arena figure: "n/a", as in the JSON's null. */
static bool maps_unread(struct grid *g, const struct vt_sample *s)
{
	if (s->regions_st.available)
		return false;
	vt_table_cell(&g->t, "n/a");
	return true;
}

/*
 * glibc's arenas and arena cap, for the processes that may run glibc malloc;
 * a column of another allocator reads "not glibc" and has no cap, and a
 * report with no such process has no block at all.
 */
static void print_arenas(FILE *out, const struct vt_snap_report *r)
{
	char bufs[8][32];
	unsigned slot = 0;
	struct grid g;
	size_t i, n_glibc = 0;

	for (i = 0; i < r->n; i++)
		n_glibc += vt_sample_maybe_glibc(&r->samples[i]);
	if (!n_glibc)
		return;
	grid_init(&g, r, "GLIBC ARENAS");
	vt_table_cell(&g.t, "arena heaps");
	for (i = 0; i < r->n; i++) {
		const struct vt_sample *s = &r->samples[i];
		if (!s->regions_st.available || s->alloc.kind != VT_ALLOC_GLIBC)
			vt_table_cell(&g.t, s->regions_st.available || !vt_sample_maybe_glibc(s) ? "not glibc"
												: "n/a");
		else
			vt_table_cell(&g.t, "%d", s->arenas.heaps);
	}
	vt_table_cell(&g.t, "64 MiB-aligned heaps of non-main arenas");
	vt_table_cell(&g.t, "arenas");
	for (i = 0; i < r->n; i++) {
		const struct vt_sample *s = &r->samples[i];
		if (!s->regions_st.available || s->alloc.kind != VT_ALLOC_GLIBC)
			vt_table_cell(&g.t, "n/a");
		else if (s->arenas.arenas >= 0)
			vt_table_cell(&g.t, "%d + main", s->arenas.arenas);
		else
			vt_table_cell(&g.t, "≤%d + main", s->arenas.heaps);
	}
	vt_table_cell(&g.t, "distinct arenas (from heap_info headers when readable)");
	vt_table_cell(&g.t, "arena cap");
	for (i = 0; i < r->n; i++) {
		const struct vt_sample *s = &r->samples[i];
		if (other_allocator(&g, s))
			continue;
		if (s->cap.source == VT_CAP_UNKNOWN)
			vt_table_cell(&g.t, "n/a");
		else
			vt_table_cell(&g.t, "%llu", (unsigned long long)s->cap.value);
	}
	vt_table_cell(&g.t, "most arenas glibc will create");
	vt_table_cell(&g.t, "  from");
	for (i = 0; i < r->n; i++)
		if (!other_allocator(&g, &r->samples[i]))
			vt_table_cell(&g.t, "%s", vt_cap_source_name(r->samples[i].cap.source));
	vt_table_cell(&g.t, "env = MALLOC_ARENA_MAX, tunable = GLIBC_TUNABLES, default = 8 x CPUs");
	vt_table_cell(&g.t, "arena mapped");
	for (i = 0; i < r->n; i++)
		if (!other_allocator(&g, &r->samples[i]) && !maps_unread(&g, &r->samples[i]))
			vt_table_cell(&g.t, "%s", r->samples[i].arenas.heaps ? B(r->samples[i].arenas.mapped_bytes)
									: "0 B");
	vt_table_cell(&g.t, "read-write part of the arena heaps");
	vt_table_cell(&g.t, "arena Rss");
	for (i = 0; i < r->n; i++)
		if (!other_allocator(&g, &r->samples[i]) && !maps_unread(&g, &r->samples[i]))
			vt_table_cell(&g.t, "%s", r->samples[i].arenas.heaps ? B(r->samples[i].arenas.rss_bytes)
									: "0 B");
	vt_table_cell(&g.t, "resident in arena heaps (smaps)");
	vt_table_cell(&g.t, "main heap");
	for (i = 0; i < r->n; i++)
		if (!other_allocator(&g, &r->samples[i]) && !maps_unread(&g, &r->samples[i]))
			vt_table_cell(&g.t, "%s", B(r->samples[i].arenas.main_heap_bytes));
	vt_table_cell(&g.t, "[heap]: the main arena's brk heap");
	vt_table_cell(&g.t, "main heap Rss");
	for (i = 0; i < r->n; i++)
		if (!other_allocator(&g, &r->samples[i]) && !maps_unread(&g, &r->samples[i]))
			vt_table_cell(&g.t, "%s", B(r->samples[i].arenas.main_heap_rss));
	vt_table_cell(&g.t, "%s", "");
	grid_print(&g, out);
	for (i = 0; i < r->n; i++) {
		const struct vt_sample *s = &r->samples[i];
		if (vt_sample_maybe_glibc(s))
			fprintf(out, "  %d: cap %s%s%s\n", (int)s->pid, s->cap.source_text,
				s->cap.note[0] ? "; " : "", s->cap.note);
	}
	fputc('\n', out);
}

static void print_allocator(FILE *out, const struct vt_snap_report *r)
{
	size_t i;

	fprintf(out, "ALLOCATOR\n");
	for (i = 0; i < r->n; i++) {
		const struct vt_sample *s = &r->samples[i];
		if (!s->alloc_st.available) {
			fprintf(out, "  %d: unknown — %s\n", (int)s->pid, s->alloc_st.reason);
			continue;
		}
		fprintf(out, "  %d: %s%s%s%s — %s\n", (int)s->pid, vt_alloc_kind_name(s->alloc.kind),
			s->alloc.version[0] ? " " : "", s->alloc.version,
			s->alloc.is_static ? " (static)" : "", s->alloc.evidence);
	}
	fputc('\n', out);
}

static const char *limit_text(uint64_t v, bool is_max, char *buf, size_t cap)
{
	if (is_max)
		return "none";
	return vt_fmt_bytes(v, buf, cap);
}

static const char *count_text(uint64_t v, char *buf, size_t cap)
{
	if (!vt_known(v))
		return "n/a";
	snprintf(buf, cap, "%llu", (unsigned long long)v);
	return buf;
}

static void print_cgroup(FILE *out, const struct vt_snap_report *r)
{
	char bufs[8][32];
	unsigned slot = 0;
	struct grid g;
	size_t i;

	grid_init(&g, r, "CGROUP (memory)");
	vt_table_cell(&g.t, "version");
	for (i = 0; i < r->n; i++) {
		const struct vt_sample *s = &r->samples[i];
		if (!s->cgroup_st.available)
			vt_table_cell(&g.t, "n/a");
		else if (!s->cgroup.version)
			vt_table_cell(&g.t, "none");
		else
			vt_table_cell(&g.t, "v%d", s->cgroup.version);
	}
	vt_table_cell(&g.t, "%s", "");
#define CG_ROW(label, expr, meaning)                                        \
	do {                                                                \
		vt_table_cell(&g.t, label);                                 \
		for (i = 0; i < r->n; i++) {                                \
			const struct vt_cgroup_mem *c = &r->samples[i].cgroup; \
			if (!r->samples[i].cgroup_st.available || !c->version) \
				vt_table_cell(&g.t, "n/a");                 \
			else                                                \
				vt_table_cell(&g.t, "%s", expr);            \
		}                                                           \
		vt_table_cell(&g.t, meaning);                               \
	} while (0)
	CG_ROW("usage", B(c->usage), "charged to the cgroup (includes page cache)");
	CG_ROW("limit", limit_text(c->limit, c->limit_is_max, bufs[(slot++) % 8], 32),
	       "memory.max / limit_in_bytes");
	CG_ROW("peak", B(c->peak), "highest usage seen");
	CG_ROW("swap", B(c->swap_usage), "swap charged to the cgroup");
	CG_ROW("swap limit", limit_text(c->swap_limit, c->swap_limit_is_max, bufs[(slot++) % 8], 32),
	       "memory.swap.max (v1: memsw limit minus memory limit)");
	CG_ROW("limit hit", count_text(c->events_max, bufs[(slot++) % 8], 32),
	       "times usage reached the limit (events max / failcnt)");
	CG_ROW("high hit", count_text(c->events_high, bufs[(slot++) % 8], 32),
	       "times usage passed memory.high (throttled)");
	CG_ROW("oom", count_text(c->events_oom, bufs[(slot++) % 8], 32), "OOM situations");
	CG_ROW("oom kills", count_text(c->events_oom_kill, bufs[(slot++) % 8], 32),
	       "processes killed by the OOM killer");
#undef CG_ROW
	vt_table_cell(&g.t, "pressure");
	for (i = 0; i < r->n; i++) {
		const struct vt_cgroup_mem *c = &r->samples[i].cgroup;
		if (!r->samples[i].cgroup_st.available || !c->psi_some.present)
			vt_table_cell(&g.t, "n/a");
		else
			vt_table_cell(&g.t, "%.2f%% / %.2f%%", c->psi_some.avg60,
				      c->psi_full.present ? c->psi_full.avg60 : 0.0);
	}
	vt_table_cell(&g.t, "PSI some / full, avg60: share of time stalled on memory");
	grid_print(&g, out);
	for (i = 0; i < r->n; i++) {
		const struct vt_sample *s = &r->samples[i];
		const struct vt_cgroup_mem *c = &s->cgroup;
		if (!s->cgroup_st.available || !c->version)
			continue;
		fprintf(out, "  %d: %s", (int)s->pid, c->path);
		if (vt_known(c->events_max))
			fprintf(out, c->events_max ? " — the limit was reached %llu times" :
				" — the limit was never reached", (unsigned long long)c->events_max);
		if (vt_known(c->events_oom_kill) && c->events_oom_kill)
			fprintf(out, ", %llu OOM kills", (unsigned long long)c->events_oom_kill);
		fputc('\n', out);
	}
	fputc('\n', out);
}

static void print_regions(FILE *out, const struct vt_snap_report *r, const struct vt_sample *s)
{
	char bufs[8][32], ev[64], size_text[32], comm[sizeof(s->comm)];
	unsigned slot = 0;
	struct vt_table t;
	size_t i, listed = 0;

	vt_fmt_bytes(r->min_region, size_text, sizeof(size_text));
	if (!s->regions_st.available) {
		fprintf(out, "REGIONS · pid %d: not available — %s\n\n", (int)s->pid, s->regions_st.reason);
		return;
	}
	vt_table_init(&t, 9);
	vt_table_align(&t, 1, VT_RIGHT);
	vt_table_align(&t, 2, VT_RIGHT);
	vt_table_align(&t, 3, VT_RIGHT);
	vt_table_align(&t, 4, VT_RIGHT);
	vt_table_cell(&t, "ADDRESS");
	vt_table_cell(&t, "SIZE");
	vt_table_cell(&t, "RSS");
	vt_table_cell(&t, "TOUCHED");
	vt_table_cell(&t, "SWAP");
	vt_table_cell(&t, "PERM");
	vt_table_cell(&t, "KIND");
	vt_table_cell(&t, "BASIS");
	vt_table_cell(&t, "PATH");
	for (i = 0; i < s->regions.n; i++) {
		const struct vt_region *g = &s->regions.v[i];
		if (!vt_region_listed(g, r))
			continue;
		listed++;
		vt_table_cell(&t, "%012llx", (unsigned long long)g->start);
		vt_table_cell(&t, "%s", B(vt_region_size(g)));
		vt_table_cell(&t, "%s", B(g->rss));
		vt_table_cell(&t, "%s", vt_fmt_pct(g->rss, vt_region_size(g), bufs[(slot++) % 8], 32));
		vt_table_cell(&t, "%s", B(g->swap));
		vt_table_cell(&t, "%s", g->perms);
		vt_table_cell(&t, "%s", vt_region_kind_label(g->kind));
		vt_table_cell(&t, "%s", vt_region_evidence(g, ev, sizeof(ev)));
		if (g->owner_tid)
			vt_table_cell(&t, "tid %d", g->owner_tid);
		else
			vt_table_cell(&t, "%s", g->path);
	}
	fprintf(out, "REGIONS ≥ %s · pid %d (%s) · %zu of %zu mappings%s\n", size_text, (int)s->pid,
		vt_text_printable(s->comm, comm, sizeof(comm)), listed, s->regions.n,
		s->light ? " · light: from maps, no Rss (run without --light for smaps)" : "");
	if (listed)
		vt_table_print(&t, out, 0, true);
	else
		fprintf(out, "  none at or above %s (--min-region to change)\n", size_text);
	vt_table_release(&t);
	fputc('\n', out);
}

/* What the rest of a mapping holding blocks is: "8.00 KiB other anonymous memory", and what was not read. */
static void print_rest(FILE *out, const struct vt_region *g)
{
	const struct vt_region_blocks *b = g->blocks;
	uint64_t py = vt_region_py_bytes(g);
	char x[32], y[32];

	fprintf(out, "rest of the mapping: ");
	if (b->excluded_bytes)
		fprintf(out, "%s glibc arena heap, ", vt_fmt_bytes(b->excluded_bytes, y, sizeof(y)));
	if (py)
		fprintf(out, "%s CPython object arenas (%llu), ", vt_fmt_bytes(py, y, sizeof(y)),
			(unsigned long long)g->py->arenas);
	fprintf(out, "%s other anonymous memory", vt_fmt_bytes(b->other_bytes - py, x, sizeof(x)));
	if (b->unread_bytes)
		fprintf(out, ", %s not looked at (past the scan bound, or gone under the walk)",
			vt_fmt_bytes(b->unread_bytes, y, sizeof(y)));
	if (b->changed)
		fprintf(out, ", %u block%s (%s) dropped: the header changed under the walk", b->changed,
			b->changed == 1 ? "" : "s", vt_fmt_bytes(b->skipped_bytes, y, sizeof(y)));
	if (b->dropped)
		fprintf(out, ", %zu more blocks not listed", b->dropped);
}

/*
 * The malloc'd blocks found inside the regions (glibc mmapped chunks,
 * alloc/mmap_blocks.h), mapping by mapping: each with its size, resident
 * bytes and the shape of its first bytes, then what the rest of the mapping
 * is.  Blocks under --min-region are counted, not listed (all with --all-regions).
 */
static void print_blocks(FILE *out, const struct vt_snap_report *r, const struct vt_sample *s)
{
	char bufs[8][32], shape[160];
	unsigned slot = 0;
	size_t i, j, nblocks = 0, small = 0;
	uint64_t bytes = 0, small_bytes = 0;

	for (i = 0; i < s->regions.n; i++)
		if (s->regions.v[i].blocks) {
			nblocks += s->regions.v[i].blocks->n;
			bytes += s->regions.v[i].blocks->block_bytes;
		}
	if (!nblocks)
		return;
	fprintf(out, "MALLOC'D BLOCKS · pid %d · %zu block%s, %s (glibc mmapped chunks, found header by header: "
		"one malloc each, at or above the mmap threshold)\n", (int)s->pid, nblocks, nblocks == 1 ? "" : "s",
		B(bytes));
	for (i = 0; i < s->regions.n; i++) {
		const struct vt_region *g = &s->regions.v[i];
		const struct vt_region_blocks *b = g->blocks;
		struct vt_table t;
		size_t shown = 0;

		if (!b)
			continue;
		vt_table_init(&t, 4);
		vt_table_align(&t, 1, VT_RIGHT);
		vt_table_align(&t, 2, VT_RIGHT);
		vt_table_cell(&t, "BLOCK");
		vt_table_cell(&t, "SIZE");
		vt_table_cell(&t, "RSS");
		vt_table_cell(&t, "FIRST BYTES (census shape, redacted)");
		for (j = 0; j < b->n; j++) {
			const struct vt_region_block *k = &b->v[j];
			struct vt_block_shape sh;

			if (!r->all_regions && k->size < r->min_region) {
				small++;
				small_bytes += k->size;
				continue;
			}
			vt_block_shape(k, &sh);
			vt_table_cell(&t, "%012llx", (unsigned long long)k->addr);
			vt_table_cell(&t, "malloc'd block, %s", B(k->size));
			vt_table_cell(&t, "%s", B(k->resident));
			vt_table_cell(&t, "%s", vt_block_shape_text(&sh, shape, sizeof(shape)));
			shown++;
		}
		if (shown || b->other_bytes || b->unread_bytes || b->changed) {
			char size[32];

			fprintf(out, "  mapping %012llx-%012llx (%s): %zu block%s, %s; ", (unsigned long long)g->start,
				(unsigned long long)g->end, vt_fmt_bytes(vt_region_size(g), size, sizeof(size)), b->n,
				b->n == 1 ? "" : "s", B(b->block_bytes));
			print_rest(out, g);
			fputc('\n', out);
		}
		if (shown)
			vt_table_print(&t, out, 4, true);
		vt_table_release(&t);
	}
	if (small)
		fprintf(out, "  %zu smaller block%s (%s) under %s not listed (--min-region, --all-regions)\n", small,
			small == 1 ? "" : "s", B(small_bytes), vt_fmt_bytes(r->min_region, shape, sizeof(shape)));
	fputc('\n', out);
}

/* The TCP sockets it listens on and their accept queues, one table per process. */
static void print_listen(FILE *out, const struct vt_sample *s)
{
	const struct vt_sample_listen *l = &s->listen;
	struct vt_table t;
	size_t i;

	if (s->listen_st.skipped)
		return;
	if (!s->listen_st.available) {
		fprintf(out, "LISTENING · pid %d: not available — %s\n\n", (int)s->pid, s->listen_st.reason);
		return;
	}
	fprintf(out, "LISTENING · pid %d · %zu TCP listener%s · %llu open fds%s%s\n", (int)s->pid,
		l->n + l->dropped, l->n + l->dropped == 1 ? "" : "s", (unsigned long long)l->open_fds,
		l->via ? " · via " : "", l->via ? l->via : "");
	if (l->n) {
		vt_table_init(&t, 4);
		vt_table_align(&t, 1, VT_RIGHT);
		vt_table_align(&t, 2, VT_RIGHT);
		vt_table_cell(&t, "ADDRESS");
		vt_table_cell(&t, "QUEUE");
		vt_table_cell(&t, "BACKLOG");
		vt_table_cell(&t, "%s", "");
		for (i = 0; i < l->n; i++) {
			const struct vt_listen_sock *k = &l->v[i];
			bool known = k->backlog != VT_LISTEN_UNKNOWN;

			vt_table_cell(&t, "%s", k->address);
			vt_table_cell(&t, "%u", k->queue);
			if (known)
				vt_table_cell(&t, "%u", k->backlog);
			else
				vt_table_cell(&t, "n/a");
			vt_table_cell(&t, "%s", known && k->queue > k->backlog ? "full: new connections are dropped"
					  : k->queue ? "waiting for accept()" : "");
		}
		vt_table_print(&t, out, 2, true);
		vt_table_release(&t);
	} else {
		fprintf(out, "  none\n");
	}
	if (l->dropped)
		fprintf(out, "  and %zu more not listed\n", l->dropped);
	if (l->n && l->v[0].backlog == VT_LISTEN_UNKNOWN)
		fprintf(out, "  backlog limits: only sock_diag has them, and it answers in vitals's own "
			"network namespace\n");
	if (vt_known(l->counters.overflows) && vt_known(l->counters.drops))
		fprintf(out, "  its network namespace since boot: %llu listen overflows, %llu listen drops "
			"(every listener's; a rise between two snaps is the evidence)\n",
			(unsigned long long)l->counters.overflows, (unsigned long long)l->counters.drops);
	fputc('\n', out);
}

/* The malloc'd blocks and CPython's arenas, against RssAnon: how many lines it said. */
static int reading_blocks(FILE *out, const struct vt_sample *s)
{
	const struct vt_region_block *largest = NULL;
	uint64_t n = 0, bytes = 0, res = 0;
	bool res_known = true;
	struct vt_py_totals py;
	char a[32], b[32], c[32];
	int lines = 0;
	size_t i, j;

	for (i = 0; i < s->regions.n; i++)
		for (j = 0; s->regions.v[i].blocks && j < s->regions.v[i].blocks->n; j++) {
			const struct vt_region_block *k = &s->regions.v[i].blocks->v[j];

			n++;
			bytes += k->size;
			if (vt_known(k->resident))
				res += k->resident;
			else
				res_known = false;
			if (!largest || k->size > largest->size)
				largest = k;
		}
	if (n) {
		fprintf(out, "  - %llu malloc'd block%s hold%s %s", (unsigned long long)n, n == 1 ? "" : "s",
			n == 1 ? "s" : "", vt_fmt_bytes(bytes, a, sizeof(a)));
		if (res_known && vt_known(s->status.rss_anon) && s->status.rss_anon)
			fprintf(out, ", %s resident (%.0f%% of RssAnon)", vt_fmt_bytes(res, b, sizeof(b)),
				100.0 * (double)res / (double)s->status.rss_anon);
		fprintf(out, ": single allocations, not arenas; the largest %s at %012llx\n",
			vt_fmt_bytes(largest->size, c, sizeof(c)), (unsigned long long)largest->addr);
		lines++;
	}
	vt_py_totals(&s->regions, &py);
	if (py.arenas) {
		fprintf(out, "  - CPython's %llu object arenas hold %s, %s of it in use by objects: not malloc's, so "
			"mallinfo2 and census do not see them\n", (unsigned long long)py.arenas,
			vt_fmt_bytes(py.arena_bytes, a, sizeof(a)), vt_fmt_bytes(py.used_bytes, b, sizeof(b)));
		lines++;
	}
	return lines;
}

/* A few plain sentences on what the figures say, each with its numbers. */
static void print_reading(FILE *out, const struct vt_sample *s)
{
	char a[32], b[32], c[32];
	const struct vt_proc_status *st = &s->status;
	int lines = 0;

	fprintf(out, "READING · pid %d\n", (int)s->pid);
	if (vt_known(st->vm_rss) && vt_known(st->rss_anon) && st->vm_rss) {
		double share = (double)st->rss_anon / (double)st->vm_rss;
		/* say what the split means only where it decides something: mostly one or the other */
		fprintf(out, "  - %.0f%% of resident memory is anonymous (%s of %s)%s%s\n", share * 100,
			vt_fmt_bytes(st->rss_anon, a, sizeof(a)), vt_fmt_bytes(st->vm_rss, b, sizeof(b)),
			share > 0.8 || share < 0.5 ? ": " : "",
			share > 0.8 ? "it is allocated, not mapped files; page-cache tuning will not move it"
			: share < 0.5 ? "file-backed pages are most of it; the kernel can drop them and read them again"
				      : "");
		lines++;
	}
	if (vt_known(st->vm_swap) && st->vm_swap && vt_known(s->committed)) {
		fprintf(out, "  - %s is swapped out: RSS understates what the process holds; "
			"committed (%s) is the size to watch\n", vt_fmt_bytes(st->vm_swap, a, sizeof(a)),
			vt_fmt_bytes(s->committed, b, sizeof(b)));
		lines++;
	}
	if (s->alloc.kind == VT_ALLOC_GLIBC && s->arenas.heaps && vt_known(s->arenas.rss_bytes) &&
	    vt_known(st->rss_anon) && st->rss_anon) {
		fprintf(out, "  - %d arena heap%s %s resident, %.0f%% of RssAnon; cap is %llu (%s)\n",
			s->arenas.heaps, s->arenas.heaps == 1 ? " holds" : "s hold",
			vt_fmt_bytes(s->arenas.rss_bytes, a, sizeof(a)),
			100.0 * (double)s->arenas.rss_bytes / (double)st->rss_anon,
			(unsigned long long)s->cap.value, vt_cap_source_name(s->cap.source));
		lines++;
		if (s->cap.source == VT_CAP_DEFAULT && s->arenas.heaps > 2)
			fprintf(out, "    each arena keeps the memory its threads freed: how much of this is live\n"
				"    data and how much is free-but-held takes the allocator's own figures (mallinfo2)\n"), lines++;
	}
	lines += reading_blocks(out, s);
	if (vt_known(s->cgroup.limit) && !s->cgroup.limit_is_max && s->cgroup.limit &&
	    vt_known(s->cgroup.usage)) {
		fprintf(out, "  - the cgroup is at %.1f%% of its %s limit (%s)\n",
			100.0 * (double)s->cgroup.usage / (double)s->cgroup.limit,
			vt_fmt_bytes(s->cgroup.limit, a, sizeof(a)), vt_fmt_bytes(s->cgroup.usage, c, sizeof(c)));
		lines++;
	}
	for (size_t i = 0; s->listen_st.available && i < s->listen.n; i++) {
		const struct vt_listen_sock *k = &s->listen.v[i];

		if (!k->queue)
			continue;
		fprintf(out, "  - %u connection%s wait%s for accept() on %s", k->queue, k->queue == 1 ? "" : "s",
			k->queue == 1 ? "s" : "", k->address);
		if (k->backlog != VT_LISTEN_UNKNOWN)
			fprintf(out, " (backlog %u%s)", k->backlog,
				k->queue > k->backlog ? ": full, new ones are dropped" : "");
		fprintf(out, ": if it stays, nothing is calling accept(); vitals threads %d shows what "
			"the threads do instead\n", (int)s->pid);
		lines++;
	}
	if (!lines)
		fprintf(out, "  - nothing stands out from these figures\n");
	fputc('\n', out);
}

static void print_unavailable(FILE *out, const struct vt_sample *s)
{
	const struct {
		const char *name;
		const struct vt_section *sec;
	} parts[] = {
		{ "regions", &s->regions_st }, { "environ", &s->environ_st },
		{ "allocator", &s->alloc_st }, { "cgroup", &s->cgroup_st },
		{ "threads", &s->threads_st }, { "memory", &s->memory_st },
		{ "listening sockets", &s->listen_st },
	};
	size_t i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		const struct vt_section *sec = parts[i].sec;
		if (sec->available || sec->skipped)
			continue;
		fprintf(out, "note: %d: %s unavailable — %s%s%s\n", (int)s->pid, parts[i].name,
			sec->reason, sec->hint[0] ? "; " : "", sec->hint);
	}
}

int vt_render_snap_text(FILE *out, const struct vt_snap_report *r)
{
	char when[64];
	time_t now;
	size_t i;

	/* failures are printed by the CLI on stderr; the text view shows samples only */
	if (!r->n)
		return 0;
	now = (time_t)r->samples[0].taken_at;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
	fprintf(out, "vitals snap · %s%s%s\n\n", when, r->title ? " · " : "", r->title ? r->title : "");
	print_identity(out, r);
	print_memory(out, r);
	print_arenas(out, r);
	print_allocator(out, r);
	print_cgroup(out, r);
	for (i = 0; i < r->n; i++) {
		print_regions(out, r, &r->samples[i]);
		print_blocks(out, r, &r->samples[i]);
		if (r->samples[i].regions_st.available)
			vt_render_cpython_text(out, r->samples[i].pid, &r->samples[i].python, &r->samples[i].regions,
					       r->samples[i].python_why);
	}
	for (i = 0; i < r->n; i++)
		print_listen(out, &r->samples[i]);
	for (i = 0; i < r->n; i++)
		print_reading(out, &r->samples[i]);
	for (i = 0; i < r->n; i++)
		print_unavailable(out, &r->samples[i]);
	return ferror(out) ? -1 : 0;
}
