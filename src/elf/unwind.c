/*
 * unwind.c — stacks walked and code addresses named with libdwfl (see
 * unwind.h).
 *
 * One Dwfl per process.  Its modules come from our own reading of maps
 * (elf/code_map.h); find_elf opens each file only when an address in it is
 * first needed, through the process's /proc directory.  The thread state is
 * ours too: dwfl_attach_state with callbacks that serve exactly one thread,
 * the one vt_unwind was given, whose registers and stack come from a sample
 * instead of from ptrace.  Nothing here stops the target.
 *
 * libdwfl steps a frame with the CFI of the pc's module (.eh_frame, then
 * .debug_frame) and, where no entry covers the pc, falls back to the x86-64
 * backend's frame-pointer step (rbp chain).  Which one it used is not told,
 * so a frame's method is worked out the same way: DWARF when the CFI has an
 * entry for the pc, FP otherwise.
 */
#include "elf/unwind.h"

#include "base/buf.h"
#include "base/gzip.h"
#include "elf/code_map.h"
#include "elf/elf_libs.h"
#include "elf/fde_table.h"
#include "elf/plt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define CACHE_SLOTS 4096u          /* pc cache entries (a power of two) */
#define CACHE_FULL (CACHE_SLOTS / 4 * 3)   /* emptied when this many are used */
#define BLOCK 64u                  /* bytes per target read, aligned: never crosses a page */
#define BLOCKS 8u                  /* target blocks kept during one unwind */
#define VDSO_MAX (1u << 20)
#define MAPS_MAX (64u << 20)

const char *vt_unwind_method_name(enum vt_unwind_method m)
{
	switch (m) {
	case VT_UNWIND_NONE: return "none";
	case VT_UNWIND_DWARF: return "dwarf";
	case VT_UNWIND_FP: return "frame pointers";
	case VT_UNWIND_KERNEL: return "kernel";
	case VT_UNWIND__COUNT: break;
	}
	return "?";
}

const char *vt_sym_source_name(enum vt_sym_source s)
{
	switch (s) {
	case VT_SYMS_NONE: return "none";
	case VT_SYMS_DYNSYM: return "dynsym";
	case VT_SYMS_SYMTAB: return "symtab";
	case VT_SYMS_MINIDEBUG: return "minidebuginfo";
	case VT_SYMS_DEBUGFILE: return "debug file";
	case VT_SYMS_KALLSYMS: return "kallsyms";
	}
	return "?";
}

const char *vt_line_source_name(enum vt_line_source s)
{
	switch (s) {
	case VT_LINES_UNKNOWN: return "unknown";
	case VT_LINES_NONE: return "none";
	case VT_LINES_OWN: return "own";
	case VT_LINES_DEBUGFILE: return "debug file";
	case VT_LINES_SPLIT: return "split DWARF";
	}
	return "?";
}

/* What we learn about a module, once (libdwfl's userdata points here). */
struct mod_info {
	struct vt_unwinder *uw;
	size_t idx;                /* into uw->map.v */
	bool known;                /* the fields below are filled */
	bool has_cfi;
	uint8_t syms;              /* enum vt_sym_source */
	uint64_t bias;             /* load bias: pc - bias is the file's address */
	bool fde_read;             /* fde was looked for (it points into libdw's Elf data) */
	struct vt_fde_table fde;   /* the unwind table's index: where functions start */
	/* a debug file find_debuginfo found under the module's name and refused
	 * (a kept_name; kept across refreshes, as libdw keeps what it loaded) */
	const char *debug_ignored, *debug_ignored_why;
};

enum { PC_SYM = 1, PC_FDE = 2, PC_HAS_FDE = 4 };

/* A function's DIE found by address (vt_unwind_source): the next address in it
 * is looked for inside it, not in its whole compile unit again. */
struct func_range {
	Dwfl_Module *mod;          /* NULL: unused */
	Dwarf_Addr low, high;      /* DWARF addresses, [low, high) */
	Dwarf_Off off;             /* the DW_TAG_subprogram's offset in .debug_info */
	Dwarf *dwarf;
};
#define FUNC_RANGES 64

/* One looked-up address (a pc, or a return address - 1). */
struct pc_entry {
	uint64_t addr;             /* 0: empty slot */
	uint32_t mod;              /* index + 1 into map.v; 0: in no module */
	uint8_t flags;             /* PC_* done */
	const char *func;          /* libdw's string, NULL unknown */
	uint64_t func_start;
};

struct block {
	uint64_t addr;             /* BLOCK-aligned; valid when used */
	bool used;
	uint8_t bytes[BLOCK];
};

/* A symbol name without its version ("memcpy" of "memcpy@@GLIBC_2.14"), kept
 * until the modules are reported again. */
struct unversioned {
	const char *orig;          /* libdw's string; NULL: empty slot */
	char *copy;
};

struct kept_name {
	struct kept_name *next;
	char name[];
};

struct vdso_copy {
	struct vdso_copy *next;
	size_t len;
	unsigned char bytes[];
};

struct vt_unwinder {
	pid_t pid;
	int pid_fd, maps_fd;
	Dwfl *dwfl;
	Elf *arch_elf;             /* a bare x86-64 ELF header: libdw's backend for the thread state */
	Elf64_Ehdr arch_ehdr;
	struct vt_code_map map;
	struct mod_info *info;     /* parallel to map.v */
	bool reported;
	struct vt_buf maps;
	bool maps_read;           /* maps holds the whole text of the last read */
	struct vdso_copy *vdsos;   /* images libdw's vdso Elf reads from: kept until free */
	struct pc_entry *cache;
	size_t cache_used;
	struct unversioned *names; /* open addressing by orig, names_cap a power of two */
	size_t names_used, names_cap;
	struct kept_name *kept;    /* PLT stub names (a few hundred at most), owned */
	struct func_range funcs[FUNC_RANGES];   /* functions found in DWARF lately */
	unsigned next_func;
	/* the unwind in progress */
	const struct vt_unwind_start *start;
	pid_t tid;
	unsigned reads_left;
	unsigned misses;           /* reads not served since the last frame was handed out */
	struct block blocks[BLOCKS];
	unsigned next_block;
	struct vt_unwind_stats stats;
};

/* ---- the pc cache ---- */

static struct pc_entry *cache_get(struct vt_unwinder *uw, uint64_t addr)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 40) & (CACHE_SLOTS - 1);

	if (addr == 0)
		addr = 1;   /* 0 marks empty slots; pc 0 is in no module anyway */
	for (;; i = (i + 1) & (CACHE_SLOTS - 1)) {
		struct pc_entry *e = &uw->cache[i];

		if (e->addr == addr)
			return e;
		if (e->addr == 0)
			break;
	}
	if (uw->cache_used >= CACHE_FULL) {
		memset(uw->cache, 0, CACHE_SLOTS * sizeof(*uw->cache));
		uw->cache_used = 0;
		return cache_get(uw, addr);
	}
	uw->cache[i].addr = addr;
	uw->cache_used++;
	return &uw->cache[i];
}

static void cache_clear(struct vt_unwinder *uw)
{
	memset(uw->cache, 0, CACHE_SLOTS * sizeof(*uw->cache));
	uw->cache_used = 0;
	memset(uw->funcs, 0, sizeof(uw->funcs));
}

