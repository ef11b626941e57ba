/*
 * test_agent.c — libvitals-agent.so preloaded into real child processes,
 * found and queried through src/alloc/agent_client.c.
 *
 * The child ("host") is a tiny plain-glibc program compiled here with cc
 * (the test itself may be an ASan build, whose malloc is not glibc's): it
 * mallocs a known amount, reports its own mallinfo2, and waits until its
 * stdin closes, then exits 0.  Every test ends by checking that exit status:
 * whatever a client did to the agent, the host must run on and end normally.
 * The agent is found at $VT_BUILD/agent/libvitals-agent.so, else next to
 * this program (<build>/tests/../agent/); libvitals-agent-allocs.so beside it.
 *
 * The allocation sampler (libvitals-agent-allocs.so, "want":"allocs") is
 * tested on a second plain-glibc program, "ahost", driven one command byte
 * at a time on its stdin so that the test knows exactly which of its
 * allocations fall in the armed window: it allocates only between a command
 * and its "done" line, and reports its own counts there (test_allocs__*).
 *
 * lane: long — started first among the unit tests (tests/run)
 */
#include "harness.h"
#include "base/unknown.h"

#include "alloc/agent_client.h"
#include "alloc/malloc_info.h"
#include "proc/status.h"

#include <dirent.h>
#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <linux/securebits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The host program: nblocks size keep_every [fork|-] */
static const char host_src[] =
	"#define _GNU_SOURCE\n"
	"#include <malloc.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
	"#include <sys/wait.h>\n#include <unistd.h>\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 0, sz = argc > 2 ? strtoul(argv[2], 0, 10) : 0, i;\n"
	"	size_t keep = argc > 3 ? strtoul(argv[3], 0, 10) : 1;\n"
	"	char **v = calloc(n ? n : 1, sizeof(*v)), line[128], c;\n"
	"	struct mallinfo2 mi;\n"
	"	int k;\n"
	"	for (i = 0; i < n; i++) { v[i] = malloc(sz); memset(v[i], (int)i, sz); }\n"
	"	for (i = 0; i + 1 < n; i++) if (keep > 1 && i % keep) { free(v[i]); v[i] = 0; }\n"
	"	if (argc > 4 && strcmp(argv[4], \"fork\") == 0) {\n"
	"		int st; pid_t p = fork();\n"
	"		if (p == 0) exit(0);\n"
	"		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st)) return 3;\n"
	"	}\n"
	"	mi = mallinfo2();\n"
	"	k = snprintf(line, sizeof(line), \"ready %d %zu\\n\", (int)getpid(), mi.uordblks);\n"
	"	if (write(1, line, (size_t)k) != k) return 4;\n"
	"	while (read(0, &c, 1) > 0) ;\n"
	"	for (i = 0; i < n; i++) free(v[i]);\n"
	"	free(v);\n"
	"	return 0;\n"
	"}\n";

/* A malloc that is not glibc's (it forwards to glibc's internals). */
static const char shim_src[] =
	"#include <stddef.h>\n"
	"extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t), *__libc_realloc(void *, size_t);\n"
	"extern void __libc_free(void *);\n"
	"void *malloc(size_t n) { return __libc_malloc(n); }\n"
	"void *calloc(size_t a, size_t b) { return __libc_calloc(a, b); }\n"
	"void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }\n"
	"void free(void *p) { __libc_free(p); }\n";

/*
 * The sampler's host: "ready PID 0", then one command byte at a time:
 *   g  allocate the SET below at ~300 rounds a second, each entry twice: one
 *      block freed at once, one kept (until EOF), until the next byte ('p');
 *      then "done CALLS BYTES FREES MALLOC CALLOC REALLOC MEMALIGN
 *      POSIX_MEMALIGN ALIGNED_ALLOC" for that phase;
 *   e  a fixed script (see the 'e' case), then "exact P Q R S T U V", its pointers;
 *   t  4 threads x 1 s of malloc/calloc/realloc/memalign/free, every byte
 *      checked before it is freed: "threads ok CALLS" or "threads bad";
 *   f  20 forks while a thread churns; each child allocates for a while and
 *      exits 0: "fork ok" or "fork bad";
 *   s  1 s of malloc/free of 2,000-8,000 bytes while another thread sends
 *      it SIGUSR1 every ~20 us, whose handler mallocs and frees 48 bytes:
 *      "signals ok CALLS SIGNALS".  (glibc's malloc is not async-signal-
 *      safe; the handler's size is served from a tcache bin that nothing
 *      else touches, which takes no lock, so only the agent's reentrancy
 *      is under test.)
 *   EOF: frees what it kept, exits 0.
 */
static const char ahost_src[] =
	"#define _GNU_SOURCE\n"
	"#include <malloc.h>\n#include <poll.h>\n#include <pthread.h>\n#include <signal.h>\n#include <stdint.h>\n"
	"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <sys/wait.h>\n"
	"#include <time.h>\n#include <unistd.h>\n"
	"static const struct { int fn; size_t n, a; } set[] = {\n"
	"	{ 0, 24, 0 }, { 0, 200, 0 }, { 0, 3000, 0 }, { 1, 500, 1 }, { 1, 1200, 10 },\n"
	"	{ 2, 700, 0 }, { 3, 1000, 64 }, { 4, 5000, 32 }, { 5, 2048, 128 }, { 0, 9000, 0 } };\n"
	"static unsigned long long calls, bytes, frees, fn[6];\n"
	"static void *kept[1 << 16];\n"
	"static size_t nkept;\n"
	"static void *volatile none;   /* realloc(NULL, n): gcc would call malloc(n) instead */\n"
	"static void say(const char *s) { if (write(1, s, strlen(s)) < 0) _exit(5); }\n"
	"static long long now_ms(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000LL + t.tv_nsec / 1000000; }\n"
	"static void *one(int k)\n"
	"{\n"
	"	void *p = 0;\n"
	"	size_t n = set[k].n;\n"
	"	switch (set[k].fn) {\n"
	"	case 0: p = malloc(n); break;\n"
	"	case 1: p = calloc(set[k].a, n / set[k].a); n = set[k].a * (n / set[k].a); break;\n"
	"	case 2: p = realloc(none, n); break;\n"
	"	case 3: p = memalign(set[k].a, n); break;\n"
	"	case 4: if (posix_memalign(&p, set[k].a, n)) p = 0; break;\n"
	"	case 5: p = aligned_alloc(set[k].a, n); break;\n"
	"	}\n"
	"	if (!p) _exit(6);\n"
	"	memset(p, k, 16);\n"
	"	calls++; bytes += n; fn[set[k].fn]++;\n"
	"	return p;\n"
	"}\n"
	"static void rate(void)\n"
	"{\n"
	"	struct pollfd pf = { 0, POLLIN, 0 };\n"
	"	struct timespec nap = { 0, 3000000 };\n"
	"	char line[256], c;\n"
	"	int k;\n"
	"	calls = bytes = frees = 0; memset(fn, 0, sizeof(fn));\n"
	"	for (;;) {\n"
	"		for (k = 0; k < 10; k++) {\n"
	"			void *a = one(k), *b = one(k);\n"
	"			free(a); frees++;\n"
	"			if (nkept < sizeof(kept) / sizeof(kept[0])) kept[nkept++] = b; else { free(b); frees++; }\n"
	"		}\n"
	"		if (poll(&pf, 1, 0) > 0) break;\n"
	"		nanosleep(&nap, 0);\n"
	"	}\n"
	"	if (read(0, &c, 1) != 1) _exit(7);\n"
	"	snprintf(line, sizeof(line), \"done %llu %llu %llu %llu %llu %llu %llu %llu %llu\\n\", calls, bytes, frees,\n"
	"		 fn[0], fn[1], fn[2], fn[3], fn[4], fn[5]);\n"
	"	say(line);\n"
	"}\n"
	"static void exact(void)\n"
	"{\n"
	"	char line[512];\n"
	"	void *p = malloc(1000), *q, *r, *s, *t, *u = 0, *v;\n"
	"	uintptr_t pp = (uintptr_t)p, qq;\n"
	"	q = realloc(p, 3000); qq = (uintptr_t)q;\n"
	"	r = calloc(4, 250); s = memalign(64, 100); t = aligned_alloc(256, 512);\n"
	"	if (!q || !r || !s || !t || posix_memalign(&u, 16, 777)) _exit(8);\n"
	"	v = valloc(333);\n"
	"	if (!v) _exit(8);\n"
	"	snprintf(line, sizeof(line), \"exact %lx %lx %lx %lx %lx %lx %lx\\n\", (unsigned long)pp, (unsigned long)qq,\n"
	"		 (unsigned long)(uintptr_t)r, (unsigned long)(uintptr_t)s, (unsigned long)(uintptr_t)t,\n"
	"		 (unsigned long)(uintptr_t)u, (unsigned long)(uintptr_t)v);\n"
	"	free(q); free(t); free(v);\n"
	"	kept[nkept++] = r; kept[nkept++] = s; kept[nkept++] = u;\n"
	"	say(line);\n"
	"}\n"
	"static unsigned long long tcalls;\n"
	"static volatile int stop_churn;\n"
	"static void *churn(void *arg)\n"
	"{\n"
	"	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;\n"
	"	unsigned char *slot[64] = { 0 };\n"
	"	size_t len[64] = { 0 }, i, j;\n"
	"	unsigned long long n = 0;\n"
	"	long long until = now_ms() + 1000;\n"
	"	int bad = 0;\n"
	"	while (arg ? now_ms() < until : !stop_churn) {\n"
	"		for (j = 0; j < 64; j++) {\n"
	"			size_t k = (size_t)rand_r(&seed) % 64, sz = 1 + (size_t)rand_r(&seed) % 4096;\n"
	"			unsigned char tag = (unsigned char)(k * 3 + (uintptr_t)arg), *p;\n"
	"			for (i = 0; slot[k] && i < len[k]; i++) if (slot[k][i] != tag) bad = 1;\n"
	"			switch (rand_r(&seed) % 4) {\n"
	"			case 0: p = realloc(slot[k], sz); break;\n"
	"			case 1: free(slot[k]); p = calloc(1, sz); for (i = 0; p && i < sz; i++) if (p[i]) bad = 1; break;\n"
	"			case 2: free(slot[k]); p = memalign(64, sz); break;\n"
	"			default: free(slot[k]); p = malloc(sz); break;\n"
	"			}\n"
	"			if (!p) _exit(10);\n"
	"			memset(p, tag, sz); slot[k] = p; len[k] = sz; n++;\n"
	"		}\n"
	"	}\n"
	"	for (j = 0; j < 64; j++) { for (i = 0; slot[j] && i < len[j]; i++) if (slot[j][i] != (unsigned char)(j * 3 + (uintptr_t)arg)) bad = 1; free(slot[j]); }\n"
	"	__atomic_add_fetch(&tcalls, n, __ATOMIC_RELAXED);\n"
	"	return bad ? (void *)1 : 0;\n"
	"}\n"
	"static void threads(void)\n"
	"{\n"
	"	pthread_t t[4];\n"
	"	void *r;\n"
	"	char line[128];\n"
	"	int i, bad = 0;\n"
	"	tcalls = 0;\n"
	"	for (i = 0; i < 4; i++) if (pthread_create(&t[i], 0, churn, (void *)(uintptr_t)(i + 1))) _exit(11);\n"
	"	for (i = 0; i < 4; i++) { pthread_join(t[i], &r); if (r) bad = 1; }\n"
	"	snprintf(line, sizeof(line), bad ? \"threads bad\\n\" : \"threads ok %llu\\n\", tcalls);\n"
	"	say(line);\n"
	"}\n"
	"static void forks(void)\n"
	"{\n"
	"	pthread_t bg;\n"
	"	void *r;\n"
	"	int i, j, st, bad = 0;\n"
	"	stop_churn = 0;\n"
	"	if (pthread_create(&bg, 0, churn, 0)) _exit(12);\n"
	"	for (i = 0; i < 20; i++) {\n"
	"		pid_t c = fork();\n"
	"		if (c == 0) {\n"
	"			for (j = 0; j < 20000; j++) { char *y = malloc(16 + (size_t)j % 3000); if (!y) _exit(2); y[0] = 1; free(y); }\n"
	"			exit(0);\n"
	"		}\n"
	"		if (c < 0) { bad = 1; break; }\n"
	"		for (j = 0; j < 2000; j++) free(malloc(100 + (size_t)j));\n"
	"		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st)) bad = 1;\n"
	"	}\n"
	"	stop_churn = 1;\n"
	"	pthread_join(bg, &r);\n"
	"	say(bad || r ? \"fork bad\\n\" : \"fork ok\\n\");\n"
	"}\n"
	"static volatile sig_atomic_t nsig, stop_sig;\n"
	"static pthread_t main_thread;\n"
	"static void on_usr1(int sig) { char *p = malloc(48); if (p) { p[0] = (char)sig; free(p); } nsig++; }\n"
	"static void *sigger(void *arg)\n"
	"{\n"
	"	struct timespec nap = { 0, 20000 };\n"
	"	while (!stop_sig) { pthread_kill(main_thread, SIGUSR1); nanosleep(&nap, 0); }\n"
	"	return arg;\n"
	"}\n"
	"static void signals(void)\n"
	"{\n"
	"	struct sigaction sa;\n"
	"	unsigned long long n = 0;\n"
	"	long long until;\n"
	"	char line[128];\n"
	"	pthread_t t;\n"
	"	int j;\n"
	"	memset(&sa, 0, sizeof(sa));\n"
	"	sa.sa_handler = on_usr1;\n"
	"	sa.sa_flags = SA_RESTART;\n"
	"	sigaction(SIGUSR1, &sa, 0);\n"
	"	free(malloc(48));\n"
	"	main_thread = pthread_self(); stop_sig = 0; nsig = 0;\n"
	"	if (pthread_create(&t, 0, sigger, 0)) _exit(13);\n"
	"	for (until = now_ms() + 1000; now_ms() < until;)\n"
	"		for (j = 0; j < 100; j++, n++) { char *p = malloc(2000 + (size_t)(n * 37 % 6000)); if (!p) _exit(14); p[0] = 1; free(p); }\n"
	"	stop_sig = 1;\n"
	"	pthread_join(t, 0);\n"
	"	snprintf(line, sizeof(line), \"signals ok %llu %d\\n\", n, (int)nsig);\n"
	"	say(line);\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"	char line[64], c;\n"
	"	size_t i;\n"
	"	snprintf(line, sizeof(line), \"ready %d 0\\n\", (int)getpid());\n"
	"	say(line);\n"
	"	while (read(0, &c, 1) == 1) {\n"
	"		if (c == 'g') rate();\n"
	"		else if (c == 'e') exact();\n"
	"		else if (c == 't') threads();\n"
	"		else if (c == 'f') forks();\n"
	"		else if (c == 's') signals();\n"
	"	}\n"
	"	for (i = 0; i < nkept; i++) free(kept[i]);\n"
	"	return 0;\n"
	"}\n";

