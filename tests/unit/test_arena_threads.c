/*
 * test_arena_threads.c — the thread ↔ arena map as vitals heap and vitals
 * census show it: the THREADS column of their per-arena tables lines up
 * under its header, names the threads, says "?" and why when the map is
 * not known, and the JSON documents carry each arena's threads
 * (render/arena_threads.h); and the model read from this very process
 * (sample/arena_threads.h): threads that allocated are on arenas, one that
 * did not is counted apart, an arena made later moves the others' indices
 * and is marked later.
 */
#include "harness.h"

#include <jansson.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc/thread_arena.h"
#include "analyze/heap_verdict.h"
#include "proc/maps.h"
#include "proc/procfs.h"
#include "render/arena_threads.h"
#include "render/census.h"
#include "render/heap.h"
#include "sample/arena_threads.h"

/* ---- a map made by hand, as vt_arena_threads_read leaves one ---- */

/* arena 0: main (100), io (102), log (104); arena 1: worker-1 (101); arena 2: none; idle (103) not yet */
static struct vt_arena_thread hand_threads[] = {
	{ 100, "main", 0 }, { 102, "io", 0 }, { 104, "log", 0 }, { 101, "worker-1", 1 },
	{ 103, "idle", VT_THREAD_ARENA_NONE },
};
static struct vt_arena_users hand_users[3] = { { 0, 3, false }, { 3, 1, false }, { 5, 0, false } };
static uint64_t hand_ring[3] = { 0x7f0000000c60, 0x7f0010000030, 0x7f0020000030 };

static struct vt_arena_threads hand_map(void)
{
	struct vt_arena_threads t;

	memset(&t, 0, sizeof(t));
	t.known = true;
	t.threads = hand_threads;
	t.nthreads = 5;
	t.arenas = hand_users;
	t.ring = hand_ring;
	t.narenas = 3;
	t.on_arenas = 4;
	t.none = (struct vt_arena_users){ 4, 1, false };
	t.unknown = (struct vt_arena_users){ 5, 0, false };
	return t;
}

static struct vt_arena_threads not_known_map(void)
{
	struct vt_arena_threads t;

	memset(&t, 0, sizeof(t));
	snprintf(t.why, sizeof(t.why), "no thread pointer was found");
	return t;
}

/* Display column where byte offset off of line falls (UTF-8: continuation bytes take none). */
static size_t col_of(const char *line, size_t off)
{
	size_t i, col = 0;

	for (i = 0; i < off && line[i]; i++)
		if (((unsigned char)line[i] & 0xc0) != 0x80)
			col++;
	return col;
}

/* The line of text that starts with prefix (after indent spaces), copied into out; false when none. */
static bool line_starting(const char *text, const char *prefix, char *out, size_t cap)
{
	const char *p = text;

	while (p && *p) {
		const char *end = strchr(p, '\n'), *s = p;
		size_t len = end ? (size_t)(end - p) : strlen(p);

		while (*s == ' ' && s < p + len)
			s++;
		if (!strncmp(s, prefix, strlen(prefix))) {
			snprintf(out, cap, "%.*s", (int)len, p);
			return true;
		}
		p = end ? end + 1 : NULL;
	}
	out[0] = 0;
	return false;
}

/* The display column just past the cell of the column that ends at or before header column hdr_end. */
static size_t cell_end(const char *line, size_t hdr_end_col)
{
	size_t i, col = 0;

	for (i = 0; line[i]; i++) {
		if (((unsigned char)line[i] & 0xc0) == 0x80)
			continue;
		col++;
		if (col == hdr_end_col)
			return line[i] != ' ' && (line[i + 1] == ' ' || !line[i + 1]) ? col : 0;
	}
	return 0;
}

static char *render(int (*fn)(FILE *, const void *), const void *arg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	if (!f)
		return strdup("");
	CHECK_EQ_I64(fn(f, arg), 0);
	fclose(f);
	return text;
}

/* ---- vitals heap ---- */

struct heap_case {
	struct vt_heap_sample h;
	struct vt_heap_verdict v;
	struct vt_mi_arena arenas[3];
};

