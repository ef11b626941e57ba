/*
 * common.h: the plumbing every target shares, so that each target's own
 * file holds only its phenomenon.
 *
 * The contract every target follows (targets/README.md):
 *
 * - The first line on stdout is "pid <PID>", flushed at once.
 * - --seconds N (default 60): exit 0 after N seconds.  SIGTERM and SIGINT
 *   also end the run cleanly with exit 0.
 * - --truth FILE: append the program's own ground truth, one JSON object
 *   per line, at start, about once a second, on every change of phase,
 *   and at exit.  Every line has "t" (seconds since start, monotonic
 *   clock) and "phase"; the last line has "phase":"exit".
 * - --help prints the options to stdout and exits 0; bad usage exits 64;
 *   a failed system call prints what failed and exits 1.
 * - The defaults reproduce the phenomenon within a few seconds on a
 *   2-core machine and stay under about 1.5 GB RSS (big_process excepted).
 * - Signals are blocked in every thread and taken by the main thread with
 *   sigtimedwait, so no thread is ever interrupted inside malloc.
 *
 * A target's main() is then:
 *
 *	parse_options(argc, argv, &cli);  ours and the target's own options
 *	target_begin(NULL);               signals, truth file, clock, "pid N"
 *	start its threads;
 *	main_loop(&loop);                 truth lines until the end
 *	stop its threads;
 *	truth_write("exit");              the target's own truth writer,
 *	truth_close();                    built on truth_begin()/truth_end()
 *	return 0;
 *
 * The Makefile builds each target from its one .c file and links nothing
 * of ours, hence a header of static inline functions (a target that does
 * not use one gets no warning).  The options 's', 't' and 'h' are ours;
 * a target's own options use other values.
 */
#ifndef TARGETS_COMMON_H
#define TARGETS_COMMON_H

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE	64	/* bad usage (sysexits.h's EX_USAGE) */
#define MAX_OPTIONS	32	/* ours and a target's, in one table */

static double run_seconds = 60;	/* --seconds */
static const char *truth_path;	/* --truth */
static FILE *truth;		/* the open truth file, or NULL */
static double t0;		/* the start: truth's "t" counts from here */
static sigset_t waited;		/* blocked everywhere, taken by main_loop() */

/* A call failed and set errno: say what failed and exit 1. */
static inline __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
		strerror(errno));
	exit(1);
}

/* For the pthread functions, which return the error number. */
static inline void check(int rc, const char *what)
{
	if (rc) {
		errno = rc;
		die(what);
	}
}

/* CLOCK_MONOTONIC in seconds. */
static inline double now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime");
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Unix time: what a recording's "wall" column holds, to line truth up with it. */
static inline double wall_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts))
		die("clock_gettime");
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds since the start, as in truth's "t". */
static inline double elapsed(void)
{
	return now() - t0;
}

/*
 * Make now the start.  target_begin() does; a target whose setup must
 * not count (a steady live set to build first) does again after it.
 */
static inline void start_clock(void)
{
	t0 = now();
}

/* Start a thread named "<prefix>-<i>", or just "<prefix>" if i < 0. */
static inline void start_thread(pthread_t *thread, const pthread_attr_t *attr,
				void *(*fn)(void *), void *arg,
				const char *prefix, int i)
{
	char name[32];

	check(pthread_create(thread, attr, fn, arg), "pthread_create");
	if (i < 0)
		snprintf(name, sizeof(name), "%s", prefix);
	else
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
	name[15] = '\0';	/* the kernel keeps 15 characters */
	check(pthread_setname_np(*thread, name), "pthread_setname_np");
}

static inline void join_threads(const pthread_t *threads, int n)
{
	int i;

	for (i = 0; i < n; i++)
		check(pthread_join(threads[i], NULL), "pthread_join");
}

/* ---- Options ---- */

/* What a target tells parse_options() about its own options. */
struct cli {
	const char *usage;		/* the --help text, all options */
	const struct option *options;	/* its own, NULL-terminated */
	/* Take one of them; 'arg' is its argument (or NULL). */
	void (*option)(int val, const char *name, const char *arg);
};

static inline __attribute__((noreturn)) void usage_exit(const char *usage,
							FILE *out, int status)
{
	fputs(usage, out);
	exit(status);
}

/* The number in 'arg', given for --'name'; exit 64 unless in lo..hi. */
static inline double parse_num(const char *name, const char *arg, double lo,
			       double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "%s: bad value '%s' for --%s, expected %g..%g\n",
			program_invocation_short_name, arg, name, lo, hi);
		exit(EXIT_USAGE);
	}
	return v;
}

/*
 * Append the NULL-terminated options 'more' to the 'n' in 'table' (room
 * for MAX_OPTIONS and the terminator); return how many there are now.
 */
static inline int add_options(struct option *table, int n,
			      const struct option *more)
{
	for (; more && more->name; more++) {
		if (n == MAX_OPTIONS) {
			errno = E2BIG;
			die("too many options");
		}
		table[n++] = *more;
	}
	table[n] = (struct option){ NULL, 0, NULL, 0 };
	return n;
}

/*
 * Parse --seconds, --truth, --help and the target's own options, which
 * stand between --truth and --help in the table (the order getopt lists
 * them in when an abbreviation is ambiguous).
 */
