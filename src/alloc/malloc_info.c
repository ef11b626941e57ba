/*
 * malloc_info.c — parse glibc's malloc_info() XML with expat.
 *
 * The document is flat and small (a few KB per arena); elements are read
 * as events, the numbers checked for overflow, unknown elements ignored so
 * that a newer glibc adding fields still parses.
 *
 * expat is opened on the first parse (base/dynlib.h says why): only heap
 * and the commands that read the arenas need it.
 */
#include "alloc/malloc_info.h"
#include "base/dynlib.h"
#include "base/scan.h"

#include <expat.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MI_MAX_ARENAS 4096
#define MI_MAX_BINS 1024

/* the expat functions the parse calls, typed from <expat.h> */
struct expat_api {
	__typeof__(&XML_ParserCreate) parser_create;
	__typeof__(&XML_SetUserData) set_user_data;
	__typeof__(&XML_SetElementHandler) set_element_handler;
	__typeof__(&XML_Parse) parse;
	__typeof__(&XML_GetErrorCode) get_error_code;
	__typeof__(&XML_ErrorString) error_string;
	__typeof__(&XML_ParserFree) parser_free;
};

static struct expat_api expat;

#define EXPAT_SYM(member, name) { name, offsetof(struct expat_api, member) }
static const struct vt_dynsym expat_syms[] = {
	EXPAT_SYM(parser_create, "XML_ParserCreate"),
	EXPAT_SYM(set_user_data, "XML_SetUserData"),
	EXPAT_SYM(set_element_handler, "XML_SetElementHandler"),
	EXPAT_SYM(parse, "XML_Parse"),
	EXPAT_SYM(get_error_code, "XML_GetErrorCode"),
	EXPAT_SYM(error_string, "XML_ErrorString"),
	EXPAT_SYM(parser_free, "XML_ParserFree"),
};
#undef EXPAT_SYM

/* Debian's libexpat1, the library <expat.h> comes from; the package Depends on it */
static struct vt_dynlib expat_lib = VT_DYNLIB("libexpat.so.1", "libexpat1",
					"reading malloc_info (the per-arena figures)", expat_syms, &expat);

struct parser {
	struct vt_malloc_info *out;
	struct vt_mi_arena *cur;      /* inside <heap>, else NULL */
	int depth;
	int saw_root;
	int failed;                   /* VT_E_* */
	char why[128];
};

static void fail(struct parser *p, int code, const char *why)
{
	if (!p->failed) {
		p->failed = code;
		snprintf(p->why, sizeof(p->why), "%s", why);
	}
}

static const char *attr(const XML_Char **atts, const char *name)
{
	for (; atts && atts[0]; atts += 2)
		if (!strcmp(atts[0], name))
			return atts[1];
	return NULL;
}

static int attr_u64(struct parser *p, const XML_Char **atts, const char *name, uint64_t *v)
{
	const char *text = attr(atts, name);
	struct vt_scan s;

	if (!text) {
		fail(p, VT_E_PARSE, "missing attribute");
		return -1;
	}
	s = vt_scan_init(text, strlen(text));
	if (!vt_scan_u64(&s, v) || !vt_scan_eof(&s)) {
		fail(p, VT_E_PARSE, "attribute is not a number");
		return -1;
	}
	return 0;
}

static void on_heap(struct parser *p, const XML_Char **atts)
{
	struct vt_malloc_info *mi = p->out;
	struct vt_mi_arena *a;
	uint64_t nr;

	if (p->cur || mi->n_arenas >= MI_MAX_ARENAS) {
		fail(p, VT_E_PARSE, p->cur ? "nested <heap>" : "too many arenas");
		return;
	}
	if (attr_u64(p, atts, "nr", &nr) || nr > INT_MAX)
		return;
	a = realloc(mi->arenas, (mi->n_arenas + 1) * sizeof(*a));
	if (!a) {
		fail(p, VT_E_NOMEM, "out of memory");
		return;
	}
	mi->arenas = a;
	p->cur = &a[mi->n_arenas++];
	memset(p->cur, 0, sizeof(*p->cur));
	p->cur->nr = (int)nr;
}

static void on_bin(struct parser *p, const XML_Char **atts, int unsorted)
{
	struct vt_mi_arena *a = p->cur;
	struct vt_mi_bin b = { 0 }, *bins;

	if (!a)
		return;          /* no process-wide bins exist; ignore */
	if (a->n_bins >= MI_MAX_BINS) {
		fail(p, VT_E_PARSE, "too many size classes");
		return;
	}
	if (attr_u64(p, atts, "from", &b.from) || attr_u64(p, atts, "to", &b.to) ||
	    attr_u64(p, atts, "total", &b.total) || attr_u64(p, atts, "count", &b.count))
		return;
	b.unsorted = unsorted;
	bins = realloc(a->bins, (a->n_bins + 1) * sizeof(*bins));
	if (!bins) {
		fail(p, VT_E_NOMEM, "out of memory");
		return;
	}
	a->bins = bins;
	a->bins[a->n_bins++] = b;
}

