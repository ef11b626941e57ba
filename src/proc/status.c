/*
 * status.c — parse /proc/PID/status ("Key:\tvalue" lines).
 */
#include "proc/status.h"
#include "base/unknown.h"
#include "proc/procfs.h"
#include "base/scan.h"

#include <string.h>

enum field_kind { KB, NUM, NAME, STATE, UIDS };

static const struct status_field {
	const char *key;
	enum field_kind kind;
	size_t offset;
} status_fields[] = {
#define F(key, kind, member) { key, kind, offsetof(struct vt_proc_status, member) }
	F("Name", NAME, name),
	F("State", STATE, state),
	F("Tgid", NUM, tgid),
	F("Pid", NUM, pid),
	F("PPid", NUM, ppid),
	F("TracerPid", NUM, tracer_pid),
	F("Uid", UIDS, uid_real),
	F("Threads", NUM, threads),
	F("Seccomp", NUM, seccomp),
	F("VmPeak", KB, vm_peak),
	F("VmSize", KB, vm_size),
	F("VmHWM", KB, vm_hwm),
	F("VmRSS", KB, vm_rss),
	F("RssAnon", KB, rss_anon),
	F("RssFile", KB, rss_file),
	F("RssShmem", KB, rss_shmem),
	F("VmSwap", KB, vm_swap),
	F("VmData", KB, vm_data),
	F("VmStk", KB, vm_stk),
	F("voluntary_ctxt_switches", NUM, ctxt_vol),
	F("nonvoluntary_ctxt_switches", NUM, ctxt_nonvol),
#undef F
};

static void status_init(struct vt_proc_status *st)
{
	memset(st, 0, sizeof(*st));
	st->tgid = st->pid = st->ppid = st->tracer_pid = -1;
	st->uid_real = st->uid_eff = st->threads = st->seccomp = -1;
	st->vm_peak = st->vm_size = st->vm_hwm = st->vm_rss = VT_NA;
	st->rss_anon = st->rss_file = st->rss_shmem = st->vm_swap = VT_NA;
	st->vm_data = st->vm_stk = st->ctxt_vol = st->ctxt_nonvol = VT_NA;
}

static int parse_value(const struct status_field *f, struct vt_scan *s,
		       struct vt_proc_status *out)
{
	char *base = (char *)out + f->offset;
	const char *text;
	size_t len;
	uint64_t v;
	int64_t iv;

	switch (f->kind) {
	case KB:
		if (!vt_scan_u64(s, &v) || v > UINT64_MAX / 1024)
			return -1;
		*(uint64_t *)(void *)base = v * 1024;
		return 0;
	case NUM:
		if (f->offset == offsetof(struct vt_proc_status, ctxt_vol) ||
		    f->offset == offsetof(struct vt_proc_status, ctxt_nonvol)) {
			if (!vt_scan_u64(s, &v))
				return -1;
			*(uint64_t *)(void *)base = v;
			return 0;
		}
		if (!vt_scan_i64(s, &iv))
			return -1;
		*(int64_t *)(void *)base = iv;
		return 0;
	case NAME:
		/* Name: escapes newlines and backslashes, so the rest of the line is it. */
		if (s->p < s->end && *s->p == '\t')
			s->p++;
		text = s->p;
		len = 0;
		while (text + len < s->end && text[len] != '\n')
			len++;
		vt_copy_str(out->name, sizeof(out->name), text, len);
		return 0;
	case STATE:
		vt_scan_blanks(s);
		if (vt_scan_eof(s))
			return -1;
		out->state = *s->p;
		return 0;
	case UIDS:
		if (!vt_scan_i64(s, &out->uid_real) || !vt_scan_i64(s, &out->uid_eff))
			return -1;
		return 0;
	}
	return -1;
}

int vt_proc_status_parse(const char *buf, size_t len, struct vt_proc_status *out,
			 struct vt_err *err)
{
	struct vt_scan file = vt_scan_init(buf, len), s;
	const char *line, *colon;
	size_t line_len, key_len, i;

	status_init(out);
	while (vt_scan_line(&file, &line, &line_len)) {
		colon = memchr(line, ':', line_len);
		if (!colon)
			continue;
		key_len = (size_t)(colon - line);
		for (i = 0; i < sizeof(status_fields) / sizeof(status_fields[0]); i++) {
			const struct status_field *f = &status_fields[i];
			if (strlen(f->key) != key_len || memcmp(f->key, line, key_len) != 0)
				continue;
			s = vt_scan_init(colon + 1, line_len - key_len - 1);
			if (parse_value(f, &s, out) < 0)
				return vt_err_set(err, VT_E_PARSE, 0, "status: bad value for '%s'", f->key);
			break;
		}
	}
	if (out->pid < 0 || !out->state)
		return vt_err_set(err, VT_E_PARSE, 0, "status: no Pid or State line");
	return VT_OK;
}
