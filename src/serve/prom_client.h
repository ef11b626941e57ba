/*
 * prom_client.h — read series from a Prometheus server: one range query
 * (GET URL/api/v1/query_range) over HTTP with libcurl, its answer parsed
 * into soak series by prom_series.h.
 *
 * The only place vitals talks HTTP as a client.  It never prints, and no
 * message it writes holds the password of a URL given as
 * http://user:password@host:9090 (curl sends it as basic auth).
 */
#ifndef VT_SERVE_PROM_CLIENT_H
#define VT_SERVE_PROM_CLIENT_H

#include <stddef.h>

#include "base/error.h"
#include "serve/prom_series.h"

/* Most points Prometheus returns per series; it refuses a range query that would make more. */
#define VT_PROM_MAX_POINTS 11000
/* A whole request may take this long by default, s. */
#define VT_PROM_TIMEOUT_S 30.0
/* Connecting may take this long (or the whole timeout when shorter), s. */
#define VT_PROM_CONNECT_TIMEOUT_S 10.0

struct vt_prom_range {
	const char *url;             /* the server: "http://host:9090", "https://host/prom/" (a path
	                              * prefix, user:password@ allowed; no query or fragment) */
	const char *query;           /* PromQL, sent as it is (escaped for the URL here) */
	double start, end;           /* unix seconds, start < end */
	double step_s;               /* > 0; whole seconds are sent as such */
	double timeout_s;            /* the whole request, 0: VT_PROM_TIMEOUT_S */
};

/*
 * Run range query q and parse its answer into *out (prom_series.h: one
 * series each, in Prometheus' order; an answer with no series is VT_OK with
 * out->n == 0).  Errors, besides those of vt_prom_parse_range:
 *   VT_E_USAGE        the URL is not http(s)://host[:port][/prefix]
 *   VT_E_UNREACHABLE  cannot connect (refused, unknown host, TLS), or the
 *                     connection broke
 *   VT_E_TIMEOUT      no answer within q->timeout_s (connecting: within
 *                     VT_PROM_CONNECT_TIMEOUT_S)
 *   VT_E_PERM         HTTP 401 or 403: credentials missing or refused
 *   VT_E_PARSE        not a Prometheus API answer (HTTP 404 at that path,
 *                     an HTML page, a body over VT_PROM_BODY_MAX)
 *   VT_E_IO           another transfer failure (curl's words quoted)
 * On error *out is empty.  Release with vt_prom_answer_release.
 */
int vt_prom_query_range(const struct vt_prom_range *q, struct vt_prom_answer *out, struct vt_err *err);

/*
 * The step a range is queried at when none is given: range_s / 1000
 * rounded up to whole seconds, at least 1 s (a thousand points: enough for
 * a verdict, far under VT_PROM_MAX_POINTS).
 */
double vt_prom_default_step(double range_s);

/* url as it may be shown: without the password of user:password@ ("http://user@host"). Returns buf. */
const char *vt_prom_url_shown(const char *url, char *buf, size_t cap);

#endif
