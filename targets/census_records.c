/*
 * census_records: a heap of records that are each unique text but all hold
 * one shared fragment, for `vitals census`'s most repeated fragments (issue
 * 28: an identity string copied into every record, found without knowing it).
 *
 * Every record is one malloc()ed block holding a NUL-terminated string of
 * random text (letters, digits and a few signs) of its own length, with the
 * --fragment copied in once at a random offset of 16 or more (the first 16
 * bytes are the links a free chunk's tcache or fast bin writes) that ends 8
 * bytes or more before the NUL (the last 8 usable bytes of a chunk are the
 * next chunk's prev_size, which a walk of free chunks leaves out), so no two
 * records share anything but the fragment.  --live records stay live, of
 * 64..--max-len bytes; --freed records are written and then freed, all of
 * 64..120 bytes: glibc's fast-bin sizes, into the tcache (7 a size) and the
 * fast bins, which never coalesce, so every freed record is a free chunk of
 * its own with the fragment intact.  Live and doomed records are allocated
 * in a random interleaving, so the freed ones lie between live ones; the
 * doomed are freed once all are allocated, and nothing allocates after.
 *
 * With --every N only every Nth record allocated holds it (a needle in a
 * haystack of unique text).  Truth: live_with_fragment and
 * freed_with_fragment are the chunks holding the fragment in live and in
 * free chunks (each once).  The fragment is never copied
 * anywhere else on the heap: it is read in place in argv, and the truth
 * file's buffer is ours and wiped after each line.
 */
#include <inttypes.h>
#include <malloc.h>
#include <sys/mman.h>

#include "common.h"

#define FREED_MIN	64
#define FREED_MAX	120	/* the largest request glibc puts in a fast bin */
#define LINK_BYTES	16	/* a free chunk's tcache or fast-bin links */
#define TAIL_BYTES	8	/* the next chunk's prev_size: a walk of free chunks leaves it out */
#define FRAGMENT_MAX	(FREED_MIN - LINK_BYTES - TAIL_BYTES - 1)	/* 39: fits the smallest record */

static struct {
	size_t live;
	size_t freed;
	size_t max_len;
	const char *fragment;
	uint64_t seed;
	size_t every;
} opt = {
	.live = 20000,
	.freed = 10000,
	.max_len = 600,
	.fragment = "user=atus-1-dfql6hsq",
	.seed = 1,
	.every = 1,
};

static size_t live_with, freed_with;	/* records holding the fragment */

static char truth_buf[1 << 16];	/* the truth file's stdio buffer */
static char **held;		/* the live records, mmap()ed */
static int ready;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* A record of size bytes (the string and its NUL): random text, with the fragment at a random offset >= 16. */
static char *new_record(uint64_t *rng, size_t size, int with)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.:;_-/";
	size_t flen = strlen(opt.fragment), at, i;
	char *p = malloc(size);

	if (!p)
		die("malloc");
	for (i = 0; i + 1 < size; i++)
		p[i] = alphabet[next_rand(rng) % (sizeof(alphabet) - 1)];
	p[size - 1] = '\0';
	if (!with)
		return p;
	at = LINK_BYTES + next_rand(rng) % (size - 1 - flen - TAIL_BYTES - LINK_BYTES + 1);
	memcpy(p + at, opt.fragment, flen);
	return p;
}

