/*
 * core.c — the agent core: one request line in, one JSON reply out.
 *
 * It reads the process's own glibc heap figures, mallinfo2() and
 * malloc_info(), and calls malloc_trim(0) when the request asks for it and
 * the process was started with VITALS_AGENT_ALLOW_TRIM=1.  It also holds the
 * one exported function, vitals_agent_json().  "allocs" requests are parsed
 * here and answered by agent/alloc_sampler.c in libvitals-agent-allocs.so,
 * or refused (libvitals-agent.so).
 *
 * This code runs inside someone else's process, so it must not:
 *  - abort, print, or change anything but the heap (and that only for trim);
 *  - link jansson or anything else: the JSON is written by hand into a
 *    bounded buffer, and the request is read by a small scalar-only parser;
 *  - call the host's malloc from the agent's own thread.  glibc gives a
 *    thread its own arena on its first malloc() or free(), so an agent that
 *    used open_memstream() from its listener thread would add an arena (and
 *    its 64 MiB heap reservation) to the very figures it reports, in the
 *    processes vitals is most often pointed at (arena sprawl).  Measured on
 *    glibc 2.36: malloc_info's heap count went from 1 to 2 after one
 *    open_memstream() request from a fresh thread.  So malloc_info() writes
 *    into a fopencookie() FILE created once by the constructor on the main
 *    thread, with a static stdio buffer, whose write function copies into
 *    an mmap-backed buffer (struct agent_sink).  mallinfo2, malloc_info and
 *    malloc_trim walk the arenas without attaching the caller to one.
 */
#include "core.h"
#include "protocol.h"
#include "vitals-agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SINK_FIRST (64u << 10)

enum malloc_kind { MALLOC_UNKNOWN, MALLOC_GLIBC, MALLOC_OTHER };

static pthread_once_t core_once = PTHREAD_ONCE_INIT;
/* Serialises every use of mi_fp and mi_target (listener and API callers). */
static pthread_mutex_t core_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *mi_fp;                     /* malloc_info() writes here */
static char mi_stdio_buf[8192];         /* mi_fp's buffer: stdio must not malloc one */
static struct agent_sink *mi_target;    /* where mi_fp's bytes go, under core_lock */
static enum malloc_kind malloc_kind;
static bool trim_allowed;

/* ---- mmap-backed output buffer ------------------------------------------ */

void agent_sink_init(struct agent_sink *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
}

void agent_sink_release(struct agent_sink *s)
{
	if (s->p)
		munmap(s->p, s->cap);
	s->p = NULL;
	s->len = s->cap = 0;
}

/* Room for extra more bytes plus the NUL; false (and failed) if not. */
static bool sink_reserve(struct agent_sink *s, size_t extra)
{
	size_t need, cap;
	void *p;

	if (s->failed)
		return false;
	if (extra > s->max - s->len) {
		s->failed = true;
		return false;
	}
	need = s->len + extra + 1;
	if (s->p && need <= s->cap)
		return true;
	cap = s->cap ? s->cap : SINK_FIRST;
	while (cap < need)
		cap *= 2;
	if (s->p)
		p = mremap(s->p, s->cap, cap, MREMAP_MAYMOVE);
	else
		p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		s->failed = true;
		return false;
	}
	s->p = p;
	s->cap = cap;
	return true;
}

void agent_sink_put(struct agent_sink *s, const char *bytes, size_t n)
{
	if (!sink_reserve(s, n))
		return;
	memcpy(s->p + s->len, bytes, n);
	s->len += n;
	s->p[s->len] = '\0';
}

/* snprintf into the sink (vsnprintf formats on the stack, no malloc). */
static void sink_printf(struct agent_sink *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void sink_printf(struct agent_sink *s, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		s->failed = true;   /* every format here is short: a bug, not data */
		return;
	}
	agent_sink_put(s, tmp, (size_t)n);
}

/* Bytes needed to write src as the inside of a JSON string. */
static size_t json_escaped_len(const char *src, size_t n)
{
	size_t i, out = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];
		if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r')
			out += 2;
		else if (c < 0x20 || c >= 0x7f)
			out += 6;
		else
			out++;
	}
	return out;
}

/*
 * Write src as a JSON string.  Bytes outside printable ASCII become \u00XX,
 * so the reply is valid UTF-8 whatever the text holds (malloc_info is ASCII).
 */
