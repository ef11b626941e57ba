/*
 * http.c — the exporter's HTTP side on libmicrohttpd (see http.h).
 *
 * One internal thread polls every socket with epoll (poll where epoll is
 * missing): with no connection open it sleeps in epoll_wait without a
 * timeout, so an idle exporter costs nothing; a client that connects and
 * says nothing holds a slot (CONN_PER_IP from one address) until it has
 * been idle for CONN_TIMEOUT_S, and never the thread.  That timeout is
 * libmicrohttpd's, of inactivity: a client that trickles a header byte
 * every few seconds would keep its slot, and 4 addresses x 16 such clients
 * left a scraper from a fifth address unanswered for as long as they
 * liked.  So vitals keeps its own count (struct conn): a request's line and
 * headers must be in within HEAD_DEADLINE_S of the connection (or of the
 * last answer on it), and when CONN_LIMIT connections are open a new one
 * is let in by closing the oldest that is still waiting for its headers:
 * a new client always gets a slot, a stalling one loses it.  Both run in
 * the accept policy callback, in libmicrohttpd's one thread, as the
 * connection notifications do.  The listen socket is bound here, not by libmicrohttpd,
 * so that "localhost:9464", "[::1]:9464", ":9464" (both families) and port 0
 * all work and the address actually bound can be reported.
 *
 * Requests: basic auth first when the web config has users (every path, as
 * exporter-toolkit does), then the path (404), then the method (405), then
 * the handler.  A request under /debug/pprof/ is begun by its handler on
 * this thread, then (accepted) its connection is suspended and a detached
 * thread runs the profile; done, it resumes the connection and the answer
 * is sent from this thread.  vt_http_stop tells those threads to stop and
 * waits for them before stopping libmicrohttpd.  Nothing here prints: libmicrohttpd's own messages are kept
 * only while it starts, to explain a failure.
 */
#include "serve/http.h"
#include "serve/netlibs.h"
#include "serve/web_config.h"

#include "base/clock.h"
#include "base/gzip.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#define CONN_LIMIT 64                    /* connections at once: past it a new one closes the
                                          * oldest still waiting for its headers */
#define CONN_HARD_LIMIT 256              /* libmicrohttpd's own, which drops new ones unseen */
#define CONN_PER_IP 16                   /* of them from one address */
#define HEAD_DEADLINE_S 10.0             /* a request's line and headers, whole, in this long */
#define CONN_TIMEOUT_S 10                /* an idle or stalled connection is closed after this */
#define CONN_MEMORY (32 * 1024)          /* per connection: request line and headers fit here */
#define LISTEN_BACKLOG 64
#define BODY_MAX (256u * 1024 * 1024)    /* largest /metrics body */
#define GZIP_MIN 1024                    /* smaller bodies go as they are */
#define REALM "vitals"
#define BCRYPT_SHARE 4                   /* bcrypt may have 1/BCRYPT_SHARE of the thread's time,
                                          * for each of two kinds of client (see bcrypt_ok) */
#define SUSPECTS_MAX 1024                /* addresses (/64 in IPv6) remembered for a wrong guess */
#define HURRIED_MAX 64                   /* addresses refused unchecked, never wrong (bcrypt_ok) */
#define HURRIED_S 0.5                    /* asking again sooner after such a refusal is a suspect's way */

/* One open connection (libmicrohttpd's thread only). */
struct conn {
	struct conn *prev, *next;            /* oldest first */
	int fd;
	double since;                        /* accepted, or answered last: its headers are due */
	bool headed;                         /* a request's headers came in since */
	bool closing;                        /* shut down by us: no longer counted */
};

/* A request under /debug/pprof/ answered by a thread of its own (see on_request). */
struct slow {
	struct slow *prev, *next;            /* s->slows, under s->slow_lock */
	struct vt_http *s;
	struct MHD_Connection *c;            /* suspended while the thread runs */
	void *job;                           /* the handler's, until its end */
	struct vt_http_job j;
	struct vt_http_answer a;
	bool done;                           /* the thread is through with a (under slow_lock) */
};

