/*
 * threads.h (render) — views of thread rates: text and JSON ("vitals.threads" v1),
 * and the diagnosis in words.
 *
 * Both read a struct vt_threads_rates and its diagnosis; neither touches /proc.
 * Return 0, or -1 when the output could not be written.
 */
#ifndef VT_RENDER_THREADS_H
#define VT_RENDER_THREADS_H

#include <stdbool.h>
#include <stdio.h>

#include "base/json_lib.h"

#include "analyze/diagnose.h"
#include "analyze/rates.h"

/* How the text view lists threads. */
struct vt_threads_view {
	bool by_cpu;          /* busiest first (else tid order) */
	size_t max_rows;      /* at most this many thread rows, 0 all; a line counts the rest */
};

/* view NULL: every thread, in tid order. */
int vt_render_threads_text(FILE *out, const struct vt_threads_rates *r, const struct vt_diagnosis *d,
			   const struct vt_threads_view *view);
/* compact: one line (JSON Lines, for repeated reports), else indented. */
int vt_render_threads_json(FILE *out, const struct vt_threads_rates *r, const struct vt_diagnosis *d,
			   bool compact);

/*
 * "77 x python3, 3 x worker-": n thread names grouped as pools are (trailing
 * digits an index when they differ), most members first, at most max_names
 * of them and a count of the rest.  buf of cap bytes; returns buf ("" out
 * of memory).
 */
const char *vt_render_thread_names(const char *const *names, size_t n, size_t max_names, char *buf,
				   size_t cap);

/* "R 80% S 20%": the state distribution of t over its samples. */
const char *vt_render_thread_states(const struct vt_thread_rate *t, char *buf, size_t cap);

/* "R 80% S 20%" from counts[k] of label[k] out of total (labels with 0 left out). */
const char *vt_render_state_shares(const unsigned *counts, const char *const *labels, size_t n,
				   unsigned total, char *buf, size_t cap);

/*
 * What a thread was seen in most often: "futex (80%)" (count of n samples),
 * "-" when never, "n/a (why)" when it could not be read (!ok; "n/a" if why
 * is NULL).
 */
const char *vt_render_seen(bool ok, const char *why, const char *name, unsigned count, unsigned n,
			   char *buf, size_t cap);

/*
 * The evidence of a finding in one sentence, from the figures its rule kept
 * (diagnosis.c): "thread 812 (poller) wakes 2000 times/s and uses 10.0 µs of
 * CPU per wakeup (0.020 cores); sleeping in hrtimer_nanosleep".  buf of cap
 * bytes (VT_DIAG_EVIDENCE_MAX holds any); returns buf.
 */
#define VT_DIAG_EVIDENCE_MAX 1536
const char *vt_render_diag_evidence(const struct vt_diag_finding *f, char *buf, size_t cap);

/* The diagnosis as text, one "  pattern: evidence" line a finding (d NULL: none). */
void vt_render_diagnosis_text(FILE *out, const struct vt_diagnosis *d);

/* The diagnosis as a JSON array of {pattern, evidence} (a new reference). */
json_t *vt_render_diagnosis_json(const struct vt_diagnosis *d);

#endif
