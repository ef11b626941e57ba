/*
 * test_target_name.c — which processes a name is (sample/target.h), the one
 * resolver behind --name in soak, snap, threads and serve, on a made-up
 * /proc tree: a parent and its same-named workers are one tree, unrelated
 * processes are trees of their own (oldest first), kernel threads and
 * zombies are left out with the reason, and a name that is several
 * processes is refused for a command that reads one, also by the soak's
 * follower (soak/follow.h), which after a restart takes the oldest tree's
 * root and says how big its tree is.
 */
#include "harness.h"

#include "sample/target.h"
#include "soak/follow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/vt-test-name.XXXXXX";

/* PID/stat (fields 1-39: state, ppid, flags, start time, rss) and PID/cmdline. */
static void proc(int pid, const char *comm, char state, int ppid, unsigned long flags, unsigned long start,
		 unsigned long rss_pages, const char *argv0)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", root, pid);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/%d/stat", root, pid);
	CHECK((f = fopen(path, "w")) != NULL);
	fprintf(f, "%d (%s) %c %d %d %d 0 -1 %lu 0 0 0 0 1 1 0 0 20 0 1 0 %lu 1000000 %lu "
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0\n", pid, comm, state, ppid, pid, pid,
		flags, start, rss_pages);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%d/cmdline", root, pid);
	CHECK((f = fopen(path, "w")) != NULL);
	fwrite(argv0, 1, strlen(argv0) + 1, f);
	fputs("--flag", f);
	fputc('\0', f);
	fclose(f);
}

static struct vt_procfs pfs;

static void make_tree(void)
{
	CHECK(mkdtemp(root) != NULL);
	/* a service: parent 100 and its workers 101, 102, and 103 under 102 */
	proc(100, "svc", 'S', 1, 0, 1000, 256, "svc: master process");
	proc(101, "svc", 'S', 100, 0, 1010, 1024, "svc: worker process");
	proc(102, "svc", 'S', 100, 0, 1010, 2048, "svc: worker process");
	proc(103, "svc", 'S', 102, 0, 1020, 512, "svc: helper");
	proc(110, "other", 'S', 100, 0, 1010, 100, "/bin/other");
	/* unrelated: 201 is older than 200; 202 is a child of a process of another name */
	proc(200, "twin", 'S', 1, 0, 3000, 10, "/usr/bin/twin");
	proc(201, "twin", 'S', 1, 0, 2000, 10, "/usr/bin/twin");
	proc(210, "sh", 'S', 200, 0, 3100, 10, "/bin/sh");
	proc(202, "twin", 'S', 210, 0, 3200, 10, "/usr/bin/twin");
	/* named by argv[0]'s base name, not comm */
	proc(300, "python3", 'S', 1, 0, 4000, 10, "/opt/app/worker.py");
	/* left out: a kernel thread and a zombie */
	proc(400, "kt", 'I', 2, 0x200000, 10, 0, "");
	proc(401, "zed", 'Z', 1, 0, 10, 0, "");
	CHECK_EQ_I64(vt_procfs_open(&pfs, root, NULL, NULL), VT_OK);
}

static void test_target_name__parent_and_workers_are_one_tree(void)
{
	struct vt_name_set set;
	struct vt_err err;
	char role[32];
	pid_t pid = -1;

	CHECK_EQ_I64(vt_target_name_find(&pfs, "svc", 0, 0, 0, &set, NULL), VT_OK);
	CHECK_EQ_U64(set.n, 4);
	CHECK_EQ_U64(set.trees, 1);
	CHECK_EQ_I64(set.procs[0].pid, 100);
	CHECK_EQ_I64(set.procs[1].pid, 101);
	CHECK_EQ_I64(set.procs[3].pid, 103);
	CHECK_EQ_I64(set.procs[3].root, 100);           /* a grandchild is in the same tree */
	CHECK_EQ_U64(set.procs[0].children, 2);
	CHECK_EQ_U64(set.procs[2].rss_bytes, 2048 * (uint64_t)pfs.page_size);
	CHECK_STR(set.procs[1].cmdline, "svc: worker process --flag");
	CHECK_STR(vt_name_proc_role(&set.procs[0], role, sizeof(role)), "parent");
	CHECK_STR(vt_name_proc_role(&set.procs[3], role, sizeof(role)), "child of 102");
	/* a command that reads one process: refused, the parent not taken silently */
	CHECK_EQ_I64(vt_target_name_one(&set, "svc", &pid, &err), VT_E_USAGE);
	CHECK_EQ_I64(pid, 0);
	CHECK(strstr(err.msg, "'svc' is 4 processes, a parent and its same-named children") != NULL);
	CHECK(strstr(err.msg, "100 (parent), 101 (child of 100)") != NULL);
	vt_name_set_release(&set);
	/* excluded (vitals itself) and started too early (before a restart) */
	CHECK_EQ_I64(vt_target_name_find(&pfs, "svc", 100, 1005, 0, &set, NULL), VT_OK);
	CHECK_EQ_U64(set.n, 3);
	CHECK_EQ_U64(set.trees, 2);                     /* 101 and 102 lost their matching parent */
	vt_name_set_release(&set);
	CHECK_EQ_I64(vt_target_name_find(&pfs, "svc", 0, 0, 2, &set, NULL), VT_OK);
	CHECK_EQ_U64(set.n, 2);                         /* max */
	vt_name_set_release(&set);
}

