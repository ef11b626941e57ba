/*
 * test_profile_buckets.c — bucket rules: the rule file's syntax and its
 * errors, first match wins, user rules before built-ins, the leaf-up walk,
 * kernel time kept as kernel time, runtimes, and wall-mode wait classes.
 */
#include "harness.h"
#include "profile_build.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/profile_buckets.h"

/* The bucket name of the last stack added to p under rules r; *frame the deciding frame. */
static const char *bucket_of_last(const struct vt_bucket_rules *r, const struct vt_profile *p,
				  uint32_t *frame)
{
	struct vt_bucket_classifier *c;
	struct vt_err err;
	static char name[VT_BUCKET_NAME_MAX + 1];

	if (vt_bucket_classifier_new(r, p, &c, &err) != VT_OK)
		return "(nomem)";
	uint32_t b = vt_bucket_classify(c, &p->stacks[p->nstacks - 1], frame, NULL);
	snprintf(name, sizeof(name), "%s", r->buckets[b].name);
	vt_bucket_classifier_free(&c);
	return name;
}

static struct vt_bucket_rules *rules_of(const char *text)
{
	struct vt_bucket_rules *r = NULL;
	struct vt_err err;
	int rc = vt_bucket_rules_parse(text, text ? strlen(text) : 0, &r, &err);
	if (rc != VT_OK)
		printf("#   unexpected: %s\n", err.msg);
	CHECK(rc == VT_OK);
	return r;
}

static void test_buckets__first_match_wins(void)
{
	struct vt_profile *p;
	struct vt_err err;
	struct vt_bucket_rules *r = rules_of("# two rules claim foo_bar\n"
					     "first: foo*\n"
					     "\n"
					     "second: foo_bar   # a comment\n");
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	CHECK_EQ_U64(r->nuser, 2);
	CHECK_EQ_U64(r->rules[1].line, 4);
	CHECK_STR(r->rules[1].glob, "foo_bar");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "app!foo_bar", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "first");
	vt_profile_free(&p);
	vt_bucket_rules_free(&r);
	CHECK(r == NULL);
}

static void test_buckets__user_rules_before_builtins(void)
{
	struct vt_profile *p;
	struct vt_err err;
	struct vt_bucket_rules *builtin = rules_of(NULL), *mine = rules_of("my pool: malloc\n");
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libc.so.6!malloc", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(builtin, p, NULL), "memory allocation");
	CHECK_STR(bucket_of_last(mine, p, NULL), "my pool");
	CHECK_EQ_U64(mine->nbuckets, VT_BK__COUNT + 1);
	/* naming a built-in bucket adds to it */
	struct vt_bucket_rules *add = rules_of("memory allocation: my_arena_get\n");
	CHECK_EQ_U64(add->nbuckets, VT_BK__COUNT);
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "app!my_arena_get", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(add, p, NULL), "memory allocation");
	CHECK_STR(bucket_of_last(builtin, p, NULL), "other");
	vt_profile_free(&p);
	vt_bucket_rules_free(&builtin);
	vt_bucket_rules_free(&mine);
	vt_bucket_rules_free(&add);
}

static void test_buckets__leaf_up_walk(void)
{
	struct vt_profile *p;
	struct vt_err err;
	struct vt_bucket_rules *r = rules_of(NULL);
	uint32_t frame;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	/* a kernel leaf no rule claims, then tcp_sendmsg */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!_raw_spin_unlock",
		       "[kernel]!tcp_sendmsg", "[kernel]!sock_write_iter", "[kernel]!vfs_write",
		       "[kernel]!ksys_write", "[kernel]!do_syscall_64", "libc.so.6!write",
		       "app!flush_manifest", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "network send/recv");
	CHECK_EQ_U64(frame, 1);
	/* the same write to a file: the file system decides, not vfs_write's caller */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!copy_user_enhanced_fast_string",
		       "[kernel]!ext4_buffered_write_iter", "[kernel]!vfs_write", "libc.so.6!write",
		       "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "filesystem syscalls");
	CHECK_EQ_U64(frame, 1);
	/* memcpy claimed by nothing, called from json_parse */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libc.so.6!__memmove_avx_unaligned_erms",
		       "app!json_parse", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "JSON/serialization");
	CHECK_EQ_U64(frame, 1);
	/* malloc under json_parse is memory allocation: top of stack */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libc.so.6!_int_malloc", "libc.so.6!malloc",
		       "app!json_parse", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "memory allocation");
	CHECK_EQ_U64(frame, 0);
	/* glibc's free unlinking a chunk is memory allocation, not the unlink() of a file
	 * (profile_work's malloc thread: 4% of its samples went to the file system) */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libc.so.6!unlink_chunk.constprop.0",
		       "libc.so.6!_int_free", "libc.so.6!free", "app!churn", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "memory allocation");
	CHECK_EQ_U64(frame, 0);
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libc.so.6!unlink", "app!cleanup", NULL) ==
	      VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "filesystem syscalls");
	/* nothing claims: other, no deciding frame */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "app!compute", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "other");
	CHECK_EQ_U64(frame, UINT32_MAX);
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, NULL) == VT_OK);   /* no frames at all */
	CHECK_STR(bucket_of_last(r, p, &frame), "other");
	vt_profile_free(&p);
	vt_bucket_rules_free(&r);
}

