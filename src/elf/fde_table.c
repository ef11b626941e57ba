/*
 * fde_table.c — the .eh_frame_hdr index (see fde_table.h).
 */
#include "elf/fde_table.h"

#include <string.h>

/* DWARF pointer encodings (the LSB's .eh_frame_hdr) */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_DATAREL 0x30
#define ENTRY 8                   /* two sdata4 */

/* Bytes of a value in encoding enc, 0 for one this reader does not take. */
static size_t enc_size(uint8_t enc)
{
	switch (enc & PE_FORMAT) {
	case PE_UDATA2: case PE_SDATA2: return 2;
	case PE_UDATA4: case PE_SDATA4: return 4;
	case PE_UDATA8: case PE_SDATA8: return 8;
	default: return 0;
	}
}

static int32_t sdata4(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));     /* little-endian hosts read their own binaries */
	return (int32_t)v;
}

bool vt_fde_table_parse(const uint8_t *hdr, size_t len, uint64_t hdr_addr, struct vt_fde_table *t)
{
	size_t ptr_size, count_size, off = 4;
	uint64_t count = 0;

	memset(t, 0, sizeof(*t));
	/* version 1, then the encodings of eh_frame_ptr, fde_count and the table */
	if (!hdr || len < 4 || hdr[0] != 1 || hdr[2] == PE_OMIT || hdr[3] != (PE_DATAREL | PE_SDATA4))
		return false;
	ptr_size = hdr[1] == PE_OMIT ? 0 : enc_size(hdr[1]);
	count_size = enc_size(hdr[2]);
	if ((hdr[1] != PE_OMIT && !ptr_size) || count_size != 4 || hdr[2] & 0x70 || len - off < ptr_size)
		return false;
	off += ptr_size;
	if (len - off < count_size)
		return false;
	count = (uint32_t)sdata4(hdr + off);
	off += count_size;
	if (count == 0 || count > (len - off) / ENTRY)
		return false;
	t->entries = hdr + off;
	t->n = (size_t)count;
	t->hdr_addr = hdr_addr;
	return true;
}

bool vt_fde_table_start(const struct vt_fde_table *t, uint64_t addr, uint64_t *start)
{
	size_t lo = 0, hi = t->n;

	/* the last entry whose start is <= addr; the linker sorted them */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->hdr_addr + (uint64_t)(int64_t)sdata4(t->entries + mid * ENTRY) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	*start = t->hdr_addr + (uint64_t)(int64_t)sdata4(t->entries + (lo - 1) * ENTRY);
	return true;
}
