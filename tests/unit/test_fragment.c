/*
 * test_fragment.c — the most repeated fragments (src/sample/fragment.c),
 * on synthetic chunks of unique random text: a fragment at varying offsets
 * found whole with its count, once per chunk, overlapping fragments told
 * apart, nothing across a chunk's end, nothing under VT_FRAGMENT_K bytes,
 * and the space-saving bounds with far more fragments than counters.
 * Through the content census too (opts.fragments), with binary bytes around.
 */
#include "harness.h"
#include "rand.h"

#include <stdbool.h>
#include <time.h>

#include "sample/content.h"
#include "sample/fragment.h"

static const char ident[] = "user=atus-1-dfql6hsq";   /* 20 bytes, VT_FRAGMENT_SURE */

static uint64_t rnd(uint64_t n)
{
	return (uint64_t)(uniform() * (double)n);
}

static struct vt_fragments *finder(size_t counters)
{
	struct vt_fragments *f = NULL;

	CHECK_EQ_I64(vt_fragments_new(counters, &f), 0);
	if (!f) {
		printf("Bail out! no memory\n");
		exit(2);
	}
	return f;
}

/* n bytes of random text (lower case, digits, a few signs: nothing the fragments hold in a row) */
static void noise(uint8_t *p, size_t n)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789 ,.:;_-/ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)alphabet[rnd(sizeof(alphabet) - 1)];
}

/* A chunk: random text of len bytes with frag (may be NULL) at off. */
static void chunk_with(uint8_t *buf, size_t len, const char *frag, size_t off)
{
	noise(buf, len);
	if (frag)
		memcpy(buf + off, frag, strlen(frag));
}

static bool is(const struct vt_fragment *x, const char *want)
{
	return x->len == strlen(want) && memcmp(x->bytes, want, x->len) == 0;
}

static bool holds(const struct vt_fragment *x, uint64_t truth)
{
	return x->count - x->count_err <= truth && truth <= x->count;
}

static void test_fragment__varying_offsets(void)
{
	struct vt_fragments *f = finder(0);
	struct vt_fragment top[4];
	uint8_t buf[600];
	size_t i, n, chunks = 5000;

	seed(1);
	for (i = 0; i < chunks; i++) {
		size_t len = 20 + rnd(500);

		chunk_with(buf, len, ident, rnd(len - 20 + 1));
		vt_fragments_chunk(f);
		vt_fragments_run(f, buf, len);
	}
	n = vt_fragments_top(f, top, 4);
	CHECK(n >= 1);
	CHECK(is(&top[0], ident));
	CHECK(holds(&top[0], chunks));
	CHECK(top[0].count_err <= chunks / 100);
	CHECK(!top[0].open_left && !top[0].open_right);
	/* nothing else is shared by more than a few chunks (ident and a byte around it: 1 in 70) */
	CHECK(n < 2 || top[1].count < 5000 / 70 * 2);
	printf("# %zu chunks: \"%.*s\" %llu-%llu; %llu pieces sampled, %zu bytes held\n", chunks, (int)top[0].len,
	       (const char *)top[0].bytes, (unsigned long long)(top[0].count - top[0].count_err),
	       (unsigned long long)top[0].count, (unsigned long long)vt_fragments_sampled(f), vt_fragments_memory(f));
	vt_fragments_free(f);
}

static void test_fragment__once_per_chunk(void)
{
	struct vt_fragments *f = finder(0);
	struct vt_fragment top[2];
	uint8_t buf[300];
	size_t i;

	seed(2);
	for (i = 0; i < 300; i++) {
		chunk_with(buf, sizeof(buf), ident, 10);
		memcpy(buf + 100, ident, 20);
		memcpy(buf + 200, ident, 20);
		vt_fragments_chunk(f);
		/* in two runs too: a run ends at a byte that is not text, the chunk does not */
		vt_fragments_run(f, buf, 150);
		vt_fragments_run(f, buf + 151, sizeof(buf) - 151);
	}
	CHECK_EQ_U64(vt_fragments_top(f, top, 2), 1);
	CHECK(is(&top[0], ident));
	CHECK(holds(&top[0], 300));
	CHECK(top[0].count <= 300);
	vt_fragments_free(f);
}