static void names_clear(struct vt_unwinder *uw)
{
	size_t i;

	for (i = 0; i < uw->names_cap; i++)
		free(uw->names[i].copy);
	free(uw->names);
	uw->names = NULL;
	uw->names_used = uw->names_cap = 0;
}

static struct unversioned *names_slot(struct unversioned *v, size_t cap, const char *orig)
{
	size_t i = (size_t)(((uintptr_t)orig * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);

	while (v[i].orig && v[i].orig != orig)
		i = (i + 1) & (cap - 1);
	return &v[i];
}

/* name without "@VERSION" / "@@VERSION"; name itself when it has none or on
 * allocation failure (a versioned name is still the right name). */
static const char *unversioned(struct vt_unwinder *uw, const char *name)
{
	const char *at = strchr(name, '@');
	struct unversioned *slot;
	size_t i;

	if (!at || at == name)
		return name;
	if (uw->names_used * 2 >= uw->names_cap) {
		size_t cap = uw->names_cap ? uw->names_cap * 2 : 256;
		struct unversioned *v = calloc(cap, sizeof(*v));

		if (!v)
			return name;
		for (i = 0; i < uw->names_cap; i++)
			if (uw->names[i].orig)
				*names_slot(v, cap, uw->names[i].orig) = uw->names[i];
		free(uw->names);
		uw->names = v;
		uw->names_cap = cap;
	}
	slot = names_slot(uw->names, uw->names_cap, name);
	if (!slot->orig) {
		slot->copy = strndup(name, (size_t)(at - name));
		if (!slot->copy)
			return name;
		slot->orig = name;
		uw->names_used++;
	}
	return slot->copy;
}

/* ---- finding and opening the files ---- */

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* The file of cm as the process sees it: PID/root/<path> (its mount namespace),
 * else PID/map_files/<range> (deleted files; needs CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE), else the host's path if it is the very file mapped. */
static int open_module(const struct vt_unwinder *uw, const struct vt_code_module *cm)
{
	char rel[PATH_MAX + 16];
	struct stat st;
	int fd;

	if (!cm->deleted && cm->path[0] == '/' && strlen(cm->path) < PATH_MAX) {
		snprintf(rel, sizeof(rel), "root%s", cm->path);
		fd = openat(uw->pid_fd, rel, OPEN_FLAGS);
		if (fd >= 0)
			return fd;
	}
	snprintf(rel, sizeof(rel), "map_files/%" PRIx64 "-%" PRIx64, cm->map_start, cm->map_end);
	fd = openat(uw->pid_fd, rel, OPEN_FLAGS);
	if (fd >= 0 || cm->deleted || cm->path[0] != '/')
		return fd;
	fd = open(cm->path, OPEN_FLAGS);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == cm->inode &&
	    major(st.st_dev) == cm->dev_major && minor(st.st_dev) == cm->dev_minor)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The vdso, copied out of the target (it is the same image in every process,
 * but its address is the target's). */
static Elf *vdso_elf(struct vt_unwinder *uw, const struct vt_code_module *cm)
{
	size_t len = cm->high - cm->low;
	struct vdso_copy *v;
	struct iovec local, remote;
	Elf *e;

	if (len == 0 || len > VDSO_MAX)
		return NULL;
	v = malloc(sizeof(*v) + len);
	if (!v)
		return NULL;
	local = (struct iovec){ v->bytes, len };
	remote = (struct iovec){ (void *)(uintptr_t)cm->low, len };
	if (process_vm_readv(uw->pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
		free(v);
		return NULL;
	}
	v->len = len;
	v->next = uw->vdsos;
	uw->vdsos = v;
	e = elf_memory((char *)v->bytes, len);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		e = NULL;
	}
	return e;
}

/* Dwfl_Callbacks.find_elf: our module's file, read with pread (no mmap: a file
 * truncated under us cannot SIGBUS), or the vdso from memory. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct mod_info *mi = *userdata;
	const struct vt_code_module *cm;
	Elf *e;
	int fd;

	(void)mod;
	(void)modname;
	(void)base;
	*file_name = NULL;
	*elfp = NULL;
	if (!mi)
		return -1;
	cm = &mi->uw->map.v[mi->idx];
	if (cm->vdso) {
		*elfp = vdso_elf(mi->uw, cm);
		return -1;
	}
	fd = open_module(mi->uw, cm);
	if (fd < 0)
		return -1;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(fd);
		return -1;
	}
	*elfp = e;
	*file_name = strdup(cm->path);   /* NULL is allowed: only messages use it */
	return fd;
}

static const char *kept_name(struct vt_unwinder *uw, const char *name);

/* A separate debug file larger than this is not read. */
#define DEBUG_FILE_MAX ((off_t)4 << 30)

/* path opened for reading when it is a regular file of at most DEBUG_FILE_MAX
 * bytes (never a device or a FIFO planted under a debug file's name); else -1. */
static int open_debug_file(const char *path)
{
	struct stat st;
	int fd = open(path, OPEN_FLAGS);

	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > DEBUG_FILE_MAX)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Whether the debug file open at fd belongs to mod: the same build ID when the
 * module has one, else the CRC32 its .gnu_debuglink gives of the whole file.
 * *why says what differs when it does not. */
static bool debug_file_matches(Dwfl_Module *mod, int fd, GElf_Word crc, const char **why)
{
	const unsigned char *id = NULL;
	const void *their_id = NULL;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &id, &vaddr);

	if (len > 0) {
		Elf *e = elf_begin(fd, ELF_C_READ, NULL);
		ssize_t their = e ? dwelf_elf_gnu_build_id(e, &their_id) : -1;
		bool same = their == len && memcmp(id, their_id, (size_t)len) == 0;

		if (e)
			elf_end(e);
		*why = their > 0 ? "its build ID is not the module's" : "it has no build ID; the module has one";
		return same;
	}
	uint32_t sum = 0;
	unsigned char buf[65536];
	off_t at = 0;
	ssize_t n;

	if (vt_zlib_load(NULL)) {
		*why = "zlib (zlib1g), which checks its CRC32, is not installed";
		return false;
	}
	while ((n = pread(fd, buf, sizeof(buf), at)) > 0) {
		sum = vt_crc32(sum, buf, (size_t)n);
		at += n;
	}
	*why = "its CRC32 is not the one the module's .gnu_debuglink gives";
	return n == 0 && (GElf_Word)sum == crc;
}