/* <total type=... count= size=>, <system type=... size=>, <aspace type=... size=> */
static void on_figure(struct parser *p, const char *el, const XML_Char **atts)
{
	struct vt_mi_totals *t = p->cur ? &p->cur->t : &p->out->total;
	const char *type = attr(atts, "type");
	uint64_t size, count = 0;

	if (!type || attr_u64(p, atts, "size", &size))
		return fail(p, VT_E_PARSE, "figure without type or size");
	if (!strcmp(el, "total") && attr_u64(p, atts, "count", &count))
		return;
	if (!strcmp(el, "total")) {
		if (!strcmp(type, "fast"))
			t->fast_count = count, t->fast_bytes = size;
		else if (!strcmp(type, "rest"))
			t->rest_count = count, t->rest_bytes = size;
		else if (!strcmp(type, "mmap"))
			t->mmap_count = count, t->mmap_bytes = size;
	} else if (!strcmp(el, "system")) {
		if (!strcmp(type, "current"))
			t->system_current = size;
		else if (!strcmp(type, "max"))
			t->system_max = size;
	} else {
		if (!strcmp(type, "total"))
			t->aspace_total = size;
		else if (!strcmp(type, "mprotect"))
			t->aspace_mprotect = size;
		else if (!strcmp(type, "subheaps"))
			t->subheaps = size;
	}
}

static void XMLCALL on_start(void *data, const XML_Char *el, const XML_Char **atts)
{
	struct parser *p = data;

	p->depth++;
	if (p->failed)
		return;
	if (p->depth == 1) {
		const char *version = attr(atts, "version");
		if (strcmp(el, "malloc") || !version || strcmp(version, "1"))
			fail(p, VT_E_PARSE, "not <malloc version=\"1\">");
		p->saw_root = 1;
	} else if (!strcmp(el, "heap")) {
		on_heap(p, atts);
	} else if (!strcmp(el, "size")) {
		on_bin(p, atts, 0);
	} else if (!strcmp(el, "unsorted")) {
		on_bin(p, atts, 1);
	} else if (!strcmp(el, "total") || !strcmp(el, "system") || !strcmp(el, "aspace")) {
		on_figure(p, el, atts);
	}
}

static void XMLCALL on_end(void *data, const XML_Char *el)
{
	struct parser *p = data;

	p->depth--;
	if (!strcmp(el, "heap"))
		p->cur = NULL;
}

int vt_malloc_info_ready(struct vt_err *err)
{
	return vt_dynlib_load(&expat_lib, err);
}

int vt_malloc_info_parse(const char *xml, size_t len, struct vt_malloc_info *out,
			 struct vt_err *err)
{
	struct parser p = { out, NULL, 0, 0, 0, "" };
	XML_Parser xp;
	int ok, rc;

	memset(out, 0, sizeof(*out));
	if (len > INT_MAX)
		return vt_err_set(err, VT_E_PARSE, 0, "malloc_info: document too large");
	if ((rc = vt_malloc_info_ready(err)))
		return rc;
	xp = expat.parser_create("UTF-8");
	if (!xp)
		return vt_err_set(err, VT_E_NOMEM, 0, "malloc_info: out of memory");
	expat.set_user_data(xp, &p);
	expat.set_element_handler(xp, on_start, on_end);
	ok = expat.parse(xp, xml, (int)len, 1) == XML_STATUS_OK;
	if (!ok && !p.failed)
		fail(&p, VT_E_PARSE, expat.error_string(expat.get_error_code(xp)));
	expat.parser_free(xp);
	if (!p.failed && !p.saw_root)
		fail(&p, VT_E_PARSE, "empty document");
	if (p.failed) {
		vt_malloc_info_release(out);
		return vt_err_set(err, p.failed, 0, "malloc_info: %s", p.why);
	}
	return VT_OK;
}

void vt_malloc_info_release(struct vt_malloc_info *mi)
{
	size_t i;

	for (i = 0; i < mi->n_arenas; i++)
		free(mi->arenas[i].bins);
	free(mi->arenas);
	memset(mi, 0, sizeof(*mi));
}

void vt_malloc_info_trim_estimate(const struct vt_mi_arena *a, uint64_t page,
				  struct vt_trim_estimate *out)
{
	uint64_t listed = 0, top, low = 0, high = 0;
	size_t i;

	for (i = 0; i < a->n_bins; i++) {
		const struct vt_mi_bin *b = &a->bins[i];
		listed += b->total;
		if (b->total > b->count * 2 * page)
			low += b->total - b->count * 2 * page;
		if (b->to >= page)
			high += b->total;
	}
	/* The listed size classes hold every free chunk but the top one, which
	 * malloc_trim shrinks in the main arena only (malloc_info.h). */
	top = vt_mi_free_bytes(&a->t) > listed ? vt_mi_free_bytes(&a->t) - listed : 0;
	if (a->nr == 0) {
		low += top > page ? top - page : 0;
		high += top;
	}
	out->low_bytes = low;
	out->high_bytes = high;
}
