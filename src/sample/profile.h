/*
 * profile.h — the one data model of a sampled profile: which stacks were
 * seen how often, in which thread, doing what.
 *
 * A profile is built by the profiler (sample/profiler.h) from perf samples
 * (src/perf) unwound and symbolized by src/elf, and read by everything
 * after it: the buckets and summaries (analyze/profile_*.h), the views
 * (render/profile_*.h: table, JSON, folded stacks, pprof, HTML) and the
 * soak recording.  Nothing here touches /proc or perf.
 *
 * Interning keeps it small: strings (function and module names) once in a
 * string table, each distinct code address once as a location, each
 * distinct (function, module) once as a function, and each distinct
 * (stack, thread, state) once as a stack with a count.  Indices are uint32_t
 * and stable for the life of the profile; index 0 of strings is "".
 *
 * Stacks are stored leaf first: locs[0] is where the thread was (for a
 * sample taken in the kernel, the kernel frames come first, then the user
 * frames from the system call's return address up to the root).
 *
 * One owner: the profile owns every array and string in it; free with
 * vt_profile_free.  Not thread-safe.
 */
#ifndef VT_SAMPLE_PROFILE_H
#define VT_SAMPLE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "elf/unwind.h"

/* Deepest stack kept; deeper stacks keep their leaf-most frames and are marked truncated. */
#define VT_PROFILE_MAX_DEPTH 256
/* ptrace: fewer stops than this cannot split the threads' CPU between their stacks */
#define VT_PROFILE_FEW_STOPS 50


/* What the thread was doing when the sample was taken. */
enum vt_prof_state {
	VT_PROF_RUNNING = 0,      /* on a CPU (every CPU-clock sample) */
	VT_PROF_RUNNABLE,         /* wall mode: ready, waiting for a CPU (state R, not on a CPU) */
	VT_PROF_SLEEPING,         /* wall mode: interruptible sleep (S) */
	VT_PROF_DISK,             /* wall mode: uninterruptible (D) */
	VT_PROF_OTHER,            /* wall mode: stopped, traced, ... */
	VT_PROF_STATE__COUNT
};
const char *vt_prof_state_name(enum vt_prof_state s);   /* "running", "runnable", ... */

/* A function: a name in a module.  name 0 ("") = no symbol covers the address. */
struct vt_prof_func {
	uint32_t name;            /* string: "send", "json_parse", demangled
	                           * ("std::vector<int>::push_back(int const&)"); 0 unknown */
	uint32_t module;          /* string: "libc.so.6", "[kernel]", "app"; 0 unknown */
	uint32_t system_name;     /* string: the symbol as in the file when name is its
	                           * demangling ("_ZNSt6vector..."; Rust's hash kept); 0 when
	                           * the same as name.  Functions are told apart by name and
	                           * module: the instances of a generic one are one function,
	                           * named by the first symbol met */
	uint32_t file;            /* string: the source file it is defined in (DWARF); 0 unknown */
	uint32_t line;            /* ... and the line; 0 unknown */
};

/* One distinct code address. */
struct vt_prof_loc {
	uint64_t pc;              /* the address in the target (a return address is kept as is) */
	uint64_t module_off;      /* pc relative to the module's load bias (file address), for
	                           * "libfoo.so+0x1234" when there is no symbol */
	uint32_t func;            /* index into funcs */
	bool kernel;              /* a kernel address */
	uint32_t file;            /* string: the source file of line; 0 unknown */
	uint32_t line;            /* the source line of pc in func (of the call, in a
	                           * function another was inlined into); 0 unknown */
	uint32_t inlined_into;    /* 0: a frame of its own.  Else func was inlined at pc into
	                           * the function of location inlined_into - 1, which comes
	                           * next in every stack (toward the root), same pc */
};

/* One distinct (stack, thread, state), with how often it was seen. */
struct vt_prof_stack {
	uint32_t first;           /* index into stack_locs of the leaf */
	uint32_t depth;           /* frames: stack_locs[first .. first+depth), leaf first */
	uint32_t thread;          /* index into threads */
	uint8_t state;            /* enum vt_prof_state */
	uint8_t truncated;        /* the unwind stopped before the root (stack copy ended,
	                           * no CFI, depth limit): the root-most frame is not a root */
	uint32_t wait;            /* wall mode, not running: string naming the wait
	                           * ("futex", "epoll_wait", "sk_wait_data"), 0 none */
	uint64_t count;           /* samples */
};

