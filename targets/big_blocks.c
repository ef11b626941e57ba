/*
 * big_blocks: large malloc'd blocks, each an mmapped chunk of glibc, laid
 * out the ways that hide them in /proc/PID/maps.
 *
 *   single    one malloc(128 MiB) right below a small anonymous mapping of
 *             the program's own (64 KiB, written): the kernel merges the two
 *             into one mapping;
 *   report    two 128 MiB and three 93 MiB blocks malloc'd one after the
 *             other (field report 000's layout) right below an 8 KiB
 *             mapping of the program's own: one mapping of about 535 MiB;
 *   decoy     one malloc(128 MiB) with a 256 KiB mapping of the program's
 *             own right below it, whose pages start with words that look
 *             almost like a chunk header (a size that runs past the
 *             mapping, PREV_INUSE set, a non-zero prev_size).
 * A PROT_NONE page between the groups keeps them in separate mappings.
 * The program's own mappings are placed with MAP_FIXED_NOREPLACE where the
 * next mmap would go (right below the lowest mapping so far), so that the
 * kernel puts each block against them.
 *
 * Each block's first bytes say what it holds (JSON text, plain text,
 * zeros, binary, a pointer), and only its first --touch-kb KiB are written
 * (its header page by malloc itself).
 *
 * Truth (once, and at exit): "blocks", each {"group", "chunk" (the header's
 * address, hex), "size" (chunk bytes: malloc_usable_size + 16), "head" (the
 * kind its first 16 bytes are, as census names them), "json" (it starts
 * with a JSON object)}; "own", the program's own anonymous mappings
 * {"start", "end"} (hex); "mappings", for each group the mapping of
 * /proc/self/maps holding its blocks {"group", "start", "end"}; "touched_bytes"
 * per block.
 */
#include <inttypes.h>
#include <malloc.h>
#include <sys/mman.h>

#include "common.h"

#define MiB (1ul << 20)
#define NBLOCKS 7

static struct {
	size_t touch;
} opt = { .touch = 1 * MiB };

struct block {
	const char *group;
	size_t request;
	const char *head;        /* census's kind of its first 16 bytes */
	int json;
	void *p;
};

static struct block blocks[NBLOCKS] = {
	{ "single", 128 * MiB, "text", 1, NULL },
	{ "report", 128 * MiB, "text", 0, NULL },
	{ "report", 128 * MiB, "zero", 0, NULL },
	{ "report", 93 * MiB, "binary", 0, NULL },
	{ "report", 93 * MiB, "pointer", 0, NULL },
	{ "report", 93 * MiB, "small-int", 0, NULL },
	{ "decoy", 128 * MiB, "text", 1, NULL },
};

struct own {
	void *start;
	size_t len;
};
static struct own owns[4];
static int nown;

static char mappings[3][96];

/*
 * Where the next large mmap goes: a probe as large as any block (address
 * space only) lands right below the lowest mapping of the mmap area, where
 * no small gap between libraries can take it.
 */
static uintptr_t lowest_mapping(void)
{
	const size_t len = (1ul << 30) + 4096;   /* not a multiple of 2 MiB: no THP alignment */
	void *probe = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (probe == MAP_FAILED)
		die("mmap");
	munmap(probe, len);
	return (uintptr_t)probe + len;
}

/* A mapping of our own ending at top (0: right below the lowest one), written. */
static void *own_map(size_t len, int prot, uintptr_t top)
{
	uintptr_t at = (top ? top : lowest_mapping()) - len;
	void *p = mmap((void *)at, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	if (prot & PROT_WRITE) {
		memset(p, 0x5a, len);
		owns[nown].start = p;
		owns[nown++].len = len;
	}
	return p;
}

static void fill_head(struct block *b)
{
	uint64_t *w = b->p;
	size_t i;

	for (i = 0; i < opt.touch && i < b->request; i += 4096)
		((volatile char *)b->p)[i] = ((char *)b->p)[i];     /* resident, content unchanged */
	if (!strcmp(b->head, "text"))
		strcpy(b->p, b->json ? "{\"user\":\"alice@example.org\",\"token\":\"c2VjcmV0\"}"
				     : "GET /api/v1/orders?customer=alice HTTP/1.1\r\n");
	else if (!strcmp(b->head, "binary"))
		memcpy(b->p, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", 16);
	else if (!strcmp(b->head, "pointer"))
		w[0] = (uint64_t)(uintptr_t)&blocks[0], w[1] = 42;
	else if (!strcmp(b->head, "small-int"))
		w[0] = 7, w[1] = 0xfffffffffffffff1ull;
}

/* The mapping of /proc/self/maps that holds addr. */
static void mapping_of(const void *addr, char *out, size_t cap, const char *group)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi, a = (unsigned long)(uintptr_t)addr;
	char line[512];

	if (!f)
		die("/proc/self/maps");
	out[0] = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && a >= lo && a < hi)
			snprintf(out, cap, "{\"group\":\"%s\",\"start\":\"0x%lx\",\"end\":\"0x%lx\"}", group, lo, hi);
	fclose(f);
}

