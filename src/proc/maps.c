/*
 * maps.c — parse /proc/PID/maps and /proc/PID/smaps.
 *
 * Header line (proc(5)):
 *   start-end perms offset major:minor inode [pathname]
 * smaps adds "Key:   N kB" lines (and VmFlags:) after each header.
 */
#include "proc/maps.h"
#include "base/unknown.h"
#include "proc/procfs.h"
#include "base/scan.h"

#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	const char *label;
} kind_names[VT_REGION__COUNT] = {
	[VT_REGION_OTHER] = { "other", "other" },
	[VT_REGION_MAIN_HEAP] = { "main_heap", "glibc main heap" },
	[VT_REGION_ARENA_HEAP] = { "arena_heap", "glibc arena heap" },
	[VT_REGION_ARENA_RESERVE] = { "arena_reserve", "arena heap reserve" },
	[VT_REGION_THREAD_STACK] = { "thread_stack", "thread stack" },
	[VT_REGION_MAIN_STACK] = { "main_stack", "main thread stack" },
	[VT_REGION_GUARD] = { "guard", "guard pages" },
	[VT_REGION_MMAP_CHUNK] = { "mmap_chunk", "malloc'd blocks (glibc mmapped chunks)" },
	[VT_REGION_ANON] = { "anon", "large anonymous mapping" },
	[VT_REGION_ALLOC_OTHER] = { "allocator_other", "other allocator's memory" },
	[VT_REGION_PY_ARENAS] = { "cpython_arenas", "CPython object arenas (not malloc's)" },
	[VT_REGION_FILE] = { "file", "file-backed" },
	[VT_REGION_SHMEM] = { "shmem", "shared memory" },
	[VT_REGION_SPECIAL] = { "special", "kernel special" },
};

const char *vt_region_kind_name(enum vt_region_kind kind)
{
	return (unsigned)kind < VT_REGION__COUNT ? kind_names[kind].name : "other";
}

const char *vt_region_kind_label(enum vt_region_kind kind)
{
	return (unsigned)kind < VT_REGION__COUNT ? kind_names[kind].label : "other";
}

static int list_push(struct vt_region_list *list, struct vt_region **out)
{
	struct vt_region *v;
	size_t cap;

	if (list->n == list->cap) {
		cap = list->cap ? list->cap * 2 : 64;
		v = realloc(list->v, cap * sizeof(*v));
		if (!v)
			return VT_E_NOMEM;
		list->v = v;
		list->cap = cap;
	}
	*out = &list->v[list->n++];
	memset(*out, 0, sizeof(**out));
	return VT_OK;
}

/* A header line starts with a lowercase hex address followed by '-'. */
static bool parse_header(const char *line, size_t len, struct vt_region *r)
{
	struct vt_scan s = vt_scan_init(line, len);
	const char *perms, *path;
	size_t perms_len, path_len;
	uint64_t maj, min;

	if (!vt_scan_hex(&s, &r->start) || !vt_scan_char(&s, '-') || !vt_scan_hex(&s, &r->end))
		return false;
	if (r->end < r->start)
		return false;
	if (!vt_scan_word(&s, &perms, &perms_len) || perms_len != 4)
		return false;
	memcpy(r->perms, perms, 4);
	r->perms[4] = '\0';
	vt_scan_blanks(&s);
	if (!vt_scan_hex(&s, &r->offset))
		return false;
	vt_scan_blanks(&s);
	if (!vt_scan_hex(&s, &maj) || !vt_scan_char(&s, ':') || !vt_scan_hex(&s, &min))
		return false;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return false;
	r->dev_major = (unsigned)maj;
	r->dev_minor = (unsigned)min;
	if (!vt_scan_u64(&s, &r->inode))
		return false;
	vt_scan_rest(&s, &path, &path_len);
	r->path = malloc(path_len + 1);
	if (!r->path)
		return false;
	vt_copy_str(r->path, path_len + 1, path, path_len);
	return true;
}

