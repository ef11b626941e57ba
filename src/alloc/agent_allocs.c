/*
 * agent_allocs.c — arming the agent's allocation sampling and reading its
 * samples (see agent_allocs.h).
 */
#include "alloc/agent_allocs.h"

#include "alloc/agent_client.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The agent's words go to a terminal: printable ASCII only. */
static void printable(char *dst, size_t cap, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < cap; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = '\0';
}

/* The reply's root object, or an error: its own (VT_E_UNSUPPORTED) or not the protocol. */
static json_t *load(const char *buf, size_t len, struct vt_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je), *e, *v;
	char words[256];

	if (!root) {
		vt_err_set(err, VT_E_PARSE, 0, "agent reply is not JSON: %s", je.text);
		return NULL;
	}
	v = json_object_get(root, "v");
	e = json_object_get(root, "error");
	if (!json_is_object(root) || !json_is_integer(v)) {
		vt_err_set(err, VT_E_PARSE, 0, "agent reply is not the protocol (no \"v\")");
	} else if (e) {
		printable(words, sizeof(words), json_is_string(e) ? json_string_value(e) : "?");
		vt_err_set(err, VT_E_UNSUPPORTED, 0, "agent: %s", words);
	} else if (json_integer_value(v) != VT_AGENT_PROTO_VERSION) {
		vt_err_set(err, VT_E_UNSUPPORTED, 0, "the agent speaks protocol version %lld, this vitals speaks %d",
			   (long long)json_integer_value(v), VT_AGENT_PROTO_VERSION);
	} else if (!json_is_object(json_object_get(root, "allocs"))) {
		vt_err_set(err, VT_E_PARSE, 0, "agent reply has no \"allocs\"");
	} else {
		return root;
	}
	json_decref(root);
	return NULL;
}

static int ask(const char *path, pid_t host_pid, const char *req, struct vt_buf *buf, json_t **root,
	       struct vt_err *err)
{
	int rc = vt_agent_exchange(path, host_pid, req, VT_AGENT_CLIENT_TIMEOUT_MS, buf, err);

	if (rc == VT_OK && !(*root = load(buf->data ? buf->data : "", buf->len, err)))
		rc = err ? err->code : VT_E_PARSE;
	return rc;
}

int vt_agent_allocs_start(const char *path, pid_t host_pid, uint64_t every, uint64_t for_ms,
			  struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(VT_AGENT_REPLY_MAX);
	json_t *root = NULL;
	char req[160];
	int rc;

	snprintf(req, sizeof(req), "{\"v\":%d,\"want\":\"allocs\",\"start\":true,\"every\":%llu,\"for_ms\":%llu}\n",
		 VT_AGENT_PROTO_VERSION, (unsigned long long)every, (unsigned long long)for_ms);
	rc = ask(path, host_pid, req, &buf, &root, err);
	if (rc == VT_OK && !json_is_true(json_object_get(json_object_get(root, "allocs"), "armed")))
		rc = vt_err_set(err, VT_E_PARSE, 0, "the agent did not say it armed its sampling");
	json_decref(root);
	vt_buf_release(&buf);
	return rc;
}

/* A count member: a non-negative integer. */
static bool count(json_t *o, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* An address member: "0x..." hex. */
static bool address(json_t *v, uint64_t *out)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	char *end;

	if (!s || strncmp(s, "0x", 2) != 0 || !s[2] || strlen(s) > 18)
		return false;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return !errno && !*end;
}

