/*
 * elf_libs.h — elfutils' libelf and libdw, opened when vitals first reads
 * an ELF file or unwinds a stack (base/dynlib.h says why): commands that
 * read neither never map or relocate them.
 *
 * The functions src/elf calls, in two tables typed from elfutils' headers;
 * the macros below send each call by its elfutils name through the table,
 * so the code reads as plain elfutils.  The ways in load first:
 * vt_elfsym_open_* and vt_plt_name load libelf, vt_unwinder_open libdw and
 * libelf.  An elfutils function not in these tables does not link into
 * vitals (add it here).  Only src/elf/{elfsym,plt,unwind}.c include this.
 */
#ifndef VT_ELF_ELF_LIBS_H
#define VT_ELF_ELF_LIBS_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "base/error.h"

struct vt_libelf_api {
	__typeof__(&elf_begin) elf_begin;
	__typeof__(&elf_end) elf_end;
	__typeof__(&elf_errmsg) elf_errmsg;
	__typeof__(&elf_getdata) elf_getdata;
	__typeof__(&elf_getdata_rawchunk) elf_getdata_rawchunk;
	__typeof__(&elf_getphdrnum) elf_getphdrnum;
	__typeof__(&elf_getscn) elf_getscn;
	__typeof__(&elf_getshdrstrndx) elf_getshdrstrndx;
	__typeof__(&elf_kind) elf_kind;
	__typeof__(&elf_memory) elf_memory;
	__typeof__(&elf_ndxscn) elf_ndxscn;
	__typeof__(&elf_nextscn) elf_nextscn;
	__typeof__(&elf_rawdata) elf_rawdata;
	__typeof__(&elf_strptr) elf_strptr;
	__typeof__(&elf_version) elf_version;
	__typeof__(&gelf_fsize) gelf_fsize;
	__typeof__(&gelf_getclass) gelf_getclass;
	__typeof__(&gelf_getdyn) gelf_getdyn;
	__typeof__(&gelf_getehdr) gelf_getehdr;
	__typeof__(&gelf_getphdr) gelf_getphdr;
	__typeof__(&gelf_getrel) gelf_getrel;
	__typeof__(&gelf_getrela) gelf_getrela;
	__typeof__(&gelf_getshdr) gelf_getshdr;
	__typeof__(&gelf_getsym) gelf_getsym;
	__typeof__(&gelf_getverdaux) gelf_getverdaux;
	__typeof__(&gelf_getverdef) gelf_getverdef;
	__typeof__(&gelf_getversym) gelf_getversym;
};

struct vt_libdw_api {
	__typeof__(&dwarf_attr) dwarf_attr;
	__typeof__(&dwarf_attr_integrate) dwarf_attr_integrate;
	__typeof__(&dwarf_cfi_addrframe) dwarf_cfi_addrframe;
	__typeof__(&dwarf_child) dwarf_child;
	__typeof__(&dwarf_cu_getdwarf) dwarf_cu_getdwarf;
	__typeof__(&dwarf_cu_info) dwarf_cu_info;
	__typeof__(&dwarf_decl_file) dwarf_decl_file;
	__typeof__(&dwarf_decl_line) dwarf_decl_line;
	__typeof__(&dwarf_dieoffset) dwarf_dieoffset;
	__typeof__(&dwarf_filesrc) dwarf_filesrc;
	__typeof__(&dwarf_formstring) dwarf_formstring;
	__typeof__(&dwarf_formudata) dwarf_formudata;
	__typeof__(&dwarf_frame_info) dwarf_frame_info;
	__typeof__(&dwarf_frame_register) dwarf_frame_register;
	__typeof__(&dwarf_get_units) dwarf_get_units;
	__typeof__(&dwarf_getsrcfiles) dwarf_getsrcfiles;
	__typeof__(&dwarf_haspc) dwarf_haspc;
	__typeof__(&dwarf_highpc) dwarf_highpc;
	__typeof__(&dwarf_lowpc) dwarf_lowpc;
	__typeof__(&dwarf_offdie) dwarf_offdie;
	__typeof__(&dwarf_ranges) dwarf_ranges;
	__typeof__(&dwarf_siblingof) dwarf_siblingof;
	__typeof__(&dwarf_tag) dwarf_tag;
	__typeof__(&dwelf_elf_gnu_build_id) dwelf_elf_gnu_build_id;
	__typeof__(&dwfl_addrmodule) dwfl_addrmodule;
	__typeof__(&dwfl_attach_state) dwfl_attach_state;
	__typeof__(&dwfl_begin) dwfl_begin;
	__typeof__(&dwfl_build_id_find_debuginfo) dwfl_build_id_find_debuginfo;
	__typeof__(&dwfl_end) dwfl_end;
	__typeof__(&dwfl_errmsg) dwfl_errmsg;
	__typeof__(&dwfl_frame_pc) dwfl_frame_pc;
	__typeof__(&dwfl_getthread_frames) dwfl_getthread_frames;
	__typeof__(&dwfl_lineinfo) dwfl_lineinfo;
	__typeof__(&dwfl_module_addrdie) dwfl_module_addrdie;
	__typeof__(&dwfl_module_addrinfo) dwfl_module_addrinfo;
	__typeof__(&dwfl_module_build_id) dwfl_module_build_id;
	__typeof__(&dwfl_module_dwarf_cfi) dwfl_module_dwarf_cfi;
	__typeof__(&dwfl_module_eh_cfi) dwfl_module_eh_cfi;
	__typeof__(&dwfl_module_getdwarf) dwfl_module_getdwarf;
	__typeof__(&dwfl_module_getelf) dwfl_module_getelf;
	__typeof__(&dwfl_module_getsrc) dwfl_module_getsrc;
	__typeof__(&dwfl_module_getsymtab) dwfl_module_getsymtab;
	__typeof__(&dwfl_module_info) dwfl_module_info;
	__typeof__(&dwfl_offline_section_address) dwfl_offline_section_address;
	__typeof__(&dwfl_report_begin) dwfl_report_begin;
	__typeof__(&dwfl_report_end) dwfl_report_end;
	__typeof__(&dwfl_report_module) dwfl_report_module;
	__typeof__(&dwfl_thread_state_register_pc) dwfl_thread_state_register_pc;
	__typeof__(&dwfl_thread_state_registers) dwfl_thread_state_registers;
};

