/*
 * dynlib.h — a shared library opened when a command first needs it, not
 * when vitals starts.
 *
 * vitals is one binary.  A library linked into it is mapped and relocated
 * by every command, whether it uses it or not: the ones only `vitals serve`
 * and `--prometheus` use (libmicrohttpd with GnuTLS, libcurl with OpenSSL,
 * Kerberos and LDAP) were about 4.5 MiB of a soak's resident memory.  Those
 * are opened here, by soname, and their functions looked up into a table of
 * pointers whose types come from the library's own header (serve/netlibs.h).
 * A library, once open, stays open for the life of the process.
 */
#ifndef VT_BASE_DYNLIB_H
#define VT_BASE_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* One function: its name in the library and where its pointer goes in the table. */
struct vt_dynsym {
	const char *name;
	size_t offset;           /* offsetof(table struct, member) */
};

struct vt_dynlib {
	const char *soname;      /* "libcurl.so.4" */
	const char *package;     /* the Debian package that has it: "libcurl4" */
	const char *needed_by;   /* for the message: "--prometheus" */
	const struct vt_dynsym *syms;
	size_t nsyms;
	void *table;             /* the struct of pointers the functions go in */
	bool loaded;             /* set once every function was found */
};

/* A struct vt_dynlib of soname, package and needed_by whose functions are the array syms, put in *table. */
#define VT_DYNLIB(soname, package, needed_by, syms, table) \
	{ (soname), (package), (needed_by), (syms), sizeof(syms) / sizeof((syms)[0]), (table), false }

/*
 * Open lib and fill its table (once; later calls return at once).  A
 * library that is not installed, or lacks a function, is VT_E_UNSUPPORTED
 * naming the package to install; the table is then left as it was.  Safe
 * to call from several threads.
 */
int vt_dynlib_load(struct vt_dynlib *lib, struct vt_err *err);

#endif
