/*
 * test_prom.c — the exposition writer (render/prom.h): both formats,
 * escaping, counters' suffix, unknown values left out, Accept negotiation.
 */
#include "harness.h"

#include "base/error.h"
#include "render/prom.h"

#include <math.h>

static char *written(const struct vt_prom *p, enum vt_prom_format f)
{
	struct vt_buf b = VT_BUF_INIT(1u << 20);

	if (vt_prom_write(p, f, &b) != VT_OK || !b.data) {
		vt_buf_release(&b);
		return strdup("(write failed)");
	}
	return b.data;
}

static struct vt_prom *two_families(void)
{
	struct vt_prom *p = vt_prom_new();

	CHECK(vt_prom_family(p, "process_cpu_seconds", VT_PROM_COUNTER, "seconds", "CPU time, by mode.") == VT_OK);
	CHECK(vt_prom_family(p, "process_resident_memory_bytes", VT_PROM_GAUGE, "bytes", "Resident set.") == VT_OK);
	/* samples of one family added apart still come out together */
	CHECK(vt_prom_addl(p, "process_cpu_seconds", 1.5, "target", "redis", "mode", "user", NULL) == VT_OK);
	CHECK(vt_prom_addl(p, "process_resident_memory_bytes", 1048576, "target", "redis", NULL) == VT_OK);
	CHECK(vt_prom_addl(p, "process_cpu_seconds", 0.25, "target", "redis", "mode", "system", NULL) == VT_OK);
	return p;
}

static void test_prom__text_format(void)
{
	struct vt_prom *p = two_families();
	char *t = written(p, VT_PROM_TEXT);

	CHECK_STR(t, "# HELP process_cpu_seconds_total CPU time, by mode.\n"
		     "# TYPE process_cpu_seconds_total counter\n"
		     "process_cpu_seconds_total{target=\"redis\",mode=\"user\"} 1.5\n"
		     "process_cpu_seconds_total{target=\"redis\",mode=\"system\"} 0.25\n"
		     "# HELP process_resident_memory_bytes Resident set.\n"
		     "# TYPE process_resident_memory_bytes gauge\n"
		     "process_resident_memory_bytes{target=\"redis\"} 1048576\n");
	CHECK_EQ_U64(vt_prom_nfamilies(p), 2);
	CHECK_EQ_U64(vt_prom_nsamples(p), 3);
	free(t);
	vt_prom_free(p);
}

static void test_prom__openmetrics_format(void)
{
	struct vt_prom *p = two_families();
	char *t = written(p, VT_PROM_OPENMETRICS);

	CHECK_STR(t, "# HELP process_cpu_seconds CPU time, by mode.\n"
		     "# TYPE process_cpu_seconds counter\n"
		     "# UNIT process_cpu_seconds seconds\n"
		     "process_cpu_seconds_total{target=\"redis\",mode=\"user\"} 1.5\n"
		     "process_cpu_seconds_total{target=\"redis\",mode=\"system\"} 0.25\n"
		     "# HELP process_resident_memory_bytes Resident set.\n"
		     "# TYPE process_resident_memory_bytes gauge\n"
		     "# UNIT process_resident_memory_bytes bytes\n"
		     "process_resident_memory_bytes{target=\"redis\"} 1048576\n"
		     "# EOF\n");
	free(t);
	vt_prom_free(p);
}

/* A process name is any bytes: quotes, backslashes, newlines and bytes that are not UTF-8. */
static void test_prom__label_values_escaped_and_utf8(void)
{
	struct vt_prom *p = vt_prom_new();
	char *t;

	CHECK(vt_prom_family(p, "vitals_target_up", VT_PROM_GAUGE, NULL, "say \"why\"\\\nnext") == VT_OK);
	CHECK(vt_prom_addl(p, "vitals_target_up", 1, "target", "a\"b\\c\nd\xff\xc3\xa9\xe2\x82", NULL) == VT_OK);
	t = written(p, VT_PROM_TEXT);
	CHECK_STR(t, "# HELP vitals_target_up say \"why\"\\\\\\nnext\n"
		     "# TYPE vitals_target_up gauge\n"
		     "vitals_target_up{target=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\"} 1\n");
	free(t);
	t = written(p, VT_PROM_OPENMETRICS);
	CHECK(strstr(t, "# HELP vitals_target_up say \\\"why\\\"\\\\\\nnext\n") != NULL);
	free(t);
	vt_prom_free(p);
}

