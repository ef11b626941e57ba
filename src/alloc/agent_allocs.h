/*
 * agent_allocs.h — the agent's in-process allocation sampling, vitals' side
 * (agent/protocol.h, "want":"allocs"): arm it, and take back the samples.
 *
 * libvitals-agent-allocs.so (the agent with malloc wrappers) samples
 * allocations by bytes: each thread counts down a byte budget drawn from an
 * exponential distribution of mean `every`, and records the allocation that
 * crosses zero with its size, its entry point, its return addresses and,
 * when it is freed while armed, when and by which thread.  An allocation of
 * size s is sampled with probability 1 - exp(-s/every): each sample stands
 * for 1 / that many allocations (vt_agent_alloc_weight).  The plain
 * libvitals-agent.so answers with an error that says which library samples.
 *
 * Never prints; the reply is untrusted: every figure is checked, every
 * string bounded.
 */
#ifndef VT_ALLOC_AGENT_ALLOCS_H
#define VT_ALLOC_AGENT_ALLOCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "alloc/alloc_probes.h"
#include "base/error.h"

#define VT_AGENT_ALLOC_PCS 32
#define VT_AGENT_ALLOC_EVERY_DEFAULT 524288u
/* Most samples a reply may hold (the agent keeps fewer). */
#define VT_AGENT_ALLOC_SAMPLES_MAX (1u << 20)

struct vt_agent_alloc_sample {
	uint64_t size;
	uint64_t ptr;
	uint64_t t_ns;              /* CLOCK_MONOTONIC, the target's */
	uint64_t freed_ns;          /* 0: not freed while armed */
	pid_t tid, freed_tid;
	enum vt_alloc_fn fn;
	uint32_t npcs;
	uint64_t pcs[VT_AGENT_ALLOC_PCS];   /* return addresses, the allocator's caller first */
};

struct vt_agent_allocs {
	int64_t pid;                /* in the target's pid namespace */
	uint64_t every;             /* mean bytes between samples */
	uint64_t t0_ns, t1_ns;      /* armed from, to (CLOCK_MONOTONIC) */
	bool expired;               /* it disarmed itself at its deadline */
	uint64_t calls, bytes, frees, dropped;   /* every call while armed; samples not kept */
	uint64_t late;              /* samples made as it disarmed, after t1_ns: left out */
	uint64_t fn_calls[VT_AFN__COUNT];
	struct vt_agent_alloc_sample *samples;   /* owned */
	size_t nsamples;
};

/*
 * Arm the agent at path (served by host_pid) to sample every `every` bytes
 * on average for at most for_ms (it disarms itself then, whatever happens
 * to vitals).  Errors as vt_agent_query; VT_E_UNSUPPORTED with the agent's
 * words when it cannot sample (the plain agent: which library does).
 */
int vt_agent_allocs_start(const char *path, pid_t host_pid, uint64_t every, uint64_t for_ms,
			  struct vt_err *err);

/* Disarm it and take the samples into *out (release with vt_agent_allocs_release). */
int vt_agent_allocs_stop(const char *path, pid_t host_pid, struct vt_agent_allocs *out, struct vt_err *err);

/* Parse a stop reply (untrusted; exposed for tests and the fuzzer).  VT_E_PARSE, VT_E_UNSUPPORTED
 * (an error reply), VT_E_NOMEM. */
int vt_agent_allocs_parse(const char *buf, size_t len, struct vt_agent_allocs *out, struct vt_err *err);
void vt_agent_allocs_release(struct vt_agent_allocs *a);

/* How many allocations of size bytes one sample stands for, sampled every `every` bytes. */
double vt_agent_alloc_weight(uint64_t size, uint64_t every);

#endif
