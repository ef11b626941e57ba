/*
 * web_config.c — the Prometheus web configuration file on libyaml's document
 * loader, and bcrypt checks with libxcrypt's crypt_r.
 *
 * The file is small and its shape fixed (three mappings, two levels), so it
 * is loaded as a node tree and walked; aliases point at shared nodes and are
 * never expanded, so an alias bomb costs nothing.  Every key is known or an
 * error: exporter-toolkit is strict, and a key vitals ignored could be a
 * security setting the user believes in.
 */
#include "serve/web_config.h"

#include "base/dynlib.h"

#include <crypt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* What a walk of the tree needs: the document, the file's name and directory. */
/*
 * libyaml and libxcrypt, opened when a web config is first read (base/dynlib.h
 * says why): only vitals serve --web-config uses them.  Debian's libyaml-0-2
 * and libcrypt1, the libraries the headers come from; the package Depends on
 * them.
 */
struct libyaml_api {
	__typeof__(&yaml_document_delete) document_delete;
	__typeof__(&yaml_document_get_node) document_get_node;
	__typeof__(&yaml_document_get_root_node) document_get_root_node;
	__typeof__(&yaml_parser_delete) parser_delete;
	__typeof__(&yaml_parser_initialize) parser_initialize;
	__typeof__(&yaml_parser_load) parser_load;
	__typeof__(&yaml_parser_set_input_string) parser_set_input_string;
};

struct libcrypt_api {
	__typeof__(&crypt_r) crypt_r;
};

static struct libyaml_api libyaml;
static struct libcrypt_api libcrypt;

#define YAML_SYM(member) { "yaml_" #member, offsetof(struct libyaml_api, member) }
static const struct vt_dynsym libyaml_syms[] = {
	YAML_SYM(document_delete),
	YAML_SYM(document_get_node),
	YAML_SYM(document_get_root_node),
	YAML_SYM(parser_delete),
	YAML_SYM(parser_initialize),
	YAML_SYM(parser_load),
	YAML_SYM(parser_set_input_string),
};
#undef YAML_SYM

static const struct vt_dynsym libcrypt_syms[] = {
	{ "crypt_r", offsetof(struct libcrypt_api, crypt_r) },
};

static struct vt_dynlib libyaml_lib = VT_DYNLIB("libyaml-0.so.2", "libyaml-0-2", "--web-config",
					libyaml_syms, &libyaml);
static struct vt_dynlib libcrypt_lib = VT_DYNLIB("libcrypt.so.1", "libcrypt1", "--web-config",
					libcrypt_syms, &libcrypt);

struct wc_parse {
	yaml_document_t *doc;
	const char *name;
	const char *dir;
	struct vt_web_config *out;
	struct vt_err *err;
};

