/*
 * resolve.c — the address of a library function in a running process.
 *
 * No debug symbols and no dynamic-linker structures: the library mapped by
 * the target (from its maps) is opened the way allocator detection opens it
 * (vt_mapped_file_open: the target's own file, also in a container or
 * after the file was deleted), the symbol's value comes from its .dynsym,
 * and the load bias from where its first page is mapped.  Before the
 * address is handed out, the first bytes of the function in the target's
 * memory are compared with the file's: a file replaced on disk, a wrong
 * bias or a hot-patched function fails here instead of sending a thread to
 * a random instruction.
 *
 * Layering note: this file uses src/alloc's ELF and file-opening helpers,
 * though inject sits below alloc; they belong in a lower module one day.
 */
#include "inject/inject.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elfsym.h"
#include "proc/mapped_file.h"
#include "proc/mem.h"
#include "proc/mem.h"

#define CHECK_BYTES 16

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Same file: same inode, device and path. */
static bool same_file(const struct vt_region *a, const struct vt_region *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && strcmp(a->path, b->path) == 0;
}

static const struct vt_region *find_lib(const struct vt_region_list *maps, const char *prefix)
{
	size_t i, n = strlen(prefix);

	for (i = 0; i < maps->n; i++) {
		const struct vt_region *r = &maps->v[i];

		if (r->inode && r->path[0] && strncmp(base_name(r->path), prefix, n) == 0)
			return r;
	}
	return NULL;
}

static const struct vt_region *find_offset0(const struct vt_region_list *maps,
					    const struct vt_region *lib)
{
	size_t i;

	for (i = 0; i < maps->n; i++)
		if (maps->v[i].offset == 0 && same_file(&maps->v[i], lib))
			return &maps->v[i];
	return NULL;
}

static const struct vt_region *find_addr(const struct vt_region_list *maps, uint64_t addr)
{
	size_t i;

	for (i = 0; i < maps->n; i++)
		if (addr >= maps->v[i].start && addr < maps->v[i].end)
			return &maps->v[i];
	return NULL;
}

/*
 * The function's first bytes in the target equal the file's at the offset
 * the kernel mapped them from.  Short functions near the end of the mapping
 * are compared up to its end.
 */
static int check_bytes(pid_t pid, int fd, const struct vt_region *text, uint64_t addr,
		       const unsigned char *read, const char *symbol, const char *lib, struct vt_err *err)
{
	unsigned char mem[CHECK_BYTES], file[CHECK_BYTES];
	size_t len = CHECK_BYTES;
	ssize_t n;
	int rc;

	if (text->end - addr < len)
		len = (size_t)(text->end - addr);
	if (read && len == CHECK_BYTES)
		memcpy(mem, read, len);
	else if ((rc = vt_mem_read(pid, addr, mem, len, err)))
		return rc;
	do
		n = pread(fd, file, len, (off_t)(addr - text->start + text->offset));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)len)
		return vt_err_set(err, VT_E_FAIL, n < 0 ? errno : 0, "cannot read '%s' of %s from "
				  "the file", symbol, lib);
	if (memcmp(mem, file, len) != 0) {
		vt_err_set(err, VT_E_FAIL, 0, "'%s' at 0x%" PRIx64 " in process %d does not match %s "
			   "on disk", symbol, addr, (int)pid, lib);
		vt_err_hint(err, "the library was replaced or patched since the process started; "
			    "restart it, or use the agent");
		return VT_E_FAIL;
	}
	return VT_OK;
}

static int symbol_address(struct vt_elfsym *ef, const struct vt_region *base, const char *lib,
			  const char *symbol, uint64_t *addr, struct vt_err *err)
{
	uint64_t value, vaddr;
	struct vt_err why;
	int rc = vt_elfsym_symbol(ef, symbol, &value, &why);

	if (rc == VT_E_NOMEM || rc == VT_E_PARSE)    /* could not look: not "does not define" */
		return vt_err_set(err, rc, why.sys_errno, "%s: %s", lib, why.msg);
	if (rc != VT_OK) {
		if (vt_elfsym_defines(ef, VT_ELFSYM_DYNSYM | VT_ELFSYM_SYMTAB, &symbol, 1))
			return vt_err_set(err, VT_E_NOTFOUND, 0, "'%s' in %s is an IFUNC, whose "
					  "resolution is not supported", symbol, lib);
		return vt_err_set(err, VT_E_NOTFOUND, 0, "%s does not define '%s'", lib, symbol);
	}
	if (!vt_elfsym_first_load_vaddr(ef, &vaddr))
		return vt_err_set(err, VT_E_PARSE, 0, "%s has no PT_LOAD program header", lib);
	*addr = base->start - vaddr + value;
	return VT_OK;
}

