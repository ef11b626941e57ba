/*
 * fuzz_banner.c — vt_glibc_banner_version on arbitrary bytes.
 *
 * The bytes stand for a libc's .rodata, which comes from a file of another
 * (possibly hostile) process.  Checks that a found version is short, made of
 * digits and dots, and that nothing is read outside the input.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/detect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_version(const char *v, size_t cap)
{
	size_t i, n = strlen(v);

	assert(n < cap && n >= 3);
	for (i = 0; i < n; i++)
		assert((v[i] >= '0' && v[i] <= '9') || v[i] == '.');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so ASan sees any read past the end. */
	char *bytes = malloc(size ? size : 1);
	char version[32], tiny[4];

	if (!bytes)
		return 0;
	if (size)
		memcpy(bytes, data, size);
	if (vt_glibc_banner_version(bytes, size, version, sizeof(version)))
		check_version(version, sizeof(version));
	else
		assert(version[0] == '\0');
	if (vt_glibc_banner_version(bytes, size, tiny, sizeof(tiny)))
		check_version(tiny, sizeof(tiny));
	assert(!vt_glibc_banner_version(bytes, size, version, 0));
	free(bytes);
	return 0;
}
