/*
 * demangle.h — the names a function's author wrote, from the symbols a
 * compiler mangled: Itanium C++ (`_ZNSt6vectorIiSaIiEE9push_backERKi` is
 * `std::vector<int, std::allocator<int> >::push_back(int const&)`) and
 * Rust, the legacy scheme and v0 (`_RNvNtNtCs…4core5slice6memchr14memchr_aligned`
 * is `core::slice::memchr::memchr_aligned`), as `perf report` and `c++filt`
 * print them.
 *
 * Through libiberty's demangler (Debian's libiberty-dev, the one binutils,
 * gdb and perf use): it knows all three schemes, it is a static library (no
 * library more at run time, no C++ runtime as LLVM's needs), and it bounds
 * its own recursion on hostile input.  Rust's legacy "::h<16 hex digits>"
 * and v0's crate disambiguators are left out, as perf does; the symbol
 * itself (kept by the caller as the pprof system_name) keeps them.
 */
#ifndef VT_ELF_DEMANGLE_H
#define VT_ELF_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Symbols longer than this are shown as they are (no demangler runs on them). */
#define VT_DEMANGLE_SYMBOL_MAX 4096

/*
 * The demangled name of sym in out (cap bytes, cut at a character boundary
 * with "..." when longer), true; false, out untouched, when sym is not a
 * mangled name (a C function, "main") or cannot be demangled.  A suffix
 * from '@' on ("@plt", "@@GLIBC_2.2.5") is kept after the name.
 */
bool vt_demangle(const char *sym, char *out, size_t cap);

#endif
