/*
 * fuzz_demangle.c — vt_demangle on arbitrary bytes as a symbol name.
 *
 * Symbol names come from the ELF files of another (possibly hostile)
 * process.  Checks that a demangled name fits its buffer, is terminated,
 * keeps the '@' suffix it was given, and that nothing is read outside the
 * input; with a buffer of 8 bytes, that the cut ends in "...".  Then the
 * name (demangled or not) shortened for a table (vt_name_shorten: brackets
 * that do not close, "->", operators) at a few widths: terminated, within
 * its buffer.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/demangle.h"
#include "render/table.h"

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
	for (size_t cols = 3; cols < 100; cols += 16) {
		char shortened[128];
		const char *name = vt_demangle(sym, out, sizeof(out)) ? out : sym;

		assert(strlen(vt_name_shorten(name, cols, shortened, sizeof(shortened))) < sizeof(shortened));
	}
	free(sym);
	return 0;
}
