/*
 * mem.c — process_vm_readv wrapper.
 */
#include "proc/mem.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

int vt_mem_read(pid_t pid, uint64_t addr, void *out, size_t len, struct vt_err *err)
{
	struct iovec local = { out, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	int e;

	if (n == (ssize_t)len)
		return VT_OK;
	e = n < 0 ? errno : EFAULT;
	if (e == EFAULT)
		return vt_err_set(err, VT_E_IO, e, "address 0x%llx is not readable in %d",
				  (unsigned long long)addr, (int)pid);
	return vt_err_set(err, vt_code_from_errno(e), e, "cannot read memory of %d: %s", (int)pid,
			  strerror(e));
}