#define SMAPS_KEY(name, member) { name, sizeof(name) - 1, offsetof(struct vt_region, member) }
static const struct {
	const char *key;
	size_t key_len;
	size_t offset;
} smaps_keys[] = {
	SMAPS_KEY("Rss", rss),
	SMAPS_KEY("Pss", pss),
	SMAPS_KEY("Private_Dirty", private_dirty),
	SMAPS_KEY("Anonymous", anonymous),
	SMAPS_KEY("Swap", swap),
	SMAPS_KEY("Locked", locked),
};
#undef SMAPS_KEY

static void parse_smaps_line(const char *line, size_t len, struct vt_region *r)
{
	const char *colon = memchr(line, ':', len);
	struct vt_scan s;
	size_t key_len, i;
	uint64_t v;

	if (!colon)
		return;
	key_len = (size_t)(colon - line);
	for (i = 0; i < sizeof(smaps_keys) / sizeof(smaps_keys[0]); i++) {
		if (smaps_keys[i].key_len != key_len || memcmp(smaps_keys[i].key, line, key_len))
			continue;
		s = vt_scan_init(colon + 1, len - key_len - 1);
		if (vt_scan_u64(&s, &v) && v <= UINT64_MAX / 1024)
			*(uint64_t *)(void *)((char *)r + smaps_keys[i].offset) = v * 1024;
		return;
	}
}

/* smaps field lines start with a capitalised key ("Rss:", "VmFlags:");
 * mapping lines with a lowercase hex address. */
static bool is_field_line(const char *line)
{
	return *line >= 'A' && *line <= 'Z';
}

static void region_mark_unread(struct vt_region *r)
{
	r->rss = r->pss = r->private_dirty = r->anonymous = r->swap = r->locked = VT_NA;
}

/* The first field line tells us this is smaps: every region so far gets zeros, not n/a. */
static void mark_smaps(struct vt_region_list *list)
{
	size_t i;

	list->has_smaps = true;
	for (i = 0; i < list->n; i++) {
		struct vt_region *r = &list->v[i];
		r->rss = r->pss = r->private_dirty = r->anonymous = r->swap = r->locked = 0;
	}
}

int vt_maps_parse(const char *buf, size_t len, struct vt_region_list *list, struct vt_err *err)
{
	struct vt_scan file = vt_scan_init(buf, len);
	struct vt_region *cur = NULL, tmp;
	const char *line;
	size_t line_len;
	int lineno = 0;

	list->has_smaps = false;
	list->stale = 0;
	while (vt_scan_line(&file, &line, &line_len)) {
		lineno++;
		if (line_len == 0)
			continue;
		if (is_field_line(line)) {
			if (!cur || !memchr(line, ':', line_len))
				goto bad_line;
			if (!list->has_smaps)
				mark_smaps(list);
			if (cur->rss == VT_NA)
				cur->rss = cur->pss = cur->private_dirty = cur->anonymous = cur->swap =
					cur->locked = 0;
			parse_smaps_line(line, line_len, cur);
			continue;
		}
		memset(&tmp, 0, sizeof(tmp));
		if (!parse_header(line, line_len, &tmp)) {
			free(tmp.path);
			goto bad_line;
		}
		while (list->n && list->v[list->n - 1].end > tmp.start) {
			free(list->v[--list->n].path);
			list->stale++;
		}
		if (list_push(list, &cur)) {
			free(tmp.path);
			return vt_err_set(err, VT_E_NOMEM, 0, "maps: out of memory");
		}
		*cur = tmp;
		region_mark_unread(cur);
	}
	return VT_OK;
bad_line:
	return vt_err_set(err, VT_E_PARSE, 0, "maps: line %d is neither a mapping nor a field", lineno);
}

void vt_region_blocks_free(struct vt_region_blocks *b)
{
	if (!b)
		return;
	free(b->v);
	free(b);
}

void vt_region_list_release(struct vt_region_list *list)
{
	size_t i;

	for (i = 0; i < list->n; i++) {
		free(list->v[i].path);
		vt_region_blocks_free(list->v[i].blocks);
		free(list->v[i].py);
	}
	free(list->v);
	list->v = NULL;
	list->n = list->cap = 0;
}
