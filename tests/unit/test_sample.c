/*
 * test_sample.c — a whole snapshot from recorded /proc + /sys trees, and its
 * JSON rendering: the path `vitals --proc-root ... snap PID` takes; the
 * maps memo of a soak's ticks on a live child; and the look at whether a
 * target exited.
 */
#include "harness.h"
#include "base/unknown.h"

#include "render/render.h"
#include "sample/sample.h"
#include "sample/target.h"

#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int take(const char *name, int pid, bool light, struct vt_sample *s, struct vt_err *err)
{
	struct vt_sample_opts opts = { .light = light };
	struct vt_procfs pfs;
	char proc[1100], sys[1100];
	int rc;

	snprintf(proc, sizeof(proc), "%s/proc", vt_fixture_path(name));
	snprintf(sys, sizeof(sys), "%s/sys", vt_fixture_path(name));
	CHECK_EQ_I64(vt_procfs_open(&pfs, proc, sys, err), VT_OK);
	rc = vt_sample_take(&pfs, pid, &opts, s, err);
	vt_procfs_close(&pfs);
	return rc;
}

static void test_sample__arena_sprawl_fixture(void)
{
	struct vt_sample s;
	struct vt_err err;

	CHECK_EQ_I64(take("proc/arena_default", 9277, false, &s, &err), VT_OK);
	CHECK_STR(s.comm, "arena_churn");
	CHECK_EQ_I64(s.num_threads, 9);
	CHECK_EQ_I64(s.threads.total, 9);
	CHECK(s.uptime_s > 5 && s.uptime_s < 30);
	CHECK_EQ_U64(s.committed, s.status.rss_anon + s.status.vm_swap);
	CHECK_EQ_I64(s.arenas.heaps, 8);
	CHECK_EQ_I64(s.arenas.arenas, -1);        /* a recorded tree has no memory to read */
	CHECK(!s.memory_read);
	CHECK(s.cap.source == VT_CAP_DEFAULT);
	CHECK_EQ_I64(s.ncpus, 2);
	CHECK_EQ_U64(s.cap.value, 16);
	CHECK(s.alloc.kind == VT_ALLOC_GLIBC);
	CHECK_EQ_I64(s.cgroup.version, 1);
	CHECK(vt_known(s.cgroup.usage));
	CHECK(!vt_sample_partial(&s));
	CHECK(s.cmdline && strstr(s.cmdline, "arena_churn --seconds 30"));
	vt_sample_release(&s);
}

static void test_sample__capped_fixture_light(void)
{
	struct vt_sample s;
	struct vt_err err;
	size_t i;

	CHECK_EQ_I64(take("proc/arena_max2", 9278, true, &s, &err), VT_OK);
	CHECK(s.light);
	CHECK_EQ_I64(s.arenas.heaps, 1);
	CHECK(s.cap.source == VT_CAP_ENV);
	CHECK_EQ_U64(s.cap.value, 2);
	CHECK(!vt_known(s.arenas.rss_bytes));     /* maps only: unknown, not 0 */
	for (i = 0; i < s.regions.n; i++)
		CHECK(!vt_known(s.regions.v[i].rss));
	vt_sample_release(&s);
}

static void test_sample__missing_kthread_zombie(void)
{
	struct vt_sample s;
	struct vt_err err;

	CHECK_EQ_I64(take("proc/arena_default", 4242, false, &s, &err), VT_E_NOPROC);
	CHECK(strstr(err.msg, "4242") != NULL);
	CHECK_EQ_I64(take("proc/kthread", 2, false, &s, &err), VT_E_KTHREAD);
	CHECK(strstr(err.msg, "kthreadd") != NULL && err.hint[0]);
	CHECK_EQ_I64(take("proc/zombie", 9772, false, &s, &err), VT_E_ZOMBIE);
	CHECK(strstr(err.msg, "zombie") != NULL);
	CHECK_EQ_I64(vt_code_exit(VT_E_KTHREAD), 6);
	CHECK_EQ_I64(vt_code_exit(VT_E_ZOMBIE), 7);
}

