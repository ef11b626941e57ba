/*
 * fuzz_elfsym.c — the libelf questions of elfsym.c on arbitrary bytes.
 *
 * detect.c asks these of files mapped by another process, which may be
 * truncated, corrupt or crafted.  Every question must answer (usually "no")
 * without crashing, looping or reading outside what libelf handed back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/detect.h"
#include "elf/elfsym.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
	"malloc", "mallctl", "je_malloc", "tc_malloc", "mi_malloc", "malloc_info", "__libc_malloc",
};

static void ask(struct vt_elfsym *ef)
{
	char version[32], soname[64];
	const char *bytes;
	uint64_t value;
	size_t len, i;

	(void)vt_elfsym_defines(ef, VT_ELFSYM_DYNSYM | VT_ELFSYM_SYMTAB, names,
				sizeof(names) / sizeof(names[0]));
	(void)vt_elfsym_has_interp(ef);
	if (vt_elfsym_section(ef, ".rodata", &bytes, &len))
		(void)vt_glibc_banner_version(bytes, len, version, sizeof(version));
	(void)vt_elfsym_verdef_max(ef, "GLIBC_", version, sizeof(version));
	(void)vt_elfsym_soname(ef, soname, sizeof(soname));
	/* by the GNU hash table when there is one (a malformed one must only mean the scan) */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		(void)vt_elfsym_symbol(ef, names[i], &value, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_elfsym *ef = NULL;
	struct vt_err err;
	void *image;

	if (size == 0)
		return 0;
	/* libelf may convert in place: give it its own writable copy. */
	image = malloc(size);
	if (!image)
		return 0;
	memcpy(image, data, size);
	if (vt_elfsym_open_mem(image, size, &ef, &err) == VT_OK)
		ask(ef);
	vt_elfsym_free(&ef);
	free(image);
	return 0;
}