struct vt_http {
	struct MHD_Daemon *daemon;
	pthread_mutex_t slow_lock;
	pthread_cond_t slow_cond;
	struct slow *slows;                  /* every slow request not yet completed */
	unsigned slow_running;               /* of them, threads that have not ended */
	struct conn *oldest, *newest;        /* every open connection */
	size_t nconns;                       /* of them not closing */
	struct vt_http_handlers h;
	struct vt_web_config wc;             /* TLS and users; empty without --web-config */
	char **verified;                     /* per user: the last password that matched its
	                                      * hash (bcrypt costs ~50 ms; a scraper sends the
	                                      * same one every time), NULL none */
	double bcrypt_next[2];               /* monotonic: no bcrypt run before then, for a client
	                                      * never wrong [0] and for a suspect [1] (bcrypt_ok) */
	struct suspect {                     /* addresses that sent a wrong password */
		uint8_t key[8];
		uint8_t len;                 /* 0: a free entry */
		double last;
	} suspects[SUSPECTS_MAX], hurried[HURRIED_MAX];
	char address[INET6_ADDRSTRLEN + 8];  /* "127.0.0.1:9464", "[::1]:9464" */
	int starting;                        /* 1 while MHD_start_daemon runs: its log is kept */
	char start_log[320];                 /* libmicrohttpd's messages while starting, joined */
};

/* ---- the listen address ------------------------------------------------------ */

/*
 * Split "host:port", "[v6]:port" or ":port" into host (empty: every
 * address) and port.  VT_E_USAGE with the reason.
 */
static int split_listen(const char *listen, char *host, size_t host_cap, char *port, size_t port_cap,
			struct vt_err *err)
{
	const char *colon, *p;
	size_t hlen;

	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');

		if (!close || close[1] != ':')
			return vt_err_set(err, VT_E_USAGE, 0, "listen address '%s': an IPv6 address in "
					  "brackets is followed by :PORT ([::1]:9464)", listen);
		hlen = (size_t)(close - listen - 1);
		if (hlen == 0)
			return vt_err_set(err, VT_E_USAGE, 0, "listen address '%s': empty brackets", listen);
		p = listen + 1;
		colon = close + 1;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			return vt_err_set(err, VT_E_USAGE, 0, "listen address '%s' has no port: give HOST:PORT "
					  "(127.0.0.1:9464, [::1]:9464, :9464)", listen);
		hlen = (size_t)(colon - listen);
		p = listen;
		if (memchr(listen, ':', hlen))
			return vt_err_set(err, VT_E_USAGE, 0, "listen address '%s': put an IPv6 address in "
					  "brackets ([::1]:9464)", listen);
	}
	if (hlen >= host_cap)
		return vt_err_set(err, VT_E_USAGE, 0, "listen address '%s': the host name is too long", listen);
	memcpy(host, p, hlen);
	host[hlen] = '\0';
	if (strlen(colon + 1) >= port_cap || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    atol(colon + 1) > 65535)
		return vt_err_set(err, VT_E_USAGE, 0, "listen address '%s': the port is not a number from "
				  "0 to 65535", listen);
	snprintf(port, port_cap, "%ld", atol(colon + 1));
	return VT_OK;
}

static void format_address(const struct sockaddr *sa, char *out, size_t cap)
{
	char ip[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(out, cap, "[%s]:%u", ip, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(out, cap, "%s:%u", ip, ntohs(s4->sin_port));
	}
}

/* A listening socket on sa, or -1 with errno set. */
static int listen_on(const struct sockaddr *sa, socklen_t len, bool dual_stack)
{
	int fd, one = 1, zero = 0, e;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* a restart binds again at once, past the last run's TIME_WAIT (never a second listener) */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual_stack ? &zero : &one, sizeof(int));
	if (bind(fd, sa, len) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int bind_error(const char *listen, const char *port, int e, struct vt_err *err)
{
	int rc;

	if (e == EACCES) {
		rc = vt_err_set(err, VT_E_PERM, e, "cannot listen on '%s': %s", listen, strerror(e));
		vt_err_hint(err, "ports below 1024 need root or CAP_NET_BIND_SERVICE; 9464 is the usual one");
		return rc;
	}
	rc = vt_err_set(err, VT_E_IO, e, "cannot listen on '%s': %s", listen, strerror(e));
	if (e == EADDRINUSE)
		vt_err_hint(err, "another program listens on port %s (ss -ltnp 'sport = :%s' names it); "
			    "pick another port with --listen", port, port);
	else if (e == EADDRNOTAVAIL)
		vt_err_hint(err, "that address is not one of this host's (ip -br addr lists them)");
	return rc;
}

/* Bind the listen address: its socket, and the address bound in s->address. */
static int open_listen(struct vt_http *s, const char *listen, int *out, struct vt_err *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	char host[256], port[8];
	int rc, fd = -1, e = 0;

	if ((rc = split_listen(listen, host, sizeof(host), port, sizeof(port), err)))
		return rc;
	if (!host[0]) {
		/* every address: IPv6 and IPv4 on one socket, IPv4 alone where IPv6 is off */
		struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(port)),
					     .sin6_addr = IN6ADDR_ANY_INIT };
		struct sockaddr_in any4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
					    .sin_addr = { htonl(INADDR_ANY) } };

		fd = listen_on((struct sockaddr *)&any6, sizeof(any6), true);
		if (fd < 0 && (errno == EAFNOSUPPORT || errno == EADDRNOTAVAIL))
			fd = listen_on((struct sockaddr *)&any4, sizeof(any4), false);
		if (fd < 0)
			return bind_error(listen, port, errno, err);
	} else {
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
		rc = getaddrinfo(host, port, &hints, &res);
		if (rc != 0)
			return vt_err_set(err, VT_E_USAGE, rc == EAI_SYSTEM ? errno : 0,
					  "listen address '%s': cannot resolve '%s': %s", listen, host,
					  gai_strerror(rc));
		/* the first address that binds ("localhost" may name ::1 and 127.0.0.1) */
		for (ai = res; ai && fd < 0; ai = ai->ai_next) {
			fd = listen_on(ai->ai_addr, ai->ai_addrlen, false);
			if (fd < 0 && (!e || errno != EAFNOSUPPORT))
				e = errno;
		}
		freeaddrinfo(res);
		if (fd < 0)
			return bind_error(listen, port, e ? e : EADDRNOTAVAIL, err);
	}
	if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
		format_address((struct sockaddr *)&bound, s->address, sizeof(s->address));
	else
		snprintf(s->address, sizeof(s->address), "%s", listen);
	*out = fd;
	return VT_OK;
}

