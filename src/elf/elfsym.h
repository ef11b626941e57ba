/*
 * elfsym.h — the few questions vitals asks of an ELF file, answered by libelf.
 *
 * Does the file define a function (in .dynsym or .symtab), what bytes does a
 * section hold (.rodata, for version banners), which is the highest version
 * definition with a prefix (GLIBC_2.36), what is its DT_SONAME, does it have
 * an interpreter.  The files are untrusted (another user's process, a
 * container image, a file being rewritten): every answer is bounded, a
 * malformed file reads as "no", and nothing here parses ELF by hand.
 *
 * This module knows nothing about /proc or allocators: callers open the file
 * and decide what the answers mean (src/alloc/detect.c asks which malloc a
 * process runs, src/inject/resolve.c where a function is).  The only module
 * that sees libelf.
 */
#ifndef VT_ELF_ELFSYM_H
#define VT_ELF_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Largest section we read (symbol table, .rodata); larger ones read as absent. */
#define VT_ELFSYM_SECTION_MAX (128u << 20)

/* An open ELF file.  Opaque; created by vt_elfsym_open_*, freed by vt_elfsym_free. */
struct vt_elfsym;

/*
 * Open the ELF file on fd.  fd is consumed: it is closed by vt_elfsym_free,
 * or before returning on failure.  Sections are read lazily with pread (no
 * mmap, so a file truncated under us cannot SIGBUS).  Errors:
 *   VT_E_PARSE  not an ELF file, or its headers are unreadable (err->msg says which)
 *   VT_E_NOMEM
 */
int vt_elfsym_open_fd(int fd, struct vt_elfsym **out, struct vt_err *err);

/*
 * Open an ELF image held in memory (fuzzers, tests).  The image is not copied:
 * it must stay valid, writable and unchanged until vt_elfsym_free (libelf may
 * convert data in place).  Errors as vt_elfsym_open_fd.
 */
int vt_elfsym_open_mem(void *image, size_t len, struct vt_elfsym **out, struct vt_err *err);

/* Release the file and close its fd; sets *ef to NULL.  NULL or *ef NULL is a no-op. */
void vt_elfsym_free(struct vt_elfsym **ef);

/* Which symbol tables to search. */
enum vt_elfsym_tables {
	VT_ELFSYM_DYNSYM = 1 << 0,   /* .dynsym: what the dynamic linker sees */
	VT_ELFSYM_SYMTAB = 1 << 1,   /* .symtab: link-time symbols, absent when stripped */
};

/*
 * Which of names[0..n) (n <= 32) the file defines as functions: a symbol of
 * that name with st_shndx != SHN_UNDEF, type FUNC or GNU_IFUNC and binding
 * other than LOCAL, in one of the tables.  Returns a mask, bit i for names[i].
 */
uint32_t vt_elfsym_defines(struct vt_elfsym *ef, enum vt_elfsym_tables tables,
			   const char *const *names, size_t n);

/*
 * The ABI the file is built for: ELFCLASS32/ELFCLASS64 and e_machine
 * (EM_X86_64 with ELFCLASS32 is x32).  False when the header is unreadable.
 */
bool vt_elfsym_abi(struct vt_elfsym *ef, int *elf_class, int *machine);

/* The file has a PT_INTERP program header (it is dynamically linked). */
bool vt_elfsym_has_interp(struct vt_elfsym *ef);

/*
 * The contents of the first section called name (".rodata"), unless it is
 * SHT_NOBITS or larger than VT_ELFSYM_SECTION_MAX.  *bytes points into memory
 * owned by ef, valid until vt_elfsym_free; it is not NUL-terminated.
 */
bool vt_elfsym_section(struct vt_elfsym *ef, const char *name, const char **bytes,
		       size_t *len);

/*
 * The last max bytes (all of it when smaller) of the first section called
 * name, read from the file alone: *bytes is malloc'd (the caller frees it),
 * *len its size.  False for an in-memory image, a SHT_NOBITS section, a
 * failed read, or no such section.
 */
bool vt_elfsym_section_tail(struct vt_elfsym *ef, const char *name, size_t max, char **bytes, size_t *len);

/*
 * The highest version definition (.gnu.version_d) named prefix followed by
 * numbers ("GLIBC_" -> "2.36" from GLIBC_2.36; GLIBC_PRIVATE is ignored).
 * Writes the numbers without the prefix into out (cap bytes, NUL-terminated).
 * False when there is none or it does not fit.
 */
bool vt_elfsym_verdef_max(struct vt_elfsym *ef, const char *prefix, char *out, size_t cap);

/* DT_SONAME ("libjemalloc.so.2") into out (cap bytes).  False when absent or too long. */
bool vt_elfsym_soname(struct vt_elfsym *ef, char *out, size_t cap);

/*
 * The value (address relative to the load bias) of function name: a defined
 * FUNC symbol, binding other than LOCAL, from .dynsym (its default version
 * when several exist, e.g. pthread_cond_wait@@GLIBC_2.3.2), else .symtab.
 * VT_E_NOTFOUND when there is none, and for a GNU_IFUNC (its value is a
 * resolver, not the function: vt_elfsym_defines still reports it).  A
 * symbol table libelf could not read is not "none": VT_E_NOMEM when it ran
 * out of memory (an address-space limit, say), else VT_E_PARSE.
 */
int vt_elfsym_symbol(struct vt_elfsym *ef, const char *name, uint64_t *value, struct vt_err *err);

/*
 * Call fn for every defined function symbol (STT_FUNC, any binding: static
 * functions too; not IFUNC resolvers) of .symtab, then .dynsym, with its
 * value and size; a function in both tables comes twice.  Stops when fn
 * returns false.  An unreadable table is skipped.
 */
typedef bool (*vt_elfsym_func_fn)(void *ctx, const char *name, uint64_t value, uint64_t size);
void vt_elfsym_each_func(struct vt_elfsym *ef, vt_elfsym_func_fn fn, void *ctx);

/* The file offset of code at vaddr (in an executable PT_LOAD's file bytes). */
bool vt_elfsym_vaddr_offset(struct vt_elfsym *ef, uint64_t vaddr, uint64_t *offset);

/* p_vaddr of the first PT_LOAD program header (load bias = its mapping's start - this). */
bool vt_elfsym_first_load_vaddr(struct vt_elfsym *ef, uint64_t *vaddr);

/* ---- for tests ------------------------------------------------------- */

/* true: vt_elfsym_symbol scans .dynsym whole even where a GNU hash table would find the name. */
extern bool vt_elfsym_scan_only;
/* How many vt_elfsym_symbol lookups went through a GNU hash table. */
extern unsigned long vt_elfsym_hash_lookups;

#endif
