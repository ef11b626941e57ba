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

/* Room for one more region at v[n]. */
static int list_room(struct vt_region_list *list)
{
	struct vt_region *v;
	size_t cap;

	if (list->n < list->cap)
		return VT_OK;
	/* past the first 64, straight to a size malloc maps on its own, which realloc then moves without copying */
	cap = list->cap ? (list->cap < 1024 ? 1024 : list->cap * 2) : 64;
	v = realloc(list->v, cap * sizeof(*v));
	if (!v)
		return VT_E_NOMEM;
	list->v = v;
	list->cap = cap;
	return VT_OK;
}

static int files_push(struct vt_region_list *list, size_t i)
{
	size_t *v, cap;

	if (list->nfiles == list->files_cap) {
		cap = list->files_cap ? list->files_cap * 2 : 64;
		v = realloc(list->files, cap * sizeof(*v));
		if (!v)
			return VT_E_NOMEM;
		list->files = v;
		list->files_cap = cap;
	}
	list->files[list->nfiles++] = i;
	return VT_OK;
}

/*
 * The paths' text: blocks that never move (a region points into them), each
 * filled before the next.  Most mappings share their path with the one
 * before (a library's segments) or have none (anonymous): those cost nothing.
 */
#define NAMES_BLOCK (16u << 10)

struct vt_maps_names {
	struct vt_maps_names *next;  /* the block filled before */
	size_t used, cap;
	char text[];
};

static const char no_path[] = "";

static const char *name_keep(struct vt_region_list *list, const char *path, size_t len)
{
	struct vt_maps_names *b = list->names;
	const char *prev;
	char *dst;

	len = strnlen(path, len);    /* a NUL in the text ends the path, as it would a copy of the line */
	if (!len)
		return no_path;
	prev = list->n ? list->v[list->n - 1].path : NULL;
	if (prev && !strncmp(prev, path, len) && prev[len] == '\0')
		return prev;
	if (!b || b->cap - b->used < len + 1) {
		size_t cap = len + 1 > NAMES_BLOCK ? len + 1 : NAMES_BLOCK;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = list->names;
		b->used = 0;
		b->cap = cap;
		list->names = b;
	}
	dst = b->text + b->used;
	memcpy(dst, path, len);
	dst[len] = '\0';
	b->used += len + 1;
	return dst;
}

static void names_free(struct vt_maps_names *b)
{
	while (b) {
		struct vt_maps_names *next = b->next;
		free(b);
		b = next;
	}
}

/*
 * The grammar of base/scan.h's cursor (hex without 0x, overflow refused,
 * blanks are space and tab), written out for the one line type read
 * thousands of times a snapshot.
 */
