/*
 * cmd_serve.c — `vitals serve --pid PID... [--listen ADDR] [--web-config FILE]`.
 *
 * A Prometheus exporter: the targets are checked once (src/serve/exporter),
 * the HTTP side starts (src/serve/http), and each scrape of /metrics is one
 * vt_exporter_scrape written in the format the scraper asks for
 * (render/prom).  The main thread then only waits for SIGINT or SIGTERM in
 * sigwait; the server's one thread does the rest.
 */
#include "cli/cli.h"
#include "cli/name_cli.h"
#include "serve/exporter.h"
#include "serve/http.h"
#include "serve/pprof_serve.h"
#include "render/prom.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVE_MAX_TARGETS 256
#define HEAP_EVERY_DEFAULT_S 60.0
#define HEAP_EVERY_MIN_S 10.0
#define HEAP_EVERY_MAX_S 86400.0

enum { OPT_LISTEN = 1, OPT_WEB_CONFIG, OPT_PID, OPT_NAME, OPT_PIDFILE, OPT_CGROUP, OPT_LABEL, OPT_HEAP_PTRACE,
       OPT_HEAP_EVERY, OPT_FREE_EVERY };

static const struct vt_option serve_options[] = {
	{ "listen", 'l', "ADDR", "where to listen: HOST:PORT, [IPV6]:PORT, or :PORT for\n"
				 "every address (default 127.0.0.1:9464; port 0: any\n"
				 "free port, printed at start)", OPT_LISTEN },
	{ "web-config", 0, "FILE", "TLS and basic auth from a Prometheus web config\n"
				   "file (exporter-toolkit format, as above)", OPT_WEB_CONFIG },
	{ "pid", 'p', "PID", "a target: that process; if it exits, the one that\n"
			     "runs the same command line (repeat)", OPT_PID },
	{ "name", 0, "NAME", "a target: every process called NAME (comm or\n"
			     "argv[0]), summed (a parent and its same-named\n"
			     "workers: all of them, listed at start), found\n"
			     "again after restarts (repeat)", OPT_NAME },
	{ "pidfile", 0, "FILE", "a target: the pid in FILE, read again when that\n"
				"process is gone (repeat)", OPT_PIDFILE },
	{ "cgroup", 0, "PATH", "a target: every process in that cgroup v2 (a path\n"
			       "under the cgroup mount, e.g. system.slice/nginx.service)\n"
			       "(repeat)", OPT_CGROUP },
	{ "label", 0, "LABEL", "the target label of the target given just before\n"
			       "(default: its name, the pidfile's base name, the\n"
			       "cgroup path, or the process's comm)", OPT_LABEL },
	{ "heap-ptrace", 0, NULL, "allocator figures of glibc by a ptrace probe when no\n"
				  "agent answers (stops the process about 0.3 ms each\n"
				  "time), at most once per --heap-every", OPT_HEAP_PTRACE },
	{ "heap-every", 0, "DURATION", "with --heap-ptrace: how often at most (default 60s;\n"
				       "at least 10s); scrapes between show the last figures", OPT_HEAP_EVERY },
	{ "free-every", 0, "DURATION", "glibc's free bytes on resident pages, from a walk of\n"
				       "the heap that does not stop the process: at most\n"
				       "this often per process, within 1% of a core (default\n"
				       "60s; at least 10s; 0 = never); scrapes between show\n"
				       "the last figures and their age", OPT_FREE_EVERY },
	{ 0 }
};

static const struct vt_exit_note serve_exits[] = {
	{ 2, "the server could not start: the port is taken, or the address cannot be bound" },
	{ 3, "no such process (--pid)" },
	{ 5, "permission denied (a port below 1024 without CAP_NET_BIND_SERVICE)" },
	{ 6, "kernel thread" },
	{ 8, "libmicrohttpd is not installed (libmicrohttpd12), or the web config asks for TLS\n"
	     "and this libmicrohttpd has none" },
	{ 64, "usage error: no target, two targets under one label, a bad --listen, a --cgroup that\n"
	      "does not exist, or a web config that does not parse, names files that cannot be\n"
	      "read, or holds a password that is not a bcrypt hash" },
	{ -1, NULL },
};

static const char *const serve_examples[] = {
	"vitals serve --pid PID",
	"vitals serve --name redis-server --name nginx --listen :9464",
	"vitals serve --pid PID --label api --listen 127.0.0.1:0",
	"vitals serve --pid PID --heap-ptrace --heap-every 5m",
	NULL,
};

