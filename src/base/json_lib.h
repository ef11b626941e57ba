/*
 * json_lib.h — jansson, opened the first time vitals makes or reads JSON
 * (base/dynlib.h says why): a text snapshot or a heap probe that prints no
 * JSON never maps or relocates it.
 *
 * Include this, not <jansson.h>.  The macros below send each jansson call
 * by its own name through a table of pointers typed from jansson's header,
 * so the code reads as plain jansson; the header's inline helpers that call
 * into the library (json_decref, json_object_update_new) are replaced by
 * ones that use the table.  A jansson function not in the table does not
 * link into vitals (add it here and in json_lib.c).
 *
 * libjansson4 is one of the package's Depends: when it cannot be opened,
 * the first JSON call ends the process through the handler vitals' main()
 * set (it prints the error, naming the package, and exits 8), as the
 * dynamic loader once refused to start vitals without it.
 */
#ifndef VT_BASE_JSON_LIB_H
#define VT_BASE_JSON_LIB_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

struct vt_jansson_api {
	__typeof__(&json_array) array;
	__typeof__(&json_array_append_new) array_append_new;
	__typeof__(&json_array_get) array_get;
	__typeof__(&json_array_size) array_size;
	__typeof__(&json_delete) delete_;
	__typeof__(&json_dumpf) dumpf;
	__typeof__(&json_dumps) dumps;
	__typeof__(&json_false) false_;
	__typeof__(&json_integer) integer;
	__typeof__(&json_integer_value) integer_value;
	__typeof__(&json_loadb) loadb;
	__typeof__(&json_loads) loads;
	__typeof__(&json_null) null;
	__typeof__(&json_number_value) number_value;
	__typeof__(&json_object) object;
	__typeof__(&json_object_get) object_get;
	__typeof__(&json_object_iter) object_iter;
	__typeof__(&json_object_iter_key) object_iter_key;
	__typeof__(&json_object_iter_next) object_iter_next;
	__typeof__(&json_object_iter_value) object_iter_value;
	__typeof__(&json_object_key_to_iter) object_key_to_iter;
	__typeof__(&json_object_set_new) object_set_new;
	__typeof__(&json_object_size) object_size;
	__typeof__(&json_object_update) object_update;
	__typeof__(&json_pack) pack;
	__typeof__(&json_real) real;
	__typeof__(&json_set_alloc_funcs) set_alloc_funcs;
	__typeof__(&json_string) string;
	__typeof__(&json_string_length) string_length;
	__typeof__(&json_string_value) string_value;
	__typeof__(&json_true) true_;
};

extern struct vt_jansson_api vt_jansson_api;
extern bool vt_jansson_loaded;

/* Open jansson and fill vt_jansson_api (once): VT_OK, or err naming libjansson4. */
int vt_jansson_load(struct vt_err *err);

/*
 * What the first JSON call does when jansson cannot be opened: print err
 * and end the process.  main() sets one that words it as every error is
 * worded; without one (a test, a fuzzer) the process aborts after printing.
 */
typedef void (*vt_jansson_missing_fn)(const struct vt_err *err);
void vt_jansson_on_missing(vt_jansson_missing_fn fn);

/*
 * Whether one of jansson's allocations failed on this thread since
 * vt_json_alloc_watch: jansson names some of its out-of-memory failures an
 * invalid token (a string's buffer in its lexer), so a failed parse asks
 * this rather than the error's code.  vitals' allocator for jansson is
 * malloc and free, set when the library is opened.
 */
void vt_json_alloc_watch(void);
bool vt_json_alloc_failed(void);

/* The table, jansson opened on first use (or the process ended, as above). */
const struct vt_jansson_api *vt_jansson_need(void);

static inline const struct vt_jansson_api *vt_jansson(void)
{
	if (__builtin_expect(!__atomic_load_n(&vt_jansson_loaded, __ATOMIC_ACQUIRE), 0))
		return vt_jansson_need();
	return &vt_jansson_api;
}

/* json_decref and json_object_update_new from <jansson.h>, calling through the table */
static inline void vt_json_decref(json_t *json)
{
	if (json && json->refcount != (size_t)-1 && JSON_INTERNAL_DECREF(json) == 0)
		vt_jansson()->delete_(json);
}

static inline int vt_json_object_update_new(json_t *object, json_t *other)
{
	int ret = vt_jansson()->object_update(object, other);

	vt_json_decref(other);
	return ret;
}

#define json_array(...)              (vt_jansson()->array(__VA_ARGS__))
#define json_array_append_new(...)   (vt_jansson()->array_append_new(__VA_ARGS__))
#define json_array_get(...)          (vt_jansson()->array_get(__VA_ARGS__))
#define json_array_size(...)         (vt_jansson()->array_size(__VA_ARGS__))
#define json_delete(...)             (vt_jansson()->delete_(__VA_ARGS__))
#define json_dumpf(...)              (vt_jansson()->dumpf(__VA_ARGS__))
#define json_dumps(...)              (vt_jansson()->dumps(__VA_ARGS__))
#define json_false(...)              (vt_jansson()->false_(__VA_ARGS__))
#define json_integer(...)            (vt_jansson()->integer(__VA_ARGS__))
#define json_integer_value(...)      (vt_jansson()->integer_value(__VA_ARGS__))
#define json_loadb(...)              (vt_jansson()->loadb(__VA_ARGS__))
#define json_loads(...)              (vt_jansson()->loads(__VA_ARGS__))
#define json_null(...)               (vt_jansson()->null(__VA_ARGS__))
#define json_number_value(...)       (vt_jansson()->number_value(__VA_ARGS__))
#define json_object(...)             (vt_jansson()->object(__VA_ARGS__))
#define json_object_get(...)         (vt_jansson()->object_get(__VA_ARGS__))
#define json_object_iter(...)        (vt_jansson()->object_iter(__VA_ARGS__))
#define json_object_iter_key(...)    (vt_jansson()->object_iter_key(__VA_ARGS__))
#define json_object_iter_next(...)   (vt_jansson()->object_iter_next(__VA_ARGS__))
#define json_object_iter_value(...)  (vt_jansson()->object_iter_value(__VA_ARGS__))
#define json_object_key_to_iter(...) (vt_jansson()->object_key_to_iter(__VA_ARGS__))
#define json_object_set_new(...)     (vt_jansson()->object_set_new(__VA_ARGS__))
#define json_object_size(...)        (vt_jansson()->object_size(__VA_ARGS__))
#define json_object_update(...)      (vt_jansson()->object_update(__VA_ARGS__))
#define json_pack(...)               (vt_jansson()->pack(__VA_ARGS__))
#define json_real(...)               (vt_jansson()->real(__VA_ARGS__))
#define json_string(...)             (vt_jansson()->string(__VA_ARGS__))
#define json_string_length(...)      (vt_jansson()->string_length(__VA_ARGS__))
#define json_string_value(...)       (vt_jansson()->string_value(__VA_ARGS__))
#define json_true(...)               (vt_jansson()->true_(__VA_ARGS__))
#define json_decref(json)            vt_json_decref(json)
#define json_object_update_new(o, v) vt_json_object_update_new((o), (v))

#endif
