/*
 * tramp.c — find, before any thread is stopped, the code in the target that
 * a call returns through (see struct vt_arch_tramp and docs/inject.md,
 * "If vitals dies mid-call").
 *
 * The code is read from the target's own memory (process_vm_readv), so
 * what is found is what will run: no file on disk to trust.  libc first
 * (its signal-return trampoline is what the kernel's signal frames expect),
 * then the dynamic linker, then the executable (a static glibc program has
 * the trampoline in itself).
 *
 * What the scan finds in libc is remembered per libc file (tramp_cache.h)
 * and, on the next probe of a process with that libc, read back from the
 * target's memory and checked the way the scan checks code before it is
 * used: the scan is then skipped.  The check is the whole guarantee; the
 * cache is only a hint.
 */
#include "inject/inject.h"
#include "inject/tramp_cache.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "proc/mem.h"
#include "proc/procfs.h"

#define CHUNK (1024 * 1024)
#define OVERLAP 16                 /* longer than any pattern: a match across chunks is seen */
#define SCAN_MAX (256u * 1024 * 1024)   /* code read at most, over all mappings */

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Scan one executable mapping in chunks; *budget is what may still be read. */
static int scan_region(pid_t pid, const struct vt_region *r, unsigned char *buf, size_t *budget,
		       struct vt_arch_tramp *t, struct vt_err *err)
{
	uint64_t at = r->start;
	int rc;

	while (at < r->end && *budget > 0 && !(t->sigreturn && t->store)) {
		size_t len = r->end - at < CHUNK ? (size_t)(r->end - at) : CHUNK;

		if (len > *budget)
			len = *budget;
		rc = vt_mem_read(pid, at, buf, len, err);
		if (rc == VT_E_IO)
			return VT_OK;   /* a hole (a mapping beyond its file): go on with the next */
		if (rc)
			return rc;
		vt_arch_tramp_scan(buf, len, at, t);
		*budget -= len;
		at += len > OVERLAP && at + len < r->end ? len - OVERLAP : len;
	}
	return VT_OK;
}

static unsigned cache_hits;

unsigned vt_inject_tramp_cache_hits(void)
{
	return __atomic_load_n(&cache_hits, __ATOMIC_RELAXED);
}

/* Pass 0: libc; 1: the dynamic linker; 2: any other executable file mapping. */
static bool in_pass(const struct vt_region *r, int pass)
{
	const char *name = base_name(r->path);
	bool libc = !strncmp(name, "libc.so", 7) || !strncmp(name, "libc-", 5);
	bool ld = !strncmp(name, "ld-linux", 8) || !strncmp(name, "ld-", 3);

	if (r->perms[2] != 'x' || !r->inode)
		return false;
	return pass == 0 ? libc : pass == 1 ? ld && !libc : !libc && !ld;
}

/* The first executable mapping of libc: the file the cache is keyed by. */
static const struct vt_region *libc_code(const struct vt_region_list *maps)
{
	size_t i;

	for (i = 0; i < maps->n; i++)
		if (in_pass(&maps->v[i], 0))
			return &maps->v[i];
	return NULL;
}

/* Whether r maps lib's file executable. */
static bool code_of(const struct vt_region *r, const struct vt_region *lib)
{
	return r->perms[2] == 'x' && r->inode == lib->inode && r->dev_major == lib->dev_major &&
	       r->dev_minor == lib->dev_minor;
}

/* Where file offset off of lib's file is mapped executable; 0: nowhere. */
static uint64_t code_addr(const struct vt_region_list *maps, const struct vt_region *lib, uint64_t off,
			  uint64_t *map_end)
{
	size_t i;

	for (i = 0; i < maps->n; i++) {
		const struct vt_region *r = &maps->v[i];

		if (code_of(r, lib) && off >= r->offset && off - r->offset < r->end - r->start) {
			*map_end = r->end;
			return r->start + (off - r->offset);
		}
	}
	return 0;
}

/* The file offset of addr in an executable mapping of lib's file; false: not there. */
static bool code_off(const struct vt_region_list *maps, const struct vt_region *lib, uint64_t addr,
		     uint64_t *off)
{
	size_t i;

	for (i = 0; i < maps->n; i++) {
		const struct vt_region *r = &maps->v[i];

		if (code_of(r, lib) && addr >= r->start && addr < r->end) {
			*off = r->offset + (addr - r->start);
			return true;
		}
	}
	return false;
}

/*
 * Scan the few bytes at addr as if they were all the code there is: true
 * when the scan finds there (at addr itself) what want says.
 */
