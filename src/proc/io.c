/*
 * io.c — /proc/PID/io (see io.h).  Text is untrusted and not NUL-terminated.
 */
#include "proc/io.h"

#include "base/scan.h"
#include "proc/procfs.h"

#include <string.h>

int vt_proc_io_parse(const char *buf, size_t len, struct vt_proc_io *out, struct vt_err *err)
{
	static const struct {
		const char *key;
		size_t off;
		unsigned bit;
	} keys[] = {
		{ "rchar", offsetof(struct vt_proc_io, rchar), 1 },
		{ "wchar", offsetof(struct vt_proc_io, wchar), 2 },
		{ "syscr", offsetof(struct vt_proc_io, syscr), 4 },
		{ "syscw", offsetof(struct vt_proc_io, syscw), 8 },
		{ "read_bytes", offsetof(struct vt_proc_io, read_bytes), 0 },
		{ "write_bytes", offsetof(struct vt_proc_io, write_bytes), 0 },
	};
	struct vt_scan sc = vt_scan_init(buf, len);
	const char *line;
	size_t llen, k;
	unsigned seen = 0;

	memset(out, 0, sizeof(*out));
	while (vt_scan_line(&sc, &line, &llen)) {
		struct vt_scan ls = vt_scan_init(line, llen);
		const char *key;
		size_t klen;
		uint64_t v;

		if (!vt_scan_word(&ls, &key, &klen) || klen < 2 || key[klen - 1] != ':')
			return vt_err_set(err, VT_E_PARSE, 0, "io: expected 'key: value' lines");
		if (!vt_scan_u64(&ls, &v))
			return vt_err_set(err, VT_E_PARSE, 0, "io: '%.*s' without a number",
					  (int)(klen > 32 ? 32 : klen), key);
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (strlen(keys[k].key) == klen - 1 && !memcmp(keys[k].key, key, klen - 1)) {
				memcpy((char *)out + keys[k].off, &v, sizeof(v));
				seen |= keys[k].bit;
			}
	}
	if (seen != 15)
		return vt_err_set(err, VT_E_PARSE, 0, "io: rchar, wchar, syscr or syscw missing");
	return VT_OK;
}

int vt_proc_io_read(int dirfd, struct vt_buf *buf, struct vt_proc_io *out, struct vt_err *err)
{
	int rc = vt_read_at(dirfd, "io", buf, err);

	return rc != VT_OK ? rc : vt_proc_io_parse(buf->data, buf->len, out, err);
}
