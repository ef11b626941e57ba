/*
 * http.h — the exporter's HTTP side, on libmicrohttpd: GET /metrics (the
 * exposition format the scraper's Accept asks for), GET /healthz, and a
 * small index page at /.  One thread serves every connection, so scrapes
 * never run at once and an idle exporter sleeps in poll.  Requests under
 * /debug/pprof/ (profiles, seconds long) are the exception: each runs on a
 * thread of its own while its connection is suspended (slow_* below).
 *
 * TLS and basic auth come from a Prometheus web configuration file (the
 * exporter-toolkit format every exporter reads):
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *   basic_auth_users:
 *     alice: $2y$10$...        (bcrypt, as htpasswd -B or promtool make)
 *
 * Without one it speaks plain HTTP; by default it listens on loopback only.
 */
#ifndef VT_SERVE_HTTP_H
#define VT_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <signal.h>

#include "base/buf.h"
#include "base/error.h"

/* A request's answer, as a slow handler gives it. */
struct vt_http_answer {
	unsigned status;             /* 0: accepted (begin only) */
	const char *content_type;    /* a static string */
	struct vt_buf body;          /* set up by the server (VT_BUF_INIT), filled by the handler */
	unsigned retry_after_s;      /* 429: sent as Retry-After */
};

/* What a slow handler's run sees of its request. */
struct vt_http_job {
	volatile sig_atomic_t stop;  /* set when the server stops */
	int fd;                      /* the client's socket */
};

/* The job should end now: the server stops, or the client hung up (its socket, polled). */
bool vt_http_job_over(struct vt_http_job *j);

/* A request's query argument by name, NULL absent (req: what begin was given). */
const char *vt_http_arg(void *req, const char *name);

struct vt_http_handlers {
	/*
	 * Write the body of /metrics for an Accept header (NULL: none) into
	 * body and set *content_type (a static string).  Returns 0, or -1 with
	 * err set (the scraper gets 500 with its message).
	 */
	int (*metrics)(void *ctx, const char *accept, struct vt_buf *body, const char **content_type,
		       struct vt_err *err);
	/* /healthz: 0 healthy (200), -1 not (503); body says why in one line. */
	int (*health)(void *ctx, struct vt_buf *body);
	void *ctx;
	/*
	 * Paths under /debug/pprof/ (NULL: 404): answered by a thread of their
	 * own, so that /metrics never waits for them.  begin runs on the
	 * server's thread (as metrics does) with the path and the request
	 * (vt_http_arg): it answers at once (a->status set: 400, 404, 429 ...)
	 * or accepts (a->status 0, *job its own); then run(job) runs on a new
	 * thread with the connection held, fills a (status, type, body), and
	 * end(job) frees it on that thread.  run should end soon after
	 * vt_http_job_over(j) says so.
	 */
	void (*slow_begin)(void *ctx, const char *path, void *req, struct vt_http_answer *a, void **job);
	void (*slow_run)(void *job, struct vt_http_job *j, struct vt_http_answer *a);
	void (*slow_end)(void *job);
};

struct vt_http_config {
	const char *listen;          /* "127.0.0.1:9464", "[::1]:9464", "localhost:9464", ":9464"
	                              * (every address, IPv6 and IPv4); port 0: the kernel picks;
	                              * NULL: 127.0.0.1:9464 */
	const char *web_config;      /* Prometheus web configuration file, NULL none */
};

struct vt_http;

/*
 * Parse the address and the web configuration, bind and start serving.
 * Errors: VT_E_USAGE (a bad address, a web configuration that does not
 * parse, names files that cannot be read, or a certificate and key TLS
 * refuses), VT_E_IO (the port is taken, the address cannot be bound: errno
 * kept), VT_E_PERM (a port below 1024 without the right), VT_E_UNSUPPORTED
 * (TLS asked of a libmicrohttpd built without it), VT_E_NOMEM.  The
 * handlers run on the server's one thread, one request at a time.
 */
int vt_http_start(const struct vt_http_config *cfg, const struct vt_http_handlers *h,
		  struct vt_http **out, struct vt_err *err);

/* Where it listens, as "127.0.0.1:9464" (the port the kernel chose for port 0). */
const char *vt_http_address(const struct vt_http *s);

/* It serves https (the web configuration has tls_server_config). */
bool vt_http_tls(const struct vt_http *s);

/* How many basic auth users it knows (0: no auth). */
size_t vt_http_users(const struct vt_http *s);
/* What the web config's modes give away ("" none): the server runs, the operator should know. */
const char *vt_http_warnings(const struct vt_http *s);

/* Stop serving, close every connection, free s (NULL is fine). */
void vt_http_stop(struct vt_http *s);

#endif
