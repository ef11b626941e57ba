/*
 * unwind.h — a user stack walked to its root, and code addresses named,
 * for one process, without stopping it: libdw (elfutils) only.
 *
 * An unwinder holds a Dwfl of the process's modules (its executable and
 * shared objects, as /proc/PID/maps lists them, opened through
 * /proc/PID/map_files or /proc/PID/root so containers and deleted files
 * work).  Given the registers and a copy of the top of the stack that a
 * perf sample (or /proc/TID/syscall with process_vm_readv) provides, it
 * steps from frame to caller with the module's call frame information
 * (.eh_frame, .debug_frame); where a module has none, by its frame
 * pointer.  Memory outside the stack copy is read from the target with
 * process_vm_readv, bounded.
 *
 * Symbols come from .symtab, .dynsym, .gnu_debugdata (MiniDebugInfo) and
 * separate debug files when installed, whatever libdw finds; an address no
 * symbol covers is named by module and file offset, never by a wrong name.
 *
 * The process is read through its /proc directory fd (the caller's
 * vt_pid_open, so a reused pid cannot swap the process under us): maps,
 * root/<path>, map_files/<range>.  This module does not include src/proc
 * (same layer), so it parses the few maps fields it needs itself
 * (elf/code_map.h).
 *
 * Not thread-safe; one unwinder per process.  Errors:
 *   VT_E_NOPROC, VT_E_GONE (exited), VT_E_PERM (maps unreadable), VT_E_NOMEM, VT_E_IO
 */
#ifndef VT_ELF_UNWIND_H
#define VT_ELF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* How the step from a frame to its caller was found (and how a module was unwound). */
enum vt_unwind_method {
	VT_UNWIND_NONE = 0,       /* the leaf: nothing to unwind, or not unwound */
	VT_UNWIND_DWARF,          /* call frame information (.eh_frame / .debug_frame) via libdw */
	VT_UNWIND_FP,             /* frame pointers (the kernel's user callchain, or a walk of rbp) */
	VT_UNWIND_KERNEL,         /* the kernel's own callchain (kernel frames) */
	VT_UNWIND__COUNT
};
const char *vt_unwind_method_name(enum vt_unwind_method m);   /* "dwarf", "frame pointers", ... */

/* Where a module's names come from. */
enum vt_sym_source {
	VT_SYMS_NONE = 0,    /* no symbol table: frames are module+offset */
	VT_SYMS_DYNSYM,      /* .dynsym only (exported functions) */
	VT_SYMS_SYMTAB,      /* .symtab */
	VT_SYMS_MINIDEBUG,   /* .gnu_debugdata (MiniDebugInfo) */
	VT_SYMS_DEBUGFILE,   /* a separate debug file */
	VT_SYMS_KALLSYMS,    /* /proc/kallsyms */
};
const char *vt_sym_source_name(enum vt_sym_source s);

/* Where a module's DWARF (inline chains, source lines) comes from. */
enum vt_line_source {
	VT_LINES_UNKNOWN = 0,  /* not looked for */
	VT_LINES_NONE,         /* no DWARF: names only, no source lines or inlined frames */
	VT_LINES_OWN,          /* the module's own .debug_info */
	VT_LINES_DEBUGFILE,    /* a separate debug file (build ID, .gnu_debuglink) */
	VT_LINES_SPLIT,        /* split DWARF: skeleton units in the module, their
	                        * functions in .dwo files (gcc -gsplit-dwarf) */
};
const char *vt_line_source_name(enum vt_line_source s);   /* "none", "own", "debug file" */

/* Memory reads from the target per unwind (process_vm_readv of one aligned
 * 64-byte block each), beyond the stack copy. */
#define VT_UNWIND_TARGET_READS 64

/* x86-64 DWARF register numbers (the order libdw's initial registers take). */
enum vt_dwarf_reg {
	VT_DW_RAX, VT_DW_RDX, VT_DW_RCX, VT_DW_RBX, VT_DW_RSI, VT_DW_RDI, VT_DW_RBP, VT_DW_RSP,
	VT_DW_R8, VT_DW_R9, VT_DW_R10, VT_DW_R11, VT_DW_R12, VT_DW_R13, VT_DW_R14, VT_DW_R15,
	VT_DW_RIP,
	VT_DW_NREGS
};

/* Where to start: registers (those known, by mask) and the stack copy. */
struct vt_unwind_start {
	uint64_t regs[VT_DW_NREGS];
	uint32_t known;           /* bit i: regs[i] is valid; RIP and RSP are needed */
	const uint8_t *stack;     /* bytes of the target's stack from stack_addr; may be NULL */
	size_t stack_len;
	uint64_t stack_addr;      /* the target address of stack[0] (= RSP at the sample) */
	bool read_target;         /* read memory outside the copy from the target (bounded) */
};

