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
			     "@h/ https://host/path?a=b ftp://anon@h/",
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
	CHECK(!vt_redact_name_is_secret("--pass", 6));
	/* only the first len bytes count */
	CHECK(!vt_redact_name_is_secret("--tokenizer", 4));
}

VT_TEST_MAIN(test_redact__flag_equals_value, test_redact__flag_then_value, test_redact__assignments_and_urls,
	     test_redact__nothing_to_hide_is_unchanged, test_redact__all_args, test_redact__env_text,
	     test_redact__names)