/* ---- requests ------------------------------------------------------------------ */

/*
 * Percent-decoding of the path, but "%00" kept as it is: libmicrohttpd hands
 * the path over as a C string, and a decoded NUL would cut "/metrics%00x"
 * to "/metrics".
 */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
	char *r = s, *w = s;

	(void)cls;
	(void)c;
	while (*r) {
		if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2]) &&
		    !(r[1] == '0' && r[2] == '0')) {
			char hex[3] = { r[1], r[2], 0 };

			*w++ = (char)strtol(hex, NULL, 16);
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

static void add_headers(const struct vt_http *s, struct MHD_Response *r, const char *content_type)
{
	size_t i;

	if (content_type)
		vt_mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	for (i = 0; i < s->wc.nheaders; i++)
		vt_mhd.add_response_header(r, s->wc.headers[i].name, s->wc.headers[i].value);
}

static enum MHD_Result reply_static(struct vt_http *s, struct MHD_Connection *c, unsigned status,
				    const char *content_type, const char *body)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = vt_mhd.create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	add_headers(s, r, content_type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		vt_mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_UNAUTHORIZED)
		ret = vt_mhd.queue_basic_auth_fail_response(c, REALM, r);
	else
		ret = vt_mhd.queue_response(c, status, r);
	vt_mhd.destroy_response(r);
	return ret;
}

/* Hand a buffer's bytes to libmicrohttpd (which frees them) and queue them. */
static enum MHD_Result reply_buf(struct vt_http *s, struct MHD_Connection *c, unsigned status,
				 const char *content_type, struct vt_buf *body, bool gzipped)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!body->data || body->len == 0) {
		vt_buf_release(body);
		return reply_static(s, c, status, content_type, "");
	}
	r = vt_mhd.create_response_from_buffer(body->len, body->data, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		vt_buf_release(body);
		return MHD_NO;
	}
	body->data = NULL;            /* libmicrohttpd's now */
	vt_buf_release(body);
	add_headers(s, r, content_type);
	if (gzipped)
		vt_mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	vt_mhd.add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	ret = vt_mhd.queue_response(c, status, r);
	vt_mhd.destroy_response(r);
	return ret;
}

