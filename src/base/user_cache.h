/*
 * user_cache.h — the user's cache directory of vitals, and whole-file
 * replacement of the files in it.
 *
 * The directory is $XDG_CACHE_HOME/vitals (else ~/.cache/vitals), made 0700
 * and used only when it is a real directory owned by the effective user and
 * writable by nobody else; a file in it is read only when it is a regular
 * file (never through a symbolic link) owned by that user and writable by
 * nobody else.  A file is replaced whole (a new file written beside it, then
 * renamed over it), so a reader sees the old one or the new one, and a full
 * disk leaves no partial file.  Any failure means "no cache", silently.
 * Used by the trampoline cache (inject/tramp_cache.c) and the allocator's
 * detection (alloc/detect_cache.c).
 */
#ifndef VT_BASE_USER_CACHE_H
#define VT_BASE_USER_CACHE_H

#include <stdbool.h>
#include <stddef.h>

/* The directory, opened (-1: none).  create: make it, and ~/.cache, when missing. */
int vt_user_cache_dir(bool create);

/* File name's text into buf (NUL-terminated, *len bytes); false when absent, too big or untrusted. */
bool vt_user_cache_read(int dfd, const char *name, char *buf, size_t cap, size_t *len);

/* Replace file name with text (len bytes); false when it could not (the old file then stays). */
bool vt_user_cache_replace(int dfd, const char *name, const char *text, size_t len);

#endif