static void test_buckets__kernel_time_stays_kernel(void)
{
	struct vt_profile *p;
	struct vt_err err;
	struct vt_bucket_rules *r = rules_of("manifest: *manifest*\n");
	uint32_t frame;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	/* a pipe write: no kernel rule claims it, libc's write is in no bucket, so the
	 * json_dump above must not get the kernel's time */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!pipe_write", "[kernel]!vfs_write",
		       "[kernel]!do_syscall_64", "libc.so.6!write", "app!json_dump",
		       "app!send_manifest", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "kernel other");
	CHECK_EQ_U64(frame, UINT32_MAX);
	/* the first user frame above an unclaimed kernel part gets its chance */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!", "[kernel]!",
		       "libc.so.6!__libc_sendto", "app!send_manifest", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "network send/recv");
	CHECK_EQ_U64(frame, 2);
	/* a page fault in malloc's first touch */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!clear_page_erms",
		       "[kernel]!do_anonymous_page", "[kernel]!handle_mm_fault", "app!fill",
		       NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "memory allocation");
	/* kernel frames only (a kernel worker's context) */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!irq_exit_rcu", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "kernel other");
	/* the kernel's own hashing is not "hashing" */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!full_name_hash",
		       "[kernel]!link_path_walk.part.0", "libc.so.6!openat", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "filesystem syscalls");
	CHECK_EQ_U64(frame, 1);
	/* a futex wait entered from pthread_mutex_lock */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!__schedule", "[kernel]!schedule",
		       "[kernel]!futex_wait_queue", "libc.so.6!__lll_lock_wait", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "locks/futex");
	CHECK_EQ_U64(frame, 2);
	/* a busy poller's CPU in epoll_wait */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!_raw_spin_lock_irqsave",
		       "[kernel]!ep_poll", "[kernel]!do_epoll_wait", "libc.so.6!epoll_wait",
		       NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "poll/sleep");
	vt_profile_free(&p);
	vt_bucket_rules_free(&r);
}

