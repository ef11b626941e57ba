/*
 * clock.c — see clock.h.
 */
#include "base/clock.h"

#include <time.h>

static double read_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double vt_mono_s(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

double vt_wall_s(void)
{
	return read_clock(CLOCK_REALTIME);
}