/* Filled by the loads below; call nothing in them before a load returned VT_OK. */
extern struct vt_libelf_api vt_libelf;
extern struct vt_libdw_api vt_libdw;

/*
 * Open the library (once) and fill its table; VT_E_UNSUPPORTED naming the
 * package when it is missing.  vt_libdw_load loads libelf too.
 */
int vt_libelf_load(struct vt_err *err);
int vt_libdw_load(struct vt_err *err);

#define elf_begin(...)            (vt_libelf.elf_begin(__VA_ARGS__))
#define elf_end(...)              (vt_libelf.elf_end(__VA_ARGS__))
#define elf_errmsg(...)           (vt_libelf.elf_errmsg(__VA_ARGS__))
#define elf_getdata(...)          (vt_libelf.elf_getdata(__VA_ARGS__))
#define elf_getdata_rawchunk(...) (vt_libelf.elf_getdata_rawchunk(__VA_ARGS__))
#define elf_getphdrnum(...)       (vt_libelf.elf_getphdrnum(__VA_ARGS__))
#define elf_getscn(...)           (vt_libelf.elf_getscn(__VA_ARGS__))
#define elf_getshdrstrndx(...)    (vt_libelf.elf_getshdrstrndx(__VA_ARGS__))
#define elf_kind(...)             (vt_libelf.elf_kind(__VA_ARGS__))
#define elf_memory(...)           (vt_libelf.elf_memory(__VA_ARGS__))
#define elf_ndxscn(...)           (vt_libelf.elf_ndxscn(__VA_ARGS__))
#define elf_nextscn(...)          (vt_libelf.elf_nextscn(__VA_ARGS__))
#define elf_rawdata(...)          (vt_libelf.elf_rawdata(__VA_ARGS__))
#define elf_strptr(...)           (vt_libelf.elf_strptr(__VA_ARGS__))
#define elf_version(...)          (vt_libelf.elf_version(__VA_ARGS__))
#define gelf_fsize(...)           (vt_libelf.gelf_fsize(__VA_ARGS__))
#define gelf_getclass(...)        (vt_libelf.gelf_getclass(__VA_ARGS__))
#define gelf_getdyn(...)          (vt_libelf.gelf_getdyn(__VA_ARGS__))
#define gelf_getehdr(...)         (vt_libelf.gelf_getehdr(__VA_ARGS__))
#define gelf_getphdr(...)         (vt_libelf.gelf_getphdr(__VA_ARGS__))
#define gelf_getrel(...)          (vt_libelf.gelf_getrel(__VA_ARGS__))
#define gelf_getrela(...)         (vt_libelf.gelf_getrela(__VA_ARGS__))
#define gelf_getshdr(...)         (vt_libelf.gelf_getshdr(__VA_ARGS__))
#define gelf_getsym(...)          (vt_libelf.gelf_getsym(__VA_ARGS__))
#define gelf_getverdaux(...)      (vt_libelf.gelf_getverdaux(__VA_ARGS__))
#define gelf_getverdef(...)       (vt_libelf.gelf_getverdef(__VA_ARGS__))
#define gelf_getversym(...)       (vt_libelf.gelf_getversym(__VA_ARGS__))

