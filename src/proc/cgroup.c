/*
 * cgroup.c — the memory and cpu cgroups of a process: where they are and what
 * they say.
 *
 * Resolves /proc/PID/cgroup (cgroups(7)) against the reader's mountinfo
 * (proc(5)) to a directory under the sys root, then reads the v1 or v2
 * memory or cpu controller files there (Documentation/admin-guide/
 * cgroup-v2.rst, cgroup-v1/memory.rst, scheduler/sched-bwc.rst).  It only
 * reads: it never writes a cgroup file and never guesses a figure — an
 * absent or unreadable file leaves VT_NA.  All text is untrusted; the
 * parsers take (buf, len), need no NUL and are fuzzed (fuzz/fuzz_cgroup.c).
 */
#include "proc/cgroup.h"
#include "base/unknown.h"
#include "base/scan.h"

#include <stdio.h>
#include <string.h>

/* cgroup files are a line or two; /proc/PID/cgroup and mountinfo can be long. */
#define CG_FILE_MAX (16u << 20)
/* A mountinfo path field, decoded (PATH_MAX). */
#define CG_MOUNT_PATH_MAX 4096

/* ---- small text helpers ---- */

/* A printable excerpt of untrusted text for error messages. */
static void snippet(char *dst, size_t cap, const char *src, size_t len)
{
	size_t i;

	if (len > cap - 1)
		len = cap - 1;
	for (i = 0; i < len; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[len] = '\0';
}

static bool word_is(const char *word, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(word, want, len) == 0;
}

/* Nothing but blanks until the end (of the line being scanned). */
static bool scan_only_blanks_left(struct vt_scan *s)
{
	vt_scan_blanks(s);
	return vt_scan_eof(s);
}

/* Is want one of the comma-separated items of list ("rw,memory")? */
static bool list_has(const char *list, size_t len, const char *want)
{
	const char *end = list + len, *comma;

	while (list < end) {
		comma = memchr(list, ',', (size_t)(end - list));
		if (!comma)
			comma = end;
		if (word_is(list, (size_t)(comma - list), want))
			return true;
		list = comma + 1;
	}
	return false;
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

/* The v2 path and the path of the v1 hierarchy whose controller list has controller. */
static int parse_membership(const char *buf, size_t len, const char *controller, char *v2_path,
			    size_t v2_cap, char *v1_path, size_t v1_cap, struct vt_err *err)
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
			snippet(text, sizeof(text), line, line_len);
			return vt_err_set(err, VT_E_PARSE, 0,
					  "cgroup: line %u is not 'id:controllers:/path': '%s'",
					  lineno, text);
		}
		rc = VT_OK;
		if (ml.hierarchy == 0 && !ml.controllers_len)
			rc = membership_store(&ml, v2_path, v2_cap, err);
		else if (list_has(ml.controllers, ml.controllers_len, controller))
			rc = membership_store(&ml, v1_path, v1_cap, err);
		if (rc)
			return rc;
	}
	return VT_OK;
}

int vt_cgroup_parse_membership(const char *buf, size_t len, char *v2_path, size_t v2_cap,
			       char *v1_mem_path, size_t v1_cap, struct vt_err *err)
{
	return parse_membership(buf, len, "memory", v2_path, v2_cap, v1_mem_path, v1_cap, err);
}

/* ---- mountinfo ---- */

struct mount_entry {
	const char *root, *mount_point, *fstype, *super_options;
	size_t root_len, mount_point_len, fstype_len, super_options_len;
};

/*
 * "36 35 98:0 /root /mnt opts [optional...] - fstype source super-opts"
 * (proc(5)).  The optional fields end at a lone "-".
 */
