/*
 * stat.c — parse /proc/PID/stat.
 *
 * comm may contain spaces and parentheses, so it runs from the first '(' to
 * the LAST ')' in the line (as htop and procps do); fields after it are
 * numbered as in proc(5).
 */
#include "proc/stat.h"
#include "base/scan.h"

#include <string.h>

int vt_proc_stat_parse(const char *buf, size_t len, struct vt_proc_stat *out,
		       struct vt_err *err)
{
	const char *open, *close = NULL, *p;
	struct vt_scan s;
	uint64_t pid, v;
	int64_t iv;
	int field;

	memset(out, 0, sizeof(*out));
	out->processor = -1;
	s = vt_scan_init(buf, len);
	if (!vt_scan_u64(&s, &pid) || pid > INT32_MAX)
		return vt_err_set(err, VT_E_PARSE, 0, "stat: no pid field");
	out->pid = (int)pid;
	open = memchr(buf, '(', len);
	if (!open)
		return vt_err_set(err, VT_E_PARSE, 0, "stat: no '(' before comm");
	for (p = buf + len; p > open; p--)
		if (p[-1] == ')') {
			close = p - 1;
			break;
		}
	if (!close)
		return vt_err_set(err, VT_E_PARSE, 0, "stat: no ')' after comm");
	vt_copy_str(out->comm, sizeof(out->comm), open + 1, (size_t)(close - open - 1));

	s = vt_scan_init(close + 1, (size_t)(buf + len - close - 1));
	vt_scan_blanks(&s);
	if (vt_scan_eof(&s))
		return vt_err_set(err, VT_E_PARSE, 0, "stat: no state field");
	out->state = *s.p++;
	/* Fields 4.. are integers; 39 (processor) appeared in 2.2.8, so stop
	 * gracefully after 24 if the line is short. */
	for (field = 4; field <= 39; field++) {
		if (field == 4 || field == 20 || field == 39 || (field >= 16 && field <= 19)) {
			if (!vt_scan_i64(&s, &iv))
				break;
			v = (uint64_t)iv;
		} else if (!vt_scan_u64(&s, &v)) {
			/* a few fields are printed signed on some kernels */
			if (!vt_scan_i64(&s, &iv))
				break;
			v = (uint64_t)iv;
		}
		switch (field) {
		case 4: out->ppid = (int)(int64_t)v; break;
		case 9: out->flags = v; break;
		case 10: out->minflt = v; break;
		case 12: out->majflt = v; break;
		case 14: out->utime_ticks = v; break;
		case 15: out->stime_ticks = v; break;
		case 20: out->num_threads = (int64_t)v; break;
		case 22: out->start_ticks = v; break;
		case 23: out->vsize_bytes = v; break;
		case 24: out->rss_pages = v; break;
		case 39: out->processor = (int64_t)v; break;
		default: break;
		}
	}
	if (field <= 24)
		return vt_err_set(err, VT_E_PARSE, 0, "stat: line ends at field %d, expected at least 24",
				  field);
	return VT_OK;
}
