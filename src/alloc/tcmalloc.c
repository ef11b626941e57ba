/*
 * tcmalloc.c — the gperftools tcmalloc recipe (see tcmalloc.h).
 */
#include "alloc/tcmalloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The scratch layout of one MallocExtension_GetNumericProperty call. */
#define TC_NAME 0         /* property name, NUL-terminated, < 64 bytes */
#define TC_VALUE 64       /* size_t value */

_Static_assert(TC_VALUE + 8 <= VT_ALLOC_SCRATCH_LEN, "a property call fits the scratch area");

/* MallocExtension_GetNumericProperty(name, &value); *known false when tcmalloc does not know name. */
static int property(struct vt_alloc_calls *cs, uint64_t fn, const char *name, uint64_t *value, bool *known,
		    struct vt_err *err)
{
	unsigned char in[VT_ALLOC_SCRATCH_LEN] = { 0 };
	struct vt_inject_call c = { 0 };
	uint64_t ret;
	int rc;

	snprintf((char *)in + TC_NAME, 64, "%s", name);
	c.func = fn;
	c.args[0] = TC_NAME;
	c.args[1] = TC_VALUE;
	c.scratch_args = 0x3;
	c.scratch_in = in;
	c.abandon = VT_INJECT_ABANDON_LATE;
	if ((rc = vt_alloc_call(cs, &c, &ret, err)))
		return rc;
	*known = (int)ret != 0;
	*value = 0;
	if (*known)
		memcpy(value, cs->scratch + TC_VALUE, sizeof(*value));
	return VT_OK;
}

int vt_tcmalloc_read(struct vt_alloc_calls *cs, uint64_t get_numeric_property, struct vt_alloc_stats *out,
		     struct vt_err *err)
{
	static const struct {
		const char *property;
		const char *key;
		const char *label;
		bool every_release;     /* else left out when this release does not know it */
	} figures[] = {
		{ "generic.current_allocated_bytes", "allocated", "allocated (live)", true },
		{ "generic.heap_size", "heap_size", "heap", true },
		{ "tcmalloc.pageheap_free_bytes", "pageheap_free", "page heap free", true },
		{ "tcmalloc.pageheap_unmapped_bytes", "pageheap_unmapped", "released", true },
		{ "tcmalloc.central_cache_free_bytes", "central_cache_free", "central cache free", false },
		{ "tcmalloc.transfer_cache_free_bytes", "transfer_cache_free", "transfer cache free", false },
		{ "tcmalloc.thread_cache_free_bytes", "thread_cache_free", "thread caches free", false },
	};
	uint64_t v, live, heap, unmapped;
	size_t i;
	bool known;
	int rc;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		if ((rc = property(cs, get_numeric_property, figures[i].property, &v, &known, err)))
			return rc;
		if (known)
			vt_alloc_stats_add(out, figures[i].key, figures[i].label, v, true);
		else if (figures[i].every_release)
			return vt_err_set(err, VT_E_FAIL, 0, "tcmalloc does not know the property \"%s\"",
					  figures[i].property);
	}
	live = vt_alloc_stats_get(out, "allocated")->value;
	heap = vt_alloc_stats_get(out, "heap_size")->value;
	unmapped = vt_alloc_stats_get(out, "pageheap_unmapped")->value;
	out->sum.live = (double)live;
	out->sum.held = heap > unmapped ? (double)(heap - unmapped) : 0;
	out->sum.free = out->sum.held > out->sum.live ? out->sum.held - out->sum.live : 0;
	out->sum.trimmable = NAN;
	return VT_OK;
}