static void sink_json_str(struct agent_sink *s, const char *src, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char *w;
	size_t i;

	if (!sink_reserve(s, json_escaped_len(src, n) + 2))
		return;
	w = s->p + s->len;
	*w++ = '"';
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];
		switch (c) {
		case '"':  *w++ = '\\'; *w++ = '"'; break;
		case '\\': *w++ = '\\'; *w++ = '\\'; break;
		case '\n': *w++ = '\\'; *w++ = 'n'; break;
		case '\t': *w++ = '\\'; *w++ = 't'; break;
		case '\r': *w++ = '\\'; *w++ = 'r'; break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				memcpy(w, "\\u00", 4);
				w[4] = hex[c >> 4];
				w[5] = hex[c & 15];
				w += 6;
			} else {
				*w++ = (char)c;
			}
		}
	}
	*w++ = '"';
	s->len = (size_t)(w - s->p);
	s->p[s->len] = '\0';
}

/* ---- set-up ---------------------------------------------------------------- */

/* fopencookie write function: append to mi_target (held under core_lock). */
static ssize_t mi_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	if (mi_target)
		agent_sink_put(mi_target, buf, n);
	return (ssize_t)n;    /* never fail the FILE: the sink remembers */
}

/*
 * glibc's malloc is in use when the symbol every caller binds to is libc's
 * own.  With jemalloc/tcmalloc preloaded, or an executable that defines
 * malloc, it is not, and glibc's figures would describe an unused heap.
 * The global scope is complete when constructors run, so once is enough.
 * In libvitals-agent-allocs.so the process's malloc is normally the
 * agent's own wrapper, which forwards every call: the heap is then that of
 * the malloc it forwards to.
 */
static enum malloc_kind detect_malloc(void)
{
	void *def, *own = NULL, *libc;

	def = dlsym(RTLD_DEFAULT, "malloc");
#if VT_AGENT_ALLOCS
	if (agent_allocs_forwarded_malloc())
		def = agent_allocs_forwarded_malloc();
#endif
	libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (libc) {
		own = dlsym(libc, "malloc");
		dlclose(libc);
	}
	if (!def || !own)
		return MALLOC_UNKNOWN;
	return def == own ? MALLOC_GLIBC : MALLOC_OTHER;
}

/* fork() must not copy core_lock or mi_fp's lock while another thread holds them. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&core_lock);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&core_lock);
}

static void core_init_once(void)
{
	cookie_io_functions_t io = { .write = mi_write };
	const char *e = getenv(VT_AGENT_ENV_ALLOW_TRIM);

	trim_allowed = e && strcmp(e, "1") == 0;
	malloc_kind = detect_malloc();
	if (pthread_atfork(fork_prepare, fork_done, fork_done) != 0)
		return;       /* leave mi_fp NULL: better no answers than a child deadlock */
	/* Allocates the FILE with malloc: on the constructor's thread, once. */
	mi_fp = fopencookie(NULL, "w", io);
	if (mi_fp && setvbuf(mi_fp, mi_stdio_buf, _IOFBF, sizeof(mi_stdio_buf)) != 0) {
		fclose(mi_fp);
		mi_fp = NULL;
	}
}

int agent_core_init(void)
{
	pthread_once(&core_once, core_init_once);
	return mi_fp ? 0 : -1;
}

bool agent_core_trim_allowed(void)
{
	return trim_allowed;
}


/* ---- the request ------------------------------------------------------- */

enum want { WANT_HEAP, WANT_ALLOCS };

struct request {
	long long v;
	bool has_v;
	char want[32];
	bool has_want;
	enum want what;
	bool trim;
	struct agent_allocs_req allocs;   /* its members, checked only for "allocs" */
};

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/*
 * A JSON string at *pp into dst (cap bytes, NUL-terminated).  Escapes are
 * decoded; \uXXXX becomes '?'.  Returns 0, 1 if the string did not fit
 * (dst then holds a prefix), -1 on bad syntax.
 */
