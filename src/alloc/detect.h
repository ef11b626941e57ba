/*
 * detect.h — which malloc a process runs, and how we know.
 *
 * Decided from the target's mappings and the ELF files behind them, read
 * through <proc root>/PID/root/<path> so it works for processes in other
 * mount namespaces (containers).  Nothing here reads target memory or stops
 * the target.
 *
 * Order of evidence (the dynamic linker's symbol lookup order, simplified):
 *   0. a sanitizer runtime (ASan, TSan, MSan, HWASan, LSan) owns malloc:
 *      linked as a library (libasan.so*, libtsan.so*, libhwasan.so*,
 *      liblsan.so*, clang's libclang_rt.<name>*.so), preloaded (then it is
 *      mapped too), or linked into the executable (it defines __asan_init,
 *      __tsan_init, __msan_init, __hwasan_init or __lsan_init).  The kind is
 *      UNKNOWN and sanitizer names the runtime: its malloc is not one
 *      vitals reads, and calling into the process from outside is unsafe;
 *   1. the executable itself defines malloc (statically linked allocator),
 *      or defines je_malloc or _rjem_malloc: a jemalloc built in with prefix
 *      je_ (redis from source, zmalloc) or _rjem_ (Rust's tikv-jemallocator,
 *      the global allocator) is reported as jemalloc although plain malloc
 *      stays libc's, since that is where the program's heap lives; likewise
 *      mi_malloc without malloc (Rust's mimalloc crate) is mimalloc;
 *   2. an LD_PRELOAD'ed library (from environ) defines malloc;
 *   3. a mapped known allocator library (libjemalloc, libtcmalloc*, libmimalloc)
 *      that defines malloc in .dynsym;
 *   4. musl's dynamic loader/libc (ld-musl-*.so.1);
 *   5. glibc's libc.so.6 — version from its banner string ("release version
 *      2.36") or, failing that, the highest GLIBC_2.x version definition;
 *   6. no libc mapped at all: a static executable, classified by its symbol
 *      table (je_malloc or mallctl, tc_malloc, mi_malloc, __libc_malloc)
 *      or, when stripped, glibc malloc's messages in .rodata; else "unknown
 *      (static)".
 *
 * The answer is remembered across runs (alloc/detect_cache.h), keyed by
 * LD_PRELOAD and the identity of the executable and of every mapped file:
 * on an exact match no file is opened and libelf is not loaded.
 *
 * A file that cannot be read never fails the call: an allocator library
 * known by name then decides by name ("malloc not verified"), and the
 * evidence line ends with "; "-separated notes on what was not checked.
 */
#ifndef VT_ALLOC_DETECT_H
#define VT_ALLOC_DETECT_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"
#include "proc/maps.h"
#include "proc/procfs.h"

enum vt_alloc_kind {
	VT_ALLOC_UNKNOWN = 0,
	VT_ALLOC_GLIBC,
	VT_ALLOC_JEMALLOC,
	VT_ALLOC_TCMALLOC,
	VT_ALLOC_MIMALLOC,
	VT_ALLOC_MUSL,
};

const char *vt_alloc_kind_name(enum vt_alloc_kind kind);   /* "glibc", "jemalloc", ... */

struct vt_alloc_info {
	enum vt_alloc_kind kind;
	char version[32];        /* "2.36", "" when unknown */
	bool is_static;          /* allocator linked into the executable */
	char path[512];          /* file that provides malloc ("" if none) */
	char evidence[256];      /* one line: how this was decided */
	char sanitizer[32];      /* "AddressSanitizer", ... when a sanitizer runtime owns malloc; "" */
	char prefix[16];         /* an allocator linked into the executable under a prefix
	                          * (jemalloc's je_, tikv-jemallocator's _rjem_): its functions'
	                          * names begin with it ("_rjem_mallctl"); "" none */
};

/*
 * Decide the allocator of the process with directory pid_fd and mappings
 * regions (maps or smaps).  environ is the raw /proc/PID/environ block (may be
 * NULL when unreadable: LD_PRELOAD is then not considered and the evidence
 * says so).  Returns VT_OK with kind UNKNOWN when nothing decides it.
 */
int vt_alloc_detect(const struct vt_procfs *pfs, int pid_fd, pid_t pid,
		    const struct vt_region_list *regions, const char *environ, size_t environ_len,
		    struct vt_alloc_info *out, struct vt_err *err);

/* ---- exposed for tests and fuzzers ---- */

/*
 * Find "release version X.Y" or "X.Y.Z" in a glibc banner inside bytes (not
 * NUL-terminated, e.g. libc's .rodata): the words must follow "GNU C Library"
 * within the same C string.  Writes the numbers into version (cap bytes) and
 * returns true; else false with version "".
 */
bool vt_glibc_banner_version(const char *bytes, size_t len, char *version, size_t cap);

#endif
