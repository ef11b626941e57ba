/*
 * rand.h — a small deterministic PRNG for unit tests that build noisy
 * synthetic series (xorshift64*, Box–Muller): the same draws on every run.
 */
#ifndef VT_TEST_RAND_H
#define VT_TEST_RAND_H

#include <math.h>
#include <stdint.h>

static uint64_t vt_test_rng = 0x2545f4914f6cdd1dULL;

static inline void seed(uint64_t s)
{
	vt_test_rng = s * 0x9e3779b97f4a7c15ULL + 1;
}

/* Uniform in [0, 1). */
static inline double uniform(void)
{
	vt_test_rng ^= vt_test_rng >> 12;
	vt_test_rng ^= vt_test_rng << 25;
	vt_test_rng ^= vt_test_rng >> 27;
	return (double)((vt_test_rng * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

/* A standard normal deviate (Box–Muller). */
static inline double gauss(void)
{
	double u = uniform(), v = uniform();

	return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

#endif
