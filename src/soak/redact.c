/*
 * redact.c — arguments that look like secrets, left out of recordings
 * (see redact.h).
 */
#include "soak/redact.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define HIDDEN "\xe2\x80\xa6"    /* "…" */
#define NAME_MAX_LEN 128

/* The fragments, longest spelling first: where a match ends is where a name ends (-passwordX). */
static const char *const secret_words[] = {
	"credentials", "credential", "passphrase", "password", "passwd", "private", "session", "secret",
	"cookie", "token", "pass", "auth", "pwd", "key",
};
/* Words that hold a fragment and name no secret. */
static const char *const harmless_words[] = { "passive", "bypass", "compass", "passthrough", "author", "monkey" };

/* name[0..len) lower-cased without dashes, underscores and dots, harmless words blanked; its length. */
static size_t normalize(const char *name, size_t len, char *out)
{
	size_t i, n = 0, w;

	for (i = 0; i < len && n < NAME_MAX_LEN; i++)
		if (name[i] != '-' && name[i] != '_' && name[i] != '.')
			out[n++] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] - 'A' + 'a' : name[i]);
	out[n] = '\0';
	for (w = 0; w < sizeof(harmless_words) / sizeof(harmless_words[0]); w++)
		for (char *p = out; (p = strstr(p, harmless_words[w])) != NULL;)
			memset(p, ' ', strlen(harmless_words[w]));
	return n;
}

/* The first fragment in a normalized name, and where it ends; NULL when none. */
static const char *find_word(const char *norm, size_t *end)
{
	const char *best = NULL;
	size_t w, best_len = 0;

	for (w = 0; w < sizeof(secret_words) / sizeof(secret_words[0]); w++) {
		const char *p = strstr(norm, secret_words[w]);

		if (p && (!best || p < best)) {
			best = p;
			best_len = strlen(secret_words[w]);
		}
	}
	if (best)
		*end = (size_t)(best - norm) + best_len;
	return best;
}

bool vt_redact_name_is_secret(const char *name, size_t len)
{
	char norm[NAME_MAX_LEN + 1];
	size_t end;

	normalize(name, len, norm);
	return find_word(norm, &end) != NULL;
}

/* Appending to a bounded, always terminated buffer. */
struct out {
	char *p;
	size_t cap, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + 1 >= o->cap)
		return;
	if (n > o->cap - 1 - o->len)
		n = o->cap - 1 - o->len;
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* s[0..n) as a shell would need it to read back as one word: 'quoted' when it holds anything else. */
static void put_word(struct out *o, const char *s, size_t n)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-";
	size_t i;

	if (n && strspn(s, plain) >= n) {
		put(o, s, n);
		return;
	}
	puts_(o, "'");
	for (i = 0; i < n; i++) {
		if (s[i] == '\'')
			puts_(o, "'\\''");
		else
			put(o, s + i, 1);
	}
	puts_(o, "'");
}

/* A NAME=VALUE argument whose NAME looks like a secret's: where VALUE starts, else NULL. */
static const char *secret_value(const char *arg)
{
	const char *eq = strchr(arg, '=');

	return eq && eq > arg && vt_redact_name_is_secret(arg, (size_t)(eq - arg)) ? eq + 1 : NULL;
}

/* arg with the password of a URL's user:password@ hidden; returns 1 when one was. */
static size_t put_url_safe(struct out *o, const char *arg)
{
	const char *scheme = strstr(arg, "://"), *host, *end, *at = NULL, *colon, *p;

	if (!scheme) {
		put_word(o, arg, strlen(arg));
		return 0;
	}
	host = scheme + 3;
	end = host + strcspn(host, "/?#");
	for (p = host; p < end; p++)
		if (*p == '@')
			at = p;
	colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
	if (!colon || colon + 1 == at) {
		put_word(o, arg, strlen(arg));
		return 0;
	}
	put_word(o, arg, (size_t)(colon + 1 - arg));
	puts_(o, HIDDEN);
	put_word(o, at, strlen(at));
	return 1;
}

/*
 * A single-dash flag that starts with a fragment and goes on (-passwordX,
 * Java's and Go's spelling of a value joined to its flag): where the value
 * starts, else NULL.  "-password" alone is a flag whose value follows.
 */
