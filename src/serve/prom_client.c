/*
 * prom_client.c — one Prometheus range query over HTTP (libcurl), the
 * answer capped at VT_PROM_BODY_MAX and handed to prom_series.c.  Never
 * prints; messages name the server without its password.
 */
#include "serve/prom_client.h"
#include "serve/netlibs.h"
#include "base/buf.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

double vt_prom_default_step(double range_s)
{
	double step = ceil(range_s / 1000);

	return step >= 1 ? step : 1;
}

const char *vt_prom_url_shown(const char *url, char *buf, size_t cap)
{
	const char *host = strstr(url, "://"), *at, *colon;

	if (!cap)
		return buf;
	host = host ? host + 3 : url;
	/*
	 * The last '@' anywhere, not only before the first '/', '?' or '#': a password
	 * with one of those unescaped makes no usable URL, and the message that says
	 * so must not show it.  (A path with ':' and '@' is cut too: safe, if odd.)
	 */
	at = strrchr(host, '@');
	colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
	if (!colon) {
		snprintf(buf, cap, "%s", url);
		return buf;
	}
	/* the user stays (it says whose credentials were tried), the password goes */
	snprintf(buf, cap, "%.*s%s", (int)(colon - url), url, at);
	return buf;
}

/* What the write callback fills: the body, and whether it went over the cap. */
struct body {
	struct vt_buf buf;
	bool too_big;
	bool oom;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct body *b = ctx;
	size_t n = size * nmemb;

	if (n > b->buf.max - b->buf.len) {
		b->too_big = true;
		return 0;             /* curl stops with CURLE_WRITE_ERROR */
	}
	if (vt_buf_append(&b->buf, data, n) != VT_OK) {
		b->oom = true;
		return 0;
	}
	return n;
}

/* A time or step for the URL: whole seconds as integers, else milliseconds. */
static void fmt_seconds(double s, char *buf, size_t cap)
{
	if (s == floor(s))
		snprintf(buf, cap, "%.0f", s);
	else
		snprintf(buf, cap, "%.3f", s);
}

/* http(s)://host[:port][/prefix], without a query or fragment; *base_len leaves out a trailing '/'. */
static int check_url(const char *url, const char *shown, size_t *base_len, struct vt_err *err)
{
	const char *host;
	size_t n = strlen(url);

	if (strncasecmp(url, "http://", 7) == 0)
		host = url + 7;
	else if (strncasecmp(url, "https://", 8) == 0)
		host = url + 8;
	else
		return vt_err_set(err, VT_E_USAGE, 0, "'%s' is not an http:// or https:// URL", shown);
	if (!*host || *host == '/' || strpbrk(url, "?# \t\r\n"))
		return vt_err_set(err, VT_E_USAGE, 0, "'%s' is not a Prometheus server URL "
			"(http://host:9090, or with its path prefix)", shown);
	while (n > 0 && url[n - 1] == '/')
		n--;
	*base_len = n;
	return VT_OK;
}

/* The request's URL: base/api/v1/query_range?query=..&start=..&end=..&step=.. */
static int build_url(CURL *curl, const struct vt_prom_range *q, size_t base_len, struct vt_buf *out,
		     struct vt_err *err)
{
	char start[32], end[32], step[32];
	char *query = vt_curl.easy_escape(curl, q->query, 0);
	int rc;

	if (!query)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory building the query URL");
	fmt_seconds(q->start, start, sizeof(start));
	fmt_seconds(q->end, end, sizeof(end));
	fmt_seconds(q->step_s, step, sizeof(step));
	rc = vt_buf_appendf(out, "%.*s/api/v1/query_range?query=%s&start=%s&end=%s&step=%s", (int)base_len,
			    q->url, query, start, end, step);
	vt_curl.free(query);
	if (rc)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory building the query URL");
	return VT_OK;
}