static bool mountinfo_split(const char *line, size_t len, struct mount_entry *m)
{
	struct vt_scan s = vt_scan_init(line, len);
	const char *word, *source;
	size_t word_len, source_len;
	uint64_t id, parent;

	if (!vt_scan_u64(&s, &id) || !vt_scan_u64(&s, &parent) ||
	    !vt_scan_word(&s, &word, &word_len) ||
	    !vt_scan_word(&s, &m->root, &m->root_len) ||
	    !vt_scan_word(&s, &m->mount_point, &m->mount_point_len) ||
	    !vt_scan_word(&s, &word, &word_len))
		return false;
	do {
		if (!vt_scan_word(&s, &word, &word_len))
			return false;
	} while (!word_is(word, word_len, "-"));
	return vt_scan_word(&s, &m->fstype, &m->fstype_len) &&
	       vt_scan_word(&s, &source, &source_len) &&
	       vt_scan_word(&s, &m->super_options, &m->super_options_len);
}

/* The cgroup2 mount (v1_controller NULL), or the v1 one carrying v1_controller. */
static bool mount_is_wanted(const struct mount_entry *m, const char *v1_controller)
{
	if (!v1_controller)
		return word_is(m->fstype, m->fstype_len, "cgroup2");
	return word_is(m->fstype, m->fstype_len, "cgroup") &&
	       list_has(m->super_options, m->super_options_len, v1_controller);
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/* Length of src with mountinfo's \ooo escapes (space, tab, newline, backslash) decoded. */
static size_t unescape(const char *src, size_t len, char *dst)
{
	size_t i = 0, n = 0;
	unsigned char c;

	while (i < len) {
		c = (unsigned char)src[i];
		if (c == '\\' && len - i >= 4 && is_octal(src[i + 1]) && is_octal(src[i + 2]) &&
		    is_octal(src[i + 3])) {
			c = (unsigned char)(((src[i + 1] - '0') << 6 | (src[i + 2] - '0') << 3 |
					     (src[i + 3] - '0')) & 0xff);
			i += 4;
		} else {
			i++;
		}
		if (dst)
			dst[n] = (char)c;
		n++;
	}
	return n;
}

/* Decode into dst if it fits with its NUL; leave dst alone otherwise. */
static bool unescape_into(const char *src, size_t len, char *dst, size_t cap)
{
	size_t n = unescape(src, len, NULL);

	if (n >= cap)
		return false;
	unescape(src, len, dst);
	dst[n] = '\0';
	return true;
}

static bool under_sys(const struct mount_entry *m)
{
	return m->mount_point_len > 5 && memcmp(m->mount_point, "/sys/", 5) == 0;
}

static bool mountinfo_find(const char *buf, size_t len, const char *v1_controller,
			   char *mount_point, size_t mp_cap, char *mount_root, size_t root_cap)
{
	struct vt_scan file = vt_scan_init(buf, len);
	struct mount_entry m;
	const char *line;
	size_t line_len;
	bool found = false;

	while (vt_scan_line(&file, &line, &line_len)) {
		if (!mountinfo_split(line, line_len, &m) || !mount_is_wanted(&m, v1_controller))
			continue;
		if (found && !under_sys(&m))
			continue;
		if (unescape(m.mount_point, m.mount_point_len, NULL) >= mp_cap ||
		    unescape(m.root, m.root_len, NULL) >= root_cap)
			continue;
		unescape_into(m.mount_point, m.mount_point_len, mount_point, mp_cap);
		unescape_into(m.root, m.root_len, mount_root, root_cap);
		found = true;
		if (under_sys(&m))
			break;
	}
	return found;
}

bool vt_mountinfo_find_cgroup(const char *buf, size_t len, bool want_v1_memory, char *mount_point,
			      size_t mp_cap, char *mount_root, size_t root_cap)
{
	return mountinfo_find(buf, len, want_v1_memory ? "memory" : NULL, mount_point, mp_cap,
			      mount_root, root_cap);
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
			snippet(text, sizeof(text), line, line_len);
			return vt_err_set(err, VT_E_PARSE, 0, "%s: line is not 'key number': '%s'",
					  what, text);
		}
		for (i = 0; i < nkeys; i++)
			if (word_is(key, key_len, keys[i].key)) {
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

/* ---- PSI ---- */

/* "12.34": the kernel prints LOAD_INT.LOAD_FRAC with two decimals; 0..100. */
static bool parse_percent(const char *text, size_t len, double *out)
{
	struct vt_scan s = vt_scan_init(text, len);
	uint64_t whole, frac = 0, scale = 1;

	if (!vt_scan_u64(&s, &whole) || whole > 100)
		return false;
	if (vt_scan_char(&s, '.')) {
		if (vt_scan_eof(&s))
			return false;
		while (!vt_scan_eof(&s) && *s.p >= '0' && *s.p <= '9' && scale < 1000000000) {
			frac = frac * 10 + (uint64_t)(*s.p - '0');
			scale *= 10;
			s.p++;
		}
	}
	if (!vt_scan_eof(&s))
		return false;
	*out = (double)whole + (double)frac / (double)scale;
	return *out <= 100.0;
}

static bool parse_whole_u64(const char *text, size_t len, uint64_t *out)
{
	struct vt_scan s = vt_scan_init(text, len);

	return vt_scan_u64(&s, out) && vt_scan_eof(&s);
}

/* One "key=value" of a PSI line; unknown keys are skipped. *seen gets a bit per key. */
static bool psi_field(const char *tok, size_t tok_len, struct vt_psi_line *out, unsigned *seen)
{
	static const char *const avg_keys[] = { "avg10", "avg60", "avg300" };
	double *avgs[] = { &out->avg10, &out->avg60, &out->avg300 };
	const char *eq = memchr(tok, '=', tok_len), *val;
	size_t key_len, val_len, i;

	if (!eq)
		return false;
	key_len = (size_t)(eq - tok);
	val = eq + 1;
	val_len = tok_len - key_len - 1;
	for (i = 0; i < 3; i++)
		if (word_is(tok, key_len, avg_keys[i])) {
			*seen |= 1u << i;
			return parse_percent(val, val_len, avgs[i]);
		}
	if (word_is(tok, key_len, "total")) {
		*seen |= 1u << 3;
		return parse_whole_u64(val, val_len, &out->total_us);
	}
	return true;
}

static int psi_parse_line(struct vt_scan *s, const char *kind, struct vt_psi_line *out,
			  struct vt_err *err)
{
	const char *tok;
	size_t tok_len;
	unsigned seen = 0;
	char text[48];

	if (out->present)
		return vt_err_set(err, VT_E_PARSE, 0, "psi: more than one '%s' line", kind);
	while (vt_scan_word(s, &tok, &tok_len)) {
		if (!psi_field(tok, tok_len, out, &seen)) {
			snippet(text, sizeof(text), tok, tok_len);
			return vt_err_set(err, VT_E_PARSE, 0, "psi: bad '%s' field '%s'", kind,
					  text);
		}
	}
	if (seen != 0xf)
		return vt_err_set(err, VT_E_PARSE, 0,
				  "psi: '%s' line lacks one of avg10, avg60, avg300, total", kind);
	out->present = true;
	return VT_OK;
}

int vt_psi_parse(const char *buf, size_t len, struct vt_psi_line *some, struct vt_psi_line *full,
		 struct vt_err *err)
{
	struct vt_scan file = vt_scan_init(buf, len), s;
	const char *line, *kind;
	size_t line_len, kind_len;
	int rc;

	memset(some, 0, sizeof(*some));
	memset(full, 0, sizeof(*full));
	while (vt_scan_line(&file, &line, &line_len)) {
		s = vt_scan_init(line, line_len);
		if (!vt_scan_word(&s, &kind, &kind_len))
			continue;
		rc = VT_OK;
		if (word_is(kind, kind_len, "some"))
			rc = psi_parse_line(&s, "some", some, err);
		else if (word_is(kind, kind_len, "full"))
			rc = psi_parse_line(&s, "full", full, err);
		if (rc)
			return rc;
	}
	if (!some->present)
		return vt_err_set(err, VT_E_PARSE, 0, "psi: no 'some' line");
	return VT_OK;
}

/* ---- single values ---- */

int vt_cgroup_parse_limit(const char *buf, size_t len, uint64_t *value, bool *is_max,
			  struct vt_err *err)
{
	struct vt_scan s;
	uint64_t v;
	char text[48];

	*value = VT_NA;
	*is_max = false;
	if (len && buf[len - 1] == '\n')
		len--;
	if (word_is(buf, len, "max")) {
		*is_max = true;
		return VT_OK;
	}
	s = vt_scan_init(buf, len);
	/* UINT64_MAX is VT_NA; no cgroup file can print it (page counters are longs). */
	if (!vt_scan_u64(&s, &v) || !vt_scan_eof(&s) || v == VT_NA) {
		snippet(text, sizeof(text), buf, len);
		return vt_err_set(err, VT_E_PARSE, 0,
				  "cgroup: expected a number or 'max', got '%s'", text);
	}
	*value = v;
	return VT_OK;
}

static int parse_counter(const char *buf, size_t len, uint64_t *value, struct vt_err *err)
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
	    (!word_is(word, word_len, "max") &&
	     (!parse_whole_u64(word, word_len, &quota) || quota == VT_NA)) ||
	    !vt_scan_u64(&s, &period) || !vt_scan_eof(&s) || period == 0 || period == VT_NA) {
		snippet(text, sizeof(text), buf, len);
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
	struct vt_scan s;
	uint64_t v;
	char text[48];

	*quota_us = VT_NA;
	if (len && buf[len - 1] == '\n')
		len--;
	if (word_is(buf, len, "-1"))
		return VT_OK;
	s = vt_scan_init(buf, len);
	if (!vt_scan_u64(&s, &v) || !vt_scan_eof(&s) || v == VT_NA) {
		snippet(text, sizeof(text), buf, len);
		return vt_err_set(err, VT_E_PARSE, 0,
				  "cpu.cfs_quota_us: expected a number or -1, got '%s'", text);
	}
	*quota_us = v;
	return VT_OK;
}

/* ---- reading a cgroup directory ---- */

struct cg_dir {
	const struct vt_procfs *pfs;
	const char *dir;          /* relative to the sys root */
	struct vt_buf *buf;       /* holds the last file read */
	struct vt_err *err;
	char rel[sizeof(((struct vt_cgroup_mem *)0)->dir) + 64];   /* dir/name */
};

enum cg_file { CG_FILE_READ, CG_FILE_ABSENT, CG_FILE_UNREADABLE };

/*
 * Read dir/name into cd->buf.  A missing file (older kernel, no swap
 * accounting, PSI off) or an unreadable one (EACCES, EOPNOTSUPP) is not an
 * error: *state says which, and the caller leaves its figure VT_NA.
 */
static int cg_file_read(struct cg_dir *cd, const char *name, enum cg_file *state)
{
	int rc;

	*state = CG_FILE_READ;
	snprintf(cd->rel, sizeof(cd->rel), "%s/%s", cd->dir, name);
	rc = vt_sysfs_read(cd->pfs, cd->rel, cd->buf, cd->err);
	if (rc == VT_E_NOTFOUND || rc == VT_E_PERM || rc == VT_E_IO) {
		*state = rc == VT_E_NOTFOUND ? CG_FILE_ABSENT : CG_FILE_UNREADABLE;
		vt_err_clear(cd->err);
		return VT_OK;
	}
	return rc;
}

/* Put the file's name in front of a parser's message. */
static int cg_parse_failed(struct cg_dir *cd, int rc)
{
	char why[VT_ERR_MSG_MAX];

	if (!cd->err)
		return rc;
	memcpy(why, cd->err->msg, sizeof(why));
	return vt_err_set(cd->err, rc, 0, "'%s/%s': %s", cd->pfs->sys_root, cd->rel, why);
}

static int cg_read_counter(struct cg_dir *cd, const char *name, uint64_t *value,
			   enum cg_file *state)
{
	int rc = cg_file_read(cd, name, state);

	if (rc || *state != CG_FILE_READ)
		return rc;
	rc = parse_counter(cd->buf->data, cd->buf->len, value, cd->err);
	return rc ? cg_parse_failed(cd, rc) : VT_OK;
}

static int cg_read_limit(struct cg_dir *cd, const char *name, uint64_t *value, bool *is_max)
{
	enum cg_file state;
	int rc = cg_file_read(cd, name, &state);

	if (rc || state != CG_FILE_READ)
		return rc;
	rc = vt_cgroup_parse_limit(cd->buf->data, cd->buf->len, value, is_max, cd->err);
	return rc ? cg_parse_failed(cd, rc) : VT_OK;
}

typedef int (*cg_parser)(const char *buf, size_t len, struct vt_cgroup_mem *out,
			 struct vt_err *err);

static int cg_read_parsed(struct cg_dir *cd, const char *name, cg_parser parse,
			  struct vt_cgroup_mem *out)
{
	enum cg_file state;
	int rc = cg_file_read(cd, name, &state);

	if (rc || state != CG_FILE_READ)
		return rc;
	rc = parse(cd->buf->data, cd->buf->len, out, cd->err);
	return rc ? cg_parse_failed(cd, rc) : VT_OK;
}

static int parse_memory_pressure(const char *buf, size_t len, struct vt_cgroup_mem *out,
				 struct vt_err *err)
{
	return vt_psi_parse(buf, len, &out->psi_some, &out->psi_full, err);
}

static void v1_unlimited(uint64_t *value, bool *is_max)
{
	if (vt_known(*value) && *value >= VT_CGROUP_V1_UNLIMITED) {
		*value = VT_NA;
		*is_max = true;
	}
}

/*
 * v1 counts memory+swap together (memsw); swap is the difference.  The two
 * files are read at different instants, so a memsw below usage is a race,
 * not negative swap: it stays unknown.
 */
static void v1_swap_from_memsw(struct vt_cgroup_mem *out, uint64_t memsw_usage,
			       uint64_t memsw_limit, bool memsw_limit_is_max)
{
	if (vt_known(memsw_usage) && vt_known(out->usage) && memsw_usage >= out->usage)
		out->swap_usage = memsw_usage - out->usage;
	if (memsw_limit_is_max)
		out->swap_limit_is_max = true;
	else if (vt_known(memsw_limit) && vt_known(out->limit) && memsw_limit >= out->limit)
		out->swap_limit = memsw_limit - out->limit;
}

static int read_v1(struct cg_dir *cd, struct vt_cgroup_mem *out)
{
	uint64_t memsw_usage = VT_NA, memsw_limit = VT_NA;
	bool memsw_limit_is_max = false;
	const struct { const char *name; uint64_t *value; } counters[] = {
		{ "memory.max_usage_in_bytes", &out->peak },
		{ "memory.failcnt", &out->events_max },
		{ "memory.memsw.usage_in_bytes", &memsw_usage },
	};
	enum cg_file state;
	size_t i;
	int rc;

	rc = cg_read_counter(cd, "memory.usage_in_bytes", &out->usage, &state);
	if (rc)
		return rc;
	if (state == CG_FILE_ABSENT)
		return vt_err_set(cd->err, VT_E_NOTFOUND, 0, "no memory cgroup at '%s/%s'",
				  cd->pfs->sys_root, cd->dir);
	out->version = 1;
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		rc = cg_read_counter(cd, counters[i].name, counters[i].value, &state);
		if (rc)
			return rc;
	}
	rc = cg_read_limit(cd, "memory.limit_in_bytes", &out->limit, &out->limit_is_max);
	if (rc)
		return rc;
	rc = cg_read_limit(cd, "memory.memsw.limit_in_bytes", &memsw_limit, &memsw_limit_is_max);
	if (rc)
		return rc;
	v1_unlimited(&out->limit, &out->limit_is_max);
	v1_unlimited(&memsw_limit, &memsw_limit_is_max);
	v1_swap_from_memsw(out, memsw_usage, memsw_limit, memsw_limit_is_max);
	return cg_read_parsed(cd, "memory.oom_control", vt_cgroup_parse_oom_control, out);
}