static void test_buckets__selectors_and_runtimes(void)
{
	struct vt_profile *p;
	struct vt_err err;
	struct vt_bucket_rules *r = rules_of("tls: lib:libcrypto.so*\n"
					     "kern: kernel:*\n"
					     "jit: anon:\n"
					     "std: std::sort*\n"
					     "lib fn: func:lib:odd*\n"
					     "userspace send: user:send\n");
	CHECK(vt_profile_new(&p, &err) == VT_OK);
	CHECK_EQ_U64(r->rules[0].select, VT_SEL_LIB);
	CHECK_STR(r->rules[0].glob, "libcrypto.so*");
	CHECK_EQ_U64(r->rules[2].select, VT_SEL_ANON);
	CHECK_EQ_U64(r->rules[3].select, VT_SEL_FUNC);   /* "std" is no selector */
	CHECK_STR(r->rules[3].glob, "std::sort*");
	CHECK_STR(r->rules[4].glob, "lib:odd*");
	char text[64];
	CHECK_STR(vt_bucket_rule_text(r, 0, text, sizeof(text)), "lib:libcrypto.so*");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libcrypto.so.3!", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "tls");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[kernel]!tcp_sendmsg", "libc.so.6!send",
		       NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "kern");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[anon]!", "[anon]!", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "jit");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "app!std::sort<int*>", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "std");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "app!lib:oddity", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "lib fn");
	vt_bucket_rules_free(&r);

	/* the built-in runtimes, flagged as such */
	r = rules_of(NULL);
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "[anon]!", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "JIT code");
	/* nothing mapped there (a return address read wrong): no runtime's code */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "!", "app!main", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "other");
	CHECK(r->buckets[VT_BK_JIT].runtime);
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libc.so.6!memcpy",
		       "libpython3.11.so.1.0!_PyEval_EvalFrameDefault", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "Python interpreter");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "python3.11!", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "Python interpreter");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libjvm.so!", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "JVM");
	CHECK(r->buckets[VT_BK_PYTHON].runtime && r->buckets[VT_BK_JVM].runtime);
	CHECK(!r->buckets[VT_BK_NETWORK].runtime);
	/* CPython's own codecs and allocator under the interpreter: what they do, not "the interpreter" */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1,
		       "_json.cpython-311-x86_64-linux-gnu.so!ascii_escape_unicode",
		       "libpython3.11.so.1.0!_PyEval_EvalFrameDefault", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "JSON/serialization");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libpython3.11.so.1.0!pymalloc_alloc",
		       "libpython3.11.so.1.0!_PyObject_Malloc", "libpython3.11.so.1.0!PyUnicode_New",
		       NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "memory allocation");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "_pickle.cpython-311-x86_64-linux-gnu.so!save",
		       NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "JSON/serialization");
	/* a module of the program's own is not a codec for being loaded beside them */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "_socket.cpython-311-x86_64-linux-gnu.so!sock_call",
		       "libpython3.11.so.1.0!_PyEval_EvalFrameDefault", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "Python interpreter");
	/* a deflate frame in libz under the interpreter is compression */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libz.so.1!", "libpython3.11.so.1.0!",
		       NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "compression");
	/* the built-ins' false friends stay out */
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "app!materialize_tracked", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "other");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "app!blake3_hash_many_avx2", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "hashing");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "app!_ZN10serde_json2de9from_sliceE", NULL) ==
	      VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "JSON/serialization");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libstdc++.so.6!_Znwm", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "memory allocation");
	CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, "libcrypto.so.3!SHA256_Update", NULL) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "crypto");
	vt_bucket_rules_free(&r);
	vt_profile_free(&p);
}

/* A rule file that must fail with exactly this message. */
static void expect_error(const char *text, size_t len, const char *msg)
{
	struct vt_bucket_rules *r = (struct vt_bucket_rules *)1;
	struct vt_err err;
	int rc = vt_bucket_rules_parse(text, len, &r, &err);
	CHECK_EQ_I64(rc, VT_E_USAGE);
	CHECK(r == NULL);
	if (rc != VT_OK)
		CHECK_STR(err.msg, msg);
}

