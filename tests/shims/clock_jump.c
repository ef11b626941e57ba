/*
 * clock_jump.c — LD_PRELOAD shim for tests: the wall clock jumps.
 *
 * From the first call after the file VT_JUMP_FILE exists, every
 * CLOCK_REALTIME reading is moved by VT_JUMP_BY_S seconds, as when an
 * operator or NTP steps the clock.  The test makes the file when it has seen
 * the soak sampling, so the jump falls inside the soak however slow a busy
 * host makes its start (a jump timed from the first call could fall before
 * the first sample, and nothing would see it move).  CLOCK_MONOTONIC is left
 * alone: a soak's intervals must not notice, and its recording must say the
 * wall clock moved.  Only for tests; never linked into vitals.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static clock_gettime_fn real;
	static int jumped;
	const char *file, *by;
	int rc;

	if (!real)
		real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (rc != 0 || id != CLOCK_REALTIME)
		return rc;
	file = getenv("VT_JUMP_FILE");
	by = getenv("VT_JUMP_BY_S");
	if (!file || !by)
		return rc;
	if (!jumped && access(file, F_OK) == 0)
		jumped = 1;
	if (jumped)
		ts->tv_sec += (time_t)atol(by);
	return rc;
}