/*
 * Dwfl_Callbacks.find_debuginfo: a separate debug file by build ID
 * (/usr/lib/debug/.build-id/xx/...debug, what Debian's -dbgsym packages
 * install), else by the module's .gnu_debuglink name where gdb looks for it:
 * /usr/lib/debug/DIR/NAME, DIR/.debug/NAME and DIR/NAME, DIR the module's
 * directory; a file that is not the module's (another build ID or CRC) is
 * ignored.  A debug file's dwz part (its .gnu_debugaltlink, an absolute path
 * under /usr/lib/debug) is opened where it says.  Bounded work, and never debuginfod's network lookups
 * (dwfl_standard_find_debuginfo tries those when DEBUGINFOD_URLS is set).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc,
			  char **debuginfo_file_name)
{
	struct mod_info *mi = *userdata;
	const struct vt_code_module *cm;
	char dir[PATH_MAX], path[PATH_MAX];
	const char *slash, *why = NULL;
	int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
					      crc, debuginfo_file_name);

	if (fd >= 0 || !debuglink || !*debuglink || !mi)
		return fd;
	if (debuglink[0] == '/') {
		/* a dwz file (.gnu_debugaltlink: /usr/lib/debug/.dwz/...), shared by
		 * several packages' debug files; libdw checks its build ID itself */
		if (strncmp(debuglink, "/usr/lib/debug/", 15) != 0 || strstr(debuglink, "/../") ||
		    (fd = open_debug_file(debuglink)) < 0)
			return -1;
		*debuginfo_file_name = strdup(debuglink);
		return fd;
	}
	if (strchr(debuglink, '/'))
		return -1;
	cm = &mi->uw->map.v[mi->idx];
	if (!cm->path || cm->path[0] != '/' || !(slash = strrchr(cm->path, '/')) ||
	    (size_t)(slash - cm->path) >= sizeof(dir))
		return -1;
	memcpy(dir, cm->path, (size_t)(slash - cm->path));
	dir[slash - cm->path] = '\0';
	for (int i = 0; i < 3; i++) {
		static const char *const before[] = { "/usr/lib/debug", "", "" },
				   *const after[] = { "", "/.debug", "" };
		int n = snprintf(path, sizeof(path), "%s%s%s/%s", before[i], dir, after[i], debuglink);

		if (n < 0 || (size_t)n >= sizeof(path) || strcmp(path, cm->path) == 0)
			continue;
		fd = open_debug_file(path);
		if (fd < 0)
			continue;
		if (debug_file_matches(mod, fd, crc, &why)) {
			*debuginfo_file_name = strdup(path);
			return fd;
		}
		close(fd);
		/* said per module: a stale debug file is why its lines are missing */
		mi->debug_ignored = kept_name(mi->uw, path);
		mi->debug_ignored_why = why;
	}
	return -1;
}

/* libdw's own, reached through its table (elf/elf_libs.h) once libdw is open */
static int section_address(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			   const char *secname, GElf_Word shndx, const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	return dwfl_offline_section_address(mod, userdata, modname, base, secname, shndx, shdr, addr);
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = section_address,
	.debuginfo_path = NULL,
};

/* ---- the thread state: one thread, registers and stack from the sample ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct vt_unwinder *uw = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = uw;
	return uw->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct vt_unwinder *uw = arg;

	(void)dwfl;
	*thread_argp = uw;
	return tid == uw->tid;
}

static bool read_block(struct vt_unwinder *uw, uint64_t addr, uint64_t *out)
{
	uint64_t base = addr & ~(uint64_t)(BLOCK - 1);
	struct iovec local, remote;
	struct block *b;
	unsigned i;

	if (addr - base > BLOCK - sizeof(*out))
		return false;   /* straddles two blocks: unaligned, not a saved register */
	for (i = 0; i < BLOCKS; i++) {
		b = &uw->blocks[i];
		if (b->used && b->addr == base) {
			memcpy(out, b->bytes + (addr - base), sizeof(*out));
			return true;
		}
	}
	if (uw->reads_left == 0)
		return false;
	uw->reads_left--;
	uw->stats.target_reads++;
	b = &uw->blocks[uw->next_block++ % BLOCKS];
	b->used = false;
	local = (struct iovec){ b->bytes, BLOCK };
	remote = (struct iovec){ (void *)(uintptr_t)base, BLOCK };
	if (process_vm_readv(uw->pid, &local, 1, &remote, 1, 0) != (ssize_t)BLOCK)
		return false;
	b->used = true;
	b->addr = base;
	memcpy(out, b->bytes + (addr - base), sizeof(*out));
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct vt_unwinder *uw = arg;
	const struct vt_unwind_start *s = uw->start;
	uint64_t v;

	(void)dwfl;
	if (s->stack && s->stack_len >= sizeof(v) && addr >= s->stack_addr &&
	    addr - s->stack_addr <= s->stack_len - sizeof(v)) {
		memcpy(&v, s->stack + (addr - s->stack_addr), sizeof(v));
		*result = v;
		return true;
	}
	if (s->read_target && read_block(uw, addr, &v)) {
		*result = v;
		return true;
	}
	uw->misses++;
	uw->stats.stack_misses++;
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct vt_unwinder *uw = arg;
	const struct vt_unwind_start *s = uw->start;
	Dwarf_Word vals[VT_DW_NREGS];
	int i = 0, j;

	while (i < VT_DW_NREGS) {
		if (!(s->known & (1u << i))) {
			i++;
			continue;
		}
		for (j = i; j < VT_DW_NREGS && (s->known & (1u << j)); j++)
			vals[j - i] = s->regs[j];
		if (!dwfl_thread_state_registers(thread, i, (unsigned)(j - i), vals))
			return false;
		i = j;
	}
	dwfl_thread_state_register_pc(thread, s->regs[VT_DW_RIP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
	.detach = NULL,
	.thread_detach = NULL,
};

/* ---- modules ---- */

static struct mod_info *mod_info_of(Dwfl_Module *mod)
{
	void **ud = NULL;

	if (!mod || !dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) || !ud)
		return NULL;
	return *ud;
}

/* The module whose mappings hold addr, or NULL.  libdw's dwfl_addrmodule()
 * gives the highest module for every address above it too (a libc pc of an
 * image exec'd since the last refresh, a garbage return address): such an
 * address is in no module. */
static Dwfl_Module *module_at(struct vt_unwinder *uw, uint64_t addr, struct mod_info **mip)
{
	Dwfl_Module *mod = dwfl_addrmodule(uw->dwfl, addr);
	struct mod_info *mi = mod_info_of(mod);

	if (mip)
		*mip = NULL;
	if (!mi || mi->uw != uw || mi->idx >= uw->map.n || addr < uw->map.v[mi->idx].low ||
	    addr >= uw->map.v[mi->idx].high)
		return NULL;
	if (mip)
		*mip = mi;
	return mod;
}

/* Where mod's names come from, judged from its main file's sections and what
 * libdw loaded: a .symtab in the file; else a separate debug file (libdw looks
 * for one only when the file has no .symtab); else more symbols than .dynsym
 * holds with .gnu_debugdata present (libdw decompressed it); else .dynsym. */
static uint8_t sym_source(Dwfl_Module *mod, Elf *elf)
{
	size_t shstrndx, nsymtab = 0, ndynsym = 0;
	bool minidebug = false;
	const char *debugfile = NULL;
	Elf_Scn *scn = NULL;
	int n = dwfl_module_getsymtab(mod);

	if (n <= 0 || !elf)
		return VT_SYMS_NONE;
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		shstrndx = 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && sh.sh_entsize)
			nsymtab += sh.sh_size / sh.sh_entsize;
		else if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize)
			ndynsym += sh.sh_size / sh.sh_entsize;
		name = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && strcmp(name, ".gnu_debugdata") == 0)
			minidebug = true;
	}
	if (nsymtab > 1)
		return VT_SYMS_SYMTAB;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile)
		return VT_SYMS_DEBUGFILE;
	if (minidebug && (size_t)n > ndynsym)
		return VT_SYMS_MINIDEBUG;
	return ndynsym > 1 ? VT_SYMS_DYNSYM : VT_SYMS_NONE;
}

