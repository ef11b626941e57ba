/*
 * test_demangle.c — function names as their authors wrote them
 * (src/elf/demangle.c): C++ and both Rust schemes on symbols taken from real
 * binaries (the issue's own two, as perf report prints them), what is not
 * mangled left alone, suffixes kept, long names cut on a character boundary,
 * and every C++ symbol libstdc++ exports demangled as `c++filt -i` (binutils), an
 * independent program, prints it.
 */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/demangle.h"
#include "render/table.h"

static void expect(const char *sym, const char *want)
{
	char out[512] = "untouched";
	bool ok = vt_demangle(sym, out, sizeof(out));

	if (!want) {
		CHECK(!ok);
		CHECK(!strcmp(out, "untouched"));
		return;
	}
	CHECK(ok);
	if (strcmp(out, want))
		printf("#   %s\n#   -> %s\n#   want %s\n", sym, out, want);
	CHECK(!strcmp(out, want));
}

static void test_demangle__schemes(void)
{
	/* Rust, legacy: the hash is left out (perf report's name) */
	expect("_ZN5alloc11collections5btree3map25BTreeMap$LT$K$C$V$C$A$GT$6insert17h370a628b1218a7fdE",
	       "alloc::collections::btree::map::BTreeMap<K,V,A>::insert");
	/* Rust, v0: the crate's disambiguator is left out */
	expect("_RNvNtNtCsgEmfK2I1SDS_4core5slice6memchr14memchr_aligned", "core::slice::memchr::memchr_aligned");
	/* Itanium C++ */
	expect("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)");
	expect("_ZN2ns6Worker4spinEi", "ns::Worker::spin(int)");
	/* a compiler's clone, and a PLT stub's or a version's suffix */
	expect("_Z3foov.cold", "foo() [clone .cold]");
	expect("_ZdlPv@plt", "operator delete(void*)@plt");
	expect("_ZNSt9exceptionD2Ev@@GLIBCXX_3.4", "std::exception::~exception()@@GLIBCXX_3.4");
	/* not mangled, or not validly */
	expect("main", NULL);
	expect("malloc", NULL);
	expect("_start", NULL);
	expect("_Z", NULL);
	expect("_ZN3foo", NULL);
	expect("_R", NULL);
	expect("", NULL);
	CHECK(!vt_demangle(NULL, (char[8]){ 0 }, 8));
}

