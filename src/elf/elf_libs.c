/*
 * elf_libs.c — libelf and libdw opened on first use (see elf_libs.h).
 *
 * The sonames are those of the libraries the headers come from: Debian's
 * libelf1 and libdw1, which libelf-dev and libdw-dev pull in and the
 * package Depends on.
 */
#include "elf/elf_libs.h"

#include "base/dynlib.h"

#include <stddef.h>

struct vt_libelf_api vt_libelf;
struct vt_libdw_api vt_libdw;

static const struct vt_dynsym libelf_syms[] = {
	{ "elf_begin", offsetof(struct vt_libelf_api, elf_begin) },
	{ "elf_end", offsetof(struct vt_libelf_api, elf_end) },
	{ "elf_errmsg", offsetof(struct vt_libelf_api, elf_errmsg) },
	{ "elf_getdata", offsetof(struct vt_libelf_api, elf_getdata) },
	{ "elf_getdata_rawchunk", offsetof(struct vt_libelf_api, elf_getdata_rawchunk) },
	{ "elf_getphdrnum", offsetof(struct vt_libelf_api, elf_getphdrnum) },
	{ "elf_getscn", offsetof(struct vt_libelf_api, elf_getscn) },
	{ "elf_getshdrstrndx", offsetof(struct vt_libelf_api, elf_getshdrstrndx) },
	{ "elf_kind", offsetof(struct vt_libelf_api, elf_kind) },
	{ "elf_memory", offsetof(struct vt_libelf_api, elf_memory) },
	{ "elf_ndxscn", offsetof(struct vt_libelf_api, elf_ndxscn) },
	{ "elf_nextscn", offsetof(struct vt_libelf_api, elf_nextscn) },
	{ "elf_rawdata", offsetof(struct vt_libelf_api, elf_rawdata) },
	{ "elf_strptr", offsetof(struct vt_libelf_api, elf_strptr) },
	{ "elf_version", offsetof(struct vt_libelf_api, elf_version) },
	{ "gelf_fsize", offsetof(struct vt_libelf_api, gelf_fsize) },
	{ "gelf_getclass", offsetof(struct vt_libelf_api, gelf_getclass) },
	{ "gelf_getdyn", offsetof(struct vt_libelf_api, gelf_getdyn) },
	{ "gelf_getehdr", offsetof(struct vt_libelf_api, gelf_getehdr) },
	{ "gelf_getphdr", offsetof(struct vt_libelf_api, gelf_getphdr) },
	{ "gelf_getrel", offsetof(struct vt_libelf_api, gelf_getrel) },
	{ "gelf_getrela", offsetof(struct vt_libelf_api, gelf_getrela) },
	{ "gelf_getshdr", offsetof(struct vt_libelf_api, gelf_getshdr) },
	{ "gelf_getsym", offsetof(struct vt_libelf_api, gelf_getsym) },
	{ "gelf_getverdaux", offsetof(struct vt_libelf_api, gelf_getverdaux) },
	{ "gelf_getverdef", offsetof(struct vt_libelf_api, gelf_getverdef) },
	{ "gelf_getversym", offsetof(struct vt_libelf_api, gelf_getversym) },
};

