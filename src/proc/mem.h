/*
 * mem.h — read the memory of another process without stopping it.
 *
 * process_vm_readv needs the same permission as ptrace attach
 * (PTRACE_MODE_ATTACH_REALCREDS): the same user and, under yama, ptrace_scope 0
 * (or 1 for a descendant), or CAP_SYS_PTRACE.  It never stops the target.
 */
#ifndef VT_PROC_MEM_H
#define VT_PROC_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

/* Read exactly len bytes at addr. VT_E_PERM, VT_E_GONE or VT_E_IO (unmapped). */
int vt_mem_read(pid_t pid, uint64_t addr, void *out, size_t len, struct vt_err *err);

/*
 * A process's memory for a walker that reads many small stretches: its pid
 * and its /proc/PID/pagemap, held open (-1: residency unknown).  The three
 * functions take it as ctx and fit alloc/glibc_heap.h's struct vt_heap_mem.
 */
struct vt_mem_target {
	pid_t pid;
	int pagemap_fd;
	int last_errno;              /* of the last failed read (EFAULT: unmapped; ESRCH: gone) */
	bool resident_failed;        /* pagemap was open and a read of it failed */
};

/* 0 when all len bytes at addr were read, else -1 (last_errno says why). */
int vt_mem_target_read(void *ctx, uint64_t addr, void *out, size_t len);
/*
 * present[i] = 1 when page i from addr (page aligned) is resident (pagemap
 * bit 63; an unprivileged reader sees that bit, not the frame; a swapped
 * page is not resident): 0, or -1 when pagemap cannot tell (not open, or
 * its read failed: resident_failed).
 */
int vt_mem_target_resident(void *ctx, uint64_t addr, size_t npages, uint8_t *present);
/* n stretches of len bytes in as few process_vm_readv calls as IOV_MAX allows; ok[i] per stretch. */
void vt_mem_target_read_each(void *ctx, const uint64_t *addrs, size_t n, size_t len, void *out, uint8_t *ok);

#endif