/* The client takes gzip: Accept-Encoding lists it (or *) with a q above 0. */
static bool wants_gzip(const char *accept_encoding)
{
	const char *p = accept_encoding;

	while (p && *p) {
		size_t n;
		const char *end = p + strcspn(p, ",");
		const char *semi;

		p += strspn(p, " \t");
		n = strcspn(p, ";, \t");
		if ((n == 4 && strncasecmp(p, "gzip", 4) == 0) || (n == 1 && *p == '*')) {
			semi = memchr(p, ';', (size_t)(end - p));
			if (!semi)
				return true;
			semi = strstr(semi, "q=");
			if (!semi || semi >= end || strtod(semi + 2, NULL) > 0)
				return true;
			return false;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

/* Replace body by its gzip; false (body as it was) when that fails or would not pay. */
static bool gzip_body(struct vt_buf *body)
{
	struct vt_buf out = VT_BUF_INIT(BODY_MAX);

	if (body->len < GZIP_MIN)
		return false;
	if (vt_gzip_append(&out, body->data, body->len, Z_BEST_SPEED, NULL) != VT_OK) {
		vt_buf_release(&out);
		return false;
	}
	vt_buf_release(body);
	*body = out;
	return true;
}

/* The client's address as a key: IPv4's 4 bytes, IPv6's /64 (one host has a whole /64). */
static size_t client_key(struct MHD_Connection *c, uint8_t key[8])
{
	const union MHD_ConnectionInfo *ci = vt_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (sa && sa->sa_family == AF_INET) {
		memcpy(key, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return 4;
	}
	if (sa && sa->sa_family == AF_INET6) {
		const uint8_t *a = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;

		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(const void *)a)) {
			memcpy(key, a + 12, 4);
			return 4;
		}
		memcpy(key, a, 8);
		return 8;
	}
	return 0;
}

/* The slot of the address key among table[n], or NULL. */
static struct suspect *addr_find(struct suspect *table, size_t n, const uint8_t *key, size_t len)
{
	size_t i;

	for (i = 0; len && i < n; i++)
		if (table[i].len == len && memcmp(table[i].key, key, len) == 0)
			return &table[i];
	return NULL;
}

/*
 * The slot of the address key (len > 0) among table[n]: its own, else an
 * empty one or the longest quiet one, taken for it (*fresh true, its last
 * time 0).
 */
static struct suspect *addr_slot(struct suspect *table, size_t n, const uint8_t *key, size_t len,
				 bool *fresh)
{
	struct suspect *x = addr_find(table, n, key, len);
	size_t i;

	*fresh = !x;
	if (x)
		return x;
	x = &table[0];
	for (i = 1; i < n && x->len; i++)
		if (!table[i].len || table[i].last < x->last)
			x = &table[i];
	memcpy(x->key, key, len);
	x->len = (uint8_t)len;
	x->last = 0;
	return x;
}

static struct suspect *suspect_find(struct vt_http *s, const uint8_t *key, size_t len)
{
	return addr_find(s->suspects, SUSPECTS_MAX, key, len);
}

/* Remember the address of a wrong guess, in the place of the longest quiet one. */
static void suspect_add(struct vt_http *s, const uint8_t *key, size_t len, double now)
{
	bool fresh;

	if (len)
		addr_slot(s->suspects, SUSPECTS_MAX, key, len, &fresh)->last = now;
}

/*
 * A client never wrong was refused unchecked (the budget was spent).  One
 * that asks again within HURRIED_S of such a refusal is hammering, not
 * scraping (a scraper asks once a scrape): it joins the suspects.  Before,
 * eight guessers' first asks all came from the never-wrong budget, seven
 * were refused unchecked and so never became suspects, and they took every
 * run of that budget from a scraper on a busy host (answered 2 of 10).
 */
static void refused_unchecked(struct vt_http *s, const uint8_t *key, size_t len, double now)
{
	struct suspect *x;
	bool fresh;

	if (!len)
		return;
	x = addr_slot(s->hurried, HURRIED_MAX, key, len, &fresh);
	if (!fresh && now - x->last < HURRIED_S) {
		suspect_add(s, key, len, now);
		return;
	}
	x->last = now;
}

/*
 * Check password against hash with bcrypt, unless bcrypt has had its share
 * of the server's one thread: each run costs ~50 ms (more at a higher cost),
 * and a client trying passwords would otherwise queue every scrape behind
 * them.  After a run of d seconds the next waits (BCRYPT_SHARE - 1) * d; a
 * password asked for meanwhile is refused unchecked (401: try again).
 * Clients that sent a wrong password (suspect) and the others each have a
 * budget of their own: 123,696 wrong guesses in 30 s from a few addresses
 * took every run, and a scraper with the right password got 401 29 times
 * of 29.  Now guessers wait for each other, and a scraper that was never
 * wrong is checked at its first ask.  (Guesses from ever new addresses
 * still spend the others' budget: an address is remembered, SUSPECTS_MAX
 * of them, and a guesser with more than that many is a flood to stop at
 * the network.)  The scraper's password, once it matched, is checked from
 * verified[] without bcrypt.
 */
static bool bcrypt_ok(struct vt_http *s, struct MHD_Connection *c, const char *hash, const char *password)
{
	double t0 = vt_mono_s(), t1;
	uint8_t key[8];
	size_t len = client_key(c, key);
	int kind = suspect_find(s, key, len) != NULL;
	bool ok;

	if (t0 < s->bcrypt_next[kind]) {
		if (kind == 0)
			refused_unchecked(s, key, len, t0);
		return false;
	}
	ok = vt_web_password_ok(hash, password);
	t1 = vt_mono_s();
	s->bcrypt_next[kind] = t1 + (BCRYPT_SHARE - 1) * (t1 - t0);
	if (!ok)
		suspect_add(s, key, len, t1);
	return ok;
}

/*
 * Basic auth: true when the request's user and password match.  An unknown
 * user costs a bcrypt run too (against the first user's hash), so timing
 * does not tell which names exist.
 */
static bool authorized(struct vt_http *s, struct MHD_Connection *c)
{
	char *pass = NULL, *user;
	bool ok = false;
	size_t i, n;

	user = vt_mhd.basic_auth_get_username_password(c, &pass);
	if (!user || !pass)
		goto out;
	for (i = 0; i < s->wc.nusers; i++)
		if (strcmp(s->wc.users[i].name, user) == 0)
			break;
	if (i == s->wc.nusers) {
		bcrypt_ok(s, c, s->wc.users[0].hash, pass);
		goto out;
	}
	n = strlen(pass);
	if (s->verified[i] && strlen(s->verified[i]) == n && vt_web_const_eq(s->verified[i], pass, n)) {
		ok = true;
		goto out;
	}
	ok = bcrypt_ok(s, c, s->wc.users[i].hash, pass);
	if (ok) {
		if (s->verified[i])
			explicit_bzero(s->verified[i], strlen(s->verified[i]));
		free(s->verified[i]);
		s->verified[i] = strdup(pass);       /* NULL (no memory): checked again next time */
	}
out:
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		vt_mhd.free(pass);
	}
	if (user)
		vt_mhd.free(user);
	return ok;
}

static enum MHD_Result serve_metrics(struct vt_http *s, struct MHD_Connection *c)
{
	struct vt_buf body = VT_BUF_INIT(BODY_MAX);
	const char *accept = vt_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	const char *encoding = vt_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *content_type = "text/plain; version=0.0.4; charset=utf-8";
	struct vt_err err;
	bool gz;

	vt_err_clear(&err);
	if (s->h.metrics(s->h.ctx, accept, &body, &content_type, &err) != 0) {
		vt_buf_reset(&body);
		if (vt_buf_appendf(&body, "vitals: %s\n", err.msg[0] ? err.msg : vt_code_str(err.code)) != VT_OK)
			vt_buf_release(&body);
		return reply_buf(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", &body, false);
	}
	gz = wants_gzip(encoding) && gzip_body(&body);
	return reply_buf(s, c, MHD_HTTP_OK, content_type, &body, gz);
}

static enum MHD_Result serve_health(struct vt_http *s, struct MHD_Connection *c)
{
	struct vt_buf body = VT_BUF_INIT(4096);
	int rc = s->h.health ? s->h.health(s->h.ctx, &body) : (vt_buf_append(&body, "ok\n", 3), 0);

	return reply_buf(s, c, rc == 0 ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
			 &body, false);
}

static const char index_html[] =
	"<!DOCTYPE html>\n"
	"<html><head><title>vitals serve</title></head><body>\n"
	"<h1>vitals serve</h1>\n"
	"<p>A Prometheus exporter for the processes vitals was told to watch.</p>\n"
	"<ul><li><a href=\"metrics\">metrics</a></li><li><a href=\"healthz\">healthz</a></li></ul>\n"
	"</body></html>\n";

/* ---- slow requests: /debug/pprof/ on threads of their own ---------------------- */

bool vt_http_job_over(struct vt_http_job *j)
{
	struct pollfd pf = { .fd = j->fd, .events = POLLRDHUP };

	if (j->stop)
		return true;
	/* the client closed its side, or the socket failed; data it sent is left unread */
	return j->fd >= 0 && poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

const char *vt_http_arg(void *req, const char *name)
{
	return vt_mhd.lookup_connection_value(req, MHD_GET_ARGUMENT_KIND, name);
}

static void slow_free(struct slow *w)
{
	vt_buf_release(&w->a.body);
	free(w);
}

/* The answer of a slow request, begun or done: its body goes to libmicrohttpd. */
static enum MHD_Result reply_answer(struct vt_http *s, struct MHD_Connection *c, struct vt_http_answer *a)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char retry[24];

	r = vt_mhd.create_response_from_buffer(a->body.len, a->body.len ? a->body.data : (void *)"",
					       a->body.len ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	if (a->body.len)
		a->body.data = NULL;         /* libmicrohttpd's now */
	vt_buf_release(&a->body);
	add_headers(s, r, a->content_type ? a->content_type : "text/plain; charset=utf-8");
	if (a->status == MHD_HTTP_TOO_MANY_REQUESTS || a->status == MHD_HTTP_SERVICE_UNAVAILABLE) {
		snprintf(retry, sizeof(retry), "%u", a->retry_after_s ? a->retry_after_s : 1);
		vt_mhd.add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry);
	}
	if (a->status == MHD_HTTP_OK)
		vt_mhd.add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
	ret = vt_mhd.queue_response(c, a->status, r);
	vt_mhd.destroy_response(r);
	return ret;
}

/* The thread of a slow request: the handler's run and end, then the connection is resumed. */
static void *slow_main(void *arg)
{
	struct slow *w = arg;
	struct vt_http *s = w->s;
	struct MHD_Connection *c = w->c;

	s->h.slow_run(w->job, &w->j, &w->a);
	s->h.slow_end(w->job);
	w->job = NULL;
	if (!w->a.status) {
		w->a.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		vt_buf_reset(&w->a.body);
	}
	pthread_mutex_lock(&s->slow_lock);
	w->done = true;
	pthread_mutex_unlock(&s->slow_lock);
	vt_mhd.resume_connection(c);         /* w may be freed from here on */
	pthread_mutex_lock(&s->slow_lock);
	s->slow_running--;
	pthread_cond_broadcast(&s->slow_cond);
	pthread_mutex_unlock(&s->slow_lock);
	return NULL;
}

/*
 * A request under /debug/pprof/: the handler answers at once, or the
 * connection is suspended (libmicrohttpd's thread goes on serving others)
 * while a thread runs the job; resumed, the request comes back here with
 * *req the slow request, and its answer is sent.
 */
static enum MHD_Result serve_slow(struct vt_http *s, struct MHD_Connection *c, const char *url, void **req)
{
	const union MHD_ConnectionInfo *ci;
	struct slow *w;
	pthread_attr_t attr;
	pthread_t t;
	enum MHD_Result ret;
	int rc;

	w = calloc(1, sizeof(*w));
	if (!w)
		return MHD_NO;
	w->s = s;
	w->c = c;
	w->a.body = (struct vt_buf)VT_BUF_INIT(BODY_MAX);
	ci = vt_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	w->j.fd = ci ? ci->connect_fd : -1;
	s->h.slow_begin(s->h.ctx, url, c, &w->a, &w->job);
	if (w->a.status) {
		ret = reply_answer(s, c, &w->a);
		slow_free(w);
		return ret;
	}
	pthread_mutex_lock(&s->slow_lock);
	w->next = s->slows;
	if (s->slows)
		s->slows->prev = w;
	s->slows = w;
	s->slow_running++;
	pthread_mutex_unlock(&s->slow_lock);
	*req = w;
	vt_mhd.suspend_connection(c);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, slow_main, w);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		s->h.slow_end(w->job);
		w->job = NULL;
		w->a.status = MHD_HTTP_SERVICE_UNAVAILABLE;
		w->a.content_type = NULL;
		vt_buf_reset(&w->a.body);
		vt_buf_appendf(&w->a.body, "vitals: no thread for the profile: %s\n", strerror(rc));
		pthread_mutex_lock(&s->slow_lock);
		w->done = true;
		s->slow_running--;
		pthread_mutex_unlock(&s->slow_lock);
		vt_mhd.resume_connection(c);
	}
	return MHD_YES;
}

