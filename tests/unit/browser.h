/*
 * browser.h — open an HTML page in headless chromium and read back the DOM
 * it ended with (--dump-dom), for unit tests that check what a page drew or
 * how it laid out, not only what it says.
 *
 *   const char *browser = vt_test_browser();      NULL: skip (none installed, VT_NO_BROWSER)
 *   char *dom = vt_test_dump_dom(browser, dir, "file:///tmp/x/page.html#q=a", 1280);
 *   CHECK(dom && strstr(dom, "data-frames=\"") ...);  free(dom);
 *
 * dir is a scratch directory of the caller's: chromium's profile goes there.
 */
#ifndef VT_TEST_BROWSER_H
#define VT_TEST_BROWSER_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* system(), our output first (the commands print too). */
static inline int vt_test_system(const char *cmd)
{
	fflush(stdout);
	return system(cmd);
}

static inline bool vt_test_on_path(const char *prog)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return vt_test_system(cmd) == 0;
}

static inline const char *vt_test_browser(void)
{
	if (getenv("VT_NO_BROWSER"))
		return NULL;
	return vt_test_on_path("chromium") ? "chromium" :
	       vt_test_on_path("chromium-browser") ? "chromium-browser" : NULL;
}

/* The end of a scratch directory: kept with VT_KEEP set (path printed), else removed; system()'s status. */
static inline int vt_test_scratch_end(const char *dir, const char *path)
{
	char cmd[256];

	if (getenv("VT_KEEP")) {
		printf("# kept %s\n", path);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return vt_test_system(cmd);
}

/* The DOM after scripts ran (2 s of virtual time), NUL-terminated and owned by the caller; NULL on failure. */
static inline char *vt_test_dump_dom(const char *browser, const char *dir, const char *url, int width)
{
	char cmd[1024], chunk[4096], *dom = NULL, *grown;
	size_t cap = 0, len = 0, n;
	FILE *pipe;

	snprintf(cmd, sizeof(cmd),
		 "HOME=%s timeout 90 %s --headless --no-sandbox --disable-gpu "
		 "--no-first-run --disable-extensions --disable-background-networking "
		 "--disable-component-update --disable-sync --disable-quic --user-data-dir=%s/chromium "
		 "--window-size=%d,900 --virtual-time-budget=2000 --dump-dom '%s' 2>/dev/null",
		 dir, browser, dir, width, url);
	fflush(stdout);
	pipe = popen(cmd, "r");
	if (!pipe)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			grown = realloc(dom, cap);
			if (!grown)
				break;
			dom = grown;
		}
		memcpy(dom + len, chunk, n);
		len += n;
		dom[len] = '\0';
	}
	pclose(pipe);
	return dom;
}

#endif
