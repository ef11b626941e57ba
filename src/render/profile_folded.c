/*
 * profile_folded.c — collapsed stacks (see profile_folded.h).
 *
 * Each stack of the profile becomes its line's text (without the count);
 * the lines are sorted and equal texts merged, which also merges what the
 * profile keeps apart but the text cannot tell apart: the same stack in two
 * threads or states, two addresses in one function.
 */
#include "render/profile_folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_MAX 4096
#define FOLDED_FILE_MAX ((size_t)1 << 32)   /* what the stream version holds in memory */

struct line {
	char *text;
	uint64_t count;
};

/* Append s with the bytes that break the format replaced. */
static int append_clean(struct vt_buf *b, const char *s)
{
	size_t n = strlen(s);
	int rc = vt_buf_reserve(b, n);

	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		b->data[b->len++] = (char)c;
	}
	b->data[b->len] = '\0';
	return VT_OK;
}

/* The root frame naming the thread, or nothing when merged. */
static int append_root(struct vt_buf *b, const struct vt_profile *p, uint32_t thread,
		       enum vt_folded_root root)
{
	const struct vt_prof_thread *t = thread < p->nthreads ? &p->threads[thread] : NULL;
	const char *comm = t ? vt_profile_str(p, t->name) : "";
	int rc;

	if (root == VT_FOLDED_MERGED)
		return VT_OK;
	if (!*comm)
		comm = "[unknown]";
	if (root == VT_FOLDED_BY_POOL && t && t->pool)
		rc = append_clean(b, vt_profile_str(p, t->pool));
	else
		rc = append_clean(b, comm);
	if (!rc && root == VT_FOLDED_BY_THREAD)
		rc = vt_buf_appendf(b, "-%d", t ? (int)t->tid : 0);
	return rc ? rc : vt_buf_append(b, ";", 1);
}

/* The text of stack s, root first, into b (reset first). */
static int stack_text(struct vt_buf *b, const struct vt_profile *p, const struct vt_prof_stack *s,
		      enum vt_folded_root root)
{
	const uint32_t *locs = vt_profile_stack_locs(p, s);
	char label[LABEL_MAX];
	int rc;

	vt_buf_reset(b);
	rc = append_root(b, p, s->thread, root);
	if (!rc && s->truncated)
		rc = vt_buf_append(b, "[truncated];", 12);
	if (!rc && s->depth == 0)
		rc = vt_buf_append(b, "[unknown];", 10);
	for (uint32_t i = s->depth; !rc && i-- > 0;) {
		uint32_t loc = locs[i];

		vt_profile_loc_label(p, loc, label, sizeof(label));
		rc = append_clean(b, label);
		if (!rc && loc < p->nlocs && p->locs[loc].kernel)
			rc = vt_buf_append(b, "_[k]", 4);
		if (!rc)
			rc = vt_buf_append(b, ";", 1);
	}
	if (!rc)
		b->data[--b->len] = '\0';   /* the last ';' */
	return rc;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int vt_profile_folded(const struct vt_profile *p, const struct vt_folded_opts *opts,
		      struct vt_buf *out, struct vt_err *err)
{
	struct vt_folded_opts none = { 0 };
	struct vt_buf text = VT_BUF_INIT(1u << 24);
	struct line *lines;
	size_t n = 0, i;
	int rc = VT_OK;

	if (!opts)
		opts = &none;
	lines = calloc(p->nstacks ? p->nstacks : 1, sizeof(*lines));
	if (!lines)
		return vt_err_set(err, VT_E_NOMEM, 0, "folded stacks: %u stacks", p->nstacks);
	for (i = 0; i < p->nstacks && !rc; i++) {
		const struct vt_prof_stack *s = &p->stacks[i];

		if (!s->count || !vt_prof_states_has(opts->states, s->state))
			continue;
		rc = stack_text(&text, p, s, opts->root);
		if (rc)
			break;
		lines[n].text = strdup(text.data);
		if (!lines[n].text) {
			rc = VT_E_NOMEM;
			break;
		}
		lines[n++].count = s->count;
	}
	if (!rc)
		qsort(lines, n, sizeof(*lines), line_cmp);
	for (i = 0; i < n && !rc;) {
		uint64_t count = 0;
		size_t j = i;

		while (j < n && strcmp(lines[j].text, lines[i].text) == 0)
			count += lines[j++].count;
		rc = vt_buf_appendf(out, "%s %" PRIu64 "\n", lines[i].text, count);
		i = j;
	}
	for (i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	vt_buf_release(&text);
	if (rc)
		return vt_err_set(err, VT_E_NOMEM, 0, "folded stacks: %u stacks", p->nstacks);
	return VT_OK;
}

int vt_profile_folded_write(FILE *out, const struct vt_profile *p,
			    const struct vt_folded_opts *opts, struct vt_err *err)
{
	struct vt_buf b = VT_BUF_INIT(FOLDED_FILE_MAX);
	int rc = vt_profile_folded(p, opts, &b, err);

	if (!rc && b.len && fwrite(b.data, 1, b.len, out) != b.len)
		rc = vt_err_set(err, VT_E_IO, errno, "cannot write the folded stacks");
	if (!rc && fflush(out) != 0)
		rc = vt_err_set(err, VT_E_IO, errno, "cannot write the folded stacks");
	vt_buf_release(&b);
	return rc;
}