/* A slow request is over (answered, or its client gone): off the list, freed. */
static void slow_completed(struct vt_http *s, struct slow *w)
{
	pthread_mutex_lock(&s->slow_lock);
	if (w->prev)
		w->prev->next = w->next;
	else
		s->slows = w->next;
	if (w->next)
		w->next->prev = w->prev;
	pthread_mutex_unlock(&s->slow_lock);
	slow_free(w);
}

/* ---- connections: a deadline for headers, and room for new clients ------------- */

static void conn_close(struct vt_http *s, struct conn *k)
{
	if (k->closing)
		return;
	k->closing = true;
	s->nconns--;
	shutdown(k->fd, SHUT_RDWR);          /* libmicrohttpd sees it and closes the connection */
}

/* The accept policy: every new client is let in, after stalled ones make room. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct vt_http *s = cls;
	double now = vt_mono_s();
	struct conn *k, *oldest_waiting = NULL;

	(void)addr;
	(void)len;
	for (k = s->oldest; k; k = k->next) {
		if (k->closing || k->headed)
			continue;
		if (now - k->since > HEAD_DEADLINE_S)
			conn_close(s, k);
		else if (!oldest_waiting)
			oldest_waiting = k;
	}
	if (s->nconns >= CONN_LIMIT && oldest_waiting)
		conn_close(s, oldest_waiting);
	return s->nconns >= CONN_LIMIT ? MHD_NO : MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode what)
{
	struct vt_http *s = cls;
	struct conn *k = *socket_context;

	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = vt_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		k = calloc(1, sizeof(*k));
		if (!k || !ci) {
			free(k);
			return;              /* not counted: libmicrohttpd's own limits still hold */
		}
		k->fd = ci->connect_fd;
		k->since = vt_mono_s();
		k->prev = s->newest;
		if (s->newest)
			s->newest->next = k;
		else
			s->oldest = k;
		s->newest = k;
		s->nconns++;
		*socket_context = k;
		return;
	}
	if (!k)
		return;
	if (!k->closing)
		s->nconns--;
	if (k->prev)
		k->prev->next = k->next;
	else
		s->oldest = k->next;
	if (k->next)
		k->next->prev = k->prev;
	else
		s->newest = k->prev;
	free(k);
	*socket_context = NULL;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = vt_mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* A request was answered (or failed): the next one's headers are due from now. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req, enum MHD_RequestTerminationCode why)
{
	struct vt_http *s = cls;
	struct conn *k = conn_of(c);

	(void)why;
	if (req && *req && *req != s) {
		slow_completed(s, *req);
		*req = NULL;
	}
	if (k) {
		k->headed = false;
		k->since = vt_mono_s();
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_size, void **req)
{
	struct vt_http *s = cls;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	enum { P_NONE, P_METRICS, P_HEALTH, P_INDEX, P_SLOW } path;

	(void)version;
	(void)upload_data;
	/*
	 * GET and HEAD are answered at the last call, once the request is read,
	 * so the connection stays open for the next scrape; any body is
	 * dropped.  Other methods are refused at once, and libmicrohttpd closes
	 * their connection rather than read what they send.
	 */
	if (!*req) {
		struct conn *k = conn_of(c);

		if (k)
			k->headed = true;    /* its line and headers are in */
	}
	if (get && !*req) {
		*req = s;
		return MHD_YES;
	}
	if (get && *upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*req && *req != s) {
		/* a slow request resumed: its thread is through */
		struct slow *w = *req;
		bool done;

		pthread_mutex_lock(&s->slow_lock);
		done = w->done;
		pthread_mutex_unlock(&s->slow_lock);
		return done ? reply_answer(s, c, &w->a) : MHD_YES;
	}
	if (s->wc.nusers && !authorized(s, c))
		return reply_static(s, c, MHD_HTTP_UNAUTHORIZED, "text/plain; charset=utf-8", "unauthorized\n");
	path = strcmp(url, "/metrics") == 0 ? P_METRICS : strcmp(url, "/healthz") == 0 ? P_HEALTH :
	       strcmp(url, "/") == 0 ? P_INDEX :
	       s->h.slow_begin && strncmp(url, "/debug/pprof/", 13) == 0 ? P_SLOW : P_NONE;
	if (path == P_NONE)
		return reply_static(s, c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
				    "not found: try /metrics\n");
	if (!get)
		return reply_static(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
				    "method not allowed: GET or HEAD\n");
	if (path == P_METRICS)
		return serve_metrics(s, c);
	if (path == P_HEALTH)
		return serve_health(s, c);
	if (path == P_SLOW)
		return serve_slow(s, c, url, req);
	return reply_static(s, c, MHD_HTTP_OK, "text/html; charset=utf-8", index_html);
}

/* ---- the daemon ---------------------------------------------------------------- */

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* libmicrohttpd's messages: kept while it starts (to explain a failure), dropped after. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct vt_http *s = cls;
	size_t n = strlen(s->start_log);

	if (!__atomic_load_n(&s->starting, __ATOMIC_ACQUIRE) || n + 3 >= sizeof(s->start_log))
		return;
	if (n)
		memcpy(s->start_log + n, "; ", 3), n += 2;
	vsnprintf(s->start_log + n, sizeof(s->start_log) - n, fmt, ap);
	n = strlen(s->start_log);
	while (n && (s->start_log[n - 1] == '\n' || s->start_log[n - 1] == '.'))
		s->start_log[--n] = '\0';
}