static inline void parse_options(int argc, char **argv, const struct cli *cli)
{
	static const struct option first[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "truth", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	static const struct option last[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct option longopts[MAX_OPTIONS + 1];
	int c, i = 0, n;

	n = add_options(longopts, 0, first);
	n = add_options(longopts, n, cli->options);
	add_options(longopts, n, last);

	while ((c = getopt_long(argc, argv, "", longopts, &i)) != -1) {
		const char *name = longopts[i].name;

		switch (c) {
		case 's':
			run_seconds = parse_num(name, optarg, 0, 1e7);
			break;
		case 't':
			truth_path = optarg;
			break;
		case 'h':
			usage_exit(cli->usage, stdout, 0);
		case '?':
			usage_exit(cli->usage, stderr, EXIT_USAGE);
		default:
			cli->option(c, name, optarg);
		}
	}
	if (optind < argc)
		usage_exit(cli->usage, stderr, EXIT_USAGE);
}

/* ---- Start and end ---- */

/*
 * Block SIGTERM, SIGINT and the 'extra' signals (0-terminated, or NULL).
 * Before any thread starts: every thread inherits the mask, and only
 * main_loop() takes them, with sigtimedwait().
 */
static inline void block_signals(const int *extra)
{
	if (sigemptyset(&waited) || sigaddset(&waited, SIGTERM) ||
	    sigaddset(&waited, SIGINT))
		die("sigaddset");
	for (; extra && *extra; extra++)
		if (sigaddset(&waited, *extra))
			die("sigaddset");
	check(pthread_sigmask(SIG_BLOCK, &waited, NULL), "pthread_sigmask");
}

/*
 * After the options: block the signals (SIGTERM, SIGINT and any
 * 'extra_signals' the target handles in main_loop()), open the truth
 * file, start the clock and say "pid N".
 */
static inline void target_begin(const int *extra_signals)
{
	block_signals(extra_signals);
	if (truth_path && !(truth = fopen(truth_path, "a")))
		die(truth_path);
	start_clock();
	printf("pid %d\n", (int)getpid());
	if (fflush(stdout))
		die("stdout");
}

/* After the "exit" line. */
static inline void truth_close(void)
{
	if (truth && fclose(truth))
		die("close truth file");
}

/* ---- Truth lines ---- */

/*
 * Start a truth line with "t" (seconds since the start) and "phase"; the
 * target writes its own ,"key":value pairs to the FILE returned and ends
 * the line with truth_end().  NULL, and no line, without --truth.
 */
static inline FILE *truth_begin_at(double t, const char *phase)
{
	if (!truth)
		return NULL;
	fprintf(truth, "{\"t\":%.3f,\"phase\":\"%s\"", t, phase);
	return truth;
}

static inline FILE *truth_begin(const char *phase)
{
	return truth ? truth_begin_at(elapsed(), phase) : NULL;
}

/*
 * A counter's rate since the previous call with the same *since (zeroed
 * at the start, so the first rate is over the time since the start).
 */
struct rate_since {
	double t;
	uint64_t n;
};

static inline double rate_since(struct rate_since *since, double t, uint64_t n)
{
	double rate = t > since->t ? (double)(n - since->n) / (t - since->t) : 0;

	since->t = t;
	since->n = n;
	return rate;
}

static inline void truth_end(void)
{
	fputs("}\n", truth);
	if (fflush(truth))
		die("write truth file");
}

/* ---- The main thread's loop ---- */

/* Wait for one of the signals in 'waited' until 'until'; 0 on timeout. */
static inline int wait_signal(double until)
{
	double left = until - now();
	struct timespec ts;
	int sig;

	if (left < 0)
		left = 0;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
	sig = sigtimedwait(&waited, NULL, &ts);
	if (sig < 0 && errno != EAGAIN && errno != EINTR)
		die("sigtimedwait");
	return sig < 0 ? 0 : sig;
}

struct main_loop {
	void (*report)(const char *phase);	/* the target's truth writer */
	const char *phase;	/* passed to it: a phase, or NULL for its own */
	/*
	 * Optional: the one change of phase due 'change_at' seconds after
	 * the start, reported at once; change() gets the seconds since the
	 * start it was made at.
	 */
	void (*change)(double t);
	double change_at;
	/* Optional: a waited signal other than SIGTERM and SIGINT. */
	void (*signal)(int sig);
	/* Optional: seconds between reports; 0 for the usual 1. */
	double every;
};

/*
 * Report at once and then about once a second (or every l->every
 * seconds) until --seconds have passed or SIGTERM or SIGINT came; the
 * caller then writes "exit".
 */
static inline void main_loop(const struct main_loop *l)
{
	double end = t0 + run_seconds, next = t0, at = t0 + l->change_at;
	int pending = l->change != NULL;

	for (;;) {
		double t = now(), until;
		int sig;

		if (pending && t >= at) {
			l->change(t - t0);
			pending = 0;
			next = t;	/* report it at once */
		}
		if (t >= next) {
			l->report(l->phase);
			next = t + (l->every > 0 ? l->every : 1);
		}
		if (t >= end)
			return;
		until = next < end ? next : end;
		if (pending && at < until)
			until = at;
		sig = wait_signal(until);
		if (sig == SIGTERM || sig == SIGINT)
			return;
		if (sig && l->signal)
			l->signal(sig);
	}
}

#endif
