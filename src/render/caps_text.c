/*
 * caps_text.c — `vitals caps [PID]`: the host's settings and what each
 * means, then per feature of the process whether it works, why not, what
 * grants it, and what was tried.
 */
#include "render/caps.h"

#include <stdio.h>

static const char *status_word(enum vt_caps_status s)
{
	switch (s) {
	case VT_CAPS_WORKS: return "works";
	case VT_CAPS_REFUSED: return "REFUSED";
	case VT_CAPS_NOT_APPLICABLE: return "n/a";
	default: return "unknown";
	}
}

static void host(FILE *out, const struct vt_caps_report *r)
{
	size_t i;

	fprintf(out, "host\n");
	for (i = 0; i < r->nsettings; i++) {
		const struct vt_caps_setting *s = &r->settings[i];
		fprintf(out, "  %-28s %s\n", s->name, s->value);
		if (s->meaning[0])
			fprintf(out, "      %s\n", s->meaning);
	}
}

static void target(FILE *out, const struct vt_caps_report *r)
{
	const struct vt_caps_target *t = &r->target;
	int n[4] = { 0 };
	int i;

	fprintf(out, "\nprocess %d (%s): uid %ld", (int)t->pid, t->comm[0] ? t->comm : "?", t->uid_real);
	if (t->uid_eff != t->uid_real)
		fprintf(out, " (effective %ld)", t->uid_eff);
	if (t->allocator[0])
		fprintf(out, ", %s malloc", t->allocator);
	if (t->tracer_pid > 0)
		fprintf(out, ", traced by %ld", t->tracer_pid);
	if (t->seccomp == 2)
		fprintf(out, ", seccomp filter");
	if (!t->dumpable)
		fprintf(out, ", not dumpable");
	fprintf(out, "\n");
	for (i = 0; i < VT_CAPS__FEATURES; i++) {
		const struct vt_caps_feature *f = &r->features[i];
		n[f->status]++;
		fprintf(out, "  %-22s %-8s %s\n", vt_caps_feature_name(f->id), status_word(f->status),
			vt_caps_feature_command(f->id));
		if (f->reason[0])
			fprintf(out, "      %s%s\n", f->status == VT_CAPS_WORKS ? "note: " : "", f->reason);
		if (f->grant[0])
			fprintf(out, "      grant: %s\n", f->grant);
		if (f->how[0])
			fprintf(out, "      tried: %s\n", f->how);
	}
	fprintf(out, "\n%d checked: %d work, %d refused, %d not applicable, %d unknown%s\n", VT_CAPS__FEATURES,
		n[VT_CAPS_WORKS], n[VT_CAPS_REFUSED], n[VT_CAPS_NOT_APPLICABLE], n[VT_CAPS_UNKNOWN],
		r->live ? "" : " (a recorded /proc tree: nothing was tried on a process)");
}

int vt_render_caps_text(FILE *out, const struct vt_caps_report *r)
{
	host(out, r);
	if (r->has_target)
		target(out, r);
	return ferror(out) ? -1 : 0;
}