#define SERVE_DESCRIPTION \
"A Prometheus exporter for the processes you name, the targets: what no\n" \
"other exporter shows for an unmodified binary (glibc arenas and heap regions,\n" \
"the allocator's own figures, listen queues, CPU per thread pool, the\n" \
"cgroup's memory events and pressure) beside the usual process figures, on\n" \
"GET /metrics in the Prometheus text format, or OpenMetrics when the scraper\n" \
"asks for it.  GET /healthz says ok; / links to both.\n" \
"\n" \
"A target is a --pid, a --name, a --pidfile or a --cgroup, each as often as\n" \
"needed; every sample of a target carries target=\"LABEL\" and never a pid or\n" \
"a thread id, so restarts do not grow the server's series.  A target whose\n" \
"process is gone is vitals_target_up 0 until it comes back.\n" \
"\n" \
"It only reads /proc, /sys and, for glibc's free memory on resident pages, the\n" \
"heap's arenas (process_vm_readv, at most once per --free-every): nothing\n" \
"is written to the targets and they are never stopped, except with\n" \
"--heap-ptrace, which probes glibc by ptrace (a stop of about 0.3 ms) at most\n" \
"once per --heap-every (default 60 s).\n" \
"\n" \
"By default it listens on loopback only (127.0.0.1:9464), in plain HTTP and\n" \
"without auth.  To serve others, give --listen :9464 and a --web-config\n" \
"file in the exporter-toolkit format that every Prometheus exporter reads:\n" \
"\n" \
"  tls_server_config:\n" \
"    cert_file: server.crt     (relative to the file's directory)\n" \
"    key_file: server.key\n" \
"  basic_auth_users:\n" \
"    prometheus: $2y$10$...     (bcrypt: htpasswd -nBC 10 prometheus)\n" \
"\n" \
"Unknown keys, plain passwords and client certificates are refused at\n" \
"start.  contrib/ holds a systemd unit (vitals-serve.service), a scrape\n" \
"configuration (prometheus.yml) and alerting rules (vitals-rules.yml).\n"

#define SERVE_AFTER \
"One thread serves every connection: at most 64 at once and 16 from one\n" \
"address, each closed after 10 s idle; scrapes run one at a time, and an\n" \
"idle exporter sleeps.  GET /metrics answers gzip when Accept-Encoding asks.\n" \
"With basic auth, a password once matched is checked again without bcrypt;\n" \
"new ones get a quarter of the server's time at most (401 beyond it), so a\n" \
"client guessing passwords cannot hold up the scrapes.\n" \
"\n" \
"GET /debug/pprof/profile?seconds=N (CPU), /debug/pprof/wall (wall clock)\n" \
"and /debug/pprof/allocs (allocations, from a target that preloads\n" \
"libvitals-agent-allocs.so) answer a gzipped pprof profile as Go's\n" \
"net/http/pprof does, for go tool pprof, Parca and Pyroscope: N from 1 to\n" \
"60 (default 30, more: 400); target=LABEL or pid=PID with several targets\n" \
"(unknown: 404); one profile per target at a time (429 with Retry-After);\n" \
"each on a thread of its own, so /metrics never waits.  docs/pprof.md has\n" \
"the details.\n"

struct serve_opts {
	const char *listen;
	const char *web_config;
	struct vt_exp_target targets[SERVE_MAX_TARGETS];
	size_t ntargets;
	bool heap_ptrace;
	double heap_every_s;
	bool heap_every_given;
	double free_every_s;         /* -1: never */
};

/* What the metrics handler needs: the exporter, one scrape at a time (and the profiles'). */
struct serve_ctx {
	pthread_mutex_t lock;
	struct vt_exporter *x;
	struct vt_pprof_serve *ps;
};

static int add_target(struct serve_opts *o, enum vt_exp_kind kind, const char *arg)
{
	struct vt_exp_target *t;
	int pid;

	if (o->ntargets == SERVE_MAX_TARGETS)
		return vt_cli_usage_error("serve", "more than %d targets", SERVE_MAX_TARGETS);
	t = &o->targets[o->ntargets];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	if (kind == VT_EXP_PID) {
		if (!vt_cli_parse_pid(arg, &pid))
			return vt_cli_usage_error("serve", "--pid '%s' is not a process id", arg);
		t->pid = pid;
	} else {
		if (!*arg)
			return vt_cli_usage_error("serve", "an empty %s", kind == VT_EXP_NAME ? "--name" :
						  kind == VT_EXP_PIDFILE ? "--pidfile" : "--cgroup");
		t->arg = arg;
	}
	o->ntargets++;
	return 0;
}