static void test_fragment__overlapping(void)
{
	/* P in 1500 chunks, P followed by Q in 1000 of them: two fragments, P and PQ */
	static const char p[] = "tenant=acme-prod-eu1;", pq[] = "tenant=acme-prod-eu1;session=Zq81-kk0-aa";
	struct vt_fragments *f = finder(0);
	struct vt_fragment top[8];
	uint8_t buf[400];
	size_t i, n, found_p = 0, found_pq = 0;

	seed(3);
	for (i = 0; i < 1500; i++) {
		size_t len = 60 + rnd(300);

		chunk_with(buf, len, i < 1000 ? pq : p, rnd(len - sizeof(pq) + 2));
		vt_fragments_chunk(f);
		vt_fragments_run(f, buf, len);
	}
	n = vt_fragments_top(f, top, 8);
	for (i = 0; i < n; i++) {
		printf("# %llu-%llu \"%.*s\"\n", (unsigned long long)(top[i].count - top[i].count_err),
		       (unsigned long long)top[i].count, (int)top[i].len, (const char *)top[i].bytes);
		if (is(&top[i], p))
			found_p += holds(&top[i], 1500);
		if (is(&top[i], pq))
			found_pq += holds(&top[i], 1000);
	}
	CHECK_EQ_U64(found_p, 1);
	CHECK_EQ_U64(found_pq, 1);
	CHECK(n >= 2 && is(&top[0], p) && is(&top[1], pq));
	vt_fragments_free(f);
}

static void test_fragment__not_across_chunks(void)
{
	struct vt_fragments *f = finder(0);
	struct vt_fragment top[8];
	uint8_t a[100], b[100];
	size_t i, n, k;

	seed(4);
	for (i = 0; i < 1000; i++) {
		/* the first half of ident ends chunk a, the second half starts chunk b */
		chunk_with(a, sizeof(a), NULL, 0);
		chunk_with(b, sizeof(b), NULL, 0);
		memcpy(a + sizeof(a) - 10, ident, 10);
		memcpy(b, ident + 10, 10);
		vt_fragments_chunk(f);
		vt_fragments_run(f, a, sizeof(a));
		vt_fragments_chunk(f);
		vt_fragments_run(f, b, sizeof(b));
	}
	n = vt_fragments_top(f, top, 8);
	for (k = 0; k < n; k++) {
		CHECK(top[k].count < 20);
		CHECK(!memmem(top[k].bytes, top[k].len, ident, 20));
	}
	vt_fragments_free(f);
}

static void test_fragment__short_not_counted(void)
{
	/*
	 * 11 bytes shared by every chunk: below VT_FRAGMENT_K, never a fragment
	 * (with the byte after it, 1 in 70 chunks share 12 bytes: those may be)
	 */
	struct vt_fragments *f = finder(0);
	struct vt_fragment top[8];
	uint8_t buf[200];
	size_t i, n, k;

	seed(5);
	for (i = 0; i < 2000; i++) {
		chunk_with(buf, sizeof(buf), "user=atus-1", rnd(150));
		vt_fragments_chunk(f);
		vt_fragments_run(f, buf, sizeof(buf));
	}
	/* and runs shorter than a piece: let go */
	for (i = 0; i < 2000; i++) {
		vt_fragments_chunk(f);
		vt_fragments_run(f, (const uint8_t *)ident, VT_FRAGMENT_K - 1);
	}
	n = vt_fragments_top(f, top, 8);
	for (k = 0; k < n; k++)
		CHECK(top[k].count < 2000 / 70 * 2);
	vt_fragments_free(f);
}

