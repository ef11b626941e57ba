/*
 * detect_cache.c — the answer of allocator detection, remembered across runs
 * (see detect_cache.h).
 *
 * The file holds one line per key, at most CACHE_ENTRIES, newest last:
 *
 *	KEY <tab> V <tab> kind <tab> version <tab> static <tab> path <tab> evidence <tab> sanitizer <tab> prefix
 *
 * where KEY is tab-separated fields: "v1", "P=<LD_PRELOAD>" or "P-" (unset),
 * "X<exe path> <identity>", then one "x<path> <identity>" or "-<path>
 * <identity>" per run of mappings (x: the run holds an executable mapping),
 * an identity being "dev ino size mtime_s.ns ctime_s.ns".  No field holds a
 * tab or a newline.  A line whose value does not parse exactly is ignored.
 */
#include "alloc/detect_cache.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/user_cache.h"
#include "proc/environ.h"
#include "proc/mapped_file.h"

#define CACHE_NAME "detect-v1"
#define CACHE_ENTRIES 8
#define KEY_MAX (24u << 10)                              /* a longer key is not cached */
#define CACHE_FILE_MAX (CACHE_ENTRIES * (KEY_MAX + 2048))

static unsigned cache_hits;

unsigned vt_detect_cache_hits(void)
{
	return cache_hits;
}

/* ---- the key ---------------------------------------------------------------- */

/* Text made of several appends, any failure of which spoils it all. */
struct text {
	struct vt_buf b;
	bool bad;       /* out of memory or too long */
};

/* max: the text stays shorter than this */
#define TEXT_INIT(max) { VT_BUF_INIT((max) - 1), false }

static void __attribute__((format(printf, 2, 3))) add(struct text *t, const char *fmt, ...)
{
	va_list ap;

	if (t->bad)
		return;
	va_start(ap, fmt);
	t->bad = vt_buf_vappendf(&t->b, fmt, ap) != VT_OK;
	va_end(ap);
}

/* Text that may stand in a field: no tab, no newline. */
static bool plain(const char *s, size_t len)
{
	return !memchr(s, '\t', len) && !memchr(s, '\n', len) && !memchr(s, '\0', len);
}

static void add_identity(struct text *t, const struct stat *st)
{
	add(t, " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 ".%09ld %" PRId64 ".%09ld",
	    (uint64_t)st->st_dev, (uint64_t)st->st_ino, (int64_t)st->st_size,
	    (int64_t)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec,
	    (int64_t)st->st_ctim.tv_sec, (long)st->st_ctim.tv_nsec);
}

/* A run of mappings of one path: the file at PID/root/<path> must be the mapped one. */
static bool add_run(struct text *t, int pid_fd, const struct vt_region *const *run, size_t n)
{
	const char *path = run[0]->path;
	char rel[4200];
	struct stat st;
	bool x = false;
	size_t i;

	if (!path || path[0] != '/' || vt_maps_path_deleted(path) || !plain(path, strlen(path)) ||
	    (size_t)snprintf(rel, sizeof(rel), "root%s", path) >= sizeof(rel) ||
	    fstatat(pid_fd, rel, &st, 0) < 0 || !S_ISREG(st.st_mode))
		return false;
	for (i = 0; i < n; i++) {
		if (run[i]->inode != st.st_ino || run[i]->dev_major != major(st.st_dev) ||
		    run[i]->dev_minor != minor(st.st_dev))
			return false;
		x |= run[i]->perms[2] == 'x';
	}
	add(t, "\t%c%s", x ? 'x' : '-', path);
	add_identity(t, &st);
	return true;
}

bool vt_detect_cache_key(int pid_fd, const struct vt_region_list *regions, const char *env,
			 size_t env_len, char **key)
{
	const struct vt_region *run[64];
	struct text t = TEXT_INIT(KEY_MAX);
	char exe[4096];
	const char *val;
	struct stat st;
	size_t i, len, nrun = 0;
	ssize_t n;
	bool ok = true;

	*key = NULL;
	if (!env || !regions->nfiles)
		return false;
	add(&t, "v1");
	if (vt_environ_get(env, env_len, "LD_PRELOAD", &val, &len)) {
		if (!plain(val, len))
			return false;
		add(&t, "\tP=%.*s", (int)len, val);
	} else {
		add(&t, "\tP-");
	}
	n = readlinkat(pid_fd, "exe", exe, sizeof(exe) - 1);
	if (n <= 0 || (size_t)n >= sizeof(exe) - 1)
		goto fail;
	exe[n] = '\0';
	if (exe[0] != '/' || vt_maps_path_deleted(exe) || !plain(exe, (size_t)n) ||
	    fstatat(pid_fd, "exe", &st, 0) < 0 || !S_ISREG(st.st_mode))
		goto fail;
	add(&t, "\tX%s", exe);
	add_identity(&t, &st);
	/* runs of one path; a run longer than run[] is cut in pieces, each keyed */
	for (i = 0; ok && i < regions->nfiles; i++) {
		const struct vt_region *r = &regions->v[regions->files[i]];

		if (nrun && (nrun == sizeof(run) / sizeof(run[0]) || !r->path || !run[0]->path ||
			     strcmp(r->path, run[0]->path) != 0)) {
			ok = add_run(&t, pid_fd, run, nrun);
			nrun = 0;
		}
		run[nrun++] = r;
	}
	if (ok && nrun)
		ok = add_run(&t, pid_fd, run, nrun);
	if (!ok || t.bad)
		goto fail;
	*key = t.b.data;
	return true;
fail:
	vt_buf_release(&t.b);
	return false;
}

