/*
 * code_map.c — the code modules of a maps file (see code_map.h).
 */
#include "elf/code_map.h"

#include "base/scan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DELETED " (deleted)"

/* One maps line, the fields we use. */
struct line {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	bool exec;
	const char *path;   /* not NUL-terminated */
	size_t path_len;
};

static bool scan_line(const char *text, size_t len, struct line *l)
{
	struct vt_scan sc = vt_scan_init(text, len);
	uint64_t maj, min;
	const char *perms;
	size_t plen;

	if (!vt_scan_hex(&sc, &l->start) || !vt_scan_char(&sc, '-') || !vt_scan_hex(&sc, &l->end) ||
	    l->end < l->start || !vt_scan_word(&sc, &perms, &plen) || plen != 4)
		return false;
	l->exec = perms[2] == 'x';
	vt_scan_blanks(&sc);
	if (!vt_scan_hex(&sc, &l->offset))
		return false;
	vt_scan_blanks(&sc);
	if (!vt_scan_hex(&sc, &maj) || !vt_scan_char(&sc, ':') || !vt_scan_hex(&sc, &min) ||
	    maj > 0xfffff || min > 0xfffff || !vt_scan_u64(&sc, &l->inode))
		return false;
	l->dev_major = (unsigned)maj;
	l->dev_minor = (unsigned)min;
	vt_scan_rest(&sc, &l->path, &l->path_len);
	return true;
}

static bool path_deleted(const char *p, size_t len)
{
	size_t s = sizeof(DELETED) - 1;

	return len > s && memcmp(p + len - s, DELETED, s) == 0;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--) {
		h ^= *c++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int add(struct vt_code_map *m, const struct line *first, uint64_t high, bool vdso,
	       struct vt_err *err)
{
	struct vt_code_module *mod;
	size_t plen = first->path_len;
	bool deleted = !vdso && path_deleted(first->path, plen);

	if (m->n == VT_CODE_MAP_MAX)
		return vt_err_set(err, VT_E_PARSE, 0, "maps: more than %d code files", VT_CODE_MAP_MAX);
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		void *v = realloc(m->v, cap * sizeof(*m->v));

		if (!v)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading maps");
		m->v = v;
		m->cap = cap;
	}
	if (deleted)
		plen -= sizeof(DELETED) - 1;
	mod = &m->v[m->n];
	memset(mod, 0, sizeof(*mod));
	mod->path = strndup(first->path, plen);
	if (!mod->path)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading maps");
	mod->low = first->start;
	mod->high = high;
	mod->map_start = first->start;
	mod->map_end = first->end;
	mod->inode = first->inode;
	mod->dev_major = first->dev_major;
	mod->dev_minor = first->dev_minor;
	mod->vdso = vdso;
	mod->deleted = deleted;
	m->n++;
	return VT_OK;
}

/* Memory of no file a JIT writes code to: unnamed, the heap, or named by its
 * runtime (prctl PR_SET_VMA_ANON_NAME); not the kernel's [vsyscall] page. */
static bool anonymous(const struct line *l)
{
	return l->path_len == 0 || vt_word_is(l->path, l->path_len, "[heap]") ||
	       (l->path_len >= 6 && memcmp(l->path, "[anon:", 6) == 0) ||
	       (l->path_len >= 6 && memcmp(l->path, "//anon", 6) == 0);
}

/* An executable mapping of no file, merged with the one it continues. */
static int add_anon(struct vt_code_map *m, const struct line *l, struct vt_err *err)
{
	if (l->end <= l->start || (m->nanon && l->start < m->anon[m->nanon - 1].end))
		return VT_OK;   /* out of order (maps never is): kept sorted for the lookup */
	if (m->nanon && m->anon[m->nanon - 1].end == l->start) {
		m->anon[m->nanon - 1].end = l->end;
		return VT_OK;
	}
	if (m->nanon == VT_CODE_MAP_MAX)
		return vt_err_set(err, VT_E_PARSE, 0, "maps: more than %d anonymous code mappings",
				  VT_CODE_MAP_MAX);
	if (m->nanon == m->anon_cap) {
		size_t cap = m->anon_cap ? m->anon_cap * 2 : 16;
		void *v = realloc(m->anon, cap * sizeof(*m->anon));

		if (!v)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading maps");
		m->anon = v;
		m->anon_cap = cap;
	}
	m->anon[m->nanon++] = (struct vt_code_range){ .start = l->start, .end = l->end };
	return VT_OK;
}

