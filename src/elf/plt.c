/*
 * plt.c — a PLT stub's name from its jmp's GOT entry and that entry's
 * relocation (see plt.h).
 */
#include "elf/plt.h"

#include "elf/elf_libs.h"

#include <stdio.h>
#include <string.h>

/* The bytes of one slot are read from at most this much of a section. */
#define SLOT_MAX 16

bool vt_plt_slot_got(const uint8_t *code, size_t len, uint64_t code_addr, uint64_t *got)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t i = 0;
	int32_t disp;

	if (len >= sizeof(endbr64) && memcmp(code, endbr64, sizeof(endbr64)) == 0)
		i = sizeof(endbr64);
	while (i < len && (code[i] == 0xf2 || code[i] == 0x3e))   /* bnd, notrack */
		i++;
	if (len < 6 || i > len - 6 || code[i] != 0xff || code[i + 1] != 0x25)
		return false;
	memcpy(&disp, code + i + 2, sizeof(disp));
	*got = code_addr + i + 6 + (uint64_t)(int64_t)disp;
	return true;
}

/* The name of the symbol a relocation section's entry for GOT address got
 * refers to; NULL when none does. */
static const char *reloc_symbol(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t got)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i;
	uint64_t sym_index = 0;
	bool found = false;

	if (!data || !sh->sh_entsize)
		return NULL;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < n && !found; i++) {
		if (sh->sh_type == SHT_RELA) {
			GElf_Rela r;

			if (!gelf_getrela(data, (int)i, &r))
				break;
			found = r.r_offset == got;
			sym_index = GELF_R_SYM(r.r_info);
		} else {
			GElf_Rel r;

			if (!gelf_getrel(data, (int)i, &r))
				break;
			found = r.r_offset == got;
			sym_index = GELF_R_SYM(r.r_info);
		}
	}
	if (!found || sym_index == 0)
		return NULL;
	/* the relocation's symbols: its sh_link */
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *symdata;
	GElf_Sym sym;

	if (!symscn || !gelf_getshdr(symscn, &symsh) ||
	    (symsh.sh_type != SHT_DYNSYM && symsh.sh_type != SHT_SYMTAB) ||
	    !(symdata = elf_getdata(symscn, NULL)) || sym_index > INT32_MAX ||
	    !gelf_getsym(symdata, (int)sym_index, &sym))
		return NULL;
	return elf_strptr(elf, symsh.sh_link, sym.st_name);
}

bool vt_plt_name(Elf *elf, uint64_t addr, char *name, size_t len, uint64_t *start)
{
	Elf_Scn *scn = NULL, *plt = NULL;
	GElf_Shdr sh, plt_sh;
	size_t shstrndx, stride = 0;
	const char *secname;
	uint64_t got;

	/* elf may come from a caller that links libelf itself (the tests, fuzz_plt) */
	if (!elf || vt_libelf_load(NULL) || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr - sh.sh_addr >= sh.sh_size)
			continue;
		secname = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!secname)
			return false;
		if (strcmp(secname, ".plt") == 0 || strcmp(secname, ".plt.sec") == 0)
			stride = 16;
		else if (strcmp(secname, ".plt.got") == 0)
			stride = 8;
		else
			return false;
		plt = scn;
		plt_sh = sh;
		break;
	}
	if (!plt)
		return false;
	uint64_t off = addr - plt_sh.sh_addr, slot = off - off % stride;
	if (slot == 0 && strcmp(secname, ".plt") == 0)
		return false;   /* the resolver stub */
	Elf_Data *code = elf_getdata(plt, NULL);
	if (!code || !code->d_buf || code->d_size < slot + stride || stride > SLOT_MAX)
		return false;
	if (!vt_plt_slot_got((const uint8_t *)code->d_buf + slot, stride, plt_sh.sh_addr + slot, &got))
		return false;
	/* the GOT entry's relocation: .rela.plt for lazy and IBT stubs, .rela.dyn for .plt.got */
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *sym;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL))
			continue;
		sym = reloc_symbol(elf, scn, &sh, got);
		if (sym && sym[0]) {
			snprintf(name, len, "%s@plt", sym);
			*start = plt_sh.sh_addr + slot;
			return true;
		}
	}
	return false;
}
