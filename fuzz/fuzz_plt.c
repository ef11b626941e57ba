/*
 * fuzz_plt.c — PLT stub names (src/elf/plt.c) of arbitrary bytes.
 *
 * The unwinder asks this of every module a profiled process maps, which may
 * be truncated, corrupt or crafted.  The bytes are read as an ELF image and
 * asked about addresses in and around each executable section, and as the
 * code of one slot; every answer must come back without crashing or
 * reading outside what libelf handed back.
 */
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/plt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[160];
	uint64_t got, start;
	Elf_Scn *scn = NULL;
	Elf *elf;
	void *image;

	(void)vt_plt_slot_got(data, size < 16 ? size : 16, 0x1000, &got);
	if (size == 0)
		return 0;
	image = malloc(size);   /* libelf may convert in place: its own writable copy */
	if (!image)
		return 0;
	memcpy(image, data, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(image, size);
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		for (uint64_t off = 0; off < 64; off += 7)
			(void)vt_plt_name(elf, sh.sh_addr + off, name, sizeof(name), &start);
		(void)vt_plt_name(elf, sh.sh_addr + sh.sh_size - 1, name, sizeof(name), &start);
	}
	if (elf)
		elf_end(elf);
	free(image);
	return 0;
}
