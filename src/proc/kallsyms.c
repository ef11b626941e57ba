/*
 * kallsyms.c — kernel function names (see kallsyms.h).
 *
 * Lines are "ffffffff81000000 T _stext" with an optional "\t[module]".  Only
 * text symbols are kept (t, T, w, W); the names go into one blob and the
 * addresses into an array sorted for binary search.  An address is named by
 * the symbol at or below it, except past a known end of text: the core
 * kernel's _etext, and for the highest symbol a bound of END_SLACK bytes.
 * The text is untrusted (a recorded copy): malformed lines fail the parse.
 */
#include "proc/kallsyms.h"

#include "base/buf.h"
#include "base/scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KSYMS_FILE_MAX (256u << 20)
#define KSYMS_MAX (8u << 20)        /* symbols kept at most */
#define NAME_MAX_LEN 512
#define END_SLACK (64u << 10)       /* the last symbol covers at most this much */
#define RANK_END 4                  /* _etext: a function at the same address names it */

struct ksym {
	uint64_t addr;
	uint32_t name;              /* offset into names; UINT32_MAX: an end marker (_etext) */
	uint8_t rank;               /* at one address, the lower rank names it: T, t, W, w */
};

struct vt_ksyms {
	struct ksym *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

void vt_ksyms_free(struct vt_ksyms **pks)
{
	struct vt_ksyms *ks = pks ? *pks : NULL;

	if (!ks)
		return;
	free(ks->v);
	free(ks->names);
	free(ks);
	*pks = NULL;
}

static int rank_of(char type)
{
	switch (type) {
	case 'T': return 0;
	case 't': return 1;
	case 'W': return 2;
	case 'w': return 3;
	default: return -1;
	}
}

static bool printable(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

static bool push(struct vt_ksyms *ks, uint64_t addr, const char *name, size_t len, int rank)
{
	if (ks->n == KSYMS_MAX)
		return false;
	if (ks->n == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 4096;
		void *v = realloc(ks->v, cap * sizeof(*ks->v));

		if (!v)
			return false;
		ks->v = v;
		ks->cap = cap;
	}
	if (name) {
		if (ks->names_len + len + 1 > ks->names_cap) {
			size_t cap = ks->names_cap ? ks->names_cap * 2 : 65536;
			void *p;

			while (cap < ks->names_len + len + 1)
				cap *= 2;
			if (cap > UINT32_MAX)
				return false;
			p = realloc(ks->names, cap);
			if (!p)
				return false;
			ks->names = p;
			ks->names_cap = cap;
		}
		memcpy(ks->names + ks->names_len, name, len);
		ks->names[ks->names_len + len] = '\0';
	}
	ks->v[ks->n].addr = addr;
	ks->v[ks->n].name = name ? (uint32_t)ks->names_len : UINT32_MAX;
	ks->v[ks->n].rank = (uint8_t)rank;
	if (name)
		ks->names_len += len + 1;
	ks->n++;
	return true;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return (int)x->rank - (int)y->rank;
	return x->name < y->name ? -1 : x->name > y->name;   /* names are in file order */
}

int vt_ksyms_parse(const char *text, size_t len, struct vt_ksyms **out, struct vt_err *err)
{
	struct vt_scan sc = vt_scan_init(text, len);
	struct vt_ksyms *ks;
	const char *line, *type, *name;
	size_t llen, tlen, nlen, lineno = 0, lines = 0, nonzero = 0, i, j;
	int rc;

	*out = NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading kallsyms");
	while (vt_scan_line(&sc, &line, &llen)) {
		struct vt_scan ls = vt_scan_init(line, llen);
		uint64_t addr;
		int rank;

		lineno++;
		if (llen == 0)
			continue;
		if (!vt_scan_hex(&ls, &addr) || vt_scan_eof(&ls) || (*ls.p != ' ' && *ls.p != '\t') ||
		    !vt_scan_word(&ls, &type, &tlen) || tlen != 1 ||
		    !vt_scan_word(&ls, &name, &nlen) || nlen > NAME_MAX_LEN) {
			char snip[64];

			vt_snippet(snip, sizeof(snip), line, llen);
			rc = vt_err_set(err, VT_E_PARSE, 0, "kallsyms line %zu malformed: '%s'", lineno,
					snip);
			goto fail;
		}
		if (!printable(name, nlen)) {
			rc = vt_err_set(err, VT_E_PARSE, 0, "kallsyms line %zu: name is not printable",
					lineno);
			goto fail;
		}
		lines++;
		if (addr)
			nonzero++;
		if (nlen == 6 && memcmp(name, "_etext", 6) == 0) {
			if (!push(ks, addr, NULL, 0, RANK_END))
				goto nomem;
			continue;
		}
		rank = rank_of(type[0]);
		if (rank < 0 || addr == 0)
			continue;
		if (!push(ks, addr, name, nlen, rank))
			goto nomem;
	}
	if (lines == 0) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "kallsyms is empty");
		goto fail;
	}
	if (nonzero == 0) {
		rc = vt_err_set(err, VT_E_PERM, 0, "kallsyms hides the kernel's addresses (all read 0)");
		vt_err_hint(err, "run as root with kernel.kptr_restrict at 0 or 1 "
				 "(sysctl kernel.kptr_restrict=1); kernel frames are named by the "
				 "system call in progress instead");
		goto fail;
	}
	if (ks->n)   /* (qsort of NULL, 0 is undefined) */
		qsort(ks->v, ks->n, sizeof(*ks->v), cmp_ksym);
	/* one entry per address: the best-ranked name (the end marker ranks last) */
	for (i = 0, j = 0; i < ks->n; i++)
		if (j == 0 || ks->v[j - 1].addr != ks->v[i].addr)
			ks->v[j++] = ks->v[i];
	ks->n = j;
	*out = ks;
	return VT_OK;
nomem:
	rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading kallsyms (or over %u symbols)",
			KSYMS_MAX);