static const struct vt_dynsym libdw_syms[] = {
	{ "dwarf_attr", offsetof(struct vt_libdw_api, dwarf_attr) },
	{ "dwarf_attr_integrate", offsetof(struct vt_libdw_api, dwarf_attr_integrate) },
	{ "dwarf_cfi_addrframe", offsetof(struct vt_libdw_api, dwarf_cfi_addrframe) },
	{ "dwarf_child", offsetof(struct vt_libdw_api, dwarf_child) },
	{ "dwarf_cu_getdwarf", offsetof(struct vt_libdw_api, dwarf_cu_getdwarf) },
	{ "dwarf_cu_info", offsetof(struct vt_libdw_api, dwarf_cu_info) },
	{ "dwarf_decl_file", offsetof(struct vt_libdw_api, dwarf_decl_file) },
	{ "dwarf_decl_line", offsetof(struct vt_libdw_api, dwarf_decl_line) },
	{ "dwarf_dieoffset", offsetof(struct vt_libdw_api, dwarf_dieoffset) },
	{ "dwarf_filesrc", offsetof(struct vt_libdw_api, dwarf_filesrc) },
	{ "dwarf_formstring", offsetof(struct vt_libdw_api, dwarf_formstring) },
	{ "dwarf_formudata", offsetof(struct vt_libdw_api, dwarf_formudata) },
	{ "dwarf_frame_info", offsetof(struct vt_libdw_api, dwarf_frame_info) },
	{ "dwarf_frame_register", offsetof(struct vt_libdw_api, dwarf_frame_register) },
	{ "dwarf_get_units", offsetof(struct vt_libdw_api, dwarf_get_units) },
	{ "dwarf_getsrcfiles", offsetof(struct vt_libdw_api, dwarf_getsrcfiles) },
	{ "dwarf_haspc", offsetof(struct vt_libdw_api, dwarf_haspc) },
	{ "dwarf_highpc", offsetof(struct vt_libdw_api, dwarf_highpc) },
	{ "dwarf_lowpc", offsetof(struct vt_libdw_api, dwarf_lowpc) },
	{ "dwarf_offdie", offsetof(struct vt_libdw_api, dwarf_offdie) },
	{ "dwarf_ranges", offsetof(struct vt_libdw_api, dwarf_ranges) },
	{ "dwarf_siblingof", offsetof(struct vt_libdw_api, dwarf_siblingof) },
	{ "dwarf_tag", offsetof(struct vt_libdw_api, dwarf_tag) },
	{ "dwelf_elf_gnu_build_id", offsetof(struct vt_libdw_api, dwelf_elf_gnu_build_id) },
	{ "dwfl_addrmodule", offsetof(struct vt_libdw_api, dwfl_addrmodule) },
	{ "dwfl_attach_state", offsetof(struct vt_libdw_api, dwfl_attach_state) },
	{ "dwfl_begin", offsetof(struct vt_libdw_api, dwfl_begin) },
	{ "dwfl_build_id_find_debuginfo", offsetof(struct vt_libdw_api, dwfl_build_id_find_debuginfo) },
	{ "dwfl_end", offsetof(struct vt_libdw_api, dwfl_end) },
	{ "dwfl_errmsg", offsetof(struct vt_libdw_api, dwfl_errmsg) },
	{ "dwfl_frame_pc", offsetof(struct vt_libdw_api, dwfl_frame_pc) },
	{ "dwfl_getthread_frames", offsetof(struct vt_libdw_api, dwfl_getthread_frames) },
	{ "dwfl_lineinfo", offsetof(struct vt_libdw_api, dwfl_lineinfo) },
	{ "dwfl_module_addrdie", offsetof(struct vt_libdw_api, dwfl_module_addrdie) },
	{ "dwfl_module_addrinfo", offsetof(struct vt_libdw_api, dwfl_module_addrinfo) },
	{ "dwfl_module_build_id", offsetof(struct vt_libdw_api, dwfl_module_build_id) },
	{ "dwfl_module_dwarf_cfi", offsetof(struct vt_libdw_api, dwfl_module_dwarf_cfi) },
	{ "dwfl_module_eh_cfi", offsetof(struct vt_libdw_api, dwfl_module_eh_cfi) },
	{ "dwfl_module_getdwarf", offsetof(struct vt_libdw_api, dwfl_module_getdwarf) },
	{ "dwfl_module_getelf", offsetof(struct vt_libdw_api, dwfl_module_getelf) },
	{ "dwfl_module_getsrc", offsetof(struct vt_libdw_api, dwfl_module_getsrc) },
	{ "dwfl_module_getsymtab", offsetof(struct vt_libdw_api, dwfl_module_getsymtab) },
	{ "dwfl_module_info", offsetof(struct vt_libdw_api, dwfl_module_info) },
	{ "dwfl_offline_section_address", offsetof(struct vt_libdw_api, dwfl_offline_section_address) },
	{ "dwfl_report_begin", offsetof(struct vt_libdw_api, dwfl_report_begin) },
	{ "dwfl_report_end", offsetof(struct vt_libdw_api, dwfl_report_end) },
	{ "dwfl_report_module", offsetof(struct vt_libdw_api, dwfl_report_module) },
	{ "dwfl_thread_state_register_pc", offsetof(struct vt_libdw_api, dwfl_thread_state_register_pc) },
	{ "dwfl_thread_state_registers", offsetof(struct vt_libdw_api, dwfl_thread_state_registers) },
};

static struct vt_dynlib libelf_lib = VT_DYNLIB("libelf.so.1", "libelf1", "reading ELF files",
					libelf_syms, &vt_libelf);
static struct vt_dynlib libdw_lib = VT_DYNLIB("libdw.so.1", "libdw1", "unwinding and symbolising stacks",
					libdw_syms, &vt_libdw);

int vt_libelf_load(struct vt_err *err)
{
	return vt_dynlib_load(&libelf_lib, err);
}

int vt_libdw_load(struct vt_err *err)
{
	int rc = vt_libelf_load(err);

	return rc ? rc : vt_dynlib_load(&libdw_lib, err);
}
