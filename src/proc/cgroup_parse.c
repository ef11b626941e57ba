/*
 * cgroup_parse.c — the pure parsers of the cgroup files vitals reads:
 * /proc/PID/cgroup (cgroups(7)), the "key value" files (memory.events,
 * memory.oom_control, cpu.stat), single values and limits ("max" or a
 * number), v2 cpu.max and v1 cpu.cfs_quota_us.  They never read a file or
 * guess a figure: a key a file lacks stays VT_NA.  All text is untrusted;
 * each parser takes (buf, len), needs no NUL and is fuzzed
 * (fuzz/fuzz_cgroup.c).  Finding and reading the files is cgroup.c's job.
 */
#include "proc/cgroup_parse.h"
#include "proc/cgroup.h"
#include "base/scan.h"
#include "base/unknown.h"

#include <string.h>

/* Nothing but blanks until the end (of the line being scanned). */
static bool scan_only_blanks_left(struct vt_scan *s)
{
	vt_scan_blanks(s);
	return vt_scan_eof(s);
}

/* ---- /proc/PID/cgroup ---- */

struct membership_line {
	uint64_t hierarchy;        /* 0 for the v2 hierarchy */
	const char *controllers;   /* "memory", "cpu,cpuacct", "name=systemd", or empty */
	size_t controllers_len;
	const char *path;
	size_t path_len;
};

/* "hierarchy-ID:controller-list:cgroup-path" (cgroups(7)); the path may hold ':'. */
static bool membership_split(const char *line, size_t len, struct membership_line *ml)
{
	struct vt_scan s = vt_scan_init(line, len);
	const char *colon;

	if (!vt_scan_u64(&s, &ml->hierarchy) || !vt_scan_char(&s, ':'))
		return false;
	colon = memchr(s.p, ':', (size_t)(s.end - s.p));
	if (!colon)
		return false;
	ml->controllers = s.p;
	ml->controllers_len = (size_t)(colon - s.p);
	ml->path = colon + 1;
	ml->path_len = (size_t)(s.end - ml->path);
	return ml->path_len && ml->path[0] == '/';
}

static int membership_store(const struct membership_line *ml, char *dst, size_t cap,
			    struct vt_err *err)
{
	if (dst[0])
		return VT_OK;   /* listed twice: keep the first */
	if (ml->path_len >= cap)
		return vt_err_set(err, VT_E_PARSE, 0,
				  "cgroup: path of hierarchy %llu is longer than %zu bytes",
				  (unsigned long long)ml->hierarchy, cap - 1);
	vt_copy_str(dst, cap, ml->path, ml->path_len);
	return VT_OK;
}

int vt_cgroup_parse_membership_of(const char *buf, size_t len, const char *controller,
				  char *v2_path, size_t v2_cap, char *v1_path, size_t v1_cap,
				  struct vt_err *err)
{
	struct vt_scan file = vt_scan_init(buf, len);
	struct membership_line ml;
	const char *line;
	size_t line_len;
	unsigned lineno = 0;
	char text[48];
	int rc;

	if (!v2_cap || !v1_cap)
		return vt_err_set(err, VT_E_FAIL, 0, "cgroup: no room for the paths");
	v2_path[0] = v1_path[0] = '\0';
	while (vt_scan_line(&file, &line, &line_len)) {
		lineno++;
		if (!line_len)
			continue;
		if (!membership_split(line, line_len, &ml)) {
			vt_snippet(text, sizeof(text), line, line_len);
			return vt_err_set(err, VT_E_PARSE, 0,
					  "cgroup: line %u is not 'id:controllers:/path': '%s'",
					  lineno, text);
		}
		rc = VT_OK;
		if (ml.hierarchy == 0 && !ml.controllers_len)
			rc = membership_store(&ml, v2_path, v2_cap, err);
		else if (vt_list_has(ml.controllers, ml.controllers_len, controller))
			rc = membership_store(&ml, v1_path, v1_cap, err);
		if (rc)
			return rc;
	}
	return VT_OK;
}

int vt_cgroup_parse_membership(const char *buf, size_t len, char *v2_path, size_t v2_cap,
			       char *v1_mem_path, size_t v1_cap, struct vt_err *err)
{
	return vt_cgroup_parse_membership_of(buf, len, "memory", v2_path, v2_cap, v1_mem_path,
					     v1_cap, err);
}

/* ---- "key value" files: memory.events, memory.oom_control, cpu.stat ---- */

struct kv_key {
	const char *key;
	uint64_t *value;
};

/* need_known: a file without any of the keys is malformed. */
static int kv_parse(const char *what, const char *buf, size_t len, const struct kv_key *keys,
		    size_t nkeys, bool need_known, struct vt_err *err)
{
	struct vt_scan file = vt_scan_init(buf, len), s;
	const char *line, *key;
	size_t line_len, key_len, i;
	bool known = false;
	uint64_t v;
	char text[48];

	while (vt_scan_line(&file, &line, &line_len)) {
		if (!line_len)
			continue;
		s = vt_scan_init(line, line_len);
		if (!vt_scan_word(&s, &key, &key_len) || !vt_scan_u64(&s, &v) ||
		    !scan_only_blanks_left(&s)) {
			vt_snippet(text, sizeof(text), line, line_len);
			return vt_err_set(err, VT_E_PARSE, 0, "%s: line is not 'key number': '%s'",
					  what, text);
		}
		for (i = 0; i < nkeys; i++)
			if (vt_word_is(key, key_len, keys[i].key)) {
				*keys[i].value = v;
				known = true;
			}
	}
	if (need_known && !known)
		return vt_err_set(err, VT_E_PARSE, 0, "%s: none of the expected keys", what);
	return VT_OK;
}

