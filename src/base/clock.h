/*
 * clock.h — the two clocks vitals reads.  Intervals and rates use the
 * monotonic clock (a wall-clock jump cannot bend them); the wall clock is
 * only stored for display.
 */
#ifndef VT_BASE_CLOCK_H
#define VT_BASE_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in seconds. */
double vt_mono_s(void);
/* CLOCK_MONOTONIC in nanoseconds: for intervals measured in whole units. */
uint64_t vt_mono_ns(void);
/* CLOCK_REALTIME in seconds since the epoch. */
double vt_wall_s(void);

struct rusage;
/* The user + system CPU seconds of a getrusage() result. */
double vt_rusage_cpu_s(const struct rusage *ru);

#endif