static void learn_module(struct mod_info *mi, Dwfl_Module *mod)
{
	const struct vt_code_module *cm = &mi->uw->map.v[mi->idx];
	Dwarf_Addr bias = 0, cbias;
	Elf *elf;

	if (mi->known)
		return;
	mi->known = true;
	elf = dwfl_module_getelf(mod, &bias);
	mi->bias = elf ? bias : cm->low;
	mi->syms = sym_source(mod, elf);
	mi->has_cfi = dwfl_module_eh_cfi(mod, &cbias) || dwfl_module_dwarf_cfi(mod, &cbias);
}

/* Has the module's .eh_frame (eh) or .debug_frame an entry for addr? */
static bool cfi_covers(Dwfl_Module *mod, bool eh, Dwarf_Addr addr)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias = 0;
	Dwarf_CFI *cfi = eh ? dwfl_module_eh_cfi(mod, &bias) : dwfl_module_dwarf_cfi(mod, &bias);

	if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &frame) != 0)
		return false;
	free(frame);
	return true;
}

/* Does the CFI at addr say the return address is undefined: the outermost
 * frame (_start, a thread's start)?  libdw ends the walk the same way when a
 * return address could not be worked out (a register it needed was unknown),
 * so a walk that ended without this is not taken for a root. */
static bool ra_undefined(Dwfl_Module *mod, bool eh, Dwarf_Addr addr)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias = 0;
	Dwarf_CFI *cfi = eh ? dwfl_module_eh_cfi(mod, &bias) : dwfl_module_dwarf_cfi(mod, &bias);
	Dwarf_Op ops_mem[3], *ops = NULL;
	size_t nops = 1;
	bool undefined = false;
	int ra;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &frame) != 0)
		return false;
	ra = dwarf_frame_info(frame, NULL, NULL, NULL);
	/* libdw: undefined is no operations in ops_mem; same value is ops NULL */
	if (ra >= 0 && dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) == 0)
		undefined = nops == 0 && ops == ops_mem;
	free(frame);
	return undefined;
}

static bool is_root(struct vt_unwinder *uw, uint64_t addr)
{
	Dwfl_Module *mod = module_at(uw, addr, NULL);

	if (!mod)
		return false;
	if (cfi_covers(mod, true, addr))
		return ra_undefined(mod, true, addr);
	return ra_undefined(mod, false, addr);
}

/* Does CFI cover addr (a pc, or a return address - 1)?  Cached. */
static bool has_fde(struct vt_unwinder *uw, uint64_t addr)
{
	struct pc_entry *e = cache_get(uw, addr);
	Dwfl_Module *mod;

	if (!(e->flags & PC_FDE)) {
		e->flags |= PC_FDE;
		mod = module_at(uw, addr, NULL);
		if (mod && (cfi_covers(mod, true, addr) || cfi_covers(mod, false, addr)))
			e->flags |= PC_HAS_FDE;
	}
	return e->flags & PC_HAS_FDE;
}

static int report(struct vt_unwinder *uw, struct vt_code_map *map, struct vt_err *err)
{
	struct mod_info *info = calloc(map->n ? map->n : 1, sizeof(*info));
	char name[PATH_MAX + 16];
	size_t i;

	if (!info)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reporting modules");
	dwfl_report_begin(uw->dwfl);
	for (i = 0; i < map->n; i++) {
		const struct vt_code_module *cm = &map->v[i];
		Dwfl_Module *mod;
		void **ud = NULL;

		info[i].uw = uw;
		info[i].idx = i;
		/* the name tells a deleted file from its replacement at the same range */
		snprintf(name, sizeof(name), "%s%s", cm->vdso ? "[vdso]" : cm->path,
			 cm->deleted ? " (deleted)" : "");
		mod = dwfl_report_module(uw->dwfl, name, cm->low, cm->high);
		if (mod && dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && ud) {
			/* a module reported before keeps what libdw loaded for it,
			 * and with that what its debug file search refused */
			const struct mod_info *before = *ud;

			if (before) {
				info[i].debug_ignored = before->debug_ignored;
				info[i].debug_ignored_why = before->debug_ignored_why;
			}
			*ud = &info[i];
		}
	}
	if (dwfl_report_end(uw->dwfl, NULL, NULL) != 0) {
		free(info);
		return vt_err_set(err, VT_E_FAIL, 0, "libdw: cannot report modules: %s",
				  dwfl_errmsg(-1));
	}
	vt_code_map_release(&uw->map);
	free(uw->info);
	uw->map = *map;
	memset(map, 0, sizeof(*map));
	uw->info = info;
	uw->reported = true;
	cache_clear(uw);
	names_clear(uw);
	uw->stats.reports++;
	uw->stats.modules = (uint32_t)uw->map.n;
	return VT_OK;
}

static int read_maps(struct vt_unwinder *uw, struct vt_err *err)
{
	ssize_t n;
	int e;
	bool reopened = false;

	uw->maps_read = false;
again:
	vt_buf_reset(&uw->maps);
	if (lseek(uw->maps_fd, 0, SEEK_SET) < 0) {
		e = errno;
		return vt_err_set(err, vt_code_from_errno(e), e, "cannot rewind maps of %d: %s",
				  (int)uw->pid, strerror(e));
	}
	for (;;) {
		if (vt_buf_reserve(&uw->maps, 64 * 1024) ||
		    uw->maps.cap - 1 - uw->maps.len == 0)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "maps of %d larger than %u bytes",
					  (int)uw->pid, MAPS_MAX);
		n = read(uw->maps_fd, uw->maps.data + uw->maps.len, uw->maps.cap - 1 - uw->maps.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			return vt_err_set(err, vt_code_from_errno(e), e, "cannot read maps of %d: %s",
					  (int)uw->pid, strerror(e));
		}
		if (n == 0)
			break;
		uw->maps.len += (size_t)n;
		uw->maps.data[uw->maps.len] = '\0';
	}
	if (uw->maps.len == 0 && !reopened) {
		/* an open maps holds the memory it was opened on: after an exec it
		 * reads empty though the process lives; open it afresh, once */
		int fd = openat(uw->pid_fd, "maps", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			close(uw->maps_fd);
			uw->maps_fd = fd;
			reopened = true;
			goto again;
		}
	}
	if (uw->maps.len == 0)   /* an exited process's maps reads empty */
		return vt_err_set(err, VT_E_GONE, ESRCH, "process %d exited", (int)uw->pid);
	uw->maps_read = true;
	return VT_OK;
}

const char *vt_unwinder_maps_text(const struct vt_unwinder *uw, size_t *len)
{
	*len = uw->maps_read ? uw->maps.len : 0;
	return uw->maps_read ? uw->maps.data : NULL;
}

int vt_unwinder_refresh(struct vt_unwinder *uw, struct vt_err *err)
{
	struct vt_code_map map;
	int rc;

	if ((rc = read_maps(uw, err)) != VT_OK)
		return rc;
	if ((rc = vt_code_map_parse(uw->maps.data, uw->maps.len, &map, err)) != VT_OK)
		return rc;
	if (uw->reported && map.fingerprint == uw->map.fingerprint &&
	    map.exec_mappings == uw->map.exec_mappings && map.n == uw->map.n) {
		vt_code_map_release(&map);
		return VT_OK;
	}
	rc = report(uw, &map, err);
	vt_code_map_release(&map);
	return rc;
}

