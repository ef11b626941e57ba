/*
 * fuzz_kallsyms.c — the /proc/kallsyms parser (src/proc/kallsyms.c) on
 * arbitrary bytes.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it), so
 * ASan sees any read past the end.  On success every lookup answers NULL or
 * a non-empty name, and addresses below the lowest symbol answer NULL; on
 * failure a parse, permission or memory error with a message.
 * Seeds: fuzz/corpus/kallsyms/.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t probes[] = { 0, 1, 0xffffffff81000000ull, 0xffffffff81000100ull,
					   0xffffffffc0000000ull, UINT64_MAX };
	struct vt_ksyms *ks = NULL;
	struct vt_err err;
	char *buf = malloc(size ? size : 1);
	size_t i;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	if (vt_ksyms_parse(buf, size, &ks, &err) == VT_OK) {
		assert(ks);
		assert(vt_ksyms_name(ks, 0) == NULL);
		for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
			const char *n = vt_ksyms_name(ks, probes[i]);

			assert(!n || n[0]);
		}
		for (i = 0; i + 8 <= size && i < 256; i += 8) {   /* addresses from the input */
			uint64_t a;
			const char *n;

			memcpy(&a, data + i, sizeof(a));
			n = vt_ksyms_name(ks, a);
			assert(!n || n[0]);
		}
		vt_ksyms_free(&ks);
		assert(ks == NULL);
	} else {
		assert(ks == NULL && err.msg[0]);
		assert(err.code == VT_E_PARSE || err.code == VT_E_PERM || err.code == VT_E_NOMEM);
	}
	free(buf);
	return 0;
}