static void test_prom__unknown_left_out_and_values(void)
{
	struct vt_prom *p = vt_prom_new();
	char *t;

	CHECK(vt_prom_family(p, "a", VT_PROM_GAUGE, NULL, NULL) == VT_OK);
	CHECK(vt_prom_family(p, "never", VT_PROM_GAUGE, NULL, "no sample: left out") == VT_OK);
	CHECK(vt_prom_addl(p, "a", NAN, "k", "nan", NULL) == VT_OK);
	CHECK(vt_prom_addl(p, "a", INFINITY, "k", "inf", NULL) == VT_OK);
	CHECK(vt_prom_addl(p, "a", 0.1, "k", "tenth", NULL) == VT_OK);
	CHECK(vt_prom_addl(p, "a", 0.1 + 0.2, "k", "sum", NULL) == VT_OK);
	CHECK(vt_prom_addl(p, "a", 1.0 / 3, "k", "third", NULL) == VT_OK);
	CHECK(vt_prom_addl(p, "a", 18446744073709551616.0, "k", "big", NULL) == VT_OK);
	CHECK(vt_prom_addl(p, "a", -3, NULL) == VT_OK);
	t = written(p, VT_PROM_TEXT);
	/* the fewest digits that read back as the same double */
	CHECK_STR(t, "# TYPE a gauge\n"
		     "a{k=\"inf\"} +Inf\n"
		     "a{k=\"tenth\"} 0.1\n"
		     "a{k=\"sum\"} 0.30000000000000004\n"
		     "a{k=\"third\"} 0.3333333333333333\n"
		     "a{k=\"big\"} 1.8446744073709552e+19\n"
		     "a -3\n");
	CHECK_EQ_U64(vt_prom_nsamples(p), 6);
	free(t);
	vt_prom_free(p);
}

static void test_prom__bad_names_refused(void)
{
	struct vt_prom *p = vt_prom_new();

	CHECK(vt_prom_family(p, "9lives", VT_PROM_GAUGE, NULL, NULL) == VT_E_USAGE);
	CHECK(vt_prom_family(p, "a-b", VT_PROM_GAUGE, NULL, NULL) == VT_E_USAGE);
	CHECK(vt_prom_family(p, "x_total", VT_PROM_COUNTER, NULL, NULL) == VT_E_USAGE);
	CHECK(vt_prom_family(p, "x_seconds", VT_PROM_GAUGE, "bytes", NULL) == VT_E_USAGE);
	CHECK(vt_prom_family(p, "x_bytes", VT_PROM_GAUGE, "bytes", NULL) == VT_OK);
	CHECK(vt_prom_family(p, "x_bytes", VT_PROM_GAUGE, "bytes", NULL) == VT_OK);
	CHECK(vt_prom_family(p, "x_bytes", VT_PROM_COUNTER, "bytes", NULL) == VT_E_USAGE);
	CHECK(vt_prom_addl(p, "undeclared", 1, NULL) == VT_E_USAGE);
	CHECK(vt_prom_addl(p, "x_bytes", 1, "__name__", "x", NULL) == VT_E_USAGE);
	CHECK(vt_prom_addl(p, "x_bytes", 1, "a b", "x", NULL) == VT_E_USAGE);
	CHECK(vt_prom_addl(p, "x_bytes", 1, "k", "1", "k", "2", NULL) == VT_E_USAGE);
	CHECK_EQ_U64(vt_prom_nsamples(p), 0);
	vt_prom_free(p);
}

static void test_prom__negotiate(void)
{
	/* what Prometheus 2.42 sends when it may scrape OpenMetrics */
	CHECK(vt_prom_negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
				"version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1") ==
	      VT_PROM_OPENMETRICS);
	/* ... and when it may not */
	CHECK(vt_prom_negotiate("text/plain;version=0.0.4;q=1,*/*;q=0.1") == VT_PROM_TEXT);
	CHECK(vt_prom_negotiate(NULL) == VT_PROM_TEXT);
	CHECK(vt_prom_negotiate("*/*") == VT_PROM_TEXT);
	CHECK(vt_prom_negotiate("text/plain, application/openmetrics-text; q=0.5") == VT_PROM_TEXT);
	CHECK(vt_prom_negotiate("Application/OpenMetrics-Text; version=1.0.0") == VT_PROM_OPENMETRICS);
	CHECK(vt_prom_negotiate("application/openmetrics-text;q=0") == VT_PROM_TEXT);
	CHECK(vt_prom_negotiate("application/openmetrics-textx") == VT_PROM_TEXT);
	CHECK(strstr(vt_prom_content_type(VT_PROM_TEXT), "version=0.0.4") != NULL);
}

VT_TEST_MAIN(test_prom__text_format, test_prom__openmetrics_format, test_prom__label_values_escaped_and_utf8,
	     test_prom__unknown_left_out_and_values, test_prom__bad_names_refused, test_prom__negotiate)
