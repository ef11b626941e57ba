/*
 * call_count.c — named functions found in a process's code and their calls
 * counted by entry uprobes, in a thread of their own.
 */
#include "sample/call_count.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "elf/demangle.h"
#include "elf/elfsym.h"
#include "perf/perf_events.h"
#include "perf/uprobe.h"
#include "proc/mapped_file.h"
#include "proc/maps.h"
#include "proc/stat.h"

#define FIRST_WINDOW_S 0.05
#define WINDOW_S 0.1
#define POLL_MS 20
#define CANDIDATES_MAX 12

/* ---- finding a function ---- */

struct match {
	uint64_t value, size;
	char name[512];
	char module[128];
	const struct vt_region *text;   /* an executable mapping of the file */
	const struct vt_region *base;   /* its mapping at offset 0 */
	uint64_t first_vaddr;
	uint64_t offset;
};

struct search {
	const char *want;             /* the name asked, without @FILE */
	const char *module;           /* @FILE, or NULL */
	struct vt_elfsym *ef;
	const struct vt_region *text, *base;
	uint64_t first_vaddr;
	const char *module_name;
	struct match found[CANDIDATES_MAX];
	size_t nfound;
	bool more;                    /* past CANDIDATES_MAX */
	char like[CANDIDATES_MAX][160];   /* names containing it */
	size_t nlike;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* name is want: as written, demangled, or demangled up to its parameters. */
static bool name_is(const char *sym, const char *demangled, const char *want)
{
	size_t n = strlen(want);

	if (!strcmp(sym, want) || !strcmp(demangled, want))
		return true;
	return !strncmp(demangled, want, n) && demangled[n] == '(';
}

static bool on_func(void *ctx, const char *sym, uint64_t value, uint64_t size)
{
	struct search *s = ctx;
	char demangled[512];

	if (!vt_demangle(sym, demangled, sizeof(demangled)))
		snprintf(demangled, sizeof(demangled), "%s", sym);
	if (name_is(sym, demangled, s->want)) {
		for (size_t i = 0; i < s->nfound; i++)
			if (s->found[i].value == value && s->found[i].text == s->text)
				return true;   /* .symtab and .dynsym */
		if (s->nfound == CANDIDATES_MAX) {
			s->more = true;
			return true;
		}
		struct match *m = &s->found[s->nfound++];
		m->value = value;
		m->size = size;
		snprintf(m->name, sizeof(m->name), "%s", demangled);
		snprintf(m->module, sizeof(m->module), "%s", s->module_name);
		m->text = s->text;
		m->base = s->base;
		m->first_vaddr = s->first_vaddr;
		if (!vt_elfsym_vaddr_offset(s->ef, value, &m->offset))
			s->nfound--;   /* not in the file's code: nothing to probe */
	} else if (s->nlike < CANDIDATES_MAX && strstr(demangled, s->want)) {
		for (size_t i = 0; i < s->nlike; i++)
			if (!strncmp(s->like[i], demangled, sizeof(s->like[i]) - 1))
				return true;
		snprintf(s->like[s->nlike++], sizeof(s->like[0]), "%.150s", demangled);
	}
	return true;
}

static bool same_file(const struct vt_region *a, const struct vt_region *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       !strcmp(a->path, b->path);
}

int vt_call_resolve(const struct vt_procfs *pfs, pid_t pid, const char *query, struct vt_call_fn *out,
		    char *candidates, size_t cap, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(VT_PROC_FILE_MAX);
	struct vt_region_list maps = { 0 };
	struct search s;
	char want[128], *at;
	int dirfd = -1, rc;
	size_t len = 0;

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	candidates[0] = '\0';
	snprintf(out->query, sizeof(out->query), "%s", query);
	snprintf(want, sizeof(want), "%s", query);
	at = strrchr(want, '@');
	if (at && at != want) {
		*at = '\0';
		s.module = at + 1;
	}
	s.want = want;
	if (!want[0])
		return vt_err_set(err, VT_E_USAGE, 0, "--count: an empty function name");
	if ((rc = vt_pid_open(pfs, pid, &dirfd, err)))
		return rc;
	if ((rc = vt_read_at(dirfd, "maps", &buf, err)) ||
	    (rc = vt_maps_parse(buf.data, buf.len, &maps, err)))
		goto out;
	for (size_t i = 0; i < maps.n; i++) {
		const struct vt_region *r = &maps.v[i], *b = NULL;
		char why[160];
		int fd = -1;
		bool seen = false;

		if (r->perms[2] != 'x' || r->path[0] != '/' || !r->inode)
			continue;
		if (s.module && strncmp(base_name(r->path), s.module, strlen(s.module)))
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = maps.v[k].perms[2] == 'x' && same_file(&maps.v[k], r);
		for (size_t k = 0; k < maps.n && !b; k++)
			if (maps.v[k].offset == 0 && same_file(&maps.v[k], r))
				b = &maps.v[k];
		if (seen || !b)
			continue;
		if (vt_mapped_file_open(pfs, dirfd, pid, r, &fd, why, sizeof(why), NULL) != VT_OK || fd < 0)
			continue;
		if (vt_elfsym_open_fd(fd, &s.ef, NULL) != VT_OK)
			continue;
		s.text = r;
		s.base = b;
		s.module_name = base_name(r->path);
		if (!vt_elfsym_first_load_vaddr(s.ef, &s.first_vaddr))
			s.first_vaddr = 0;
		vt_elfsym_each_func(s.ef, on_func, &s);
		vt_elfsym_free(&s.ef);
	}
	if (s.nfound == 1) {
		const struct match *m = &s.found[0];

		snprintf(out->name, sizeof(out->name), "%s", m->name);
		snprintf(out->module, sizeof(out->module), "%s", m->module);
		out->addr = m->base->start - m->first_vaddr + m->value;
		out->size = m->size;
		out->offset = m->offset;
		vt_mapped_file_kernel_path(pid, m->text, out->path, sizeof(out->path));
		rc = VT_OK;
		goto out;
	}
	if (s.nfound == 0) {
		for (size_t i = 0; i < s.nlike && len < cap; i++)
			len += (size_t)snprintf(candidates + len, cap - len, "%s%s", i ? ", " : "", s.like[i]);
		rc = vt_err_set(err, VT_E_NOTFOUND, 0, "no function '%s' in the code of process %d%s%s",
				want, (int)pid, s.module ? " in " : "", s.module ? s.module : "");
		if (s.nlike)
			vt_err_hint(err, "names that contain it: %s", candidates);
		else
			vt_err_hint(err, "the name as the symbol table has it (nm -D, nm), or demangled; a "
				    "stripped program has only its exported functions");
		goto out;
	}
	for (size_t i = 0; i < s.nfound && len < cap; i++)
		len += (size_t)snprintf(candidates + len, cap - len, "%s%s@%s", i ? ", " : "", s.found[i].name,
					s.found[i].module);
	rc = vt_err_set(err, VT_E_USAGE, 0, "'%s' is %zu%s functions in process %d", query, s.nfound,
			s.more ? " or more" : "", (int)pid);
	vt_err_hint(err, "pick one with NAME@FILE: %s", candidates);
out:
	vt_region_list_release(&maps);
	vt_buf_release(&buf);
	if (dirfd >= 0)
		close(dirfd);
	return rc;
}

/* ---- counting ---- */

struct vt_call_counter {
	pid_t pid;
	struct vt_call_counts *counts;
	double budget;
	struct vt_uprobe_set *sets[VT_CALLS_MAX];
	struct vt_perf_event events[VT_CALLS_MAX];
	pthread_t thread;
	atomic_int stop;
	uint64_t calls[VT_CALLS_MAX];
	/* vt_mono_ns() when this window's probes were all in: hits before are not
	 * counted, nor is the time they took to go in armed (calls / armed_s) */
	uint64_t armed_ns;
};

static void on_hit(void *ctx, const struct vt_perf_sample *s)
{
	struct vt_call_counter *c = ctx;

	if (s->event < c->counts->n && s->time_ns >= c->armed_ns)
		c->calls[s->event]++;
}

static bool target_cpu_s(pid_t pid, double *out)
{
	char path[64], buf[1024];
	struct vt_proc_stat st;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || vt_proc_stat_parse(buf, (size_t)n, &st, NULL) != VT_OK)
		return false;
	*out = (double)(st.utime_ticks + st.stime_ticks) / (double)(hz > 0 ? hz : 100);
	return true;
}

