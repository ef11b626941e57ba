/*
 * kallsyms.h — kernel function names from /proc/kallsyms, for naming the
 * kernel frames of a profile.  When kptr_restrict hides the addresses
 * (every address reads 0), loading fails with VT_E_PERM and the profile
 * names the kernel part by the system call in progress instead.
 */
#ifndef VT_PROC_KALLSYMS_H
#define VT_PROC_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct vt_ksyms;   /* opaque: function symbols sorted by address */

/* Load /proc/kallsyms (path NULL) or a recorded copy.  VT_E_PERM: addresses hidden. */
int vt_ksyms_load(const char *path, struct vt_ksyms **out, struct vt_err *err);
/* Parse kallsyms text (fuzzers, tests). */
int vt_ksyms_parse(const char *text, size_t len, struct vt_ksyms **out, struct vt_err *err);
/* The function containing addr, or NULL (below the first symbol, or past _etext). */
const char *vt_ksyms_name(const struct vt_ksyms *ks, uint64_t addr);
void vt_ksyms_free(struct vt_ksyms **ks);

#endif
