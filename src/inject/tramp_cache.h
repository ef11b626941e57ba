/*
 * tramp_cache.h — where a libc keeps the code calls return through,
 * remembered across runs of vitals.
 *
 * Finding it (tramp.c) reads libc's executable mapping from the target and
 * scans it: about a megabyte and a millisecond on every probe.  The result
 * depends only on the file, so it is kept per libc file, keyed by the
 * file's identity (device, inode, size, modification time) and its GNU
 * build-id, as file offsets.  A remembered entry is only a hint: tramp.c
 * uses it only after reading the bytes at those places in the target's own
 * memory and finding there exactly what a scan would accept.  A stale,
 * corrupt or foreign cache therefore costs a scan, never a wrong call.
 *
 * The file is $XDG_CACHE_HOME/vitals/tramp-v1 (else ~/.cache/vitals/...):
 * the directory is made 0700, and used only when it is a real directory
 * owned by the effective user and writable by nobody else; the file only
 * when it is a regular file (never through a symbolic link) owned by that
 * user.  It is replaced whole (write a new file, rename it over), so a
 * reader sees the old one or the new one.  A read-only or full disk, no
 * HOME, anything unexpected: no cache, silently.
 *
 * Nothing here prints; nothing here stops or reads a target.
 */
#ifndef VT_INJECT_TRAMP_CACHE_H
#define VT_INJECT_TRAMP_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "proc/maps.h"

#define VT_BUILD_ID_MAX 64            /* hex digits kept of a build-id */

/* What identifies one library file. */
struct vt_tramp_key {
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns;
	char build_id[VT_BUILD_ID_MAX + 1];   /* lowercase hex, "-" when the file has none */
};

/* Where, in that file, the trampoline and the store are (see struct vt_arch_tramp). */
struct vt_tramp_entry {
	uint64_t sigreturn_off, store_off;   /* file offsets */
	unsigned store_reg;                  /* enum vt_arch_reg */
	int store_disp;
};

/*
 * The key of the file mapped at r in the process whose /proc directory is
 * pid_fd, opened through its root (<pid_fd>/root/<path>): false when it
 * cannot be had or is not the mapped file (deleted, replaced on disk:
 * another device or inode than the mapping's).
 */
bool vt_tramp_key_of(int pid_fd, const struct vt_region *r, struct vt_tramp_key *k);

/* The entry remembered for k: false when none (or no usable cache). */
bool vt_tramp_cache_get(const struct vt_tramp_key *k, struct vt_tramp_entry *e);

/* Remember e for k (replacing an entry for k); failures are silent. */
void vt_tramp_cache_put(const struct vt_tramp_key *k, const struct vt_tramp_entry *e);

#endif