static bool fn_of(const char *name, enum vt_alloc_fn *fn)
{
	static const struct { const char *name; enum vt_alloc_fn fn; } names[] = {
		{ "malloc", VT_AFN_MALLOC }, { "calloc", VT_AFN_CALLOC }, { "realloc", VT_AFN_REALLOC },
		{ "memalign", VT_AFN_MEMALIGN }, { "aligned_alloc", VT_AFN_MEMALIGN },
		{ "posix_memalign", VT_AFN_POSIX_MEMALIGN },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (name && strcmp(name, names[i].name) == 0) {
			*fn = names[i].fn;
			return true;
		}
	return false;
}

static bool sample_of(json_t *o, const struct vt_agent_allocs *a, struct vt_agent_alloc_sample *s)
{
	json_t *pcs = json_object_get(o, "pcs");
	uint64_t tid, freed_tid;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(o) || !count(o, "size", &s->size) || !address(json_object_get(o, "ptr"), &s->ptr) ||
	    !count(o, "t_ns", &s->t_ns) || !count(o, "freed_ns", &s->freed_ns) || !count(o, "tid", &tid) ||
	    !count(o, "freed_tid", &freed_tid) || tid > INT32_MAX || freed_tid > INT32_MAX ||
	    !fn_of(json_string_value(json_object_get(o, "fn")), &s->fn) || !json_is_array(pcs) ||
	    json_array_size(pcs) > VT_AGENT_ALLOC_PCS)
		return false;
	/* a sample from outside the armed time, or freed before it was made, is not one */
	if (s->t_ns < a->t0_ns || s->t_ns > a->t1_ns || (s->freed_ns && (s->freed_ns < s->t_ns || s->freed_ns > a->t1_ns)))
		return false;
	s->tid = (pid_t)tid;
	s->freed_tid = (pid_t)freed_tid;
	for (size_t i = 0; i < json_array_size(pcs); i++)
		if (!address(json_array_get(pcs, i), &s->pcs[s->npcs++]))
			return false;
	return true;
}

int vt_agent_allocs_parse(const char *buf, size_t len, struct vt_agent_allocs *out, struct vt_err *err)
{
	json_t *root = load(buf, len, err), *a, *samples, *fns;
	int rc = VT_OK;

	memset(out, 0, sizeof(*out));
	if (!root)
		return err ? err->code : VT_E_PARSE;
	a = json_object_get(root, "allocs");
	samples = json_object_get(a, "samples");
	fns = json_object_get(a, "fns");
	if (!count(a, "every", &out->every) || !out->every || !count(a, "t0_ns", &out->t0_ns) ||
	    !count(a, "t1_ns", &out->t1_ns) || out->t1_ns < out->t0_ns || !count(a, "calls", &out->calls) ||
	    !count(a, "bytes", &out->bytes) || !count(a, "frees", &out->frees) ||
	    !count(a, "dropped", &out->dropped) || !json_is_array(samples) ||
	    json_array_size(samples) > VT_AGENT_ALLOC_SAMPLES_MAX || !json_is_integer(json_object_get(root, "pid"))) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has an invalid \"allocs\"");
		goto out;
	}
	out->pid = json_integer_value(json_object_get(root, "pid"));
	out->expired = json_is_true(json_object_get(a, "expired"));
	if (json_is_object(fns)) {
		const char *key;
		json_t *v;

		json_object_foreach(fns, key, v) {
			enum vt_alloc_fn fn;

			if (fn_of(key, &fn) && json_is_integer(v) && json_integer_value(v) >= 0)
				out->fn_calls[fn] += (uint64_t)json_integer_value(v);
		}
	}
	if (json_array_size(samples) &&
	    !(out->samples = calloc(json_array_size(samples), sizeof(*out->samples)))) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory for %zu samples", json_array_size(samples));
		goto out;
	}
	for (size_t i = 0; i < json_array_size(samples); i++) {
		if (!sample_of(json_array_get(samples, i), out, &out->samples[out->nsamples])) {
			rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply: sample %zu is invalid", i);
			goto out;
		}
		out->nsamples++;
	}
out:
	json_decref(root);
	if (rc)
		vt_agent_allocs_release(out);
	return rc;
}

int vt_agent_allocs_stop(const char *path, pid_t host_pid, struct vt_agent_allocs *out, struct vt_err *err)
{
	struct vt_buf buf = VT_BUF_INIT(VT_AGENT_REPLY_MAX);
	char req[96];
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(req, sizeof(req), "{\"v\":%d,\"want\":\"allocs\",\"stop\":true}\n", VT_AGENT_PROTO_VERSION);
	rc = vt_agent_exchange(path, host_pid, req, VT_AGENT_CLIENT_TIMEOUT_MS, &buf, err);
	if (rc == VT_OK)
		rc = vt_agent_allocs_parse(buf.data ? buf.data : "", buf.len, out, err);
	vt_buf_release(&buf);
	return rc;
}

void vt_agent_allocs_release(struct vt_agent_allocs *a)
{
	free(a->samples);
	memset(a, 0, sizeof(*a));
}

double vt_agent_alloc_weight(uint64_t size, uint64_t every)
{
	double p;

	if (!every || every == 1)
		return 1;
	p = -expm1(-(double)(size ? size : 1) / (double)every);
	return p > 0 ? 1 / p : 1;
}
