/*
 * agent_allocs.c — arming the agent's allocation sampling and reading its
 * samples (see agent_allocs.h).
 */
#include "alloc/agent_allocs.h"

#include "alloc/agent_client.h"
#include "base/json_lib.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reply to "want":"allocs": the protocol's root, with its "allocs" object. */
static int load(const char *buf, size_t len, json_t **root, struct vt_err *err)
{
	int rc = vt_agent_reply_load(buf, len, root, err);

	if (rc == VT_OK && !json_is_object(json_object_get(*root, "allocs"))) {
		json_decref(*root);
		*root = NULL;
		rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply has no \"allocs\"");
	}
	return rc;
}

static int ask(const char *path, pid_t host_pid, const char *req, struct vt_buf *buf, json_t **root,
	       struct vt_err *err)
{
	int rc = vt_agent_exchange(path, host_pid, req, VT_AGENT_CLIENT_TIMEOUT_MS, buf, err);

	if (rc == VT_OK)
		rc = load(buf->data ? buf->data : "", buf->len, root, err);
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

/* What sample_of made of one sample. */
enum sample_read { SAMPLE_KEPT, SAMPLE_LATE, SAMPLE_INVALID };

/*
 * One sample of the reply.  A sample the agent made as it disarmed (a thread
 * already inside its sampling section reads the clock after the disarming
 * thread did) falls after t1_ns: it is outside the window, so it is left out
 * (SAMPLE_LATE) rather than the whole reply refused; a free stamped after
 * t1_ns is a block that was live when the window closed.
 */
static enum sample_read sample_of(json_t *o, const struct vt_agent_allocs *a, struct vt_agent_alloc_sample *s)
{
	json_t *pcs = json_object_get(o, "pcs");
	uint64_t tid, freed_tid;

	memset(s, 0, sizeof(*s));
	if (!json_is_object(o) || !count(o, "size", &s->size) || !address(json_object_get(o, "ptr"), &s->ptr) ||
	    !count(o, "t_ns", &s->t_ns) || !count(o, "freed_ns", &s->freed_ns) || !count(o, "tid", &tid) ||
	    !count(o, "freed_tid", &freed_tid) || tid > INT32_MAX || freed_tid > INT32_MAX ||
	    !fn_of(json_string_value(json_object_get(o, "fn")), &s->fn) || !json_is_array(pcs) ||
	    json_array_size(pcs) > VT_AGENT_ALLOC_PCS)
		return SAMPLE_INVALID;
	/* made before it was armed, or freed before it was made: not a sample */
	if (s->t_ns < a->t0_ns || (s->freed_ns && s->freed_ns < s->t_ns))
		return SAMPLE_INVALID;
	s->tid = (pid_t)tid;
	s->freed_tid = (pid_t)freed_tid;
	for (size_t i = 0; i < json_array_size(pcs); i++)
		if (!address(json_array_get(pcs, i), &s->pcs[s->npcs++]))
			return SAMPLE_INVALID;
	if (s->t_ns > a->t1_ns)
		return SAMPLE_LATE;
	if (s->freed_ns > a->t1_ns) {
		s->freed_ns = 0;
		s->freed_tid = 0;
	}
	return SAMPLE_KEPT;
}

int vt_agent_allocs_parse(const char *buf, size_t len, struct vt_agent_allocs *out, struct vt_err *err)
{
	json_t *root, *a, *samples, *fns;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = load(buf, len, &root, err)))
		return rc;
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
		switch (sample_of(json_array_get(samples, i), out, &out->samples[out->nsamples])) {
		case SAMPLE_KEPT:
			out->nsamples++;
			break;
		case SAMPLE_LATE:
			out->late++;
			break;
		case SAMPLE_INVALID:
			rc = vt_err_set(err, VT_E_PARSE, 0, "agent reply: sample %zu is invalid", i);
			goto out;
		}
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
