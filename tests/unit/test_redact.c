/*
 * test_redact.c — what of a command line a recording keeps: values of
 * arguments that look like secrets become "…" (--flag=value, --flag value,
 * NAME=VALUE, a URL's password), everything else is kept as it is, and
 * --redact-args keeps the command's name only.
 */
#include "harness.h"

#include "soak/redact.h"

#define H "\xe2\x80\xa6"

static void check_argv(char *const *argv, bool all, const char *want, size_t want_n)
{
	char out[512];
	size_t n = vt_redact_argv("--", argv, all, out, sizeof(out));

	CHECK_STR(out, want);
	CHECK_EQ_U64(n, want_n);
}

static void test_redact__flag_equals_value(void)
{
	char *const a[] = { "./srv", "--password=hunter2", "--DB_PASSWD=x", "-Djavax.net.ssl.keyStorePassword=p",
			    "--Api-Token=t", "--client-secret=s", "--auth=a", "--credentials=c", "--port=8080", NULL };

	check_argv(a, false, "-- ./srv --password=" H " --DB_PASSWD=" H " -Djavax.net.ssl.keyStorePassword=" H
			     " --Api-Token=" H " --client-secret=" H " --auth=" H " --credentials=" H " --port=8080",
		   7);
}

static void test_redact__flag_then_value(void)
{
	char *const a[] = { "./srv", "--password", "hunter2", "--token", "abc", "--verbose", NULL };
	/* a flag of such a name followed by another flag is a switch: nothing to hide */
	char *const b[] = { "./srv", "--no-auth", "--port", "80", "--key", NULL };
	/* a short flag cannot be told from a port: kept */
	char *const c[] = { "mysql", "-u", "root", "-p", "hunter2", NULL };

	check_argv(a, false, "-- ./srv --password " H " --token " H " --verbose", 2);
	check_argv(b, false, "-- ./srv --no-auth --port 80 --key", 0);
	check_argv(c, false, "-- mysql -u root -p hunter2", 0);
}

static void test_redact__assignments_and_urls(void)
{
	char *const a[] = { "env", "API_KEY=zz", "HOME=/root", "psql", "postgres://app:s3cret@db:5432/x",
			    "--url=https://u:p@h/", "https://host/path?a=b", "ftp://anon@h/", NULL };

	check_argv(a, false, "-- env API_KEY=" H " HOME=/root psql postgres://app:" H "@db:5432/x --url=https://u:" H
			     "@h/ 'https://host/path?a=b' ftp://anon@h/",
		   3);
}

static void test_redact__nothing_to_hide_is_unchanged(void)
{
	char *const a[] = { "sleep", "30", NULL };
	char *const none[] = { NULL };
	char out[16];

	check_argv(a, false, "-- sleep 30", 0);
	check_argv(none, false, "--", 0);
	/* cut to the buffer, always terminated */
	CHECK_EQ_U64(vt_redact_argv("--", a, false, out, 6), 0);
	CHECK_STR(out, "-- sl");
}

static void test_redact__all_args(void)
{
	char *const a[] = { "./srv", "--port", "80", "--password=x", NULL };
	char *const b[] = { "./srv", "x", NULL };
	char *const c[] = { "./srv", NULL };

	check_argv(a, true, "-- ./srv " H " (3 arguments not recorded)", 3);
	check_argv(b, true, "-- ./srv " H " (1 argument not recorded)", 1);
	check_argv(c, true, "-- ./srv", 0);
}

static void test_redact__env_text(void)
{
	char out[256];

	CHECK_EQ_U64(vt_redact_env_text("MALLOC_ARENA_MAX=2 DB_PASSWORD=x LD_PRELOAD=/lib/je.so", out, sizeof(out)), 1);
	CHECK_STR(out, "MALLOC_ARENA_MAX=2 DB_PASSWORD=" H " LD_PRELOAD=/lib/je.so");
	CHECK_EQ_U64(vt_redact_env_text("", out, sizeof(out)), 0);
	CHECK_STR(out, "");
	CHECK_EQ_U64(vt_redact_env_text(NULL, out, sizeof(out)), 0);
	CHECK_STR(out, "");
}

