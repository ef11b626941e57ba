/*
 * alloc_buckets.h — an allocation profile's sites put in the buckets of
 * vitals profile (analyze/profile_buckets.h): what kind of work allocates
 * ("JSON/serialization allocates 40% of the bytes"), with a team's own
 * rules first.
 *
 * A site's bucket is that of its stack (its first one seen, the site
 * first, the allocator's own frames and wrappers left out), walked from the
 * site toward the root as a CPU profile's stack is from its leaf: the first
 * frame a rule claims decides, "other" when none does.
 */
#ifndef VT_ANALYZE_ALLOC_BUCKETS_H
#define VT_ANALYZE_ALLOC_BUCKETS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/profile_buckets.h"
#include "base/error.h"
#include "sample/allocs.h"

struct vt_alloc_bucket {
	char name[VT_BUCKET_NAME_MAX + 1];
	uint64_t calls, bytes, linked, freed, freed_bytes, live_bytes;
	size_t sites;
	size_t top_site;          /* its site of the most bytes (index into the profile's sites) */
};

struct vt_alloc_buckets {
	struct vt_alloc_bucket *v;   /* the buckets some site fell in, by bytes, most first */
	size_t n;
	uint32_t *site_bucket;    /* per site of the profile: its index in v */
	size_t nsites;
};

/* Bucket a's sites by rules.  VT_E_NOMEM.  Release with vt_alloc_buckets_release either way. */
int vt_alloc_buckets_compute(const struct vt_allocs *a, const struct vt_bucket_rules *rules,
			     struct vt_alloc_buckets *out, struct vt_err *err);
void vt_alloc_buckets_release(struct vt_alloc_buckets *b);

#endif
