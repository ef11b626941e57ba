/*
 * plt.h — names for the stubs in a module's procedure linkage table.
 *
 * A call to a shared library's function goes through a 16-byte stub in the
 * caller's .plt (or .plt.sec with IBT, 8 bytes in .plt.got) that jumps
 * through the function's GOT entry.  No symbol covers the stubs, so a
 * sample or a stop that lands in one (a thread in a malloc loop does, now
 * and then) would read "profile_work+0x2030" and fall in no bucket.  Like
 * objdump's "free@plt", the stub is named after the symbol of the
 * relocation that fills the GOT entry its jmp reads.
 *
 * Nothing is parsed by hand but the one instruction: the sections,
 * relocations and symbols come from libelf.  The file is untrusted: every
 * read is bounded, and anything unexpected answers "no name".
 */
#ifndef VT_ELF_PLT_H
#define VT_ELF_PLT_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The GOT address the indirect jump at the start of a PLT slot reads:
 * code (len bytes, at link-time address code_addr) holds
 * [endbr64] [bnd|notrack]... jmp *disp32(%rip) (ff 25).  False otherwise.
 * Pure: for the fuzzer and the tests.
 */
bool vt_plt_slot_got(const uint8_t *code, size_t len, uint64_t code_addr, uint64_t *got);

/*
 * If addr (a link-time address of elf) lies in a PLT stub, its name
 * ("free@plt") into name (len bytes) and the stub's first address into
 * *start.  False for any other address, the resolver stub at the head of
 * .plt, or a file whose tables do not say.
 */
bool vt_plt_name(Elf *elf, uint64_t addr, char *name, size_t len, uint64_t *start);

#endif
