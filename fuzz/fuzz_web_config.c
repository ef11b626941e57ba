/*
 * fuzz_web_config.c — the Prometheus web config parser (serve/web_config.c)
 * on arbitrary bytes: libyaml's loader and the walk of its tree.
 */
#include "serve/web_config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vt_web_config c;
	struct vt_err err;
	char *copy;
	size_t i;

	if (size > 64 * 1024)              /* a web config is a few lines; the loader caps files at 1 MiB */
		return 0;
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);          /* exact size, no NUL: the parser must not read past */
	vt_err_clear(&err);
	if (vt_web_config_parse(copy, size, "/etc/vitals", "fuzz.yml", &c, &err) == VT_OK) {
		assert(!c.tls || (c.cert_file && c.key_file && c.cert_file[0] == '/'));
		for (i = 0; i < c.nusers; i++)
			assert(c.users[i].name[0] && !strchr(c.users[i].name, ':') &&
			       vt_web_bcrypt_valid(c.users[i].hash));
		for (i = 0; i < c.nheaders; i++)
			assert(!strpbrk(c.headers[i].value, "\r\n"));
	} else {
		assert(err.msg[0]);
	}
	vt_web_config_release(&c);
	free(copy);
	return 0;
}
