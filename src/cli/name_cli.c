/*
 * name_cli.c — --name NAME refused or described (see name_cli.h).
 */
#include "cli/name_cli.h"

#include "cli/cli.h"
#include "sample/target.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NAME_LIST_MAX 16         /* rows in a refusal; the rest are counted */

/*
 * The pid to give as the example: of the children (a service's workers, where
 * its work is done) the largest by RSS, or the largest of all when none is a
 * child (unrelated processes).
 */
static const struct vt_name_proc *example(const struct vt_name_set *set)
{
	const struct vt_name_proc *best = NULL;
	size_t i;

	for (i = 0; i < set->n; i++) {
		const struct vt_name_proc *p = &set->procs[i];

		if (!best || (p->pid != p->root) > (best->pid != best->root) ||
		    ((p->pid != p->root) == (best->pid != best->root) && p->rss_bytes > best->rss_bytes))
			best = p;
	}
	return best;
}

static void refuse(const char *cmd, const char *name, const struct vt_name_set *set, const char *one_pid)
{
	char role[32], rss[32];
	size_t i, len = 0;

	if (set->trees == 1)
		fprintf(stderr, "vitals %s: --name %s is %zu processes, a parent and its %zu same-named "
			"children: give the pid you mean\n", cmd, name, set->n, set->n - 1);
	else
		fprintf(stderr, "vitals %s: --name %s is %zu processes, %zu of them unrelated: give the "
			"pid you mean\n", cmd, name, set->n, set->trees);
	fprintf(stderr, "  %8s %8s  %-16s %10s  %s\n", "PID", "PPID", "ROLE", "RSS", "COMMAND LINE");
	for (i = 0; i < set->n && i < NAME_LIST_MAX; i++) {
		const struct vt_name_proc *p = &set->procs[i];

		fprintf(stderr, "  %8d %8d  %-16s %10s  %s\n", (int)p->pid, (int)p->ppid,
			vt_name_proc_role(p, role, sizeof(role)), vt_fmt_size((double)p->rss_bytes, rss, sizeof(rss)),
			p->cmdline[0] ? p->cmdline : "?");
	}
	if (i < set->n)
		fprintf(stderr, "  and %zu more\n", set->n - i);
	fprintf(stderr, "  one of them:  %s %d   (%s; or another PID above)\n", one_pid, (int)example(set)->pid,
		set->trees < set->n ? "the child with the largest RSS" : "the largest RSS");
	fprintf(stderr, "  all of them:  vitals snap");
	for (i = 0; i < set->n && len < 200; i++)
		len += (size_t)fprintf(stderr, " %d", (int)set->procs[i].pid);
	fprintf(stderr, "%s   (side by side)\n", i < set->n ? " ..." : "");
	fprintf(stderr, "                vitals serve --name %s   (summed, for Prometheus)\n", name);
}

int vt_cli_name_pid(const struct vt_procfs *pfs, const char *cmd, const char *name, const char *one_pid,
		    bool none_is_error, pid_t *pid)
{
	struct vt_name_set set;
	struct vt_err err;
	int rc;

	*pid = 0;
	vt_err_clear(&err);
	rc = vt_target_name_find(pfs, name, getpid(), 0, 0, &set, &err);
	if (rc == VT_OK && (rc = vt_target_name_one(&set, name, pid, &err)) == VT_E_USAGE) {
		refuse(cmd, name, &set, one_pid);
		vt_name_set_release(&set);
		return vt_code_exit(VT_E_USAGE);
	}
	if (rc == VT_OK && *pid == 0 && none_is_error) {
		rc = vt_err_set(&err, VT_E_NOPROC, 0, "no process named '%s'%s", name,
			   !set.skipped ? "" : strcmp(set.skipped, "zombie") == 0 ? " (only a zombie)" :
			   " (only a kernel thread)");
		vt_err_hint(&err, "the name is the comm (15 bytes) or argv[0]'s base name; pgrep -a lists both");
	}
	vt_name_set_release(&set);
	return rc == VT_OK ? 0 : vt_cli_error(&err);
}

void vt_cli_name_describe(FILE *out, const struct vt_procfs *pfs, const char *cmd, const char *name)
{
	struct vt_name_set set;
	char role[32];
	size_t i;

	if (vt_target_name_find(pfs, name, getpid(), 0, 0, &set, NULL) != VT_OK || set.n == 0) {
		fprintf(out, "vitals %s: --name %s is no process yet\n", cmd, name);
	} else if (set.n == 1) {
		fprintf(out, "vitals %s: --name %s is process %d\n", cmd, name, (int)set.procs[0].pid);
	} else {
		fprintf(out, "vitals %s: --name %s is %zu processes, summed:", cmd, name, set.n);
		for (i = 0; i < set.n && i < NAME_LIST_MAX; i++)
			fprintf(out, "%s %d %s", i ? "," : "", (int)set.procs[i].pid,
				vt_name_proc_role(&set.procs[i], role, sizeof(role)));
		if (i < set.n)
			fprintf(out, ", and %zu more", set.n - i);
		fputc('\n', out);
	}
	vt_name_set_release(&set);
}