static void test_buckets__malformed_lines(void)
{
#define BAD(text, msg) expect_error(text, sizeof(text) - 1, msg)
	BAD("net: send*\nno colon here\n",
	    "line 2: no ':' between a bucket name and a glob (write 'bucket: glob')");
	BAD("   : send*\n", "line 1: empty bucket name before ':'");
	BAD("\n\n# c\nnet:   \n", "line 4: empty glob after 'net:'");
	BAD("net: lib:\n", "line 1: empty glob after 'lib:'");
	BAD("net: kernel:  # nothing\n", "line 1: empty glob after 'kernel:'");
	BAD("net: send[abc\n", "line 1: '[' without a closing ']' in the glob");
	BAD("net: send[!\n", "line 1: '[' without a closing ']' in the glob");
	BAD("net: send\\\n", "line 1: the glob ends in a lone '\\'");
	BAD("jit: anon:foo\n", "line 1: 'anon:' takes no glob");
	BAD("jit: anon\n", "line 1: write 'anon:' for frames in anonymous code");
	BAD("a bucket name that is far too long to be shown in a table: x\n",
	    "line 1: bucket name longer than 48 bytes");
	BAD("evil\x1b[2Jname: x\n", "line 1: control character in the bucket name");
	BAD("evil\xc2\x9bname: x\n", "line 1: control character in the bucket name");
	BAD("bad\xff: x\n", "line 1: bucket name is not valid UTF-8");
	BAD("net: se\x07nd\n", "line 1: control character in the glob");
	BAD("net: send\0\n", "line 1: a NUL byte");
#undef BAD
	/* fine: a ']' first in a set, an escaped '[', CRLF, a BOM, no newline at the end */
	const char ok[] = "\xef\xbb\xbfnet: []x]*\r\nnet: a\\[b\r\nné t: x";
	struct vt_bucket_rules *r;
	struct vt_err err;
	CHECK(vt_bucket_rules_parse(ok, sizeof(ok) - 1, &r, &err) == VT_OK);
	CHECK_EQ_U64(r->nuser, 3);
	CHECK_STR(r->rules[1].glob, "a\\[b");
	CHECK_STR(r->buckets[r->rules[2].bucket].name, "né t");
	vt_bucket_rules_free(&r);

	/* too many rules, too many buckets */
	size_t cap = 64 * 1024, n = 0;
	char *big = malloc(cap);
	for (int i = 0; i <= VT_BUCKET_MAX_RULES; i++)
		n += (size_t)snprintf(big + n, cap - n, "b: f%d\n", i);
	expect_error(big, n, "line 1025: more than 1024 rules");
	n = 0;
	for (int i = 0; i < VT_BUCKET_MAX_BUCKETS; i++)
		n += (size_t)snprintf(big + n, cap - n, "bucket %d: f\n", i);
	char want[64];
	snprintf(want, sizeof(want), "line %d: more than %d buckets",
		 VT_BUCKET_MAX_BUCKETS - VT_BK__COUNT + 1, VT_BUCKET_MAX_BUCKETS);
	expect_error(big, n, want);
	free(big);
}

static void test_buckets__load_file(void)
{
	char dir[] = "/tmp/vt-buckets-XXXXXX", path[128];
	struct vt_bucket_rules *r;
	struct vt_err err;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/none", dir);
	CHECK_EQ_I64(vt_bucket_rules_load(path, &r, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "no such file") != NULL);
	CHECK_EQ_I64(vt_bucket_rules_load(dir, &r, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "is a directory") != NULL);

	snprintf(path, sizeof(path), "%s/rules", dir);
	f = fopen(path, "w");
	fputs("# ours\nsync: sync_once\nbad line\n", f);
	fclose(f);
	CHECK_EQ_I64(vt_bucket_rules_load(path, &r, &err), VT_E_USAGE);
	char want[256];
	snprintf(want, sizeof(want), "bucket rules '%s': line 3: no ':' between a bucket name and "
		 "a glob (write 'bucket: glob')", path);
	CHECK_STR(err.msg, want);
	CHECK(err.hint[0] != '\0');

	f = fopen(path, "w");
	fputs("# ours\nsync: sync_once\n", f);
	fclose(f);
	CHECK_EQ_I64(vt_bucket_rules_load(path, &r, &err), VT_OK);
	CHECK_EQ_U64(r->nuser, 1);
	vt_bucket_rules_free(&r);

	f = fopen(path, "w");
	for (int i = 0; i < VT_BUCKET_FILE_MAX / 10 + 1; i++)
		fputs("# padding\n", f);
	fclose(f);
	CHECK_EQ_I64(vt_bucket_rules_load(path, &r, &err), VT_E_USAGE);
	CHECK(strstr(err.msg, "larger than") != NULL);

	if (geteuid() != 0) {   /* root reads anything */
		chmod(path, 0);
		CHECK_EQ_I64(vt_bucket_rules_load(path, &r, &err), VT_E_PERM);
	}
	unlink(path);

	/* A FIFO nobody writes to is read as empty, not waited on (profile hung on one). */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(mkfifo(path, 0600) == 0);
	alarm(5);
	vt_bucket_rules_load(path, &r, &err);
	alarm(0);
	vt_bucket_rules_free(&r);
	unlink(path);
	rmdir(dir);
}

