# vitals — build with GNU make.
#
#   make               build build/vitals, the targets and the test programs
#   make demo          install missing packages, build, run `vitals demo`
#   make test          install missing packages, build (normal + ASan/UBSan), run every test
#   make test-loaded   make test beside two CPU hogs (a busy host)
#   make check         build and run every test (unit, fuzz corpus replay, integration)
#   make SAN=1 check   the same under ASan+UBSan, in build-san/
#   make fuzz          libFuzzer binaries (clang) in build-fuzz/; tests/run fuzz-run runs each
#                      for VT_FUZZ_SECONDS (default 10) from its corpus
#   make man           write man/vitals.1 from man/vitals.1.in and the option tables
#   make install       install vitals (stripped), its agents, the demo target, the man page
#                      and bash completion under PREFIX (default /usr/local), DESTDIR first
#   make deb           the Debian package (debian/) from the committed tree, into build-deb/
#   make bench-smoke   every bench/ script once with its shortest settings
#   make WERROR=0      do not treat warnings as errors (they are errors by default)
#
# Sources are found by wildcard: a new .c file in src/<module>/ joins libvitals.a,
# a new tests/unit/test_*.c becomes a test program, a new targets/*.c a target.

CC      ?= cc
WERROR  ?= 1
SAN     ?= 0
PKGS    := libelf libdw jansson expat sqlite3 libprotobuf-c zlib libmicrohttpd libcurl yaml-0.1 libxcrypt

ifeq ($(SAN),1)
  B        ?= build-san
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  OPT      := -O1 -g
else
  B        ?= build
  SANFLAGS :=
  OPT      := -O2 -g
endif

# make V=1 shows the full commands
ifeq ($(V),1)
  Q :=
else
  Q := @
endif

WARN := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wpointer-arith -Wvla -Wno-missing-field-initializers
ifeq ($(WERROR),1)
  WARN += -Werror
endif

# Libraries a command opens when it needs them (base/dynlib.h), not linked:
# linked, every command would map and relocate them and what they pull in
# before main (1,963 relocations and 15 objects, 2x /bin/true's start-up).
#   libmicrohttpd, libcurl   vitals serve, --prometheus (src/serve/netlibs.c)
#   libelf, libdw            ELF files, unwinding (src/elf/elf_libs.c)
#   sqlite3                  recordings (src/store/sqlite_lib.c)
#   expat                    malloc_info (src/alloc/malloc_info.c)
#   yaml-0.1, libxcrypt      serve --web-config (src/serve/web_config.c)
#   zlib                     gzip (pprof, the exporter), CRC32 (src/base/gzip.c)
#   jansson                  JSON (src/base/json_lib.c)
#   libprotobuf-c            pprof files (src/render/pprof_lib.c)
# debian/control Depends on each (dh_shlibdeps cannot see them) and
# scripts/deps.sh installs them with their -dev packages.
DLPKGS  := libmicrohttpd libcurl libelf libdw expat sqlite3 yaml-0.1 libxcrypt zlib jansson libprotobuf-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(filter-out $(DLPKGS),$(PKGS)) 2>/dev/null) -ldl
# The unit tests and fuzz targets call some of them directly (to build a
# fixture, or an Elf handle), so they link them; vitals never does.
TEST_PKG_LIBS := $(shell pkg-config --libs $(filter-out libmicrohttpd libcurl,$(PKGS)) 2>/dev/null)

CFLAGS  += -std=gnu11 $(OPT) $(WARN) $(SANFLAGS) -D_GNU_SOURCE -Isrc -I. -I$(B)/gen $(PKG_CFLAGS) -MMD -MP
LDFLAGS += $(SANFLAGS)
# libiberty (libiberty-dev) is a static library: the demangler (src/elf/demangle.c)
SYS_LIBS := -liberty -lpthread -lm
LDLIBS  += $(PKG_LIBS) $(SYS_LIBS)