static void test_sample__json_has_nulls_not_zeros(void)
{
	struct vt_snap_report r = { 0 };
	struct vt_sample s;
	struct vt_err err;
	json_error_t jerr;
	json_t *root, *p;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	CHECK_EQ_I64(take("proc/arena_max2", 9278, true, &s, &err), VT_OK);
	r.samples = &s;
	r.n = 1;
	r.min_region = 8u << 20;
	mem = open_memstream(&text, &len);
	CHECK_EQ_I64(vt_render_snap_json(mem, &r), 0);
	fclose(mem);
	root = json_loads(text, 0, &jerr);
	CHECK(root != NULL);
	CHECK_STR(json_string_value(json_object_get(root, "schema")), "vitals.snap");
	p = json_array_get(json_object_get(root, "processes"), 0);
	CHECK(json_is_null(json_object_get(json_object_get(p, "arenas"), "rss_bytes")));
	CHECK(json_is_null(json_object_get(json_object_get(p, "arenas"), "arenas")));
	CHECK_EQ_I64(json_integer_value(json_object_get(json_object_get(p, "arenas"), "heaps")), 1);
	CHECK(json_is_integer(json_object_get(json_object_get(p, "memory"), "committed")));
	CHECK(json_is_true(json_object_get(p, "regions_light")));
	json_decref(root);
	free(text);
	vt_sample_release(&s);
}

/* The report's text (owned by the caller) and its JSON's first process. */
static char *snap_text(const struct vt_snap_report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	CHECK_EQ_I64(vt_render_snap_text(mem, r), 0);
	fclose(mem);
	return text;
}

static json_t *snap_json_cap(const struct vt_snap_report *r, size_t i)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	json_error_t jerr;
	json_t *root, *cap;

	CHECK_EQ_I64(vt_render_snap_json(mem, r), 0);
	fclose(mem);
	root = json_loads(text, 0, &jerr);
	free(text);
	CHECK(root != NULL);
	cap = json_incref(json_object_get(json_object_get(
		json_array_get(json_object_get(root, "processes"), i), "arenas"), "cap"));
	json_decref(root);
	return cap;
}

/* a jemalloc process (redis) gets no glibc arenas, cap or MALLOC_ARENA_MAX, in text or JSON */
static void test_sample__other_allocator_has_no_glibc_block(void)
{
	struct vt_snap_report r = { 0 };
	struct vt_sample s[2];
	struct vt_err err;
	char *text;
	json_t *cap;

	CHECK_EQ_I64(take("proc/arena_default", 9277, false, &s[0], &err), VT_OK);
	CHECK_EQ_I64(take("proc/arena_default", 9277, false, &s[1], &err), VT_OK);
	s[1].alloc.kind = VT_ALLOC_JEMALLOC;
	r.min_region = 8u << 20;
	r.samples = &s[1];
	r.n = 1;
	text = snap_text(&r);
	CHECK(strstr(text, "ALLOCATOR") != NULL);
	CHECK(strstr(text, "GLIBC ARENAS") == NULL);
	CHECK(strstr(text, "arena cap") == NULL && strstr(text, "MALLOC_ARENA_MAX") == NULL);
	CHECK(strstr(text, "cap glibc default") == NULL);
	free(text);
	cap = snap_json_cap(&r, 0);
	CHECK(json_is_null(cap));
	json_decref(cap);

	/* beside a glibc process: the block stays for it, the other column is n/a */
	r.samples = s;
	r.n = 2;
	text = snap_text(&r);
	CHECK(strstr(text, "GLIBC ARENAS") != NULL);
	CHECK(strstr(text, "arena heaps            8  not glibc") != NULL);
	CHECK(strstr(text, "arena cap             16        n/a") != NULL);
	CHECK(strstr(text, "  9277: cap glibc default") != NULL);
	CHECK(strstr(strstr(text, ": cap glibc default") + 6, ": cap ") == NULL);   /* once */
	free(text);
	cap = snap_json_cap(&r, 0);
	CHECK_EQ_I64(json_integer_value(json_object_get(cap, "value")), 16);
	json_decref(cap);

	/* an allocator that could not be told: the glibc figures are shown as before */
	s[1].alloc.kind = VT_ALLOC_UNKNOWN;
	s[1].alloc_st.available = false;
	r.samples = &s[1];
	r.n = 1;
	text = snap_text(&r);
	CHECK(strstr(text, "GLIBC ARENAS") != NULL && strstr(text, "cap glibc default") != NULL);
	free(text);
	vt_sample_release(&s[0]);
	vt_sample_release(&s[1]);
}

