/*
 * detect.c — decide which malloc a process runs, from its mappings and files.
 *
 * Walks the order of evidence in detect.h and stops at the first step that
 * decides.  Every file is the target's own copy: PID/exe, PID/root/<path> (so
 * a container's libraries are read, not the host's), PID/map_files/ for a
 * library deleted since it was mapped (an upgrade), and the host path only
 * after EACCES and only when its device and inode are those in maps.  A file
 * that cannot be read never fails the call: the evidence line says what could
 * not be checked.  Nothing here reads target memory, stops the target, or
 * prints; files are opened by proc/mapped_file.c, ELF questions go to
 * elf/elfsym.c.
 */
#include "alloc/detect.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "alloc/detect_cache.h"
#include "elf/elfsym.h"
#include "proc/environ.h"
#include "proc/mapped_file.h"

/* How far after "GNU C Library" the banner's "release version" may be. */
#define BANNER_SPAN 256
#define BANNER_TAIL (64u << 10)    /* the bytes of .rodata looked at first, from its end */

static const char *const kind_names[] = {
	[VT_ALLOC_UNKNOWN] = "unknown",
	[VT_ALLOC_GLIBC] = "glibc",
	[VT_ALLOC_JEMALLOC] = "jemalloc",
	[VT_ALLOC_TCMALLOC] = "tcmalloc",
	[VT_ALLOC_MIMALLOC] = "mimalloc",
	[VT_ALLOC_MUSL] = "musl",
};