static void heap_case(struct heap_case *c, const struct vt_arena_threads *map)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->h.pid = 100;
	snprintf(c->h.comm, sizeof(c->h.comm), "svc");
	c->h.alloc.kind = VT_ALLOC_GLIBC;
	snprintf(c->h.alloc.version, sizeof(c->h.alloc.version), "2.36");
	c->h.method = VT_HEAP_PTRACE;
	c->h.mi.wide = true;
	c->h.mi.arena = 3u << 20;
	c->h.mi.uordblks = 1u << 20;
	c->h.mi.fordblks = 2u << 20;
	for (i = 0; i < 3; i++) {
		c->arenas[i].nr = (int)i;
		c->arenas[i].t.system_current = 1u << 20;
		c->arenas[i].t.rest_bytes = 600u << 10;
		c->arenas[i].t.rest_count = 12;
		c->arenas[i].t.subheaps = i ? 1 : 0;
	}
	c->h.info.arenas = c->arenas;
	c->h.info.n_arenas = 3;
	c->h.info.total.system_current = 3u << 20;
	c->h.has_info = true;
	c->h.threads = *map;
	vt_heap_judge(&c->h, 4096, &c->v);
}

static int heap_text(FILE *f, const void *arg)
{
	const struct heap_case *c = arg;

	return vt_render_heap_text(f, &c->h, &c->v, 4096, NULL);
}

static int heap_json(FILE *f, const void *arg)
{
	const struct heap_case *c = arg;

	return vt_render_heap_json(f, &c->h, &c->v, 4096, NULL);
}

static void test_arena_threads__heap_table_lines_up(void)
{
	struct vt_arena_threads map = hand_map();
	struct heap_case c;
	char header[512], row[512], *text, *at;
	const char *rows[] = { "0 (main)", "1 ", "2 ", "total" };
	const char *counts[] = { "3", "1", "0", "4" };
	size_t i, hdr_end, names_col;

	heap_case(&c, &map);
	text = render(heap_text, &c);
	CHECK(line_starting(text, "ARENA ", header, sizeof(header)));
	CHECK((at = strstr(header, "THREADS")) != NULL);
	hdr_end = at ? col_of(header, (size_t)(at - header) + strlen("THREADS")) : 0;
	CHECK((at = strstr(header, "USED BY")) != NULL);
	names_col = at ? col_of(header, (size_t)(at - header)) : 0;
	for (i = 0; i < 4; i++) {
		char want[32];

		CHECK(line_starting(text, rows[i], row, sizeof(row)));
		/* the count ends under the header's last letter */
		CHECK_EQ_U64(cell_end(row, hdr_end), hdr_end);
		snprintf(want, sizeof(want), " %s ", counts[i]);
		CHECK(strncmp(row + hdr_end - strlen(counts[i]) - 1, want, strlen(want)) == 0);
	}
	/* the names start under USED BY: two, then how many more */
	CHECK(line_starting(text, "0 (main)", row, sizeof(row)));
	CHECK((at = strstr(row, "main (100), io (102) +1")) != NULL);
	CHECK(at && col_of(row, (size_t)(at - row)) == names_col);
	CHECK(line_starting(text, "1 ", row, sizeof(row)));
	CHECK(strstr(row, "worker-1 (101)") != NULL);
	CHECK(strstr(text, "THREADS: how many of its 5 threads allocate from that arena") != NULL);
	CHECK(strstr(text, "; 1 has not allocated yet: idle (103)") != NULL);
	if (vt_test_failed_checks)
		printf("%s", text);
	free(text);
}

static void test_arena_threads__heap_not_known_says_why(void)
{
	struct vt_arena_threads map = not_known_map();
	struct heap_case c;
	char row[512], *text;

	heap_case(&c, &map);
	text = render(heap_text, &c);
	CHECK(line_starting(text, "0 (main)", row, sizeof(row)));
	CHECK(strstr(row, "        ? ") != NULL);
	CHECK(line_starting(text, "total", row, sizeof(row)));
	CHECK(strstr(row, " ? ") != NULL);
	CHECK(strstr(text, "THREADS ?: which arena each thread uses is not known: no thread pointer was found\n") != NULL);
	free(text);

	/* not asked for (vt_heap_take without thread_arenas): no column, no note */
	memset(&map, 0, sizeof(map));
	heap_case(&c, &map);
	text = render(heap_text, &c);
	CHECK(strstr(text, "THREADS") == NULL);
	CHECK(strstr(text, "USED BY") == NULL);
	CHECK(strstr(text, "TRIM COULD RETURN  HEAPS\n") != NULL);
	free(text);
}

