/*
 * environ.c — variable look-up in a NUL-separated environment block.
 */
#include "proc/environ.h"

#include <string.h>

static bool find_sep(const char *buf, size_t len, char sep, char assign, const char *name,
		     const char **value, size_t *value_len)
{
	size_t name_len = strlen(name), pos = 0, n;
	const char *entry, *end;

	while (pos < len) {
		entry = buf + pos;
		end = memchr(entry, sep, len - pos);
		n = end ? (size_t)(end - entry) : len - pos;
		if (n > name_len && memcmp(entry, name, name_len) == 0 && entry[name_len] == assign) {
			*value = entry + name_len + 1;
			*value_len = n - name_len - 1;
			return true;
		}
		pos += n + 1;
	}
	return false;
}

bool vt_environ_get(const char *buf, size_t len, const char *name, const char **value,
		    size_t *value_len)
{
	return find_sep(buf, len, '\0', '=', name, value, value_len);
}

bool vt_tunables_get(const char *tunables, size_t len, const char *key, const char **value,
		     size_t *value_len)
{
	return find_sep(tunables, len, ':', '=', key, value, value_len);
}
