/*
 * unknown.h — the marker for a figure that could not be read.
 *
 * Counters read from /proc, cgroups or the target are uint64_t; one that
 * could not be read is VT_NA, never 0, so that "none" and "unknown" stay
 * apart all the way to the views, which print it as n/a (text) or null
 * (JSON).  Figures that are doubles use NAN for the same purpose.
 */
#ifndef VT_BASE_UNKNOWN_H
#define VT_BASE_UNKNOWN_H

#include <stdbool.h>
#include <stdint.h>

#define VT_NA UINT64_MAX

static inline bool vt_known(uint64_t v)
{
	return v != VT_NA;
}

#endif
