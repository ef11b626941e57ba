/*
 * profile_buckets.h — what a sampled stack was doing, by rules: "network
 * send/recv", "JSON/serialization", "memory allocation", ... and the
 * bucket rules a team writes for its own code.
 *
 * A rule claims frames.  A stack is walked from its leaf (locs[0]) toward
 * its root; the first frame that some rule claims decides, and among the
 * rules that claim that frame the first one names the bucket.  User rules
 * come before the built-ins, so a team's rule wins over a built-in one for
 * the same frame — but a frame nearer the leaf claimed by a built-in still
 * wins over a user rule on a caller: this is "top of stack" bucketing, the
 * time spent in malloc under json_parse is memory allocation.
 *
 * Kernel time stays kernel time: a stack sampled in the kernel whose kernel
 * frames no rule claims gives one more frame a chance, the first user frame
 * (the code that made the system call or took the fault: libc's send, a
 * page fault in malloc); if no rule claims that either it is "kernel
 * other".  A kernel write under json_dump is never credited to JSON.  A
 * stack no rule claims at all is "other".
 *
 * The rule file (docs/profile-buckets.md has examples), one rule a line:
 *
 *     # comment; blank lines are ignored
 *     BUCKET: GLOB               a function name, in any frame
 *     BUCKET: func:GLOB          the same, spelt out (for a glob that starts with a selector)
 *     BUCKET: user:GLOB          a function name in a user-space frame
 *     BUCKET: kernel:GLOB        a function name in a kernel frame ("kernel:*" any kernel frame)
 *     BUCKET: lib:GLOB           the module (library or executable, as mapped: "libcrypto.so.3")
 *                                of a user-space frame
 *     BUCKET: anon:              a user-space frame in no module: JIT code, anonymous memory
 *
 * BUCKET is the name shown (everything before the first ':', blanks
 * trimmed; at most VT_BUCKET_NAME_MAX bytes of printable UTF-8, no ':').
 * GLOB is an fnmatch(3) pattern without flags: case-sensitive, '*', '?',
 * '[...]', '\' quotes the next character.  Names are as the symbol table
 * has them (C++ and Rust names mangled: "_ZN10serde_json*" or
 * "*serde_json*").  A '#' after a blank starts a comment.  A rule naming a
 * built-in bucket ("memory allocation: my_pool_alloc") adds to it.
 *
 * Pure: nothing here reads /proc; vt_bucket_rules_load reads one file.
 */
#ifndef VT_ANALYZE_PROFILE_BUCKETS_H
#define VT_ANALYZE_PROFILE_BUCKETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "sample/profile.h"

#define VT_BUCKET_NAME_MAX 48          /* bytes of a bucket name */
#define VT_BUCKET_GLOB_MAX 256         /* bytes of a glob */
#define VT_BUCKET_MAX_RULES 1024       /* rules in a file */
#define VT_BUCKET_MAX_BUCKETS 64       /* distinct buckets, the built-ins included */
#define VT_BUCKET_FILE_MAX (256 * 1024)   /* bytes of a rule file */

/* The built-in buckets: always present, always these indices into rules->buckets. */
enum vt_builtin_bucket {
	VT_BK_NETWORK,            /* "network send/recv" */
	VT_BK_FILESYSTEM,         /* "filesystem syscalls" */
	VT_BK_MEMORY,             /* "memory allocation" */
	VT_BK_LOCKS,              /* "locks/futex" */
	VT_BK_POLL,               /* "poll/sleep": CPU spent entering and leaving epoll, poll,
	                           * select, nanosleep, sched_yield (a busy poller lives here) */
	VT_BK_COMPRESSION,        /* "compression" */
	VT_BK_CRYPTO,             /* "crypto" */
	VT_BK_SERIALIZATION,      /* "JSON/serialization" */
	VT_BK_HASHING,            /* "hashing" */
	VT_BK_JIT,                /* "JIT code" (runtime) */
	VT_BK_PYTHON,             /* "Python interpreter" (runtime) */
	VT_BK_JVM,                /* "JVM" (runtime) */
	VT_BK_KERNEL_OTHER,       /* "kernel other": kernel frames no rule claims */
	VT_BK_OTHER,              /* "other": nothing claimed */
	VT_BK__COUNT
};

/* Which part of a frame a rule's glob is matched against. */
enum vt_bucket_select {
	VT_SEL_FUNC,              /* func: the function name, any frame */
	VT_SEL_USER,              /* user: the function name of a user-space frame */
	VT_SEL_KERNEL,            /* kernel: the function name of a kernel frame */
	VT_SEL_LIB,               /* lib: the module name of a user-space frame */
	VT_SEL_ANON,              /* anon: a user-space frame in no module (no glob) */
};

struct vt_bucket {
	char name[VT_BUCKET_NAME_MAX + 1];   /* printable UTF-8 */
	bool builtin;
	/* A runtime's own code (interpreter, JIT, JVM): the functions of the program
	 * it runs are not seen, and the views say so. */
	bool runtime;
};

