/*
 * tramp_cache.c — where a libc keeps the code calls return through,
 * remembered across runs (see tramp_cache.h).
 *
 * The file holds one line per library file, at most CACHE_ENTRIES, newest
 * last:
 *
 *	dev ino size mtime_s mtime_ns build-id sigreturn_off store_off store_reg store_disp
 *
 * all decimal but the build-id (hex, or "-").  A line that does not parse
 * exactly is skipped; a file larger than CACHE_FILE_MAX is not read.
 */
#include "inject/tramp_cache.h"

#include "base/user_cache.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define CACHE_NAME "tramp-v1"
#define CACHE_ENTRIES 16
#define CACHE_FILE_MAX 8192
#define LINE_MAX_LEN 256
#define NOTES_MAX 4096          /* bytes of one PT_NOTE segment looked at for the build-id */

/* ---- the key -------------------------------------------------------------- */

/* The GNU build-id of the ELF file fd, as hex into out; false when it has none. */
static bool build_id_of(int fd, char *out, size_t cap)
{
	Elf64_Ehdr eh;
	Elf64_Phdr phs[64];
	unsigned char notes[NOTES_MAX];
	unsigned i;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 64 ||
	    eh.e_phoff > (uint64_t)INT64_MAX - sizeof(phs))
		return false;
	/* the program headers in one read */
	if (pread(fd, phs, eh.e_phnum * sizeof(phs[0]), (off_t)eh.e_phoff) != (ssize_t)(eh.e_phnum * sizeof(phs[0])))
		return false;
	for (i = 0; i < eh.e_phnum; i++) {
		const Elf64_Phdr ph = phs[i];
		size_t len, at = 0;

		if (ph.p_type != PT_NOTE)
			continue;
		len = ph.p_filesz < sizeof(notes) ? (size_t)ph.p_filesz : sizeof(notes);
		if (pread(fd, notes, len, (off_t)ph.p_offset) != (ssize_t)len)
			continue;
		while (at + sizeof(Elf64_Nhdr) <= len) {
			Elf64_Nhdr nh;
			size_t name_at = at + sizeof(nh), desc_at, next, k;

			memcpy(&nh, notes + at, sizeof(nh));
			desc_at = name_at + ((nh.n_namesz + 3u) & ~3u);
			next = desc_at + ((nh.n_descsz + 3u) & ~3u);
			if (nh.n_namesz > len || nh.n_descsz > len || next > len)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(notes + name_at, "GNU", 4) &&
			    nh.n_descsz > 0 && 2 * (size_t)nh.n_descsz < cap) {
				for (k = 0; k < nh.n_descsz; k++)
					snprintf(out + 2 * k, 3, "%02x", notes[desc_at + k]);
				return true;
			}
			at = next;
		}
	}
	return false;
}

bool vt_tramp_key_of(int pid_fd, const struct vt_region *r, struct vt_tramp_key *k)
{
	char path[4096];
	struct stat st;
	size_t n;
	int fd;
	bool ok;

	memset(k, 0, sizeof(*k));
	if (!r->path || r->path[0] != '/' || !r->inode)
		return false;
	n = strlen(r->path);
	if (n > 10 && !strcmp(r->path + n - 10, " (deleted)"))
		return false;
	if ((size_t)snprintf(path, sizeof(path), "root%s", r->path) >= sizeof(path))
		return false;
	fd = openat(pid_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == r->inode &&
	     major(st.st_dev) == r->dev_major && minor(st.st_dev) == r->dev_minor;
	if (ok) {
		k->dev = (uint64_t)st.st_dev;
		k->ino = (uint64_t)st.st_ino;
		k->size = (uint64_t)st.st_size;
		k->mtime_s = (int64_t)st.st_mtim.tv_sec;
		k->mtime_ns = (int64_t)st.st_mtim.tv_nsec;
		if (!build_id_of(fd, k->build_id, sizeof(k->build_id)))
			snprintf(k->build_id, sizeof(k->build_id), "-");
	}
	close(fd);
	return ok;
}

static bool key_eq(const struct vt_tramp_key *a, const struct vt_tramp_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_s == b->mtime_s &&
	       a->mtime_ns == b->mtime_ns && !strcmp(a->build_id, b->build_id);
}

/* ---- the file (in the user's cache directory: base/user_cache.h) ------------ */

/* One line of the file; false when it is not exactly an entry. */
static bool parse_line(const char *line, struct vt_tramp_key *k, struct vt_tramp_entry *e)
{
	char id[VT_BUILD_ID_MAX + 2], tail;
	unsigned long long dev, ino, size, sig, store;
	long long ms, mns;
	unsigned reg;
	int disp;
	size_t i;

	if (sscanf(line, "%llu %llu %llu %lld %lld %65s %llu %llu %u %d %c", &dev, &ino, &size, &ms, &mns, id,
		   &sig, &store, &reg, &disp, &tail) != 10)
		return false;
	if (strlen(id) > VT_BUILD_ID_MAX || reg > 2 || disp < -128 || disp > 127 || mns < 0 || mns >= 1000000000)
		return false;
	if (strcmp(id, "-"))
		for (i = 0; id[i]; i++)
			if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
				return false;
	memset(k, 0, sizeof(*k));
	k->dev = dev;
	k->ino = ino;
	k->size = size;
	k->mtime_s = ms;
	k->mtime_ns = mns;
	memcpy(k->build_id, id, strlen(id) + 1);       /* strlen(id) <= VT_BUILD_ID_MAX: checked above */
	e->sigreturn_off = sig;
	e->store_off = store;
	e->store_reg = reg;
	e->store_disp = disp;
	return true;
}

/* Call each(line, ctx) for every line of text (text is modified). */
static void each_line(char *text, void (*each)(const char *line, void *ctx), void *ctx)
{
	char *line = text, *nl;

	while (*line) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (strlen(line) < LINE_MAX_LEN)
			each(line, ctx);
		if (!nl)
			break;
		line = nl + 1;
	}
}