static int parse_string(const char **pp, const char *end, char *dst, size_t cap)
{
	const char *p = *pp;
	size_t n = 0;
	int truncated = 0;

	if (p >= end || *p != '"')
		return -1;
	for (p++; p < end && *p != '"'; p++) {
		char c = *p;
		if ((unsigned char)c < 0x20)
			return -1;
		if (c == '\\') {
			if (++p >= end)
				return -1;
			switch (*p) {
			case '"': case '\\': case '/': c = *p; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				int k;
				for (k = 1; k <= 4; k++)
					if (p + k >= end || p[k] == '\0' || !strchr("0123456789abcdefABCDEF", p[k]))
						return -1;
				p += 4;
				c = '?';
				break;
			}
			default:
				return -1;
			}
		}
		if (n + 1 < cap)
			dst[n++] = c;
		else
			truncated = 1;
	}
	if (p >= end)
		return -1;
	dst[n] = '\0';
	*pp = p + 1;
	return truncated;
}

/*
 * A JSON number; *is_int when it has no fraction or exponent.  0 or -1.
 * The integer part is clamped to 10^12 (more than any member takes).
 */
static int parse_number(const char **pp, const char *end, long long *out, bool *is_int)
{
	const char *p = *pp;
	bool neg = false;
	long long v = 0;

	*is_int = true;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p >= end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		v = v > 100000000000LL ? 1000000000000LL : v * 10 + (*p - '0');   /* clamp, no overflow */
	if (p < end && *p == '.') {
		*is_int = false;
		for (p++; p < end && *p >= '0' && *p <= '9'; p++)
			;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		*is_int = false;
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		for (; p < end && *p >= '0' && *p <= '9'; p++)
			;
	}
	*out = neg ? -v : v;
	*pp = p;
	return 0;
}

static bool word_at(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(end - p) >= n && memcmp(p, w, n) == 0;
}

/* Parse the request; on failure write a message into why and return -1. */
static int request_parse(const char *p, size_t len, struct request *r, char *why, size_t why_cap)
{
	const char *end = p + len;
	char key[32], sval[32];

	memset(r, 0, sizeof(*r));
	p = skip_ws(p, end);
	if (p >= end || *p != '{') {
		snprintf(why, why_cap, "request is not a JSON object");
		return -1;
	}
	p = skip_ws(p + 1, end);
	if (p < end && *p == '}') {
		p++;
		goto done;
	}
	for (;;) {
		enum { V_STR, V_NUM, V_TRUE, V_FALSE, V_NULL } kind;
		int krc, src = 0;
		long long num = 0;
		bool is_int = false;

		krc = parse_string(&p, end, key, sizeof(key));
		if (krc < 0)
			goto bad;
		p = skip_ws(p, end);
		if (p >= end || *p != ':')
			goto bad;
		p = skip_ws(p + 1, end);
		if (p >= end)
			goto bad;
		if (*p == '"') {
			kind = V_STR;
			src = parse_string(&p, end, sval, sizeof(sval));
			if (src < 0)
				goto bad;
		} else if (*p == '-' || (*p >= '0' && *p <= '9')) {
			kind = V_NUM;
			if (parse_number(&p, end, &num, &is_int) < 0)
				goto bad;
		} else if (word_at(p, end, "true")) {
			kind = V_TRUE;
			p += 4;
		} else if (word_at(p, end, "false")) {
			kind = V_FALSE;
			p += 5;
		} else if (word_at(p, end, "null")) {
			kind = V_NULL;
			p += 4;
		} else if (*p == '{' || *p == '[') {
			snprintf(why, why_cap, "request members must be strings, numbers or booleans");
			return -1;
		} else {
			goto bad;
		}

		if (krc == 0 && strcmp(key, "v") == 0) {
			if (kind != V_NUM || !is_int) {
				snprintf(why, why_cap, "request \"v\" must be an integer");
				return -1;
			}
			r->v = num;
			r->has_v = true;
		} else if (krc == 0 && strcmp(key, "want") == 0) {
			if (kind != V_STR) {
				snprintf(why, why_cap, "request \"want\" must be a string");
				return -1;
			}
			if (src)      /* too long to be anything we answer */
				snprintf(r->want, sizeof(r->want), "?");
			else
				snprintf(r->want, sizeof(r->want), "%s", sval);
			r->has_want = true;
		} else if (krc == 0 && strcmp(key, "trim") == 0) {
			if (kind != V_TRUE && kind != V_FALSE) {
				snprintf(why, why_cap, "request \"trim\" must be true or false");
				return -1;
			}
			r->trim = kind == V_TRUE;
		} else if (krc == 0 && (strcmp(key, "start") == 0 || strcmp(key, "stop") == 0)) {
			/* "allocs" members: checked by the sampler, ignored by "heap" */
			enum agent_req_flag f = kind == V_TRUE ? REQ_TRUE : kind == V_FALSE ? REQ_FALSE : REQ_BAD;
			if (strcmp(key, "start") == 0)
				r->allocs.start = f;
			else
				r->allocs.stop = f;
		} else if (krc == 0 && strcmp(key, "every") == 0) {
			r->allocs.has_every = true;
			r->allocs.every_int = kind == V_NUM && is_int;
			r->allocs.every = num;
		} else if (krc == 0 && strcmp(key, "for_ms") == 0) {
			r->allocs.has_for_ms = true;
			r->allocs.for_ms_int = kind == V_NUM && is_int;
			r->allocs.for_ms = num;
		}
		/* other members: ignored (newer clients may send more) */

		p = skip_ws(p, end);
		if (p < end && *p == ',') {
			p = skip_ws(p + 1, end);
			continue;
		}
		if (p < end && *p == '}') {
			p++;
			break;
		}
		goto bad;
	}
done:
	p = skip_ws(p, end);
	if (p != end)
		goto bad;
	if (!r->has_v) {
		snprintf(why, why_cap, "request has no \"v\"");
		return -1;
	}
	if (r->v != VT_AGENT_PROTO_VERSION) {
		snprintf(why, why_cap, "unsupported protocol version %lld: this agent speaks %d",
			 r->v, VT_AGENT_PROTO_VERSION);
		return -1;
	}
	if (!r->has_want) {
		snprintf(why, why_cap, "request has no \"want\"");
		return -1;
	}
	if (strcmp(r->want, "allocs") == 0) {
		r->what = WANT_ALLOCS;
		return 0;
	}
	r->what = WANT_HEAP;
	if (strcmp(r->want, "heap") != 0) {
		/* r->want holds at most 31 parsed bytes; drop anything unprintable */
		char safe[32];
		size_t i;
		for (i = 0; r->want[i] && i + 1 < sizeof(safe); i++)
			safe[i] = (r->want[i] >= 0x20 && r->want[i] < 0x7f) ? r->want[i] : '?';
		safe[i] = '\0';
#if VT_AGENT_ALLOCS
		snprintf(why, why_cap, "unknown want \"%s\": this agent answers \"heap\" and \"allocs\"", safe);
#else
		snprintf(why, why_cap, "unknown want \"%s\": this agent answers \"heap\"", safe);
#endif
		return -1;
	}
	return 0;
bad:
	snprintf(why, why_cap, "request is not valid JSON");
	return -1;
}