static void test_arena_threads__heap_json(void)
{
	struct vt_arena_threads map = hand_map();
	struct heap_case c;
	json_t *doc, *a, *m;
	char *text;

	heap_case(&c, &map);
	text = render(heap_json, &c);
	doc = json_loads(text, 0, NULL);
	CHECK(doc != NULL);
	a = json_object_get(doc, "arenas");
	CHECK_EQ_U64(json_array_size(json_object_get(json_array_get(a, 0), "threads")), 3);
	CHECK_EQ_I64(json_integer_value(json_object_get(json_array_get(json_object_get(json_array_get(a, 0), "threads"), 1),
						      "tid")), 102);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(json_array_get(a, 1), "threads"), 0),
						    "name")), "worker-1");
	CHECK_EQ_U64(json_array_size(json_object_get(json_array_get(a, 2), "threads")), 0);
	CHECK(json_is_array(json_object_get(json_array_get(a, 2), "threads")));
	m = json_object_get(doc, "arena_threads");
	CHECK(json_is_true(json_object_get(m, "known")));
	CHECK(json_is_null(json_object_get(m, "why")));
	CHECK_EQ_I64(json_integer_value(json_object_get(m, "threads")), 5);
	CHECK_EQ_I64(json_integer_value(json_object_get(m, "on_arenas")), 4);
	CHECK_EQ_I64(json_integer_value(json_object_get(json_array_get(json_object_get(m, "not_allocated"), 0), "tid")), 103);
	json_decref(doc);
	free(text);

	map = not_known_map();
	heap_case(&c, &map);
	text = render(heap_json, &c);
	doc = json_loads(text, 0, NULL);
	a = json_object_get(doc, "arenas");
	CHECK(json_is_null(json_object_get(json_array_get(a, 0), "threads")));
	m = json_object_get(doc, "arena_threads");
	CHECK(json_is_false(json_object_get(m, "known")));
	CHECK_STR(json_string_value(json_object_get(m, "why")), "no thread pointer was found");
	CHECK(json_is_null(json_object_get(m, "threads")));
	json_decref(doc);
	free(text);
}

/* an arena made after the threads were read: its count is "?", the others' stand */
/*
 * ---- thread_arena found from memory alone (alloc/thread_arena.h) ----
 * One 20 KiB anonymous mapping whose thread pointer sits 0x740 bytes up it,
 * as nginx's main thread's does (the loader allocated it): its TLS, below
 * the thread pointer, is in the mapping, but the 4 KiB span read below it
 * starts on the unmapped page before.  Reads outside the mapping fail.
 */
#define FAKE_START 0x7f0000001000ull
#define FAKE_SIZE 0x5000ull
#define FAKE_TP (FAKE_START + 0x740)

static uint64_t fake_mem[FAKE_SIZE / 8];

static int fake_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	(void)ctx;
	if (addr < FAKE_START || addr - FAKE_START > FAKE_SIZE || len > FAKE_SIZE - (addr - FAKE_START))
		return -1;
	memcpy(out, (const char *)fake_mem + (addr - FAKE_START), len);
	return 0;
}

