/*
 * jemalloc.c — the jemalloc recipe (see jemalloc.h).
 */
#include "alloc/jemalloc.h"

#include "proc/mem.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The scratch layout of one mallctl call. */
#define JE_NAME 0         /* mallctl name, NUL-terminated, < 64 bytes */
#define JE_OLD 64         /* old value */
#define JE_OLDLEN 72      /* size_t *oldlenp */
#define JE_NEW 80         /* new value (epoch) */

_Static_assert(JE_NEW + 8 <= VT_ALLOC_SCRATCH_LEN, "a mallctl call fits the scratch area");

/* mallctl(name, &old, &len, write_epoch ? &1 : NULL, ...) into *value (len bytes of it). */
static int mallctl_read(struct vt_alloc_calls *cs, uint64_t mallctl, const char *name, size_t len,
			bool write_epoch, uint64_t *value, struct vt_err *err)
{
	unsigned char in[VT_ALLOC_SCRATCH_LEN] = { 0 };
	struct vt_inject_call c = { 0 };
	uint64_t one = 1, ret;
	int rc;

	snprintf((char *)in + JE_NAME, 64, "%s", name);
	memcpy(in + JE_OLDLEN, &len, sizeof(len));
	memcpy(in + JE_NEW, &one, sizeof(one));
	c.func = mallctl;
	c.args[0] = JE_NAME;
	c.args[1] = JE_OLD;
	c.args[2] = JE_OLDLEN;
	c.args[3] = write_epoch ? JE_NEW : 0;
	c.args[4] = write_epoch ? sizeof(uint64_t) : 0;
	c.scratch_args = write_epoch ? 0xf : 0x7;
	c.scratch_in = in;
	c.abandon = VT_INJECT_ABANDON_LATE;   /* mallctl may wait while holding ctl_mtx */
	if ((rc = vt_alloc_call(cs, &c, &ret, err)))
		return rc;
	if ((int)ret != 0)
		return vt_err_set(err, VT_E_FAIL, 0, "mallctl(\"%s\") failed with error %d", name, (int)ret);
	*value = 0;
	memcpy(value, cs->scratch + JE_OLD, len);
	return VT_OK;
}

int vt_jemalloc_read(struct vt_alloc_calls *cs, uint64_t mallctl, struct vt_alloc_stats *out,
		     struct vt_err *err)
{
	static const struct {
		const char *mallctl;
		const char *key;
		const char *label;
	} stats[] = {
		{ "stats.allocated", "allocated", "allocated (live)" },
		{ "stats.active", "active", "active" },
		{ "stats.resident", "resident", "resident" },
		{ "stats.mapped", "mapped", "mapped" },
		{ "stats.retained", "retained", "retained" },
		{ "stats.metadata", "metadata", "metadata" },
	};
	uint64_t v, version_ptr, allocated, resident;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = mallctl_read(cs, mallctl, "epoch", 8, true, &v, err)))
		return rc;
	for (i = 0; i < sizeof(stats) / sizeof(stats[0]); i++) {
		if ((rc = mallctl_read(cs, mallctl, stats[i].mallctl, 8, false, &v, err)))
			return rc;
		vt_alloc_stats_add(out, stats[i].key, stats[i].label, v, true);
	}
	if ((rc = mallctl_read(cs, mallctl, "arenas.narenas", 4, false, &out->narenas, err)))
		return rc;
	if (mallctl_read(cs, mallctl, "version", 8, false, &version_ptr, NULL) == VT_OK &&
	    vt_mem_read(cs->pid, version_ptr, out->version, sizeof(out->version) - 1, NULL) == VT_OK)
		out->version[sizeof(out->version) - 1] = '\0';
	else
		out->version[0] = '\0';
	out->version[strcspn(out->version, "\n")] = '\0';
	allocated = vt_alloc_stats_get(out, "allocated")->value;
	resident = vt_alloc_stats_get(out, "resident")->value;
	out->sum.live = (double)allocated;
	out->sum.held = (double)resident;
	out->sum.free = resident > allocated ? (double)(resident - allocated) : 0;
	out->sum.trimmable = NAN;
	return VT_OK;
}