struct vt_bucket_rule {
	uint32_t bucket;          /* index into buckets */
	uint8_t select;           /* enum vt_bucket_select */
	uint32_t line;            /* line of the rule file, 0 for a built-in */
	char *glob;               /* owned; "" for anon */
};

/* The rules, user rules first.  Owns everything in it; free with vt_bucket_rules_free. */
struct vt_bucket_rules {
	struct vt_bucket *buckets;         /* VT_BK__COUNT built-ins, then the user's new ones */
	uint32_t nbuckets;
	struct vt_bucket_rule *rules;      /* the user's, in file order, then the built-ins */
	uint32_t nrules;
	uint32_t nuser;                    /* rules[0 .. nuser) came from the file */
};

/*
 * The rules of text[0..len) (which need not be NUL-terminated; NULL or len 0:
 * none) followed by the built-ins, into *out.  Errors, with nothing in
 * *out: VT_E_USAGE with err->msg "line N: what is wrong" (no ':', an empty
 * bucket name or glob, a name or glob too long, a control character or
 * invalid UTF-8 in a name, a control character in a glob, an unbalanced
 * '[' or a trailing '\' in a glob, an unknown use of a selector, too many
 * rules or buckets, a NUL byte); VT_E_NOMEM.
 */
int vt_bucket_rules_parse(const char *text, size_t len, struct vt_bucket_rules **out,
			  struct vt_err *err);

/* The built-in rules alone (vt_bucket_rules_parse of no text). */
int vt_bucket_rules_builtin(struct vt_bucket_rules **out, struct vt_err *err);

/*
 * The rules of the file at path, then the built-ins.  Errors: VT_E_USAGE
 * (no such file, a directory, larger than VT_BUCKET_FILE_MAX, or a rule
 * error, whose msg reads "bucket rules 'PATH': line N: ..."), VT_E_PERM
 * (unreadable), VT_E_IO, VT_E_NOMEM.
 */
int vt_bucket_rules_load(const char *path, struct vt_bucket_rules **out, struct vt_err *err);

void vt_bucket_rules_free(struct vt_bucket_rules **r);

/* "selector:glob" of rule i as it would be written ("anon:"), into buf. */
const char *vt_bucket_rule_text(const struct vt_bucket_rules *r, uint32_t i, char *buf,
				size_t cap);

/*
 * Classifying the stacks of one profile.  The classifier remembers, per
 * function, which rule claims it, so a profile of many stacks costs one
 * fnmatch pass per distinct function.  It reads rules and p (both must
 * outlive it and not change).
 */
struct vt_bucket_classifier;

int vt_bucket_classifier_new(const struct vt_bucket_rules *r, const struct vt_profile *p,
			     struct vt_bucket_classifier **out, struct vt_err *err);
void vt_bucket_classifier_free(struct vt_bucket_classifier **c);

/*
 * The bucket of stack s (an index into rules->buckets).  *frame, when not
 * NULL, gets the position in the stack (0 = leaf) of the frame that
 * decided, UINT32_MAX when none did ("other", or "kernel other" from the
 * kernel part); *rule the rule, UINT32_MAX for none.
 */
uint32_t vt_bucket_classify(struct vt_bucket_classifier *c, const struct vt_prof_stack *s,
			    uint32_t *frame, uint32_t *rule);

/*
 * What a thread that was not running waited on (wall mode).  Read from the
 * stack's wait string (wchan or system call) and its frames: a thread in
 * pthread_mutex_lock waits for a lock, one in pthread_cond_wait is parked.
 */
enum vt_wait_class {
	VT_WAITC_FUTEX,           /* parked on a futex: a condition variable, an idle pool */
	VT_WAITC_LOCK,            /* blocked taking a lock (mutex, rwlock) */
	VT_WAITC_EPOLL,           /* epoll_wait */
	VT_WAITC_POLL,            /* poll, ppoll, select */
	VT_WAITC_SLEEP,           /* nanosleep, clock_nanosleep, pause, sigtimedwait */
	VT_WAITC_IO,              /* a blocking read, recv, accept, write, connect on an fd */
	VT_WAITC_DISK,            /* uninterruptible (D): disk I/O, page-in */
	VT_WAITC_OTHER,
	VT_WAITC__COUNT
};
const char *vt_wait_class_name(enum vt_wait_class c);   /* "futex", "lock", "epoll", ... */

/*
 * Idle waits (futex parking, epoll, poll, sleep): a thread with nothing to
 * do.  They are kept out of the buckets' wall figures and counted apart;
 * the others (lock, I/O, disk, other) are waiting the bucket pays for.
 */
bool vt_wait_class_idle(enum vt_wait_class c);

/* The wait class of stack s of p (meaningful when s->state is not running or runnable). */
enum vt_wait_class vt_bucket_wait_class(const struct vt_profile *p, const struct vt_prof_stack *s);

#endif
