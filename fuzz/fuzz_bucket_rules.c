/*
 * fuzz_bucket_rules.c — the bucket rule-file parser
 * (src/analyze/profile_buckets.c) on arbitrary bytes, and the rules it
 * accepts classifying a small profile.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  On success the promises are asserted
 * (every bucket name printable, no longer than the cap; the built-ins
 * present and last; each rule's bucket in range); on failure a usage error
 * whose message starts "line N: ".  Seeds: fuzz/corpus/bucket_rules/.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/profile_buckets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void classify_some(const struct vt_bucket_rules *r)
{
	static const char *const names[] = { "send", "json_parse", "malloc", "", "tcp_sendmsg" };
	struct vt_profile *p;
	struct vt_bucket_classifier *c;
	struct vt_err err;
	uint32_t locs[5];

	if (vt_profile_new(&p, &err) != VT_OK)
		return;
	uint32_t mod = vt_profile_intern_str(p, "libc.so.6");
	for (uint32_t i = 0; i < 5; i++)
		locs[i] = vt_profile_intern_loc(p, 0x1000 + i, i,
						vt_profile_intern_func(p, vt_profile_intern_str(p, names[i]),
								       i == 4 ? 0 : mod),
						i == 4);
	if (vt_profile_add(p, locs + 4, 1, 0, VT_PROF_RUNNING, 0, false, 1, &err) == VT_OK &&
	    vt_profile_add(p, locs, 4, 0, VT_PROF_RUNNING, 0, false, 1, &err) == VT_OK &&
	    vt_bucket_classifier_new(r, p, &c, &err) == VT_OK) {
		for (uint32_t i = 0; i < p->nstacks; i++)
			assert(vt_bucket_classify(c, &p->stacks[i], NULL, NULL) < r->nbuckets);
		vt_bucket_classifier_free(&c);
	}
	vt_profile_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_bucket_rules *r;
	struct vt_err err;
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	if (vt_bucket_rules_parse(buf, size, &r, &err) == VT_OK) {
		assert(r->nbuckets >= VT_BK__COUNT && r->nbuckets <= VT_BUCKET_MAX_BUCKETS);
		assert(r->nuser <= VT_BUCKET_MAX_RULES && r->nrules > r->nuser);
		for (uint32_t i = 0; i < r->nbuckets; i++) {
			size_t n = strlen(r->buckets[i].name);
			assert(n > 0 && n <= VT_BUCKET_NAME_MAX);
			for (size_t k = 0; k < n; k++)
				assert((unsigned char)r->buckets[i].name[k] >= 0x20 &&
				       r->buckets[i].name[k] != 0x7f && r->buckets[i].name[k] != ':');
		}
		for (uint32_t i = 0; i < r->nrules; i++)
			assert(r->rules[i].bucket < r->nbuckets && r->rules[i].glob);
		classify_some(r);
		vt_bucket_rules_free(&r);
	} else {
		assert((err.code == VT_E_USAGE && strncmp(err.msg, "line ", 5) == 0) ||
		       err.code == VT_E_NOMEM);
	}
	free(buf);
	return 0;
}
