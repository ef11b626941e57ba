/*
 * test_agent_allocs.c — the reply of the agent's allocation sampling
 * (alloc/agent_allocs.h): a valid one read whole; an error reply given in
 * the agent's words; a sample made as the agent disarmed left out and
 * counted; a sample made before it was armed, a pc that is not an address,
 * too many frames, each refused; a sample's weight as the
 * sampling makes it.
 */
#include "harness.h"

#include "alloc/agent_allocs.h"

#include <math.h>
#include <string.h>

#define HEAD "{\"v\":1,\"pid\":42,\"allocs\":{\"armed\":false,\"every\":4096,\"t0_ns\":1000,\"t1_ns\":900000," \
	     "\"calls\":10,\"bytes\":640,\"frees\":5,\"dropped\":1,\"fns\":{\"malloc\":9,\"calloc\":1},\"samples\":["

static int parse(const char *text, struct vt_agent_allocs *a, struct vt_err *err)
{
	return vt_agent_allocs_parse(text, strlen(text), a, err);
}

static void test_agent_allocs__reply_read_whole(void)
{
	struct vt_agent_allocs a;
	struct vt_err err;

	CHECK(parse(HEAD "{\"size\":64,\"fn\":\"malloc\",\"ptr\":\"0x55d0c0a0\",\"tid\":42,\"t_ns\":2000,"
		       "\"freed_ns\":3000,\"freed_tid\":43,\"pcs\":[\"0x401136\",\"0x7f00000010\"]},"
		       "{\"size\":4096,\"fn\":\"aligned_alloc\",\"ptr\":\"0x55d0d000\",\"tid\":42,\"t_ns\":5000,"
		       "\"freed_ns\":0,\"freed_tid\":0,\"pcs\":[]}]}}", &a, &err) == VT_OK);
	CHECK(a.pid == 42 && a.every == 4096 && a.t0_ns == 1000 && a.t1_ns == 900000);
	CHECK(a.calls == 10 && a.bytes == 640 && a.frees == 5 && a.dropped == 1 && !a.expired);
	CHECK(a.fn_calls[VT_AFN_MALLOC] == 9 && a.fn_calls[VT_AFN_CALLOC] == 1);
	CHECK(a.nsamples == 2);
	CHECK(a.samples[0].size == 64 && a.samples[0].ptr == 0x55d0c0a0 && a.samples[0].freed_ns == 3000);
	CHECK(a.samples[0].tid == 42 && a.samples[0].freed_tid == 43 && a.samples[0].fn == VT_AFN_MALLOC);
	CHECK(a.samples[0].npcs == 2 && a.samples[0].pcs[0] == 0x401136 && a.samples[0].pcs[1] == 0x7f00000010);
	CHECK(a.samples[1].fn == VT_AFN_MEMALIGN && a.samples[1].npcs == 0 && !a.samples[1].freed_ns);
	vt_agent_allocs_release(&a);
	CHECK(a.samples == NULL);
}

/*
 * The agent's disarm races a thread already inside its sampling section: that
 * thread reads the clock after the disarming one did, so its sample falls
 * after t1_ns, and a free stamped in the same race does too.  bench-smoke
 * once failed the whole run on "sample 2255 is invalid" (load 9.7).  Such a
 * sample is left out and counted; such a free is a block live at t1_ns.
 */
static void test_agent_allocs__sample_as_it_disarmed(void)
{
	struct vt_agent_allocs a;
	struct vt_err err;

	CHECK(parse(HEAD "{\"size\":64,\"fn\":\"malloc\",\"ptr\":\"0x10\",\"tid\":1,\"t_ns\":2000,"
		       "\"freed_ns\":900100,\"freed_tid\":2,\"pcs\":[\"0x401136\"]},"
		       "{\"size\":32,\"fn\":\"malloc\",\"ptr\":\"0x20\",\"tid\":1,\"t_ns\":900050,"
		       "\"freed_ns\":0,\"freed_tid\":0,\"pcs\":[]},"
		       "{\"size\":16,\"fn\":\"calloc\",\"ptr\":\"0x30\",\"tid\":3,\"t_ns\":899000,"
		       "\"freed_ns\":0,\"freed_tid\":0,\"pcs\":[]}]}}", &a, &err) == VT_OK);
	CHECK(a.nsamples == 2 && a.late == 1 && a.dropped == 1);
	if (a.nsamples == 2) {
		CHECK(a.samples[0].ptr == 0x10 && a.samples[0].freed_ns == 0 && a.samples[0].freed_tid == 0);
		CHECK(a.samples[1].ptr == 0x30 && a.samples[1].t_ns == 899000);
	}
	vt_agent_allocs_release(&a);
	/* late and not a sample at all is still refused */
	CHECK(parse(HEAD "{\"size\":64,\"fn\":\"malloc\",\"ptr\":\"0x1\",\"tid\":1,\"t_ns\":900050,\"freed_ns\":0,"
		       "\"freed_tid\":0,\"pcs\":[\"main\"]}]}}", &a, &err) == VT_E_PARSE);
}