/* ---- the reply ----------------------------------------------------------- */

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void agent_core_error(struct agent_sink *out, const char *msg)
{
	sink_printf(out, "{\"v\":%d,\"pid\":%d,\"error\":", VT_AGENT_PROTO_VERSION, (int)getpid());
	sink_json_str(out, msg, strlen(msg));
	agent_sink_put(out, "}\n", 2);
}

static void put_mallinfo(struct agent_sink *s, const struct mallinfo2 *m)
{
	sink_printf(s,
		    "{\"arena\":%zu,\"ordblks\":%zu,\"smblks\":%zu,\"hblks\":%zu,"
		    "\"hblkhd\":%zu,\"usmblks\":%zu,\"fsmblks\":%zu,\"uordblks\":%zu,"
		    "\"fordblks\":%zu,\"keepcost\":%zu}",
		    m->arena, m->ordblks, m->smblks, m->hblks, m->hblkhd, m->usmblks,
		    m->fsmblks, m->uordblks, m->fordblks, m->keepcost);
}

static void heap_reply(struct agent_sink *out, bool trim)
{
	struct agent_sink xml;
	struct mallinfo2 mi, before, after;
	uint64_t t0, t1, t2 = 0, t3 = 0;
	int mi_rc, trim_rc = 0;
	bool xml_failed, fits;
	char msg[128];

	agent_sink_init(&xml, VT_AGENT_REPLY_MAX);
	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));

	pthread_mutex_lock(&core_lock);
	if (!mi_fp) {
		pthread_mutex_unlock(&core_lock);
		agent_core_error(out, "agent not initialised: cannot create its malloc_info stream");
		return;
	}
	mi_target = &xml;
	clearerr(mi_fp);
	t0 = now_us();
	mi = mallinfo2();
	mi_rc = malloc_info(0, mi_fp);
	fflush(mi_fp);
	t1 = now_us();
	mi_target = NULL;
	/* Decide before trimming: a reply that cannot be sent must not follow a change. */
	xml_failed = xml.failed || mi_rc != 0;
	fits = !xml_failed && json_escaped_len(xml.p, xml.len) + 4096 <= out->max - out->len;
	if (trim && fits) {
		before = mallinfo2();
		t2 = now_us();
		trim_rc = malloc_trim(0);
		t3 = now_us();
		after = mallinfo2();
	}
	pthread_mutex_unlock(&core_lock);

	if (!fits) {
		if (xml_failed && !xml.failed)
			snprintf(msg, sizeof(msg), "malloc_info failed");
		else
			snprintf(msg, sizeof(msg), "malloc_info output does not fit in the %u MiB reply",
				 VT_AGENT_REPLY_MAX >> 20);
		agent_sink_release(&xml);
		agent_core_error(out, msg);
		return;
	}

	sink_printf(out, "{\"v\":%d,\"pid\":%d,\"glibc\":", VT_AGENT_PROTO_VERSION, (int)getpid());
	sink_json_str(out, gnu_get_libc_version(), strlen(gnu_get_libc_version()));
	agent_sink_put(out, ",\"mallinfo2\":", 13);
	put_mallinfo(out, &mi);
	agent_sink_put(out, ",\"malloc_info\":", 15);
	sink_json_str(out, xml.p ? xml.p : "", xml.len);
	sink_printf(out, ",\"took_us\":%llu", (unsigned long long)(t1 - t0));
	if (trim) {
		sink_printf(out, ",\"trim\":{\"returned\":%d,\"before\":", trim_rc ? 1 : 0);
		put_mallinfo(out, &before);
		agent_sink_put(out, ",\"after\":", 9);
		put_mallinfo(out, &after);
		sink_printf(out, ",\"took_us\":%llu}", (unsigned long long)(t3 - t2));
	}
	agent_sink_put(out, "}\n", 2);
	agent_sink_release(&xml);
}

