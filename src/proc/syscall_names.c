/*
 * syscall_names.c — number to name, by binary search in the generated table.
 */
#include "proc/syscall_names.h"

#include <stddef.h>
#include <stdio.h>

struct syscall_row {
	long nr;
	const char *name;
};

static const struct syscall_row rows[] = {
#include "syscall_table.h"   /* generated: $(B)/gen */
};

const char *vt_syscall_name(long nr)
{
	size_t lo = 0, hi = sizeof(rows) / sizeof(rows[0]);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].nr == nr)
			return rows[mid].name;
		if (rows[mid].nr < nr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void vt_syscall_label(long nr, char *out, size_t cap)
{
	const char *name = nr >= 0 ? vt_syscall_name(nr) : NULL;

	if (name)
		snprintf(out, cap, "%s", name);
	else if (nr >= 0)
		snprintf(out, cap, "#%ld", nr);
	else if (cap)
		out[0] = '\0';
}
