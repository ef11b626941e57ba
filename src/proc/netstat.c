/*
 * netstat.c — TcpExt's accept-queue counters (see netstat.h).
 */
#include "proc/netstat.h"

#include "base/scan.h"
#include "base/unknown.h"

#include <stdbool.h>
#include <string.h>

/* The "Prefix:" a line starts with, without its colon; false when none. */
static bool line_prefix(struct vt_scan *sc, const char **prefix, size_t *plen)
{
	const char *w;
	size_t n;

	if (!vt_scan_word(sc, &w, &n) || n < 2 || w[n - 1] != ':')
		return false;
	*prefix = w;
	*plen = n - 1;
	return true;
}

int vt_netstat_parse(const char *buf, size_t len, struct vt_listen_counters *out, struct vt_err *err)
{
	struct vt_scan lines = vt_scan_init(buf, len);
	const char *head, *vals;
	size_t head_len, vals_len, pair = 0;

	out->overflows = VT_NA;
	out->drops = VT_NA;
	while (vt_scan_line(&lines, &head, &head_len)) {
		struct vt_scan h = vt_scan_init(head, head_len), v;
		const char *hp, *vp, *name, *num;
		size_t hpl, vpl, name_len, num_len;

		if (head_len == 0)
			continue;
		pair++;
		if (!vt_scan_line(&lines, &vals, &vals_len))
			return vt_err_set(err, VT_E_PARSE, 0, "netstat: header %zu has no values line", pair);
		v = vt_scan_init(vals, vals_len);
		if (!line_prefix(&h, &hp, &hpl) || !line_prefix(&v, &vp, &vpl) || hpl != vpl ||
		    memcmp(hp, vp, hpl) != 0)
			return vt_err_set(err, VT_E_PARSE, 0,
					  "netstat: line pair %zu does not start with the same 'Name:'", pair);
		for (;;) {
			bool more_names = vt_scan_word(&h, &name, &name_len);
			uint64_t value;

			vt_scan_blanks(&v);
			if (!more_names) {
				if (!vt_scan_eof(&v))
					return vt_err_set(err, VT_E_PARSE, 0,
							  "netstat: line pair %zu has more values than names", pair);
				break;
			}
			if (!vt_scan_word(&v, &num, &num_len))
				return vt_err_set(err, VT_E_PARSE, 0,
						  "netstat: line pair %zu has more names than values", pair);
			/* a few Ip counters print signed: never ours, but numbers all the same */
			bool negative = num_len > 1 && num[0] == '-';
			if (!vt_word_u64(num + negative, num_len - negative, &value)) {
				char snip[40];

				vt_snippet(snip, sizeof(snip), num, num_len);
				return vt_err_set(err, VT_E_PARSE, 0,
						  "netstat: line pair %zu: value '%s' is not a number", pair, snip);
			}
			if (negative || !vt_word_is(hp, hpl, "TcpExt"))
				continue;
			if (vt_word_is(name, name_len, "ListenOverflows"))
				out->overflows = value;
			else if (vt_word_is(name, name_len, "ListenDrops"))
				out->drops = value;
		}
	}
	return VT_OK;
}
