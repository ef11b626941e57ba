/*
 * redact.h — what of a command line goes into a recording.
 *
 * ps shows a process's arguments to everyone on the host, and so does
 * `vitals snap`; a recording is a file that travels (to a colleague, into a
 * ticket) and keeps them for good.  So the values of arguments that look
 * like secrets are written as "…".  A name looks like a secret's when,
 * lower-cased and without its dashes, underscores and dots, it holds one of
 *
 *   pass (password, passwd, passphrase, requirepass, db-pass), pwd, secret,
 *   token, key, auth (masterauth), credential, cookie, session, private
 *
 * unless the fragment is part of passive, bypass, compass, passthrough,
 * author or monkey.  Every spelling of a value is hidden:
 *
 *   --password=VALUE, -Dssl.keyStorePassword=VALUE, MYSQL_PWD=VALUE
 *                               NAME=…
 *   --requirepass VALUE, -password VALUE
 *                               the flag, then … (a bare flag of such a
 *                               name, then an argument that does not start
 *                               with '-')
 *   -passwordVALUE              -password… (a single-dash flag that starts
 *                               with a fragment and goes on: Java, Go)
 *   postgres://user:pw@host/db  postgres://user:…@host/db (in any argument)
 *
 * A short flag (-p VALUE) cannot be told from a port or a path: it is kept
 * (a gap, said in the README).  Arguments are written as a shell would need
 * them to read back as one word ('quoted' when they hold a space or a shell
 * character).  With all_args (soak --redact-args) only the command's name
 * is kept.
 */
#ifndef VT_SOAK_REDACT_H
#define VT_SOAK_REDACT_H

#include <stdbool.h>
#include <stddef.h>

/* Does this flag or variable name (len bytes, dashes included or not) look like it holds a secret? */
bool vt_redact_name_is_secret(const char *name, size_t len);

/*
 * argv (NULL-terminated) joined with single spaces into out (cap bytes,
 * always terminated; cut when too long), after prefix.  Returns how many
 * values were replaced by "…", or with all_args how many arguments were
 * left out.
 */
size_t vt_redact_argv(const char *prefix, char *const *argv, bool all_args, char *out, size_t cap);

/* "KEY=VALUE KEY2=VALUE2" (an experiment arm's environment) the same way; returns the count. */
size_t vt_redact_env_text(const char *text, char *out, size_t cap);

/*
 * The names whose values the ntexts redacted texts hide (a command line, an
 * environment; NULL ones skipped), read back from their "…" marks
 * ("--requirepass, MYSQL_PWD, a URL's password"), into out (cap bytes,
 * always terminated); returns how many.  For reports of a recording, which
 * keeps only the redacted texts.
 */
size_t vt_redact_names(const char *const *texts, size_t ntexts, char *out, size_t cap);

#endif
