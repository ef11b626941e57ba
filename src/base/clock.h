/*
 * clock.h — the two clocks vitals reads.  Intervals and rates use the
 * monotonic clock (a wall-clock jump cannot bend them); the wall clock is
 * only stored for display.
 */
#ifndef VT_BASE_CLOCK_H
#define VT_BASE_CLOCK_H

#include <signal.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in seconds. */
double vt_mono_s(void);
/* CLOCK_MONOTONIC in nanoseconds: for intervals measured in whole units. */
uint64_t vt_mono_ns(void);
/* CLOCK_REALTIME in seconds since the epoch. */
double vt_wall_s(void);

/*
 * Sleep until CLOCK_MONOTONIC reaches mono_ns, or until *stop is set (by a
 * signal handler: the sleep it interrupts ends; stop may be NULL).  Other
 * signals do not end it.
 */
void vt_sleep_until_ns(uint64_t mono_ns, volatile sig_atomic_t *stop);

struct rusage;
/* The user + system CPU seconds of a getrusage() result. */
double vt_rusage_cpu_s(const struct rusage *ru);

#endif