static int read_v2(struct cg_dir *cd, struct vt_cgroup_mem *out)
{
	enum cg_file state;
	int rc;

	/* No memory.current: the root cgroup, or memory not enabled for it. */
	rc = cg_read_counter(cd, "memory.current", &out->usage, &state);
	if (rc || state == CG_FILE_ABSENT)
		return rc;
	out->version = 2;
	rc = cg_read_limit(cd, "memory.max", &out->limit, &out->limit_is_max);
	if (!rc)
		rc = cg_read_counter(cd, "memory.peak", &out->peak, &state);   /* Linux 5.19+ */
	if (!rc)
		rc = cg_read_counter(cd, "memory.swap.current", &out->swap_usage, &state);
	if (!rc)
		rc = cg_read_limit(cd, "memory.swap.max", &out->swap_limit,
				   &out->swap_limit_is_max);
	if (!rc)
		rc = cg_read_parsed(cd, "memory.events", vt_cgroup_parse_events, out);
	if (!rc)
		rc = cg_read_parsed(cd, "memory.pressure", parse_memory_pressure, out);
	return rc;
}

/* ---- locating the directory ---- */

/* Where a process's cgroup of one controller is. */
struct cg_where {
	int version;                                      /* 1 or 2; 0 none */
	char path[sizeof(((struct vt_cgroup_mem *)0)->path)];   /* as in /proc/PID/cgroup */
	char dir[sizeof(((struct vt_cgroup_mem *)0)->dir)];     /* relative to the sys root */
	size_t top_len;           /* dir[0, top_len) is the mount point: the top of the hierarchy */
};

