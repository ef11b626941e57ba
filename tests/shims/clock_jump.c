/*
 * clock_jump.c — LD_PRELOAD shim for tests: the wall clock jumps.
 *
 * After VT_JUMP_AFTER_S seconds (monotonic, from the first call), every
 * CLOCK_REALTIME reading is moved by VT_JUMP_BY_S seconds, as when an
 * operator or NTP steps the clock.  CLOCK_MONOTONIC is left alone: a soak's
 * intervals must not notice, and its recording must say the wall clock
 * moved.  Only for tests; never linked into vitals.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static clock_gettime_fn real;
	static double start = -1;
	struct timespec mono;
	const char *after, *by;
	double now;
	int rc;

	if (!real)
		real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (rc != 0 || id != CLOCK_REALTIME)
		return rc;
	after = getenv("VT_JUMP_AFTER_S");
	by = getenv("VT_JUMP_BY_S");
	if (!after || !by || real(CLOCK_MONOTONIC, &mono) != 0)
		return rc;
	now = (double)mono.tv_sec + (double)mono.tv_nsec / 1e9;
	if (start < 0)
		start = now;
	if (now - start >= atof(after))
		ts->tv_sec += (time_t)atol(by);
	return rc;
}