static const char *joined_value(const char *arg)
{
	char norm[NAME_MAX_LEN + 1];
	size_t n, end, i, kept = 0;

	if (arg[0] != '-' || arg[1] == '-' || !arg[1] || strchr(arg, '='))
		return NULL;
	n = normalize(arg + 1, strlen(arg + 1), norm);
	if (find_word(norm, &end) != norm || end >= n)
		return NULL;
	/* end counts normalized characters: walk arg to the same place */
	for (i = 1; arg[i] && kept < end; i++)
		kept += arg[i] != '-' && arg[i] != '_' && arg[i] != '.';
	return arg + i;
}

/* One argument; *hide_next is set when it is a bare flag whose value follows. */
static size_t put_arg(struct out *o, const char *arg, bool *hide_next)
{
	const char *value = secret_value(arg);

	*hide_next = false;
	if (!value)
		value = joined_value(arg);
	if (value) {
		put_word(o, arg, (size_t)(value - arg));
		puts_(o, HIDDEN);
		return 1;
	}
	if (arg[0] == '-' && arg[1] && !strchr(arg, '=') && vt_redact_name_is_secret(arg, strlen(arg)))
		*hide_next = true;
	return put_url_safe(o, arg);
}

size_t vt_redact_argv(const char *prefix, char *const *argv, bool all_args, char *out, size_t cap)
{
	struct out o = { out, cap, 0 };
	bool hide = false;
	size_t n = 0, i;
	char count[64];

	if (cap)
		out[0] = '\0';
	puts_(&o, prefix ? prefix : "");
	if (!argv || !argv[0])
		return 0;
	if (o.len)
		puts_(&o, " ");
	put_word(&o, argv[0], strlen(argv[0]));
	if (all_args) {
		for (i = 1; argv[i]; i++)
			n++;
		if (n) {
			snprintf(count, sizeof(count), " " HIDDEN " (%zu argument%s not recorded)", n, n == 1 ? "" : "s");
			puts_(&o, count);
		}
		return n;
	}
	for (i = 1; argv[i]; i++) {
		puts_(&o, " ");
		if (hide && argv[i][0] != '-') {
			puts_(&o, HIDDEN);
			hide = false;
			n++;
			continue;
		}
		n += put_arg(&o, argv[i], &hide);
	}
	return n;
}

size_t vt_redact_env_text(const char *text, char *out, size_t cap)
{
	struct out o = { out, cap, 0 };
	char word[512];
	bool hide_unused;
	size_t n = 0, len;

	if (cap)
		out[0] = '\0';
	while (text && *text) {
		len = strcspn(text, " ");
		snprintf(word, sizeof(word), "%.*s", (int)len, text);
		n += put_arg(&o, word, &hide_unused);
		text += len;
		if (*text) {
			puts_(&o, " ");
			text++;
		}
	}
	return n;
}

/* The names text hides, appended to o after the n already there; returns the new count. */
static size_t names_of(struct out *o, const char *text, size_t n)
{
	const char *p, *start, *stop;
	size_t hl = strlen(HIDDEN);

	for (p = text ? strstr(text, HIDDEN) : NULL; p; p = strstr(p + hl, HIDDEN)) {
		if (!strncmp(p + hl, " (", 2))
			continue;                        /* --redact-args: "… (3 arguments not recorded)" */
		stop = p;
		if (stop > text && stop[-1] == ' ') {   /* --flag …: the flag before */
			stop--;
		} else if (stop > text && stop[-1] == ':') {   /* a URL's user:…@ */
			put(o, n ? ", " : "", n ? 2 : 0);
			puts_(o, "a URL's password");
			n++;
			continue;
		}
		if (stop > text && stop[-1] == '=')
			stop--;                          /* NAME=… */
		for (start = stop; start > text && start[-1] != ' '; start--)
			;
		if (start == stop)
			continue;
		put(o, n ? ", " : "", n ? 2 : 0);
		put(o, start, (size_t)(stop - start));
		n++;
	}
	return n;
}

size_t vt_redact_names(const char *const *texts, size_t ntexts, char *out, size_t cap)
{
	struct out o = { out, cap, 0 };
	size_t i, n = 0;

	if (cap)
		out[0] = '\0';
	for (i = 0; i < ntexts; i++)
		n = names_of(&o, texts[i], n);
	return n;
}
