/*
 * mountinfo.c — where a cgroup hierarchy is mounted, from mountinfo text
 * (proc(5) /proc/PID/mountinfo).  Pure parser: it never reads a file, so the
 * caller chooses whose mount namespace it asks about.  The text is untrusted,
 * needs no NUL and is fuzzed (fuzz/fuzz_mountinfo.c); a line it cannot split
 * is skipped, not an error, because only the cgroup lines matter.
 */
#include "proc/mountinfo.h"
#include "base/scan.h"

#include <string.h>

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
	} while (!vt_word_is(word, word_len, "-"));
	return vt_scan_word(&s, &m->fstype, &m->fstype_len) &&
	       vt_scan_word(&s, &source, &source_len) &&
	       vt_scan_word(&s, &m->super_options, &m->super_options_len);
}

/* The cgroup2 mount (v1_controller NULL), or the v1 one carrying v1_controller. */
static bool mount_is_wanted(const struct mount_entry *m, const char *v1_controller)
{
	if (!v1_controller)
		return vt_word_is(m->fstype, m->fstype_len, "cgroup2");
	return vt_word_is(m->fstype, m->fstype_len, "cgroup") &&
	       vt_list_has(m->super_options, m->super_options_len, v1_controller);
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

bool vt_mountinfo_find_cgroup_of(const char *buf, size_t len, const char *v1_controller,
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
	return vt_mountinfo_find_cgroup_of(buf, len, want_v1_memory ? "memory" : NULL, mount_point,
					   mp_cap, mount_root, root_cap);
}