static const unsigned char hex_value1[256] = {   /* 1 + a hex digit's value, 0 for any other byte */
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
	['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * The header line is parsed between line and eol, its '\n': no field can
 * run past that byte (it is no digit, blank nor letter), so the loops below
 * stop on it without checking for the end of the text.
 */
static inline const char *skip_blanks(const char *p)
{
	if (*p == ' ' && !is_blank(p[1]))   /* the kernel's one space (p[1] is at most the '\n') */
		return p + 1;
	while (is_blank(*p))
		p++;
	return p;
}

/* 1 + the value of the 8 hex digits at p, each a table load and no branch; 0 when one is not a digit. */
static inline __attribute__((always_inline)) uint64_t hex8(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	unsigned d0 = hex_value1[u[0]], d1 = hex_value1[u[1]], d2 = hex_value1[u[2]], d3 = hex_value1[u[3]];
	unsigned d4 = hex_value1[u[4]], d5 = hex_value1[u[5]], d6 = hex_value1[u[6]], d7 = hex_value1[u[7]];

	if (!(d0 && d1 && d2 && d3 && d4 && d5 && d6 && d7))
		return 0;
	return 1 + ((uint64_t)(d0 - 1) << 28 | (uint64_t)(d1 - 1) << 24 | (uint64_t)(d2 - 1) << 20 |
		    (uint64_t)(d3 - 1) << 16 | (uint64_t)(d4 - 1) << 12 | (uint64_t)(d5 - 1) << 8 |
		    (uint64_t)(d6 - 1) << 4 | (uint64_t)(d7 - 1));
}

/* A hex number at p, before eol: the byte after it, NULL when none or it overflows. */
static inline __attribute__((always_inline)) const char *take_hex(const char *p, const char *eol, uint64_t *out)
{
	uint64_t v = 0, first8;
	unsigned d;

	if (!hex_value1[(unsigned char)*p])
		return NULL;
	/* the kernel writes addresses and offsets with 8 digits at least: take them at once,
	 * and the 4 more of a 12-digit address too */
	if (eol - p >= 8 && (first8 = hex8(p)) != 0) {
		const unsigned char *u = (const unsigned char *)p + 8;
		unsigned d0, d1, d2, d3;

		v = first8 - 1;
		p += 8;
		if (eol - p >= 4 && (d0 = hex_value1[u[0]]) && (d1 = hex_value1[u[1]]) && (d2 = hex_value1[u[2]]) &&
		    (d3 = hex_value1[u[3]])) {
			v = v << 16 | (uint64_t)(d0 - 1) << 12 | (d1 - 1) << 8 | (d2 - 1) << 4 | (d3 - 1);
			p += 4;
		}
	}
	while ((d = hex_value1[(unsigned char)*p]) != 0) {
		if (v >> 60)
			return NULL;
		v = (v << 4) | (d - 1);
		p++;
	}
	*out = v;
	return p;
}

/* A decimal number after optional blanks, as vt_scan_u64. */
static inline const char *take_u64(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	unsigned d;

	p = skip_blanks(p);
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9') {
		d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
		p++;
	}
	*out = v;
	return p;
}

/*
 * The header line [line, eol), *eol being its '\n': a hex address followed
 * by '-', ...  The path is kept by the caller (*path, *path_len).
 */
static bool parse_header(const char *line, const char *eol, struct vt_region *r, const char **path,
			 size_t *path_len)
{
	const char *p = line, *perms;
	uint64_t maj, min;

	if (!(p = take_hex(p, eol, &r->start)) || *p++ != '-' || !(p = take_hex(p, eol, &r->end)))
		return false;
	if (r->end < r->start)
		return false;
	/* perms: one word of four bytes after blanks */
	p = skip_blanks(p);
	perms = p;
	while (!is_blank(*p) && *p != '\n')
		p++;
	if (p - perms != 4)
		return false;
	memcpy(r->perms, perms, 4);
	r->perms[4] = '\0';
	if (!(p = take_hex(skip_blanks(p), eol, &r->offset)))
		return false;
	if (!(p = take_hex(skip_blanks(p), eol, &maj)) || *p++ != ':' || !(p = take_hex(p, eol, &min)))
		return false;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return false;
	r->dev_major = (unsigned)maj;
	r->dev_minor = (unsigned)min;
	if (!(p = take_u64(p, &r->inode)))
		return false;
	p = skip_blanks(p);
	*path = p;
	*path_len = (size_t)(eol - p);
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
	SMAPS_KEY("Swap", swap),
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
	r->rss = r->pss = r->swap = VT_NA;
}

/* The first field line tells us this is smaps: every region so far gets zeros, not n/a. */
static void mark_smaps(struct vt_region_list *list)
{
	size_t i;

	list->has_smaps = true;
	for (i = 0; i < list->n; i++) {
		struct vt_region *r = &list->v[i];
		r->rss = r->pss = r->swap = 0;
	}
}

void vt_maps_parse_start(struct vt_maps_parser *p, struct vt_region_list *list)
{
	p->list = list;
	p->lineno = 0;
	list->has_smaps = false;
	list->stale = 0;
}

/*
 * One header line: a new region at the end of the list, parsed in place,
 * older views of its memory dropped.  *next: where the next line starts.
 */
static int add_region(struct vt_region_list *list, const char *line, const char *end, const char **next)
{
	const char *eol = memchr(line, '\n', (size_t)(end - line)), *path;
	struct vt_region *r;
	char *last = NULL;
	size_t path_len;
	int rc = VT_OK;

	if (list_room(list))
		return VT_E_NOMEM;
	*next = eol ? eol + 1 : end;
	if (!eol) {
		/* the text's last line lacks its '\n': parse a copy that has one */
		if (!(last = malloc((size_t)(end - line) + 1)))
			return VT_E_NOMEM;
		memcpy(last, line, (size_t)(end - line));
		last[end - line] = '\n';
		eol = last + (end - line);
		line = last;
	}
	r = &list->v[list->n];
	if (!parse_header(line, eol, r, &path, &path_len)) {
		rc = VT_E_PARSE;
		goto out;
	}
	if (list->n && list->v[list->n - 1].end > r->start) {
		struct vt_region *older = &list->v[list->n - 1];
		while (list->n && older->end > r->start) {
			list->n--;
			list->stale++;
			older--;
		}
		list->v[list->n] = *r;
		r = &list->v[list->n];
		while (list->nfiles && list->files[list->nfiles - 1] >= list->n)
			list->nfiles--;
	}
	if (!(r->path = name_keep(list, path, path_len)) || (r->inode && files_push(list, list->n))) {
		rc = VT_E_NOMEM;
		goto out;
	}
	region_mark_unread(r);
	r->kind = VT_REGION_OTHER;
	r->kind_flags = 0;
	r->owner_tid = 0;
	r->blocks = NULL;
	r->py = NULL;
	list->n++;
out:
	free(last);
	return rc;
}

int vt_maps_parse_more(struct vt_maps_parser *p, const char *text, size_t len, struct vt_err *err)
{
	struct vt_region_list *list = p->list;
	const char *line = text, *end = text + len, *nl;
	int rc;

	while (line < end) {
		p->lineno++;
		if (*line == '\n') {
			line++;
			continue;
		}
		if (is_field_line(line)) {
			struct vt_region *cur = list->n ? &list->v[list->n - 1] : NULL;
			nl = memchr(line, '\n', (size_t)(end - line));
			if (!nl)
				nl = end;
			if (!cur || !memchr(line, ':', (size_t)(nl - line)))
				goto bad_line;
			if (!list->has_smaps)
				mark_smaps(list);
			if (cur->rss == VT_NA)
				cur->rss = cur->pss = cur->swap = 0;
			parse_smaps_line(line, (size_t)(nl - line), cur);
			line = nl < end ? nl + 1 : end;
			continue;
		}
		rc = add_region(list, line, end, &line);
		if (rc == VT_E_NOMEM)
			return vt_err_set(err, VT_E_NOMEM, 0, "maps: out of memory");
		if (rc)
			goto bad_line;
	}
	return VT_OK;
bad_line:
	return vt_err_set(err, VT_E_PARSE, 0, "maps: line %d is neither a mapping nor a field", p->lineno);
}

int vt_maps_parse(const char *buf, size_t len, struct vt_region_list *list, struct vt_err *err)
{
	struct vt_maps_parser p;

	vt_maps_parse_start(&p, list);
	return vt_maps_parse_more(&p, buf, len, err);
}

static int take_maps(void *ctx, const char *text, size_t len, struct vt_err *err)
{
	return vt_maps_parse_more(ctx, text, len, err);
}

int vt_maps_read_at(int dirfd, const char *name, struct vt_buf *buf, struct vt_region_list *list,
		    struct vt_err *err)
{
	struct vt_maps_parser p;

	vt_maps_parse_start(&p, list);
	return vt_read_lines_at(dirfd, name, buf, take_maps, &p, err);
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
		vt_region_blocks_free(list->v[i].blocks);
		free(list->v[i].py);
	}
	free(list->v);
	names_free(list->names);
	free(list->files);
	list->v = NULL;
	list->names = NULL;
	list->files = NULL;
	list->n = list->cap = list->nfiles = list->files_cap = 0;
}