static void test_demangle__bounds(void)
{
	char small[24], *big;
	size_t n = VT_DEMANGLE_SYMBOL_MAX + 10;

	/* cut with "..." within cap */
	CHECK(vt_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi", small, sizeof(small)));
	CHECK(strlen(small) == sizeof(small) - 1);
	CHECK(!strcmp(small + strlen(small) - 3, "..."));
	CHECK(!vt_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi", small, 3));
	/* a short name with a long suffix (the fuzzer's find: the cut read past the name) */
	CHECK(vt_demangle("_Z3foov@GLIBC_PRIVATE_AND_THEN_SOME_MORE", small, sizeof(small)));
	CHECK_STR(small, "foo()...");
	/* a symbol too long to be given to the demangler at all */
	big = malloc(n + 1);
	CHECK(big != NULL);
	if (!big)
		return;
	memcpy(big, "_ZN", 3);
	memset(big + 3, '9', n - 3);
	big[n] = '\0';
	CHECK(!vt_demangle(big, small, sizeof(small)));
	/* deep nesting: the demangler's own recursion limit, no crash */
	for (size_t i = 0; i + 2 < 4000; i += 2)
		memcpy(big + i, i ? "PP" : "_Z", 2);
	big[4000] = '\0';
	vt_demangle(big, small, sizeof(small));
	free(big);
}

/* Every C++ symbol that libstdc++ exports, demangled as c++filt prints it. */
static void test_demangle__as_cxxfilt(void)
{
	char list[64], cmd[512], sym[4096], want[4096], out[4096];
	int compared = 0, differ = 0;
	FILE *syms = NULL, *filt = NULL;

	if (system("command -v c++filt >/dev/null && command -v nm >/dev/null") != 0) {
		printf("# skip: no c++filt or nm (binutils)\n");
		return;
	}
	snprintf(list, sizeof(list), "/tmp/vt-demangle-syms.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "nm -D --defined-only /usr/lib/x86_64-linux-gnu/libstdc++.so.6 2>/dev/null |"
		 " awk '$3 ~ /^_Z/ {print $3}' | head -2000 >%s", list);
	if (system(cmd) == 0 && (syms = fopen(list, "r"))) {
		snprintf(cmd, sizeof(cmd), "c++filt -i <%s", list);   /* -i: no implementation details, as perf */
		filt = popen(cmd, "r");
	}
	while (syms && filt && fgets(sym, sizeof(sym), syms) && fgets(want, sizeof(want), filt)) {
		sym[strcspn(sym, "\n")] = '\0';
		want[strcspn(want, "\n")] = '\0';
		if (!vt_demangle(sym, out, sizeof(out)))
			snprintf(out, sizeof(out), "%s", sym);
		compared++;
		if (strcmp(out, want) && differ++ < 5)
			printf("#   %s: %s, c++filt %s\n", sym, out, want);
	}
	if (syms)
		fclose(syms);
	if (filt)
		pclose(filt);
	remove(list);
	printf("# %d libstdc++ symbols compared with c++filt, %d differ\n", compared, differ);
	CHECK(compared >= 1000);
	CHECK_EQ_I64(differ, 0);
}

/* A long demangled name in a table: cut in its middle, its start and its end kept. */
static void test_demangle__clipped_for_tables(void)
{
	char name[512], buf[512];
	const char *out;
	size_t cols = 0;

	CHECK(vt_demangle("_ZN5alloc11collections5btree4node210Handle$LT$alloc..collections..btree..node..NodeRef"
			  "$LT$alloc..collections..btree..node..marker..Mut$C$K$C$V$C$alloc..collections..btree..node"
			  "..marker..Leaf$GT$$C$alloc..collections..btree..node..marker..Edge$GT$16insert_recursing"
			  "17haf856a48d643e0e7E", name, sizeof(name)));
	out = vt_text_clip_middle(name, 80, buf, sizeof(buf));
	for (const char *c = out; *c; c++)
		cols += ((unsigned char)*c & 0xc0) != 0x80;
	printf("# %zu columns: %s\n", cols, out);
	CHECK_EQ_U64(cols, 80);
	CHECK(!strncmp(out, "alloc::collections::btree::node::Handle", 39));
	CHECK(strstr(out, "\xe2\x80\xa6") != NULL);
	CHECK(strlen(out) > 14 && !strcmp(out + strlen(out) - 14, "::insert_recursing" + 4));
	/* short names, and a cut inside a multi-byte character, stay whole characters */
	CHECK_STR(vt_text_clip_middle("work::fill", 80, buf, sizeof(buf)), "work::fill");
	out = vt_text_clip_middle("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5, buf, sizeof(buf));
	CHECK_STR(out, "\xc3\xa9\xc3\xa9\xe2\x80\xa6\xc3\xa9\xc3\xa9");
	CHECK_STR(vt_text_clip_middle(NULL, 80, buf, sizeof(buf)), "");
}

/* Display columns of UTF-8 text. */
static size_t cols_of(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/*
 * Names shortened for a table (vt_name_shorten) by what a reader can spare:
 * generics' arguments, then C++ parameters, then the middle of the path,
 * then the middle of the text; never over the width; whole when it fits.
 */
static void test_demangle__shortened_to_fit(void)
{
	static const struct { const char *name; size_t cols; const char *want; } cases[] = {
		{ "alloc::collections::btree::map::BTreeMap<K,V,A>::insert", 80,
		  "alloc::collections::btree::map::BTreeMap<K,V,A>::insert" },
		{ "alloc::collections::btree::map::BTreeMap<K,V,A>::insert", 52,
		  "alloc::collections::btree::map::BTreeMap<\u2026>::insert" },
		{ "alloc::collections::btree::map::BTreeMap<K,V,A>::insert", 50,
		  "alloc::\u2026::btree::map::BTreeMap<\u2026>::insert" },
		{ "alloc::collections::btree::map::BTreeMap<K,V,A>::insert", 30,
		  "alloc::\u2026::BTreeMap<\u2026>::insert" },
		{ "serde_json::de::Deserializer<serde_json::read::SliceRead>::deserialize_map<V>", 60,
		  "serde_json::de::Deserializer<\u2026>::deserialize_map<\u2026>" },
		{ "serde_json::de::Deserializer<serde_json::read::SliceRead>::deserialize_map<V>", 36,
		  "serde_json::\u2026::deserialize_map<\u2026>" },
		/* nested, and "->" in a closure's type is no bracket */
		{ "core::ops::function::FnOnce<fn(u8) -> Vec<Vec<u8>>>::call_once::shim", 50,
		  "core::ops::function::FnOnce<\u2026>::call_once::shim" },
		/* C++: a template's arguments, then its parameters; operator< is no bracket */
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)", 40,
		  "std::vector<\u2026>::push_back(int const&)" },
		{ "std::vector<int, std::allocator<int> >::push_back(int const&)", 30,
		  "std::vector<\u2026>::push_back(\u2026)" },
		{ "bool std::operator< <char, std::char_traits<char> >(std::string const&, char const*)", 50,
		  "bool std::operator< <\u2026>(\u2026)" },
		/* a name cut short (an unclosed bracket) loses the rest */
		{ "std::map<std::string, std::vector<std::pair<int, int", 20, "std::map<\u2026" },
		/* a qualified path keeps its brackets' text to the end */
		{ "<std::net::tcp::TcpStream as std::io::Write>::write", 80,
		  "<std::net::tcp::TcpStream as std::io::Write>::write" },
	};
	char buf[512];

	/* (\u2026 in the strings is the ellipsis, U+2026, as UTF-8) */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *out = vt_name_shorten(cases[i].name, cases[i].cols, buf, sizeof(buf));

		if (strcmp(out, cases[i].want) != 0)
			printf("#   %zu columns: %s\n#   wanted:     %s\n", cases[i].cols, out, cases[i].want);
		CHECK_STR(out, cases[i].want);
		CHECK(cols_of(out) <= cases[i].cols);
	}
	/* however long and however narrow: within the width, whole characters */
	for (size_t cols = 5; cols < 60; cols++) {
		vt_name_shorten("a::b<c<d>>::e::f<g>(h<i>, j)::k::l::m", cols, buf, sizeof(buf));
		CHECK(cols_of(buf) <= cols);
	}
	CHECK_STR(vt_name_shorten(NULL, 10, buf, sizeof(buf)), "");
}

VT_TEST_MAIN(test_demangle__schemes, test_demangle__bounds, test_demangle__as_cxxfilt,
	     test_demangle__clipped_for_tables, test_demangle__shortened_to_fit)