/* A child that maps 64 MiB more (PROT_NONE, as an arena heap's reservation) for each byte it reads. */
static pid_t mapper_start(int *to, int *from)
{
	int down[2], up[2];
	char c;
	pid_t pid;

	if (pipe(down) || pipe(up)) {
		printf("Bail out! pipe\n");
		exit(2);
	}
	pid = fork();
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		while (read(down[0], &c, 1) == 1) {
			void *p = mmap(NULL, 64u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED || write(up[1], "m", 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	*to = down[1];
	*from = up[0];
	return pid;
}

/* One take of a soak tick: light, static parts reused, with the memo. */
static bool tick_reused(const struct vt_procfs *pfs, pid_t pid, const struct vt_sample *first,
			struct vt_maps_memo *memo, double max_age_s)
{
	struct vt_sample_opts so = { .light = true, .reuse = first, .maps_memo = memo,
				     .maps_max_age_s = max_age_s };
	struct vt_sample s;
	struct vt_err err;
	bool reused = false;

	CHECK_EQ_I64(vt_sample_take(pfs, pid, &so, &s, &err), VT_OK);
	if (s.regions_reused) {   /* maps not read, their figures the memo's */
		reused = true;
		CHECK_EQ_U64(s.regions.n, 0);
		CHECK(s.regions_st.available);
		CHECK_EQ_I64(s.arenas.heaps, first->arenas.heaps);
		CHECK_EQ_U64(s.arenas.mapped_bytes, VT_NA);
	} else {
		CHECK(s.regions.n > 0);
	}
	CHECK(s.status.vm_size == memo->vm_size && memo->valid);
	vt_sample_release(&s);
	return reused;
}

/* Maps are read again only when VmSize moved, or when the memo is too old. */
static void test_sample__maps_memo_live(void)
{
	struct vt_sample_opts so = { .light = true };
	struct vt_maps_memo memo = { 0 };
	struct vt_sample first, s;
	struct vt_procfs pfs;
	struct vt_err err;
	double read_at;
	int to, from;
	pid_t child = mapper_start(&to, &from);
	char c;

	CHECK_EQ_I64(vt_procfs_open(&pfs, NULL, NULL, &err), VT_OK);
	so.maps_memo = &memo;
	so.maps_max_age_s = 60;
	/* the first sample reads maps (its allocator is detected from them) and fills the memo */
	CHECK_EQ_I64(vt_sample_take(&pfs, child, &so, &first, &err), VT_OK);
	CHECK(!first.regions_reused && first.regions.n > 0);
	CHECK(memo.valid && memo.pid == child && memo.vm_size == first.status.vm_size);
	CHECK(vt_sample_take(&pfs, child, &so, &s, &err) == VT_OK && !s.regions_reused);   /* no reuse */
	vt_sample_release(&s);

	CHECK(tick_reused(&pfs, child, &first, &memo, 60));
	CHECK(tick_reused(&pfs, child, &first, &memo, 60));
	/* 64 MiB more: VmSize moved, maps are read again, then reused */
	CHECK(write(to, "m", 1) == 1 && read(from, &c, 1) == 1);
	CHECK(!tick_reused(&pfs, child, &first, &memo, 60));
	CHECK_EQ_U64(memo.vm_size, first.status.vm_size + (64u << 20));
	CHECK(tick_reused(&pfs, child, &first, &memo, 60));
	/* too old: read again whatever VmSize says */
	CHECK(!tick_reused(&pfs, child, &first, &memo, 0));

	/* smaps (not light) neither uses nor refreshes it */
	read_at = memo.read_at;
	so.light = false;
	so.reuse = &first;
	CHECK(vt_sample_take(&pfs, child, &so, &s, &err) == VT_OK && !s.regions_reused);
	CHECK(memo.valid && memo.read_at == read_at);
	vt_sample_release(&s);

	close(to);
	close(from);
	waitpid(child, NULL, 0);
	vt_sample_release(&first);
	vt_procfs_close(&pfs);
}

/* Open dirfd on DIR/PID (a fixture's proc tree, or /proc). */
static int open_pid_dir(const char *proc, int pid)
{
	char path[1200];

	snprintf(path, sizeof(path), "%s/%d", proc, pid);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/*
 * A snapshot's last look, whether the target exited meanwhile, reads the
 * main thread's task/PID/stat (stat adds up every thread's times): a live
 * child is not gone, the same child killed and not yet reaped (a zombie) is,
 * and so is it once reaped.  A tree whose stat says zombie and whose
 * task/PID/stat does not shows which one is read.  A recorded tree without
 * task/ is read through stat: the zombie fixture is gone, the running one
 * is not.
 */
static void test_sample__target_exited(void)
{
	struct vt_buf buf = VT_BUF_INIT(1u << 16);
	char proc[1100];
	int fd, status;
	pid_t child;

	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK(child > 0);
	fd = open_pid_dir("/proc", child);
	CHECK(fd >= 0);
	CHECK(!vt_target_exited(fd, child, &buf));
	kill(child, SIGKILL);
	/* a zombie once the kill is through: waitid without reaping */
	CHECK(waitid(P_PID, (id_t)child, &(siginfo_t){ 0 }, WEXITED | WNOWAIT) == 0);
	CHECK(vt_target_exited(fd, child, &buf));
	waitpid(child, &status, 0);
	CHECK(vt_target_exited(fd, child, &buf));
	close(fd);

	/* the main thread's file is the one read: a tree whose stat says Z and task/PID/stat S */
	{
		char dir[] = "/tmp/vt-exited-XXXXXX", path[200];
		FILE *f;

		CHECK(mkdtemp(dir) != NULL);
		snprintf(path, sizeof(path), "%s/77", dir);
		CHECK(mkdir(path, 0700) == 0);
		snprintf(path, sizeof(path), "%s/77/task", dir);
		CHECK(mkdir(path, 0700) == 0);
		snprintf(path, sizeof(path), "%s/77/task/77", dir);
		CHECK(mkdir(path, 0700) == 0);
		snprintf(path, sizeof(path), "%s/77/stat", dir);
		CHECK((f = fopen(path, "w")) != NULL);
		fputs("77 (t) Z 1 77 77 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n", f);
		fclose(f);
		snprintf(path, sizeof(path), "%s/77/task/77/stat", dir);
		CHECK((f = fopen(path, "w")) != NULL);
		fputs("77 (t) S 1 77 77 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n", f);
		fclose(f);
		fd = open_pid_dir(dir, 77);
		CHECK(fd >= 0);
		CHECK(!vt_target_exited(fd, 77, &buf));
		CHECK((f = fopen(path, "w")) != NULL);
		fputs("77 (t) Z 1 77 77 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0\n", f);
		fclose(f);
		CHECK(vt_target_exited(fd, 77, &buf));
		close(fd);
		snprintf(path, sizeof(path), "rm -rf %s", dir);
		CHECK(system(path) == 0);
	}

	snprintf(proc, sizeof(proc), "%s/proc", vt_fixture_path("proc/zombie"));
	fd = open_pid_dir(proc, 9772);
	CHECK(fd >= 0);
	CHECK(vt_target_exited(fd, 9772, &buf));
	close(fd);
	snprintf(proc, sizeof(proc), "%s/proc", vt_fixture_path("proc/arena_default"));
	fd = open_pid_dir(proc, 9277);
	CHECK(fd >= 0);
	CHECK(!vt_target_exited(fd, 9277, &buf));
	close(fd);
	vt_buf_release(&buf);
}

VT_TEST_MAIN(test_sample__arena_sprawl_fixture, test_sample__capped_fixture_light,
	     test_sample__missing_kthread_zombie, test_sample__json_has_nulls_not_zeros,
	     test_sample__other_allocator_has_no_glibc_block, test_sample__maps_memo_live,
	     test_sample__target_exited)