static void rest_until(struct vt_call_counter *c, uint64_t until)
{
	while (!atomic_load(&c->stop) && vt_mono_ns() < until) {
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
	}
}

static void *count_loop(void *arg)
{
	struct vt_call_counter *c = arg;
	struct vt_call_counts *k = c->counts;
	struct vt_perf_opts po = { .ring_pages = 64, .events = c->events, .nevents = (unsigned)k->n,
				   .inherit = true };
	uint64_t start = vt_mono_ns();
	double cpu0 = NAN, cpu1, window = FIRST_WINDOW_S;
	bool continuous = false;

	target_cpu_s(c->pid, &cpu0);
	while (!atomic_load(&c->stop)) {
		struct vt_perf *pf = NULL;
		struct vt_perf_stats ps;
		struct vt_err err;
		uint64_t end, t_closing;
		int rc;

		if (vt_perf_open(c->pid, &po, &pf, &err) != VT_OK) {
			snprintf(k->why, sizeof(k->why), "%.200s", err.msg);
			break;
		}
		c->armed_ns = vt_mono_ns();
		end = c->armed_ns + (uint64_t)(window * 1e9);
		rc = VT_OK;
		while (!atomic_load(&c->stop) && (continuous || vt_mono_ns() < end) && rc == VT_OK)
			rc = vt_perf_poll(pf, POLL_MS, on_hit, c, NULL);
		vt_perf_disable(pf);
		t_closing = vt_mono_ns();
		vt_perf_poll(pf, 0, on_hit, c, NULL);
		vt_perf_get_stats(pf, &ps);
		k->hits += ps.samples + ps.lost;
		k->lost += ps.lost;
		vt_perf_close(&pf);
		k->armed_s += (double)(t_closing - c->armed_ns) / 1e9;
		k->windows++;
		if (rc == VT_E_GONE) {
			snprintf(k->why, sizeof(k->why), "the process exited");
			break;
		}
		if (continuous)
			break;
		/* armed for the rest when a second armed costs the target no more than the
		 * budget of what it spends; else spaced windows */
		{
			double spent = isnan(k->hit_ns) ? 0 : (double)k->hits * k->hit_ns / 1e9;
			double elapsed = (double)(vt_mono_ns() - start) / 1e9;
			double rate = 0.01;

			if (!isnan(cpu0) && target_cpu_s(c->pid, &cpu1) && elapsed > 0 &&
			    (cpu1 - cpu0 - spent) / elapsed > rate)
				rate = (cpu1 - cpu0 - spent) / elapsed;
			if (!isnan(k->hit_ns) && spent / k->armed_s <= c->budget * rate) {
				continuous = true;
				continue;
			}
			window = WINDOW_S;
			if (!isnan(k->hit_ns) && spent > 0)
				rest_until(c, vt_mono_ns() + (uint64_t)(1e9 * window * (spent / k->armed_s) /
									 (c->budget * rate)));
			else
				rest_until(c, vt_mono_ns() + (uint64_t)(1e9 * window / c->budget));
		}
	}
	k->duration_s = (double)(vt_mono_ns() - start) / 1e9;
	if (!isnan(cpu0) && target_cpu_s(c->pid, &cpu1))
		k->target_cpu_s = cpu1 - cpu0;
	return NULL;
}