static const char *tls_priorities(const struct vt_web_config *wc)
{
	if (wc->tls_min == VT_WEB_TLS13)
		return "NORMAL:-VERS-ALL:+VERS-TLS1.3";
	if (wc->tls_max == VT_WEB_TLS12)
		return "NORMAL:-VERS-ALL:+VERS-TLS1.2";
	return "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
}

int vt_http_start(const struct vt_http_config *cfg, const struct vt_http_handlers *h, struct vt_http **out,
		  struct vt_err *err)
{
	struct MHD_OptionItem opts[16];
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC |
			 MHD_ALLOW_SUSPEND_RESUME;
	struct vt_http *s;
	size_t no = 0;
	int fd = -1, rc;

	*out = NULL;
	if (!h || !h->metrics)
		return vt_err_set(err, VT_E_USAGE, 0, "no metrics handler");
	if ((rc = vt_mhd_load(err)) != VT_OK)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory starting the HTTP server");
	pthread_mutex_init(&s->slow_lock, NULL);
	pthread_cond_init(&s->slow_cond, NULL);
	s->h = *h;
	if (cfg->web_config && (rc = vt_web_config_load(cfg->web_config, &s->wc, err)))
		goto fail;
	if (s->wc.nusers && !(s->verified = calloc(s->wc.nusers, sizeof(*s->verified)))) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory starting the HTTP server");
		goto fail;
	}
	if (s->wc.tls && vt_mhd.is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "web config '%s' asks for TLS, but this libmicrohttpd "
				"was built without it", cfg->web_config);
		vt_err_hint(err, "install Debian's libmicrohttpd12 (built with GnuTLS), or put a TLS proxy in front");
		goto fail;
	}
	if ((rc = open_listen(s, cfg->listen ? cfg->listen : "127.0.0.1:9464", &fd, err)))
		goto fail;

	flags |= vt_mhd.is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
	/* the logger first, or libmicrohttpd prints its messages about the options before it */
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, s };
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, fd, NULL };
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, CONN_HARD_LIMIT, NULL };
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s };
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s };
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, CONN_PER_IP, NULL };
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, CONN_TIMEOUT_S, NULL };
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_MEMORY, NULL };
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape, NULL };
	if (s->wc.tls) {
		flags |= MHD_USE_TLS;
		opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, s->wc.cert_pem };
		opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, s->wc.key_pem };
		opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)tls_priorities(&s->wc) };
	}
	opts[no++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

	__atomic_store_n(&s->starting, 1, __ATOMIC_RELEASE);
	s->daemon = vt_mhd.start_daemon(flags, 0, on_accept, s, on_request, s, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	__atomic_store_n(&s->starting, 0, __ATOMIC_RELEASE);
	if (!s->daemon) {
		/* libmicrohttpd 0.9.75 leaves a socket it was given open when it fails */
		if (fcntl(fd, F_GETFD) != -1)
			close(fd);
		if (s->wc.tls)
			rc = vt_err_set(err, VT_E_USAGE, 0, "web config '%s': TLS cannot start with cert_file '%s' "
					"and key_file '%s'%s%s", cfg->web_config, s->wc.cert_file, s->wc.key_file,
					s->start_log[0] ? ": " : "", s->start_log);
		else
			rc = vt_err_set(err, VT_E_FAIL, 0, "cannot start the HTTP server%s%s",
					s->start_log[0] ? ": " : "", s->start_log);
		goto fail;
	}
	/* the key stays in libmicrohttpd's GnuTLS credentials; our copy goes */
	if (s->wc.key_pem) {
		explicit_bzero(s->wc.key_pem, strlen(s->wc.key_pem));
		free(s->wc.key_pem);
		s->wc.key_pem = NULL;
	}
	*out = s;
	return VT_OK;

fail:
	vt_http_stop(s);
	return rc;
}

const char *vt_http_address(const struct vt_http *s)
{
	return s->address;
}

bool vt_http_tls(const struct vt_http *s)
{
	return s->wc.tls;
}

size_t vt_http_users(const struct vt_http *s)
{
	return s->wc.nusers;
}

const char *vt_http_warnings(const struct vt_http *s)
{
	return s->wc.warnings;
}

void vt_http_stop(struct vt_http *s)
{
	size_t i;

	if (!s)
		return;
	/* slow requests end first (each resumes its connection), then the daemon */
	pthread_mutex_lock(&s->slow_lock);
	for (struct slow *w = s->slows; w; w = w->next)
		w->j.stop = 1;
	while (s->slow_running)
		pthread_cond_wait(&s->slow_cond, &s->slow_lock);
	pthread_mutex_unlock(&s->slow_lock);
	if (s->daemon)
		vt_mhd.stop_daemon(s->daemon);          /* joins its thread, closes every socket */
	for (i = 0; s->verified && i < s->wc.nusers; i++) {
		if (s->verified[i])
			explicit_bzero(s->verified[i], strlen(s->verified[i]));
		free(s->verified[i]);
	}
	free(s->verified);
	vt_web_config_release(&s->wc);
	pthread_mutex_destroy(&s->slow_lock);
	pthread_cond_destroy(&s->slow_cond);
	free(s);
}