static bool bytes_hold(pid_t pid, uint64_t addr, uint64_t map_end, bool sigreturn,
		       const struct vt_arch_tramp *want)
{
	unsigned char code[16];
	struct vt_arch_tramp found;
	size_t len = map_end - addr < sizeof(code) ? (size_t)(map_end - addr) : sizeof(code);

	if (!addr || vt_mem_read(pid, addr, code, len, NULL) != VT_OK)
		return false;
	memset(&found, 0, sizeof(found));
	if (sigreturn) {
		found.store = 1;         /* look for the trampoline alone */
		vt_arch_tramp_scan(code, len, addr, &found);
		return found.sigreturn == addr;
	}
	found.sigreturn = 1;             /* look for the store alone */
	vt_arch_tramp_scan(code, len, addr, &found);
	return found.store == addr && found.store_reg == want->store_reg && found.store_disp == want->store_disp;
}

/* What the cache remembers for libc file key, checked in the target's memory; false: scan. */
static bool from_cache(pid_t pid, const struct vt_region_list *maps, const struct vt_region *lib,
		       const struct vt_tramp_key *key, struct vt_arch_tramp *t)
{
	struct vt_tramp_entry e;
	struct vt_arch_tramp c;
	uint64_t sig_end = 0, store_end = 0;

	if (!vt_tramp_cache_get(key, &e))
		return false;
	memset(&c, 0, sizeof(c));
	c.sigreturn = code_addr(maps, lib, e.sigreturn_off, &sig_end);
	c.store = code_addr(maps, lib, e.store_off, &store_end);
	c.store_reg = (enum vt_arch_reg)e.store_reg;
	c.store_disp = e.store_disp;
	if (!bytes_hold(pid, c.sigreturn, sig_end, true, &c) || !bytes_hold(pid, c.store, store_end, false, &c))
		return false;
	*t = c;
	__atomic_add_fetch(&cache_hits, 1, __ATOMIC_RELAXED);
	return true;
}

/* Remember what the scan found for libc file key, when both lie in its code. */
static void to_cache(const struct vt_region_list *maps, const struct vt_region *lib,
		     const struct vt_tramp_key *key, const struct vt_arch_tramp *t)
{
	struct vt_tramp_entry e;

	if (!code_off(maps, lib, t->sigreturn, &e.sigreturn_off) || !code_off(maps, lib, t->store, &e.store_off))
		return;
	e.store_reg = (unsigned)t->store_reg;
	e.store_disp = (int)t->store_disp;
	vt_tramp_cache_put(key, &e);
}

int vt_inject_find_tramp(int pid_fd, pid_t pid, struct vt_arch_tramp *t, struct vt_err *err)
{
	struct vt_region_list maps = { 0 };
	struct vt_buf text = VT_BUF_INIT(VT_PROC_FILE_MAX);
	int rc;

	memset(t, 0, sizeof(*t));
	rc = vt_read_at(pid_fd, "maps", &text, err);
	if (!rc)
		rc = vt_maps_parse(text.data, text.len, &maps, err);
	vt_buf_release(&text);
	if (!rc)
		rc = vt_inject_find_tramp_in(pid_fd, pid, &maps, t, err);
	vt_region_list_release(&maps);
	return rc;
}

int vt_inject_find_tramp_in(int pid_fd, pid_t pid, const struct vt_region_list *maps, struct vt_arch_tramp *t,
			    struct vt_err *err)
{
	const struct vt_region *lib;
	struct vt_tramp_key key;
	unsigned char *buf = NULL;
	size_t budget = SCAN_MAX, i;
	bool keyed;
	int rc = VT_OK, pass;

	memset(t, 0, sizeof(*t));
	/* libc's file is looked at once: for the cache's answer, and to store the scan's */
	lib = libc_code(maps);
	keyed = lib && vt_tramp_key_of(pid_fd, lib, &key);
	if (keyed && from_cache(pid, maps, lib, &key, t))
		goto out;
	buf = malloc(CHUNK);
	if (!buf) {
		rc = vt_err_set(err, VT_E_NOMEM, 0, "out of memory scanning the target's code");
		goto out;
	}
	for (pass = 0; pass < 3 && !(t->sigreturn && t->store); pass++)
		for (i = 0; i < maps->n && !rc && !(t->sigreturn && t->store); i++)
			if (in_pass(&maps->v[i], pass))
				rc = scan_region(pid, &maps->v[i], buf, &budget, t, err);
	if (!rc && !t->sigreturn)
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "no signal-return trampoline (glibc's "
				"__restore_rt) in the code of process %d: a call could not restore "
				"the thread without vitals, so none is made", (int)pid);
	else if (!rc && !t->store)
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "no instruction sequence in the code of "
				"process %d to store a call's return value through (see "
				"docs/inject.md), so no call is made", (int)pid);
	else if (!rc && keyed)
		to_cache(maps, lib, &key, t);
out:
	free(buf);
	return rc;
}