fail:
	vt_ksyms_free(&ks);
	return rc;
}

const char *vt_ksyms_name(const struct vt_ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi;
	const struct ksym *k;

	if (!ks || ks->n == 0 || addr < ks->v[0].addr)
		return NULL;
	hi = ks->n;
	while (hi - lo > 1) {   /* the last entry with v.addr <= addr */
		size_t mid = lo + (hi - lo) / 2;

		if (ks->v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	k = &ks->v[lo];
	if (k->name == UINT32_MAX)
		return NULL;
	if (lo == ks->n - 1 && addr - k->addr >= END_SLACK)
		return NULL;
	return ks->names + k->name;
}

int vt_ksyms_load(const char *path, struct vt_ksyms **out, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(KSYMS_FILE_MAX);
	const char *p = path ? path : "/proc/kallsyms";
	ssize_t n;
	int fd, rc, e;

	*out = NULL;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		rc = vt_err_set(err, e == ENOENT ? VT_E_NOTFOUND : vt_code_from_errno(e), e,
				"cannot open '%s': %s", p, strerror(e));
		return rc;
	}
	for (;;) {
		if (vt_buf_reserve(&buf, 256 * 1024) || buf.cap - 1 - buf.len == 0) {
			rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "'%s' is larger than %u bytes", p,
					KSYMS_FILE_MAX);
			goto out;
		}
		n = read(fd, buf.data + buf.len, buf.cap - 1 - buf.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			rc = vt_err_set(err, vt_code_from_errno(e), e, "cannot read '%s': %s", p,
					strerror(e));
			goto out;
		}
		if (n == 0)
			break;
		buf.len += (size_t)n;
	}
	rc = vt_ksyms_parse(buf.data ? buf.data : "", buf.len, out, err);
out:
	close(fd);
	vt_buf_release(&buf);
	return rc;
}