/* ---- the value ---------------------------------------------------------------- */

/* The next tab-separated field of *p into dst (cap bytes); false when absent or too long. */
static bool take_field(const char **p, char *dst, size_t cap, bool last)
{
	const char *end = strchr(*p, '\t');
	size_t n;

	if (last ? end != NULL : end == NULL)
		return false;
	n = end ? (size_t)(end - *p) : strlen(*p);
	if (n >= cap)
		return false;
	memcpy(dst, *p, n);
	dst[n] = '\0';
	*p += n + (end ? 1 : 0);
	return true;
}

/* The value after "KEY\tV\t" (one line, no newline); false when it is not exactly one. */
static bool parse_value(const char *p, struct vt_alloc_info *info)
{
	char kind[8], is_static[4], *end;
	unsigned long k;

	memset(info, 0, sizeof(*info));
	if (!take_field(&p, kind, sizeof(kind), false) || !take_field(&p, info->version, sizeof(info->version), false) ||
	    !take_field(&p, is_static, sizeof(is_static), false) || !take_field(&p, info->path, sizeof(info->path), false) ||
	    !take_field(&p, info->evidence, sizeof(info->evidence), false) ||
	    !take_field(&p, info->sanitizer, sizeof(info->sanitizer), false) ||
	    !take_field(&p, info->prefix, sizeof(info->prefix), true))
		return false;
	k = strtoul(kind, &end, 10);
	if (!kind[0] || *end || k > VT_ALLOC_MUSL || (strcmp(is_static, "0") && strcmp(is_static, "1")) ||
	    !info->evidence[0])
		return false;
	info->kind = (enum vt_alloc_kind)k;
	info->is_static = is_static[0] == '1';
	return true;
}

/* The line for key and info into t. */
static void format_entry(struct text *t, const char *key, const struct vt_alloc_info *info)
{
	add(t, "%s\tV\t%u\t%s\t%d\t%s\t%s\t%s\t%s\n", key, (unsigned)info->kind, info->version,
	    info->is_static ? 1 : 0, info->path, info->evidence, info->sanitizer, info->prefix);
}

static bool value_plain(const struct vt_alloc_info *info)
{
	const char *const s[] = { info->version, info->path, info->evidence, info->sanitizer, info->prefix };
	size_t i;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (!plain(s[i], strlen(s[i])))
			return false;
	return true;
}

/* Where the value of line begins when line is key's entry, else NULL. */
static const char *value_of(const char *line, const char *key, size_t key_len)
{
	if (strncmp(line, key, key_len) != 0 || strncmp(line + key_len, "\tV\t", 3) != 0)
		return NULL;
	return line + key_len + 3;
}

/* ---- the file ------------------------------------------------------------------ */

/* The cache file's text (malloc'd); NULL when none. */
static char *read_file(int dfd, size_t *len)
{
	char *text = malloc(CACHE_FILE_MAX);

	if (text && !vt_user_cache_read(dfd, CACHE_NAME, text, CACHE_FILE_MAX, len)) {
		free(text);
		return NULL;
	}
	return text;
}

bool vt_detect_cache_get(const char *key, struct vt_alloc_info *info)
{
	struct vt_alloc_info found;
	size_t key_len = strlen(key), len;
	char *text, *line, *nl;
	const char *v;
	bool hit = false;
	int dfd = vt_user_cache_dir(false);

	if (dfd < 0)
		return false;
	text = read_file(dfd, &len);
	close(dfd);
	if (!text)
		return false;
	for (line = text; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;          /* a line without its newline: cut short, not an entry */
		*nl = '\0';
		if ((v = value_of(line, key, key_len)) && parse_value(v, &found)) {
			*info = found;  /* the last line for a key wins */
			hit = true;
		}
	}
	free(text);
	cache_hits += hit;
	return hit;
}

void vt_detect_cache_put(const char *key, const struct vt_alloc_info *info)
{
	const char *lines[CACHE_ENTRIES];
	struct vt_alloc_info other;
	struct text out = TEXT_INIT(CACHE_FILE_MAX);
	size_t key_len = strlen(key), n = 0, i, len;
	char *text = NULL, *line, *nl, *tab;
	int dfd;

	if (!value_plain(info) || key_len >= KEY_MAX)
		return;
	dfd = vt_user_cache_dir(true);
	if (dfd < 0)
		return;
	text = read_file(dfd, &len);
	/* keep the newest CACHE_ENTRIES - 1 well-formed entries of other keys */
	for (line = text; line && *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break;
		*nl = '\0';
		tab = strstr(line, "\tV\t");
		if (!tab || value_of(line, key, key_len) || !parse_value(tab + 3, &other))
			continue;
		if (n == CACHE_ENTRIES - 1) {
			memmove(lines, lines + 1, sizeof(lines[0]) * (CACHE_ENTRIES - 2));
			n--;
		}
		lines[n++] = line;
	}
	for (i = 0; i < n; i++)
		add(&out, "%s\n", lines[i]);
	if (out.bad) {                  /* old entries too long together: keep only the new one */
		vt_buf_reset(&out.b);
		out.bad = false;
	}
	format_entry(&out, key, info);
	if (!out.bad && out.b.len < CACHE_FILE_MAX)
		(void)vt_user_cache_replace(dfd, CACHE_NAME, out.b.data, out.b.len);
	vt_buf_release(&out.b);
	free(text);
	close(dfd);
}