static int serve_option(void *ctx, int id, const char *arg)
{
	struct serve_opts *o = ctx;
	size_t i;

	switch (id) {
	case OPT_LISTEN: o->listen = arg; return 0;
	case OPT_WEB_CONFIG: o->web_config = arg; return 0;
	case OPT_PID: return add_target(o, VT_EXP_PID, arg);
	case OPT_NAME: return add_target(o, VT_EXP_NAME, arg);
	case OPT_PIDFILE: return add_target(o, VT_EXP_PIDFILE, arg);
	case OPT_CGROUP: return add_target(o, VT_EXP_CGROUP, arg);
	case OPT_LABEL:
		if (o->ntargets == 0)
			return vt_cli_usage_error("serve", "--label '%s' names the target given before it "
						  "(--pid PID --label LABEL)", arg);
		if (o->targets[o->ntargets - 1].label)
			return vt_cli_usage_error("serve", "two labels for one target: '%s' and '%s'",
						  o->targets[o->ntargets - 1].label, arg);
		if (!*arg)
			return vt_cli_usage_error("serve", "an empty --label");
		for (i = 0; i + 1 < o->ntargets; i++)
			if (o->targets[i].label && strcmp(o->targets[i].label, arg) == 0)
				return vt_cli_usage_error("serve", "two targets labelled '%s': their series "
							  "would collide", arg);
		o->targets[o->ntargets - 1].label = arg;
		return 0;
	case OPT_HEAP_PTRACE: o->heap_ptrace = true; return 0;
	case OPT_HEAP_EVERY:
		o->heap_every_given = true;
		return vt_cli_duration(&vt_cmd_serve, "heap-every", arg, HEAP_EVERY_MIN_S, HEAP_EVERY_MAX_S,
				       &o->heap_every_s);
	case OPT_FREE_EVERY:
		if (vt_cli_duration(&vt_cmd_serve, "free-every", arg, 0, HEAP_EVERY_MAX_S, &o->free_every_s))
			return vt_code_exit(VT_E_USAGE);
		if (o->free_every_s == 0)
			o->free_every_s = -1;          /* never */
		else if (o->free_every_s < HEAP_EVERY_MIN_S)
			return vt_cli_usage_error("serve", "--free-every '%s': at least 10s (or 0: never); a walk "
						  "per scrape costs too much on a large heap", arg);
		return 0;
	}
	return 0;
}

static int parse_args(const struct vt_command *cmd, int argc, char **argv, struct serve_opts *o)
{
	struct vt_args args;
	int rc;

	memset(o, 0, sizeof(*o));
	o->listen = "127.0.0.1:9464";
	o->heap_every_s = HEAP_EVERY_DEFAULT_S;
	if ((rc = vt_cli_parse(cmd, argc, argv, serve_option, o, &args)))
		return rc;
	if (args.noperands > 0)
		return vt_cli_usage_error("serve", "unexpected argument '%s' (targets are --pid PID, --name NAME, "
					  "--pidfile FILE or --cgroup PATH)", args.operands[0]);
	if (o->ntargets == 0)
		return vt_cli_usage_error("serve", "no target: give --pid PID, --name NAME, --pidfile FILE or "
					  "--cgroup PATH");
	if (o->heap_every_given && !o->heap_ptrace)
		return vt_cli_usage_error("serve", "--heap-every is the cadence of --heap-ptrace: give both");
	return 0;
}

/* GET /metrics: one scrape, in the format the Accept header asks for. */
static int serve_metrics(void *ctx, const char *accept, struct vt_buf *body, const char **content_type,
			 struct vt_err *err)
{
	struct serve_ctx *sc = ctx;
	enum vt_prom_format f = vt_prom_negotiate(accept);
	struct vt_prom *p;
	int rc;

	pthread_mutex_lock(&sc->lock);
	p = vt_prom_new();
	if (!p)
		rc = vt_err_set(err, VT_E_NOMEM, 0, "out of memory for a scrape");
	else if ((rc = vt_exporter_scrape(sc->x, p, err)) == VT_OK &&
		 (rc = vt_prom_write(p, f, body)) != VT_OK)
		vt_err_set(err, rc, 0, "the scrape does not fit in %zu bytes", body->max);
	vt_prom_free(p);
	pthread_mutex_unlock(&sc->lock);
	*content_type = vt_prom_content_type(f);
	return rc == VT_OK ? 0 : -1;
}