static void test_agent_allocs__errors(void)
{
	struct vt_agent_allocs a;
	struct vt_err err;
	char many[4096];
	size_t n;

	CHECK(parse("{\"v\":1,\"pid\":42,\"error\":\"allocation sampling not in this agent: preload "
		    "libvitals-agent-allocs.so\"}", &a, &err) == VT_E_UNSUPPORTED);
	CHECK(strstr(err.msg, "libvitals-agent-allocs.so") != NULL);
	CHECK(a.samples == NULL && a.nsamples == 0);
	/* made before it was armed */
	CHECK(parse(HEAD "{\"size\":64,\"fn\":\"malloc\",\"ptr\":\"0x1\",\"tid\":1,\"t_ns\":10,\"freed_ns\":0,"
		       "\"freed_tid\":0,\"pcs\":[]}]}}", &a, &err) == VT_E_PARSE);
	/* freed before it was made */
	CHECK(parse(HEAD "{\"size\":64,\"fn\":\"malloc\",\"ptr\":\"0x1\",\"tid\":1,\"t_ns\":5000,\"freed_ns\":4000,"
		       "\"freed_tid\":1,\"pcs\":[]}]}}", &a, &err) == VT_E_PARSE);
	/* a pc that is not an address, an entry point that is not one */
	CHECK(parse(HEAD "{\"size\":64,\"fn\":\"malloc\",\"ptr\":\"0x1\",\"tid\":1,\"t_ns\":5000,\"freed_ns\":0,"
		       "\"freed_tid\":0,\"pcs\":[\"main\"]}]}}", &a, &err) == VT_E_PARSE);
	CHECK(parse(HEAD "{\"size\":64,\"fn\":\"free\",\"ptr\":\"0x1\",\"tid\":1,\"t_ns\":5000,\"freed_ns\":0,"
		       "\"freed_tid\":0,\"pcs\":[]}]}}", &a, &err) == VT_E_PARSE);
	/* more frames than a sample holds */
	n = (size_t)snprintf(many, sizeof(many), HEAD "{\"size\":64,\"fn\":\"malloc\",\"ptr\":\"0x1\",\"tid\":1,"
			     "\"t_ns\":5000,\"freed_ns\":0,\"freed_tid\":0,\"pcs\":[");
	for (int i = 0; i <= VT_AGENT_ALLOC_PCS; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "%s\"0x%x\"", i ? "," : "", 0x1000 + i);
	snprintf(many + n, sizeof(many) - n, "]}]}}");
	CHECK(parse(many, &a, &err) == VT_E_PARSE);
	CHECK(parse("{\"v\":1,\"pid\":42}", &a, &err) == VT_E_PARSE);
	CHECK(parse("not json", &a, &err) == VT_E_PARSE);
}

static void test_agent_allocs__weight(void)
{
	CHECK(fabs(vt_agent_alloc_weight(64, 4096) - 1 / -expm1(-64.0 / 4096)) < 1e-9);
	CHECK(vt_agent_alloc_weight(64, 4096) > 64 && vt_agent_alloc_weight(64, 4096) < 65);
	CHECK(fabs(vt_agent_alloc_weight(1 << 20, 4096) - 1) < 1e-9);
	CHECK(vt_agent_alloc_weight(0, 4096) >= 1);
	CHECK(vt_agent_alloc_weight(64, 1) == 1);
}

VT_TEST_MAIN(test_agent_allocs__reply_read_whole, test_agent_allocs__sample_as_it_disarmed,
	     test_agent_allocs__errors, test_agent_allocs__weight)
