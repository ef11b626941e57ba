/*
 * dynlib.c — shared libraries opened on first use (see dynlib.h).
 */
#include "base/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The resource a failed dlopen ran out of (EMFILE, ENFILE, ENOMEM), else 0:
 * the errno it left, or, since dlopen does not promise one, whether a
 * descriptor can be had now.
 */
static int short_of(int dlopen_errno)
{
	int fd;

	if (vt_code_resource(dlopen_errno))
		return dlopen_errno;
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return vt_code_resource(errno) ? errno : 0;
}

int vt_dynlib_load(struct vt_dynlib *lib, struct vt_err *err)
{
	void *handle, *fn[64];
	size_t i;
	int rc = VT_OK;

	/* once loaded, a call costs one load: callers may check on every use */
	if (__atomic_load_n(&lib->loaded, __ATOMIC_ACQUIRE))
		return VT_OK;
	pthread_mutex_lock(&dynlib_lock);
	if (lib->loaded)
		goto out;
	if (lib->nsyms > sizeof(fn) / sizeof(fn[0])) {
		rc = vt_err_set(err, VT_E_FAIL, 0, "%s: %zu functions to look up, at most %zu", lib->soname,
				lib->nsyms, sizeof(fn) / sizeof(fn[0]));
		goto out;
	}
	/* RTLD_NOW: a missing function is found here, not halfway through a request */
	errno = 0;
	handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *why = dlerror();
		int e = short_of(errno);

		if (e) {     /* installed, most likely, but vitals ran short: the limit is named */
			rc = vt_err_set(err, VT_E_FAIL, e, "%s needs %s, which cannot be opened: %s",
					lib->needed_by, lib->soname, why ? why : strerror(e));
			goto out;
		}
		rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "%s needs %s, which cannot be opened: %s",
				lib->needed_by, lib->soname, why ? why : "unknown reason");
		vt_err_hint(err, "install it: apt-get install %s", lib->package);
		goto out;
	}
	for (i = 0; i < lib->nsyms; i++) {
		if (!(fn[i] = dlsym(handle, lib->syms[i].name))) {
			rc = vt_err_set(err, VT_E_UNSUPPORTED, 0, "%s needs %s from %s, which this %s lacks",
					lib->needed_by, lib->syms[i].name, lib->soname, lib->soname);
			vt_err_hint(err, "install Debian's: apt-get install %s", lib->package);
			dlclose(handle);
			goto out;
		}
	}
	for (i = 0; i < lib->nsyms; i++)
		memcpy((char *)lib->table + lib->syms[i].offset, &fn[i], sizeof(fn[i]));
	__atomic_store_n(&lib->loaded, true, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&dynlib_lock);
	return rc;
}
