/*
 * test_plt.c — PLT stubs named after the function they jump to
 * (src/elf/plt.c): the one instruction decoded from byte patterns of each
 * kind of stub, and every stub of this very test binary named as objdump,
 * an independent reader, names it ("free@plt").
 */
#include "harness.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/plt.h"

/* jmp *disp(%rip) in the stubs the linkers write, and what is not one. */
static void test_plt__slot_patterns(void)
{
	/* lazy .plt slot: jmp *0x4fca(%rip); push $0; jmp PLT0 */
	static const uint8_t lazy[16] = { 0xff, 0x25, 0xca, 0x4f, 0, 0, 0x68, 0, 0, 0, 0,
					  0xe9, 0xe0, 0xff, 0xff, 0xff };
	/* .plt.sec with IBT: endbr64; bnd jmp *0x2f75(%rip); nop */
	static const uint8_t ibt[16] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, 0x75, 0x2f, 0, 0,
					 0x0f, 0x1f, 0x44, 0, 0 };
	/* .plt.got: jmp *-0x10(%rip); xchg %ax,%ax */
	static const uint8_t got8[8] = { 0xff, 0x25, 0xf0, 0xff, 0xff, 0xff, 0x66, 0x90 };
	static const uint8_t call[8] = { 0xe8, 0, 0, 0, 0, 0x90, 0x90, 0x90 };
	uint64_t got = 0;

	CHECK(vt_plt_slot_got(lazy, sizeof(lazy), 0x2030, &got));
	CHECK_EQ_U64(got, 0x2030 + 6 + 0x4fca);
	CHECK(vt_plt_slot_got(ibt, sizeof(ibt), 0x1050, &got));
	CHECK_EQ_U64(got, 0x1050 + 11 + 0x2f75);
	CHECK(vt_plt_slot_got(got8, sizeof(got8), 0x1100, &got));
	CHECK_EQ_U64(got, 0x1100 + 6 - 0x10);
	CHECK(!vt_plt_slot_got(call, sizeof(call), 0x1000, &got));
	CHECK(!vt_plt_slot_got(lazy, 5, 0x2030, &got));       /* cut short */
	CHECK(!vt_plt_slot_got(ibt, 8, 0x1050, &got));
	CHECK(!vt_plt_slot_got(lazy, 0, 0x2030, &got));
}

/* Every "<name@plt>:" objdump prints for our own binary is what vt_plt_name says
 * of each byte of that stub; the resolver stub at the head of .plt has no name. */
static void test_plt__own_binary_as_objdump_names_it(void)
{
	char exe[4096], cmd[4200], line[512], name[160], want[160];
	unsigned long long addr;
	uint64_t start;
	int named = 0, fd;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(n > 0);
	if (n <= 0)
		return;
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "objdump -d --section=.plt --section=.plt.sec --section=.plt.got "
		 "'%s' 2>/dev/null", exe);
	FILE *od = popen(cmd, "r");
	CHECK(od != NULL);
	if (!od)
		return;
	elf_version(EV_CURRENT);
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	CHECK(elf != NULL);
	while (elf && fgets(line, sizeof(line), od)) {
		if (sscanf(line, "%llx <%159[^>]>:", &addr, want) != 2)
			continue;
		if (!strstr(want, "@plt") || strchr(want, '+') || strchr(want, '-'))
			continue;   /* the resolver stub shows as "free@plt-0x10" */
		for (unsigned k = 0; k < 6; k++) {
			bool ok = vt_plt_name(elf, addr + k, name, sizeof(name), &start);
			CHECK(ok);
			if (!ok) {
				printf("#   %s at 0x%llx+%u: no name\n", want, addr, k);
				break;
			}
			CHECK_EQ_U64(start, addr);
			if (strcmp(name, want) != 0) {
				printf("#   0x%llx: objdump %s, vt_plt_name %s\n", addr, want, name);
				CHECK(0);
			}
		}
		named++;
	}
	pclose(od);
	printf("# %d stubs named as objdump names them\n", named);
	CHECK(named >= 3);   /* this binary calls malloc, free, printf ... through its PLT */
	if (elf) {
		/* not a stub: main is code, 0 is nothing */
		CHECK(!vt_plt_name(elf, 0, name, sizeof(name), &start));
		elf_end(elf);
	}
	if (fd >= 0)
		close(fd);
}

VT_TEST_MAIN(test_plt__slot_patterns, test_plt__own_binary_as_objdump_names_it)
