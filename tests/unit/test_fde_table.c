/*
 * test_fde_table.c — function starts from .eh_frame_hdr (src/elf/fde_table.c):
 * a made-up index and its refusals, and a real stripped library (libz, as
 * Debian ships it: its internal functions have no symbol) whose pcs inside
 * one function all map to that function's FDE start.
 */
#include "harness.h"

#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "elf/fde_table.h"

static void put32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

/* version 1, eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 */
static size_t header(uint8_t *b, uint32_t count)
{
	b[0] = 1;
	b[1] = 0x1b;
	b[2] = 0x03;
	b[3] = 0x3b;
	put32(b + 4, -0x100);
	put32(b + 8, (int32_t)count);
	return 12;
}

static void test_fde_table__made_up(void)
{
	uint8_t b[64];
	struct vt_fde_table t;
	uint64_t start = 0;
	size_t off = header(b, 3);
	/* functions at 0x1000, 0x1100, 0x1800; the index sits at 0x2000 */
	static const int32_t starts[] = { 0x1000 - 0x2000, 0x1100 - 0x2000, 0x1800 - 0x2000 };

	for (size_t i = 0; i < 3; i++) {
		put32(b + off + 8 * i, starts[i]);
		put32(b + off + 8 * i + 4, 0x40 + (int32_t)i * 0x20);
	}
	CHECK(vt_fde_table_parse(b, off + 24, 0x2000, &t) && t.n == 3);
	CHECK(!vt_fde_table_start(&t, 0xfff, &start));
	CHECK(vt_fde_table_start(&t, 0x1000, &start) && start == 0x1000);
	CHECK(vt_fde_table_start(&t, 0x10ff, &start) && start == 0x1000);
	CHECK(vt_fde_table_start(&t, 0x1100, &start) && start == 0x1100);
	CHECK(vt_fde_table_start(&t, 0x9999, &start) && start == 0x1800);
	/* refused: a count beyond the bytes, another version or table encoding, too short */
	CHECK(!vt_fde_table_parse(b, off + 23, 0x2000, &t));
	b[0] = 2;
	CHECK(!vt_fde_table_parse(b, off + 24, 0x2000, &t));
	b[0] = 1;
	b[3] = 0x1b;
	CHECK(!vt_fde_table_parse(b, off + 24, 0x2000, &t));
	b[3] = 0x3b;
	CHECK(!vt_fde_table_parse(b, 3, 0x2000, &t));
	CHECK(!vt_fde_table_parse(NULL, 0, 0, &t));
	header(b, 0);
	CHECK(!vt_fde_table_parse(b, off, 0x2000, &t));
}

static void test_fde_table__stripped_libz(void)
{
	const char *path = "/usr/lib/x86_64-linux-gnu/libz.so.1";
	struct vt_fde_table t;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool found = false;
	size_t n = 0;
	Elf *elf;

	if (fd < 0) {
		printf("# skip: no %s\n", path);
		return;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(elf != NULL && elf_getphdrnum(elf, &n) == 0);
	for (size_t i = 0; elf && i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		uint64_t a, b;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		CHECK(d != NULL && vt_fde_table_parse(d->d_buf, d->d_size, ph.p_vaddr, &t));
		if (!d || !t.n)
			break;
		printf("# %s: %zu functions in its unwind index\n", path, t.n);
		CHECK(t.n > 50);
		/* two pcs a few bytes into one function's FDE name the same start */
		for (size_t k = 0; k + 1 < t.n && !found; k++) {
			uint64_t s0 = t.hdr_addr + (uint64_t)(int64_t)(int32_t)(t.entries[8 * k] |
				(t.entries[8 * k + 1] << 8) | (t.entries[8 * k + 2] << 16) |
				((uint32_t)t.entries[8 * k + 3] << 24));
			uint64_t s1 = t.hdr_addr + (uint64_t)(int64_t)(int32_t)(t.entries[8 * k + 8] |
				(t.entries[8 * k + 9] << 8) | (t.entries[8 * k + 10] << 16) |
				((uint32_t)t.entries[8 * k + 11] << 24));

			if (s1 - s0 < 64)
				continue;
			CHECK(vt_fde_table_start(&t, s0 + 3, &a) && vt_fde_table_start(&t, s0 + 40, &b));
			CHECK(a == s0 && b == s0);
			CHECK(vt_fde_table_start(&t, s1, &b) && b == s1);
			found = true;
		}
	}
	CHECK(found);
	elf_end(elf);
	close(fd);
}

VT_TEST_MAIN(test_fde_table__made_up, test_fde_table__stripped_libz)