int vt_cgroup_parse_events(const char *buf, size_t len, struct vt_cgroup_mem *out,
			   struct vt_err *err)
{
	const struct kv_key keys[] = {
		{ "low", &out->events_low },
		{ "high", &out->events_high },
		{ "max", &out->events_max },
		{ "oom", &out->events_oom },
		{ "oom_kill", &out->events_oom_kill },
	};

	out->events_low = out->events_high = out->events_max = VT_NA;
	out->events_oom = out->events_oom_kill = VT_NA;
	return kv_parse("memory.events", buf, len, keys, sizeof(keys) / sizeof(keys[0]), true,
			err);
}

int vt_cgroup_parse_oom_control(const char *buf, size_t len, struct vt_cgroup_mem *out,
				struct vt_err *err)
{
	uint64_t kill_disable = VT_NA, under_oom = VT_NA;
	const struct kv_key keys[] = {
		{ "oom_kill_disable", &kill_disable },
		{ "under_oom", &under_oom },
		{ "oom_kill", &out->events_oom_kill },   /* Linux 4.13+ */
	};

	out->events_oom_kill = VT_NA;
	return kv_parse("memory.oom_control", buf, len, keys, sizeof(keys) / sizeof(keys[0]), true,
			err);
}

static void cpu_stat_unknown(struct vt_cgroup_cpu *out)
{
	out->nr_periods = out->nr_throttled = out->throttled_usec = VT_NA;
}

int vt_cgroup_parse_cpu_stat(const char *buf, size_t len, bool v1, struct vt_cgroup_cpu *out,
			     struct vt_err *err)
{
	uint64_t throttled_ns = VT_NA;
	const struct kv_key keys[] = {
		{ "nr_periods", &out->nr_periods },
		{ "nr_throttled", &out->nr_throttled },
		{ v1 ? "throttled_time" : "throttled_usec", v1 ? &throttled_ns : &out->throttled_usec },
	};
	int rc;

	cpu_stat_unknown(out);
	/* v2 lists usage_usec, user_usec... even where the cpu controller is off. */
	rc = kv_parse("cpu.stat", buf, len, keys, sizeof(keys) / sizeof(keys[0]), false, err);
	if (rc) {
		cpu_stat_unknown(out);
		return rc;
	}
	if (vt_known(throttled_ns))
		out->throttled_usec = throttled_ns / 1000;
	return VT_OK;
}

/* ---- single values ---- */

/*
 * One number, or the word none ("max", "-1") that means no limit: then
 * *is_none is set and *value is VT_NA.  The newline is optional.  expected
 * begins the error message.
 */
static int parse_number_or(const char *buf, size_t len, const char *none, const char *expected,
			   uint64_t *value, bool *is_none, struct vt_err *err)
{
	struct vt_scan s;
	uint64_t v;
	char text[48];

	*value = VT_NA;
	*is_none = false;
	if (len && buf[len - 1] == '\n')
		len--;
	if (vt_word_is(buf, len, none)) {
		*is_none = true;
		return VT_OK;
	}
	s = vt_scan_init(buf, len);
	/* UINT64_MAX is VT_NA; no cgroup file can print it (page counters are longs). */
	if (!vt_scan_u64(&s, &v) || !vt_scan_eof(&s) || v == VT_NA) {
		vt_snippet(text, sizeof(text), buf, len);
		return vt_err_set(err, VT_E_PARSE, 0, "%s, got '%s'", expected, text);
	}
	*value = v;
	return VT_OK;
}

int vt_cgroup_parse_limit(const char *buf, size_t len, uint64_t *value, bool *is_max,
			  struct vt_err *err)
{
	return parse_number_or(buf, len, "max", "cgroup: expected a number or 'max'", value,
			       is_max, err);
}

int vt_cgroup_parse_counter(const char *buf, size_t len, uint64_t *value, struct vt_err *err)
{
	bool is_max;
	int rc = vt_cgroup_parse_limit(buf, len, value, &is_max, err);

	if (!rc && is_max)
		return vt_err_set(err, VT_E_PARSE, 0, "cgroup: expected a number, got 'max'");
	return rc;
}

/* "$MAX $PERIOD" (cgroup-v2.rst); the kernel prints both, quota "max" when unlimited. */
int vt_cgroup_parse_cpu_max(const char *buf, size_t len, uint64_t *quota_us, uint64_t *period_us,
			    struct vt_err *err)
{
	struct vt_scan s;
	const char *word;
	size_t word_len;
	uint64_t quota = VT_NA, period;
	char text[48];

	*quota_us = *period_us = VT_NA;
	if (len && buf[len - 1] == '\n')
		len--;
	s = vt_scan_init(buf, len);
	if (!vt_scan_word(&s, &word, &word_len) ||
	    (!vt_word_is(word, word_len, "max") &&
	     (!vt_word_u64(word, word_len, &quota) || quota == VT_NA)) ||
	    !vt_scan_u64(&s, &period) || !vt_scan_eof(&s) || period == 0 || period == VT_NA) {
		vt_snippet(text, sizeof(text), buf, len);
		return vt_err_set(err, VT_E_PARSE, 0,
				  "cpu.max: expected 'QUOTA PERIOD' or 'max PERIOD', got '%s'",
				  text);
	}
	*quota_us = quota;
	*period_us = period;
	return VT_OK;
}

int vt_cgroup_parse_cfs_quota(const char *buf, size_t len, uint64_t *quota_us,
			      struct vt_err *err)
{
	bool unlimited;

	return parse_number_or(buf, len, "-1", "cpu.cfs_quota_us: expected a number or -1",
			       quota_us, &unlimited, err);
}