static void setup(void)
{
	uint64_t *decoy;
	int i;

	own_map(4096, PROT_NONE, 0);
	own_map(64 << 10, PROT_READ | PROT_WRITE, 0);
	blocks[0].p = malloc(blocks[0].request);
	own_map(4096, PROT_NONE, 0);
	own_map(8 << 10, PROT_READ | PROT_WRITE, 0);
	for (i = 1; i <= 5; i++)
		blocks[i].p = malloc(blocks[i].request);
	own_map(4096, PROT_NONE, 0);
	blocks[6].p = malloc(blocks[6].request);
	if (!blocks[6].p)
		die("malloc");
	decoy = own_map(256 << 10, PROT_READ | PROT_WRITE, (uintptr_t)blocks[6].p - 16);
	/* almost headers: a size past the mapping, PREV_INUSE set, a prev_size */
	decoy[0] = 0, decoy[1] = (1ull << 30) | 2;
	decoy[512] = 0, decoy[513] = (128ull << 10) | 3;
	decoy[1024] = 16, decoy[1025] = (128ull << 10) | 2;
	decoy[1536] = 0, decoy[1537] = ((200ull << 10) + 16) | 2;      /* not a whole number of pages */
	for (i = 0; i < NBLOCKS; i++) {
		if (!blocks[i].p)
			die("malloc");
		fill_head(&blocks[i]);
	}
	mapping_of(blocks[0].p, mappings[0], sizeof(mappings[0]), "single");
	mapping_of(blocks[1].p, mappings[1], sizeof(mappings[1]), "report");
	mapping_of(blocks[6].p, mappings[2], sizeof(mappings[2]), "decoy");
}

static void truth_write(const char *phase)
{
	FILE *f = truth_begin(phase ? phase : "holding");
	int i;

	if (!f)
		return;
	fprintf(f, ",\"touched_bytes\":%zu,\"blocks\":[", opt.touch);
	for (i = 0; i < NBLOCKS; i++)
		fprintf(f, "%s{\"group\":\"%s\",\"chunk\":\"0x%lx\",\"size\":%zu,\"head\":\"%s\",\"json\":%s}",
			i ? "," : "", blocks[i].group, (unsigned long)(uintptr_t)blocks[i].p - 16,
			malloc_usable_size(blocks[i].p) + 16, blocks[i].head, blocks[i].json ? "true" : "false");
	fprintf(f, "],\"own\":[");
	for (i = 0; i < nown; i++)
		fprintf(f, "%s{\"start\":\"0x%lx\",\"end\":\"0x%lx\"}", i ? "," : "",
			(unsigned long)(uintptr_t)owns[i].start, (unsigned long)(uintptr_t)owns[i].start + owns[i].len);
	fprintf(f, "],\"mappings\":[%s,%s,%s]", mappings[0], mappings[1], mappings[2]);
	truth_end();
}

static void option(int val, const char *name, const char *arg)
{
	if (val == 'k')
		opt.touch = (size_t)parse_num(name, arg, 4, 128 * 1024) * 1024;
}

static const struct option options[] = {
	{ "touch-kb", required_argument, NULL, 'k' },
	{ NULL, 0, NULL, 0 }
};

static const struct cli cli = {
	.usage =
	"usage: big_blocks [options]\n"
	"  --seconds N        exit after N seconds (default 60)\n"
	"  --truth FILE       append ground truth as JSON lines\n"
	"  --touch-kb N       write the first N KiB of each block (default 1024)\n",
	.options = options,
	.option = option,
};

int main(int argc, char **argv)
{
	struct main_loop loop = { .report = truth_write, .every = 5 };

	parse_options(argc, argv, &cli);
	target_begin(NULL);
	setup();
	main_loop(&loop);
	truth_write("exit");
	truth_close();
	return 0;
}