int vt_unwinder_open(int pid_fd, pid_t pid, struct vt_unwinder **out, struct vt_err *err)
{
	struct vt_unwinder *uw;
	int rc, e;

	*out = NULL;
	if ((rc = vt_libdw_load(err)))
		return rc;
	elf_version(EV_CURRENT);
	uw = calloc(1, sizeof(*uw));
	if (!uw)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
	uw->pid = pid;
	uw->maps_fd = -1;
	uw->maps = (struct vt_buf)VT_BUF_INIT(MAPS_MAX);
	uw->pid_fd = fcntl(pid_fd, F_DUPFD_CLOEXEC, 3);
	if (uw->pid_fd < 0) {
		e = errno;
		rc = vt_err_set(err, VT_E_IO, e, "cannot keep the directory of process %d: %s", (int)pid,
				strerror(e));
		goto fail;
	}
	uw->maps_fd = openat(uw->pid_fd, "maps", O_RDONLY | O_CLOEXEC);
	if (uw->maps_fd < 0) {
		e = errno;
		if (e == EACCES || e == EPERM) {
			rc = vt_err_set(err, VT_E_PERM, e, "cannot read the maps of process %d: %s",
					(int)pid, strerror(e));
			vt_err_hint(err, "unwinding another user's process needs root or "
					 "CAP_SYS_PTRACE (and kernel.yama.ptrace_scope allowing it): "
					 "run it with sudo, or once: sudo setcap "
					 "cap_sys_ptrace,cap_perfmon+ep /path/to/vitals");
		} else {
			rc = vt_err_set(err, e == ENOENT || e == ESRCH ? VT_E_NOPROC : VT_E_IO, e,
					"cannot open the maps of process %d: %s", (int)pid,
					strerror(e));
		}
		goto fail;
	}
	uw->cache = calloc(CACHE_SLOTS, sizeof(*uw->cache));
	uw->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!uw->cache || !uw->dwfl) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory");
		goto fail;
	}
	/* libdw picks its architecture backend for the thread state from an ELF
	 * header: this machine's, so that it does not depend on any module opening. */
	memcpy(uw->arch_ehdr.e_ident, ELFMAG, SELFMAG);
	uw->arch_ehdr.e_ident[EI_CLASS] = ELFCLASS64;
	uw->arch_ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	uw->arch_ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	uw->arch_ehdr.e_type = ET_CORE;
	uw->arch_ehdr.e_machine = EM_X86_64;
	uw->arch_ehdr.e_version = EV_CURRENT;
	uw->arch_ehdr.e_ehsize = sizeof(uw->arch_ehdr);
	uw->arch_elf = elf_memory((char *)&uw->arch_ehdr, sizeof(uw->arch_ehdr));
	if (!uw->arch_elf || !dwfl_attach_state(uw->dwfl, uw->arch_elf, pid, &thread_callbacks, uw)) {
		rc = vt_err_set(err, VT_E_FAIL, 0, "libdw cannot unwind x86-64 here: %s",
				dwfl_errmsg(-1));
		goto fail;
	}
	rc = vt_unwinder_refresh(uw, err);
	if (rc == VT_E_GONE)
		rc = vt_err_set(err, VT_E_NOPROC, ESRCH, "process %d exited", (int)pid);
	if (rc)
		goto fail;
	*out = uw;
	return VT_OK;
fail:
	vt_unwinder_free(&uw);
	return rc;
}

void vt_unwinder_free(struct vt_unwinder **puw)
{
	struct vt_unwinder *uw = puw ? *puw : NULL;

	if (!uw)
		return;
	if (uw->dwfl)
		dwfl_end(uw->dwfl);   /* before the vdso images its Elf reads */
	if (uw->arch_elf)
		elf_end(uw->arch_elf);
	while (uw->vdsos) {
		struct vdso_copy *next = uw->vdsos->next;

		free(uw->vdsos);
		uw->vdsos = next;
	}
	vt_code_map_release(&uw->map);
	free(uw->info);
	free(uw->cache);
	names_clear(uw);
	while (uw->kept) {
		struct kept_name *next = uw->kept->next;

		free(uw->kept);
		uw->kept = next;
	}
	vt_buf_release(&uw->maps);
	if (uw->maps_fd >= 0)
		close(uw->maps_fd);
	if (uw->pid_fd >= 0)
		close(uw->pid_fd);
	free(uw);
	*puw = NULL;
}

/* ---- walking ---- */

struct walk {
	struct vt_unwinder *uw;
	struct vt_unwind_frame *frames;
	size_t n, max;
	enum vt_unwind_end why;    /* when the callback stops the walk */
};

static uint64_t lookup_addr(const struct vt_unwind_frame *f)
{
	return f->activation || f->pc == 0 ? f->pc : f->pc - 1;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct walk *w = arg;
	struct vt_unwinder *uw = w->uw;
	unsigned missed = uw->misses;   /* during the step that produced this frame */
	Dwarf_Addr pc;
	bool act = false;

	uw->misses = 0;
	if (w->n) {
		struct vt_unwind_frame *prev = &w->frames[w->n - 1];

		prev->method = has_fde(uw, lookup_addr(prev)) ? VT_UNWIND_DWARF : VT_UNWIND_FP;
		/* CFI covered the pc but a read failed: libdw then tried the frame
		 * pointer, whose answer in CFI-built code is a guess.  Stop here. */
		if (missed && prev->method == VT_UNWIND_DWARF) {
			prev->method = VT_UNWIND_NONE;
			w->why = VT_UNWIND_END_STACK;
			return DWARF_CB_ABORT;
		}
	}
	if (w->n == w->max) {
		w->frames[w->n - 1].method = VT_UNWIND_NONE;
		w->why = VT_UNWIND_END_DEPTH;
		return DWARF_CB_ABORT;
	}
	if (!dwfl_frame_pc(state, &pc, &act) || pc == 0) {
		if (w->n)
			w->frames[w->n - 1].method = VT_UNWIND_NONE;
		w->why = pc == 0 ? VT_UNWIND_END_ROOT : VT_UNWIND_END_ERROR;
		return DWARF_CB_ABORT;
	}
	w->frames[w->n].pc = pc;
	w->frames[w->n].method = VT_UNWIND_NONE;
	w->frames[w->n].activation = act;
	w->n++;
	return DWARF_CB_OK;
}

/* One walk from start (see vt_unwind). */
static size_t walk_once(struct vt_unwinder *uw, pid_t tid, const struct vt_unwind_start *start,
			struct vt_unwind_frame *frames, size_t max, enum vt_unwind_end *why)
{
	struct walk w = { uw, frames, 0, max, VT_UNWIND_END_ERROR };
	enum vt_unwind_end end;
	unsigned i;
	int rc;