static int bad(struct wc_parse *p, const yaml_node_t *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An error of the file, with the line of the node at (NULL: none). */
static int bad(struct wc_parse *p, const yaml_node_t *at, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (at)
		return vt_err_set(p->err, VT_E_USAGE, 0, "web config '%s' line %lu: %s", p->name,
				  (unsigned long)at->start_mark.line + 1, what);
	return vt_err_set(p->err, VT_E_USAGE, 0, "web config '%s': %s", p->name, what);
}

/*
 * k as a message may show it: a key that looks like one, else a stand-in.
 * A file that is not a web config (a link to /etc/shadow) must not have its
 * lines printed.
 */
static const char *shown_key(const char *k)
{
	size_t n = strlen(k);

	if (n && n <= 40 && strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n)
		return k;
	return "(not shown: it does not look like a key, and the file may not be a web config)";
}

static bool is_null(const yaml_node_t *n)
{
	const char *v;

	if (n->tag && strcmp((const char *)n->tag, YAML_NULL_TAG) == 0)
		return true;
	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	v = (const char *)n->data.scalar.value;
	return !*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
	       strcmp(v, "NULL") == 0;
}

/* A scalar's text, or NULL after an error (not a scalar, or holding a NUL). */
static const char *scalar(struct wc_parse *p, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SCALAR_NODE) {
		bad(p, n, "'%s' must be a string", key);
		return NULL;
	}
	if (memchr(n->data.scalar.value, '\0', n->data.scalar.length)) {
		bad(p, n, "'%s' holds a NUL byte", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

/* A non-empty string value; NULL after an error. */
static const char *string(struct wc_parse *p, const yaml_node_t *n, const char *key)
{
	const char *v = is_null(n) ? "" : scalar(p, n, key);

	if (v && !*v) {
		bad(p, n, "'%s' is empty", key);
		return NULL;
	}
	return v;
}

/*
 * The pairs of a mapping, with each key a distinct string (checked here, so
 * the walkers can compare keys with strcmp).  NULL after an error; *n 0 for
 * a null value (an empty section).
 */
static yaml_node_pair_t *pairs(struct wc_parse *p, const yaml_node_t *m, const char *key, size_t *n)
{
	yaml_node_pair_t *i, *j;

	*n = 0;
	if (is_null(m))
		return m->data.mapping.pairs.start;     /* unused with *n 0 */
	if (m->type != YAML_MAPPING_NODE) {
		bad(p, m, "'%s' must be a mapping of keys to values", key);
		return NULL;
	}
	for (i = m->data.mapping.pairs.start; i < m->data.mapping.pairs.top; i++) {
		yaml_node_t *k = libyaml.document_get_node(p->doc, i->key);

		if (!k || !libyaml.document_get_node(p->doc, i->value)) {
			bad(p, m, "'%s' is malformed", key);
			return NULL;
		}
		if (k->type != YAML_SCALAR_NODE || memchr(k->data.scalar.value, '\0', k->data.scalar.length)) {
			bad(p, k, "a key under '%s' is not a string", key);
			return NULL;
		}
		for (j = m->data.mapping.pairs.start; j < i; j++) {
			yaml_node_t *kj = libyaml.document_get_node(p->doc, j->key);

			if (strcmp((const char *)kj->data.scalar.value, (const char *)k->data.scalar.value) == 0) {
				bad(p, k, "'%s' is given twice", (const char *)k->data.scalar.value);
				return NULL;
			}
		}
	}
	*n = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
	return m->data.mapping.pairs.start;
}

static const char *key_of(struct wc_parse *p, const yaml_node_pair_t *pr)
{
	return (const char *)libyaml.document_get_node(p->doc, pr->key)->data.scalar.value;
}

/* A path from the file, joined to its directory when relative. */
static int path_value(struct wc_parse *p, const yaml_node_t *n, const char *key, char **out)
{
	const char *v = string(p, n, key);
	size_t need;

	if (!v)
		return p->err->code;
	free(*out);
	if (!p->dir || v[0] == '/') {
		*out = strdup(v);
	} else {
		need = strlen(p->dir) + strlen(v) + 2;
		*out = malloc(need);
		if (*out)
			snprintf(*out, need, "%s/%s", p->dir, v);
	}
	return *out ? VT_OK : vt_err_set(p->err, VT_E_NOMEM, ENOMEM, "out of memory reading web config");
}

static int tls_version(struct wc_parse *p, const yaml_node_t *n, const char *key, enum vt_web_tls_version *out)
{
	const char *v = string(p, n, key);

	if (!v)
		return p->err->code;
	if (strcmp(v, "TLS12") == 0)
		*out = VT_WEB_TLS12;
	else if (strcmp(v, "TLS13") == 0)
		*out = VT_WEB_TLS13;
	else if (strcmp(v, "TLS10") == 0 || strcmp(v, "TLS11") == 0)
		return bad(p, n, "%s '%s': vitals speaks TLS12 and TLS13 only", key, v);
	else
		return bad(p, n, "%s '%s' is not TLS12 or TLS13", key, v);
	return VT_OK;
}

/* tls_server_config: cert_file and key_file, both or neither. */
static int parse_tls(struct wc_parse *p, const yaml_node_t *sec)
{
	static const char *const unsupported[] = {
		"client_ca_file", "client_allowed_sans", "cipher_suites", "curve_preferences",
		"prefer_server_cipher_suites", "cert", "key",
	};
	struct vt_web_config *c = p->out;
	const yaml_node_t *at = sec;
	yaml_node_pair_t *pr;
	size_t n, i, u;
	int rc;

	if (!(pr = pairs(p, sec, "tls_server_config", &n)))
		return p->err->code;
	for (i = 0; i < n; i++) {
		const char *k = key_of(p, &pr[i]);
		yaml_node_t *v = libyaml.document_get_node(p->doc, pr[i].value);

		if (strcmp(k, "cert_file") == 0)
			rc = path_value(p, v, k, &c->cert_file);
		else if (strcmp(k, "key_file") == 0)
			rc = path_value(p, v, k, &c->key_file);
		else if (strcmp(k, "min_version") == 0)
			rc = tls_version(p, v, k, &c->tls_min);
		else if (strcmp(k, "max_version") == 0)
			rc = tls_version(p, v, k, &c->tls_max);
		else if (strcmp(k, "client_auth_type") == 0) {
			const char *t = is_null(v) ? "" : scalar(p, v, k);

			if (!t)
				return p->err->code;
			if (*t && strcmp(t, "NoClientCert") != 0) {
				if (strcmp(t, "RequestClientCert") == 0 || strcmp(t, "RequireAnyClientCert") == 0 ||
				    strcmp(t, "VerifyClientCertIfGiven") == 0 ||
				    strcmp(t, "RequireAndVerifyClientCert") == 0)
					return bad(p, v, "client_auth_type '%s': vitals does not check client "
						   "certificates (use basic_auth_users, or a proxy)", t);
				return bad(p, v, "client_auth_type '%s' is not a client auth type", t);
			}
			rc = VT_OK;
		} else {
			for (u = 0; u < sizeof(unsupported) / sizeof(unsupported[0]); u++)
				if (strcmp(k, unsupported[u]) == 0)
					return bad(p, v, "tls_server_config.%s is not supported by vitals", k);
			return bad(p, libyaml.document_get_node(p->doc, pr[i].key),
				   "unknown key '%s' in tls_server_config", shown_key(k));
		}
		if (rc)
			return rc;
	}
	if (!c->cert_file && !c->key_file)
		return VT_OK;                       /* an empty section asks for nothing (as exporter-toolkit) */
	if (!c->cert_file || !c->key_file)
		return bad(p, at, "tls_server_config needs both cert_file and key_file (%s is missing)",
			   c->cert_file ? "key_file" : "cert_file");
	if (c->tls_min > c->tls_max)
		return bad(p, at, "tls_server_config: min_version is above max_version");
	c->tls = true;
	return VT_OK;
}

/* The response headers exporter-toolkit lets a web config set. */
static const char *const allowed_headers[] = {
	"Strict-Transport-Security", "X-Content-Type-Options", "X-Frame-Options", "X-XSS-Protection",
	"Content-Security-Policy",
};

static int parse_headers(struct wc_parse *p, const yaml_node_t *sec)
{
	struct vt_web_config *c = p->out;
	yaml_node_pair_t *pr;
	size_t n, i, a;

	if (!(pr = pairs(p, sec, "headers", &n)))
		return p->err->code;
	if (n == 0)
		return VT_OK;
	c->headers = calloc(n, sizeof(*c->headers));
	if (!c->headers)
		return vt_err_set(p->err, VT_E_NOMEM, ENOMEM, "out of memory reading web config");
	for (i = 0; i < n; i++) {
		const char *k = key_of(p, &pr[i]);
		yaml_node_t *vn = libyaml.document_get_node(p->doc, pr[i].value);
		const char *v = string(p, vn, k);
		struct vt_web_header *h = &c->headers[c->nheaders];

		if (!v)
			return p->err->code;
		for (a = 0; a < sizeof(allowed_headers) / sizeof(allowed_headers[0]); a++)
			if (strcasecmp(k, allowed_headers[a]) == 0)
				break;
		if (a == sizeof(allowed_headers) / sizeof(allowed_headers[0]))
			return bad(p, vn, "header '%s' may not be set (Strict-Transport-Security, "
				   "X-Content-Type-Options, X-Frame-Options, X-XSS-Protection or "
				   "Content-Security-Policy)", k);
		if (strpbrk(v, "\r\n"))
			return bad(p, vn, "header '%s' holds a line break", k);
		h->name = strdup(allowed_headers[a]);
		h->value = strdup(v);
		c->nheaders++;
		if (!h->name || !h->value)
			return vt_err_set(p->err, VT_E_NOMEM, ENOMEM, "out of memory reading web config");
	}
	return VT_OK;
}

/* http_server_config: http2 (accepted, ignored: vitals speaks HTTP/1.1) and headers. */
static int parse_http(struct wc_parse *p, const yaml_node_t *sec)
{
	yaml_node_pair_t *pr;
	size_t n, i;
	int rc;

	if (!(pr = pairs(p, sec, "http_server_config", &n)))
		return p->err->code;
	for (i = 0; i < n; i++) {
		const char *k = key_of(p, &pr[i]);
		yaml_node_t *v = libyaml.document_get_node(p->doc, pr[i].value);

		if (strcmp(k, "http2") == 0) {
			const char *b = is_null(v) ? "false" : scalar(p, v, k);

			if (!b)
				return p->err->code;
			if (strcasecmp(b, "true") != 0 && strcasecmp(b, "false") != 0)
				return bad(p, v, "http2 '%s' is not true or false", b);
		} else if (strcmp(k, "headers") == 0) {
			if ((rc = parse_headers(p, v)))
				return rc;
		} else {
			return bad(p, libyaml.document_get_node(p->doc, pr[i].key),
				   "unknown key '%s' in http_server_config", shown_key(k));
		}
	}
	return VT_OK;
}

/* basic_auth_users: user name to bcrypt hash. */
static int parse_users(struct wc_parse *p, const yaml_node_t *sec)
{
	struct vt_web_config *c = p->out;
	yaml_node_pair_t *pr;
	size_t n, i;

	if (!(pr = pairs(p, sec, "basic_auth_users", &n)))
		return p->err->code;
	if (n == 0)
		return VT_OK;
	c->users = calloc(n, sizeof(*c->users));
	if (!c->users)
		return vt_err_set(p->err, VT_E_NOMEM, ENOMEM, "out of memory reading web config");
	for (i = 0; i < n; i++) {
		const char *k = key_of(p, &pr[i]);
		yaml_node_t *vn = libyaml.document_get_node(p->doc, pr[i].value);
		const char *v = string(p, vn, k);
		struct vt_web_user *u = &c->users[c->nusers];

		if (!v)
			return p->err->code;
		if (!*k || strchr(k, ':'))
			return bad(p, vn, "a user name is empty or holds ':' (basic auth cannot send it)");
		if (!vt_web_bcrypt_valid(v))
			return bad(p, vn, "the password of '%s' is not a bcrypt hash ($2y$..., as "
				   "htpasswd -nBC 10 USER makes); plain passwords are refused", shown_key(k));
		/* "$2y$NN$": each check costs 2^NN rounds on the server's one thread */
		if (atoi(v + 4) > VT_WEB_BCRYPT_COST_MAX)
			return bad(p, vn, "the bcrypt cost of '%s' is %d: over %d, one check would hold the "
				   "server for seconds to hours; make the hash again with htpasswd -nBC 10 USER",
				   shown_key(k), atoi(v + 4), VT_WEB_BCRYPT_COST_MAX);
		u->name = strdup(k);
		u->hash = strdup(v);
		c->nusers++;
		if (!u->name || !u->hash)
			return vt_err_set(p->err, VT_E_NOMEM, ENOMEM, "out of memory reading web config");
	}
	return VT_OK;
}

static int parse_root(struct wc_parse *p, const yaml_node_t *root)
{
	yaml_node_pair_t *pr;
	size_t n, i;
	int rc;

	if (!(pr = pairs(p, root, "the top level", &n)))
		return p->err->code;
	for (i = 0; i < n; i++) {
		const char *k = key_of(p, &pr[i]);
		yaml_node_t *v = libyaml.document_get_node(p->doc, pr[i].value);

		if (strcmp(k, "tls_server_config") == 0)
			rc = parse_tls(p, v);
		else if (strcmp(k, "http_server_config") == 0)
			rc = parse_http(p, v);
		else if (strcmp(k, "basic_auth_users") == 0)
			rc = parse_users(p, v);
		else
			return bad(p, libyaml.document_get_node(p->doc, pr[i].key),
				   "unknown key '%s' (tls_server_config, http_server_config or basic_auth_users)",
				   shown_key(k));
		if (rc)
			return rc;
	}
	return VT_OK;
}

int vt_web_config_parse(const char *text, size_t len, const char *dir, const char *name,
			struct vt_web_config *out, struct vt_err *err)
{
	struct wc_parse p = { NULL, name ? name : "-", dir, out, err };
	struct vt_err scratch;
	yaml_parser_t parser;
	yaml_document_t doc, more;
	yaml_node_t *root;
	int rc;

	if (!err)
		p.err = &scratch;
	memset(out, 0, sizeof(*out));
	out->tls_max = VT_WEB_TLS13;
	/* both here: a missing library is said when vitals serve starts, not at the first login */
	if ((rc = vt_dynlib_load(&libyaml_lib, p.err)) || (rc = vt_dynlib_load(&libcrypt_lib, p.err)))
		return rc;
	if (!libyaml.parser_initialize(&parser))
		return vt_err_set(p.err, VT_E_NOMEM, ENOMEM, "out of memory reading web config");
	libyaml.parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!libyaml.parser_load(&parser, &doc)) {
		rc = vt_err_set(p.err, VT_E_USAGE, 0, "web config '%s' line %lu column %lu: %s%s%s", p.name,
				(unsigned long)parser.problem_mark.line + 1,
				(unsigned long)parser.problem_mark.column + 1,
				parser.problem ? parser.problem : "not YAML", parser.context ? " " : "",
				parser.context ? parser.context : "");
		libyaml.parser_delete(&parser);
		return rc;
	}
	p.doc = &doc;
	root = libyaml.document_get_root_node(&doc);
	rc = root ? parse_root(&p, root) : VT_OK;
	if (rc == VT_OK && root) {
		/* one document only: a second one would be silently ignored */
		if (!libyaml.parser_load(&parser, &more)) {
			rc = vt_err_set(p.err, VT_E_USAGE, 0, "web config '%s' line %lu: %s", p.name,
					(unsigned long)parser.problem_mark.line + 1,
					parser.problem ? parser.problem : "not YAML");
		} else {
			if (libyaml.document_get_root_node(&more))
				rc = vt_err_set(p.err, VT_E_USAGE, 0, "web config '%s' holds more than one "
						"YAML document", p.name);
			libyaml.document_delete(&more);
		}
	}
	libyaml.document_delete(&doc);
	libyaml.parser_delete(&parser);
	return rc;
}

/* ---- files ----------------------------------------------------------------- */

/* Read a whole file (at most VT_WEB_FILE_MAX bytes) into a NUL-terminated malloc'd buffer. */
static int read_all(const char *path, char **out, size_t *len, int *sys_errno)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	char *buf;
	int fd, e;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		*sys_errno = errno;
		return VT_E_IO;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		*sys_errno = S_ISDIR(st.st_mode) ? EISDIR : errno ? errno : EINVAL;
		close(fd);
		return VT_E_IO;
	}
	if ((uint64_t)st.st_size > VT_WEB_FILE_MAX) {
		close(fd);
		*sys_errno = EFBIG;
		return VT_E_IO;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		*sys_errno = ENOMEM;
		return VT_E_NOMEM;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			free(buf);
			close(fd);
			*sys_errno = e;
			return VT_E_IO;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return VT_OK;
}

static int read_pem(const char *cfg, const char *key, const char *path, char **out, struct vt_err *err)
{
	size_t len;
	int e = 0, rc;

	rc = read_all(path, out, &len, &e);
	if (rc == VT_E_NOMEM)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
	if (rc)
		return vt_err_set(err, VT_E_USAGE, e, "web config '%s': cannot read %s '%s': %s", cfg, key, path,
				  strerror(e));
	if (len == 0 || strlen(*out) != len)
		return vt_err_set(err, VT_E_USAGE, 0, "web config '%s': %s '%s' is %s, not PEM", cfg, key, path,
				  len ? "binary" : "empty");
	return VT_OK;
}

/* Warnings for files others may change or read (vt_web_config.warnings). */
static void note_modes(const char *path, struct vt_web_config *c)
{
	struct stat st;
	size_t len = 0;

	if (stat(path, &st) == 0 && (st.st_mode & S_IWOTH))
		len += (size_t)snprintf(c->warnings + len, sizeof(c->warnings) - len, "web config '%s' is "
					"writable by every user: anyone can change who may scrape; ", path);
	if (c->key_file && len < sizeof(c->warnings) && stat(c->key_file, &st) == 0 && (st.st_mode & S_IROTH))
		len += (size_t)snprintf(c->warnings + len, sizeof(c->warnings) - len, "key_file '%s' is "
					"readable by every user: chmod o-r it; ", c->key_file);
	if (len >= 2 && len < sizeof(c->warnings))
		c->warnings[len - 2] = '\0';
}

int vt_web_config_load(const char *path, struct vt_web_config *out, struct vt_err *err)
{
	char *text, *dir, *slash;
	size_t len;
	int e = 0, rc;

	memset(out, 0, sizeof(*out));
	rc = read_all(path, &text, &len, &e);
	if (rc == VT_E_NOMEM)
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
	if (rc) {
		rc = vt_err_set(err, VT_E_USAGE, e, "cannot read web config '%s': %s", path, strerror(e));
		if (e == EFBIG)
			vt_err_hint(err, "a web config is a few lines of YAML; this file is over %u bytes",
				    VT_WEB_FILE_MAX);
		return rc;
	}
	/* relative file names are relative to the file's directory, as exporter-toolkit has it */
	dir = strdup(path);
	if (!dir) {
		free(text);
		return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading '%s'", path);
	}
	slash = strrchr(dir, '/');
	if (!slash)
		memcpy(dir, ".", 2);        /* path holds one byte at least: dir has room */
	else if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	rc = vt_web_config_parse(text, len, dir, path, out, err);
	free(text);
	free(dir);
	if (rc == VT_OK && out->tls)
		rc = read_pem(path, "cert_file", out->cert_file, &out->cert_pem, err);
	if (rc == VT_OK && out->tls)
		rc = read_pem(path, "key_file", out->key_file, &out->key_pem, err);
	if (rc == VT_OK)
		note_modes(path, out);
	return rc;
}

void vt_web_config_release(struct vt_web_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nusers; i++) {
		free(c->users[i].name);
		free(c->users[i].hash);
	}
	for (i = 0; i < c->nheaders; i++) {
		free(c->headers[i].name);
		free(c->headers[i].value);
	}
	if (c->key_pem)
		explicit_bzero(c->key_pem, strlen(c->key_pem));
	free(c->users);
	free(c->headers);
	free(c->cert_file);
	free(c->key_file);
	free(c->cert_pem);
	free(c->key_pem);
	memset(c, 0, sizeof(*c));
}