static char workdir[256];
static char host_bin[512], shim_so[512], agent_so[4096], allocs_so[4096], ahost_bin[512];
static int setup_state;   /* 0 not tried, 1 ready, -1 failed */

struct host {
	pid_t pid;          /* as we see it */
	pid_t waiter;       /* the process to wait for (== pid, or a namespace parent) */
	int in, out;        /* its stdin (we write), its stdout (we read) */
	long ns_pid;        /* pid it printed */
	uint64_t uord;      /* mallinfo2().uordblks it printed */
};

static void cleanup_workdir(void)
{
	char cmd[600];

	if (workdir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", workdir);
		if (system(cmd) != 0)
			printf("# cannot remove %s\n", workdir);
	}
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

static bool setup(void)
{
	char src[600], cmd[2048], exe[2048];
	const char *b = getenv("VT_BUILD");
	ssize_t n;

	if (setup_state)
		return setup_state > 0;
	setup_state = -1;
	if (b && *b) {
		snprintf(agent_so, sizeof(agent_so), "%s/agent/libvitals-agent.so", b);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return false;
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';              /* <build>/tests */
		snprintf(agent_so, sizeof(agent_so), "%s/../agent/libvitals-agent.so", exe);
	}
	if (access(agent_so, R_OK) != 0) {
		printf("# no agent at %s: build it first\n", agent_so);
		return false;
	}
	snprintf(allocs_so, sizeof(allocs_so), "%.*s/libvitals-agent-allocs.so",
		 (int)(strrchr(agent_so, '/') - agent_so), agent_so);
	if (access(allocs_so, R_OK) != 0) {
		printf("# no agent at %s: build it first\n", allocs_so);
		return false;
	}
	snprintf(workdir, sizeof(workdir), "/tmp/vt-test-agent.XXXXXX");
	if (!mkdtemp(workdir)) {
		workdir[0] = '\0';
		return false;
	}
	atexit(cleanup_workdir);
	snprintf(src, sizeof(src), "%s/host.c", workdir);
	snprintf(host_bin, sizeof(host_bin), "%s/host", workdir);
	if (!write_file(src, host_src))
		return false;
	snprintf(cmd, sizeof(cmd), "cc -std=gnu11 -O1 -o '%s' '%s'", host_bin, src);
	if (system(cmd) != 0) {
		printf("# cannot compile the host program with cc\n");
		return false;
	}
	snprintf(src, sizeof(src), "%s/shim.c", workdir);
	snprintf(shim_so, sizeof(shim_so), "%s/shim.so", workdir);
	if (!write_file(src, shim_src))
		return false;
	snprintf(cmd, sizeof(cmd), "cc -O1 -fPIC -shared -o '%s' '%s'", shim_so, src);
	if (system(cmd) != 0)
		return false;
	snprintf(src, sizeof(src), "%s/ahost.c", workdir);
	snprintf(ahost_bin, sizeof(ahost_bin), "%s/ahost", workdir);
	if (!write_file(src, ahost_src))
		return false;
	snprintf(cmd, sizeof(cmd), "cc -std=gnu11 -O1 -pthread -o '%s' '%s'", ahost_bin, src);
	if (system(cmd) != 0) {
		printf("# cannot compile the sampler's host program with cc\n");
		return false;
	}
	setup_state = 1;
	return true;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* environ without our variables and XDG_RUNTIME_DIR, plus LD_PRELOAD=preload and extra. */
static char **child_env(const char *preload, const char *const *extra)
{
	static char ld[8192];
	char **env;
	size_t n = 0, i, k = 0;

	while (environ[n])
		n++;
	env = calloc(n + 16, sizeof(*env));
	if (!env)
		abort();
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "VITALS_AGENT", 12) != 0 &&
		    strncmp(environ[i], "XDG_RUNTIME_DIR=", 16) != 0)
			env[k++] = environ[i];
	if (preload) {
		snprintf(ld, sizeof(ld), "LD_PRELOAD=%s", preload);
		env[k++] = ld;
	}
	for (i = 0; extra && extra[i] && i < 8; i++)
		env[k++] = (char *)extra[i];
	env[k] = NULL;
	return env;
}