	uw->start = start;
	uw->tid = tid > 0 ? tid : uw->pid;
	uw->reads_left = VT_UNWIND_TARGET_READS;
	uw->misses = 0;
	for (i = 0; i < BLOCKS; i++)
		uw->blocks[i].used = false;
	uw->stats.unwinds++;
	rc = dwfl_getthread_frames(uw->dwfl, uw->tid, frame_cb, &w);
	if (rc == 0 && uw->misses)   /* libdw ends so when a return address could not be read */
		end = VT_UNWIND_END_STACK;
	else if (rc == 0)   /* ... or worked out: only CFI saying so makes it the root */
		end = w.n && has_fde(uw, lookup_addr(&frames[w.n - 1])) &&
		      !is_root(uw, lookup_addr(&frames[w.n - 1])) ? VT_UNWIND_END_NOINFO
							       : VT_UNWIND_END_ROOT;
	else if (rc == DWARF_CB_ABORT)
		end = w.why;
	else if (w.n == 0)
		end = VT_UNWIND_END_ERROR;
	else if (uw->misses)
		end = VT_UNWIND_END_STACK;
	else if (!module_at(uw, lookup_addr(&frames[w.n - 1]), NULL))
		end = VT_UNWIND_END_NOMODULE;
	else
		end = VT_UNWIND_END_NOINFO;
	if (w.n)
		frames[w.n - 1].method = VT_UNWIND_NONE;
	uw->start = NULL;
	*why = end;
	return w.n;
}

/*
 * A blocked thread's start has RIP and RSP only (/proc/TID/syscall), and a
 * walk from it ends at the first frame whose CFI finds its caller through
 * RBP: code built with frame pointers (Rust's std since 1.79, whose
 * Mutex::lock_contended is where a Rust program's contended lock waits, or
 * C built with -fno-omit-frame-pointer).  The functions below such a frame
 * (a system call wrapper) leave RBP as it was, so its value is a slot in
 * the copied stack above sp whose next word is a return address.  Each
 * such slot of the first VT_UNWIND_FP_SPAN bytes (VT_UNWIND_FP_TRIES of
 * them at most, lowest first) is tried as RBP, and the first walk that goes
 * further and ends at the root (CFI saying so: clone's or _start's frame)
 * is kept.  A wrong slot gives a walk that breaks off, not one that reaches
 * the root, except one further up the stack, which the lowest-first order
 * meets later.  Returns the better walk's length, into frames and *why.
 */
#define VT_UNWIND_FP_SPAN 2048
#define VT_UNWIND_FP_TRIES 12

static size_t walk_guessing_rbp(struct vt_unwinder *uw, pid_t tid, const struct vt_unwind_start *start,
				struct vt_unwind_frame *frames, size_t max, size_t n, enum vt_unwind_end *why)
{
	struct vt_unwind_start guess = *start;
	struct vt_unwind_frame *tmp;
	size_t off, span = start->stack_len < VT_UNWIND_FP_SPAN ? start->stack_len : VT_UNWIND_FP_SPAN;
	unsigned tries = 0;

	if (!(tmp = malloc(max * sizeof(*tmp))))
		return n;
	guess.known |= 1u << VT_DW_RBP;
	for (off = 0; off + 16 <= span && tries < VT_UNWIND_FP_TRIES; off += 8) {
		uint64_t ra;
		enum vt_unwind_end end;
		size_t got;

		memcpy(&ra, start->stack + off + 8, sizeof(ra));
		if (ra < 2 || !module_at(uw, ra - 1, NULL) || !has_fde(uw, ra - 1))
			continue;
		tries++;
		guess.regs[VT_DW_RBP] = start->stack_addr + off;
		got = walk_once(uw, tid, &guess, tmp, max, &end);
		if (end == VT_UNWIND_END_ROOT && got > n) {
			memcpy(frames, tmp, got * sizeof(*tmp));
			n = got;
			*why = end;
			uw->stats.rbp_found++;
			break;
		}
	}
	free(tmp);
	return n;
}

size_t vt_unwind(struct vt_unwinder *uw, pid_t tid, const struct vt_unwind_start *start,
		 struct vt_unwind_frame *frames, size_t max, enum vt_unwind_end *why)
{
	const uint32_t need = (1u << VT_DW_RIP) | (1u << VT_DW_RSP);
	enum vt_unwind_end end;
	size_t n;

	if (why)
		*why = VT_UNWIND_END_ERROR;
	if (!uw || !start || !frames || max == 0 || (start->known & need) != need)
		return 0;
	n = walk_once(uw, tid, start, frames, max, &end);
	if (end == VT_UNWIND_END_NOINFO && n >= 2 && !(start->known & (1u << VT_DW_RBP)) && start->stack &&
	    start->stack_len >= 16)
		n = walk_guessing_rbp(uw, tid, start, frames, max, n, &end);
	uw->stats.frames += n;
	if (why)
		*why = end;
	return n;
}

/* ---- naming ---- */

/* A copy of name kept until the unwinder is freed (PLT stub names, refused debug files). */
static const char *kept_name(struct vt_unwinder *uw, const char *name)
{
	for (struct kept_name *k = uw->kept; k; k = k->next)
		if (strcmp(k->name, name) == 0)
			return k->name;
	size_t len = strlen(name);
	struct kept_name *k = malloc(sizeof(*k) + len + 1);
	if (!k)
		return NULL;
	memcpy(k->name, name, len + 1);
	k->next = uw->kept;
	uw->kept = k;
	return k->name;
}

/* addr in one of mod's PLT stubs: named after the function it jumps to ("free@plt"). */
static void plt_symbol(struct vt_unwinder *uw, Dwfl_Module *mod, uint64_t addr, struct pc_entry *e)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	char name[160];
	uint64_t start;

	if (!elf || addr < bias || !vt_plt_name(elf, addr - bias, name, sizeof(name), &start))
		return;
	e->func = kept_name(uw, name);
	e->func_start = start + bias;
}

/* The module's .eh_frame_hdr index, found through its PT_GNU_EH_FRAME header (no section headers needed). */
static const struct vt_fde_table *fde_table(struct mod_info *mi, Dwfl_Module *mod)
{
	GElf_Addr bias = 0;
	Elf *elf;
	size_t n, i;

	if (mi->fde_read)
		return mi->fde.n ? &mi->fde : NULL;
	mi->fde_read = true;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return NULL;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (d && d->d_buf && vt_fde_table_parse(d->d_buf, d->d_size, ph.p_vaddr, &mi->fde))
			return &mi->fde;
		break;
	}
	return NULL;
}

/*
 * No symbol covers addr: name it by the function that holds it, from the
 * unwind table.  A compiler writes one FDE per function (or per part of a
 * function it split), so the FDE's start stands for every pc in it:
 * "libz.so.1.2.13+0x5d80 (function)", one row for a stripped library's
 * function instead of one per instruction (a gzip nginx profile had 15
 * rows of libz+0x... for a few functions).  Only where an FDE covers addr:
 * the padding between functions has none.
 */
static void fde_function(struct vt_unwinder *uw, Dwfl_Module *mod, struct mod_info *mi, uint64_t addr,
			 struct pc_entry *e)
{
	const struct vt_code_module *cm = &uw->map.v[mi->idx];
	const struct vt_fde_table *t = fde_table(mi, mod);
	uint64_t start;
	char name[192];

	if (!t || addr < mi->bias || !cfi_covers(mod, true, addr) ||
	    !vt_fde_table_start(t, addr - mi->bias, &start))
		return;
	snprintf(name, sizeof(name), "%s+0x%" PRIx64 " (function)",
		 cm->vdso ? "[vdso]" : vt_code_basename(cm->path), start);
	e->func = kept_name(uw, name);
	e->func_start = e->func ? start + mi->bias : 0;
}