int agent_core_answer(const char *req, size_t len, bool allow_trim, struct agent_sink *out)
{
	struct request r;
	char why[160];
	int init_rc = agent_core_init();
	int parse_rc = request_parse(req, len, &r, why, sizeof(why));

	if (parse_rc == 0 && r.what == WANT_ALLOCS) {
		/* The sampler needs neither the malloc_info stream nor glibc's malloc. */
#if VT_AGENT_ALLOCS
		agent_allocs_answer(&r.allocs, out);
#else
		agent_core_error(out, "allocation sampling not in this agent: preload libvitals-agent-allocs.so");
#endif
	} else if (init_rc < 0) {
		agent_core_error(out, "agent not initialised: cannot create its malloc_info stream");
	} else if (parse_rc < 0) {
		agent_core_error(out, why);
	} else if (malloc_kind != MALLOC_GLIBC) {
		agent_core_error(out, "not glibc malloc");
	} else if (r.trim && !allow_trim) {
		agent_core_error(out, "trim not allowed: start the process with "
				      VT_AGENT_ENV_ALLOW_TRIM "=1");
	} else {
		heap_reply(out, r.trim);
	}
	return out->failed ? -1 : 0;
}

/* ---- the one exported function --------------------------------------------- */

__attribute__((visibility("default"))) int vitals_agent_json(char **out, size_t *len)
{
	static const char req[] = "{\"v\":1,\"want\":\"heap\"}";
	struct agent_sink s;
	char *copy;

	if (len)
		*len = 0;
	if (!out)
		return -EINVAL;
	*out = NULL;
	agent_sink_init(&s, VT_AGENT_REPLY_MAX);
	if (agent_core_answer(req, sizeof(req) - 1, false, &s) < 0 || !s.p) {
		agent_sink_release(&s);
		return -ENOMEM;
	}
	/* Drop the '\n' that ends a socket reply. */
	if (s.len && s.p[s.len - 1] == '\n')
		s.p[--s.len] = '\0';
	copy = malloc(s.len + 1);
	if (!copy) {
		agent_sink_release(&s);
		return -ENOMEM;
	}
	memcpy(copy, s.p, s.len + 1);
	*out = copy;
	if (len)
		*len = s.len;
	agent_sink_release(&s);
	return 0;
}