const char *vt_alloc_kind_name(enum vt_alloc_kind kind)
{
	if ((unsigned)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
		return "unknown";
	return kind_names[kind];
}

/* ---- the glibc banner ------------------------------------------------- */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* "2.36" or "2.39.9000" at p; the number ends at a non-alphanumeric byte or end. */
static bool parse_release(const char *p, const char *end, char *version, size_t cap)
{
	const char *start = p;
	size_t digits;
	int parts = 0;

	for (;;) {
		for (digits = 0; p < end && is_digit(*p) && digits <= 6; digits++)
			p++;
		if (digits == 0 || digits > 6)
			return false;
		if (++parts == 3 || p + 1 >= end || *p != '.' || !is_digit(p[1]))
			break;
		p++;
	}
	if (parts < 2)
		return false;
	if (p < end && (is_alnum(*p) || (*p == '.' && p + 1 < end && is_digit(p[1]))))
		return false;
	if ((size_t)(p - start) >= cap)
		return false;
	memcpy(version, start, (size_t)(p - start));
	version[p - start] = '\0';
	return true;
}

bool vt_glibc_banner_version(const char *bytes, size_t len, char *version, size_t cap)
{
	static const char lib[] = "GNU C Library";
	static const char rel[] = "release version ";
	const char *p = bytes, *end = bytes + len, *hit, *stop, *v;

	if (cap)
		version[0] = '\0';
	if (!bytes || !cap)
		return false;
	while (p < end && (hit = memmem(p, (size_t)(end - p), lib, sizeof(lib) - 1)) != NULL) {
		/* The banner is one C string: stay before its NUL. */
		stop = memchr(hit, '\0', (size_t)(end - hit));
		if (!stop || stop - hit > BANNER_SPAN)
			stop = end - hit > BANNER_SPAN ? hit + BANNER_SPAN : end;
		v = memmem(hit, (size_t)(stop - hit), rel, sizeof(rel) - 1);
		if (v && parse_release(v + sizeof(rel) - 1, stop, version, cap))
			return true;
		p = hit + sizeof(lib) - 1;
	}
	if (cap)
		version[0] = '\0';
	return false;
}

/* ---- one detection ---------------------------------------------------- */

struct detect {
	const struct vt_procfs *pfs;
	int pid_fd;
	pid_t pid;
	const struct vt_region_list *regions;
	const struct vt_region **files;  /* its file-backed mappings (inode set), in order; owned */
	size_t nfiles;
	const char *env;                 /* NULL when environ was unreadable */
	size_t env_len;
	struct vt_alloc_info *out;
	struct vt_err *err;
	struct vt_elfsym *exe;           /* owned; NULL when unreadable */
	bool exe_static;                 /* no PT_INTERP */
	char exe_path[512];              /* readlink of exe, "" if unknown */
	char exe_desc[544];              /* "static executable /usr/bin/x", for evidence */
	const struct vt_region *glibc;   /* libc.so.6 mapping, NULL if none */
	const struct vt_region *musl;    /* ld-musl / libc.musl mapping, NULL if none */
	char notes[192];                 /* "; "-separated things not checked */
	bool uncached;                   /* the answer rests on something the cache's key does not
	                                  * hold (a file that could not be read, a preload found
	                                  * by stat): not to be remembered */
};

/* A target file as an open ELF, or why it could not be read. */
struct tfile {
	struct vt_elfsym *elf;   /* owned; NULL when unreadable */
	char why[128];
};

static void __attribute__((format(printf, 3, 0)))
vformat(char *dst, size_t cap, const char *fmt, va_list ap)
{
	if (vsnprintf(dst, cap, fmt, ap) < 0 && cap)
		dst[0] = '\0';
}

static void __attribute__((format(printf, 3, 4)))
set_str(char *dst, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vformat(dst, cap, fmt, ap);
	va_end(ap);
}

/* Something that could not be checked, kept for the end of the evidence line. */
static void __attribute__((format(printf, 2, 3))) note(struct detect *d, const char *fmt, ...)
{
	size_t used = strlen(d->notes);
	va_list ap;

	if (used + 3 >= sizeof(d->notes))
		return;
	memcpy(d->notes + used, "; ", 3);
	used += 2;
	va_start(ap, fmt);
	vformat(d->notes + used, sizeof(d->notes) - used, fmt, ap);
	va_end(ap);
}

/* Record the answer; the evidence line is the formatted text plus the notes. */
static void __attribute__((format(printf, 5, 6)))
decide(struct detect *d, enum vt_alloc_kind kind, const char *path, bool is_static,
       const char *fmt, ...)
{
	va_list ap;

	d->out->kind = kind;
	d->out->is_static = is_static;
	set_str(d->out->path, sizeof(d->out->path), "%s", path ? path : "");
	va_start(ap, fmt);
	vformat(d->out->evidence, sizeof(d->out->evidence), fmt, ap);
	va_end(ap);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static const char *preempts(const struct detect *d)
{
	if (d->glibc)
		return " (preempts glibc)";
	return d->musl ? " (preempts musl)" : "";
}

/* The same when the lookup order is not known. */
static const char *may_preempt(const struct detect *d)
{
	if (d->glibc)
		return " (may preempt glibc)";
	return d->musl ? " (may preempt musl)" : "";
}

/* Consumes fd. */
static int tfile_from_fd(struct detect *d, struct tfile *tf, int fd)
{
	struct vt_err e;
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		set_str(tf->why, sizeof(tf->why), "not a regular file");
		return VT_OK;
	}
	vt_err_clear(&e);
	rc = vt_elfsym_open_fd(fd, &tf->elf, &e);
	if (rc == VT_E_NOMEM)
		return vt_err_set(d->err, rc, 0, "%s", e.msg);
	if (rc)
		set_str(tf->why, sizeof(tf->why), "%s", e.msg);
	return VT_OK;
}

/* The file behind mapping r as an open ELF, or why it could not be read. */
static int open_mapped(struct detect *d, const struct vt_region *r, struct tfile *tf)
{
	int fd, rc;

	memset(tf, 0, sizeof(*tf));
	rc = vt_mapped_file_open(d->pfs, d->pid_fd, d->pid, r, &fd, tf->why, sizeof(tf->why), d->err);
	rc = rc || fd < 0 ? rc : tfile_from_fd(d, tf, fd);
	d->uncached |= !tf->elf;
	return rc;
}

static int open_exe(struct detect *d, struct tfile *tf)
{
	int fd, rc;

	memset(tf, 0, sizeof(*tf));
	rc = vt_mapped_exe_open(d->pfs, d->pid_fd, d->pid, d->regions, d->exe_path, sizeof(d->exe_path),
				&fd, tf->why, sizeof(tf->why), d->err);
	rc = rc || fd < 0 ? rc : tfile_from_fd(d, tf, fd);
	d->uncached |= !tf->elf;
	return rc;
}

/* ---- what names and symbols say --------------------------------------- */

static const struct {
	const char *pattern;   /* fnmatch(3) on the file name */
	enum vt_alloc_kind kind;
} lib_patterns[] = {
	{ "libjemalloc.so*", VT_ALLOC_JEMALLOC },
	{ "libtcmalloc*.so*", VT_ALLOC_TCMALLOC },
	{ "libmimalloc*.so*", VT_ALLOC_MIMALLOC },
	{ "ld-musl-*.so.1", VT_ALLOC_MUSL },
	{ "libc.musl-*.so.1", VT_ALLOC_MUSL },
	{ "libc.so.6", VT_ALLOC_GLIBC },
	{ "libc-2.*.so", VT_ALLOC_GLIBC },
};

/* The file name of a mapping without " (deleted)"; false when it does not fit. */
static bool plain_name(const char *path, char *plain, size_t cap)
{
	const char *name = base_name(path);
	size_t n = strlen(name);

	if (vt_maps_path_deleted(name))
		n -= sizeof(VT_MAPS_DELETED_SUFFIX) - 1;
	if (n >= cap)
		return false;
	memcpy(plain, name, n);
	plain[n] = '\0';
	return true;
}

static enum vt_alloc_kind kind_of_lib(const char *path)
{
	char plain[256];
	size_t i;

	if (!plain_name(path, plain, sizeof(plain)))
		return VT_ALLOC_UNKNOWN;
	for (i = 0; i < sizeof(lib_patterns) / sizeof(lib_patterns[0]); i++)
		if (fnmatch(lib_patterns[i].pattern, plain, 0) == 0)
			return lib_patterns[i].kind;
	return VT_ALLOC_UNKNOWN;
}

/*
 * Sanitizer runtimes: each replaces malloc with its own and intercepts much
 * of libc, so glibc's figures say nothing about the program's heap, and a
 * call injected from outside runs into the runtime's own state (ASan's
 * malloc_info buffer freed by glibc aborts the process; a TSan thread faults
 * in the runtime).  GCC links them as libraries, clang into the executable.
 * LeakSanitizer comes last: ASan carries LSan inside it.
 */
static const struct {
	const char *name;
	const char *init;            /* defined by the runtime linked into an executable */
	const char *libs[2];         /* fnmatch(3) patterns of its shared runtime */
} sanitizers[] = {
	{ "AddressSanitizer", "__asan_init", { "libasan.so*", "libclang_rt.asan*.so*" } },
	{ "ThreadSanitizer", "__tsan_init", { "libtsan.so*", "libclang_rt.tsan*.so*" } },
	{ "MemorySanitizer", "__msan_init", { "libclang_rt.msan*.so*", NULL } },
	{ "HWAddressSanitizer", "__hwasan_init", { "libhwasan.so*", "libclang_rt.hwasan*.so*" } },
	{ "LeakSanitizer", "__lsan_init", { "liblsan.so*", "libclang_rt.lsan*.so*" } },
};
#define NSANITIZERS (sizeof(sanitizers) / sizeof(sanitizers[0]))

/* The sanitizer whose shared runtime this mapping is, or -1. */
static int sanitizer_of_lib(const char *path)
{
	char plain[256];
	size_t i, j;

	if (!plain_name(path, plain, sizeof(plain)))
		return -1;
	for (i = 0; i < NSANITIZERS; i++)
		for (j = 0; j < 2; j++)
			if (sanitizers[i].libs[j] && fnmatch(sanitizers[i].libs[j], plain, 0) == 0)
				return (int)i;
	return -1;
}

static bool is_allocator_lib(enum vt_alloc_kind kind)
{
	return kind == VT_ALLOC_JEMALLOC || kind == VT_ALLOC_TCMALLOC || kind == VT_ALLOC_MIMALLOC;
}

enum {
	SYM_MALLOC, SYM_MALLCTL, SYM_JE_MALLCTL, SYM_JE_MALLOC, SYM_RJEM_MALLOC, SYM_RJEM_MALLCTL,
	SYM_TC_MALLOC, SYM_MI_MALLOC,
	SYM_MUSL_DONATE, SYM_MUSL_IMPL, SYM_MALLOC_INFO, SYM_LIBC_MALLOC, SYM__COUNT
};
#define BIT(sym) (UINT32_C(1) << (sym))

static const char *const sym_names[SYM__COUNT] = {
	[SYM_MALLOC] = "malloc",
	[SYM_MALLCTL] = "mallctl",
	[SYM_JE_MALLCTL] = "je_mallctl",
	[SYM_JE_MALLOC] = "je_malloc",
	[SYM_RJEM_MALLOC] = "_rjem_malloc",
	[SYM_RJEM_MALLCTL] = "_rjem_mallctl",
	[SYM_TC_MALLOC] = "tc_malloc",
	[SYM_MI_MALLOC] = "mi_malloc",
	[SYM_MUSL_DONATE] = "__malloc_donate",
	[SYM_MUSL_IMPL] = "__libc_malloc_impl",
	[SYM_MALLOC_INFO] = "malloc_info",
	[SYM_LIBC_MALLOC] = "__libc_malloc",
};

/* Symbols only one allocator defines, most telling first. */
static const struct {
	int sym;
	enum vt_alloc_kind kind;
} sym_kinds[] = {
	{ SYM_MALLCTL, VT_ALLOC_JEMALLOC },
	{ SYM_JE_MALLCTL, VT_ALLOC_JEMALLOC },
	{ SYM_JE_MALLOC, VT_ALLOC_JEMALLOC },
	{ SYM_RJEM_MALLCTL, VT_ALLOC_JEMALLOC },
	{ SYM_RJEM_MALLOC, VT_ALLOC_JEMALLOC },
	{ SYM_TC_MALLOC, VT_ALLOC_TCMALLOC },
	{ SYM_MI_MALLOC, VT_ALLOC_MIMALLOC },
	{ SYM_MUSL_DONATE, VT_ALLOC_MUSL },
	{ SYM_MUSL_IMPL, VT_ALLOC_MUSL },
	{ SYM_MALLOC_INFO, VT_ALLOC_GLIBC },
	{ SYM_LIBC_MALLOC, VT_ALLOC_GLIBC },
};

static enum vt_alloc_kind kind_of_symbols(uint32_t found, const char **sym)
{
	size_t i;

	for (i = 0; i < sizeof(sym_kinds) / sizeof(sym_kinds[0]); i++) {
		if (found & BIT(sym_kinds[i].sym)) {
			*sym = sym_names[sym_kinds[i].sym];
			return sym_kinds[i].kind;
		}
	}
	*sym = "";
	return VT_ALLOC_UNKNOWN;
}

static bool defines_malloc(struct vt_elfsym *elf)
{
	return vt_elfsym_defines(elf, VT_ELFSYM_DYNSYM, sym_names, 1) != 0;
}

/* Version text of an allocator library: its soname ("libjemalloc.so.2"), else its file name. */
static void lib_version(struct detect *d, struct vt_elfsym *elf, const struct vt_region *r)
{
	char *v = d->out->version;

	if (elf && vt_elfsym_soname(elf, v, sizeof(d->out->version)))
		return;
	if (vt_maps_path_deleted(r->path))
		v[0] = '\0';
	else
		set_str(v, sizeof(d->out->version), "%s", base_name(r->path));
}

/* ---- the steps of detect.h, each returning VT_OK and setting *done ----- */

/*
 * The executable's allocator symbols.  A dynamic executable exports malloc in
 * .dynsym when it overrides libc's; what identifies the allocator (tc_malloc,
 * a je_-prefixed jemalloc) is often only in .symtab.
 */
static uint32_t executable_symbols(struct detect *d)
{
	enum vt_elfsym_tables tables = VT_ELFSYM_DYNSYM;
	const char *sym;
	uint32_t found;

	if (d->exe_static)
		tables |= VT_ELFSYM_SYMTAB;
	found = vt_elfsym_defines(d->exe, tables, sym_names, SYM__COUNT);
	if (!d->exe_static && kind_of_symbols(found, &sym) == VT_ALLOC_UNKNOWN)
		found |= vt_elfsym_defines(d->exe, VT_ELFSYM_SYMTAB, sym_names, SYM__COUNT) &
			 ~BIT(SYM_MALLOC);
	return found;
}

/* Step 1: malloc (or a je_-prefixed jemalloc) linked into the executable. */
static int step_executable(struct detect *d, bool *done)
{
	enum vt_alloc_kind kind;
	const char *sym, *bytes;
	uint32_t found;
	size_t len;

	if (!d->exe)
		return VT_OK;
	found = executable_symbols(d);
	if ((found & BIT(SYM_JE_MALLOC)) && !(found & BIT(SYM_MALLCTL))) {
		/*
		 * redis and others built with their own jemalloc, prefix je_
		 * (zmalloc): their heap is jemalloc's although malloc is not.
		 */
		*done = true;
		decide(d, VT_ALLOC_JEMALLOC, d->exe_path, true, "%s defines je_malloc: jemalloc "
		       "linked in with prefix je_ (plain malloc stays libc's)", d->exe_desc);
		set_str(d->out->prefix, sizeof(d->out->prefix), "je_");
		return VT_OK;
	}
	if ((found & BIT(SYM_RJEM_MALLOC)) && !(found & BIT(SYM_MALLOC))) {
		/* Rust's tikv-jemallocator: the global allocator, prefix _rjem_ */
		*done = true;
		decide(d, VT_ALLOC_JEMALLOC, d->exe_path, true, "%s defines _rjem_malloc: jemalloc "
		       "linked in with prefix _rjem_ (Rust's tikv-jemallocator; plain malloc stays "
		       "libc's)", d->exe_desc);
		set_str(d->out->prefix, sizeof(d->out->prefix), "_rjem_");
		return VT_OK;
	}
	if ((found & BIT(SYM_MI_MALLOC)) && !(found & BIT(SYM_MALLOC))) {
		/* Rust's mimalloc crate (libmimalloc-sys), or a program calling mi_malloc */
		*done = true;
		decide(d, VT_ALLOC_MIMALLOC, d->exe_path, true, "%s defines mi_malloc: mimalloc "
		       "linked in (Rust's mimalloc crate; plain malloc stays libc's)", d->exe_desc);
		return VT_OK;
	}
	if (!(found & BIT(SYM_MALLOC)))
		return VT_OK;
	*done = true;
	kind = kind_of_symbols(found, &sym);
	if (kind == VT_ALLOC_UNKNOWN) {
		decide(d, kind, d->exe_path, true, "%s defines malloc itself, not a known allocator",
		       d->exe_desc);
		return VT_OK;
	}
	decide(d, kind, d->exe_path, true, "%s defines malloc itself (%s linked in: %s)%s",
	       d->exe_desc, vt_alloc_kind_name(kind), sym, d->exe_static ? "" : preempts(d));
	if (kind == VT_ALLOC_GLIBC && vt_elfsym_section(d->exe, ".rodata", &bytes, &len))
		vt_glibc_banner_version(bytes, len, d->out->version, sizeof(d->out->version));
	return VT_OK;
}

/* Step 0: a sanitizer runtime linked into the executable, or mapped (linked or preloaded). */
static int step_sanitizer(struct detect *d, bool *done)
{
	const char *inits[NSANITIZERS];
	const char *last = NULL;
	uint32_t found = 0;
	size_t i;
	int k;

	for (i = 0; i < NSANITIZERS; i++)
		inits[i] = sanitizers[i].init;
	if (d->exe)
		found = vt_elfsym_defines(d->exe, VT_ELFSYM_DYNSYM | VT_ELFSYM_SYMTAB, inits, NSANITIZERS);
	for (i = 0; i < NSANITIZERS; i++) {
		if (!(found & (UINT32_C(1) << i)))
			continue;
		*done = true;
		decide(d, VT_ALLOC_UNKNOWN, d->exe_path, true, "%s defines %s: malloc is %s's "
		       "(linked in)", d->exe_desc, sanitizers[i].init, sanitizers[i].name);
		set_str(d->out->sanitizer, sizeof(d->out->sanitizer), "%s", sanitizers[i].name);
		return VT_OK;
	}
	for (i = 0; i < d->nfiles; i++) {
		const struct vt_region *r = d->files[i];

		if (last && strcmp(last, r->path) == 0)
			continue;
		last = r->path;
		if ((k = sanitizer_of_lib(r->path)) < 0)
			continue;
		*done = true;
		decide(d, VT_ALLOC_UNKNOWN, r->path, false, "%s mapped: malloc is %s's",
		       base_name(r->path), sanitizers[k].name);
		set_str(d->out->sanitizer, sizeof(d->out->sanitizer), "%s", sanitizers[k].name);
		return VT_OK;
	}
	return VT_OK;
}

/*
 * Steps 2, 3 and 3b: a preloaded or mapped library.  by_name is the kind its
 * file name says; a readable file decides only if it defines malloc, an
 * unreadable one decides by name alone when the name is an allocator's
 * (*unreadable is set otherwise).  A library mapped without being preloaded
 * or named like an allocator preempts libc only when it comes first in the
 * lookup order, which the mappings do not tell: "may preempt".
 */
static int check_library(struct detect *d, const struct vt_region *r, bool preloaded, bool *done,
			 bool *unreadable)
{
	enum vt_alloc_kind by_name = kind_of_lib(r->path), kind;
	const char *how = preloaded ? "LD_PRELOAD'ed " : "";
	const char *order = !preloaded && !is_allocator_lib(by_name) ? may_preempt(d) : preempts(d);
	const char *sym;
	struct tfile tf;
	int rc;

	rc = open_mapped(d, r, &tf);
	if (rc)
		return rc;
	if (!tf.elf) {
		if (is_allocator_lib(by_name)) {
			*done = true;
			decide(d, by_name, r->path, false,
			       "%s%s mapped; unreadable (%s), malloc not verified", how, r->path, tf.why);
			lib_version(d, NULL, r);
		} else if (preloaded) {
			note(d, "LD_PRELOAD'ed %s unreadable (%s)", base_name(r->path), tf.why);
		} else if (unreadable) {
			*unreadable = true;
		}
		return VT_OK;
	}
	if (defines_malloc(tf.elf)) {
		kind = by_name;
		if (!is_allocator_lib(kind))
			kind = kind_of_symbols(vt_elfsym_defines(tf.elf, VT_ELFSYM_DYNSYM, sym_names,
								 SYM__COUNT), &sym);
		*done = true;
		if (kind == VT_ALLOC_UNKNOWN)
			decide(d, kind, r->path, false, "%s%s %s malloc, not a known allocator%s",
			       how, r->path, preloaded ? "defines" : "mapped and defines", order);
		else
			decide(d, kind, r->path, false, "%s%s %s malloc%s", how, r->path,
			       preloaded ? "defines" : "mapped and defines", order);
		if (is_allocator_lib(kind))
			lib_version(d, tf.elf, r);
	}
	vt_elfsym_free(&tf.elf);
	return VT_OK;
}

/* The mapping of an LD_PRELOAD entry: same path, same file name, or same inode (a symlink). */
static const struct vt_region *region_of_preload(struct detect *d, const char *entry)
{
	const struct vt_region *r = vt_maps_find_path(d->regions, entry);
	const char *name = base_name(entry);
	size_t i, name_len = strlen(name);
	char rel[PATH_MAX + 8];
	struct stat st;

	if (r)
		return r;
	for (i = 0; i < d->nfiles; i++)
		if (vt_maps_path_is(base_name(d->files[i]->path), name, name_len))
			return d->files[i];
	if (strlen(entry) + sizeof("root/") > sizeof(rel))
		return NULL;
	set_str(rel, sizeof(rel), "%s%s", entry[0] == '/' ? "root" : "cwd/", entry);
	d->uncached = true;          /* a symbolic link or the working directory decides */
	if (fstatat(d->pid_fd, rel, &st, 0) < 0)
		return NULL;
	for (i = 0; i < d->nfiles; i++) {
		r = d->files[i];
		if (st.st_ino == r->inode && major(st.st_dev) == r->dev_major &&
		    minor(st.st_dev) == r->dev_minor)
			return r;
	}
	return NULL;
}

/*
 * vitals' own allocation-sampling agent (libvitals-agent-allocs.so) defines
 * malloc and friends, and forwards each call to the next definition: the
 * allocator is the one underneath, not it.
 */
static bool forwards_malloc(struct detect *d, const char *path)
{
	if (fnmatch("libvitals-agent-allocs*.so*", base_name(path), 0) != 0)
		return false;
	note(d, "%s forwards malloc to the allocator underneath", base_name(path));
	return true;
}

/* Step 2: LD_PRELOAD, "separated by spaces or colons" (ld.so(8)), first definition wins. */
static int step_preload(struct detect *d, bool *done)
{
	const char *val, *p, *end, *q;
	const struct vt_region *r;
	char entry[PATH_MAX];
	size_t len;
	int rc;

	if (!d->env) {
		note(d, "environ unreadable, LD_PRELOAD not checked");
		return VT_OK;
	}
	if (!vt_environ_get(d->env, d->env_len, "LD_PRELOAD", &val, &len))
		return VT_OK;
	for (p = val, end = val + len; p < end && !*done; p = q) {
		while (p < end && (*p == ' ' || *p == ':' || *p == '\t'))
			p++;
		for (q = p; q < end && *q != ' ' && *q != ':' && *q != '\t'; q++)
			;
		if (q == p || (size_t)(q - p) >= sizeof(entry))
			continue;
		memcpy(entry, p, (size_t)(q - p));
		entry[q - p] = '\0';
		if (forwards_malloc(d, entry))
			continue;
		r = region_of_preload(d, entry);
		if (!r) {
			note(d, "LD_PRELOAD'ed %s not mapped", base_name(entry));
			continue;
		}
		rc = check_library(d, r, true, done, NULL);
		if (rc)
			return rc;
	}
	return VT_OK;
}

/* Step 3: a known allocator library anywhere in the mappings. */
static int step_known_libs(struct detect *d, bool *done)
{
	const char *last = NULL;
	size_t i;
	int rc;

	for (i = 0; i < d->nfiles && !*done; i++) {
		const struct vt_region *r = d->files[i];

		if (last && strcmp(last, r->path) == 0)
			continue;
		last = r->path;
		if (!is_allocator_lib(kind_of_lib(r->path)))
			continue;
		rc = check_library(d, r, false, done, NULL);
		if (rc)
			return rc;
	}
	return VT_OK;
}

/*
 * Step 3b: any other mapped library that defines malloc (libbump.so linked
 * in, glibc's libc_malloc_debug.so, a profiler's wrapper).  When it comes
 * before libc in the lookup order its malloc is the program's, and glibc's
 * figures, or a buffer glibc's free() is handed back, would be wrong
 * (free() of another allocator's block aborts the process).  The lookup
 * order is in the target's link map, not in its mappings, so any such
 * library decides: an allocator vitals does not know.
 */
static int step_other_libs(struct detect *d, bool *done)
{
	const char *last = NULL;
	unsigned unreadable = 0;
	char plain[256];
	bool hidden;
	size_t i;
	int rc;

	for (i = 0; i < d->nfiles && !*done; i++) {
		const struct vt_region *r = d->files[i];

		if (r->perms[2] != 'x' || (last && strcmp(last, r->path) == 0))
			continue;
		last = r->path;
		if (kind_of_lib(r->path) != VT_ALLOC_UNKNOWN || strcmp(r->path, d->exe_path) == 0 ||
		    !plain_name(r->path, plain, sizeof(plain)) || fnmatch("ld-*.so*", plain, 0) == 0 ||
		    fnmatch("libvitals-agent-allocs*.so*", plain, 0) == 0)
			continue;
		hidden = false;
		if ((rc = check_library(d, r, false, done, &hidden)))
			return rc;
		unreadable += hidden;
	}
	if (unreadable)
		note(d, "%u librar%s unreadable, not checked for malloc", unreadable,
		     unreadable == 1 ? "y" : "ies");
	return VT_OK;
}

/* Step 4: musl's libc (ld-musl-ARCH.so.1 is its libc and loader in one). */
static int step_musl(struct detect *d, bool *done)
{
	struct tfile tf;
	int rc;

	if (!d->musl)
		return VT_OK;
	rc = open_mapped(d, d->musl, &tf);
	if (rc)
		return rc;
	*done = true;
	if (tf.elf)
		decide(d, VT_ALLOC_MUSL, d->musl->path, false, "%s mapped%s", base_name(d->musl->path),
		       defines_malloc(tf.elf) ? " and defines malloc" : "");
	else
		decide(d, VT_ALLOC_MUSL, d->musl->path, false, "%s mapped (unreadable: %s)",
		       base_name(d->musl->path), tf.why);
	vt_elfsym_free(&tf.elf);
	return VT_OK;
}

/* glibc's version into d->out->version; how it was found, for the evidence line. */
static const char *glibc_version(struct detect *d, struct vt_elfsym *elf)
{
	char *v = d->out->version;
	size_t cap = sizeof(d->out->version);
	const char *bytes;
	char *tail;
	size_t len;
	bool found;

	/* The banner sits near the end of .rodata (27 KiB before it in Debian's 2.36): its tail first. */
	if (vt_elfsym_section_tail(elf, ".rodata", BANNER_TAIL, &tail, &len)) {
		found = vt_glibc_banner_version(tail, len, v, cap);
		free(tail);
		if (found)
			return "banner says release version";
	}
	if (vt_elfsym_section(elf, ".rodata", &bytes, &len) &&
	    vt_glibc_banner_version(bytes, len, v, cap))
		return "banner says release version";
	if (vt_elfsym_verdef_max(elf, "GLIBC_", v, cap))
		return "no banner, from symbol versions";
	return "version unknown";
}

/* Step 5: glibc's libc.so.6. */
static int step_glibc(struct detect *d, bool *done)
{
	const char *name, *source;
	struct tfile tf;
	int rc;

	if (!d->glibc)
		return VT_OK;
	rc = open_mapped(d, d->glibc, &tf);
	if (rc)
		return rc;
	*done = true;
	name = base_name(d->glibc->path);
	if (!tf.elf) {
		decide(d, VT_ALLOC_GLIBC, d->glibc->path, false,
		       "%s mapped; unreadable (%s), version unknown", name, tf.why);
		return VT_OK;
	}
	source = glibc_version(d, tf.elf);
	decide(d, VT_ALLOC_GLIBC, d->glibc->path, false, "%s mapped%s; %s%s%s", name,
	       defines_malloc(tf.elf) ? " and defines malloc" : " (does not define malloc)",
	       source, d->out->version[0] ? " " : "", d->out->version);
	vt_elfsym_free(&tf.elf);
	return VT_OK;
}

/* Step 6: no libc mapped: a static executable without malloc symbols. */
static int step_static(struct detect *d, bool *done)
{
	static const char glibc_msg[] = "malloc_consolidate(): ";
	const char *bytes;
	size_t len;

	if (!d->exe || !d->exe_static)
		return VT_OK;
	*done = true;
	/* Stripped static glibc still carries its malloc's error messages. */
	if (vt_elfsym_section(d->exe, ".rodata", &bytes, &len) &&
	    memmem(bytes, len, glibc_msg, sizeof(glibc_msg) - 1)) {
		decide(d, VT_ALLOC_GLIBC, d->exe_path, true,
		       "%s has no malloc symbol, but glibc malloc's messages are in .rodata",
		       d->exe_desc);
		return VT_OK;
	}
	decide(d, VT_ALLOC_UNKNOWN, d->exe_path, true,
	       "%s, no libc mapped and no malloc symbol: unknown (static)", d->exe_desc);
	return VT_OK;
}

/* ---- putting it together ---------------------------------------------- */

static void find_libcs(struct detect *d)
{
	enum vt_alloc_kind kind;
	size_t i;

	for (i = 0; i < d->nfiles; i++) {
		kind = kind_of_lib(d->files[i]->path);
		if (kind == VT_ALLOC_GLIBC && !d->glibc)
			d->glibc = d->files[i];
		if (kind == VT_ALLOC_MUSL && !d->musl)
			d->musl = d->files[i];
	}
}

static void finish_unknown(struct detect *d)
{
	if (d->regions->n == 0)
		decide(d, VT_ALLOC_UNKNOWN, NULL, false, "no mappings (kernel thread or exited)");
	else if (!d->exe)
		decide(d, VT_ALLOC_UNKNOWN, NULL, false, "no libc or allocator library mapped");
	else
		decide(d, VT_ALLOC_UNKNOWN, NULL, false,
		       "no libc or allocator library mapped and %s defines no malloc", d->exe_desc);
}

static int open_executable(struct detect *d)
{
	struct tfile tf;
	int rc;

	rc = open_exe(d, &tf);
	if (rc)
		return rc;
	d->exe = tf.elf;
	if (d->exe)
		d->exe_static = !vt_elfsym_has_interp(d->exe);
	set_str(d->exe_desc, sizeof(d->exe_desc), "%sexecutable%s%s", d->exe_static ? "static " : "",
		d->exe_path[0] ? " " : "", d->exe_path);
	if (!d->exe)
		note(d, "%s unreadable (%s)", d->exe_path[0] ? base_name(d->exe_path) : "executable",
		     tf.why);
	return VT_OK;
}

/* The file-backed mappings, the only ones the steps look at (the list's index of them). */
static int collect_files(struct detect *d)
{
	size_t i;

	if (!d->regions->nfiles)
		return VT_OK;
	d->files = malloc(d->regions->nfiles * sizeof(*d->files));
	if (!d->files)
		return vt_err_set(d->err, VT_E_NOMEM, ENOMEM, "out of memory detecting the allocator");
	for (i = 0; i < d->regions->nfiles; i++)
		d->files[d->nfiles++] = &d->regions->v[d->regions->files[i]];
	return VT_OK;
}

static int run_steps(struct detect *d)
{
	static int (*const steps[])(struct detect *, bool *) = {
		step_sanitizer, step_executable, step_preload, step_known_libs, step_other_libs,
		step_musl, step_glibc, step_static,
	};
	bool done = false;
	size_t i;
	int rc;

	rc = open_executable(d);
	for (i = 0; !rc && !done && i < sizeof(steps) / sizeof(steps[0]); i++)
		rc = steps[i](d, &done);
	if (!rc && !done)
		finish_unknown(d);
	return rc;
}

int vt_alloc_detect(const struct vt_procfs *pfs, int pid_fd, pid_t pid,
		    const struct vt_region_list *regions, const char *env, size_t env_len,
		    struct vt_alloc_info *out, struct vt_err *err)
{
	struct detect d = {
		.pfs = pfs, .pid_fd = pid_fd, .pid = pid, .regions = regions,
		.env = env, .env_len = env ? env_len : 0, .out = out, .err = err,
	};
	char *key = NULL;
	size_t used;
	int rc = VT_OK;

	memset(out, 0, sizeof(*out));
	/* a remembered answer for exactly these files and LD_PRELOAD: no file opened, no libelf */
	if (pfs->live && vt_detect_cache_key(pid_fd, regions, env, env_len, &key) &&
	    vt_detect_cache_get(key, out))
		goto out;
	if ((rc = collect_files(&d)))
		goto out;
	find_libcs(&d);
	rc = run_steps(&d);
	vt_elfsym_free(&d.exe);
	free(d.files);
	if (rc) {
		memset(out, 0, sizeof(*out));
		goto out;
	}
	used = strlen(out->evidence);
	set_str(out->evidence + used, sizeof(out->evidence) - used, "%s", d.notes);
	if (key && !d.uncached && !d.notes[0])
		vt_detect_cache_put(key, out);
out:
	free(key);
	return rc;
}
