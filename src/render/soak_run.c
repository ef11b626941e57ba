/*
 * soak_run.c — the words for how a soak ended (see render/soak.h).
 */
#include "render/soak.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

const char *vt_soak_end_words(const struct vt_soak_result *res, char *buf, size_t cap)
{
	switch (res->end) {
	case VT_SOAK_END_FOR:
		snprintf(buf, cap, "--for reached");
		break;
	case VT_SOAK_END_STOPPED:
		snprintf(buf, cap, "stopped on request");
		break;
	case VT_SOAK_END_TARGET_EXITED:
		if (res->child_status >= 0 && WIFEXITED(res->child_status))
			snprintf(buf, cap, "the target exited with status %d", WEXITSTATUS(res->child_status));
		else if (res->child_status >= 0 && WIFSIGNALED(res->child_status))
			snprintf(buf, cap, "the target was killed by signal %d (%s)", WTERMSIG(res->child_status),
				 strsignal(WTERMSIG(res->child_status)));
		else
			snprintf(buf, cap, "the target exited");
		break;
	case VT_SOAK_END_GONE:
		snprintf(buf, cap, "the target exited and did not come back");
		break;
	case VT_SOAK_END_ERROR:
	default:
		snprintf(buf, cap, "stopped by an error");
		break;
	}
	return buf;
}