struct lookup {
	const struct vt_tramp_key *want;
	struct vt_tramp_entry *e;
	bool found;
};

static void lookup_line(const char *line, void *ctx)
{
	struct lookup *l = ctx;
	struct vt_tramp_key k;
	struct vt_tramp_entry e;

	if (parse_line(line, &k, &e) && key_eq(&k, l->want)) {
		*l->e = e;          /* the last line for a key wins */
		l->found = true;
	}
}

bool vt_tramp_cache_get(const struct vt_tramp_key *k, struct vt_tramp_entry *e)
{
	char text[CACHE_FILE_MAX];
	struct lookup l = { k, e, false };
	int dfd = vt_user_cache_dir(false);
	size_t len;

	if (dfd < 0)
		return false;
	if (vt_user_cache_read(dfd, CACHE_NAME, text, sizeof(text), &len))
		each_line(text, lookup_line, &l);
	close(dfd);
	return l.found;
}

struct keep {
	const struct vt_tramp_key *drop;
	char lines[CACHE_ENTRIES][LINE_MAX_LEN];
	size_t n;
};

/* Keep the newest CACHE_ENTRIES - 1 well-formed lines for other files. */
static void keep_line(const char *line, void *ctx)
{
	struct keep *kp = ctx;
	struct vt_tramp_key k;
	struct vt_tramp_entry e;
	size_t len;

	if (!parse_line(line, &k, &e) || key_eq(&k, kp->drop))
		return;
	if (kp->n == CACHE_ENTRIES - 1) {
		memmove(kp->lines[0], kp->lines[1], sizeof(kp->lines[0]) * (CACHE_ENTRIES - 2));
		kp->n--;
	}
	len = strlen(line);
	if (len >= LINE_MAX_LEN)
		return;
	memcpy(kp->lines[kp->n++], line, len + 1);
}

void vt_tramp_cache_put(const struct vt_tramp_key *k, const struct vt_tramp_entry *e)
{
	char text[CACHE_FILE_MAX], line[LINE_MAX_LEN];
	struct keep *kp = calloc(1, sizeof(*kp));
	size_t i, len = 0, n;
	int dfd;

	if (!kp)
		return;
	dfd = vt_user_cache_dir(true);
	if (dfd < 0) {
		free(kp);
		return;
	}
	kp->drop = k;
	if (vt_user_cache_read(dfd, CACHE_NAME, text, sizeof(text), &n))
		each_line(text, keep_line, kp);
	snprintf(line, sizeof(line), "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %s %" PRIu64
		 " %" PRIu64 " %u %d", k->dev, k->ino, k->size, k->mtime_s, k->mtime_ns, k->build_id,
		 e->sigreturn_off, e->store_off, e->store_reg, e->store_disp);
	/* the kept lines, then this one: at most CACHE_ENTRIES lines of under LINE_MAX_LEN bytes */
	for (i = 0; i <= kp->n; i++) {
		const char *l = i < kp->n ? kp->lines[i] : line;

		n = strlen(l);
		if (len + n + 1 >= sizeof(text))
			break;
		memcpy(text + len, l, n);
		text[len + n] = '\n';
		len += n + 1;
	}
	if (i > kp->n)
		(void)vt_user_cache_replace(dfd, CACHE_NAME, text, len);
	close(dfd);
	free(kp);
}
