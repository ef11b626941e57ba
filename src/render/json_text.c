/*
 * json_text.c — target text as valid JSON strings (see json_text.h).
 */
#include "render/json_text.h"

#include <stdlib.h>
#include <string.h>

json_t *vt_json_text(const char *text)
{
	json_t *j = json_string(text ? text : "");
	size_t len, i, o = 0;
	char *clean;

	if (j)
		return j;
	len = strlen(text);
	clean = malloc(len * 3 + 1);
	if (!clean)
		return json_null();
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c < 0x80)
			clean[o++] = (char)c;
		else {
			memcpy(clean + o, "\xef\xbf\xbd", 3);
			o += 3;
		}
	}
	clean[o] = '\0';
	j = json_string(clean);
	free(clean);
	return j ? j : json_null();
}
