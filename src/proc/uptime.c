/*
 * uptime.c — /proc/uptime (see uptime.h).
 */
#include "proc/uptime.h"

#include "base/scan.h"

int vt_uptime_parse(const char *buf, size_t len, double *seconds, struct vt_err *err)
{
	struct vt_scan sc = vt_scan_init(buf, len);
	uint64_t secs, centis = 0;

	if (!vt_scan_u64(&sc, &secs))
		return vt_err_set(err, VT_E_PARSE, 0, "uptime: expected seconds since boot");
	if (vt_scan_char(&sc, '.'))
		vt_scan_u64(&sc, &centis);
	*seconds = (double)secs + (double)centis / 100.0;
	return VT_OK;
}

double vt_uptime_read(const struct vt_procfs *pfs, struct vt_buf *buf)
{
	double v;

	if (vt_procfs_read(pfs, "uptime", buf, NULL) != VT_OK ||
	    vt_uptime_parse(buf->data, buf->len, &v, NULL) != VT_OK)
		return -1;
	return v;
}