/* A thread seen in the profile, with its own measured CPU (the truth to compare shares with). */
struct vt_prof_thread {
	pid_t tid;
	uint32_t name;            /* string: comm */
	uint32_t pool;            /* string: the pool it belongs to (comm with its digits folded,
	                           * "worker-#"), 0 none */
	double cpu_s;             /* CPU over the profile from /proc (schedstat, else stat),
	                           * < 0 unknown */
	uint64_t samples;         /* samples of this thread, all states */
};

/* How a module was unwound and symbolized. */
struct vt_prof_module {
	uint32_t name;            /* string: basename as mapped ("libc.so.6") */
	uint32_t path;            /* string: the path in the target's mount namespace */
	uint64_t frames[VT_UNWIND__COUNT];   /* caller steps out of this module, by method */
	uint8_t symbols;          /* enum vt_sym_source (elf/unwind.h) */
	uint8_t lines;            /* enum vt_line_source: where its source lines come from */
	uint32_t debug_file;      /* string: the separate debug file read, 0 none */
	uint32_t debug_ignored;   /* string: a debug file under its name that is not its own, 0 none */
	uint32_t debug_ignored_why;   /* string: what differs */
	/* the executable mapping that held its first sampled code: [start, limit) in the
	 * target, mapped from file offset `offset`; limit 0 unknown (anonymous code, the
	 * kernel, a profile read from a recording) */
	uint64_t start, limit, offset;
};


/* How the profile was taken: what a reader needs to trust it. */
struct vt_prof_meta {
	pid_t pid;
	char comm[64];
	char method[32];          /* "perf cpu-clock", "ptrace" */
	char method_note[256];    /* why this method, when it is not the first choice ("perf
	                           * events refused: ..."), "" none */
	double paused_s;          /* ptrace: the time the target's threads stood stopped, all
	                           * together; 0 with perf (nothing is stopped) */
	double paused_max_share;  /* ptrace: the largest share of one thread's wall time it
	                           * stood stopped */
	uint64_t stops;           /* ptrace: stops whose stack was kept (each counts for its
	                           * thread's CPU since the last: samples > stops) */
	double hz;                /* asked sampling rate per thread */
	double duration_s;        /* wall time sampled */
	bool wall;                /* blocked threads were sampled too */
	double wall_hz;           /* their sampling rate */
	uint64_t samples;         /* samples kept (all states) */
	uint64_t lost;            /* samples the kernel dropped (ring full) or that could not be read */
	uint64_t unwind_failed;   /* samples whose user stack could not be unwound past the leaf */
	uint32_t threads_started; /* threads seen that started during the profile (a listing
	                           * or a sample found them new, or perf's records of the
	                           * threads the process made counted more) */
	uint32_t threads_ended;   /* threads seen that ended during it (the same) */
	uint32_t program;         /* string: the process's executable (/proc/PID/exe at the
	                           * end, else at the start), 0 unknown */
	char threads_glob[64];    /* --threads: only threads named like this, "" all */
	uint64_t filtered;        /* samples of the other threads, left out */
	bool kernel_symbols;      /* /proc/kallsyms gave names */
	bool kernel_refused;      /* perf would not sample kernel code (perf_event_paranoid):
	                           * time in system calls is missing from the samples */
	bool threads_inherited;   /* perf: threads born during the profile were sampled
	                           * through events inherited from their maker */
	bool exited;              /* the target exited before the end: the profile so far */
	bool interrupted;         /* stopped early (Ctrl-C): the profile so far */
	double process_cpu_s;     /* the target's CPU over the profile from /proc, < 0 unknown */
	double self_cpu_s;        /* vitals' own CPU while profiling, < 0 unknown */
	double overhead;          /* the target's slowdown, measured, as a fraction; NAN unknown */
	char overhead_how[96];    /* how overhead was measured, "" unknown */
};