static bool symbol_fits(const char *name, const GElf_Sym *sym, GElf_Off off)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return name && name[0] && sym->st_size > 0 && off < sym->st_size &&
	       (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_NOTYPE);
}

bool vt_unwind_symbolize(struct vt_unwinder *uw, uint64_t pc, bool is_return,
			 struct vt_unwind_sym *out)
{
	uint64_t addr = is_return && pc ? pc - 1 : pc;
	const struct vt_code_module *cm;
	struct pc_entry *e;
	struct mod_info *mi;
	Dwfl_Module *mod = NULL;

	memset(out, 0, sizeof(*out));
	out->module_off = pc;
	if (!uw)
		return false;
	uw->stats.lookups++;
	e = cache_get(uw, addr);
	if (e->flags & PC_SYM) {
		uw->stats.cache_hits++;
	} else {
		GElf_Sym sym;
		GElf_Off off = 0;
		const char *name;

		e->flags |= PC_SYM;
		mod = module_at(uw, addr, &mi);
		if (mi) {
			e->mod = (uint32_t)mi->idx + 1;
			learn_module(mi, mod);
			name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
			if (symbol_fits(name, &sym, off)) {
				e->func = unversioned(uw, name);
				e->func_start = addr - off;
			} else {
				plt_symbol(uw, mod, addr, e);
				if (!e->func)
					fde_function(uw, mod, mi, addr, e);
			}
		}
	}
	if (!e->mod || e->mod > uw->map.n) {
		/* no file: code a JIT wrote to anonymous memory, or nothing mapped */
		const struct vt_code_range *r = vt_code_map_anon_at(&uw->map, addr);

		if (!r)
			return false;
		out->module = VT_UNWIND_ANON_MODULE;
		out->path = "";
		out->module_off = pc - r->start;
		return true;
	}
	mi = &uw->info[e->mod - 1];
	cm = &uw->map.v[e->mod - 1];
	if (!mi->known) {
		mod = mod ? mod : module_at(uw, addr, NULL);
		if (mod)
			learn_module(mi, mod);
	}
	out->func = e->func;
	out->func_off = e->func ? pc - e->func_start : 0;
	out->module = cm->vdso ? "[vdso]" : vt_code_basename(cm->path);
	out->path = cm->path;
	out->module_off = pc - (mi->known ? mi->bias : cm->low);
	out->symbols = mi->syms;
	out->has_cfi = mi->has_cfi;
	return true;
}

void vt_unwind_start_blocked(struct vt_unwind_start *st, uint64_t sp, uint64_t pc, const uint8_t *stack,
			     size_t len)
{
	memset(st, 0, sizeof(*st));
	st->stack = stack;
	st->stack_len = len;
	st->stack_addr = sp;
	st->read_target = true;
	st->regs[VT_DW_RIP] = pc;
	st->regs[VT_DW_RSP] = sp;
	st->known = 1u << VT_DW_RIP | 1u << VT_DW_RSP;
}

/* The module whose image may hold data at addr: the last one starting at or below it (its .bss may run past its file mappings). */
static Dwfl_Module *data_module(struct vt_unwinder *uw, uint64_t addr, const struct vt_code_module **cmp,
				struct mod_info **mip)
{
	const struct vt_code_module *cm = NULL;
	Dwfl_Module *mod;
	size_t i;

	for (i = 0; i < uw->map.n && uw->map.v[i].low <= addr; i++)
		if (!uw->map.v[i].vdso)
			cm = &uw->map.v[i];
	if (!cm || !(mod = module_at(uw, cm->low, mip)))
		return NULL;
	learn_module(*mip, mod);
	*cmp = cm;
	return mod;
}

static void data_answer(const struct vt_code_module *cm, const struct mod_info *mi, uint64_t addr,
			struct vt_unwind_sym *out)
{
	out->module = vt_code_basename(cm->path);
	out->path = cm->path;
	out->module_off = addr - (mi->known ? mi->bias : cm->low);
	out->symbols = mi->syms;
	out->has_cfi = mi->has_cfi;
}

bool vt_unwind_data_symbol(struct vt_unwinder *uw, uint64_t addr, struct vt_unwind_sym *out)
{
	const struct vt_code_module *cm;
	struct mod_info *mi;
	Dwfl_Module *mod;
	GElf_Sym sym;
	GElf_Off off = 0;
	const char *name;
	int type;

	memset(out, 0, sizeof(*out));
	if (!uw || !(mod = data_module(uw, addr, &cm, &mi)))
		return false;
	name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	type = GELF_ST_TYPE(sym.st_info);
	if (!name || !name[0] || sym.st_size == 0 || off >= sym.st_size ||
	    (type != STT_OBJECT && type != STT_COMMON && type != STT_NOTYPE))
		return false;
	out->func = unversioned(uw, name);
	out->func_off = off;
	data_answer(cm, mi, addr, out);
	return true;
}

bool vt_unwind_data_module(struct vt_unwinder *uw, uint64_t addr, struct vt_unwind_sym *out)
{
	const struct vt_code_module *cm;
	struct mod_info *mi;
	Dwfl_Module *mod;
	Dwarf_Addr bias = 0;
	uint64_t end = 0;
	size_t n = 0, i;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	if (!uw || !(mod = data_module(uw, addr, &cm, &mi)) || !(elf = dwfl_module_getelf(mod, &bias)) ||
	    elf_getphdrnum(elf, &n) != 0)
		return false;
	/* the image ends where its last loaded segment does in memory (p_memsz: the .bss included) */
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr + ph.p_memsz > end)
			end = ph.p_vaddr + ph.p_memsz;
	}
	if (addr - bias >= end)
		return false;
	data_answer(cm, mi, addr, out);
	return true;
}

/* A function DIE's name: its linkage name when it has one (C++, Rust), else its
 * name; through DW_AT_abstract_origin and DW_AT_specification. */
static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

/* The file and line an inlined instance was called at (DW_AT_call_file, an index
 * into its CU's file table, and DW_AT_call_line). */
static void call_site(Dwarf_Die *inlined, Dwarf_Files *files, size_t nfiles,
		      const char **file, uint32_t *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	*file = NULL;
	*line = 0;
	if (files && dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &v) == 0 &&
	    v < nfiles)
		*file = dwarf_filesrc(files, v, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &v) == 0 && v <= UINT32_MAX)
		*line = (uint32_t)v;
}

/* Deepest nesting of DIEs followed (namespaces, types, blocks, inlined calls). */
#define DIE_DEPTH_MAX 64

/*
 * The function (DW_TAG_subprogram) of cu whose code holds addr, found by a
 * walk of the unit's tree that goes into namespaces and types (Rust and C++
 * put functions there) and past everything else.  libdw's dwarf_getscopes
 * would do it, but elfutils 0.188's finds no scope at all in rustc's units.
 */