static void test_target_name__unrelated_trees_oldest_first(void)
{
	struct vt_name_set set;
	struct vt_err err;
	pid_t pid;

	CHECK_EQ_I64(vt_target_name_find(&pfs, "twin", 0, 0, 0, &set, NULL), VT_OK);
	CHECK_EQ_U64(set.n, 3);
	CHECK_EQ_U64(set.trees, 3);                     /* 202's parent is "sh": a tree of its own */
	CHECK_EQ_I64(set.procs[0].pid, 201);
	CHECK_EQ_I64(vt_target_name_one(&set, "twin", &pid, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "3 processes, 3 of them unrelated") != NULL);
	vt_name_set_release(&set);
}

static void test_target_name__one_none_and_left_out(void)
{
	struct vt_name_set set;
	pid_t pid;

	CHECK_EQ_I64(vt_target_name_find(&pfs, "worker.py", 0, 0, 0, &set, NULL), VT_OK);
	CHECK_EQ_U64(set.n, 1);
	CHECK_EQ_I64(vt_target_name_one(&set, "worker.py", &pid, NULL), VT_OK);
	CHECK_EQ_I64(pid, 300);
	vt_name_set_release(&set);
	CHECK_EQ_I64(vt_target_name_find(&pfs, "nothing", 0, 0, 0, &set, NULL), VT_OK);
	CHECK_EQ_I64(vt_target_name_one(&set, "nothing", &pid, NULL), VT_OK);
	CHECK_EQ_I64(pid, 0);
	CHECK(set.skipped == NULL);
	vt_name_set_release(&set);
	CHECK_EQ_I64(vt_target_name_find(&pfs, "kt", 0, 0, 0, &set, NULL), VT_OK);
	CHECK_EQ_U64(set.n, 0);
	CHECK_STR(set.skipped, "kernel_thread");
	vt_name_set_release(&set);
	CHECK_EQ_I64(vt_target_name_find(&pfs, "zed", 0, 0, 0, &set, NULL), VT_OK);
	CHECK_EQ_U64(set.n, 0);
	CHECK_STR(set.skipped, "zombie");
	vt_name_set_release(&set);
}

static void test_target_name__soak_follower_agrees(void)
{
	struct vt_follow_key key = { .name = "svc" };
	struct vt_err err;
	size_t tree_n;
	pid_t pid;

	/* the start of a soak: refused as every command refuses it */
	CHECK_EQ_I64(vt_follow_find(&pfs, &key, true, &pid, &tree_n, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "a parent and its same-named children") != NULL);
	/* a restart: the oldest tree's root, and how many processes its tree holds */
	CHECK_EQ_I64(vt_follow_find(&pfs, &key, false, &pid, &tree_n, &err), VT_OK);
	CHECK_EQ_I64(pid, 100);
	CHECK_EQ_U64(tree_n, 4);
	key.name = "twin";
	CHECK_EQ_I64(vt_follow_find(&pfs, &key, false, &pid, &tree_n, &err), VT_OK);
	CHECK_EQ_I64(pid, 201);
	CHECK_EQ_U64(tree_n, 1);
	key.name = "worker.py";
	CHECK_EQ_I64(vt_follow_find(&pfs, &key, true, &pid, &tree_n, &err), VT_OK);
	CHECK_EQ_I64(pid, 300);
}

static void test_target_name__cleanup(void)
{
	char cmd[300];

	vt_procfs_close(&pfs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	CHECK(system(cmd) == 0);
}

static void test_target_name__setup(void)
{
	make_tree();
}

VT_TEST_MAIN(test_target_name__setup, test_target_name__parent_and_workers_are_one_tree,
	     test_target_name__unrelated_trees_oldest_first, test_target_name__one_none_and_left_out,
	     test_target_name__soak_follower_agrees, test_target_name__cleanup)
