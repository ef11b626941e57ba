/*
 * harness.h — the unit-test harness: one program per tests/unit/test_*.c.
 *
 *   static void test_stat__comm_with_paren(void) { CHECK(...); CHECK_EQ_U64(a, b); }
 *   VT_TEST_MAIN(test_stat__comm_with_paren, test_stat__truncated)
 *
 * Prints TAP ("ok 1 - name") and, last, "# unit: N passed, M failed" which
 * tests/run adds up.  Fixtures are read relative to $VT_FIXTURES (default
 * tests/fixtures; tests run from the repository root).
 */
#ifndef VT_TEST_HARNESS_H
#define VT_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int vt_test_failed_checks;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
			vt_test_failed_checks++;                                     \
		}                                                                    \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                           \
	do {                                                                         \
		uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b);                   \
		if (va_ != vb_) {                                                    \
			printf("#   %s:%d: %s == %s: %" PRIu64 " != %" PRIu64 "\n",   \
			       __FILE__, __LINE__, #a, #b, va_, vb_);                \
			vt_test_failed_checks++;                                     \
		}                                                                    \
	} while (0)

#define CHECK_EQ_I64(a, b)                                                           \
	do {                                                                         \
		int64_t va_ = (int64_t)(a), vb_ = (int64_t)(b);                      \
		if (va_ != vb_) {                                                    \
			printf("#   %s:%d: %s == %s: %" PRId64 " != %" PRId64 "\n",   \
			       __FILE__, __LINE__, #a, #b, va_, vb_);                \
			vt_test_failed_checks++;                                     \
		}                                                                    \
	} while (0)

#define CHECK_STR(a, b)                                                              \
	do {                                                                         \
		const char *sa_ = (a), *sb_ = (b);                                   \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                         \
			printf("#   %s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__,    \
			       __LINE__, #a, #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); \
			vt_test_failed_checks++;                                     \
		}                                                                    \
	} while (0)

/* Read a fixture file into a malloc'd NUL-terminated buffer; aborts the test program if missing. */
static inline char *vt_fixture(const char *rel, size_t *len)
{
	const char *root = getenv("VT_FIXTURES");
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", root ? root : "tests/fixtures", rel);
	f = fopen(path, "rb");
	if (!f) {
		printf("Bail out! missing fixture %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		printf("Bail out! cannot read fixture %s\n", path);
		exit(2);
	}
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Path of a fixture directory (static buffer). */
static inline const char *vt_fixture_path(const char *rel)
{
	static char path[1024];
	const char *root = getenv("VT_FIXTURES");
	snprintf(path, sizeof(path), "%s/%s", root ? root : "tests/fixtures", rel);
	return path;
}

/* Set environment variable name to value; what it held before (malloc'd, NULL: unset) for vt_test_env_put_back. */
static inline char *vt_test_env_swap(const char *name, const char *value)
{
	char *old = getenv(name) ? strdup(getenv(name)) : NULL;

	setenv(name, value, 1);
	return old;
}

/* Put back what vt_test_env_swap saved of name, and free it. */
static inline void vt_test_env_put_back(const char *name, char *old)
{
	if (old)
		setenv(name, old, 1);
	else
		unsetenv(name);
	free(old);
}

typedef void (*vt_test_fn)(void);

/* TracerPid of process or thread pid, from /proc/PID/status: -1 when unreadable. */
static inline long vt_test_tracer_pid(int pid)
{
	char path[64], buf[4096], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "TracerPid:");
	return p ? strtol(p + 10, NULL, 10) : -1;
}

static inline int vt_test_run(const char *names, vt_test_fn *fns, int n)
{
	int passed = 0, failed = 0, i;
	char *copy = strdup(names), *save = NULL, *name;
	const char *only = getenv("VT_TEST_ONLY");   /* run only the tests whose name holds it */

	printf("1..%d\n", n);
	name = strtok_r(copy, ", \t\n", &save);
	for (i = 0; i < n; i++) {
		int before = vt_test_failed_checks;

		if (only && *only && name && !strstr(name, only)) {
			printf("ok %d - %s # SKIP not in VT_TEST_ONLY\n", i + 1, name);
			passed++;
			name = strtok_r(NULL, ", \t\n", &save);
			continue;
		}
		fns[i]();
		if (vt_test_failed_checks == before) {
			printf("ok %d - %s\n", i + 1, name ? name : "?");
			passed++;
		} else {
			printf("not ok %d - %s\n", i + 1, name ? name : "?");
			failed++;
		}
		name = strtok_r(NULL, ", \t\n", &save);
	}
	free(copy);
	printf("# unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#define VT_TEST_MAIN(...)                                                            \
	int main(void)                                                               \
	{                                                                            \
		vt_test_fn fns_[] = { __VA_ARGS__ };                                 \
		return vt_test_run(#__VA_ARGS__, fns_, (int)(sizeof(fns_) / sizeof(fns_[0]))); \
	}

#endif
