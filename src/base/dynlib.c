/*
 * dynlib.c — shared libraries opened on first use (see dynlib.h).
 */
#include "base/dynlib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t dynlib_lock = PTHREAD_MUTEX_INITIALIZER;

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
	handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		const char *why = dlerror();

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
