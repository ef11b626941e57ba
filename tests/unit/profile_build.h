/*
 * profile_build.h — hand-built profiles for the profile tests.
 *
 * A frame is written "module!function": "[kernel]!tcp_sendmsg" is a kernel
 * frame, "libc.so.6!send" a user one, "app!" a user frame no symbol
 * covers, "!" a frame in no module (JIT code).  Equal frames get equal
 * addresses, so equal stacks share a row.
 */
#ifndef VT_TEST_PROFILE_BUILD_H
#define VT_TEST_PROFILE_BUILD_H

#include <stdarg.h>
#include <string.h>

#include "sample/profile.h"

static inline uint32_t pb_frame(struct vt_profile *p, const char *spec)
{
	const char *bang = strchr(spec, '!');
	char module[128];
	size_t mlen = bang ? (size_t)(bang - spec) : 0;
	uint64_t pc = 1469598103934665603ull;

	memcpy(module, spec, mlen);
	module[mlen] = '\0';
	for (const char *c = spec; *c; c++)
		pc = (pc ^ (unsigned char)*c) * 1099511628211ull;
	pc &= 0x7fffffffffffull;
	bool kernel = strcmp(module, "[kernel]") == 0;
	uint32_t f = vt_profile_intern_func(p, vt_profile_intern_str(p, bang ? bang + 1 : spec),
					    vt_profile_intern_str(p, module));
	return vt_profile_intern_loc(p, pc, pc & 0xffff, f, kernel);
}

/* Add count samples of the stack of frames (leaf first, NULL-terminated). */
static inline int pb_stack(struct vt_profile *p, uint32_t thread, enum vt_prof_state state,
			   const char *wait, uint64_t count, ...)
{
	uint32_t locs[64], n = 0;
	va_list ap;
	const char *f;
	struct vt_err err;

	va_start(ap, count);
	while ((f = va_arg(ap, const char *)) && n < 64)
		locs[n++] = pb_frame(p, f);
	va_end(ap);
	return vt_profile_add(p, locs, n, thread, state, vt_profile_intern_str(p, wait), false, count,
			      &err);
}

#endif