static void test_buckets__wait_classes(void)
{
	struct vt_profile *p;
	struct vt_err err;
	CHECK(vt_profile_new(&p, &err) == VT_OK);
#define LAST (&p->stacks[p->nstacks - 1])
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "futex_wait_queue", 1, "libc.so.6!__lll_lock_wait",
		       "libc.so.6!pthread_mutex_lock", "app!take", NULL) == VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_LOCK);
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "futex_wait_queue", 1,
		       "libc.so.6!__futex_abstimed_wait_common", "libc.so.6!pthread_cond_wait",
		       "app!worker", NULL) == VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_FUTEX);
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "ep_poll", 1, "app!", NULL) == VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_EPOLL);
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "do_sys_poll", 1, "app!", NULL) == VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_POLL);
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "hrtimer_nanosleep", 1, "app!", NULL) == VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_SLEEP);
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "sk_wait_data", 1, "libc.so.6!recv", NULL) == VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_IO);
	CHECK(pb_stack(p, 0, VT_PROF_DISK, "io_schedule", 1, "libc.so.6!pread64", NULL) == VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_DISK);
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, "do_wait", 1, "app!", NULL) == VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_OTHER);
	/* no wait string: the frames tell */
	CHECK(pb_stack(p, 0, VT_PROF_SLEEPING, NULL, 1, "libc.so.6!epoll_wait", "app!loop", NULL) ==
	      VT_OK);
	CHECK_EQ_U64(vt_bucket_wait_class(p, LAST), VT_WAITC_EPOLL);
#undef LAST
	CHECK(vt_wait_class_idle(VT_WAITC_FUTEX) && vt_wait_class_idle(VT_WAITC_EPOLL));
	CHECK(!vt_wait_class_idle(VT_WAITC_LOCK) && !vt_wait_class_idle(VT_WAITC_IO) &&
	      !vt_wait_class_idle(VT_WAITC_DISK));
	CHECK_STR(vt_wait_class_name(VT_WAITC_IO), "read/recv");
	vt_profile_free(&p);
}

/*
 * The built-in rules know the Rust and C++ ecosystems by their demangled
 * names (issue 25): each leaf, called from the program's own code, goes to
 * the bucket a reader of report 002's table would put it in.
 */
static void test_buckets__rust_and_cpp_ecosystems(void)
{
	static const struct { const char *leaf, *bucket; } cases[] = {
		{ "app!serde_json::de::Deserializer<R>::parse_whitespace", "JSON/serialization" },
		{ "app!<serde_json::value::Value as serde::Deserialize>::deserialize", "JSON/serialization" },
		{ "app!simd_json::Deserializer::from_slice", "JSON/serialization" },
		{ "app!nlohmann::json_abi_v3_11_2::detail::lexer<>::scan", "JSON/serialization" },
		{ "app!rapidjson::GenericReader<>::ParseObject", "JSON/serialization" },
		{ "app!mio::poll::Poll::poll", "poll/sleep" },
		{ "app!tokio::runtime::scheduler::multi_thread::park::Parker::park", "poll/sleep" },
		{ "app!tokio::runtime::io::driver::Driver::turn", "poll/sleep" },
		{ "app!std::thread::park", "poll/sleep" },
		{ "app!hashbrown::raw::RawTable<T,A>::reserve_rehash", "hashing" },
		{ "app!blake3::platform::Platform::hash_many", "hashing" },
		{ "app!xxhash_rust::xxh3::xxh3_64", "hashing" },
		{ "app!<std::hash::random::DefaultHasher as core::hash::Hasher>::write", "hashing" },
		{ "app!ahash::fallback_hash::AHasher::update", "hashing" },
		{ "app!sha2::sha256::soft::compress", "crypto" },
		{ "app!ring::aead::aes_gcm::seal", "crypto" },
		{ "app!rustls::conn::ConnectionCommon<Data>::complete_io", "crypto" },
		{ "app!aws_lc_0_21_0_EVP_DigestUpdate", "crypto" },
		{ "app!openssl::ssl::SslStream<S>::read", "crypto" },
		{ "app!std::fs::read_to_string::inner", "filesystem syscalls" },
		{ "app!std::sys::pal::unix::fs::File::open_c", "filesystem syscalls" },
		{ "app!tokio::fs::read::read", "filesystem syscalls" },
		{ "app!std::filesystem::__cxx11::directory_iterator::operator++()", "filesystem syscalls" },
		{ "app!alloc::alloc::exchange_malloc", "memory allocation" },
		{ "app!_rjem_malloc", "memory allocation" },
		{ "app!_rjem_je_tcache_bin_flush_small", "memory allocation" },
		{ "app!tikv_jemallocator::Jemalloc::alloc", "memory allocation" },
		{ "app!_mi_page_malloc", "memory allocation" },
		{ "app!zstd::stream::zio::writer::Writer<W,D>::write", "compression" },
		{ "app!flate2::zio::Writer<W,D>::dump", "compression" },
		{ "app!miniz_oxide::deflate::core::compress_inner", "compression" },
		{ "app!lz4_flex::block::compress::compress_internal", "compression" },
		{ "app!std::sys::sync::mutex::futex::Mutex::lock_contended", "locks/futex" },
		{ "app!<std::net::tcp::TcpStream as std::io::Write>::write", "network send/recv" },
		{ "app!<std::sys::net::connection::socket::UdpSocket>::send", "network send/recv" },
		{ "app!std::sys::pal::unix::net::Socket::recv_with_flags", "network send/recv" },
		{ "app!mio::net::tcp::stream::TcpStream::read", "network send/recv" },
		{ "app!tokio::net::tcp::stream::TcpStream::poll_write_priv", "network send/recv" },
		{ "app!std::mutex::lock()", "locks/futex" },
		/* a data structure of alloc:: is not allocation */
		{ "app!alloc::collections::btree::map::BTreeMap<K,V,A>::insert", "other" },
	};
	struct vt_profile *p;
	struct vt_err err;
	struct vt_bucket_rules *r = rules_of(NULL);

	CHECK(vt_profile_new(&p, &err) == VT_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got;

		CHECK(pb_stack(p, 0, VT_PROF_RUNNING, NULL, 1, cases[i].leaf, "app!sync_once",
			       "app!main", NULL) == VT_OK);
		got = bucket_of_last(r, p, NULL);
		if (strcmp(got, cases[i].bucket) != 0)
			printf("#   %s: %s, not %s\n", cases[i].leaf, got, cases[i].bucket);
		CHECK_STR(got, cases[i].bucket);
	}
	vt_profile_free(&p);
	vt_bucket_rules_free(&r);
}