static void build(void)
{
	size_t total = opt.live + opt.freed, i, kept = 0, nf = 0;
	char **doomed = NULL;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (opt.seed + 1);

	if (opt.freed) {
		doomed = mmap(NULL, opt.freed * sizeof(*doomed), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
		if (doomed == MAP_FAILED)
			die("mmap");
	}
	if (opt.live) {
		held = mmap(NULL, opt.live * sizeof(*held), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (held == MAP_FAILED)
			die("mmap");
	}
	for (i = 0; i < total; i++) {
		int doom = next_rand(&rng) % (total - i) < opt.freed - nf;

		int with = i % opt.every == 0;

		if (doom) {
			freed_with += with;
			doomed[nf++] = new_record(&rng, FREED_MIN + next_rand(&rng) % (FREED_MAX - FREED_MIN + 1), with);
		} else {
			live_with += with;
			held[kept++] = new_record(&rng, FREED_MIN + next_rand(&rng) % (opt.max_len - FREED_MIN + 1), with);
		}
	}
	for (i = 0; i < nf; i++)
		free(doomed[i]);
	if (doomed && munmap(doomed, opt.freed * sizeof(*doomed)))
		die("munmap");
}

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase ? phase : ready ? "ready" : "building");

	if (!f)
		return;
	fprintf(f, ",\"fragment\":\"%s\",\"fragment_len\":%zu,\"live_records\":%zu,\"freed_records\":%zu,"
		"\"every\":%zu,\"live_with_fragment\":%zu,\"freed_with_fragment\":%zu,"
		"\"live_min_len\":%d,\"live_max_len\":%zu,\"freed_min_len\":%d,\"freed_max_len\":%d",
		opt.fragment, strlen(opt.fragment), ready ? opt.live : 0, ready ? opt.freed : 0, opt.every, live_with,
		freed_with, FREED_MIN, opt.max_len, FREED_MIN, FREED_MAX);
	truth_end();
	/* The line named the fragment: leave no copy of it in our memory. */
	memset(truth_buf, 0, sizeof(truth_buf));
}

/* Printable ASCII but '"' and '\\' (written into JSON as it is). */
static const char *text_arg(const char *name, const char *arg)
{
	const char *p;

	for (p = arg; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\')
			break;
	if (*p || strlen(arg) < 12 || strlen(arg) > FRAGMENT_MAX) {
		fprintf(stderr, "%s: bad value for --%s: 12..%d printable characters, no '\"' or '\\'\n",
			program_invocation_short_name, name, FRAGMENT_MAX);
		exit(EXIT_USAGE);
	}
	return arg;
}

static void option(int val, const char *name, const char *arg)
{
	switch (val) {
	case 'l':
		opt.live = parse_num(name, arg, 0, 2e6);
		break;
	case 'f':
		opt.freed = parse_num(name, arg, 0, 2e6);
		break;
	case 'x':
		opt.max_len = parse_num(name, arg, FREED_MAX, 1 << 16);
		break;
	case 'F':
		opt.fragment = text_arg(name, arg);
		break;
	case 'r':
		opt.seed = parse_num(name, arg, 0, 1e9);
		break;
	case 'e':
		opt.every = parse_num(name, arg, 1, 1e6);
		break;
	}
}

static const struct option options[] = {
	{ "live", required_argument, NULL, 'l' },
	{ "freed", required_argument, NULL, 'f' },
	{ "max-len", required_argument, NULL, 'x' },
	{ "fragment", required_argument, NULL, 'F' },
	{ "seed", required_argument, NULL, 'r' },
	{ "every", required_argument, NULL, 'e' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: census_records [options]\n"
	"  --seconds N         exit after N seconds (default 60)\n"
	"  --truth FILE        append ground truth as JSON lines\n"
	"  --live N            records kept live (default 20000)\n"
	"  --freed N           records written, then freed (default 10000)\n"
	"  --max-len N         longest live record, bytes with its NUL (default 600,\n"
	"                      at least 120); freed ones are 64..120\n"
	"  --fragment TEXT     the fragment every record holds once, 12..39 printable\n"
	"                      characters (default user=atus-1-dfql6hsq)\n"
	"  --seed N            the random text's seed (default 1)\n"
	"  --every N           only every Nth record allocated holds the fragment\n"
	"                      (default 1: all)\n"
	"\"ready\" follows the pid line once the heap is built; nothing allocates\n"
	"after.  SIGUSR1 writes a truth line at once.\n",
	.options = options,
	.option = option,
};

static void on_signal(int sig)
{
	(void)sig;
	truth_write(NULL);
}

int main(int argc, char **argv)
{
	static const int signals[] = { SIGUSR1, 0 };

	parse_options(argc, argv, &cli);
	target_begin(signals);
	/* Before the first line: the truth file's buffer is ours. */
	if (truth && setvbuf(truth, truth_buf, _IOFBF, sizeof(truth_buf)))
		die("setvbuf");
	truth_write("building");
	build();
	ready = 1;
	truth_write("ready");
	printf("ready\n");
	if (fflush(stdout))
		die("stdout");
	main_loop(&(struct main_loop){ .report = truth_write, .signal = on_signal });
	truth_write("exit");
	truth_close();
	return 0;
}