static void test_arena_threads__tls_near_the_mapping_start(void)
{
	const uint64_t arenas[2] = { 0x7f0000090c60ull, 0x7f0010000030ull };
	struct vt_region region = { .start = FAKE_START, .end = FAKE_START + FAKE_SIZE, .path = "",
				    .perms = "rw-p" };
	struct vt_region_list maps = { .v = &region, .n = 1, .cap = 1 };
	struct vt_heap_mem m = { .read = fake_read };
	const pid_t tids[1] = { 4242 };
	int arena_of[1] = { -7 };
	struct vt_err err;
	int32_t tid = 4242;

	memset(fake_mem, 0, sizeof(fake_mem));
	fake_mem[(FAKE_TP - FAKE_START) / 8] = FAKE_TP;          /* tcb */
	fake_mem[(FAKE_TP - FAKE_START) / 8 + 2] = FAKE_TP;      /* self */
	memcpy((char *)fake_mem + (FAKE_TP - FAKE_START) + 0x2d0, &tid, sizeof(tid));
	fake_mem[(FAKE_TP - 56 - FAKE_START) / 8] = arenas[0];   /* thread_arena: main_arena */
	vt_err_clear(&err);
	CHECK_EQ_I64(vt_glibc_thread_arenas(&m, &maps, tids, 1, arenas, 2, arena_of, &err), VT_OK);
	CHECK_EQ_I64(arena_of[0], 0);

	/* with no arena's address below it, nothing is guessed, and the message counts right */
	fake_mem[(FAKE_TP - 56 - FAKE_START) / 8] = 0x1234;
	vt_err_clear(&err);
	CHECK_EQ_I64(vt_glibc_thread_arenas(&m, &maps, tids, 1, arenas, 2, arena_of, &err), VT_E_NOTFOUND);
	CHECK_EQ_I64(arena_of[0], VT_THREAD_ARENA_UNKNOWN);
	CHECK(strstr(err.msg, "1 thread pointer found") != NULL);
}

static void test_arena_threads__later_arena(void)
{
	struct vt_arena_threads map = hand_map();
	struct vt_arena_users users[3] = { { 0, 3, false }, { 5, 0, true }, { 3, 1, false } };
	struct heap_case c;
	char row[512], *text;

	map.arenas = users;
	map.later = 1;
	heap_case(&c, &map);
	text = render(heap_text, &c);
	CHECK(line_starting(text, "1 ", row, sizeof(row)));
	CHECK(strstr(row, "        ? ") != NULL);
	CHECK(line_starting(text, "2 ", row, sizeof(row)));
	CHECK(strstr(row, "worker-1 (101)") != NULL);
	CHECK(strstr(text, "; ? on 1 arena made after the threads were read") != NULL);
	free(text);
}

/* ---- vitals census ---- */

static int census_text(FILE *f, const void *arg)
{
	return vt_render_census_text(f, arg);
}

static int census_json(FILE *f, const void *arg)
{
	return vt_render_census_json(f, arg);
}

static void census_case(struct vt_census *c, struct vt_arena_walk *aw, const struct vt_arena_threads *map)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->pid = 100;
	snprintf(c->comm, sizeof(c->comm), "svc");
	c->alloc.kind = VT_ALLOC_GLIBC;
	snprintf(c->alloc.version, sizeof(c->alloc.version), "2.36");
	for (i = 0; i < 3; i++) {
		memset(&aw[i], 0, sizeof(aw[i]));
		aw[i].addr = hand_ring[i];
		aw[i].main = i == 0;
		aw[i].heaps = 1;
		aw[i].chunks[VT_CHUNK_LIVE] = 1000 * (i + 1);
		aw[i].bytes[VT_CHUNK_LIVE] = 100000 * (i + 1);
	}
	c->walk.arenas = aw;
	c->walk.narenas = 3;
	c->main_arena = hand_ring[0];
	c->threads = *map;
}

