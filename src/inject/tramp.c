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
 */
#include "inject/inject.h"

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

int vt_inject_find_tramp(int pid_fd, pid_t pid, struct vt_arch_tramp *t, struct vt_err *err)
{
	struct vt_region_list maps = { 0 };
	struct vt_buf text = VT_BUF_INIT(VT_PROC_FILE_MAX);
	unsigned char *buf = NULL;
	size_t budget = SCAN_MAX, i;
	int rc, pass;

	memset(t, 0, sizeof(*t));
	rc = vt_read_at(pid_fd, "maps", &text, err);
	if (!rc)
		rc = vt_maps_parse(text.data, text.len, &maps, err);
	vt_buf_release(&text);
	if (rc)
		goto out;
	buf = malloc(CHUNK);
	if (!buf) {
		rc = vt_err_set(err, VT_E_NOMEM, 0, "out of memory scanning the target's code");
		goto out;
	}
	for (pass = 0; pass < 3 && !(t->sigreturn && t->store); pass++)
		for (i = 0; i < maps.n && !rc && !(t->sigreturn && t->store); i++)
			if (in_pass(&maps.v[i], pass))
				rc = scan_region(pid, &maps.v[i], buf, &budget, t, err);
	if (!rc && !t->sigreturn)
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "no signal-return trampoline (glibc's "
				"__restore_rt) in the code of process %d: a call could not restore "
				"the thread without vitals, so none is made", (int)pid);
	else if (!rc && !t->store)
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "no instruction sequence in the code of "
				"process %d to store a call's return value through (see "
				"docs/inject.md), so no call is made", (int)pid);
out:
	free(buf);
	vt_region_list_release(&maps);
	return rc;
}
