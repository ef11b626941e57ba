/*
 * fuzz_store.c — reading a recording that may be damaged or hostile: the
 * bytes become a file that vt_store_load opens.  A recording is a file a
 * user may receive from someone else ("show the curves to a colleague"),
 * so a corrupt page, a foreign schema or absurd values in meta must end in
 * an error or a series, never a crash.  Every series loaded is also
 * analysed, so the analysis sees whatever the loader lets through.
 */
#include "analyze/soak.h"
#include "store/store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/vitals-fuzz-store-XXXXXX";
	struct vt_soak_opts opts;
	struct vt_soak_verdict v;
	struct vt_series s;
	struct vt_err err;
	int fd = mkstemp(path);
	FILE *f;

	if (fd < 0)
		return 0;
	f = fdopen(fd, "wb");
	if (!f) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
	vt_series_init(&s);
	if (vt_store_load(path, 200, &s, &err) == VT_OK) {
		vt_soak_opts_default(&opts);
		vt_soak_analyze(&s, &opts, &v);
		vt_series_free(&s);
	}
	unlink(path);
	return 0;
}
