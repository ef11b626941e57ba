/*
 * json_lib.c — jansson opened on first use (see json_lib.h).
 *
 * The soname is that of Debian's libjansson4, which libjansson-dev pulls in
 * and the package Depends on.
 */
#include "base/json_lib.h"

#include "base/dynlib.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

struct vt_jansson_api vt_jansson_api;
bool vt_jansson_loaded;

#define JSYM(member, name) { name, offsetof(struct vt_jansson_api, member) }
static const struct vt_dynsym jansson_syms[] = {
	JSYM(array, "json_array"),
	JSYM(array_append_new, "json_array_append_new"),
	JSYM(array_get, "json_array_get"),
	JSYM(array_size, "json_array_size"),
	JSYM(delete_, "json_delete"),
	JSYM(dumpf, "json_dumpf"),
	JSYM(dumps, "json_dumps"),
	JSYM(false_, "json_false"),
	JSYM(integer, "json_integer"),
	JSYM(integer_value, "json_integer_value"),
	JSYM(loadb, "json_loadb"),
	JSYM(loads, "json_loads"),
	JSYM(null, "json_null"),
	JSYM(number_value, "json_number_value"),
	JSYM(object, "json_object"),
	JSYM(object_get, "json_object_get"),
	JSYM(object_iter, "json_object_iter"),
	JSYM(object_iter_key, "json_object_iter_key"),
	JSYM(object_iter_next, "json_object_iter_next"),
	JSYM(object_iter_value, "json_object_iter_value"),
	JSYM(object_key_to_iter, "json_object_key_to_iter"),
	JSYM(object_set_new, "json_object_set_new"),
	JSYM(object_size, "json_object_size"),
	JSYM(object_update, "json_object_update"),
	JSYM(pack, "json_pack"),
	JSYM(real, "json_real"),
	JSYM(set_alloc_funcs, "json_set_alloc_funcs"),
	JSYM(string, "json_string"),
	JSYM(string_length, "json_string_length"),
	JSYM(string_value, "json_string_value"),
	JSYM(true_, "json_true"),
};
#undef JSYM

static struct vt_dynlib jansson_lib = VT_DYNLIB("libjansson.so.4", "libjansson4", "JSON",
					 jansson_syms, &vt_jansson_api);

static vt_jansson_missing_fn on_missing;
static __thread bool alloc_failed;

/* jansson's allocator: malloc, noting on this thread that it failed (vt_json_alloc_failed) */
static void *json_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		alloc_failed = true;
	return p;
}

/* Once, before vitals makes any JSON value. */
static void set_funcs(void)
{
	vt_jansson_api.set_alloc_funcs(json_malloc, free);
}

void vt_json_alloc_watch(void)
{
	alloc_failed = false;
}

bool vt_json_alloc_failed(void)
{
	return alloc_failed;
}

int vt_jansson_load(struct vt_err *err)
{
	static pthread_once_t funcs_once = PTHREAD_ONCE_INIT;
	int rc = vt_dynlib_load(&jansson_lib, err);

	if (rc != VT_OK)
		return rc;
	pthread_once(&funcs_once, set_funcs);
	__atomic_store_n(&vt_jansson_loaded, true, __ATOMIC_RELEASE);
	return rc;
}

void vt_jansson_on_missing(vt_jansson_missing_fn fn)
{
	on_missing = fn;
}

const struct vt_jansson_api *vt_jansson_need(void)
{
	struct vt_err err;

	if (vt_jansson_load(&err) == VT_OK)
		return &vt_jansson_api;
	if (on_missing)
		on_missing(&err);
	/* no handler, or one that returned: nothing can go on without it */
	fprintf(stderr, "vitals: %s\n", err.msg);
	abort();
}