LIB_SRC    := $(sort $(wildcard src/base/*.c src/proc/*.c src/perf/*.c src/inject/*.c src/elf/*.c src/alloc/*.c src/sample/*.c src/store/*.c src/soak/*.c src/analyze/*.c src/render/*.c src/serve/*.c))
CLI_SRC    := $(sort $(wildcard src/cli/*.c))
TARGET_SRC := $(sort $(wildcard targets/*.c))
UNIT_SRC   := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC   := $(sort $(wildcard fuzz/fuzz_*.c))
AGENT_SRC  := $(filter-out agent/alloc_sampler.c,$(sort $(wildcard agent/*.c)))

LIB_OBJ    := $(LIB_SRC:%.c=$(B)/%.o) $(B)/gen/profile.pb-c.o
CLI_OBJ    := $(CLI_SRC:%.c=$(B)/%.o)
TARGETS    := $(TARGET_SRC:targets/%.c=$(B)/targets/%)
UNITS      := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
FUZZ_REPLAY:= $(FUZZ_SRC:fuzz/%.c=$(B)/fuzz/%)
SANITIZED  := $(B)/targets/sanitized/inject_victim-address $(B)/targets/sanitized/inject_victim-thread
PROFILE_FP := $(B)/targets/profile_work-fp
AGENT      := $(B)/agent/libvitals-agent.so
AGENT_ALLOCS := $(B)/agent/libvitals-agent-allocs.so
SHIM_SRC   := $(sort $(wildcard tests/shims/*.c))
SHIMS      := $(SHIM_SRC:tests/shims/%.c=$(B)/tests/shims/%.so)
DOC        := $(B)/vitals-doc
COMPLETION := $(B)/vitals.bash-completion

.PHONY: all check check-unit test test-loaded demo fuzz fuzz-bins fuzz-if-clang clean deps man install installables uninstall bench-smoke deb
# Objects built on the way to a test or fuzz program are kept: make deleted them
# as intermediates after each build (a 1,900-character 'rm' line before the demo).
.SECONDARY:
all: $(B)/vitals $(TARGETS) $(SANITIZED) $(PROFILE_FP) $(UNITS) $(FUZZ_REPLAY) $(AGENT) $(AGENT_ALLOCS) $(SHIMS) $(DOC) $(COMPLETION)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# System call names come from the kernel's own header for this architecture
# (linux-libc-dev): every "#define __NR_name nr" becomes a table row.
$(B)/gen/syscall_table.h: Makefile
	@mkdir -p $(dir $@)
	$(Q)echo '#include <asm/unistd.h>' | $(CC) -E -dM - | \
	  awk '$$1 == "#define" && $$2 ~ /^__NR_[a-z0-9_]+$$/ && $$3 ~ /^[0-9]+$$/ \
	       { sub(/^__NR_/, "", $$2); print "\t{ " $$3 ", \"" $$2 "\" }," }' | sort -n -k2 >$@.tmp
	@test -s $@.tmp || { echo "no __NR_ definitions in <asm/unistd.h>" >&2; rm -f $@.tmp; exit 1; }
	$(Q)mv $@.tmp $@
$(B)/src/proc/syscall_names.o: $(B)/gen/syscall_table.h

# The pprof schema (proto/profile.proto, from github.com/google/pprof) as C
# with protoc-c (protobuf-c-compiler): $(B)/gen/profile.pb-c.[ch], one run
# making both (a grouped target, so -j never runs it twice).  The generated
# code is compiled into libvitals.a with the usual flags but not -Werror: its
# warnings are protoc-c's to fix, not ours.  Every object that includes
# "profile.pb-c.h" waits for the header.  It calls protobuf-c through
# src/render/pprof_lib.h (forced in first), which opens the library.
$(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h &: proto/profile.proto
	@mkdir -p $(B)/gen
	$(Q)protoc-c --proto_path=proto --c_out=$(B)/gen profile.proto
$(B)/gen/profile.pb-c.o: $(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h src/render/pprof_lib.h
	$(Q)$(CC) $(filter-out -Werror,$(CFLAGS)) -include src/render/pprof_lib.h -c -o $@ $<
$(B)/src/render/profile_pprof.o $(B)/tests/unit/test_profile_export.o: $(B)/gen/profile.pb-c.h

$(B)/libvitals.a: $(LIB_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(B)/vitals: $(CLI_OBJ) $(B)/libvitals.a
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The documents written from the commands' declarations (tools/vitals_doc.c):
# the man page (checked in, see `make man`) and bash completion.
$(DOC): $(B)/tools/vitals_doc.o $(filter-out $(B)/src/cli/main.o,$(CLI_OBJ)) $(B)/libvitals.a
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(COMPLETION): $(DOC)
	$(Q)$(DOC) completion >$@.tmp && mv $@.tmp $@

man: $(DOC)
	$(Q)$(DOC) man man/vitals.1.in >man/vitals.1.tmp && mv man/vitals.1.tmp man/vitals.1

# Targets reproduce phenomena; they link nothing of ours so that what they
# measure is plain glibc behaviour.
$(B)/targets/%: targets/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O1 -g $(WARN) -D_GNU_SOURCE $(SANFLAGS) -MMD -MP -o $@ $< -lpthread -lm

# inject_victim under AddressSanitizer and ThreadSanitizer, whose runtimes
# gcc links as libraries (libasan, libtsan): vitals heap must refuse them
# before it stops anything (t0220).  Never with SANFLAGS: ASan and TSan
# cannot be combined.
$(SANITIZED): $(B)/targets/sanitized/inject_victim-%: targets/inject_victim.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O1 -g $(WARN) -D_GNU_SOURCE -fsanitize=$* -fno-omit-frame-pointer -MMD -MP \
	  -o $@ $< -lpthread -lm

# profile_work again with frame pointers (gcc -O1 omits them on x86-64, and
# the build above keeps that default): vitals profile unwinds the one by
# DWARF CFI, the other by frame pointers, and both must give its truth.
$(PROFILE_FP): targets/profile_work.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O1 -g $(WARN) -D_GNU_SOURCE $(SANFLAGS) -fno-omit-frame-pointer \
	  -mno-omit-leaf-frame-pointer -MMD -MP -o $@ $< -lpthread -lm

# The agent is preloaded into other people's processes: never sanitized (not
# even under SAN=1), hidden symbols but vitals_agent_json, libc only.
$(AGENT): $(AGENT_SRC) $(wildcard agent/*.h) agent/vitals-agent.map
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -fPIC -shared -fvisibility=hidden \
	  -Wl,--version-script=agent/vitals-agent.map -Wl,--no-undefined -o $@ $(AGENT_SRC) -lpthread

# The same agent plus in-process allocation sampling (agent/alloc_sampler.c):
# it defines malloc and friends, forwarded to the next definition, so it is a
# library of its own that a user preloads on purpose.  Its own version script
# (why, in it); no builtin malloc knowledge in code that defines malloc; all
# symbols bound at load (-z now: no lazy binding from inside malloc); libgcc_s
# for _Unwind_Backtrace.
$(AGENT_ALLOCS): $(AGENT_SRC) agent/alloc_sampler.c $(wildcard agent/*.h) agent/vitals-agent-allocs.map
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -DVT_AGENT_ALLOCS=1 -fPIC -shared -fvisibility=hidden \
	  -fno-builtin-malloc -fno-builtin-calloc -fno-builtin-realloc -fno-builtin-free \
	  -Wl,-z,now -Wl,--version-script=agent/vitals-agent-allocs.map -Wl,--no-undefined \
	  -o $@ $(AGENT_SRC) agent/alloc_sampler.c -lpthread -lgcc_s

# LD_PRELOAD shims that tests put under vitals (never sanitized: ASan wants
# to come first among the preloaded libraries).
$(B)/tests/shims/%.so: tests/shims/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=gnu11 -O1 -g $(WARN) -fPIC -shared -o $@ $< -ldl

$(B)/tests/%: $(B)/tests/unit/%.o $(B)/libvitals.a
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_PKG_LIBS)

# tests/unit/test_faults.c fails OS calls of libvitals.a on purpose: every
# call to these lands in its __wrap_<name> (SQLite's own calls are reached
# through its VFS instead).
FAULT_CALLS := open openat read pread getdents64 readlinkat fstatat fstat stat lseek access \
               fdopendir readdir process_vm_readv unlink getrlimit setrlimit
$(B)/tests/test_faults: LDFLAGS += $(foreach c,$(FAULT_CALLS),-Wl,--wrap=$(c))
# tests/unit/test_lock_maps.c counts the opens of maps that libvitals.a makes.
$(B)/tests/test_lock_maps: LDFLAGS += -Wl,--wrap=openat

# Fuzz targets replayed over their corpus with a small driver (gcc, no libFuzzer needed).
$(B)/fuzz/%: $(B)/fuzz/%.o $(B)/fuzz/replay_main.o $(B)/libvitals.a
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(TEST_PKG_LIBS)
$(B)/fuzz/replay_main.o: fuzz/replay_main.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

check: all
	@B=$(B) tests/run

check-unit: all
	@B=$(B) tests/run unit

# The README's two commands.  Each installs missing Debian packages first,
# then re-enters make so pkg-config sees them.
demo:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory -j2 all
	@$(B)/vitals demo

# Everything: normal build + ASan/UBSan build; unit tests and fuzz-corpus
# replays run under both, integration tests on the normal build and those
# marked "# sanitizer:" on the ASan/UBSan build too; beside them, each
# libFuzzer target built and run for a bounded time (VT_FUZZ_SECONDS,
# 5 s here: a smoke run over the corpus; make fuzz and tests/run fuzz-run for
# longer ones) when clang has libFuzzer.  make test-loaded is the same with two CPU hogs spinning beside
# it for the whole run: the suite must pass on a busy host.
test:
	@scripts/deps.sh --test
	@$(MAKE) --no-print-directory -j2 all
	@$(MAKE) --no-print-directory -j2 SAN=1 all
	@SAN_B=build-san B=build FUZZ_B=build-fuzz VT_FUZZ_BUILD=1 VT_FUZZ_SECONDS=$${VT_FUZZ_SECONDS:-5} tests/run

# (no second runs there: it is where a test that does not hold on a busy host shows)
test-loaded:
	@VT_HOG=2 VT_INTEG_RETRY=0 $(MAKE) --no-print-directory test

# Real fuzzing with libFuzzer (clang): make fuzz, then
#   build-fuzz/fuzz/fuzz_stat -max_total_time=60 fuzz/corpus/stat
# or every target for a bounded time: tests/run fuzz-run (what make test does).
# UBSan findings abort (-fno-sanitize-recover) so that libFuzzer sees them.
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BINS := $(FUZZ_SRC:fuzz/%.c=build-fuzz/fuzz/%)
fuzz:
	@$(MAKE) --no-print-directory B=build-fuzz CC=clang SAN=0 \
	  SANFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" fuzz-bins

# Only with B=build-fuzz (from `make fuzz`): one libFuzzer binary per target.
fuzz-bins: $(FUZZ_BINS)
$(FUZZ_BINS): build-fuzz/fuzz/%: fuzz/%.c build-fuzz/libvitals.a
	@mkdir -p $(dir $@)
	@echo "  FUZZ $*"
	$(Q)clang -std=gnu11 -g -O1 -D_GNU_SOURCE -Isrc -I. $(PKG_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) \
	  -o $@ $< build-fuzz/libvitals.a $(PKG_LIBS) $(TEST_PKG_LIBS) $(SYS_LIBS)

# make test builds the libFuzzer targets when clang has libFuzzer, and says so when not
# (tests/run fuzz-run then reports the stage skipped).
fuzz-if-clang:
	@if scripts/have-libfuzzer.sh; then $(MAKE) --no-print-directory -j2 fuzz; \
	 else echo "vitals: no clang with libFuzzer: the bounded fuzz runs will be skipped (scripts/deps.sh --test installs it)"; fi

deps:
	scripts/deps.sh

# Installed layout: the agent and the demo target under lib/vitals, found by
# vitals relative to its own binary (bin/../lib/vitals), so PREFIX and DESTDIR
# need no rebuild.
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(DESTDIR)$(PREFIX)/bin
LIBDIR  := $(DESTDIR)$(PREFIX)/lib/vitals
MANDIR  := $(DESTDIR)$(PREFIX)/share/man/man1
COMPDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions

# INSTALL_STRIP= installs vitals with its debug information (the Debian
# package's dh_strip makes vitals-dbgsym from it).
INSTALL_STRIP ?= -s
INSTALLABLES := $(B)/vitals $(AGENT) $(AGENT_ALLOCS) $(B)/targets/arena_churn $(COMPLETION)

# what make install installs, built (and nothing else of make all)
installables: $(INSTALLABLES)

install: $(INSTALLABLES)
	install -d $(BINDIR) $(LIBDIR)/targets $(MANDIR) $(COMPDIR)
	install $(INSTALL_STRIP) -m 755 $(B)/vitals $(BINDIR)/vitals
	install -m 755 $(AGENT) $(LIBDIR)/libvitals-agent.so
	install -m 755 $(AGENT_ALLOCS) $(LIBDIR)/libvitals-agent-allocs.so
	install -m 755 $(B)/targets/arena_churn $(LIBDIR)/targets/arena_churn
	install -m 644 man/vitals.1 $(MANDIR)/vitals.1
	install -m 644 $(COMPLETION) $(COMPDIR)/vitals

uninstall:
	rm -f $(BINDIR)/vitals $(LIBDIR)/libvitals-agent.so $(LIBDIR)/libvitals-agent-allocs.so \
	      $(LIBDIR)/targets/arena_churn \
	      $(MANDIR)/vitals.1 $(COMPDIR)/vitals
	-rmdir $(LIBDIR)/targets $(LIBDIR)

# Each benchmark once with its shortest settings, so that none of them rots.
bench-smoke: all
	@B=$(B) bench/smoke

# The Debian package (debian/, debhelper) from the committed tree: refused
# with local changes or when debian/changelog's version is not VT_VERSION
# (src/base/version.h).  Installs what is missing to build it
# (scripts/deps.sh --deb), then writes build-deb/: vitals_<v>_amd64.deb, vitals-dbgsym_<v>_amd64.deb,
# .changes and .buildinfo (DEB_OUT=dir elsewhere).
DEB_OUT ?= build-deb
deb:
	@scripts/deps.sh --deb
	@scripts/deb.sh $(DEB_OUT)

clean:
	rm -rf build build-san build-fuzz build-deb

-include $(shell find $(B) -name '*.d' 2>/dev/null)
