/*
 * demangle.c — symbol names through libiberty's cplus_demangle (see demangle.h).
 */
#include "elf/demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

/* Only what a compiler's mangling starts with reaches the demangler. */
static bool looks_mangled(const char *sym)
{
	return !strncmp(sym, "_Z", 2) || !strncmp(sym, "_R", 2);
}

bool vt_demangle(const char *sym, char *out, size_t cap)
{
	char head[VT_DEMANGLE_SYMBOL_MAX + 1];
	const char *at;
	size_t len, n, tail;
	char *name;

	if (!sym || cap < 4 || !looks_mangled(sym))
		return false;
	at = strchr(sym, '@');
	len = at ? (size_t)(at - sym) : strlen(sym);
	if (len > VT_DEMANGLE_SYMBOL_MAX)
		return false;
	memcpy(head, sym, len);
	head[len] = '\0';
	/* DMGL_AUTO tries Rust (both schemes) first, then Itanium C++; no DMGL_VERBOSE:
	 * Rust's hashes and disambiguators stay out, as in perf */
	name = cplus_demangle(head, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!name)
		return false;
	n = strlen(name);
	tail = at ? strlen(at) : 0;
	if (n + tail < cap) {
		memcpy(out, name, n);
		memcpy(out + n, at ? at : "", tail + 1);
	} else {
		/* cut at a character boundary (names are UTF-8), then "..."; the name may
		 * be the shorter part, the suffix the longer one */
		size_t keep = cap - 4 < n ? cap - 4 : n;
		while (keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80)
			keep--;
		memcpy(out, name, keep);
		memcpy(out + keep, "...", 4);
	}
	free(name);
	return true;
}
