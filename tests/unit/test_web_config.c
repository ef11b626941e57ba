/*
 * test_web_config.c — the Prometheus web configuration file (src/serve/web_config.c):
 * what a valid file yields, that every key vitals does not know or cannot
 * honour is refused by name, that plain passwords are refused, relative
 * paths, loading from disk, and bcrypt checks through crypt_r.
 */
#include "harness.h"

#include "serve/web_config.h"

#include <crypt.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEXT(s) s, sizeof(s) - 1

/* A bcrypt hash of "secret" at cost 4, and one of "hunter2", both made by crypt_r. */
static char hash_secret[64], hash_hunter2[64];

static void make_hashes(void)
{
	static const char rnd[16] = "0123456789abcdef";    /* a fixed salt: the same hash every run */
	struct crypt_data cd;
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];

	if (hash_secret[0])
		return;
	memset(&cd, 0, sizeof(cd));
	if (!crypt_gensalt_rn("$2b$", 4, rnd, sizeof(rnd), setting, sizeof(setting))) {
		printf("Bail out! crypt_gensalt_rn cannot make a bcrypt salt\n");
		exit(2);
	}
	snprintf(hash_secret, sizeof(hash_secret), "%s", crypt_r("secret", setting, &cd));
	snprintf(hash_hunter2, sizeof(hash_hunter2), "%s", crypt_r("hunter2", setting, &cd));
}

/* Parse text; the error (when any) in err. */
static int parse(const char *text, const char *dir, struct vt_web_config *c, struct vt_err *err)
{
	vt_err_clear(err);
	return vt_web_config_parse(text, strlen(text), dir, "web.yml", c, err);
}

/* text fails with VT_E_USAGE and a message holding want. */
static bool refused(const char *text, const char *want)
{
	struct vt_web_config c;
	struct vt_err err;
	int rc = parse(text, NULL, &c, &err);
	bool ok = rc == VT_E_USAGE && strstr(err.msg, want) && strstr(err.msg, "web.yml");

	if (!ok)
		printf("#   rc %d, message \"%s\", wanted \"%s\"\n", rc, err.msg, want);
	vt_web_config_release(&c);
	return ok;
}

static void test_web_config__full(void)
{
	struct vt_web_config c;
	struct vt_err err;
	char text[1024];

	make_hashes();
	snprintf(text, sizeof(text),
		 "# a comment\n"
		 "tls_server_config:\n"
		 "  cert_file: server.crt\n"
		 "  key_file: /etc/vitals/server.key\n"
		 "  client_auth_type: NoClientCert\n"
		 "  min_version: TLS13\n"
		 "http_server_config:\n"
		 "  http2: false\n"
		 "  headers:\n"
		 "    strict-transport-security: max-age=31536000\n"
		 "basic_auth_users:\n"
		 "  alice: %s\n"
		 "  'bob smith': \"%s\"\n", hash_secret, hash_hunter2);
	CHECK_EQ_I64(parse(text, "/etc/vitals", &c, &err), VT_OK);
	CHECK(c.tls);
	CHECK_STR(c.cert_file, "/etc/vitals/server.crt");
	CHECK_STR(c.key_file, "/etc/vitals/server.key");
	CHECK_EQ_I64(c.tls_min, VT_WEB_TLS13);
	CHECK_EQ_I64(c.tls_max, VT_WEB_TLS13);
	CHECK_EQ_U64(c.nusers, 2);
	if (c.nusers == 2) {
		CHECK_STR(c.users[0].name, "alice");
		CHECK_STR(c.users[0].hash, hash_secret);
		CHECK_STR(c.users[1].name, "bob smith");
	}
	CHECK_EQ_U64(c.nheaders, 1);
	if (c.nheaders == 1) {
		CHECK_STR(c.headers[0].name, "Strict-Transport-Security");
		CHECK_STR(c.headers[0].value, "max-age=31536000");
	}
	CHECK(!c.cert_pem && !c.key_pem);        /* parse reads no file */
	vt_web_config_release(&c);
	CHECK(!c.users && !c.cert_file);
}

