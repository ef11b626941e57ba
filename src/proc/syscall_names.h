/*
 * syscall_names.h — the name of a system call number on this architecture.
 *
 * The table is generated at build time from the kernel's <asm/unistd.h>
 * (see the Makefile), so it matches the architecture vitals runs on.
 */
#ifndef VT_CPU_SYSCALL_NAMES_H
#define VT_CPU_SYSCALL_NAMES_H

#include <stddef.h>

/* "futex" for 202 on x86_64; NULL for a number the header does not define. */
const char *vt_syscall_name(long nr);

/* Into out: the name, "#N" for a number without one, "" for nr < 0 (none, running). */
void vt_syscall_label(long nr, char *out, size_t cap);

#endif