/*
 * A kernel sample no kernel rule claims gives the first user address its
 * chance: every function inlined there and the one they were inlined into
 * (rustc inlines core's is_ascii_digit into serde's tokenizer, which it
 * inlines into a neutral caller), not only the innermost.
 */
static void test_buckets__kernel_then_inlined_user_frames(void)
{
	struct vt_profile *p;
	struct vt_err err;
	struct vt_bucket_rules *r = rules_of(NULL);
	uint32_t locs[5], frame;

	CHECK(vt_profile_new(&p, &err) == VT_OK);
	locs[0] = pb_frame(p, "[kernel]!pvm_irq_enable");
	locs[1] = pb_frame(p, "app!<u8>::is_ascii_digit");
	locs[2] = pb_frame(p, "app!sync::json::tokenize");
	locs[3] = pb_frame(p, "app!sync::stage_one");
	locs[4] = pb_frame(p, "app!main");
	/* three separate addresses: only the first had its chance */
	CHECK(vt_profile_add(p, locs, 5, 0, VT_PROF_RUNNING, 0, false, 1, &err) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, NULL), "kernel other");
	/* is_ascii_digit and tokenize inlined at stage_one's address: that address is JSON */
	p->locs[locs[1]].inlined_into = locs[2] + 1;
	p->locs[locs[2]].inlined_into = locs[3] + 1;
	CHECK(vt_profile_add(p, locs, 5, 0, VT_PROF_RUNNING, 0, false, 1, &err) == VT_OK);
	CHECK_STR(bucket_of_last(r, p, &frame), "JSON/serialization");
	CHECK_EQ_U64(frame, 2);
	vt_profile_free(&p);
	vt_bucket_rules_free(&r);
}

VT_TEST_MAIN(test_buckets__first_match_wins, test_buckets__user_rules_before_builtins,
	     test_buckets__leaf_up_walk, test_buckets__kernel_time_stays_kernel,
	     test_buckets__selectors_and_runtimes, test_buckets__malformed_lines,
	     test_buckets__load_file, test_buckets__wait_classes, test_buckets__rust_and_cpp_ecosystems,
	     test_buckets__kernel_then_inlined_user_frames)