/* A start from a blocked thread's stack pointer and pc alone (/proc/TID/syscall gives
 * them) and len bytes of its stack copied from sp; memory outside the copy is read from
 * the target.  The wall-clock profiler and the lock probe start from it. */
void vt_unwind_start_blocked(struct vt_unwind_start *st, uint64_t sp, uint64_t pc, const uint8_t *stack,
			     size_t len);

/* Why the walk ended. */
enum vt_unwind_end {
	VT_UNWIND_END_ROOT = 0,   /* reached the outermost frame (return address 0, _start) */
	VT_UNWIND_END_STACK,      /* needed memory beyond the stack copy */
	VT_UNWIND_END_NOINFO,     /* a frame with neither CFI nor a usable frame pointer */
	VT_UNWIND_END_NOMODULE,   /* a pc in no module (JIT code, corrupted stack) */
	VT_UNWIND_END_DEPTH,      /* max frames */
	VT_UNWIND_END_ERROR,      /* libdw failed otherwise */
};

/* One frame: its pc and how the step to its caller was found (enum vt_unwind_method;
 * the outermost frame's is NONE).  method is DWARF when the module's CFI has an
 * entry covering the frame's pc, FP when libdw had to fall back to the frame
 * pointer (a module or a function without CFI: hand-written assembly, JIT code). */
struct vt_unwind_frame {
	uint64_t pc;              /* the leaf's ip; callers' return addresses as they are */
	uint8_t method;
	uint8_t activation;       /* pc is an exact instruction (the leaf, or a frame a signal
	                           * interrupted), not a return address: symbolize with
	                           * is_return = !activation */
};

/* The module name of executable anonymous memory (a JIT's code). */
#define VT_UNWIND_ANON_MODULE "[anon]"

/* A symbolized address.  The strings belong to the unwinder, valid until it is refreshed
 * or freed. */
struct vt_unwind_sym {
	const char *func;         /* NULL: no symbol covers pc (a sized symbol whose range
	                           * holds it; the nearest symbol is never guessed) */
	uint64_t func_off;        /* pc - the symbol's start, 0 when func is NULL */
	const char *module;       /* basename as mapped; VT_UNWIND_ANON_MODULE for
	                           * executable memory of no file; NULL: nothing
	                           * executable is mapped at pc */
	const char *path;         /* the mapped path ("" for anonymous); NULL as module */
	uint64_t module_off;      /* pc - load bias (the file's own address); in
	                           * anonymous memory, pc - its mapping's start */
	uint8_t symbols;          /* enum vt_sym_source: where the module's names come from */
	bool has_cfi;             /* the module has call frame information */
};

/* What the unwinder did, for the profile's "how it sampled". */
struct vt_unwind_stats {
	uint64_t unwinds;         /* walks (a vt_unwind call that looks for RBP makes more) */
	uint64_t rbp_found;       /* vt_unwind calls that found a blocked thread's RBP on its stack */
	uint64_t frames;          /* frames returned */
	uint64_t target_reads;    /* process_vm_readv calls (memory outside the stack copies) */
	uint64_t stack_misses;    /* reads the stack copy could not serve and were not read */
	uint64_t lookups;         /* vt_unwind_symbolize calls */
	uint64_t cache_hits;      /* ... answered from the pc cache */
	uint32_t modules;         /* code modules reported now */
	uint32_t reports;         /* times the module list was (re)reported */
};

struct vt_unwinder;

/*
 * An unwinder for process pid, whose /proc directory is pid_fd (duplicated:
 * the caller keeps its fd).  Reads maps and reports the code modules; files
 * are opened only when an address in them is first unwound or named.
 */
int vt_unwinder_open(int pid_fd, pid_t pid, struct vt_unwinder **out, struct vt_err *err);

/* Re-read the module list when the process mapped or unmapped code (dlopen).  Cheap
 * when nothing changed (the maps file's executable mappings are compared): one read
 * of maps.  When they changed, the pc cache is emptied and strings handed out
 * before are no longer valid.  VT_E_GONE when the process exited. */
int vt_unwinder_refresh(struct vt_unwinder *uw, struct vt_err *err);

/* The text of /proc/PID/maps as the last read of it (open or refresh) left it,
 * NUL-terminated, *len bytes, for a caller that needs the whole of maps about
 * then (a read costs a millisecond on a process of thousands of mappings);
 * NULL when that read failed.  Valid until the next refresh or close. */
