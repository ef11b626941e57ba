/*
 * pprof_lib.c — protobuf-c opened on first use (see pprof_lib.h).
 *
 * The soname is that of Debian's libprotobuf-c1, which libprotobuf-c-dev
 * pulls in and the package Depends on.
 */
#include "render/pprof_lib.h"

#include "base/dynlib.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

const char vt_protobuf_empty_string[] = "";

static struct vt_protobuf_api api;

#define PSYM(member, name) { name, offsetof(struct vt_protobuf_api, member) }
static const struct vt_dynsym protobuf_syms[] = {
	PSYM(get_packed_size, "protobuf_c_message_get_packed_size"),
	PSYM(pack, "protobuf_c_message_pack"),
	PSYM(pack_to_buffer, "protobuf_c_message_pack_to_buffer"),
	PSYM(unpack, "protobuf_c_message_unpack"),
	PSYM(free_unpacked, "protobuf_c_message_free_unpacked"),
};
#undef PSYM

static struct vt_dynlib protobuf_lib = VT_DYNLIB("libprotobuf-c.so.1", "libprotobuf-c1", "pprof output",
					  protobuf_syms, &api);

int vt_protobuf_load(struct vt_err *err)
{
	return vt_dynlib_load(&protobuf_lib, err);
}

const struct vt_protobuf_api *vt_protobuf(void)
{
	struct vt_err err;

	if (vt_protobuf_load(&err) != VT_OK) {
		fprintf(stderr, "vitals: %s\n", err.msg);
		abort();
	}
	return &api;
}
