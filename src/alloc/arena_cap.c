/*
 * arena_cap.c — the glibc arena limit in force (see arena_cap.h).
 */
#include "alloc/arena_cap.h"
#include "base/scan.h"
#include "proc/environ.h"

#include <stdio.h>
#include <string.h>

const char *vt_cap_source_name(enum vt_cap_source s)
{
	switch (s) {
	case VT_CAP_TUNABLE: return "tunable";
	case VT_CAP_ENV: return "env";
	case VT_CAP_DEFAULT: return "default";
	default: return "unknown";
	}
}

/* glibc accepts a positive decimal (tunables also take 0x hex; rare). */
static bool parse_count(const char *v, size_t len, uint64_t *out)
{
	struct vt_scan s = vt_scan_init(v, len);

	return vt_scan_u64(&s, out) && vt_scan_eof(&s) && *out > 0;
}

void vt_arena_cap_decide(const char *env, size_t len, int ncpus, struct vt_arena_cap *out)
{
	const char *tun, *val;
	size_t tun_len, val_len;
	uint64_t n;

	memset(out, 0, sizeof(*out));
	if (!env) {
		snprintf(out->source_text, sizeof(out->source_text),
			 "unknown: environ unreadable");
		return;
	}
	if (vt_environ_get(env, len, "GLIBC_TUNABLES", &tun, &tun_len) &&
	    vt_tunables_get(tun, tun_len, "glibc.malloc.arena_max", &val, &val_len) &&
	    parse_count(val, val_len, &n)) {
		out->source = VT_CAP_TUNABLE;
		out->value = n;
		snprintf(out->source_text, sizeof(out->source_text),
			 "GLIBC_TUNABLES glibc.malloc.arena_max=%llu", (unsigned long long)n);
		if (vt_environ_get(env, len, "MALLOC_ARENA_MAX", &val, &val_len))
			snprintf(out->note, sizeof(out->note),
				 "MALLOC_ARENA_MAX is also set; the tunable takes precedence");
		return;
	}
	if (vt_environ_get(env, len, "MALLOC_ARENA_MAX", &val, &val_len)) {
		if (parse_count(val, val_len, &n)) {
			out->source = VT_CAP_ENV;
			out->value = n;
			snprintf(out->source_text, sizeof(out->source_text), "MALLOC_ARENA_MAX=%llu",
				 (unsigned long long)n);
			return;
		}
		snprintf(out->note, sizeof(out->note),
			 "MALLOC_ARENA_MAX='%.*s' is not a positive number; glibc ignores it",
			 (int)(val_len > 32 ? 32 : val_len), val);
	}
	out->source = VT_CAP_DEFAULT;
	out->value = (uint64_t)(ncpus > 0 ? ncpus : 1) * 8;
	snprintf(out->source_text, sizeof(out->source_text), "glibc default 8 x %d CPUs",
		 ncpus > 0 ? ncpus : 1);
	if (!out->note[0])
		snprintf(out->note, sizeof(out->note),
			 "a mallopt(M_ARENA_MAX) call inside the program would not show here");
}

uint64_t vt_mmap_threshold_floor(const char *env, size_t len)
{
	const char *tun, *val;
	size_t tun_len, val_len;
	uint64_t floor = 128u << 10, n;
	struct vt_scan s;

	if (!env)
		return floor;
	if (vt_environ_get(env, len, "GLIBC_TUNABLES", &tun, &tun_len) &&
	    vt_tunables_get(tun, tun_len, "glibc.malloc.mmap_threshold", &val, &val_len)) {
		s = vt_scan_init(val, val_len);
		if (vt_scan_u64(&s, &n) && n < floor)
			floor = n;
	}
	if (vt_environ_get(env, len, "MALLOC_MMAP_THRESHOLD_", &val, &val_len)) {
		s = vt_scan_init(val, val_len);
		if (vt_scan_u64(&s, &n) && n < floor)
			floor = n;
	}
	return floor ? floor : 4096;
}