/* Far more fragments than counters: every count a bound of the truth, the heaviest all found. */
static void test_fragment__bounds_with_few_counters(void)
{
	enum { NFRAG = 400, CHUNKS = 40000 };
	static char frags[NFRAG][24];
	static uint64_t truth[NFRAG];
	struct vt_fragments *f = finder(64);
	struct vt_fragment top[64];
	uint8_t buf[200];
	size_t i, n, k, matched = 0, heavy_found = 0;
	uint64_t min_count = UINT64_MAX;

	seed(6);
	for (k = 0; k < NFRAG; k++)
		snprintf(frags[k], sizeof(frags[k]), "id=%03zu/%016llx", k,
			 (unsigned long long)rnd(1ull << 62));
	memset(truth, 0, sizeof(truth));
	for (i = 0; i < CHUNKS; i++) {
		/* Zipf-like: fragment k with weight 1 / (k + 1) */
		double u = uniform() * 6.57, acc = 1.0;   /* 6.57: about H(400) */
		size_t pick = 0;

		while (pick + 1 < NFRAG && acc < u)
			acc += 1.0 / (double)(++pick + 1);
		size_t len = 60 + rnd(140);

		truth[pick]++;
		chunk_with(buf, len, frags[pick], rnd(30));
		vt_fragments_chunk(f);
		vt_fragments_run(f, buf, len);
	}
	n = vt_fragments_top(f, top, 64);
	for (i = 0; i < n; i++) {
		if (top[i].count < min_count)
			min_count = top[i].count;
		for (k = 0; k < NFRAG; k++)
			if (is(&top[i], frags[k])) {
				matched++;
				CHECK(holds(&top[i], truth[k]));
				if (!holds(&top[i], truth[k]))
					printf("# %s: %llu-%llu, truth %llu\n", frags[k],
					       (unsigned long long)(top[i].count - top[i].count_err),
					       (unsigned long long)top[i].count, (unsigned long long)truth[k]);
			}
	}
	/* every fragment held by more chunks than the smallest count is reported */
	for (k = 0; k < NFRAG; k++) {
		bool found = false;

		if (truth[k] <= min_count)
			continue;
		for (i = 0; i < n && !found; i++)
			found = is(&top[i], frags[k]);
		CHECK(found);
		heavy_found += found;
	}
	printf("# %zu reported, %zu of them known fragments, %zu above the smallest count (%llu) all found\n", n,
	       matched, heavy_found, (unsigned long long)min_count);
	CHECK(heavy_found >= 5);
	CHECK(matched >= 10);
	vt_fragments_free(f);
}

static void test_fragment__through_content(void)
{
	struct vt_content_opts o = { .fragments = true };
	struct vt_content *c = NULL, *off = NULL;
	struct vt_content_totals t;
	struct vt_fragment top[2];
	struct vt_err err;
	uint8_t buf[512];
	size_t i;

	CHECK_EQ_I64(vt_content_new(&o, &c, &err), VT_OK);
	CHECK_EQ_I64(vt_content_new(NULL, &off, &err), VT_OK);
	if (!c || !off)
		return;
	seed(7);
	for (i = 0; i < 3000; i++) {
		size_t len = 64 + rnd(400), at = 16 + rnd(len - 16 - 20);

		chunk_with(buf, len, ident, at);
		memset(buf, 0, 16);   /* a free chunk's links, say */
		buf[at + 20 + rnd(len - at - 20)] = 0xa5;
		vt_content_add(c, buf, len, len + 8);
		vt_content_add(off, buf, len, len + 8);
	}
	CHECK_EQ_U64(vt_content_top_fragments(c, top, 2) >= 1, 1);
	CHECK(is(&top[0], ident) && holds(&top[0], 3000));
	vt_content_totals(c, &t);
	CHECK(t.fragment_pieces > 3000);
	CHECK_EQ_U64(vt_content_top_fragments(off, top, 2), 0);
	vt_content_totals(off, &t);
	CHECK_EQ_U64(t.fragment_pieces, 0);
	vt_content_free(c);
	vt_content_free(off);
}

/* The cost on text: MB of text per CPU second through the content census, with and without fragments (asserts none). */
static void test_fragment__speed(void)
{
	size_t len = 32 << 20, i;
	uint8_t *buf = malloc(len);
	int with;

	if (!buf)
		return;
	seed(8);
	noise(buf, len);
	for (i = 200; i < len; i += 200 + rnd(300))
		buf[i] = 0;
	for (with = 0; with < 2; with++) {
		struct vt_content_opts o = { .fragments = with };
		struct vt_content *c = NULL;
		struct vt_err err;
		struct timespec a, b;
		double s;

		if (vt_content_new(&o, &c, &err) != VT_OK)
			break;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		for (i = 0; i + 4096 <= len; i += 4096)
			vt_content_add(c, buf + i, 4096, 4096);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		printf("# all-text chunks, fragments %s: %.0f MB per CPU second\n", with ? "on" : "off", (double)len / 1e6 / s);
		vt_content_free(c);
	}
	free(buf);
}

VT_TEST_MAIN(test_fragment__varying_offsets, test_fragment__once_per_chunk, test_fragment__overlapping,
	     test_fragment__not_across_chunks, test_fragment__short_not_counted,
	     test_fragment__bounds_with_few_counters, test_fragment__through_content, test_fragment__speed)