static void test_web_config__relative_paths(void)
{
	struct vt_web_config c;
	struct vt_err err;

	CHECK_EQ_I64(parse("tls_server_config: {cert_file: a/b.crt, key_file: ../k.key}\n", "conf", &c, &err),
		     VT_OK);
	CHECK_STR(c.cert_file, "conf/a/b.crt");
	CHECK_STR(c.key_file, "conf/../k.key");
	CHECK_EQ_I64(c.tls_min, VT_WEB_TLS12);
	vt_web_config_release(&c);
	/* without a directory, as written */
	CHECK_EQ_I64(parse("tls_server_config: {cert_file: a.crt, key_file: a.key}\n", NULL, &c, &err), VT_OK);
	CHECK_STR(c.cert_file, "a.crt");
	vt_web_config_release(&c);
}

static void test_web_config__empty_asks_nothing(void)
{
	static const char *const texts[] = {
		"", "\n", "# only a comment\n", "---\n", "{}\n", "~\n",
		"basic_auth_users:\n", "basic_auth_users: {}\n", "tls_server_config:\nhttp_server_config: {}\n",
		"tls_server_config: {client_auth_type: NoClientCert}\n",
	};
	struct vt_web_config c;
	struct vt_err err;
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		int rc = parse(texts[i], NULL, &c, &err);

		if (rc != VT_OK || c.tls || c.nusers || c.nheaders)
			printf("#   \"%s\": rc %d (%s)\n", texts[i], rc, err.msg);
		CHECK(rc == VT_OK && !c.tls && c.nusers == 0 && c.nheaders == 0);
		vt_web_config_release(&c);
	}
}

static void test_web_config__unknown_keys_named(void)
{
	CHECK(refused("tls_config:\n  cert_file: a\n", "unknown key 'tls_config'"));
	CHECK(refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  certfile: c\n",
		      "unknown key 'certfile' in tls_server_config"));
	CHECK(refused("http_server_config:\n  http3: true\n", "unknown key 'http3' in http_server_config"));
	CHECK(refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
		      "cipher_suites is not supported"));
}

static void test_web_config__refused_settings(void)
{
	CHECK(refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireAndVerifyClientCert\n"
		      "  client_ca_file: ca.crt\n", "client_auth_type 'RequireAndVerifyClientCert'"));
	CHECK(refused("tls_server_config: {cert_file: a, key_file: b, client_auth_type: Sometimes}\n",
		      "not a client auth type"));
	CHECK(refused("tls_server_config: {cert_file: a, key_file: b, client_ca_file: ca.crt}\n",
		      "client_ca_file is not supported"));
	CHECK(refused("tls_server_config: {cert_file: a}\n", "key_file is missing"));
	CHECK(refused("tls_server_config: {key_file: a}\n", "cert_file is missing"));
	CHECK(refused("tls_server_config: {cert_file: '', key_file: b}\n", "'cert_file' is empty"));
	CHECK(refused("tls_server_config: {cert_file: a, key_file: b, min_version: TLS10}\n", "TLS12 and TLS13 only"));
	CHECK(refused("tls_server_config: {cert_file: a, key_file: b, min_version: TLS13, max_version: TLS12}\n",
		      "min_version is above max_version"));
	CHECK(refused("tls_server_config: {cert_file: [a], key_file: b}\n", "'cert_file' must be a string"));
	CHECK(refused("http_server_config: {http2: maybe}\n", "not true or false"));
	CHECK(refused("http_server_config: {headers: {Server: vitals}}\n", "header 'Server' may not be set"));
	CHECK(refused("http_server_config: {headers: {X-Frame-Options: \"a\\nb\"}}\n", "line break"));
}

static void test_web_config__passwords(void)
{
	char text[256];

	make_hashes();
	CHECK(refused("basic_auth_users:\n  alice: secret\n", "not a bcrypt hash"));
	CHECK(refused("basic_auth_users:\n  alice: $1$abc$defghijklmnopqrstuvwxy\n", "not a bcrypt hash"));
	CHECK(refused("basic_auth_users:\n  alice: $argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA\n",
		      "not a bcrypt hash"));
	CHECK(refused("basic_auth_users:\n  alice:\n", "'alice' is empty"));
	CHECK(refused("basic_auth_users:\n  alice: ''\n", "'alice' is empty"));
	snprintf(text, sizeof(text), "basic_auth_users:\n  'a:b': %s\n", hash_secret);
	CHECK(refused(text, "holds ':'"));
	snprintf(text, sizeof(text), "basic_auth_users:\n  \"\": %s\n", hash_secret);
	CHECK(refused(text, "is empty or holds ':'"));
	snprintf(text, sizeof(text), "basic_auth_users:\n  \"a\\0b\": %s\n", hash_secret);
	CHECK(refused(text, "not a string"));
	CHECK(refused("basic_auth_users: [alice]\n", "must be a mapping"));
}