/* How far apart two mappings of one load of a file can be, by the address
 * each puts the file's start at: the segments of one ELF differ by their
 * alignment only.  Farther is another mapping of the file (node maps part of
 * its own text again, gigabytes away, with anonymous V8 code between). */
#define LOAD_SKEW_MAX (1ull << 30)

/* Does b continue the load of a's file that a began (and that ended at high)? */
static bool same_load(const struct line *a, const struct line *b, uint64_t high)
{
	uint64_t at_a = a->start - a->offset, at_b = b->start - b->offset;

	return a->inode == b->inode && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->path_len == b->path_len && memcmp(a->path, b->path, a->path_len) == 0 &&
	       b->start >= high && (at_b > at_a ? at_b - at_a : at_a - at_b) <= LOAD_SKEW_MAX;
}

int vt_code_map_parse(const char *buf, size_t len, struct vt_code_map *m, struct vt_err *err)
{
	struct vt_scan sc = vt_scan_init(buf, len);
	struct line l, first;
	bool open = false, exec = false;
	uint64_t high = 0, h = 0xcbf29ce484222325ull;
	const char *text;
	size_t tlen, lineno = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	while (vt_scan_line(&sc, &text, &tlen)) {
		bool file, vdso;

		lineno++;
		if (tlen == 0)
			continue;
		if (!scan_line(text, tlen, &l)) {
			char snip[64];

			vt_snippet(snip, sizeof(snip), text, tlen);
			rc = vt_err_set(err, VT_E_PARSE, 0, "maps line %zu malformed: '%s'", lineno, snip);
			goto fail;
		}
		if (l.exec) {
			h = fnv(h, &l.start, sizeof(l.start));
			h = fnv(h, &l.end, sizeof(l.end));
			h = fnv(h, &l.offset, sizeof(l.offset));
			h = fnv(h, &l.inode, sizeof(l.inode));
			h = fnv(h, l.path, l.path_len);
			m->exec_mappings++;
		}
		file = l.path_len && l.path[0] == '/' && l.inode != 0;
		vdso = vt_word_is(l.path, l.path_len, "[vdso]");
		if (open && file && same_load(&first, &l, high)) {
			high = l.end;
			exec |= l.exec;
			continue;
		}
		if (!file && !vdso) {
			/* anonymous (.bss beyond the file) and specials: the module goes on */
			if (l.exec && anonymous(&l) && (rc = add_anon(m, &l, err)))
				goto fail;
			continue;
		}
		if (open && exec && first.offset == 0 && (rc = add(m, &first, high, false, err)))
			goto fail;
		open = false;
		if (vdso) {
			if (l.exec && (rc = add(m, &l, l.end, true, err)))
				goto fail;
			continue;
		}
		first = l;
		high = l.end;
		exec = l.exec;
		open = true;
	}
	if (open && exec && first.offset == 0 && (rc = add(m, &first, high, false, err)))
		goto fail;
	m->fingerprint = h;
	return VT_OK;
fail:
	vt_code_map_release(m);
	return rc;
}

void vt_code_map_release(struct vt_code_map *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	free(m->anon);
	memset(m, 0, sizeof(*m));
}

const struct vt_code_range *vt_code_map_anon_at(const struct vt_code_map *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nanon;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->anon[mid].start)
			hi = mid;
		else if (addr >= m->anon[mid].end)
			lo = mid + 1;
		else
			return &m->anon[mid];
	}
	return NULL;
}

const char *vt_code_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}
