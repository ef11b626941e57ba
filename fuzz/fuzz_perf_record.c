/*
 * fuzz_perf_record.c — the perf sample record parser (vt_perf_parse_sample,
 * src/perf/perf_events.c) on arbitrary bytes.
 *
 * The kernel writes these records, but the parser must hold even if a ring
 * is corrupt or the layout is not what it thinks.  The first input byte
 * chooses the layout (bit 0 callchain, 1 user registers, 2 user stack,
 * 3 the optional u64 fields, 4 every register bit in the mask, 5 a field
 * the parser does not know); the rest is the record, copied to a buffer of
 * exactly its size (8-byte aligned, nothing after it), so ASan sees any
 * read past the end.  On success every pointer handed back lies inside the
 * record.  Seeds: fuzz/corpus/perf_record/.
 */
#include <assert.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf/perf_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_perf_layout lay = {
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME, VT_PERF_X86_REGS_MASK };
	struct vt_perf_sample s;
	struct perf_event_header hdr;
	const uint8_t *lo, *hi;
	uint8_t *buf;
	size_t len;
	int rc;

	if (size < 1)
		return 0;
	if (data[0] & 1)
		lay.sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (data[0] & 2)
		lay.sample_type |= PERF_SAMPLE_REGS_USER;
	if (data[0] & 4)
		lay.sample_type |= PERF_SAMPLE_STACK_USER;
	if (data[0] & 8)
		lay.sample_type |= PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
				   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (data[0] & 16)
		lay.regs_mask = UINT64_MAX;
	if (data[0] & 32)
		lay.sample_type |= PERF_SAMPLE_RAW;
	len = size - 1;
	buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	if (len)
		memcpy(buf, data + 1, len);
	rc = vt_perf_parse_sample(buf, len, &lay, &s);
	if (data[0] & 32) {
		assert(rc == VT_E_UNSUPPORTED);
	} else if (rc == VT_OK) {
		memcpy(&hdr, buf, sizeof(hdr));
		lo = buf;
		hi = buf + hdr.size;
		assert(hdr.size <= len && hdr.type == PERF_RECORD_SAMPLE);
		assert(!s.nchain || ((const uint8_t *)s.callchain >= lo &&
				     (const uint8_t *)(s.callchain + s.nchain) <= hi));
		assert(!s.stack_len || (s.stack >= lo && s.stack + s.stack_len <= hi));
		assert(s.stack || !s.stack_len);
		if (s.nchain)   /* the ends are readable (ASan checks) */
			sink = s.callchain[0] ^ s.callchain[s.nchain - 1];
		if (s.stack_len)
			sink = (uint64_t)s.stack[0] ^ s.stack[s.stack_len - 1];
	} else {
		assert(rc == VT_E_PARSE);
	}
	free(buf);
	return 0;
}
