/*
 * fuzz_demangle.c — vt_demangle on arbitrary bytes as a symbol name.
 *
 * Symbol names come from the ELF files of another (possibly hostile)
 * process.  Checks that a demangled name fits its buffer, is terminated,
 * keeps the '@' suffix it was given, and that nothing is read outside the
 * input; with a buffer of 8 bytes, that the cut ends in "...".
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *sym = malloc(size + 1), out[256], tiny[8];
	const char *at;

	if (!sym)
		return 0;
	if (size)
		memcpy(sym, data, size);
	sym[size] = '\0';
	at = strchr(sym, '@');
	if (vt_demangle(sym, out, sizeof(out))) {
		size_t n = strlen(out);

		assert(n < sizeof(out));
		if (at && strlen(at) + 4 < sizeof(out) && n >= 3 && strcmp(out + n - 3, "..."))
			assert(n >= strlen(at) && !strcmp(out + n - strlen(at), at));
	}
	if (vt_demangle(sym, tiny, sizeof(tiny))) {
		size_t n = strlen(tiny);

		assert(n < sizeof(tiny));
	}
	free(sym);
	return 0;
}
