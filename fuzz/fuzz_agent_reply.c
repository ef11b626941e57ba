/*
 * fuzz_agent_reply.c — the agent reply parser on arbitrary bytes (in
 * production the reply comes from a socket inside the target process, which
 * vitals does not trust).  Both request kinds: with and without trim; and
 * the reply to "want":"allocs" (the allocation samples), whose every sample
 * must come out inside its bounds.
 */
#include "alloc/agent_allocs.h"
#include "alloc/agent_client.h"
#include "alloc/malloc_info.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_agent_reply r;
	struct vt_malloc_info mi;
	struct vt_err err;
	int trim;

	for (trim = 0; trim <= 1; trim++) {
		if (vt_agent_reply_parse((const char *)data, size, trim, &r, &err) == VT_OK) {
			assert(r.malloc_info_xml != NULL);
			assert(strlen(r.malloc_info_xml) == r.malloc_info_len);
			assert(!trim || r.has_trim);
			assert(r.glibc[sizeof(r.glibc) - 1] == '\0');
			/* What vitals does next with the XML. */
			if (vt_malloc_info_parse(r.malloc_info_xml, r.malloc_info_len, &mi, NULL) == VT_OK)
				vt_malloc_info_release(&mi);
		} else {
			assert(r.malloc_info_xml == NULL);
			assert(err.msg[0] != '\0');
		}
		vt_agent_reply_release(&r);
	}
	{
		struct vt_agent_allocs a;

		if (vt_agent_allocs_parse((const char *)data, size, &a, &err) == VT_OK) {
			assert(a.every > 0 && a.t1_ns >= a.t0_ns);
			for (size_t i = 0; i < a.nsamples; i++) {
				assert(a.samples[i].npcs <= VT_AGENT_ALLOC_PCS);
				assert(a.samples[i].fn < VT_AFN__COUNT);
				assert(vt_agent_alloc_weight(a.samples[i].size, a.every) >= 1);
			}
		} else {
			assert(a.samples == NULL && a.nsamples == 0);
		}
		vt_agent_allocs_release(&a);
	}
	return 0;
}
