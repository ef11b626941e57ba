/*
 * clock.c — see clock.h.
 */
#include "base/clock.h"

#include <errno.h>
#include <sys/resource.h>
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

uint64_t vt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vt_sleep_until_ns(uint64_t mono_ns, volatile sig_atomic_t *stop)
{
	struct timespec ts = { (time_t)(mono_ns / 1000000000ull), (long)(mono_ns % 1000000000ull) };

	while (!(stop && *stop) && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

double vt_wall_s(void)
{
	return read_clock(CLOCK_REALTIME);
}

double vt_rusage_cpu_s(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}
