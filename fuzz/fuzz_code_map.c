/*
 * fuzz_code_map.c — the maps reading behind the unwinder (src/elf/code_map.c)
 * on arbitrary bytes.
 *
 * The input is copied to a buffer of exactly its size (no NUL after it).  On
 * success every module is a nonempty range holding its first mapping, with a
 * path (or [vdso]); the anonymous code ranges are nonempty, sorted and
 * apart, and the lookup finds each at its ends and nothing just past them;
 * the same text parses to the same fingerprint.  On
 * failure a parse or memory error with a message, and nothing kept.
 * Seeds: fuzz/corpus/code_map/.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/code_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_code_map m, again;
	struct vt_err err;
	char *buf = malloc(size ? size : 1);
	size_t i;

	if (!buf)
		return 0;
	if (size)
		memcpy(buf, data, size);
	if (vt_code_map_parse(buf, size, &m, &err) == VT_OK) {
		for (i = 0; i < m.n; i++) {
			const struct vt_code_module *c = &m.v[i];

			assert(c->path);
			assert(c->low <= c->map_start && c->map_start <= c->map_end);
			assert(c->map_end <= c->high);
			assert(c->vdso || c->path[0] == '/');
			assert(vt_code_basename(c->path) != NULL);
		}
		for (i = 0; i < m.nanon; i++) {
			const struct vt_code_range *r = &m.anon[i];

			assert(r->start < r->end);
			assert(i == 0 || m.anon[i - 1].end < r->start);
			assert(vt_code_map_anon_at(&m, r->start) == r);
			assert(vt_code_map_anon_at(&m, r->end - 1) == r);
			assert(vt_code_map_anon_at(&m, r->end) == NULL);
		}
		assert(vt_code_map_parse(buf, size, &again, &err) == VT_OK);
		assert(again.fingerprint == m.fingerprint && again.n == m.n);
		vt_code_map_release(&again);
		vt_code_map_release(&m);
		assert(m.n == 0 && m.v == NULL && m.nanon == 0 && m.anon == NULL);
	} else {
		assert(err.msg[0] && (err.code == VT_E_PARSE || err.code == VT_E_NOMEM));
		assert(m.n == 0 && m.v == NULL && m.nanon == 0 && m.anon == NULL);
	}
	free(buf);
	return 0;
}