int vt_call_counter_start(pid_t pid, struct vt_call_counts *counts, double budget,
			  struct vt_call_counter **out, struct vt_err *err)
{
	struct vt_call_counter *c = calloc(1, sizeof(*c));
	uint64_t base;
	int rc;

	*out = NULL;
	if (!c)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	c->pid = pid;
	c->counts = counts;
	c->budget = budget > 0 ? budget : 0.05;
	counts->budget = c->budget;
	counts->cost = NAN;
	base = vt_uprobe_calibration_base();
	for (size_t i = 0; i < counts->n; i++) {
		struct vt_uprobe_spec spec = { counts->fns[i].offset, false, false };

		if ((rc = vt_uprobe_set_open(counts->fns[i].path, &spec, 1, true, &c->sets[i], err)))
			goto fail;
		c->events[i] = vt_uprobe_set_events(c->sets[i])[0];
		snprintf(counts->how, sizeof(counts->how), "%s", vt_uprobe_set_how(c->sets[i]));
	}
	counts->hit_ns = vt_uprobe_hit_ns(base, 0);
	if (pthread_create(&c->thread, NULL, count_loop, c) != 0) {
		rc = vt_err_set(err, VT_E_NOMEM, errno, "cannot start the call counter");
		goto fail;
	}
	*out = c;
	return VT_OK;
fail:
	for (size_t i = 0; i < counts->n; i++)
		vt_uprobe_set_close(&c->sets[i]);
	free(c);
	return rc;
}

void vt_call_counter_finish(struct vt_call_counter **cp)
{
	struct vt_call_counter *c = cp ? *cp : NULL;
	struct vt_call_counts *k;

	if (!c)
		return;
	k = c->counts;
	atomic_store(&c->stop, 1);
	pthread_join(c->thread, NULL);
	for (size_t i = 0; i < k->n; i++) {
		k->fns[i].calls = c->calls[i];
		vt_uprobe_set_close(&c->sets[i]);
	}
	if (!isnan(k->hit_ns)) {
		double spent = (double)k->hits * k->hit_ns / 1e9;

		if (k->target_cpu_s > spent)
			k->cost = spent / (k->target_cpu_s - spent);
	}
	free(c);
	*cp = NULL;
}
