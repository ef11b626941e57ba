/*
 * redact.c — arguments that look like secrets, left out of recordings
 * (see redact.h).
 */
#include "soak/redact.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define HIDDEN "\xe2\x80\xa6"    /* "…" */

static const char *const secret_words[] = { "password", "passwd", "secret", "token", "key", "auth", "credential" };

bool vt_redact_name_is_secret(const char *name, size_t len)
{
	size_t i, w, wl;

	for (w = 0; w < sizeof(secret_words) / sizeof(secret_words[0]); w++) {
		wl = strlen(secret_words[w]);
		for (i = 0; i + wl <= len; i++)
			if (strncasecmp(name + i, secret_words[w], wl) == 0)
				return true;
	}
	return false;
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
		puts_(o, arg);
		return 0;
	}
	host = scheme + 3;
	end = host + strcspn(host, "/?#");
	for (p = host; p < end; p++)
		if (*p == '@')
			at = p;
	colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
	if (!colon || colon + 1 == at) {
		puts_(o, arg);
		return 0;
	}
	put(o, arg, (size_t)(colon + 1 - arg));
	puts_(o, HIDDEN);
	puts_(o, at);
	return 1;
}

/* One argument; *hide_next is set when it is a bare flag whose value follows. */
static size_t put_arg(struct out *o, const char *arg, bool *hide_next)
{
	const char *value = secret_value(arg);

	*hide_next = false;
	if (value) {
		put(o, arg, (size_t)(value - arg));
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
	puts_(&o, argv[0]);
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