/* ---- bcrypt ---------------------------------------------------------------- */

bool vt_web_bcrypt_valid(const char *hash)
{
	static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int cost;
	size_t i;

	/* $2?$NN$ then 22 characters of salt and 31 of hash, in bcrypt's base64 */
	if (strlen(hash) != 60 || hash[0] != '$' || hash[1] != '2' || !strchr("aby", hash[2]) || !hash[2] ||
	    hash[3] != '$' || hash[4] < '0' || hash[4] > '9' || hash[5] < '0' || hash[5] > '9' || hash[6] != '$')
		return false;
	cost = (hash[4] - '0') * 10 + (hash[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (i = 7; i < 60; i++)
		if (!strchr(b64, hash[i]) || !hash[i])
			return false;
	return true;
}

bool vt_web_const_eq(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

bool vt_web_password_ok(const char *hash, const char *password)
{
	struct crypt_data *cd;
	const char *got;
	bool ok = false;

	if (!vt_web_bcrypt_valid(hash) || vt_dynlib_load(&libcrypt_lib, NULL))
		return false;
	cd = calloc(1, sizeof(*cd));           /* 32 KiB: not on a server thread's stack */
	if (!cd)
		return false;
	got = libcrypt.crypt_r(password, hash, cd);
	/* a failed crypt_r returns "*0" or "*1" (or NULL); never equal to a valid hash */
	if (got && strlen(got) == 60)
		ok = vt_web_const_eq(got, hash, 60);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}