/* Read the host's "ready PID UORD" line. */
static bool read_ready(struct host *h, int timeout_ms)
{
	char line[128];
	size_t n = 0;
	long long deadline = now_ms() + timeout_ms;
	unsigned long long uord;

	while (n + 1 < sizeof(line)) {
		struct pollfd p = { .fd = h->out, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return false;
		k = read(h->out, line + n, 1);
		if (k <= 0)
			return false;
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	if (sscanf(line, "ready %ld %llu", &h->ns_pid, &uord) != 2)
		return false;
	h->uord = uord;
	return true;
}

typedef void (*before_exec_fn)(pid_t pid, void *arg);

/*
 * Start argv with the agent preloaded (unless preload is NULL) and extra
 * environment.  before(pid) runs after fork and before the child execs.
 * wait_ready: argv is the host program; wait for its ready line.
 */
static bool host_start(struct host *h, const char *const *argv, const char *preload,
		       const char *const *extra, before_exec_fn before, void *arg, bool wait_ready)
{
	int in[2], out[2], go[2];
	char **env = child_env(preload, extra);
	char c = 0;

	memset(h, 0, sizeof(*h));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
		abort();
	fflush(stdout);
	h->pid = fork();
	if (h->pid < 0)
		abort();
	if (h->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execve(argv[0], (char *const *)argv, env);
		_exit(127);
	}
	free(env);
	h->waiter = h->pid;
	close(in[0]);
	close(out[1]);
	close(go[0]);
	h->in = in[1];
	h->out = out[0];
	if (before)
		before(h->pid, arg);
	if (write(go[1], &c, 1) != 1)
		abort();
	close(go[1]);
	return !wait_ready || read_ready(h, 5000);
}

/* Close its stdin and wait: its exit status, 128+signal, or -1 if it hung (then killed). */
static int host_stop(struct host *h)
{
	long long deadline = now_ms() + 5000;
	int st;

	if (h->in >= 0)
		close(h->in);
	if (h->out >= 0)
		close(h->out);
	h->in = h->out = -1;
	for (;;) {
		pid_t r = waitpid(h->waiter, &st, WNOHANG);
		if (r == h->waiter)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0)
			return -1;
		if (now_ms() > deadline) {
			kill(h->waiter, SIGKILL);
			kill(h->pid, SIGKILL);
			waitpid(h->waiter, &st, 0);
			return -1;
		}
		sleep_ms(10);
	}
}

static int find(pid_t pid, char *path, size_t cap)
{
	struct vt_procfs pfs;
	struct vt_err err;
	int rc;

	if (vt_procfs_open(&pfs, NULL, NULL, &err))
		return -1;
	rc = vt_agent_find(&pfs, pid, geteuid(), path, cap);
	vt_procfs_close(&pfs);
	return rc;
}

/* The socket appears within timeout_ms (for hosts that print nothing). */
static int find_wait(pid_t pid, char *path, size_t cap, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	int rc;

	while ((rc = find(pid, path, cap)) == VT_E_NOTFOUND && now_ms() < deadline)
		sleep_ms(10);
	return rc;
}

static uint64_t rss_anon(pid_t pid)
{
	struct vt_buf buf = VT_BUF_INIT(1 << 20);
	struct vt_proc_status st;
	struct vt_procfs pfs;
	uint64_t v = VT_NA;
	int dirfd;

	if (vt_procfs_open(&pfs, NULL, NULL, NULL))
		return VT_NA;
	if (vt_pid_open(&pfs, pid, &dirfd, NULL) == VT_OK) {
		if (vt_read_at(dirfd, "status", &buf, NULL) == VT_OK &&
		    vt_proc_status_parse(buf.data, buf.len, &st, NULL) == VT_OK)
			v = st.rss_anon;
		close(dirfd);
	}
	vt_buf_release(&buf);
	vt_procfs_close(&pfs);
	return v;
}

/*
 * The host's threads: how many, and whether one is named "vitals-agent"
 * with SIGINT, SIGTERM, SIGPIPE, SIGCHLD and SIGUSR1 blocked.
 */
static void agent_thread(pid_t pid, int *threads, bool *named, bool *blocked)
{
	char dir[64], file[400], buf[4096];
	struct dirent *de;
	DIR *d;

	*threads = 0;
	*named = *blocked = false;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	while (d && (de = readdir(d)) != NULL) {
		FILE *f;
		char *sig;

		if (de->d_name[0] == '.')
			continue;
		(*threads)++;
		snprintf(file, sizeof(file), "%s/%s/comm", dir, de->d_name);
		f = fopen(file, "r");
		if (!f || !fgets(buf, sizeof(buf), f) || strcmp(buf, "vitals-agent\n") != 0) {
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		*named = true;
		snprintf(file, sizeof(file), "%s/%s/status", dir, de->d_name);
		f = fopen(file, "r");
		while (f && fgets(buf, sizeof(buf), f)) {
			unsigned long long mask;
			sig = strstr(buf, "SigBlk:");
			if (sig && sscanf(sig + 7, "%llx", &mask) == 1) {
#define BIT(s) (1ull << ((s) - 1))
				unsigned long long want = BIT(SIGINT) | BIT(SIGTERM) | BIT(SIGPIPE) |
							  BIT(SIGCHLD) | BIT(SIGUSR1) | BIT(SIGHUP);
#undef BIT
				*blocked = (mask & want) == want;
			}
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

static void dir_path(char *out, size_t cap)
{
	snprintf(out, cap, VT_AGENT_DIR_FMT, (unsigned)geteuid());
}

static void sock_path(pid_t pid, char *out, size_t cap)
{
	snprintf(out, cap, VT_AGENT_DIR_FMT "/" VT_AGENT_SOCK_FMT, (unsigned)geteuid(), (int)pid);
}

/* A Unix socket bound at path: listening (returns its fd) or closed (stale, returns -2). */
static int plant_socket(const char *path, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[128];
	int fd;

	dir_path(dir, sizeof(dir));
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	unlink(path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	if (listening) {
		if (listen(fd, 4) < 0)
			return -1;
		return fd;
	}
	close(fd);
	return -2;
}

/* Connect without any check, for the hostile clients. */
static int raw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Read until EOF/error or timeout into buf (NUL-terminated). */
static size_t raw_read_all(int fd, char *buf, size_t cap, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		k = recv(fd, buf + n, cap - 1 - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	return n;
}

/* One exchange with the agent, by hand: the raw reply. */
static size_t raw_exchange(const char *path, const char *req, size_t len, char *buf, size_t cap)
{
	int fd = raw_connect(path);
	size_t n = 0;

	buf[0] = '\0';
	if (fd < 0)
		return 0;
	if (send(fd, req, len, MSG_NOSIGNAL) == (ssize_t)len)
		n = raw_read_all(fd, buf, cap, 5000);
	close(fd);
	return n;
}

/* A normal query must work: the agent is still alive. */
static void check_query_ok(pid_t pid, const char *path)
{
	struct vt_agent_reply r;
	struct vt_err err;
	int rc = vt_agent_query(path, pid, false, VT_AGENT_CLIENT_TIMEOUT_MS, &r, &err);

	CHECK_EQ_I64(rc, VT_OK);
	if (rc)
		printf("#   query: %s\n", err.msg);
	CHECK(r.mi.uordblks > 0);
	vt_agent_reply_release(&r);
}

#define HOST(...) ((const char *const[]){ host_bin, __VA_ARGS__, NULL })

static void test_agent__heap_figures(void)
{
	struct vt_agent_reply r;
	struct vt_malloc_info mi;
	struct vt_err err;
	struct host h;
	char path[512];
	bool named, blocked;
	long long deadline;
	int threads;

	if (!setup()) {
		CHECK(!"setup");
		return;
	}
	/* 100 live blocks of 10 000 bytes: 1 MB in the main arena. */
	CHECK(host_start(&h, HOST("100", "10000", "1", "-"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(h.ns_pid, h.pid);
	/* The listener names itself once running, which may be after "ready". */
	for (deadline = now_ms() + 2000;; sleep_ms(10)) {
		agent_thread(h.pid, &threads, &named, &blocked);
		if ((named && blocked) || now_ms() > deadline)
			break;
	}
	CHECK_EQ_I64(threads, 2);              /* the host's own thread + one listener */
	CHECK(named);
	CHECK(blocked);
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK(strstr(path, "/root/tmp/vitals-agent-") != NULL);
	CHECK_EQ_I64(vt_agent_query(path, h.pid, false, VT_AGENT_CLIENT_TIMEOUT_MS, &r, &err), VT_OK);
	CHECK_EQ_I64(r.version, 1);
	CHECK_EQ_I64(r.pid, h.pid);
	CHECK_STR(r.glibc, gnu_get_libc_version());
	/*
	 * The host is idle in read(): its own mallinfo2 and the agent's must be
	 * equal to the byte, which also shows the agent's thread allocated nothing.
	 */
	CHECK_EQ_U64(r.mi.uordblks, h.uord);
	CHECK(r.mi.uordblks >= 100 * 10000);
	CHECK(r.mi.uordblks < 100 * 10000 + 256 * 1024);
	CHECK_EQ_U64(r.mi.uordblks + r.mi.fordblks, r.mi.arena);
	CHECK(r.took_us < 5000000);   /* a sanity bound, not a speed goal */
	CHECK(!r.has_trim);
	CHECK(r.malloc_info_xml && r.malloc_info_len == strlen(r.malloc_info_xml));
	CHECK_EQ_I64(vt_malloc_info_parse(r.malloc_info_xml, r.malloc_info_len, &mi, &err), VT_OK);
	/* One arena: the agent's thread did not get one of its own. */
	CHECK_EQ_U64(mi.n_arenas, 1);
	if (mi.n_arenas == 1)
		CHECK_EQ_U64(mi.arenas[0].t.system_current, r.mi.arena);
	vt_malloc_info_release(&mi);
	vt_agent_reply_release(&r);
	vt_agent_reply_release(&r);     /* twice is harmless */
	vt_agent_reply_release(NULL);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__sleep_exits_and_removes_socket(void)
{
	const char *const argv[] = { "/bin/sleep", "1", NULL };
	char path[512], plain[256];
	struct host h;

	if (!setup())
		return;
	CHECK(host_start(&h, argv, agent_so, NULL, NULL, NULL, false));
	CHECK_EQ_I64(find_wait(h.pid, path, sizeof(path), 3000), VT_OK);
	check_query_ok(h.pid, path);
	sock_path(h.pid, plain, sizeof(plain));
	CHECK(access(plain, F_OK) == 0);
	CHECK_EQ_I64(host_stop(&h), 0);
	CHECK(access(plain, F_OK) != 0 && errno == ENOENT);    /* unlinked at exit */
}

static void test_agent__trim_refused_without_env(void)
{
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;
	char path[512];

	if (!setup())
		return;
	CHECK(host_start(&h, HOST("300", "100000", "10", "-"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK_EQ_I64(vt_agent_query(path, h.pid, true, VT_AGENT_CLIENT_TIMEOUT_MS, &r, &err),
		     VT_E_UNSUPPORTED);
	CHECK(strstr(err.msg, "trim not allowed") != NULL);
	CHECK(strstr(err.msg, "VITALS_AGENT_ALLOW_TRIM=1") != NULL);
	CHECK(r.malloc_info_xml == NULL);
	vt_agent_reply_release(&r);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__trim_with_env(void)
{
	const char *const env[] = { "VITALS_AGENT_ALLOW_TRIM=1", NULL };
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;
	uint64_t rss_before, rss_after;
	char path[512];
	int rc;

	if (!setup())
		return;
	/* 300 blocks of 100 kB, 9 in 10 freed: ~27 MB of free holes below a live top. */
	CHECK(host_start(&h, HOST("300", "100000", "10", "-"), agent_so, env, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	rss_before = rss_anon(h.pid);
	rc = vt_agent_query(path, h.pid, true, VT_AGENT_CLIENT_TIMEOUT_MS, &r, &err);
	CHECK_EQ_I64(rc, VT_OK);
	if (rc)
		printf("#   %s\n", err.msg);
	rss_after = rss_anon(h.pid);
	CHECK(r.has_trim);
	CHECK_EQ_I64(r.trim.returned, 1);
	CHECK_EQ_U64(r.mi.uordblks, h.uord);
	CHECK(r.trim.before.fordblks > 20u << 20);
	CHECK_EQ_U64(r.trim.after.uordblks, r.trim.before.uordblks);   /* live data untouched */
	CHECK(r.trim.took_us < 10000000);   /* a sanity bound */
	CHECK(vt_known(rss_before) && vt_known(rss_after));
	CHECK(rss_after + (15u << 20) < rss_before);                   /* pages went back */
	printf("#   trim: RssAnon %" PRIu64 " -> %" PRIu64 " kB in %" PRIu64 " us\n",
	       rss_before >> 10, rss_after >> 10, r.trim.took_us);
	vt_agent_reply_release(&r);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void plant_stale(pid_t pid, void *arg)
{
	char path[256];

	(void)arg;
	sock_path(pid, path, sizeof(path));
	CHECK_EQ_I64(plant_socket(path, false), -2);
}

static void test_agent__stale_socket(void)
{
	const char *const off[] = { "VITALS_AGENT=0", NULL };
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;
	char path[512], plain[256];
	struct stat st;

	if (!setup())
		return;
	/* Agent side: a stale socket named for the host's pid is replaced. */
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, NULL, plant_stale, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	check_query_ok(h.pid, path);
	sock_path(h.pid, plain, sizeof(plain));
	CHECK(stat(plain, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_EQ_I64(host_stop(&h), 0);

	/* Client side: a stale file for a live process without agent is "not found". */
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, off, plant_stale, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);      /* the file is there... */
	CHECK_EQ_I64(vt_agent_query(path, h.pid, false, 2000, &r, &err), VT_E_NOTFOUND);
	CHECK(strstr(err.msg, "stale") != NULL);                    /* ...nobody listens */
	vt_agent_reply_release(&r);
	sock_path(h.pid, plain, sizeof(plain));
	unlink(plain);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__wrong_peer_rejected(void)
{
	const char *const off[] = { "VITALS_AGENT=0", NULL };
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;
	char path[512], plain[256];
	int lfd;

	if (!setup())
		return;
	/* A socket named for the host, but served by this test process. */
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, off, NULL, NULL, true));
	sock_path(h.pid, plain, sizeof(plain));
	lfd = plant_socket(plain, true);
	CHECK(lfd >= 0);
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK_EQ_I64(vt_agent_query(path, h.pid, false, 2000, &r, &err), VT_E_NOTFOUND);
	CHECK(strstr(err.msg, "not its agent") != NULL);
	vt_agent_reply_release(&r);
	if (lfd >= 0)
		close(lfd);
	unlink(plain);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__disabled(void)
{
	const char *const off[] = { "VITALS_AGENT=0", NULL };
	const char *const argv[] = { "/bin/sleep", "0.3", NULL };
	char path[512], plain[256];
	struct host h;

	if (!setup())
		return;
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, off, NULL, NULL, true));
	/* The constructor ran before main printed "ready". */
	sock_path(h.pid, plain, sizeof(plain));
	CHECK(access(plain, F_OK) != 0);
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_E_NOTFOUND);
	CHECK(strstr(path, ".sock") != NULL);                     /* the place looked at */
	CHECK_EQ_I64(find(0x3ffffff0, path, sizeof(path)), VT_E_NOPROC);
	CHECK_EQ_I64(host_stop(&h), 0);

	CHECK(host_start(&h, argv, agent_so, off, NULL, NULL, false));
	sleep_ms(100);
	sock_path(h.pid, plain, sizeof(plain));
	CHECK(access(plain, F_OK) != 0);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__silent_client(void)
{
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;
	char path[512], buf[1024];
	long long t0, took;
	int fd, rc;

	if (!setup())
		return;
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	fd = raw_connect(path);                 /* connects, then says nothing */
	CHECK(fd >= 0);
	sleep_ms(50);
	t0 = now_ms();
	rc = vt_agent_query(path, h.pid, false, VT_AGENT_CLIENT_TIMEOUT_MS, &r, &err);
	took = now_ms() - t0;
	CHECK_EQ_I64(rc, VT_OK);                /* served after the silent one timed out */
	CHECK(took >= VT_AGENT_READ_TIMEOUT_MS / 2 && took < VT_AGENT_READ_TIMEOUT_MS * 3);
	vt_agent_reply_release(&r);
	if (fd >= 0) {
		raw_read_all(fd, buf, sizeof(buf), 100);
		CHECK(strstr(buf, "no request line") != NULL);
		close(fd);
	}
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__garbage_client(void)
{
	static char junk[1 << 20];
	struct host h;
	char path[512], buf[4096];
	size_t sent = 0;
	long long deadline;
	int fd;

	if (!setup())
		return;
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);

	/* 1 MiB without a newline: the agent reads 4 KiB, answers, hangs up. */
	memset(junk, 'x', sizeof(junk));
	fd = raw_connect(path);
	CHECK(fd >= 0);
	deadline = now_ms() + 5000;
	while (fd >= 0 && sent < sizeof(junk) && now_ms() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t k;

		if (poll(&p, 1, 100) <= 0)
			continue;
		k = send(fd, junk + sent, sizeof(junk) - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k < 0)
			break;                  /* EPIPE/ECONNRESET: the agent hung up */
		sent += (size_t)k;
	}
	CHECK(sent < sizeof(junk));             /* it did not swallow the megabyte */
	if (fd >= 0) {
		raw_read_all(fd, buf, sizeof(buf), 2000);
		CHECK(strstr(buf, "longer than 4096") != NULL);
		close(fd);
	}

	/* Binary bytes with NULs and a newline. */
	{
		static const char bin[] = "\x00\xff{\"v\":1\x01\n";
		raw_exchange(path, bin, sizeof(bin) - 1, buf, sizeof(buf));
		CHECK(strstr(buf, "\"error\"") != NULL);
	}
	/* Connect and hang up at once. */
	fd = raw_connect(path);
	if (fd >= 0)
		close(fd);
	/* Ask, then hang up before the reply: the agent's send must not raise SIGPIPE. */
	fd = raw_connect(path);
	if (fd >= 0) {
		static const char req[] = "{\"v\":1,\"want\":\"heap\"}\n";
		CHECK(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) == (ssize_t)sizeof(req) - 1);
		close(fd);
		sleep_ms(50);
	}

	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__bad_requests(void)
{
	static const struct {
		const char *req;
		const char *words;
	} cases[] = {
		{ "hello\n", "not a JSON object" },
		{ "{\"v\":2,\"want\":\"heap\"}\n", "unsupported protocol version 2" },
		{ "{\"want\":\"heap\"}\n", "no \\\"v\\\"" },
		{ "{\"v\":1}\n", "no \\\"want\\\"" },
		{ "{\"v\":1,\"want\":\"stack\"}\n", "unknown want" },
		{ "{\"v\":1,\"want\":\"heap\",\"trim\":1}\n", "must be true or false" },
		{ "{\"v\":1,\"want\":{\"heap\":1}}\n", "must be strings" },
		{ "{\"v\":1,\"want\":\"heap\"\n", "not valid JSON" },
		{ "{\"v\":1.5,\"want\":\"heap\"}\n", "must be an integer" },
		{ "{\"v\":1,\"want\":\"heap\"} x\n", "not valid JSON" },
		{ "\n", "not a JSON object" },
	};
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;
	char path[512], buf[4096];
	size_t i, n;

	if (!setup())
		return;
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = raw_exchange(path, cases[i].req, strlen(cases[i].req), buf, sizeof(buf));
		if (!strstr(buf, cases[i].words)) {
			printf("#   request %zu: %s", i, buf);
			CHECK(!"error reply");
		}
		/* The client maps every error reply to UNSUPPORTED with the agent's words. */
		CHECK_EQ_I64(vt_agent_reply_parse(buf, n, false, &r, &err), VT_E_UNSUPPORTED);
		CHECK(strncmp(err.msg, "agent: ", 7) == 0);
		vt_agent_reply_release(&r);
	}
	/* Unknown members are ignored; no newline but end of stream ends the line. */
	{
		static const char ok[] = "{ \"v\" : 1 , \"x\":null, \"want\" : \"heap\", \"y\":-2e3 }";
		int fd = raw_connect(path);
		CHECK(fd >= 0);
		if (fd >= 0) {
			CHECK(send(fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL) == (ssize_t)sizeof(ok) - 1);
			shutdown(fd, SHUT_WR);
			n = raw_read_all(fd, buf, sizeof(buf), 5000);
			close(fd);
			/* Too long for buf: only check it is not an error reply. */
			CHECK(n > 0 && strstr(buf, "\"mallinfo2\"") != NULL);
		}
	}
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__fork_child_leaves_socket(void)
{
	struct host h;
	char path[512];

	if (!setup())
		return;
	/* The host forks a child that exits (running atexit) before "ready". */
	CHECK(host_start(&h, HOST("10", "1000", "1", "fork"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__not_glibc_malloc(void)
{
	char preload[8192], path[512];
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;

	if (!setup())
		return;
	snprintf(preload, sizeof(preload), "%s %s", shim_so, agent_so);
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), preload, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK_EQ_I64(vt_agent_query(path, h.pid, false, VT_AGENT_CLIENT_TIMEOUT_MS, &r, &err),
		     VT_E_UNSUPPORTED);
	CHECK(strstr(err.msg, "not glibc malloc") != NULL);
	vt_agent_reply_release(&r);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/*
 * Start the host as pid 1 of a new pid namespace with its own /tmp (a new
 * mount namespace): what a container looks like from the host.  tmp says
 * what /tmp/vitals-agent-<euid> is before the host starts; xdg: the host
 * gets XDG_RUNTIME_DIR=/tmp/xdg (a directory of its user, mode 0700).
 * Returns 1 started, 0 no namespaces here (skip), -1 failure.
 */
enum ns_tmp {
	NS_TMP_NONE,        /* absent */
	NS_TMP_OPEN,        /* ours, mode 0755 */
	NS_TMP_FOREIGN,     /* another user's (65534), mode 0777: squatted */
	NS_TMP_SYMLINK,     /* a symbolic link to /tmp/elsewhere, ours, mode 0700 */
};

/* Make /tmp/vitals-agent-<euid> what tmp says (in the host's mount namespace). */
static bool ns_tmp_prepare(enum ns_tmp tmp)
{
	char dir[128];

	dir_path(dir, sizeof(dir));
	switch (tmp) {
	case NS_TMP_NONE:
		return true;
	case NS_TMP_OPEN:
		return mkdir(dir, 0755) == 0 && chmod(dir, 0755) == 0;
	case NS_TMP_FOREIGN:
		return mkdir(dir, 0777) == 0 && chmod(dir, 0777) == 0 && chown(dir, 65534, 65534) == 0;
	case NS_TMP_SYMLINK:
		/* relative: followed the same way through /proc/<pid>/root */
		return mkdir("/tmp/elsewhere", 0700) == 0 && symlink("elsewhere", dir) == 0;
	}
	return false;
}

static int ns_host_start(struct host *h, enum ns_tmp tmp, bool xdg)
{
	int in[2], out[2], info[2], exe;
	char **env = child_env(agent_so, NULL);
	const char *const argv[] = { "host", "10", "1000", "1", "-", NULL };
	pid_t g = 0;
	ssize_t k;
	int st;

	memset(h, 0, sizeof(*h));
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(info, O_CLOEXEC))
		abort();
	exe = open(host_bin, O_RDONLY | O_CLOEXEC);
	if (exe < 0)
		return -1;
	fflush(stdout);
	h->waiter = fork();
	if (h->waiter == 0) {
		/* Our copies of the parent's pipe ends would keep the host's stdin open. */
		close(in[1]);
		close(out[0]);
		close(info[0]);
		if (unshare(CLONE_NEWNS | CLONE_NEWPID) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(77);
		g = fork();
		if (g == 0) {
			const char *const with_xdg[] = { "XDG_RUNTIME_DIR=/tmp/xdg", NULL };
			char so_path[64];
			/* The build may live under /tmp, which the new tmpfs hides:
			 * preload the agent through an fd opened before the mount. */
			int so = open(agent_so, O_RDONLY);
			if (so < 0)
				_exit(80);
			snprintf(so_path, sizeof(so_path), "/proc/self/fd/%d", so);
			free(env);
			env = child_env(so_path, xdg ? with_xdg : NULL);
			if (mount("tmpfs", "/tmp", "tmpfs", 0, "mode=1777") < 0)
				_exit(78);
			if (!ns_tmp_prepare(tmp))
				_exit(79);
			if (xdg && (mkdir("/tmp/xdg", 0700) < 0 || chmod("/tmp/xdg", 0700) < 0))
				_exit(79);
			dup2(in[0], 0);
			dup2(out[1], 1);
			fexecve(exe, (char *const *)argv, env);
			_exit(127);
		}
		close(in[0]);
		close(out[1]);
		if (write(info[1], &g, sizeof(g)) != sizeof(g))
			_exit(125);
		if (g < 0 || waitpid(g, &st, 0) != g)
			_exit(124);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	free(env);
	close(exe);
	close(in[0]);
	close(out[1]);
	close(info[1]);
	h->in = in[1];
	h->out = out[0];
	k = read(info[0], &g, sizeof(g));
	close(info[0]);
	if (k != sizeof(g)) {
		h->pid = h->waiter;
		st = host_stop(h);
		if (st == 77)
			return 0;
		printf("#   namespace set-up failed: %d\n", st);
		return -1;
	}
	h->pid = g;
	if (!read_ready(h, 5000)) {
		host_stop(h);
		return -1;
	}
	return 1;
}

static void test_agent__pid_and_mount_namespace(void)
{
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;
	char path[512], expect[128];
	int rc;

	if (!setup())
		return;
	rc = ns_host_start(&h, NS_TMP_NONE, false);
	if (rc == 0) {
		printf("# skip: cannot create pid and mount namespaces here\n");
		return;
	}
	CHECK_EQ_I64(rc, 1);
	if (rc != 1)
		return;
	CHECK_EQ_I64(h.ns_pid, 1);             /* pid 1 inside, h.pid outside */
	CHECK(h.pid != 1);
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	snprintf(expect, sizeof(expect), "/%d/root/tmp/vitals-agent-%u/1.sock", (int)h.pid,
		 (unsigned)geteuid());
	CHECK(strstr(path, expect) != NULL);
	rc = vt_agent_query(path, h.pid, false, VT_AGENT_CLIENT_TIMEOUT_MS, &r, &err);
	CHECK_EQ_I64(rc, VT_OK);
	if (rc)
		printf("#   %s\n", err.msg);
	CHECK_EQ_I64(r.pid, 1);
	CHECK_EQ_U64(r.mi.uordblks, h.uord);
	vt_agent_reply_release(&r);
	CHECK_EQ_I64(host_stop(&h), 0);
}

static void test_agent__refuses_open_directory(void)
{
	struct host h;
	char path[512], sock[512];
	struct stat st;
	int rc;

	if (!setup())
		return;
	rc = ns_host_start(&h, NS_TMP_OPEN, false);
	if (rc == 0) {
		printf("# skip: cannot create pid and mount namespaces here\n");
		return;
	}
	CHECK_EQ_I64(rc, 1);
	if (rc != 1)
		return;
	/* The directory is there, 0755: the agent must not have put a socket in it. */
	snprintf(path, sizeof(path), "/proc/%d/root" VT_AGENT_DIR_FMT, (int)h.pid, (unsigned)geteuid());
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0755);
	CHECK_EQ_I64(find(h.pid, sock, sizeof(sock)), VT_E_NOTFOUND);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* A listening socket bound at path, or -1. */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* One exchange ended by shutdown(SHUT_WR) instead of a newline. */
static size_t raw_exchange_eof(const char *path, const char *req, size_t len, char *buf, size_t cap)
{
	int fd = raw_connect(path);
	size_t n = 0;

	buf[0] = '\0';
	if (fd < 0)
		return 0;
	if (send(fd, req, len, MSG_NOSIGNAL) == (ssize_t)len && shutdown(fd, SHUT_WR) == 0)
		n = raw_read_all(fd, buf, cap, 5000);
	close(fd);
	return n;
}

/* A valid request of exactly len bytes (padded by an ignored member), then tail. */
static size_t padded_request(char *req, size_t len, const char *tail)
{
	static const char head[] = "{\"v\":1,\"want\":\"heap\",\"pad\":\"";
	size_t pad = len - (sizeof(head) - 1) - 2;

	memcpy(req, head, sizeof(head) - 1);
	memset(req + sizeof(head) - 1, 'x', pad);
	memcpy(req + len - 2, "\"}", 2);
	memcpy(req + len, tail, strlen(tail));
	return len + strlen(tail);
}

/* A request is at most 4,096 bytes with its '\n'; the end of the stream ends it as well. */
static void test_agent__request_size_limit(void)
{
	static const struct {
		size_t len;          /* the JSON object's bytes */
		const char *tail;    /* then this */
		bool eof;            /* then shutdown(SHUT_WR) */
		bool ok;
	} cases[] = {
		{ 4096, "", true, true },       /* exactly 4,096 bytes, ended by EOF */
		{ 4095, "\n", false, true },    /* 4,095 and the newline */
		{ 4095, "\n", true, true },
		{ 4096, "\n", true, false },    /* 4,097 with the newline */
		{ 4096, "\n", false, false },
		{ 4097, "", true, false },
		{ 4000, "", true, true },
	};
	static char req[8192];
	char path[512], buf[4096];
	struct host h;
	size_t i, n;

	if (!setup())
		return;
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = padded_request(req, cases[i].len, cases[i].tail);
		if (cases[i].eof)
			raw_exchange_eof(path, req, n, buf, sizeof(buf));
		else
			raw_exchange(path, req, n, buf, sizeof(buf));
		if (cases[i].ok ? !strstr(buf, "\"mallinfo2\"") : !strstr(buf, "longer than 4096 bytes")) {
			printf("#   %zu bytes + '%s'%s: %.160s\n", cases[i].len,
			       cases[i].tail[0] ? "\\n" : "", cases[i].eof ? " + EOF" : "", buf);
			CHECK(!"request size limit");
		}
	}
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* With XDG_RUNTIME_DIR of its own, the agent listens there; vitals finds it from environ. */
static void test_agent__xdg_runtime_dir(void)
{
	char xdg[400], env_xdg[420], path[512], plain[256], expect[512];
	const char *const env[] = { env_xdg, NULL };
	struct stat st;
	struct host h;

	if (!setup())
		return;
	snprintf(xdg, sizeof(xdg), "%s/xdg", workdir);
	CHECK(mkdir(xdg, 0700) == 0);
	snprintf(env_xdg, sizeof(env_xdg), "XDG_RUNTIME_DIR=%s", xdg);
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, env, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	snprintf(expect, sizeof(expect), "%s/vitals-agent/%d.sock", xdg, (int)h.pid);
	if (!strstr(path, expect)) {
		printf("#   found '%s', want '...%s'\n", path, expect);
		CHECK(!"socket in XDG_RUNTIME_DIR");
	}
	snprintf(expect, sizeof(expect), "%s/vitals-agent", xdg);
	CHECK(lstat(expect, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	sock_path(h.pid, plain, sizeof(plain));
	CHECK(access(plain, F_OK) != 0);                   /* not in /tmp */
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);

	/* An XDG_RUNTIME_DIR open to others is not used: /tmp, and vitals agrees. */
	CHECK(chmod(xdg, 0755) == 0);
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, env, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK(strstr(path, "/tmp/vitals-agent-") != NULL);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/*
 * Another user created /tmp/vitals-agent-<euid> first (mode 0777) and put a
 * listening socket named for the target in it.  The agent must not serve
 * from it but from XDG_RUNTIME_DIR when it has one, and vitals must not
 * even connect to the planted socket.
 */
static void test_agent__squatted_tmp_dir(void)
{
	char path[512], planted[512];
	struct host h;
	int rc, lfd;

	if (!setup())
		return;
	rc = ns_host_start(&h, NS_TMP_FOREIGN, true);
	if (rc == 0) {
		printf("# skip: cannot create pid and mount namespaces here\n");
		return;
	}
	CHECK_EQ_I64(rc, 1);
	if (rc != 1)
		return;
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK(strstr(path, "/root/tmp/xdg/vitals-agent/1.sock") != NULL);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);

	/* Without XDG_RUNTIME_DIR: silent, and the planted socket is not taken for it. */
	rc = ns_host_start(&h, NS_TMP_FOREIGN, false);
	CHECK_EQ_I64(rc, 1);
	if (rc != 1)
		return;
	snprintf(planted, sizeof(planted), "/proc/%d/root" VT_AGENT_DIR_FMT "/1.sock", (int)h.pid,
		 (unsigned)geteuid());
	lfd = listen_at(planted);
	CHECK(lfd >= 0);
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_E_NOTFOUND);
	if (lfd >= 0)
		close(lfd);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* /tmp/vitals-agent-<euid> is a symbolic link: the agent does not follow it, nor does vitals. */
static void test_agent__symlinked_tmp_dir(void)
{
	char path[512], planted[512], where[512];
	struct host h;
	int rc, lfd;

	if (!setup())
		return;
	rc = ns_host_start(&h, NS_TMP_SYMLINK, false);
	if (rc == 0) {
		printf("# skip: cannot create pid and mount namespaces here\n");
		return;
	}
	CHECK_EQ_I64(rc, 1);
	if (rc != 1)
		return;
	snprintf(where, sizeof(where), "/proc/%d/root/tmp/elsewhere/1.sock", (int)h.pid);
	CHECK(access(where, F_OK) != 0);               /* the agent did not bind there */
	snprintf(planted, sizeof(planted), "/proc/%d/root/tmp/elsewhere/1.sock", (int)h.pid);
	lfd = listen_at(planted);
	CHECK(lfd >= 0);
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_E_NOTFOUND);
	if (lfd >= 0)
		close(lfd);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/*
 * A client of another uid is refused by the agent itself.  The client keeps
 * root's capabilities while its euid is 65534 (SECBIT_NO_SETUID_FIXUP), so
 * the 0700 directory does not stop it: only the agent's SO_PEERCRED check
 * can.  Needs root.
 */
static void test_agent__other_uid_refused(void)
{
	char path[512], buf[4096];
	struct vt_agent_reply r;
	struct vt_err err;
	struct host h;
	pid_t c;
	int st, fd;

	if (!setup())
		return;
	if (geteuid() != 0) {
		printf("# skip: needs root to connect as another uid\n");
		return;
	}
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	fflush(stdout);
	c = fork();
	if (c == 0) {
		static const char req[] = "{\"v\":1,\"want\":\"heap\"}\n";

		if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP) < 0 || setresuid(-1, 65534, -1) < 0)
			_exit(77);
		fd = raw_connect(path);
		if (fd < 0) {
			printf("#   as uid 65534: cannot connect: %s\n", strerror(errno));
			fflush(stdout);
			_exit(3);
		}
		/* The agent may answer and hang up before the request is sent. */
		if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
			_exit(4);
		raw_read_all(fd, buf, sizeof(buf), 5000);
		close(fd);
		if (strstr(buf, "\"mallinfo2\"") || !strstr(buf, "permission denied: uid 65534")) {
			printf("#   as uid 65534: %.200s\n", buf);
			fflush(stdout);
			_exit(1);
		}
		/* vitals' own client reports the agent's words. */
		if (vt_agent_query(path, h.pid, false, 2000, &r, &err) != VT_E_UNSUPPORTED ||
		    !strstr(err.msg, "agent: permission denied")) {
			printf("#   as uid 65534, vt_agent_query: %s\n", err.msg);
			fflush(stdout);
			_exit(5);
		}
		_exit(0);
	}
	CHECK(c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st));
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		printf("# skip: cannot keep capabilities across setresuid here\n");
	else
		CHECK_EQ_I64(WEXITSTATUS(st), 0);
	check_query_ok(h.pid, path);                    /* root is still served */
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* The exported C API, loaded into this process (the listener disabled). */
static void test_agent__json_api(void)
{
	int (*fn)(char **, size_t *);
	struct vt_agent_reply r;
	struct vt_err err;
	char *json = NULL;
	size_t len = 1;
	void *h;
	int rc;

	if (!setup())
		return;
	setenv("VITALS_AGENT", "0", 1);
	h = dlopen(agent_so, RTLD_NOW | RTLD_LOCAL);
	unsetenv("VITALS_AGENT");
	CHECK(h != NULL);
	if (!h)
		return;
	fn = (int (*)(char **, size_t *))dlsym(h, "vitals_agent_json");
	CHECK(fn != NULL);
	CHECK(dlsym(h, "agent_core_answer") == NULL);   /* only the API is exported */
	CHECK(dlsym(h, "agent_sink_init") == NULL);
	if (fn) {
		CHECK_EQ_I64(fn(NULL, &len), -EINVAL);
		CHECK_EQ_U64(len, 0);
		CHECK_EQ_I64(fn(&json, &len), 0);
		CHECK(json && strlen(json) == len && json[len - 1] == '}');
		rc = vt_agent_reply_parse(json, len, false, &r, &err);
		if (dlsym(RTLD_DEFAULT, "__asan_init")) {
			/* Under ASan malloc is not glibc's: the API must say so. */
			CHECK_EQ_I64(rc, VT_E_UNSUPPORTED);
			CHECK(strstr(err.msg, "not glibc malloc") != NULL);
		} else {
			CHECK_EQ_I64(rc, VT_OK);
			CHECK_EQ_I64(r.pid, getpid());
			CHECK(r.mi.uordblks > 0);
		}
		vt_agent_reply_release(&r);
		free(json);
	}
	/* Stays loaded: its fork handlers are registered. */
}

/* ---- the allocation sampler (libvitals-agent-allocs.so) -------------------- */

#define AHOST ((const char *const[]){ ahost_bin, NULL })

static bool host_send(struct host *h, char c)
{
	return write(h->in, &c, 1) == 1;
}

/* One line from the host into buf, without its '\n'; false on EOF or timeout. */
static bool host_line(struct host *h, char *buf, size_t cap, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd p = { .fd = h->out, .events = POLLIN };
		long long left = deadline - now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) <= 0 || read(h->out, buf + n, 1) != 1)
			break;
		if (buf[n] == '\n') {
			buf[n] = '\0';
			return true;
		}
		n++;
	}
	buf[n] = '\0';
	printf("#   host said '%s' (no full line)\n", buf);
	return false;
}

/* The host's counts of one 'g' phase. */
struct truth {
	unsigned long long calls, bytes, frees, fn[6];
};

static bool host_rate(struct host *h, int ms, struct truth *t)
{
	char line[256];

	memset(t, 0, sizeof(*t));
	if (!host_send(h, 'g'))
		return false;
	sleep_ms(ms);
	if (!host_send(h, 'p') || !host_line(h, line, sizeof(line), 10000))
		return false;
	return sscanf(line, "done %llu %llu %llu %llu %llu %llu %llu %llu %llu", &t->calls, &t->bytes,
		      &t->frees, &t->fn[0], &t->fn[1], &t->fn[2], &t->fn[3], &t->fn[4], &t->fn[5]) == 9;
}

/* One request by hand; the reply parsed (NULL, said, when there is none or it is not JSON). */
static json_t *allocs_ask(const char *path, const char *req)
{
	size_t cap = VT_AGENT_REPLY_MAX + 1, n;
	char *buf = malloc(cap);
	json_error_t je;
	json_t *j = NULL;

	if (!buf)
		abort();
	n = raw_exchange(path, req, strlen(req), buf, cap);
	if (n)
		j = json_loadb(buf, n, 0, &je);
	if (!j)
		printf("#   reply to %.70s: %zu bytes: %.200s\n", req, n, buf);
	free(buf);
	return j;
}

static long long jint(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* The error text of a reply, "" when it is not an error. */
static const char *jerr(json_t *j)
{
	const char *e = json_string_value(json_object_get(j, "error"));
	return e ? e : "";
}

static const char ARM_4096[] = "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":4096,\"for_ms\":60000}\n";
static const char STOP[] = "{\"v\":1,\"want\":\"allocs\",\"stop\":true}\n";

/* Arm; true when the reply says armed with that interval. */
static bool allocs_arm(const char *path, const char *req, long long every)
{
	json_t *j = allocs_ask(path, req), *a = json_object_get(j, "allocs");
	bool ok = a && json_is_true(json_object_get(a, "armed")) && jint(a, "every") == every &&
		  jint(a, "t0_ns") > 0;

	if (!ok && j)
		printf("#   arm: %s\n", jerr(j));
	json_decref(j);
	return ok;
}

/* The executable segments of pid's own executable. */
struct exe_ranges {
	uintptr_t lo[16], hi[16];
	int n;
};

static void exe_ranges(pid_t pid, struct exe_ranges *r)
{
	char file[64], exe[1024], line[2048];
	ssize_t k;
	FILE *f;

	r->n = 0;
	snprintf(file, sizeof(file), "/proc/%d/exe", (int)pid);
	k = readlink(file, exe, sizeof(exe) - 1);
	if (k <= 0)
		return;
	exe[k] = '\0';
	snprintf(file, sizeof(file), "/proc/%d/maps", (int)pid);
	f = fopen(file, "r");
	while (f && fgets(line, sizeof(line), f) && r->n < 16) {
		unsigned long lo, hi;
		char perms[8], *name;
		int off = 0;

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &off) < 3 || !off)
			continue;
		name = line + off;
		name[strcspn(name, "\n")] = '\0';
		if (perms[2] == 'x' && strcmp(name, exe) == 0) {
			r->lo[r->n] = lo;
			r->hi[r->n++] = hi;
		}
	}
	if (f)
		fclose(f);
}

static bool in_ranges(const struct exe_ranges *r, uintptr_t pc)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (pc >= r->lo[i] && pc < r->hi[i])
			return true;
	return false;
}

static uintptr_t jhex(json_t *s)
{
	const char *t = json_string_value(s);

	return t && strncmp(t, "0x", 2) == 0 ? (uintptr_t)strtoull(t + 2, NULL, 16) : 0;
}

/*
 * Checks every sample of a stop reply a that the host allocated itself:
 * tid, times inside the window, a stack whose first frame is in the host's
 * executable.  Returns how many samples there are; *freed: how many were freed.
 */
static size_t check_samples(json_t *a, const struct host *h, const struct exe_ranges *r, size_t *freed)
{
	json_t *samples = json_object_get(a, "samples"), *e;
	long long t0 = jint(a, "t0_ns"), t1 = jint(a, "t1_ns");
	size_t i, bad_pc = 0, bad_time = 0, bad_tid = 0;

	*freed = 0;
	json_array_foreach(samples, i, e) {
		json_t *pcs = json_object_get(e, "pcs");
		long long t = jint(e, "t_ns"), ft = jint(e, "freed_ns");

		if (json_array_size(pcs) == 0 || !in_ranges(r, jhex(json_array_get(pcs, 0))))
			bad_pc++;
		if (t < t0 || t > t1 || (ft && (ft < t || ft > t1)))
			bad_time++;
		if (jint(e, "tid") != h->pid || (ft && jint(e, "freed_tid") != h->pid) || (!ft && jint(e, "freed_tid")))
			bad_tid++;
		if (ft)
			(*freed)++;
	}
	if (bad_pc || bad_time || bad_tid) {
		printf("#   of %zu samples: %zu without the host's frame first, %zu outside [t0, t1], "
		       "%zu with another tid\n", json_array_size(samples), bad_pc, bad_time, bad_tid);
		CHECK(!"samples");
	}
	return json_array_size(samples);
}

static void check_fns(json_t *a, const struct truth *t)
{
	static const char *const names[6] = {
		"malloc", "calloc", "realloc", "memalign", "posix_memalign", "aligned_alloc",
	};
	json_t *fns = json_object_get(a, "fns");
	int i;

	for (i = 0; i < 6; i++)
		CHECK_EQ_U64(jint(fns, names[i]), t->fn[i]);
}

/*
 * Armed at every=4096 around one second of the host allocating known sizes
 * from known functions, half freed at once: the agent's counts are the
 * host's to the call and byte, the samples estimate its bytes within 15%,
 * their freed share is the host's (50%) within 10 points, and every stack
 * starts in the host.
 */
static void test_allocs__estimate(void)
{
	struct exe_ranges ranges;
	struct truth t;
	struct host h;
	char path[512];
	json_t *j, *a, *e;
	double est = 0, share;
	size_t i, n, freed;

	if (!setup())
		return;
	CHECK(host_start(&h, AHOST, allocs_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	check_query_ok(h.pid, path);      /* heap still answered: glibc's, behind the wrappers */
	exe_ranges(h.pid, &ranges);
	CHECK(ranges.n > 0);
	CHECK(allocs_arm(path, ARM_4096, 4096));
	CHECK(host_rate(&h, 1000, &t));
	j = allocs_ask(path, STOP);
	a = json_object_get(j, "allocs");
	CHECK(a != NULL);
	if (!a) {
		json_decref(j);
		host_stop(&h);
		return;
	}
	CHECK(json_is_false(json_object_get(a, "armed")));
	CHECK(json_object_get(a, "expired") == NULL);
	CHECK_EQ_I64(jint(a, "every"), 4096);
	CHECK(jint(a, "t1_ns") > jint(a, "t0_ns"));
	CHECK_EQ_U64(jint(a, "calls"), t.calls);
	CHECK_EQ_U64(jint(a, "bytes"), t.bytes);
	CHECK_EQ_U64(jint(a, "frees"), t.frees);
	CHECK_EQ_I64(jint(a, "dropped"), 0);
	check_fns(a, &t);
	n = check_samples(a, &h, &ranges, &freed);
	CHECK(n > 100);
	json_array_foreach(json_object_get(a, "samples"), i, e) {
		double size = (double)jint(e, "size");
		est += size / (1 - exp(-size / 4096));
	}
	share = n ? (double)freed / (double)n : 0;
	printf("#   %llu calls, %zu samples: estimate %.0f of %llu bytes (%+.1f%%), %.1f%% freed (truth %.1f%%)\n",
	       t.calls, n, est, t.bytes, t.bytes ? 100 * (est - (double)t.bytes) / (double)t.bytes : 0,
	       100 * share, t.calls ? 100.0 * (double)t.frees / (double)t.calls : 0);
	CHECK(t.bytes > 0 && fabs(est - (double)t.bytes) <= 0.15 * (double)t.bytes);
	CHECK(fabs(share - (double)t.frees / (double)(t.calls ? t.calls : 1)) <= 0.10);
	json_decref(j);

	/* A second stop answers the same session again (a client that lost the first reply). */
	j = allocs_ask(path, STOP);
	a = json_object_get(j, "allocs");
	CHECK(a && jint(a, "calls") == (long long)t.calls && json_array_size(json_object_get(a, "samples")) == n);
	json_decref(j);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/*
 * every=1: every allocation is sampled, so a fixed script gives exact
 * samples: entry points, sizes, pointers, and which were freed (realloc
 * frees its old block; valloc counts as memalign).
 */
static void check_exact_script(struct host *h, const char *path, const struct exe_ranges *ranges)
{
	static const struct {
		const char *fn;
		long long size;
		bool freed;
	} want[7] = {
		{ "malloc", 1000, true }, { "realloc", 3000, true }, { "calloc", 1000, false },
		{ "memalign", 100, false }, { "aligned_alloc", 512, true }, { "posix_memalign", 777, false },
		{ "memalign", 333, true },
	};
	static const char arm1[] = "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":1}\n";
	unsigned long ptr[7];
	struct truth t = { .calls = 7, .bytes = 6722, .frees = 3, .fn = { 1, 1, 1, 2, 1, 1 } };
	char line[512];
	size_t i, freed;
	json_t *j, *a, *samples;

	CHECK(allocs_arm(path, arm1, 1));
	CHECK(host_send(h, 'e') && host_line(h, line, sizeof(line), 5000));
	CHECK(sscanf(line, "exact %lx %lx %lx %lx %lx %lx %lx", &ptr[0], &ptr[1], &ptr[2], &ptr[3], &ptr[4],
		     &ptr[5], &ptr[6]) == 7);
	j = allocs_ask(path, STOP);
	a = json_object_get(j, "allocs");
	samples = json_object_get(a, "samples");
	CHECK_EQ_U64(json_array_size(samples), 7);
	CHECK_EQ_U64(jint(a, "calls"), t.calls);
	CHECK_EQ_U64(jint(a, "bytes"), t.bytes);
	CHECK_EQ_U64(jint(a, "frees"), t.frees);
	check_fns(a, &t);
	for (i = 0; i < 7 && i < json_array_size(samples); i++) {
		json_t *e = json_array_get(samples, i);

		CHECK_STR(json_string_value(json_object_get(e, "fn")), want[i].fn);
		CHECK_EQ_I64(jint(e, "size"), want[i].size);
		CHECK_EQ_U64(jhex(json_object_get(e, "ptr")), ptr[i]);
		CHECK_EQ_I64(jint(e, "freed_ns") != 0, want[i].freed);
	}
	if (a)
		check_samples(a, h, ranges, &freed);
	json_decref(j);
}

static void test_allocs__exact_samples(void)
{
	struct exe_ranges ranges;
	struct host h;
	char path[512];

	if (!setup())
		return;
	CHECK(host_start(&h, AHOST, allocs_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	exe_ranges(h.pid, &ranges);
	check_exact_script(&h, path, &ranges);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/*
 * A client arms and goes away.  With the host idle, the listener disarms at
 * for_ms: allocations after it are not even counted.  With the host busy,
 * the stop reply says the session ended at the deadline.
 */
static void test_allocs__auto_disarm(void)
{
	static const char arm_idle[] =
		"{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":1073741824,\"for_ms\":300}\n";
	static const char arm_busy[] = "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":4096,\"for_ms\":200}\n";
	struct truth t;
	struct host h;
	char path[512];
	json_t *j, *a;

	if (!setup())
		return;
	CHECK(host_start(&h, AHOST, allocs_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);

	CHECK(allocs_arm(path, arm_idle, 1073741824));
	sleep_ms(700);
	CHECK(host_rate(&h, 200, &t));
	CHECK(t.calls > 0);
	j = allocs_ask(path, STOP);
	a = json_object_get(j, "allocs");
	CHECK(json_is_true(json_object_get(a, "expired")));
	CHECK_EQ_I64(jint(a, "t1_ns") - jint(a, "t0_ns"), 300000000);
	CHECK_EQ_I64(jint(a, "calls"), 0);           /* disarmed by the listener, not by a sample */
	CHECK_EQ_U64(json_array_size(json_object_get(a, "samples")), 0);
	json_decref(j);

	CHECK(allocs_arm(path, arm_busy, 4096));
	CHECK(host_rate(&h, 700, &t));
	j = allocs_ask(path, STOP);
	a = json_object_get(j, "allocs");
	CHECK(json_is_true(json_object_get(a, "expired")));
	CHECK_EQ_I64(jint(a, "t1_ns") - jint(a, "t0_ns"), 200000000);
	CHECK(jint(a, "calls") < (long long)t.calls);
	printf("#   busy host: %lld of its %llu calls counted before the deadline\n", jint(a, "calls"), t.calls);
	json_decref(j);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* What each agent says to "allocs" requests it cannot serve. */
static void test_allocs__errors(void)
{
	static const struct {
		const char *req;
		const char *words;
	} cases[] = {
		{ "{\"v\":1,\"want\":\"allocs\",\"stop\":true}\n", "was not started" },
		{ "{\"v\":1,\"want\":\"allocs\"}\n", "needs either \"start\":true or \"stop\":true" },
		{ "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"stop\":true}\n", "needs either" },
		{ "{\"v\":1,\"want\":\"allocs\",\"start\":1}\n", "\"start\" must be true or false" },
		{ "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":0}\n", "from 1 to 1073741824" },
		{ "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":1073741825}\n", "from 1 to 1073741824" },
		{ "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":4096.5}\n", "from 1 to 1073741824" },
		{ "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"for_ms\":3600001}\n", "from 1 to 3600000" },
		{ "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"for_ms\":\"5\"}\n", "from 1 to 3600000" },
		{ "{\"v\":1,\"want\":\"stack\"}\n", "answers \"heap\" and \"allocs\"" },
	};
	static const char arm[] = "{\"v\":1,\"want\":\"allocs\",\"start\":true}\n";
	char preload[8192], path[512];
	struct host h;
	size_t i;
	json_t *j;
	void *dl;

	if (!setup())
		return;
	/* The plain agent: an error reply, and no malloc of its own. */
	CHECK(host_start(&h, HOST("10", "1000", "1", "-"), agent_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	j = allocs_ask(path, arm);
	CHECK_STR(jerr(j), "allocation sampling not in this agent: preload libvitals-agent-allocs.so");
	json_decref(j);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
	setenv("VITALS_AGENT", "0", 1);
	dl = dlopen(agent_so, RTLD_NOW | RTLD_LOCAL);
	unsetenv("VITALS_AGENT");
	CHECK(dl != NULL);
	if (dl) {
		Dl_info di;
		void *m = dlsym(dl, "malloc");

		CHECK(m && dladdr(m, &di) && di.dli_fname && !strstr(di.dli_fname, "libvitals-agent"));
		/* stays loaded, as in test_agent__json_api */
	}

	/* The allocs agent: bad requests change nothing. */
	CHECK(host_start(&h, AHOST, allocs_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		j = allocs_ask(path, cases[i].req);
		if (!strstr(jerr(j), cases[i].words)) {
			printf("#   %s  -> '%s'\n", cases[i].req, jerr(j));
			CHECK(!"error reply");
		}
		json_decref(j);
	}
	/* Defaults: every 524288, for 60 s. */
	j = allocs_ask(path, arm);
	CHECK_EQ_I64(jint(json_object_get(j, "allocs"), "every"), 524288);
	CHECK_EQ_I64(jint(json_object_get(j, "allocs"), "for_ms"), 60000);
	json_decref(j);
	j = allocs_ask(path, STOP);
	CHECK(json_is_false(json_object_get(json_object_get(j, "allocs"), "armed")));
	json_decref(j);
	CHECK_EQ_I64(host_stop(&h), 0);

	/* Another malloc bound before the agent's: sampling would see nothing, so it is refused. */
	snprintf(preload, sizeof(preload), "%s %s", shim_so, allocs_so);
	CHECK(host_start(&h, AHOST, preload, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	j = allocs_ask(path, arm);
	CHECK(strstr(jerr(j), "malloc in this process is not the agent's") != NULL);
	json_decref(j);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* Another malloc preloaded after the agent: the agent forwards to it and samples. */
static void test_allocs__forwards_to_next_malloc(void)
{
	struct exe_ranges ranges;
	struct vt_agent_reply r;
	struct vt_err err;
	char preload[8192], path[512];
	struct host h;

	if (!setup())
		return;
	snprintf(preload, sizeof(preload), "%s %s", allocs_so, shim_so);
	CHECK(host_start(&h, AHOST, preload, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	/* The heap behind the wrappers is the shim's, not glibc's. */
	CHECK_EQ_I64(vt_agent_query(path, h.pid, false, VT_AGENT_CLIENT_TIMEOUT_MS, &r, &err), VT_E_UNSUPPORTED);
	CHECK(strstr(err.msg, "not glibc malloc") != NULL);
	vt_agent_reply_release(&r);
	exe_ranges(h.pid, &ranges);
	check_exact_script(&h, path, &ranges);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* Four threads churning for a second with sampling armed (the table fills): the host's bytes stay right. */
static void test_allocs__threads(void)
{
	unsigned long long calls = 0;
	struct host h;
	char path[512], line[128];
	json_t *j, *a;

	if (!setup())
		return;
	CHECK(host_start(&h, AHOST, allocs_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK(allocs_arm(path, ARM_4096, 4096));
	CHECK(host_send(&h, 't') && host_line(&h, line, sizeof(line), 30000));
	CHECK(sscanf(line, "threads ok %llu", &calls) == 1);
	j = allocs_ask(path, STOP);
	a = json_object_get(j, "allocs");
	CHECK(a != NULL);
	CHECK(jint(a, "calls") >= (long long)calls);   /* pthread_create's own allocations too */
	CHECK(json_array_size(json_object_get(a, "samples")) > 0);
	printf("#   4 threads: %llu calls, %zu samples, %lld dropped\n", calls,
	       json_array_size(json_object_get(a, "samples")), jint(a, "dropped"));
	json_decref(j);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* Forks while armed, a thread churning meanwhile: every child and the host end well, the agent serves on. */
static void test_allocs__fork_while_armed(void)
{
	struct host h;
	char path[512], line[128];
	json_t *j;

	if (!setup())
		return;
	CHECK(host_start(&h, AHOST, allocs_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK(allocs_arm(path, ARM_4096, 4096));
	CHECK(host_send(&h, 'f') && host_line(&h, line, sizeof(line), 30000));
	CHECK_STR(line, "fork ok");
	j = allocs_ask(path, STOP);
	CHECK(json_array_size(json_object_get(json_object_get(j, "allocs"), "samples")) > 0);
	json_decref(j);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/*
 * Signal handlers that malloc, landing inside the sampler (every=1: the
 * thread is sampling most of the time), while the client starts a new
 * session every 100 ms over the running one (a reset under load).
 */
static void test_allocs__signal_handlers(void)
{
	static const char arm1[] = "{\"v\":1,\"want\":\"allocs\",\"start\":true,\"every\":1}\n";
	unsigned long long calls = 0;
	struct host h;
	char path[512], line[128];
	int i, sigs = 0;
	json_t *j;

	if (!setup())
		return;
	CHECK(host_start(&h, AHOST, allocs_so, NULL, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_OK);
	CHECK(allocs_arm(path, arm1, 1));
	CHECK(host_send(&h, 's'));
	for (i = 0; i < 9; i++) {
		sleep_ms(100);
		CHECK(allocs_arm(path, arm1, 1));
	}
	CHECK(host_line(&h, line, sizeof(line), 30000));
	CHECK(sscanf(line, "signals ok %llu %d", &calls, &sigs) == 2);
	printf("#   %llu calls, %d signals whose handler allocated\n", calls, sigs);
	CHECK(sigs > 100);
	j = allocs_ask(path, STOP);
	CHECK(json_is_false(json_object_get(json_object_get(j, "allocs"), "armed")));
	json_decref(j);
	check_query_ok(h.pid, path);
	CHECK_EQ_I64(host_stop(&h), 0);
}

/* VITALS_AGENT=0: no socket; the wrappers forward and the host runs as without the agent. */
static void test_allocs__disabled(void)
{
	const char *const off[] = { "VITALS_AGENT=0", NULL };
	struct truth t;
	struct host h;
	char path[512], line[512];

	if (!setup())
		return;
	CHECK(host_start(&h, AHOST, allocs_so, off, NULL, NULL, true));
	CHECK_EQ_I64(find(h.pid, path, sizeof(path)), VT_E_NOTFOUND);
	CHECK(host_rate(&h, 100, &t) && t.calls > 0);
	CHECK(host_send(&h, 'e') && host_line(&h, line, sizeof(line), 5000) && strncmp(line, "exact ", 6) == 0);
	CHECK_EQ_I64(host_stop(&h), 0);
}

VT_TEST_MAIN(test_agent__heap_figures, test_agent__sleep_exits_and_removes_socket,
	     test_agent__trim_refused_without_env, test_agent__trim_with_env,
	     test_agent__stale_socket, test_agent__wrong_peer_rejected, test_agent__disabled,
	     test_agent__silent_client, test_agent__garbage_client, test_agent__bad_requests,
	     test_agent__fork_child_leaves_socket, test_agent__not_glibc_malloc,
	     test_agent__pid_and_mount_namespace, test_agent__refuses_open_directory,
	     test_agent__request_size_limit, test_agent__xdg_runtime_dir,
	     test_agent__squatted_tmp_dir, test_agent__symlinked_tmp_dir,
	     test_agent__other_uid_refused, test_agent__json_api, test_allocs__estimate,
	     test_allocs__exact_samples, test_allocs__auto_disarm, test_allocs__errors,
	     test_allocs__forwards_to_next_malloc, test_allocs__threads, test_allocs__fork_while_armed,
	     test_allocs__signal_handlers, test_allocs__disabled)