#define dwarf_attr(...)                    (vt_libdw.dwarf_attr(__VA_ARGS__))
#define dwarf_attr_integrate(...)          (vt_libdw.dwarf_attr_integrate(__VA_ARGS__))
#define dwarf_cfi_addrframe(...)           (vt_libdw.dwarf_cfi_addrframe(__VA_ARGS__))
#define dwarf_child(...)                   (vt_libdw.dwarf_child(__VA_ARGS__))
#define dwarf_cu_getdwarf(...)             (vt_libdw.dwarf_cu_getdwarf(__VA_ARGS__))
#define dwarf_cu_info(...)                 (vt_libdw.dwarf_cu_info(__VA_ARGS__))
#define dwarf_decl_file(...)               (vt_libdw.dwarf_decl_file(__VA_ARGS__))
#define dwarf_decl_line(...)               (vt_libdw.dwarf_decl_line(__VA_ARGS__))
#define dwarf_dieoffset(...)               (vt_libdw.dwarf_dieoffset(__VA_ARGS__))
#define dwarf_filesrc(...)                 (vt_libdw.dwarf_filesrc(__VA_ARGS__))
#define dwarf_formstring(...)              (vt_libdw.dwarf_formstring(__VA_ARGS__))
#define dwarf_formudata(...)               (vt_libdw.dwarf_formudata(__VA_ARGS__))
#define dwarf_frame_info(...)              (vt_libdw.dwarf_frame_info(__VA_ARGS__))
#define dwarf_frame_register(...)          (vt_libdw.dwarf_frame_register(__VA_ARGS__))
#define dwarf_get_units(...)               (vt_libdw.dwarf_get_units(__VA_ARGS__))
#define dwarf_getsrcfiles(...)             (vt_libdw.dwarf_getsrcfiles(__VA_ARGS__))
#define dwarf_haspc(...)                   (vt_libdw.dwarf_haspc(__VA_ARGS__))
#define dwarf_highpc(...)                  (vt_libdw.dwarf_highpc(__VA_ARGS__))
#define dwarf_lowpc(...)                   (vt_libdw.dwarf_lowpc(__VA_ARGS__))
#define dwarf_offdie(...)                  (vt_libdw.dwarf_offdie(__VA_ARGS__))
#define dwarf_ranges(...)                  (vt_libdw.dwarf_ranges(__VA_ARGS__))
#define dwarf_siblingof(...)               (vt_libdw.dwarf_siblingof(__VA_ARGS__))
#define dwarf_tag(...)                     (vt_libdw.dwarf_tag(__VA_ARGS__))
#define dwelf_elf_gnu_build_id(...)        (vt_libdw.dwelf_elf_gnu_build_id(__VA_ARGS__))
#define dwfl_addrmodule(...)               (vt_libdw.dwfl_addrmodule(__VA_ARGS__))
#define dwfl_attach_state(...)             (vt_libdw.dwfl_attach_state(__VA_ARGS__))
#define dwfl_begin(...)                    (vt_libdw.dwfl_begin(__VA_ARGS__))
#define dwfl_build_id_find_debuginfo(...)  (vt_libdw.dwfl_build_id_find_debuginfo(__VA_ARGS__))
#define dwfl_end(...)                      (vt_libdw.dwfl_end(__VA_ARGS__))
#define dwfl_errmsg(...)                   (vt_libdw.dwfl_errmsg(__VA_ARGS__))
#define dwfl_frame_pc(...)                 (vt_libdw.dwfl_frame_pc(__VA_ARGS__))
#define dwfl_getthread_frames(...)         (vt_libdw.dwfl_getthread_frames(__VA_ARGS__))
#define dwfl_lineinfo(...)                 (vt_libdw.dwfl_lineinfo(__VA_ARGS__))
#define dwfl_module_addrdie(...)           (vt_libdw.dwfl_module_addrdie(__VA_ARGS__))
#define dwfl_module_addrinfo(...)          (vt_libdw.dwfl_module_addrinfo(__VA_ARGS__))
#define dwfl_module_build_id(...)          (vt_libdw.dwfl_module_build_id(__VA_ARGS__))
#define dwfl_module_dwarf_cfi(...)         (vt_libdw.dwfl_module_dwarf_cfi(__VA_ARGS__))
#define dwfl_module_eh_cfi(...)            (vt_libdw.dwfl_module_eh_cfi(__VA_ARGS__))
#define dwfl_module_getdwarf(...)          (vt_libdw.dwfl_module_getdwarf(__VA_ARGS__))
#define dwfl_module_getelf(...)            (vt_libdw.dwfl_module_getelf(__VA_ARGS__))
#define dwfl_module_getsrc(...)            (vt_libdw.dwfl_module_getsrc(__VA_ARGS__))
#define dwfl_module_getsymtab(...)         (vt_libdw.dwfl_module_getsymtab(__VA_ARGS__))
#define dwfl_module_info(...)              (vt_libdw.dwfl_module_info(__VA_ARGS__))
#define dwfl_offline_section_address(...)  (vt_libdw.dwfl_offline_section_address(__VA_ARGS__))
#define dwfl_report_begin(...)             (vt_libdw.dwfl_report_begin(__VA_ARGS__))
#define dwfl_report_end(...)               (vt_libdw.dwfl_report_end(__VA_ARGS__))
#define dwfl_report_module(...)            (vt_libdw.dwfl_report_module(__VA_ARGS__))
#define dwfl_thread_state_register_pc(...) (vt_libdw.dwfl_thread_state_register_pc(__VA_ARGS__))
#define dwfl_thread_state_registers(...)   (vt_libdw.dwfl_thread_state_registers(__VA_ARGS__))

#endif