/* GET /debug/pprof/...: which target, under the exporter's lock; the profile runs on a thread of its own. */
static void serve_pprof_begin(void *ctx, const char *path, void *req, struct vt_http_answer *a, void **job)
{
	struct serve_ctx *sc = ctx;

	pthread_mutex_lock(&sc->lock);
	vt_pprof_serve_begin(sc->ps, path, req, a, job);
	pthread_mutex_unlock(&sc->lock);
}

/* GET /healthz: the server answers, so it is up. */
static int serve_health(void *ctx, struct vt_buf *body)
{
	(void)ctx;
	return vt_buf_append(body, "ok\n", 3) == VT_OK ? 0 : -1;
}

/* SIGINT and SIGTERM (SIGHUP too unless ignored, as under nohup), blocked in every thread. */
static void stop_signals(sigset_t *set)
{
	struct sigaction hup;

	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
		sigaddset(set, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int serve_run(const struct vt_command *cmd, int argc, char **argv)
{
	struct serve_ctx sc = { PTHREAD_MUTEX_INITIALIZER, NULL, NULL };
	struct vt_http_config hc;
	struct vt_http_handlers hh = { serve_metrics, serve_health, &sc, serve_pprof_begin, vt_pprof_serve_run,
				       vt_pprof_serve_end };
	struct vt_exporter_config xc;
	struct vt_http *http = NULL;
	struct vt_procfs pfs;
	struct serve_opts *o;
	struct vt_err err;
	sigset_t set;
	int rc, sig = 0, status = VT_EXIT_OK;

	o = malloc(sizeof(*o));
	if (!o)
		return vt_cli_nomem("serve");
	rc = parse_args(cmd, argc, argv, o);
	if (rc != 0) {
		free(o);
		return rc == VT_CLI_HELP ? VT_EXIT_OK : rc;
	}
	vt_err_clear(&err);
	if (vt_cli_open_procfs(&pfs, &err)) {
		free(o);
		return vt_cli_error(&err);
	}
	/* before any thread starts, so that none of them takes the signal */
	stop_signals(&set);

	memset(&xc, 0, sizeof(xc));
	xc.targets = o->targets;
	xc.ntargets = o->ntargets;
	xc.heap_ptrace = o->heap_ptrace;
	xc.heap_every_s = o->heap_every_s;
	xc.free_every_s = o->free_every_s;
	if (vt_exporter_open(&pfs, &xc, &sc.x, &err) != VT_OK) {
		status = vt_cli_error(&err);
		goto out_pfs;
	}
	if (vt_pprof_serve_open(&pfs, sc.x, &sc.ps, &err) != VT_OK) {
		status = vt_cli_error(&err);
		goto out_exporter;
	}
	hc.listen = o->listen;
	hc.web_config = o->web_config;
	if (vt_http_start(&hc, &hh, &http, &err) != VT_OK) {
		status = vt_cli_error(&err);
		goto out_exporter;
	}
	for (size_t i = 0; i < o->ntargets; i++)
		if (o->targets[i].kind == VT_EXP_NAME)
			vt_cli_name_describe(stderr, &pfs, "serve", o->targets[i].arg);
	fprintf(stderr, "vitals serve: listening on %s://%s/metrics (%zu target%s%s)\n",
		vt_http_tls(http) ? "https" : "http", vt_http_address(http), o->ntargets,
		o->ntargets == 1 ? "" : "s", vt_http_users(http) ? ", basic auth" : "");
	if (vt_http_warnings(http)[0])
		fprintf(stderr, "vitals serve: warning: %s\n", vt_http_warnings(http));
	fflush(stderr);

	while (sigwait(&set, &sig) != 0)
		;
	vt_http_stop(http);
out_exporter:
	vt_pprof_serve_close(sc.ps);
	vt_exporter_close(sc.x);
out_pfs:
	vt_procfs_close(&pfs);
	free(o);      /* the stop signals stay blocked: a second SIGTERM does not cut the exit short */
	return status;
}

const struct vt_command vt_cmd_serve = {
	.name = "serve",
	.summary = "a Prometheus exporter for the processes you name",
	.synopsis = "--pid PID | --name NAME | --pidfile FILE | --cgroup PATH [--label LABEL] ...\n"
		    "[--listen ADDR] [--web-config FILE] [--heap-ptrace [--heap-every DURATION]]",
	.description = SERVE_DESCRIPTION,
	.options = serve_options,
	.after = SERVE_AFTER,
	.exits = serve_exits,
	.examples = serve_examples,
	.libs = VT_CMD_LIBDW,
	.run = serve_run,
};
