/*
 * test_uprobe.c — src/perf/uprobe.c and the probe path of perf_events.c:
 * the PMU's format files parsed (one bit, not a range), a PMU read from a
 * fixture sysfs and its absence said; live, a set of probes on libc's
 * malloc (entry with the stack, and return) opened on a child that makes
 * 1,000 calls of a size nobody else asks: every call is one entry sample
 * with the size in rdi and the return address at sp, and one return sample
 * with the pointer; each sample says which event it came from.  And the
 * allocation sampler's wrapper names.
 *
 * Live tests skip where probes are refused (not root, no uprobes).
 */
#include "harness.h"

#include "perf/perf_events.h"
#include "perf/uprobe.h"
#include "sample/allocs.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_uprobe__format(void)
{
	unsigned bit = 99;

	CHECK(vt_uprobe_parse_format("config:0\n", 9, &bit) && bit == 0);
	CHECK(vt_uprobe_parse_format("config:17", 9, &bit) && bit == 17);
	CHECK(!vt_uprobe_parse_format("config:32-63\n", 13, &bit));
	CHECK(!vt_uprobe_parse_format("config:\n", 8, &bit));
	CHECK(!vt_uprobe_parse_format("config:64\n", 10, &bit));
	CHECK(!vt_uprobe_parse_format("config1:0\n", 10, &bit));
	CHECK(!vt_uprobe_parse_format("", 0, &bit));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_uprobe__pmu_from_sysfs(void)
{
	char root[] = "/tmp/vt-uprobe-XXXXXX", path[256];
	struct vt_uprobe_pmu pmu;
	struct vt_err err;

	CHECK(mkdtemp(root) != NULL);
	CHECK(vt_uprobe_pmu_read(root, &pmu, &err) == VT_E_UNSUPPORTED);
	CHECK(strstr(err.msg, "no uprobe PMU") != NULL);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/uprobe/format", root);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
		CHECK(system(cmd) == 0);
	}
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/uprobe/type", root);
	write_file(path, "9\n");
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/uprobe/format/retprobe", root);
	write_file(path, "config:3-4\n");
	CHECK(vt_uprobe_pmu_read(root, &pmu, &err) == VT_E_UNSUPPORTED);   /* a range: refused */
	write_file(path, "config:3\n");
	CHECK(vt_uprobe_pmu_read(root, &pmu, &err) == VT_OK);
	CHECK(pmu.type == 9 && pmu.retprobe_bit == 3);
	{
		struct vt_perf_event ev;

		vt_uprobe_event(&pmu, "/lib/x", 0x1230, true, false, &ev);
		CHECK(ev.type == 9 && ev.config == 8 && ev.config2 == 0x1230 && !ev.stack);
	}
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		CHECK(system(cmd) == 0);
	}
}

static void test_uprobe__wrappers(void)
{
	CHECK(vt_allocs_is_wrapper("operator new(unsigned long)"));
	CHECK(vt_allocs_is_wrapper("__rust_alloc"));
	CHECK(vt_allocs_is_wrapper("alloc::raw_vec::RawVec<T,A>::grow_one"));
	CHECK(vt_allocs_is_wrapper("__strdup"));
	CHECK(vt_allocs_is_wrapper("zmalloc"));
	CHECK(vt_allocs_is_wrapper("__posix_memalign"));   /* glibc's, calling malloc for the program */
	CHECK(!vt_allocs_is_wrapper("adapter::poll_round"));
	CHECK(!vt_allocs_is_wrapper("churn_round"));
	CHECK(!vt_allocs_is_wrapper(""));
	CHECK(!vt_allocs_is_wrapper(NULL));
}

#define ODD_SIZE 12345
#define CALLS 1000

struct counts {
	unsigned entries, returns, other;
	bool caller_ok;
	uint64_t caller;
};

static void on_sample(void *ctx, const struct vt_perf_sample *s)
{
	struct counts *c = ctx;

	if (s->event == 1 && s->regs_ok && s->regs[VT_PERF_REG_DI] == ODD_SIZE) {
		uint64_t ret = 0;

		c->entries++;
		if (s->stack && s->stack_len >= 8)
			memcpy(&ret, s->stack, 8);
		if (c->entries == 1)
			c->caller = ret;
		c->caller_ok = c->caller_ok || ret == c->caller;
	} else if (s->event == 0 && s->regs_ok) {
		c->returns++;
	} else {
		c->other++;
	}
}

/* The file offset of code address addr (its PT_LOAD's p_offset + the distance into it). */
struct where { uintptr_t addr; uint64_t offset; bool found; };

static int find_segment(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct where *w = ctx;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && w->addr >= lo && w->addr < lo + ph->p_memsz) {
			w->offset = w->addr - lo + ph->p_offset;
			w->found = true;
			return 1;
		}
	}
	return 0;
}

__attribute__((noinline)) static void child_calls(void)
{
	void *(*volatile m)(size_t) = malloc;

	for (int i = 0; i < CALLS; i++)
		free(m(ODD_SIZE));
}

static void test_uprobe__live_malloc(void)
{
	struct vt_uprobe_spec specs[2] = { { 0, true, false }, { 0, false, true } };
	struct vt_uprobe_set *set = NULL;
	struct vt_perf *pf = NULL;
	struct counts c = { 0 };
	struct vt_err err;
	Dl_info info;
	int go[2], status;
	pid_t pid;

	if (geteuid() != 0) {
		printf("# SKIP not root: probes need CAP_PERFMON\n");
		return;
	}
	struct where w = { (uintptr_t)malloc, 0, false };

	/* the malloc this process calls: libc's, or a sanitizer's */
	CHECK(dladdr((void *)malloc, &info) && info.dli_fname);
	dl_iterate_phdr(find_segment, &w);
	CHECK(w.found);
	specs[0].offset = specs[1].offset = w.offset;
	if (vt_uprobe_set_open(info.dli_fname, specs, 2, false, &set, &err) != VT_OK) {
		printf("# SKIP no uprobes here: %s\n", err.msg);
		return;
	}
	CHECK(pipe(go) == 0);
	pid = fork();
	if (pid == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		child_calls();
		_exit(0);
	}
	close(go[0]);
	{
		struct vt_perf_opts o = { .stack_bytes = 64, .ring_pages = 256,
					  .events = vt_uprobe_set_events(set), .nevents = 2 };
		int rc = vt_perf_open(pid, &o, &pf, &err);

		CHECK(rc == VT_OK);
		if (rc != VT_OK)
			printf("#   %s (%s)\n", err.msg, err.hint);
	}
	CHECK(write(go[1], "x", 1) == 1);
	close(go[1]);
	for (int i = 0; pf && i < 200; i++) {
		int rc = vt_perf_poll(pf, 20, on_sample, &c, &err);

		if (rc == VT_E_GONE)
			break;
	}
	waitpid(pid, &status, 0);
	vt_perf_close(&pf);
	vt_uprobe_set_close(&set);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("#   entries %u returns %u other %u\n", c.entries, c.returns, c.other);
	CHECK(c.entries == CALLS);
	CHECK(c.returns >= CALLS);
	CHECK(c.caller_ok && c.caller != 0);
}

VT_TEST_MAIN(test_uprobe__format, test_uprobe__pmu_from_sysfs, test_uprobe__wrappers,
	     test_uprobe__live_malloc)
