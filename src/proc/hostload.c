/*
 * hostload.c — /proc/loadavg and /proc/pressure/cpu (see hostload.h).
 * Text is untrusted and not NUL-terminated.
 */
#include "proc/hostload.h"

#include "base/scan.h"
#include "proc/psi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A load average: digits, '.', two digits (the kernel prints "%lu.%02lu"). */
static bool scan_load(struct vt_scan *sc, double *out)
{
	uint64_t whole, hundredths = 0;
	struct vt_scan at = *sc;

	vt_scan_blanks(&at);
	if (!vt_scan_u64(&at, &whole))
		return false;
	if (vt_scan_char(&at, '.') && !vt_scan_u64(&at, &hundredths))
		return false;
	if (hundredths > 99)
		return false;
	*out = (double)whole + (double)hundredths / 100.0;
	*sc = at;
	return true;
}

int vt_loadavg_parse(const char *buf, size_t len, struct vt_loadavg *out, struct vt_err *err)
{
	struct vt_scan sc = vt_scan_init(buf, len);

	memset(out, 0, sizeof(*out));
	if (!scan_load(&sc, &out->load1) || !scan_load(&sc, &out->load5) ||
	    !scan_load(&sc, &out->load15))
		return vt_err_set(err, VT_E_PARSE, 0, "loadavg: expected three load averages");
	vt_scan_blanks(&sc);
	if (!vt_scan_u64(&sc, &out->runnable) || !vt_scan_char(&sc, '/') ||
	    !vt_scan_u64(&sc, &out->tasks))
		return vt_err_set(err, VT_E_PARSE, 0, "loadavg: expected runnable/tasks");
	return VT_OK;
}

int vt_loadavg_read(const struct vt_procfs *pfs, struct vt_buf *buf, struct vt_loadavg *out,
		    struct vt_err *err)
{
	int rc = vt_procfs_read(pfs, "loadavg", buf, err);

	return rc != VT_OK ? rc : vt_loadavg_parse(buf->data, buf->len, out, err);
}

int vt_host_cpu_pressure_read(const struct vt_procfs *pfs, struct vt_buf *buf, uint64_t *some_us,
			      struct vt_err *err)
{
	struct vt_psi_line some, full;
	int rc = vt_procfs_read(pfs, "pressure/cpu", buf, err);

	if (rc == VT_OK)
		rc = vt_psi_parse(buf->data, buf->len, &some, &full, err);
	if (rc == VT_OK)
		*some_us = some.total_us;
	return rc;
}