static void test_arena_threads__census_table_lines_up(void)
{
	struct vt_arena_threads map = hand_map();
	struct vt_arena_walk aw[3];
	struct vt_census c;
	struct vt_census_report r = { &c, false };
	char header[512], row[512], *text, *at;
	const char *rows[] = { "main 0x7f0000000c60", "0x7f0010000030", "0x7f0020000030", "mmapped chunks", "total" };
	const char *counts[] = { "3", "1", "0", "-", "4" };
	size_t i, hdr_end;

	census_case(&c, aw, &map);
	text = render(census_text, &r);
	CHECK(line_starting(text, "arena ", header, sizeof(header)));
	CHECK((at = strstr(header, "threads")) != NULL);
	hdr_end = at ? col_of(header, (size_t)(at - header) + strlen("threads")) : 0;
	for (i = 0; i < 5; i++) {
		CHECK(line_starting(text, rows[i], row, sizeof(row)));
		CHECK_EQ_U64(cell_end(row, hdr_end), hdr_end);
		CHECK(strncmp(row + hdr_end - strlen(counts[i]), counts[i], strlen(counts[i])) == 0);
	}
	CHECK(strstr(text, "  THREADS: how many of its 5 threads allocate from that arena") != NULL);
	if (vt_test_failed_checks)
		printf("%s", text);
	free(text);

	map = not_known_map();
	census_case(&c, aw, &map);
	text = render(census_text, &r);
	CHECK(line_starting(text, "total", row, sizeof(row)));
	CHECK(row[hdr_end - 1] == '?');
	CHECK(strstr(text, "  THREADS ?: which arena each thread uses is not known: no thread pointer was found\n") != NULL);
	free(text);
}

static void test_arena_threads__census_json(void)
{
	struct vt_arena_threads map = hand_map();
	struct vt_arena_walk aw[3];
	struct vt_census c;
	struct vt_census_report r = { &c, false };
	json_t *doc, *a;
	char *text;

	census_case(&c, aw, &map);
	text = render(census_json, &r);
	doc = json_loads(text, 0, NULL);
	CHECK(doc != NULL);
	a = json_object_get(doc, "arenas");
	CHECK_EQ_U64(json_array_size(json_object_get(json_array_get(a, 0), "threads")), 3);
	CHECK_EQ_U64(json_array_size(json_object_get(json_array_get(a, 1), "threads")), 1);
	CHECK_EQ_I64(json_integer_value(json_object_get(json_object_get(doc, "arena_threads"), "on_arenas")), 4);
	json_decref(doc);
	free(text);
}

/* ---- the model, read from this process ---- */

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#ifndef UNDER_ASAN
/* A thread that allocates when told (at once, or at a second step, or never) and says its tid. */
struct worker {
	sem_t started, step, stepped, done;
	int when;                    /* 0: at once, 1: at the step, -1: never */
	pid_t tid;
	void *block;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	if (w->when == 0)
		w->block = malloc(4096);
	sem_post(&w->started);
	sem_wait(&w->step);
	if (w->when == 1)
		w->block = malloc(4096);
	sem_post(&w->stepped);
	sem_wait(&w->done);
	free(w->block);
	return NULL;
}

static int self_maps(struct vt_procfs *pfs, int *fd, struct vt_region_list *maps)
{
	struct vt_buf buf = VT_BUF_INIT(64u << 20);
	struct vt_err err;
	int rc;

	memset(maps, 0, sizeof(*maps));
	if ((rc = vt_pid_open(pfs, getpid(), fd, &err)))
		return rc;
	rc = vt_read_at(*fd, "maps", &buf, &err);
	if (!rc)
		rc = vt_maps_parse(buf.data, buf.len, maps, &err);
	vt_buf_release(&buf);
	return rc;
}

static const struct vt_arena_thread *find(const struct vt_arena_threads *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	return NULL;
}

static int arena_of(const struct vt_arena_threads *t, pid_t tid)
{
	const struct vt_arena_thread *x = find(t, tid);

	return x ? x->arena : -100;
}

#endif

