/*
 * call_count.h — how often named functions of a running process are
 * called, counted by uprobes on their entry (perf/uprobe.h), beside a CPU
 * profile of the same interval: report 002's "size x rate" (33 calls/s x
 * 38.7 ms = 12.6% of a core) in one line.
 *
 * A name is looked up in the symbol tables (.symtab, else .dynsym) of every
 * file the process has code from, as written in the code or demangled
 * ("decode_manifest", "main::poll_round", "Parser::parse(char const*)", or
 * its name before the parameters); NAME@FILE (the file's name, or the start
 * of it) picks one file.  None is VT_E_NOTFOUND with the names that contain
 * it; several is VT_E_USAGE with them, to pick with @FILE or the symbol.
 *
 * Every call traps into the kernel, so counting runs in a thread of its own
 * in windows: after a first short one, armed for the rest of the interval
 * when its cost stays inside the budget, else in windows spaced for it,
 * the counts then per second armed.  The cost is measured as allocs measures
 * it (hits x one hit's cost timed on vitals' own calls) and said.
 */
#ifndef VT_SAMPLE_CALL_COUNT_H
#define VT_SAMPLE_CALL_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/procfs.h"

#define VT_CALLS_MAX 8

struct vt_call_fn {
	char query[128];          /* as asked */
	char name[512];           /* the function, demangled */
	char module[128];         /* the file's name ("libfoo.so.1", the program) */
	uint64_t addr, size;      /* its code in the target: [addr, addr + size) */
	uint64_t offset;          /* its entry in the file */
	char path[64];            /* the file as the kernel opens it */
	uint64_t calls;           /* counted while armed */
};

struct vt_call_counts {
	struct vt_call_fn fns[VT_CALLS_MAX];
	size_t n;
	double duration_s;        /* from start to finish */
	double armed_s;           /* of it, probes armed: calls per second = calls / armed_s */
	unsigned windows;
	double budget;
	double hit_ns;            /* one hit's cost, NAN unknown */
	uint64_t hits, lost;
	double target_cpu_s;      /* the target's CPU meanwhile */
	double cost;              /* hits x hit_ns over the rest of its CPU; NAN unknown */
	char how[256];            /* how the probes were placed */
	char why[256];            /* counting stopped early: why; "" none */
};

/*
 * Find query in process pid's code (its directory pfs).  candidates gets
 * (cap bytes) the names that contain it, or that match several times.
 */
int vt_call_resolve(const struct vt_procfs *pfs, pid_t pid, const char *query, struct vt_call_fn *out,
		    char *candidates, size_t cap, struct vt_err *err);

struct vt_call_counter;

/* Start counting counts->fns (resolved) of pid in a thread of its own.  Errors: those
 * of the probes (VT_E_PERM with the capability, VT_E_UNSUPPORTED). */
int vt_call_counter_start(pid_t pid, struct vt_call_counts *counts, double budget,
			  struct vt_call_counter **out, struct vt_err *err);
/* Stop, fill counts, free the counter. */
void vt_call_counter_finish(struct vt_call_counter **c);

#endif