const char *vt_unwinder_maps_text(const struct vt_unwinder *uw, size_t *len);

/* Walk thread tid's stack from start; writes up to max frames, leaf first, and why
 * the walk ended (why may be NULL).  0 frames when start lacks RIP or RSP. */
size_t vt_unwind(struct vt_unwinder *uw, pid_t tid, const struct vt_unwind_start *start,
		 struct vt_unwind_frame *frames, size_t max, enum vt_unwind_end *why);

/* Name pc (a return address is looked up at pc - 1 by the caller's choice: is_return).
 * Answers are cached by address.  False when pc is in no module (out then has
 * func, module and path NULL and module_off = pc). */
bool vt_unwind_symbolize(struct vt_unwinder *uw, uint64_t pc, bool is_return,
			 struct vt_unwind_sym *out);

/*
 * Name a data address: the object symbol (a static or global variable) of
 * the module whose image holds it, its .bss beyond the file's last page
 * included.  out->func is the object's name and func_off the offset into
 * it; false when no sized object symbol covers addr (never the nearest
 * one guessed) or no module is mapped below it.  Names come from the
 * symbol tables libdw reads: .symtab, .dynsym, a separate debug file.
 */
bool vt_unwind_data_symbol(struct vt_unwinder *uw, uint64_t addr, struct vt_unwind_sym *out);

/*
 * The module whose image holds a data address, where no symbol names it (a
 * stripped executable's static variable): true when addr lies in the
 * module's loaded segments in memory (p_memsz: its .bss beyond the file's
 * last page, an anonymous mapping, included); out->module, path and
 * module_off (the file's virtual address: addr2line or gdb on the file
 * name it) are set, func is NULL.
 */
bool vt_unwind_data_module(struct vt_unwinder *uw, uint64_t addr, struct vt_unwind_sym *out);

/*
 * One function of a pc's inline chain, from the module's DWARF (its own or a
 * separate debug file): the functions the compiler inlined at pc, innermost
 * first, and last the function the code belongs to.  Strings belong to the
 * unwinder, valid until it is refreshed or freed.
 */
struct vt_unwind_inline {
	const char *func;         /* the linkage name (mangled: demangle it) when DWARF has
	                           * one, else its DWARF name; NULL unknown */
	const char *file;         /* the source file of line, as DWARF spells it; NULL unknown */
	uint32_t line;            /* the innermost: pc's own line; the others: the line of
	                           * the call the next inner one was inlined at; 0 unknown */
	const char *decl_file;    /* where the function is defined; NULL unknown */
	uint32_t decl_line;
};

/* Most functions of one pc's inline chain returned. */
#define VT_UNWIND_MAX_INLINE 16

/*
 * The inline chain and source lines of pc (at pc - 1 when is_return): writes
 * up to max functions, innermost first, the last the function whose code it
 * is; a chain of one is code that nothing was inlined at.  0 when the module
 * has no DWARF for pc (no debug information: names then come only from
 * vt_unwind_symbolize).  Answers are not cached: callers cache per pc.
 */
size_t vt_unwind_source(struct vt_unwinder *uw, uint64_t pc, bool is_return,
			struct vt_unwind_inline *out, size_t max);

/*
 * Which debug information a module has, looked for once per module (libdw
 * opens a separate debug file then, and reads no more of it until asked):
 * where its source lines come from, the separate debug file read for its
 * names or lines, and a file found under its debug file's name that is not
 * its own (another build ID, or the wrong CRC), which is never read, or a
 * split DWARF file (.dwo) that is not where the module says (its unit then
 * has source lines but no inlined frames).
 * Strings belong to the unwinder, valid until it is freed.
 */
struct vt_unwind_debug {
	uint8_t lines;            /* enum vt_line_source */
	const char *debug_file;   /* the separate debug file used; NULL none */
	const char *ignored;      /* the last debug file refused, or a .dwo not found; NULL none */
	const char *ignored_why;  /* "its build ID is not the module's", "... not found", ... */
};

/* The debug information of the module holding pc; false when pc is in no module. */
bool vt_unwind_module_debug(struct vt_unwinder *uw, uint64_t pc, struct vt_unwind_debug *out);

void vt_unwinder_get_stats(const struct vt_unwinder *uw, struct vt_unwind_stats *out);

/* Close the Dwfl and the files; sets *uw to NULL.  NULL or *uw NULL is a no-op. */
void vt_unwinder_free(struct vt_unwinder **uw);

#endif
