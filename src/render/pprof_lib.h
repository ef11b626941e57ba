/*
 * pprof_lib.h — protobuf-c, opened the first time vitals writes or reads a
 * pprof profile (base/dynlib.h says why): no other command maps it.
 *
 * The code protoc-c generates from proto/profile.proto (the Makefile's
 * $(B)/gen/profile.pb-c.c) is compiled with this header forced in first:
 * its calls into protobuf-c go by their own names through a table typed
 * from protobuf-c's header, and its one reference to the library's data
 * (protobuf_c_empty_string, a string field's default) is to vitals' own
 * empty string.  A protobuf-c function not in the table does not link into
 * vitals (add it here and in pprof_lib.c).
 *
 * vt_protobuf_load is what a writer calls first, to return the error;
 * a call through the table before it opens the library then, and aborts
 * saying why when it cannot (a test, a path that forgot).
 */
#ifndef VT_RENDER_PPROF_LIB_H
#define VT_RENDER_PPROF_LIB_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>

#include "base/error.h"

struct vt_protobuf_api {
	__typeof__(&protobuf_c_message_get_packed_size) get_packed_size;
	__typeof__(&protobuf_c_message_pack) pack;
	__typeof__(&protobuf_c_message_pack_to_buffer) pack_to_buffer;
	__typeof__(&protobuf_c_message_unpack) unpack;
	__typeof__(&protobuf_c_message_free_unpacked) free_unpacked;
};

/* Open protobuf-c (once): VT_OK, or VT_E_UNSUPPORTED naming libprotobuf-c1. */
int vt_protobuf_load(struct vt_err *err);

/* The table, protobuf-c opened on first use (or the process aborted, as above). */
const struct vt_protobuf_api *vt_protobuf(void);

/* What the generated code's string defaults point at, in place of the library's. */
extern const char vt_protobuf_empty_string[];

#define protobuf_c_message_get_packed_size(...) (vt_protobuf()->get_packed_size(__VA_ARGS__))
#define protobuf_c_message_pack(...)            (vt_protobuf()->pack(__VA_ARGS__))
#define protobuf_c_message_pack_to_buffer(...)  (vt_protobuf()->pack_to_buffer(__VA_ARGS__))
#define protobuf_c_message_unpack(...)          (vt_protobuf()->unpack(__VA_ARGS__))
#define protobuf_c_message_free_unpacked(...)   (vt_protobuf()->free_unpacked(__VA_ARGS__))
#define protobuf_c_empty_string                 vt_protobuf_empty_string

#endif
