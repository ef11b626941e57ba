/*
 * schedstat.c — parse /proc/PID/task/TID/schedstat.  Reads no files.
 */
#include "proc/schedstat.h"

#include "base/scan.h"

int vt_schedstat_parse(const char *buf, size_t len, struct vt_schedstat *out,
		       struct vt_err *err)
{
	struct vt_scan s = vt_scan_init(buf, len);
	struct vt_schedstat v;

	if (!(vt_scan_u64(&s, &v.run_ns) && vt_scan_u64(&s, &v.wait_ns) &&
	      vt_scan_u64(&s, &v.timeslices)))
		return vt_err_set(err, VT_E_PARSE, 0, "schedstat: expected 'run_ns wait_ns timeslices'");
	vt_scan_blanks(&s);
	if (!vt_scan_eof(&s) && *s.p != '\n')
		return vt_err_set(err, VT_E_PARSE, 0, "schedstat: trailing text after three fields");
	*out = v;
	return VT_OK;
}