static void test_arena_threads__this_process(void)
{
#ifdef UNDER_ASAN
	printf("# skipped: under ASan malloc is the sanitizer's, there are no glibc arenas to map\n");
#else
	static struct worker w[3];   /* A and B allocate at once, C at the step */
	static const int when[3] = { 0, 0, 1 };
	pthread_t th[3];
	struct vt_arena_threads t;
	struct vt_region_list maps;
	struct vt_procfs pfs;
	struct vt_err err;
	uint64_t a, b;
	size_t i, sum = 0, before;
	int fd = -1;
	void *mine = malloc(64);    /* the main thread has allocated: main_arena */

	memset(&t, 0, sizeof(t));
	for (i = 0; i < 3; i++) {
		sem_init(&w[i].started, 0, 0);
		sem_init(&w[i].step, 0, 0);
		sem_init(&w[i].stepped, 0, 0);
		sem_init(&w[i].done, 0, 0);
		w[i].when = when[i];
		pthread_create(&th[i], NULL, worker_main, &w[i]);
		sem_wait(&w[i].started);
	}
	CHECK_EQ_I64(vt_procfs_open(&pfs, NULL, NULL, &err), VT_OK);
	CHECK_EQ_I64(self_maps(&pfs, &fd, &maps), VT_OK);
	CHECK_EQ_I64(vt_arena_threads_read_live(&pfs, fd, getpid(), &maps, &t), VT_OK);
	if (!t.known)
		printf("#   not known: %s\n", t.why);
	CHECK(t.known);
	CHECK_EQ_U64(t.nthreads, 4);
	CHECK_EQ_U64(t.narenas, 3);                   /* main_arena, A's, B's */
	for (i = 0; t.known && i < t.narenas; i++)
		sum += t.arenas[i].n;
	CHECK_EQ_U64(sum, t.on_arenas);
	CHECK_EQ_U64(t.on_arenas, 3);
	CHECK_EQ_U64(t.on_arenas + t.none.n + t.unknown.n, t.nthreads);
	CHECK_EQ_I64(arena_of(&t, getpid()), 0);
	CHECK(arena_of(&t, w[0].tid) > 0 && arena_of(&t, w[1].tid) > 0);
	CHECK(arena_of(&t, w[0].tid) != arena_of(&t, w[1].tid));
	CHECK_EQ_I64(arena_of(&t, w[2].tid), VT_THREAD_ARENA_NONE);
	CHECK_EQ_U64(t.none.n, 1);
	CHECK_EQ_U64(t.unknown.n, 0);
	/* sorted by arena, then tid: each arena's threads are threads[first .. first + n) */
	for (i = 0; t.known && i < t.narenas; i++)
		if (t.arenas[i].n)
			CHECK_EQ_I64(t.threads[t.arenas[i].first].arena, (int64_t)i);

	/* C allocates now: glibc makes it an arena and puts it right after main_arena */
	if (t.known) {
		a = t.ring[arena_of(&t, w[0].tid)];
		b = t.ring[arena_of(&t, w[1].tid)];
		before = t.narenas;
		for (i = 0; i < 3; i++)
			sem_post(&w[i].step);
		for (i = 0; i < 3; i++)
			sem_wait(&w[i].stepped);
		CHECK_EQ_I64(vt_arena_threads_ring_now(getpid(), &t), VT_OK);
		CHECK_EQ_U64(t.narenas, before + 1);
		CHECK_EQ_U64(t.later, 1);
		CHECK(t.arenas[1].later);                 /* the newest is next to main_arena */
		CHECK_EQ_U64(t.arenas[1].n, 0);
		/* A and B keep their arenas by address, at indices one further */
		CHECK(t.ring[arena_of(&t, w[0].tid)] == a && t.ring[arena_of(&t, w[1].tid)] == b);
		CHECK(arena_of(&t, w[0].tid) >= 2 && arena_of(&t, w[1].tid) >= 2);
		CHECK_EQ_I64(arena_of(&t, w[2].tid), VT_THREAD_ARENA_NONE);   /* as it was when read */
		CHECK_EQ_U64(t.on_arenas, 3);
	} else {
		for (i = 0; i < 3; i++)
			sem_post(&w[i].step);
	}
	vt_arena_threads_release(&t);
	vt_region_list_release(&maps);
	if (fd >= 0)
		close(fd);
	vt_procfs_close(&pfs);
	for (i = 0; i < 3; i++) {
		sem_post(&w[i].done);
		pthread_join(th[i], NULL);
	}
	free(mine);
#endif
}

VT_TEST_MAIN(test_arena_threads__heap_table_lines_up, test_arena_threads__heap_not_known_says_why,
	     test_arena_threads__heap_json, test_arena_threads__later_arena, test_arena_threads__census_table_lines_up,
	     test_arena_threads__census_json, test_arena_threads__this_process,
	     test_arena_threads__tls_near_the_mapping_start)