static void test_web_config__bad_yaml(void)
{
	CHECK(refused("tls_server_config: {cert_file: a\n", "line"));
	CHECK(refused("basic_auth_users:\n  alice: x\n alice2: y\n", "line"));
	CHECK(refused("\t- x\n", "line"));
	CHECK(refused("- a\n- b\n", "must be a mapping"));
	CHECK(refused("just a string\n", "must be a mapping"));
	CHECK(refused("basic_auth_users: {}\nbasic_auth_users: {}\n", "'basic_auth_users' is given twice"));
	CHECK(refused("basic_auth_users: {}\n---\ntls_server_config: {}\n", "more than one YAML document"));
	CHECK(refused("*unknown_alias\n", "line"));
	CHECK(refused("? [a, b]\n: c\n", "not a string"));
}

/* Aliases share nodes and are never expanded: a "billion laughs" file is cheap and refused. */
static void test_web_config__alias_bomb(void)
{
	CHECK(refused("a: &a [x, x, x, x, x, x, x, x, x]\n"
		      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n", "unknown key 'a'"));
}

static void test_web_config__bcrypt(void)
{
	char y[64];

	make_hashes();
	CHECK(vt_web_bcrypt_valid(hash_secret));
	CHECK(strncmp(hash_secret, "$2b$04$", 7) == 0);
	CHECK(vt_web_password_ok(hash_secret, "secret"));
	CHECK(!vt_web_password_ok(hash_secret, "Secret"));
	CHECK(!vt_web_password_ok(hash_secret, ""));
	CHECK(!vt_web_password_ok(hash_secret, "secret "));
	CHECK(!vt_web_password_ok(hash_hunter2, "secret"));
	/* $2y$ (htpasswd's) and $2a$ are the same algorithm for ASCII passwords */
	snprintf(y, sizeof(y), "%s", hash_secret);
	y[2] = 'y';
	CHECK(vt_web_password_ok(y, "secret"));
	y[2] = 'a';
	CHECK(vt_web_password_ok(y, "secret"));
	/* malformed hashes are never valid, nor matched */
	CHECK(!vt_web_bcrypt_valid("$2b$04$short"));
	snprintf(y, sizeof(y), "%s", hash_secret);
	y[2] = 'x';
	CHECK(!vt_web_bcrypt_valid(y));
	snprintf(y, sizeof(y), "%s", hash_secret);
	y[4] = '0', y[5] = '3';                  /* cost 3 */
	CHECK(!vt_web_bcrypt_valid(y));
	snprintf(y, sizeof(y), "%s", hash_secret);
	y[30] = '!';
	CHECK(!vt_web_bcrypt_valid(y));
	CHECK(!vt_web_password_ok(y, "secret"));
	CHECK(!vt_web_password_ok("*0", "*0"));
	CHECK(vt_web_const_eq("abc", "abc", 3));
	CHECK(!vt_web_const_eq("abc", "abd", 3));
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		printf("Bail out! cannot write %s\n", path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

#define TLS_PATH_MAX 256

/* In a new directory dir: a web config (path) asking for TLS with a certificate crt and a key key. */
static void tls_files(char *dir, char *path, char *crt, char *key)
{
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		exit(2);
	}
	snprintf(path, TLS_PATH_MAX, "%s/web.yml", dir);
	snprintf(crt, TLS_PATH_MAX, "%s/s.crt", dir);
	snprintf(key, TLS_PATH_MAX, "%s/s.key", dir);
	write_file(crt, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", 0644);
	write_file(key, "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n", 0600);
	write_file(path, "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n", 0644);
}

static void test_web_config__load(void)
{
	char dir[] = "/tmp/vitals-webcfg.XXXXXX", path[256], crt[256], key[256];
	struct vt_web_config c;
	struct vt_err err;

	tls_files(dir, path, crt, key);
	vt_err_clear(&err);
	CHECK_EQ_I64(vt_web_config_load(path, &c, &err), VT_OK);
	CHECK_STR(c.cert_file, crt);
	CHECK(c.cert_pem && strstr(c.cert_pem, "BEGIN CERTIFICATE"));
	CHECK(c.key_pem && strstr(c.key_pem, "BEGIN PRIVATE KEY"));
	vt_web_config_release(&c);

	/* a key that cannot be read (root reads anything: then an empty one instead) */
	write_file(path, "tls_server_config:\n  cert_file: s.crt\n  key_file: missing.key\n", 0644);
	CHECK_EQ_I64(vt_web_config_load(path, &c, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "key_file") && strstr(err.msg, "missing.key") && strstr(err.msg, path));
	vt_web_config_release(&c);
	if (geteuid() != 0) {
		chmod(key, 0);
		write_file(path, "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n", 0644);
		CHECK_EQ_I64(vt_web_config_load(path, &c, &err), VT_E_USAGE);
		CHECK(strstr(err.msg, "Permission denied") != NULL);
		vt_web_config_release(&c);
	}
	write_file(key, "", 0600);
	write_file(path, "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n", 0644);
	CHECK_EQ_I64(vt_web_config_load(path, &c, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "empty") != NULL);
	vt_web_config_release(&c);

	/* the file itself missing, or a directory */
	CHECK_EQ_I64(vt_web_config_load("/nonexistent/web.yml", &c, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "/nonexistent/web.yml") && strstr(err.msg, "No such file"));
	vt_web_config_release(&c);
	CHECK_EQ_I64(vt_web_config_load(dir, &c, &err), VT_E_USAGE);
	vt_web_config_release(&c);

	unlink(crt);
	unlink(key);
	unlink(path);
	rmdir(dir);
}

/*
 * Issue 23: a web config that is a link to /etc/shadow printed its first
 * line in the error; a bcrypt cost of 31 wedged the server for minutes;
 * a config anyone can write, or a key anyone can read, went unmentioned.
 */
static void test_web_config__secrets_kept_and_costs_bounded(void)
{
	struct vt_web_config c;
	struct vt_err err;
	char text[256], hash31[128];

	/* a shadow line parses as a key: it is not quoted */
	CHECK(parse("root:$y$j9T$abcdefgh$Zm9vYmFy:19000:0:99999:7:::\n", NULL, &c, &err) == VT_E_USAGE);
	CHECK(strstr(err.msg, "j9T") == NULL && strstr(err.msg, "Zm9vYmFy") == NULL);
	CHECK(strstr(err.msg, "not shown") != NULL);
	vt_web_config_release(&c);
	/* a real key is still named */
	CHECK(refused("tls_config:\n  cert_file: a\n", "unknown key 'tls_config'"));

	make_hashes();
	snprintf(hash31, sizeof(hash31), "%s", hash_secret);
	memcpy(hash31 + 4, "31", 2);                      /* $2b$04$... -> $2b$31$... */
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n", hash31);
	CHECK(refused(text, "bcrypt cost of 'alice' is 31: over 14"));
	snprintf(text, sizeof(text), "basic_auth_users:\n  alice: %s\n", hash_secret);
	CHECK_EQ_I64(parse(text, NULL, &c, &err), VT_OK);  /* cost 4 */
	vt_web_config_release(&c);
}

static void test_web_config__modes_warned(void)
{
	char dir[] = "/tmp/vitals-webcfg.XXXXXX", path[256], crt[256], key[256];
	struct vt_web_config c;
	struct vt_err err;

	tls_files(dir, path, crt, key);
	CHECK_EQ_I64(vt_web_config_load(path, &c, &err), VT_OK);
	CHECK_STR(c.warnings, "");
	vt_web_config_release(&c);
	chmod(path, 0666);
	chmod(key, 0644);
	CHECK_EQ_I64(vt_web_config_load(path, &c, &err), VT_OK);
	CHECK(strstr(c.warnings, "writable by every user") != NULL);
	CHECK(strstr(c.warnings, "readable by every user") != NULL);
	vt_web_config_release(&c);
	unlink(crt);
	unlink(key);
	unlink(path);
	rmdir(dir);
}

VT_TEST_MAIN(test_web_config__secrets_kept_and_costs_bounded, test_web_config__modes_warned, test_web_config__full, test_web_config__relative_paths, test_web_config__empty_asks_nothing,
	     test_web_config__unknown_keys_named, test_web_config__refused_settings, test_web_config__passwords,
	     test_web_config__bad_yaml, test_web_config__alias_bomb, test_web_config__bcrypt,
	     test_web_config__load)
