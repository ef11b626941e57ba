/*
 * pprof_serve.h — `vitals serve`'s profiles, Go's net/http/pprof way, for
 * the continuous profilers that pull them (Parca, Pyroscope, go tool pprof):
 *
 *   GET /debug/pprof/profile?seconds=N   CPU profile of a target
 *   GET /debug/pprof/wall?seconds=N      wall-clock profile (every thread,
 *                                        every state: what blocked ones wait in)
 *   GET /debug/pprof/allocs?seconds=N    allocations, Go's heap sample types, from
 *                                        the agent's sampling only (501 without it:
 *                                        serve arms no uprobes in a target)
 *
 * seconds defaults to 30 (as in Go) and is at most VT_PPROF_SECONDS_MAX
 * (400 with the cap beyond).  With several targets, target=LABEL or pid=PID
 * (a process of one of them) says which: an unknown one gets 404 naming
 * the targets.  A target whose label matches several processes is profiled
 * in its first (pid= picks another).  One profile per target at a time: a
 * second gets 429 with Retry-After the seconds left.  The answer is a
 * gzipped profile.proto (render/profile_pprof.h) sent as
 * application/octet-stream; a target that exits mid-profile gives the
 * profile so far, a client that hangs up stops it.
 *
 * The handlers of http.h's slow requests: begin on the server's thread with
 * the exporter's lock held by the caller, run and end on the request's own.
 */
#ifndef VT_SERVE_PPROF_SERVE_H
#define VT_SERVE_PPROF_SERVE_H

#include "base/error.h"
#include "proc/procfs.h"
#include "serve/exporter.h"
#include "serve/http.h"

#define VT_PPROF_SECONDS_DEFAULT 30
#define VT_PPROF_SECONDS_MAX 60

struct vt_pprof_serve;

/* For x's targets (x and pfs outlive it).  VT_E_NOMEM. */
int vt_pprof_serve_open(const struct vt_procfs *pfs, struct vt_exporter *x, struct vt_pprof_serve **out,
			struct vt_err *err);
void vt_pprof_serve_close(struct vt_pprof_serve *ps);

/* http.h's slow_begin, slow_run and slow_end (ctx: the vt_pprof_serve). */
void vt_pprof_serve_begin(struct vt_pprof_serve *ps, const char *path, void *req, struct vt_http_answer *a,
			  void **job);
void vt_pprof_serve_run(void *job, struct vt_http_job *j, struct vt_http_answer *a);
void vt_pprof_serve_end(void *job);

#endif