static bool find_function(Dwarf_Die *parent, Dwarf_Addr addr, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth >= DIE_DEPTH_MAX || dwarf_child(parent, &child) != 0)
		return false;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			if (dwarf_haspc(&child, addr) == 1) {
				*out = child;
				return true;
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type:
			if (find_function(&child, addr, out, depth + 1))
				return true;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The function DIE that holds addr (a DWARF address), from the ones found lately or
 * by a walk of its unit; remembered. */
static bool function_die(struct vt_unwinder *uw, Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr addr,
			 Dwarf_Die *out)
{
	Dwarf *dw = dwarf_cu_getdwarf(cu->cu);
	struct func_range *f;
	Dwarf_Addr low, high;

	for (unsigned i = 0; i < FUNC_RANGES; i++) {
		f = &uw->funcs[i];
		if (f->mod == mod && f->dwarf == dw && addr >= f->low && addr < f->high &&
		    dwarf_offdie(dw, f->off, out) && dwarf_haspc(out, addr) == 1)
			return true;
	}
	if (!find_function(cu, addr, out, 0))
		return false;
	/* the piece of its code that holds addr (a function in pieces has DW_AT_ranges;
	 * a hit in the cache is checked again by haspc) */
	if (!(dwarf_lowpc(out, &low) == 0 && dwarf_highpc(out, &high) == 0 && low <= addr &&
	      addr < high)) {
		ptrdiff_t at = 0;
		Dwarf_Addr base;

		while ((at = dwarf_ranges(out, at, &base, &low, &high)) > 0 && !(low <= addr && addr < high))
			;
		if (at <= 0)
			return true;   /* found, but its range is not one to remember */
	}
	f = &uw->funcs[uw->next_func++ % FUNC_RANGES];
	*f = (struct func_range){ .mod = mod, .low = low, .high = high, .off = dwarf_dieoffset(out),
				  .dwarf = dw };
	return true;
}

/* Split DWARF files looked for per module at most (each is opened). */
#define DWO_CHECKS 64

/*
 * Whether dwarf's units are skeletons of split DWARF (gcc -gsplit-dwarf); of
 * the first DWO_CHECKS, the name of one whose .dwo libdw could not open (it
 * looks beside the module, then in the unit's comp_dir) in *missing.
 */
static bool split_units(Dwarf *dwarf, const char **missing)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie, split;
	uint8_t unit_type;
	unsigned skeletons = 0;

	*missing = NULL;
	while (dwarf_get_units(dwarf, cu, &next, NULL, &unit_type, &cudie, NULL) == 0) {
		cu = next;
		if (unit_type != DW_UT_skeleton)
			continue;
		if (skeletons++ < DWO_CHECKS && !*missing &&
		    (dwarf_cu_info(cu, NULL, NULL, NULL, &split, NULL, NULL, NULL) != 0 ||
		     dwarf_tag(&split) != DW_TAG_compile_unit)) {
			Dwarf_Attribute attr;
			const char *name = dwarf_formstring(dwarf_attr(&cudie, DW_AT_dwo_name, &attr));

			*missing = name ? name : "?";
		}
		if (skeletons >= DWO_CHECKS && *missing)
			break;
	}
	return skeletons > 0;
}

bool vt_unwind_module_debug(struct vt_unwinder *uw, uint64_t pc, struct vt_unwind_debug *out)
{
	struct mod_info *mi;
	Dwfl_Module *mod = uw ? module_at(uw, pc, &mi) : NULL;
	const char *debugfile = NULL, *missing;
	Dwarf_Addr bias;
	Dwarf *dwarf;

	memset(out, 0, sizeof(*out));
	if (!mod)
		return false;
	/* libdw looks for a separate file here when the module has no .debug_info */
	dwarf = dwfl_module_getdwarf(mod, &bias);
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	out->debug_file = debugfile;
	out->lines = !dwarf ? VT_LINES_NONE : debugfile ? VT_LINES_DEBUGFILE : VT_LINES_OWN;
	out->ignored = mi->debug_ignored;
	out->ignored_why = mi->debug_ignored ? mi->debug_ignored_why : NULL;
	if (dwarf && split_units(dwarf, &missing)) {
		out->lines = VT_LINES_SPLIT;
		if (missing) {
			out->ignored = kept_name(uw, missing);
			out->ignored_why = "split DWARF file not found: source lines, no inlined frames";
		}
	}
	return true;
}

/*
 * libdw meets an allocation failure inside its line tables by exiting the
 * process (__libdw_oom: error(EXIT_FAILURE, ENOMEM, ...)), which under a
 * tight address-space limit crashed vitals profile (ulimit -v 14000, t0125).
 * Under a limit below this, no source lines are read: names still are.
 */
#define SOURCE_LINES_AS_MIN ((rlim_t)256 << 20)

static bool source_lines_safe(void)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= SOURCE_LINES_AS_MIN;
}

size_t vt_unwind_source(struct vt_unwinder *uw, uint64_t pc, bool is_return,
			struct vt_unwind_inline *out, size_t max)
{
	uint64_t addr = is_return && pc ? pc - 1 : pc;
	Dwarf_Die path[DIE_DEPTH_MAX], *cu, child, split;
	Dwarf_Files *files = NULL;
	Dwarf_Addr bias;
	Dwfl_Module *mod;
	Dwfl_Line *l;
	uint8_t unit_type;
	size_t nfiles = 0, n = 0;
	const char *file = NULL;
	uint32_t line = 0;
	int depth = 0, lineno = 0;

	if (!uw || max == 0 || !source_lines_safe() || !(mod = module_at(uw, addr, NULL)))
		return 0;
	cu = dwfl_module_addrdie(mod, addr, &bias);
	if (!cu)
		return 0;
	/* split DWARF (gcc -gsplit-dwarf): the unit in the module is a skeleton, its
	 * functions are in its .dwo file (libdw opens it beside the unit's comp_dir) */
	if (dwarf_cu_info(cu->cu, NULL, &unit_type, NULL, &split, NULL, NULL, NULL) == 0 &&
	    unit_type == DW_UT_skeleton && dwarf_tag(&split) == DW_TAG_compile_unit)
		cu = &split;
	if (!function_die(uw, mod, cu, addr - bias, &path[0]))
		return 0;
	/* down from the function to the innermost block or inlined call holding addr */
	for (depth = 1; depth < DIE_DEPTH_MAX && dwarf_child(&path[depth - 1], &child) == 0;) {
		bool inside = false;

		do {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
			     tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
			    dwarf_haspc(&child, addr - bias) == 1) {
				path[depth++] = child;
				inside = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!inside)
			break;
	}
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		files = NULL;
	if ((l = dwfl_module_getsrc(mod, addr)) != NULL) {
		file = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
		line = lineno > 0 ? (uint32_t)lineno : 0;
	}
	/* innermost first: each inlined call, its file and line those of the code inside
	 * it; its caller's, the call's (DW_AT_call_file, DW_AT_call_line) */
	while (depth-- > 0 && n < max) {
		Dwarf_Die *d = &path[depth];
		int tag = dwarf_tag(d);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		/* an inlined call whose function has no name here (its definition in a
		 * dwz file that is not installed): no frame, never an address as one */
		if (tag == DW_TAG_inlined_subroutine && !die_function_name(d)) {
			call_site(d, files, nfiles, &file, &line);
			continue;
		}
		out[n] = (struct vt_unwind_inline){ .func = die_function_name(d), .file = file,
						    .line = line, .decl_file = dwarf_decl_file(d) };
		if (dwarf_decl_line(d, &lineno) == 0 && lineno > 0)
			out[n].decl_line = (uint32_t)lineno;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		call_site(d, files, nfiles, &file, &line);
	}
	return n;
}

void vt_unwinder_get_stats(const struct vt_unwinder *uw, struct vt_unwind_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (uw)
		*out = uw->stats;
}