static void test_redact__names(void)
{
	CHECK(vt_redact_name_is_secret("--PassWord", 10));
	CHECK(vt_redact_name_is_secret("AWS_SECRET_ACCESS_KEY", 21));
	CHECK(!vt_redact_name_is_secret("--port", 6));
	CHECK(vt_redact_name_is_secret("--pass", 6));
	/* words that hold a fragment and name no secret */
	CHECK(!vt_redact_name_is_secret("--passive", 9));
	CHECK(!vt_redact_name_is_secret("--bypass-cache", 14));
	CHECK(!vt_redact_name_is_secret("--author", 8));
	/* only the first len bytes count */
	CHECK(!vt_redact_name_is_secret("--tokenizer", 4));
}

/*
 * Every spelling the issue found stored beneath "arguments that look like
 * secrets were redacted" (issue 23): redis's own flags, pass/pwd names,
 * a value joined to a single-dash flag, environment-style assignments.
 */
static void test_redact__every_spelling(void)
{
	char *const a[] = { "redis-server", "--requirepass", "X1", "--masterauth", "X2", "--tls-key-file-pass",
			    "X3", "--pass", "X4", "--db-pass", "X5", "--pwd", "X6", "-passwordX7", "MYSQL_PWD=X8",
			    "PGPASSWORD=X9", "--session-cookie=X10", "--private-key", "X11", "--port", "6379", NULL };
	char out[512], names[256];
	size_t n = vt_redact_argv("--", a, false, out, sizeof(out));

	CHECK_STR(out, "-- redis-server --requirepass " H " --masterauth " H " --tls-key-file-pass " H
		       " --pass " H " --db-pass " H " --pwd " H " -password" H " MYSQL_PWD=" H " PGPASSWORD=" H
		       " --session-cookie=" H " --private-key " H " --port 6379");
	CHECK_EQ_U64(n, 11);
	CHECK(strstr(out, "X") == NULL);
	CHECK_EQ_U64(vt_redact_names((const char *const[]){ out }, 1, names, sizeof(names)), 11);
	CHECK_STR(names, "--requirepass, --masterauth, --tls-key-file-pass, --pass, --db-pass, --pwd, -password, "
			 "MYSQL_PWD, PGPASSWORD, --session-cookie, --private-key");
}

/* The command's quoting is kept: each argument reads back as one word. */
static void test_redact__quoting(void)
{
	char *const a[] = { "sh", "-c", "sleep 30; echo 'done'", "--token=a b", "", NULL };
	char out[256], names[64];

	vt_redact_argv("--", a, false, out, sizeof(out));
	CHECK_STR(out, "-- sh -c 'sleep 30; echo '\\''done'\\''' --token=" H " ''");
	CHECK_EQ_U64(vt_redact_names((const char *const[]){ "-- psql postgres://u:" H "@h/db" }, 1, names, sizeof(names)), 1);
	CHECK_STR(names, "a URL's password");
	/* a command and an environment, joined in order; a NULL text is nothing */
	CHECK_EQ_U64(vt_redact_names((const char *const[]){ "-- srv --token " H, NULL, "DB_PASSWORD=" H }, 3, names,
				     sizeof(names)), 2);
	CHECK_STR(names, "--token, DB_PASSWORD");
	CHECK_EQ_U64(vt_redact_names((const char *const[]){ "-- ./srv " H " (3 arguments not recorded)" }, 1, names, sizeof(names)), 0);
}

VT_TEST_MAIN(test_redact__every_spelling, test_redact__quoting, test_redact__flag_equals_value, test_redact__flag_then_value, test_redact__assignments_and_urls,
	     test_redact__nothing_to_hide_is_unchanged, test_redact__all_args, test_redact__env_text,
	     test_redact__names)