/* A failed transfer as a code and message. */
static int transfer_error(CURLcode cc, const char *detail, const char *shown, double timeout_s,
			  const struct body *b, struct vt_err *err)
{
	const char *why = detail[0] ? detail : vt_curl.easy_strerror(cc);

	switch (cc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		vt_err_set(err, VT_E_UNREACHABLE, 0, "cannot reach Prometheus at '%s': %s", shown, why);
		vt_err_hint(err, "is it running, and is the URL right (http://host:9090)?");
		return VT_E_UNREACHABLE;
	case CURLE_OPERATION_TIMEDOUT:
		vt_err_set(err, VT_E_TIMEOUT, 0, "Prometheus at '%s' did not answer within %.0f s: %s", shown,
			   timeout_s, why);
		vt_err_hint(err, "--timeout waits longer; a shorter --range or a longer --step asks for less");
		return VT_E_TIMEOUT;
	case CURLE_WRITE_ERROR:
		if (b->too_big)
			return vt_err_set(err, VT_E_PARSE, 0, "the answer of Prometheus at '%s' is over %u MiB",
					  shown, VT_PROM_BODY_MAX >> 20);
		if (b->oom)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading the answer of '%s'",
					  shown);
		break;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return vt_err_set(err, VT_E_USAGE, 0, "'%s' is not a usable URL: %s", shown, why);
	case CURLE_OUT_OF_MEMORY:
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory asking '%s'", shown);
	default:
		break;
	}
	return vt_err_set(err, VT_E_IO, 0, "asking Prometheus at '%s' failed: %s", shown, why);
}

int vt_prom_query_range(const struct vt_prom_range *q, struct vt_prom_answer *out, struct vt_err *err)
{
	struct body b = { .buf = VT_BUF_INIT(VT_PROM_BODY_MAX) };
	struct vt_buf url = VT_BUF_INIT(1u << 20);
	char shown[512], detail[CURL_ERROR_SIZE] = "";
	double timeout_s = q->timeout_s > 0 ? q->timeout_s : VT_PROM_TIMEOUT_S;
	long http_status = 0;
	size_t base_len = 0;
	CURLcode cc;
	CURL *curl;
	int rc;

	memset(out, 0, sizeof(*out));
	vt_err_clear(err);
	vt_prom_url_shown(q->url, shown, sizeof(shown));
	if ((rc = check_url(q->url, shown, &base_len, err)))
		return rc;
	if ((rc = vt_curl_load(err)) != VT_OK)
		return rc;
	if (vt_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return vt_err_set(err, VT_E_FAIL, 0, "libcurl would not start");
	if (!(curl = vt_curl.easy_init())) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "libcurl would not start");
		goto out_global;
	}
	if ((rc = build_url(curl, q, base_len, &url, err)))
		goto out_curl;
	vt_curl.easy_setopt(curl, CURLOPT_URL, url.data);
	vt_curl.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	vt_curl.easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	vt_curl.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
	vt_curl.easy_setopt(curl, CURLOPT_MAXREDIRS, 5L);
	vt_curl.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	vt_curl.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(fmin(timeout_s, VT_PROM_CONNECT_TIMEOUT_S) * 1000));
	vt_curl.easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(timeout_s * 1000));
	vt_curl.easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)VT_PROM_BODY_MAX);
	vt_curl.easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");      /* gzip if the server offers it */
	vt_curl.easy_setopt(curl, CURLOPT_USERAGENT, "vitals");
	vt_curl.easy_setopt(curl, CURLOPT_ERRORBUFFER, detail);
	vt_curl.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	vt_curl.easy_setopt(curl, CURLOPT_WRITEDATA, &b);
	cc = vt_curl.easy_perform(curl);
	if (cc == CURLE_FILESIZE_EXCEEDED) {
		b.too_big = true;
		cc = CURLE_WRITE_ERROR;
	}
	if (cc != CURLE_OK) {
		rc = transfer_error(cc, detail, shown, timeout_s, &b, err);
		goto out_curl;
	}
	vt_curl.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
	if (http_status == 401 || http_status == 403) {
		rc = vt_err_set(err, VT_E_PERM, 0, "Prometheus at '%s' refused the request (HTTP %ld)", shown,
				http_status);
		vt_err_hint(err, "give the credentials in the URL: http://user:password@host:9090");
		goto out_curl;
	}
	rc = vt_prom_parse_range(b.buf.data, b.buf.len, http_status, q->step_s, out, err);
	if (rc == VT_E_PARSE && !err->hint[0]) {
		size_t n = strlen(shown);

		while (n > 0 && shown[n - 1] == '/')
			n--;
		vt_err_hint(err, "is '%s' a Prometheus server? its API answers at %.*s/api/v1/query_range",
			    shown, (int)n, shown);
	}
out_curl:
	vt_curl.easy_cleanup(curl);
out_global:
	vt_curl.global_cleanup();
	vt_buf_release(&b.buf);
	vt_buf_release(&url);
	return rc;
}
