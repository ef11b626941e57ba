/*
 * calls.c — a call of an allocator recipe inside the target (see calls.h).
 */
#include "alloc/calls.h"

#include <string.h>

int vt_alloc_call(struct vt_alloc_calls *cs, struct vt_inject_call *c, uint64_t *ret, struct vt_err *err)
{
	int rc;

	c->scratch_len = VT_ALLOC_SCRATCH_LEN;
	c->scratch_out = cs->scratch;
	rc = vt_inject_run(cs->s, c, cs->timeout_ms, err);
	cs->callee_us += c->call_us;
	cs->calls++;
	if (rc == VT_OK && ret)
		*ret = c->ret;
	return rc;
}

int vt_alloc_call2(struct vt_alloc_calls *cs, uint64_t func, uint64_t a0, uint64_t a1,
		   uint32_t scratch_args, uint64_t *ret, struct vt_err *err)
{
	struct vt_inject_call c;

	memset(&c, 0, sizeof(c));
	c.func = func;
	c.args[0] = a0;
	c.args[1] = a1;
	c.scratch_args = scratch_args;
	return vt_alloc_call(cs, &c, ret, err);
}
