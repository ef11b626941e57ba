/*
 * redact.h — what of a command line goes into a recording.
 *
 * ps shows a process's arguments to everyone on the host, and so does
 * `vitals snap`; a recording is a file that travels (to a colleague, into a
 * ticket) and keeps them for good.  So the values of arguments that look
 * like secrets are written as "…":
 *
 *   --password=VALUE, -Dssl.keyStorePassword=VALUE, API_TOKEN=VALUE
 *                               NAME=… when NAME (dashes aside) holds one of
 *                               password, passwd, secret, token, key, auth,
 *                               credential, in any case
 *   --password VALUE            --password … (a bare flag of such a name, then
 *                               an argument that does not start with '-')
 *   postgres://user:pw@host/db  postgres://user:…@host/db (in any argument)
 *
 * A short flag (-p VALUE) cannot be told from a port or a path: it is kept.
 * With all_args (soak --redact-args) only the command's name is kept.
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

#endif