/*
 * The path in /proc/PID/cgroup and the mount's root (mountinfo field 4) are
 * both relative to the reader's cgroup namespace, so a mount of a subtree
 * (root "/docker/ID") serves exactly the paths below that root.
 */
static const char *path_below_root(const char *path, const char *root)
{
	size_t n = strlen(root);

	while (n && root[n - 1] == '/')
		n--;
	if (strncmp(path, root, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return NULL;
	return path + n;
}

static int cgroup_locate(const char *mount_point, const char *mount_root, const char *path,
			 int version, struct cg_where *w, struct vt_err *err)
{
	const char *rel = path_below_root(path, mount_root);
	int n;

	if (strncmp(mount_point, "/sys/", 5) != 0 || !mount_point[5]) {
		vt_err_set(err, VT_E_NOTFOUND, 0,
			   "cgroup filesystem is mounted at '%s', not under /sys", mount_point);
		vt_err_hint(err, "vitals reads cgroups under the sys root; "
			    "mount them at /sys/fs/cgroup");
		return VT_E_NOTFOUND;
	}
	if (!rel)
		return vt_err_set(err, VT_E_NOTFOUND, 0,
				  "cgroup '%s' is outside the part mounted at '%s' (root '%s')",
				  path, mount_point, mount_root);
	if (!strcmp(rel, "/"))
		rel = "";
	n = snprintf(w->dir, sizeof(w->dir), "%s%s", mount_point + 5, rel);
	if (n < 0 || (size_t)n >= sizeof(w->dir))
		return vt_err_set(err, VT_E_NOTFOUND, 0, "cgroup directory of '%s' is too long",
				  path);
	w->top_len = strlen(mount_point + 5);
	vt_copy_str(w->path, sizeof(w->path), path, strlen(path));
	w->version = version;
	return VT_OK;
}

/* Both paths empty when the kernel has no cgroups (no /proc/PID/cgroup). */
static int read_membership(int pid_fd, struct vt_buf *buf, const char *controller, char *v2_path,
			   char *v1_path, size_t cap, struct vt_err *err)
{
	int rc = vt_read_at(pid_fd, "cgroup", buf, err);

	v2_path[0] = v1_path[0] = '\0';
	if (rc == VT_E_NOTFOUND) {
		vt_err_clear(err);
		return VT_OK;
	}
	if (rc)
		return rc;
	return parse_membership(buf->data, buf->len, controller, v2_path, cap, v1_path, cap, err);
}

/*
 * The process's cgroup of controller ("memory", "cpu"); w->version 0 when it
 * has none (no cgroups, or no mounted hierarchy for it).
 */
static int cgroup_find(const struct vt_procfs *pfs, int pid_fd, struct vt_buf *buf,
		       const char *controller, struct cg_where *w, struct vt_err *err)
{
	char v2_path[sizeof(w->path)], v1_path[sizeof(w->path)];
	char mount_point[CG_MOUNT_PATH_MAX], mount_root[CG_MOUNT_PATH_MAX];
	int rc;

	w->version = 0;
	w->path[0] = w->dir[0] = '\0';
	w->top_len = 0;
	rc = read_membership(pid_fd, buf, controller, v2_path, v1_path, sizeof(v2_path), err);
	if (rc || (!v2_path[0] && !v1_path[0]))
		return rc;
	rc = vt_procfs_read(pfs, "self/mountinfo", buf, err);
	if (rc)
		return rc;
	/* Hybrid systems mount cgroup2 too, but the controller then lives in v1. */
	if (v1_path[0] && mountinfo_find(buf->data, buf->len, controller, mount_point,
					 sizeof(mount_point), mount_root, sizeof(mount_root)))
		return cgroup_locate(mount_point, mount_root, v1_path, 1, w, err);
	if (v2_path[0] && mountinfo_find(buf->data, buf->len, NULL, mount_point,
					 sizeof(mount_point), mount_root, sizeof(mount_root)))
		return cgroup_locate(mount_point, mount_root, v2_path, 2, w, err);
	return VT_OK;
}

/* ---- vt_cgroup_read ---- */

static void cgroup_mem_init(struct vt_cgroup_mem *out)
{
	memset(out, 0, sizeof(*out));
	out->usage = out->limit = out->peak = VT_NA;
	out->swap_usage = out->swap_limit = VT_NA;
	out->events_low = out->events_high = out->events_max = VT_NA;
	out->events_oom = out->events_oom_kill = VT_NA;
}

int vt_cgroup_read(const struct vt_procfs *pfs, int pid_fd, struct vt_cgroup_mem *out,
		   struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(CG_FILE_MAX);
	struct cg_dir cd = { .pfs = pfs, .dir = out->dir, .buf = &buf, .err = err };
	struct cg_where w;
	int rc;

	cgroup_mem_init(out);
	rc = cgroup_find(pfs, pid_fd, &buf, "memory", &w, err);
	if (rc || !w.version)
		goto release_buf;
	memcpy(out->path, w.path, sizeof(out->path));
	memcpy(out->dir, w.dir, sizeof(out->dir));
	rc = w.version == 1 ? read_v1(&cd, out) : read_v2(&cd, out);
	if (!rc && !out->version)
		cgroup_mem_init(out);   /* a v2 directory without memory */
release_buf:
	if (rc)
		cgroup_mem_init(out);   /* no half-read figures next to an error */
	vt_buf_release(&buf);
	return rc;
}

/* ---- vt_cgroup_cpu_read ---- */

static void cgroup_cpu_init(struct vt_cgroup_cpu *out)
{
	memset(out, 0, sizeof(*out));
	out->quota_cores = -1;
	out->quota_us = out->period_us = VT_NA;
	cpu_stat_unknown(out);
}

/*
 * The quota and period set in cd->dir (VT_NA when none); *found when the
 * directory has the cpu controller's limit file.
 */
static int cpu_level_limit(struct cg_dir *cd, bool v1, uint64_t *quota, uint64_t *period,
			   bool *found)
{
	enum cg_file state;
	int rc;

	*quota = *period = VT_NA;
	rc = cg_file_read(cd, v1 ? "cpu.cfs_quota_us" : "cpu.max", &state);
	*found = !rc && state != CG_FILE_ABSENT;
	if (rc || state != CG_FILE_READ)
		return rc;
	if (!v1) {
		rc = vt_cgroup_parse_cpu_max(cd->buf->data, cd->buf->len, quota, period, cd->err);
		return rc ? cg_parse_failed(cd, rc) : VT_OK;
	}
	rc = vt_cgroup_parse_cfs_quota(cd->buf->data, cd->buf->len, quota, cd->err);
	if (rc)
		return cg_parse_failed(cd, rc);
	if (!vt_known(*quota))
		return VT_OK;
	rc = cg_read_counter(cd, "cpu.cfs_period_us", period, &state);
	if (!rc && *period == 0) {
		rc = vt_err_set(cd->err, VT_E_PARSE, 0, "cgroup: a period of 0");
		return cg_parse_failed(cd, rc);
	}
	if (!vt_known(*period))
		*quota = VT_NA;   /* a quota without its period limits nothing we can say */
	return rc;
}

/* Keep quota/period of dir if it is tighter than the limit so far (ties: the nearer one). */
static void cpu_tighten(struct vt_cgroup_cpu *out, const char *dir, uint64_t quota,
			uint64_t period)
{
	double cores;

	if (!vt_known(quota) || !vt_known(period))
		return;
	cores = (double)quota / (double)period;
	if (out->quota_cores >= 0 && cores >= out->quota_cores)
		return;
	out->quota_cores = cores;
	out->quota_us = quota;
	out->period_us = period;
	vt_copy_str(out->limit_dir, sizeof(out->limit_dir), dir, strlen(dir));
}

/* dir becomes its parent; false when it is already the top of the mount. */
static bool cg_dir_up(char *dir, size_t top_len)
{
	char *slash;

	if (strlen(dir) <= top_len)
		return false;
	slash = strrchr(dir + top_len, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

static int read_cpu(const struct vt_procfs *pfs, struct vt_buf *buf, const struct cg_where *w,
		    struct vt_cgroup_cpu *out, struct vt_err *err)
{
	char level[sizeof(w->dir)];
	struct cg_dir cd = { .pfs = pfs, .dir = level, .buf = buf, .err = err };
	bool v1 = w->version == 1, found, any = false;
	uint64_t quota, period;
	enum cg_file state;
	int rc;

	memcpy(level, w->dir, sizeof(level));
	do {
		rc = cpu_level_limit(&cd, v1, &quota, &period, &found);
		if (rc)
			return rc;
		any = any || found;
		cpu_tighten(out, level, quota, period);
	} while (cg_dir_up(level, w->top_len));
	if (!any)
		return VT_OK;   /* the v2 root, or cpu not enabled on the path: version 0 */
	out->version = w->version;
	cd.dir = w->dir;
	rc = cg_file_read(&cd, "cpu.stat", &state);
	if (rc || state != CG_FILE_READ)
		return rc;
	rc = vt_cgroup_parse_cpu_stat(buf->data, buf->len, v1, out, err);
	return rc ? cg_parse_failed(&cd, rc) : VT_OK;
}

int vt_cgroup_cpu_read(const struct vt_procfs *pfs, int pid_fd, struct vt_cgroup_cpu *out,
		       struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(CG_FILE_MAX);
	struct cg_where w;
	int rc;

	cgroup_cpu_init(out);
	rc = cgroup_find(pfs, pid_fd, &buf, "cpu", &w, err);
	if (!rc && w.version)
		rc = read_cpu(pfs, &buf, &w, out, err);
	if (rc)
		cgroup_cpu_init(out);   /* no half-read figures next to an error */
	vt_buf_release(&buf);
	return rc;
}