struct vt_profile {
	struct vt_prof_meta meta;
	/* the string table: strings[0] = "" */
	char **strings;
	uint32_t nstrings, cap_strings;
	struct vt_prof_func *funcs;
	uint32_t nfuncs, cap_funcs;
	struct vt_prof_loc *locs;
	uint32_t nlocs, cap_locs;
	uint32_t *stack_locs;     /* the frames of every stack, back to back */
	uint32_t nstack_locs, cap_stack_locs;
	struct vt_prof_stack *stacks;
	uint32_t nstacks, cap_stacks;
	struct vt_prof_thread *threads;
	uint32_t nthreads, cap_threads;
	struct vt_prof_module *modules;
	uint32_t nmodules, cap_modules;
	struct vt_profile_index *index;   /* private: hash tables for interning */
};

/* A new, empty profile in *out.  VT_E_NOMEM. */
int vt_profile_new(struct vt_profile **out, struct vt_err *err);
void vt_profile_free(struct vt_profile **p);

/* The string of index i ("" for 0 or out of range). */
const char *vt_profile_str(const struct vt_profile *p, uint32_t i);

/* Interning: the index of s (added when new), of (name, module) as a function,
 * of a (pc, name) as a location.  Return UINT32_MAX only on allocation failure. */
uint32_t vt_profile_intern_str(struct vt_profile *p, const char *s);
uint32_t vt_profile_intern_func(struct vt_profile *p, uint32_t name, uint32_t module);
/* The same, and the symbol the name was demangled from (0: none), kept when the
 * function has none yet. */
uint32_t vt_profile_intern_func_sym(struct vt_profile *p, uint32_t name, uint32_t system_name,
				    uint32_t module);
uint32_t vt_profile_intern_loc(struct vt_profile *p, uint64_t pc, uint64_t module_off,
			       uint32_t func, bool kernel);
/* The same with every field of key: its source line and inline caller. */
uint32_t vt_profile_intern_loc_full(struct vt_profile *p, const struct vt_prof_loc *key);
/* Where func is defined (strings), kept when it has no place yet. */
void vt_profile_func_set_source(struct vt_profile *p, uint32_t func, uint32_t file, uint32_t line);
/* The thread with this tid (added with the given name when new). */
uint32_t vt_profile_intern_thread(struct vt_profile *p, pid_t tid, const char *comm);
/* The module of this name (added with path when new). */
uint32_t vt_profile_intern_module(struct vt_profile *p, const char *name, const char *path);
/* Module k's debug information (strings interned; NULL or "" none).  VT_E_NOMEM; VT_E_FAIL when
 * there is no module k. */
int vt_profile_module_set_debug(struct vt_profile *p, uint32_t k, uint8_t lines, const char *debug_file,
				const char *ignored, const char *ignored_why);

/*
 * Count one sample: the stack locs[0..depth) (leaf first) seen `count` times
 * in thread `thread` in `state` (waiting on `wait`, a string index, 0 none).
 * Equal stacks of one thread and state share a row.  VT_E_NOMEM.
 */
int vt_profile_add(struct vt_profile *p, const uint32_t *locs, uint32_t depth, uint32_t thread,
		   enum vt_prof_state state, uint32_t wait, bool truncated, uint64_t count,
		   struct vt_err *err);

/*
 * Pool src into p: every stack of src counted in p, its strings, functions,
 * locations, threads and modules interned into p's (one tid in both is one
 * thread, its CPU added).  Into an empty p src's meta is copied (what was
 * sampled, how); otherwise its durations, lost, failed and filtered counts
 * and CPU are added to p's and the rest stays p's.  VT_E_NOMEM (p then holds
 * part of src).
 */
int vt_profile_merge(struct vt_profile *p, const struct vt_profile *src, struct vt_err *err);

/* The frames of stack s, leaf first. */
static inline const uint32_t *vt_profile_stack_locs(const struct vt_profile *p,
						     const struct vt_prof_stack *s)
{
	return p->stack_locs + s->first;
}

/* The name to show for a location: "func" or "module+0xoff" or "[unknown]", into out. */
void vt_profile_loc_label(const struct vt_profile *p, uint32_t loc, char *out, size_t cap);

#endif
