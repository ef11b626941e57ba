/*
 * json_text.h — text from a target (comm, cmdline, paths, wchan) as a JSON
 * string.  It may be any bytes; JSON needs UTF-8: invalid bytes become
 * U+FFFD, so a strange name never drops a key or a whole document.
 */
#ifndef VT_RENDER_JSON_TEXT_H
#define VT_RENDER_JSON_TEXT_H

#include <jansson.h>

/* A new reference; json_null() only when out of memory.  NULL text is "". */
json_t *vt_json_text(const char *text);

#endif
