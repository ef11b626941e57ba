/*
 * web_config.h — the Prometheus web configuration file (the format of
 * github.com/prometheus/exporter-toolkit, docs/web-configuration.md), as
 * vitals serve reads it: TLS from a certificate and key, and HTTP basic auth
 * against bcrypt hashes.
 *
 *   tls_server_config:
 *     cert_file: server.crt            relative to the file's directory
 *     key_file: server.key
 *     client_auth_type: NoClientCert   the only one vitals accepts
 *     min_version: TLS12               TLS12 (default) or TLS13; max_version too
 *   http_server_config:
 *     http2: false                     accepted, ignored: vitals speaks HTTP/1.1
 *     headers:                         added to every response; only those
 *       Strict-Transport-Security: ... exporter-toolkit allows
 *   basic_auth_users:
 *     alice: $2y$10$...                bcrypt only ($2a$, $2b$, $2y$)
 *
 * Strict like exporter-toolkit: an unknown key, a key given twice, a value of
 * the wrong kind, a password that is not a bcrypt hash, or a setting vitals
 * cannot honour (client certificates, cipher lists) is an error naming it, so
 * a file never silently means less security than it says.  Parsing is a pure
 * function on a buffer (unit tests, fuzz/fuzz_web_config.c); loading reads
 * the files.  Nothing here prints.
 */
#ifndef VT_SERVE_WEB_CONFIG_H
#define VT_SERVE_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/* Largest configuration, certificate or key file read. */
#define VT_WEB_FILE_MAX (1u << 20)

struct vt_web_user {
	char *name;              /* user name; never empty, holds no ':' */
	char *hash;              /* its bcrypt hash, "$2b$10$" + 53 characters */
};

enum vt_web_tls_version {
	VT_WEB_TLS12 = 0,        /* TLS 1.2 (the lowest vitals speaks) */
	VT_WEB_TLS13,            /* TLS 1.3 */
};

struct vt_web_header {
	char *name;              /* one of exporter-toolkit's: Strict-Transport-Security, ... */
	char *value;             /* holds no CR, LF or NUL */
};

struct vt_web_config {
	bool tls;                        /* tls_server_config given: serve https only */
	char *cert_file;                 /* path, joined to the file's directory when relative */
	char *key_file;
	enum vt_web_tls_version tls_min; /* tls_server_config.min_version (default TLS12) */
	enum vt_web_tls_version tls_max; /* tls_server_config.max_version (default TLS13) */
	struct vt_web_header *headers;   /* http_server_config.headers, in file order */
	size_t nheaders;
	struct vt_web_user *users;       /* basic_auth_users in file order; none: no auth */
	size_t nusers;
	char *cert_pem;                  /* cert_file's contents (vt_web_config_load only) */
	char *key_pem;                   /* key_file's contents (vt_web_config_load only) */
	char warnings[512];              /* vt_web_config_load: the file writable by every user, the
	                                  * key readable by every user ("; "-joined), "" none */
};

/* bcrypt costs above this are refused: each check would hold the server's thread for seconds. */
#define VT_WEB_BCRYPT_COST_MAX 14

/*
 * Parse the YAML in text[0..len) (no NUL needed).  dir: the directory that
 * relative file names are joined to (NULL: kept as written); name: what
 * messages call the file.  Fills *out, which the caller releases (also on
 * failure).  VT_OK, VT_E_USAGE (with the key and the problem in err->msg),
 * VT_E_NOMEM.  An empty file is valid and asks for nothing.
 */
int vt_web_config_parse(const char *text, size_t len, const char *dir, const char *name,
			struct vt_web_config *out, struct vt_err *err);

/*
 * Read and parse the file at path, then read its certificate and key into
 * cert_pem/key_pem.  VT_E_USAGE for a file that cannot be read or parsed
 * (errno kept, the file named), VT_E_NOMEM.
 */
int vt_web_config_load(const char *path, struct vt_web_config *out, struct vt_err *err);

/* Free what *c holds (wiping the key) and zero it. */
void vt_web_config_release(struct vt_web_config *c);

/* True when hash is a bcrypt hash crypt(3) can check: $2a$, $2b$ or $2y$, cost 04-31. */
bool vt_web_bcrypt_valid(const char *hash);

/*
 * True when password matches the bcrypt hash (crypt_r from libxcrypt, the
 * result compared in constant time).  Takes about 2^cost bcrypt rounds:
 * 50 ms or so at cost 10.
 */
bool vt_web_password_ok(const char *hash, const char *password);

/* Compare n bytes in time that depends on n only. */
bool vt_web_const_eq(const void *a, const void *b, size_t n);

#endif
