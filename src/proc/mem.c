/*
 * mem.c — process_vm_readv wrapper.
 */
#include "proc/mem.h"

#include <errno.h>
#include <string.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

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

int vt_mem_target_read(void *ctx, uint64_t addr, void *out, size_t len)
{
	struct vt_mem_target *t = ctx;
	struct iovec local = { out, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	t->last_errno = n < 0 ? errno : EFAULT;
	return -1;
}

#define PAGEMAP_BATCH 512

int vt_mem_target_resident(void *ctx, uint64_t addr, size_t npages, uint8_t *present)
{
	struct vt_mem_target *t = ctx;
	uint64_t e[PAGEMAP_BATCH];
	size_t done = 0, i;

	if (t->pagemap_fd < 0)
		return -1;
	while (done < npages) {
		size_t n = npages - done < PAGEMAP_BATCH ? npages - done : PAGEMAP_BATCH;
		off_t off = (off_t)((addr / 4096 + done) * sizeof(uint64_t));

		if (pread(t->pagemap_fd, e, n * sizeof(uint64_t), off) != (ssize_t)(n * sizeof(uint64_t))) {
			t->resident_failed = true;
			return -1;
		}
		for (i = 0; i < n; i++)
			present[done + i] = (uint8_t)((e[i] >> 63) & 1);
		done += n;
	}
	return 0;
}

/*
 * process_vm_readv transfers whole iovecs and stops at the first remote one
 * that fails (process_vm_readv(2): "partial transfers apply at the
 * granularity of iovec elements"): what it read is ok, the one after is
 * not, and the call goes on from the next.
 */
void vt_mem_target_read_each(void *ctx, const uint64_t *addrs, size_t n, size_t len, void *out, uint8_t *ok)
{
	const struct vt_mem_target *t = ctx;
	struct iovec local[IOV_MAX < 1024 ? IOV_MAX : 1024], remote[IOV_MAX < 1024 ? IOV_MAX : 1024];
	const size_t max = sizeof(local) / sizeof(local[0]);
	size_t i = 0, j;

	while (i < n) {
		size_t k = n - i < max ? n - i : max, got;
		ssize_t r;

		for (j = 0; j < k; j++) {
			local[j].iov_base = (uint8_t *)out + (i + j) * len;
			local[j].iov_len = len;
			remote[j].iov_base = (void *)(uintptr_t)addrs[i + j];
			remote[j].iov_len = len;
		}
		r = process_vm_readv(t->pid, local, k, remote, k, 0);
		got = r > 0 ? (size_t)r / len : 0;
		for (j = 0; j < got; j++)
			ok[i + j] = 1;
		if (got < k)
			ok[i + got++] = 0;      /* the one that failed */
		i += got;
	}
}
