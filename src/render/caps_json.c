/*
 * caps_json.c — `vitals caps --json` (schema vitals.caps, docs/json.md).
 */
#include "render/caps.h"
#include "render/json.h"

#include <inttypes.h>
#include <stdio.h>

/* A sysctl's value, or null when absent or unreadable. */
static json_t *sysctl(long v)
{
	return v == VT_SYSCTL_ABSENT || v == VT_SYSCTL_UNREADABLE ? json_null() : json_integer(v);
}

static json_t *cap_names(uint64_t mask)
{
	json_t *a = json_array();
	int bit;

	for (bit = 0; bit < 64; bit++) {
		char unknown[16];
		const char *name = vt_cap_name(bit);
		if (!vt_cap_has(mask, bit))
			continue;
		if (!name) {
			snprintf(unknown, sizeof(unknown), "cap_%d", bit);
			name = unknown;
		}
		json_array_append_new(a, json_string(name));
	}
	return a;
}

static json_t *host(const struct vt_caps_report *r)
{
	const struct vt_host_caps *h = &r->host;
	json_t *settings = json_array();
	char hex[24];
	size_t i;

	for (i = 0; i < r->nsettings; i++)
		json_array_append_new(settings, json_pack("{s:s, s:o, s:s}", "name", r->settings[i].name, "value",
							  vt_json_text(r->settings[i].value), "meaning",
							  r->settings[i].meaning));
	snprintf(hex, sizeof(hex), "%016" PRIx64, h->self.cap_eff);
	return json_pack("{s:o, s:o, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o}, s:s, s:b, s:o, s:o}",
			 "kernel", h->kernel[0] ? vt_json_text(h->kernel) : json_null(),
			 "ptrace_scope", sysctl(h->ptrace_scope),
			 "perf_event_paranoid", sysctl(h->perf_event_paranoid),
			 "kptr_restrict", sysctl(h->kptr_restrict),
			 "vitals",
			 "uid", h->self.uid_eff >= 0 ? json_integer(h->self.uid_eff) : json_null(),
			 "cap_eff", h->self.caps_known ? json_string(hex) : json_null(),
			 "capabilities", h->self.caps_known ? cap_names(h->self.cap_eff) : json_null(),
			 "bounding_missing", h->self.caps_known ? cap_names(~h->self.cap_bnd &
									   ((UINT64_C(1) << (VT_CAP_LAST + 1)) - 1))
								: json_null(),
			 "seccomp", h->self.seccomp >= 0 ? json_integer(h->self.seccomp) : json_null(),
			 "no_new_privs", h->self.no_new_privs >= 0 ? json_boolean(h->self.no_new_privs) : json_null(),
			 "cgroups", vt_cgroup_kind_name(h->cgroups),
			 "psi", h->psi,
			 "hidepid", h->proc_mounted ? json_string(h->hidepid[0] ? h->hidepid : "0") : json_null(),
			 "settings", settings);
}

static json_t *target(const struct vt_caps_report *r)
{
	const struct vt_caps_target *t = &r->target;

	return json_pack("{s:i, s:o, s:o, s:o, s:I, s:o, s:b, s:b, s:o, s:b}",
			 "pid", (int)t->pid, "comm", vt_json_text(t->comm),
			 "uid", t->uid_real >= 0 ? json_integer(t->uid_real) : json_null(),
			 "euid", t->uid_eff >= 0 ? json_integer(t->uid_eff) : json_null(),
			 "tracer_pid", (json_int_t)t->tracer_pid,
			 "seccomp", t->seccomp >= 0 ? json_integer(t->seccomp) : json_null(),
			 "dumpable", t->dumpable, "vitals_is_ancestor", t->descendant,
			 "allocator", t->allocator[0] ? json_string(t->allocator) : json_null(),
			 "agent_mapped", t->agent_mapped);
}

static json_t *text_or_null(const char *s)
{
	return s[0] ? vt_json_text(s) : json_null();
}

static json_t *features(const struct vt_caps_report *r)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < VT_CAPS__FEATURES; i++) {
		const struct vt_caps_feature *f = &r->features[i];
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o}",
						   "name", vt_caps_feature_name(f->id),
						   "command", vt_caps_feature_command(f->id),
						   "status", vt_caps_status_name(f->status),
						   "what", json_string(vt_caps_feature_what(f->id)),
						   "reason", text_or_null(f->reason),
						   "grant", text_or_null(f->grant),
						   "tried", text_or_null(f->how),
						   "errno", f->sys_errno ? json_integer(f->sys_errno) : json_null()));
	}
	return a;
}

int vt_render_caps_json(FILE *out, const struct vt_caps_report *r)
{
	json_t *root = vt_json_envelope(VT_SCHEMA_CAPS);
	bool failed = !root;

	if (root) {
		failed |= json_object_set_new(root, "host", host(r)) != 0;
		failed |= json_object_set_new(root, "live", json_boolean(r->live)) != 0;
		failed |= json_object_set_new(root, "process", r->has_target ? target(r) : json_null()) != 0;
		failed |= json_object_set_new(root, "features", r->has_target ? features(r) : json_array()) != 0;
		failed |= json_object_set_new(root, "partial", json_boolean(vt_caps_partial(r))) != 0;
	}
	return vt_json_write(out, root, false, failed);
}
