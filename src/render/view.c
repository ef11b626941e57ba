/*
 * view.c — the table of views (see view.h), and what all views of a snap
 * share: the region selection rules.
 */
#include "render/view.h"

#include <string.h>

static int heap_text(FILE *out, const struct vt_heap_report *r)
{
	return vt_render_heap_text(out, r->sample, r->verdict, r->page_size, r->refill);
}

static int heap_json(FILE *out, const struct vt_heap_report *r)
{
	return vt_render_heap_json(out, r->sample, r->verdict, r->page_size, r->refill);
}

static int threads_text(FILE *out, const struct vt_threads_report *r)
{
	return vt_render_threads_text(out, r->rates, r->diagnosis, &r->view);
}

static int threads_json(FILE *out, const struct vt_threads_report *r)
{
	return vt_render_threads_json(out, r->rates, r->diagnosis, r->compact);
}

static int series_csv(FILE *out, const struct vt_analyze_report *r)
{
	return vt_render_series_csv(out, r->series);
}

static const struct vt_view views[] = {
	{ "text", vt_render_snap_text, heap_text, threads_text, vt_render_analyze_text, vt_render_compare_text,
	  vt_render_census_text, vt_render_caps_text, .age = vt_render_age_text },
	{ "json", vt_render_snap_json, heap_json, threads_json, vt_render_analyze_json, vt_render_compare_json,
	  vt_render_census_json, vt_render_caps_json, .age = vt_render_age_json },
	{ "csv", NULL, NULL, NULL, series_csv, vt_render_compare_csv },
	{ "html", NULL, NULL, NULL, vt_render_analyze_html, vt_render_compare_html, .age = vt_render_age_html },
};

const struct vt_view *vt_view(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (!strcmp(views[i].name, name))
			return &views[i];
	return NULL;
}

const char *vt_region_evidence(const struct vt_region *r, char *buf, size_t cap)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ VT_KIND_BY_NAME, "name" },
		{ VT_KIND_BY_MEMORY, "memory" },
		{ VT_KIND_BY_THREAD_SP, "thread-sp" },
		{ VT_KIND_BY_LAYOUT, "layout" },
	};
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(r->kind_flags & names[i].bit))
			continue;
		o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, "%s%s", o ? "+" : "",
				      names[i].name);
		if (o >= cap)
			break;
	}
	return buf;
}
