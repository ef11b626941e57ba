/*
 * detect_cache.h — the answer of allocator detection, remembered across
 * runs of vitals.
 *
 * Detection (detect.c) opens the executable and the target's libraries with
 * libelf and reads their symbols and libc's .rodata: about a millisecond on
 * every snap, heap or census of a process.  Its answer depends only on what
 * it reads, so it is kept keyed by all of it, obtained without opening a
 * file or loading libelf:
 *
 *   - LD_PRELOAD as environ has it (set or not, and its value);
 *   - the executable's path (readlink of PID/exe) and its file's identity;
 *   - the file-backed mappings in order, a run of mappings of one path
 *     counted once: the path, whether the run holds an executable mapping,
 *     and the identity of PID/root/<path>, which must be the mapped file;
 *
 * where a file's identity is its device, inode, size, modification and
 * status-change times (nanoseconds), from stat(2).  The key must equal the
 * stored one exactly.  Nothing is cached (the detection simply runs) for a
 * recorded /proc tree, a deleted or replaced file, a path holding a tab or a
 * newline, unreadable environ, or an answer that could not read a file or
 * carries notes (what was not checked may be checkable next time).
 *
 * The file is detect-v1 in the user's cache directory (base/user_cache.h:
 * 0700, owned by the effective user, never through a symbolic link,
 * replaced whole).  A stale, corrupt or foreign file costs a detection,
 * never a wrong answer.  Nothing here prints or reads target memory.
 */
#ifndef VT_ALLOC_DETECT_CACHE_H
#define VT_ALLOC_DETECT_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc/detect.h"
#include "proc/maps.h"

/*
 * The key of the process whose /proc directory is pid_fd, as a string into
 * *key (malloc'd, the caller frees); false when the case is not cached.
 */
bool vt_detect_cache_key(int pid_fd, const struct vt_region_list *regions, const char *env,
			 size_t env_len, char **key);

/* The answer remembered for key into *info (untouched otherwise): false when none. */
bool vt_detect_cache_get(const char *key, struct vt_alloc_info *info);

/* Remember info for key, replacing an entry for it; failures are silent. */
void vt_detect_cache_put(const char *key, const struct vt_alloc_info *info);

/* Answers taken from the cache by this process (for tests). */
unsigned vt_detect_cache_hits(void);

#endif