/* One symbol of the open library: its address, in the library's code as mapped (*text). */
static int resolve_one(pid_t pid, const struct vt_region_list *maps, struct vt_elfsym *ef,
		       const struct vt_region *lib, const struct vt_region *base, const char *symbol,
		       uint64_t *addr, const struct vt_region **text, struct vt_err *err)
{
	uint64_t a = 0;
	int rc;

	*addr = 0;
	rc = symbol_address(ef, base, lib->path, symbol, &a, err);
	if (rc)
		return rc;
	*text = find_addr(maps, a);
	if (!*text || !same_file(*text, lib) || (*text)->perms[2] != 'x')
		return vt_err_set(err, VT_E_FAIL, 0, "'%s' resolves to 0x%" PRIx64 ", which is not "
				  "in the code of %s in process %d", symbol, a, lib->path, (int)pid);
	*addr = a;
	return VT_OK;
}

#define CHECK_BATCH 16   /* symbols whose first bytes are read in one process_vm_readv */

/*
 * The first bytes of every resolved function in the target equal the
 * file's: read from the target together (one call for up to CHECK_BATCH),
 * each compared in order, the first mismatch or failure reported.
 */
static int check_all(pid_t pid, int check_fd, const char *lib, const char *const *symbols,
		     const uint64_t *addrs, const struct vt_region *const *texts, size_t n, struct vt_err *err)
{
	unsigned char got[CHECK_BATCH][CHECK_BYTES];
	uint8_t ok[CHECK_BATCH] = { 0 };
	struct vt_mem_target target = { pid, -1, 0, false };
	size_t i;
	int rc = VT_OK;

	if (n <= CHECK_BATCH)
		vt_mem_target_read_each(&target, addrs, n, CHECK_BYTES, got, ok);
	/* one that the batch could not read (near its mapping's end, or n too large) is read alone */
	for (i = 0; i < n && rc == VT_OK; i++)
		rc = check_bytes(pid, check_fd, texts[i], addrs[i], i < CHECK_BATCH && ok[i] ? got[i] : NULL,
				 symbols[i], lib, err);
	return rc;
}

int vt_inject_resolve_many(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
			   const char *lib_basename_prefix, const char *const *symbols,
			   uint64_t *addrs, size_t n, struct vt_err *err)
{
	const struct vt_region *lib, *base, **texts = NULL;
	struct vt_elfsym *ef = NULL;
	struct stat st;
	char why[128];
	int pid_fd = -1, fd = -1, check_fd = -1, rc;
	size_t i;

	for (i = 0; i < n; i++)
		addrs[i] = 0;
	lib = find_lib(maps, lib_basename_prefix);
	if (!lib)
		return vt_err_set(err, VT_E_NOTFOUND, 0, "process %d has no %s* mapped", (int)pid,
				  lib_basename_prefix);
	base = find_offset0(maps, lib);
	if (!base)
		return vt_err_set(err, VT_E_NOTFOUND, 0, "%s has no mapping at file offset 0 in "
				  "process %d", lib->path, (int)pid);
	rc = vt_pid_open(pfs, pid, &pid_fd, err);
	if (rc)
		return rc;
	rc = vt_mapped_file_open(pfs, pid_fd, pid, lib, &fd, why, sizeof(why), err);
	if (rc)
		goto out;
	if (fd < 0) {
		rc = vt_err_set(err, VT_E_PERM, 0, "cannot read %s of process %d: %s", lib->path,
				(int)pid, why);
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = vt_err_set(err, VT_E_FAIL, 0, "%s of process %d is not a regular file",
				lib->path, (int)pid);
		close(fd);
		goto out;
	}
	check_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (check_fd < 0) {
		rc = vt_err_set(err, VT_E_FAIL, errno, "cannot keep %s of process %d open: %s", lib->path, (int)pid, strerror(errno));
		close(fd);
		goto out;
	}
	rc = vt_elfsym_open_fd(fd, &ef, err);   /* consumes fd */
	if (rc)
		goto out;
	/* One open file for all the symbols; the first failure stops. */
	texts = calloc(n ? n : 1, sizeof(*texts));
	if (!texts) {
		rc = vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory resolving %zu functions", n);
		goto out;
	}
	for (i = 0; i < n && rc == VT_OK; i++)
		rc = resolve_one(pid, maps, ef, lib, base, symbols[i], &addrs[i], &texts[i], err);
	/* A recorded tree has no memory to compare with. */
	if (rc == VT_OK && pfs->live)
		rc = check_all(pid, check_fd, lib->path, symbols, addrs, texts, n, err);
	if (rc)
		for (i = 0; i < n; i++)
			addrs[i] = 0;
	free(texts);
out:
	vt_elfsym_free(&ef);
	if (check_fd >= 0)
		close(check_fd);
	close(pid_fd);
	return rc;
}

int vt_inject_resolve(const struct vt_procfs *pfs, pid_t pid, const struct vt_region_list *maps,
		      const char *lib_basename_prefix, const char *symbol, uint64_t *addr,
		      struct vt_err *err)
{
	return vt_inject_resolve_many(pfs, pid, maps, lib_basename_prefix, &symbol, addr, 1, err);
}
