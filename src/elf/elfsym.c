/*
 * elfsym.c — symbol, section and version questions about one ELF file.
 *
 * All reading goes through libelf (ELF_C_READ: headers and sections are read
 * with pread on demand and checked against the file size by libelf), so a
 * truncated, hostile or huge file costs at most VT_ELFSYM_SECTION_MAX per
 * section and answers "no".  Loops over tables are bounded by the data size
 * libelf gives us, never by counts taken from the file alone.
 */
#include "elf/elfsym.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/scan.h"
#include "elf/elf_libs.h"

/* Version definitions we look at before giving up (glibc has ~45). */
#define VERDEF_MAX 4096

struct vt_elfsym {
	Elf *elf;
	int fd;              /* -1 for an in-memory image */
	size_t shstrndx;     /* section name string table */
	bool has_shstrndx;
};

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static bool lib_ready;

static void lib_init(void)
{
	lib_ready = elf_version(EV_CURRENT) != EV_NONE;
}

static const char *elf_why(void)
{
	const char *msg = elf_errmsg(-1);

	return msg ? msg : "unknown libelf error";
}

/* Wrap an Elf handle from elf_begin/elf_memory; on failure release elf and fd. */
static int wrap(Elf *elf, int fd, struct vt_elfsym **out, struct vt_err *err)
{
	struct vt_elfsym *ef;
	GElf_Ehdr ehdr;
	int rc;

	if (!elf) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "cannot read ELF: %s", elf_why());
		goto close_fd;
	}
	if (elf_kind(elf) != ELF_K_ELF) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "not an ELF file");
		goto end_elf;
	}
	if (!gelf_getehdr(elf, &ehdr)) {
		rc = vt_err_set(err, VT_E_PARSE, 0, "bad ELF header: %s", elf_why());
		goto end_elf;
	}
	ef = calloc(1, sizeof(*ef));
	if (!ef) {
		rc = vt_err_set(err, VT_E_NOMEM, 0, "out of memory opening an ELF file");
		goto end_elf;
	}
	ef->elf = elf;
	ef->fd = fd;
	ef->has_shstrndx = elf_getshdrstrndx(elf, &ef->shstrndx) == 0;
	*out = ef;
	return VT_OK;

end_elf:
	elf_end(elf);
close_fd:
	if (fd >= 0)
		close(fd);
	return rc;
}

int vt_elfsym_open_fd(int fd, struct vt_elfsym **out, struct vt_err *err)
{
	int rc;

	*out = NULL;
	if ((rc = vt_libelf_load(err))) {
		close(fd);
		return rc;
	}
	pthread_once(&lib_once, lib_init);
	if (!lib_ready) {
		close(fd);
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "libelf refuses EV_CURRENT");
	}
	return wrap(elf_begin(fd, ELF_C_READ, NULL), fd, out, err);
}

int vt_elfsym_open_mem(void *image, size_t len, struct vt_elfsym **out, struct vt_err *err)
{
	int rc;

	*out = NULL;
	if ((rc = vt_libelf_load(err)))
		return rc;
	pthread_once(&lib_once, lib_init);
	if (!lib_ready)
		return vt_err_set(err, VT_E_UNSUPPORTED, 0, "libelf refuses EV_CURRENT");
	if (!image || len == 0)
		return vt_err_set(err, VT_E_PARSE, 0, "not an ELF file");
	return wrap(elf_memory(image, len), -1, out, err);
}

void vt_elfsym_free(struct vt_elfsym **ef)
{
	if (!ef || !*ef)
		return;
	elf_end((*ef)->elf);
	if ((*ef)->fd >= 0)
		close((*ef)->fd);
	free(*ef);
	*ef = NULL;
}

/* A definition the dynamic linker (or static linker) could bind malloc to. */
static bool is_defined_func(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (sym->st_shndx == SHN_UNDEF || GELF_ST_BIND(sym->st_info) == STB_LOCAL)
		return false;
	return type == STT_FUNC || type == STT_GNU_IFUNC;
}

struct gnu_hash;
static bool gnu_hash_for(struct vt_elfsym *ef, Elf_Scn *sym_scn, size_t count, struct gnu_hash *gh);
static uint32_t defines_by_hash(struct vt_elfsym *ef, Elf_Scn *scn, const GElf_Shdr *sh, Elf_Data *data,
				size_t count, const char *const *names, size_t n, uint32_t found, bool *done);

static uint32_t scan_symbols(struct vt_elfsym *ef, Elf_Scn *scn, const GElf_Shdr *sh,
			     const char *const *names, size_t n, uint32_t found)
{
	uint32_t all = n >= 32 ? UINT32_MAX : (UINT32_C(1) << n) - 1;
	size_t entsize, count, i, j;
	Elf_Data *data;
	const char *name;
	GElf_Sym sym;

	if (sh->sh_size > VT_ELFSYM_SECTION_MAX)
		return found;
	entsize = gelf_fsize(ef->elf, ELF_T_SYM, 1, EV_CURRENT);
	data = elf_getdata(scn, NULL);
	if (!entsize || !data || data->d_type != ELF_T_SYM)
		return found;
	count = data->d_size / entsize;
	/* the dynamic symbols by the GNU hash table when there is one: a chain a name, not every symbol */
	if (sh->sh_type == SHT_DYNSYM && !vt_elfsym_scan_only) {
		bool done = false;

		found = defines_by_hash(ef, scn, sh, data, count, names, n, found, &done);
		if (done)
			return found;
	}
	for (i = 1; i < count && i <= INT_MAX && found != all; i++) {
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if (!is_defined_func(&sym))
			continue;
		name = elf_strptr(ef->elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		for (j = 0; j < n; j++)
			if (!(found & (UINT32_C(1) << j)) && strcmp(name, names[j]) == 0)
				found |= UINT32_C(1) << j;
	}
	return found;
}

uint32_t vt_elfsym_defines(struct vt_elfsym *ef, enum vt_elfsym_tables tables,
			   const char *const *names, size_t n)
{
	Elf_Scn *scn = NULL;
	uint32_t found = 0;
	GElf_Shdr sh;

	if (n > 32)
		n = 32;
	while ((scn = elf_nextscn(ef->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_type == SHT_DYNSYM && (tables & VT_ELFSYM_DYNSYM)) ||
		    (sh.sh_type == SHT_SYMTAB && (tables & VT_ELFSYM_SYMTAB)))
			found = scan_symbols(ef, scn, &sh, names, n, found);
	}
	return found;
}

bool vt_elfsym_has_interp(struct vt_elfsym *ef)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(ef->elf, &n) != 0)
		return false;
	for (i = 0; i < n && i <= INT_MAX; i++)
		if (gelf_getphdr(ef->elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			return true;
	return false;
}

bool vt_elfsym_abi(struct vt_elfsym *ef, int *elf_class, int *machine)
{
	GElf_Ehdr eh;
	int cls = gelf_getclass(ef->elf);

	if (cls == ELFCLASSNONE || !gelf_getehdr(ef->elf, &eh))
		return false;
	*elf_class = cls;
	*machine = eh.e_machine;
	return true;
}

/* The first section called name, its header in *sh; NULL when there is none. */
static Elf_Scn *section_named(struct vt_elfsym *ef, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	const char *sname;

	if (!ef->has_shstrndx)
		return NULL;
	while ((scn = elf_nextscn(ef->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, sh))
			continue;
		sname = elf_strptr(ef->elf, ef->shstrndx, sh->sh_name);
		if (sname && strcmp(sname, name) == 0)
			return scn;
	}
	return NULL;
}

bool vt_elfsym_section(struct vt_elfsym *ef, const char *name, const char **bytes,
		       size_t *len)
{
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr sh;

	*bytes = NULL;
	*len = 0;
	if (!(scn = section_named(ef, name, &sh)))
		return false;
	if (sh.sh_type == SHT_NOBITS || sh.sh_size > VT_ELFSYM_SECTION_MAX)
		return false;
	data = elf_rawdata(scn, NULL);
	if (!data || !data->d_buf)
		return false;
	*bytes = data->d_buf;
	*len = data->d_size;
	return true;
}

bool vt_elfsym_section_tail(struct vt_elfsym *ef, const char *name, size_t max, char **bytes, size_t *len)
{
	GElf_Shdr sh;
	size_t n, got = 0;
	char *buf;

	*bytes = NULL;
	*len = 0;
	if (ef->fd < 0 || !section_named(ef, name, &sh))
		return false;
	if (sh.sh_type == SHT_NOBITS || sh.sh_offset > (uint64_t)INT64_MAX - sh.sh_size)
		return false;
	n = sh.sh_size < max ? (size_t)sh.sh_size : max;
	if (!n || !(buf = malloc(n)))
		return false;
	while (got < n) {
		ssize_t r = pread(ef->fd, buf + got, n - got, (off_t)(sh.sh_offset + sh.sh_size - n + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			return false;
		}
		got += (size_t)r;
	}
	*bytes = buf;
	*len = n;
	return true;
}

/* "2.36" or "2.2.5" -> up to 4 numbers; false unless the whole string is that. */
static bool parse_dotted(const char *s, uint64_t v[4])
{
	struct vt_scan sc = vt_scan_init(s, strlen(s));
	int i;

	memset(v, 0, 4 * sizeof(v[0]));
	for (i = 0; i < 4; i++) {
		if (sc.p >= sc.end || *sc.p < '0' || *sc.p > '9' || !vt_scan_u64(&sc, &v[i]))
			return false;
		if (vt_scan_eof(&sc))
			return true;
		if (!vt_scan_char(&sc, '.'))
			return false;
	}
	return false;
}

static int cmp_dotted(const uint64_t a[4], const uint64_t b[4])
{
	int i;

	for (i = 0; i < 4; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

struct best_version {
	const char *prefix;
	size_t prefix_len;
	uint64_t v[4];
	const char *text;    /* numbers part of the best name, owned by libelf */
};

static void consider_version(struct best_version *best, const char *name)
{
	uint64_t v[4];

	if (!name || strncmp(name, best->prefix, best->prefix_len) != 0)
		return;
	if (!parse_dotted(name + best->prefix_len, v))
		return;
	if (!best->text || cmp_dotted(v, best->v) > 0) {
		memcpy(best->v, v, sizeof(v));
		best->text = name + best->prefix_len;
	}
}

static void scan_verdefs(struct vt_elfsym *ef, Elf_Scn *scn, const GElf_Shdr *sh,
			 struct best_version *best)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Verdaux aux;
	GElf_Verdef vd;
	size_t offset = 0;
	unsigned i;

	if (!data)
		return;
	for (i = 0; i < sh->sh_info && i < VERDEF_MAX; i++) {
		if (offset > INT_MAX || !gelf_getverdef(data, (int)offset, &vd))
			return;
		if (!(vd.vd_flags & VER_FLG_BASE) && vd.vd_cnt > 0 &&
		    offset + vd.vd_aux <= INT_MAX &&
		    gelf_getverdaux(data, (int)(offset + vd.vd_aux), &aux))
			consider_version(best, elf_strptr(ef->elf, sh->sh_link, aux.vda_name));
		if (vd.vd_next == 0)
			return;
		offset += vd.vd_next;
	}
}

bool vt_elfsym_verdef_max(struct vt_elfsym *ef, const char *prefix, char *out, size_t cap)
{
	struct best_version best = { prefix, strlen(prefix), { 0 }, NULL };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (cap)
		out[0] = '\0';
	while ((scn = elf_nextscn(ef->elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_verdef &&
		    sh.sh_size <= VT_ELFSYM_SECTION_MAX)
			scan_verdefs(ef, scn, &sh, &best);
	if (!best.text || strlen(best.text) >= cap)
		return false;
	memcpy(out, best.text, strlen(best.text) + 1);
	return true;
}

bool vt_elfsym_soname(struct vt_elfsym *ef, char *out, size_t cap)
{
	size_t entsize, count, i;
	Elf_Scn *scn = NULL;
	const char *name;
	Elf_Data *data;
	GElf_Shdr sh;
	GElf_Dyn dyn;

	if (cap)
		out[0] = '\0';
	entsize = gelf_fsize(ef->elf, ELF_T_DYN, 1, EV_CURRENT);
	while ((scn = elf_nextscn(ef->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    sh.sh_size > VT_ELFSYM_SECTION_MAX)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !entsize)
			continue;
		count = data->d_size / entsize;
		for (i = 0; i < count && i <= INT_MAX; i++) {
			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_SONAME)
				continue;
			name = elf_strptr(ef->elf, sh.sh_link, dyn.d_un.d_val);
			if (!name || strlen(name) >= cap)
				return false;
			memcpy(out, name, strlen(name) + 1);
			return true;
		}
	}
	return false;
}

/* ---- one symbol's value ------------------------------------------------ */

#define VERSYM_HIDDEN 0x8000   /* not the default version: name@VER, not name@@VER */

bool vt_elfsym_scan_only;
unsigned long vt_elfsym_hash_lookups;

struct sym_pick {
	bool found;
	bool ifunc;
	bool default_version;
	uint64_t value;
	bool unreadable;        /* a symbol table could not be read: its errno, libelf's why */
	int read_errno;
	const char *read_why;
};

/* The .gnu.version entries parallel to the symbol table sym_scn, or NULL. */
static Elf_Data *versym_for(struct vt_elfsym *ef, Elf_Scn *sym_scn)
{
	size_t sym_index = elf_ndxscn(sym_scn);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym &&
		    sh.sh_link == sym_index && sh.sh_size <= VT_ELFSYM_SECTION_MAX)
			return elf_getdata(scn, NULL);
	return NULL;
}

/*
 * A table libelf could not read (it reads them into memory it allocates:
 * malloc's ENOMEM is in errno, cleared before the call): the first why.
 */
static void unreadable(struct sym_pick *pick)
{
	if (pick->unreadable)
		return;
	pick->unreadable = true;
	pick->read_errno = errno;
	pick->read_why = elf_errmsg(-1);
}

/*
 * Symbol i of the table (sh, data) into pick if it is the defined function
 * name, the default version winning; true once the default version is found.
 */
static bool consider(struct vt_elfsym *ef, const GElf_Shdr *sh, Elf_Data *data, Elf_Data *versym, size_t i,
		     const char *name, struct sym_pick *pick)
{
	const char *sname;
	GElf_Versym vs;
	GElf_Sym sym;
	bool dflt;

	if (i > INT_MAX || !gelf_getsym(data, (int)i, &sym) || !is_defined_func(&sym))
		return false;
	sname = elf_strptr(ef->elf, sh->sh_link, sym.st_name);
	if (!sname || strcmp(sname, name) != 0)
		return false;
	dflt = !versym || !gelf_getversym(versym, (int)i, &vs) || !(vs & VERSYM_HIDDEN);
	if (pick->found && (pick->default_version || !dflt))
		return false;
	pick->found = true;
	pick->default_version = dflt;
	pick->ifunc = GELF_ST_TYPE(sym.st_info) == STT_GNU_IFUNC;
	pick->value = sym.st_value;
	return dflt;
}

/*
 * A .gnu.hash section (DT_GNU_HASH): nbuckets, symoffset, bloom_size,
 * bloom_shift, the bloom words, the buckets, then one chain word for each
 * symbol from symoffset on, whose low bit ends a chain.  Every word is
 * checked against the section's size and the symbol count before use, so
 * a malformed table only means the linear scan.
 */
struct gnu_hash {
	const uint32_t *buckets, *chain;
	uint32_t nbuckets, symoffset;
	size_t nchain;              /* chain words: count - symoffset */
};

static uint32_t gnu_hash(const char *name)
{
	uint32_t h = 5381;
	const unsigned char *p;

	for (p = (const unsigned char *)name; *p; p++)
		h = h * 33 + *p;
	return h;
}

/* The GNU hash table of the dynamic symbol table sym_scn (count symbols): false when none fits. */
static bool gnu_hash_for(struct vt_elfsym *ef, Elf_Scn *sym_scn, size_t count, struct gnu_hash *gh)
{
	size_t sym_index = elf_ndxscn(sym_scn), words, bloom_words;
	Elf_Scn *scn = NULL;
	Elf_Data *d = NULL;
	const uint32_t *w;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH && sh.sh_link == sym_index &&
		    sh.sh_size <= VT_ELFSYM_SECTION_MAX) {
			d = elf_rawdata(scn, NULL);
			break;
		}
	if (!d || !d->d_buf || d->d_size < 16 || ((uintptr_t)d->d_buf & 3) ||
	    gelf_getclass(ef->elf) != ELFCLASS64)
		return false;
	w = d->d_buf;
	words = d->d_size / 4;
	gh->nbuckets = w[0];
	gh->symoffset = w[1];
	bloom_words = (size_t)w[2] * 2;            /* 64-bit bloom words, in 32-bit words */
	if (!gh->nbuckets || gh->symoffset > count || bloom_words > words ||
	    4 + bloom_words + gh->nbuckets > words)
		return false;
	gh->buckets = w + 4 + bloom_words;
	gh->chain = gh->buckets + gh->nbuckets;
	gh->nchain = count - gh->symoffset;
	if ((size_t)(gh->chain - w) + gh->nchain > words)
		return false;
	return true;
}

/* The first symbol of h's bucket, 0 when it is empty or out of range. */
static size_t gnu_hash_first(const struct gnu_hash *gh, uint32_t h)
{
	uint32_t i = gh->buckets[h % gh->nbuckets];

	return i >= gh->symoffset && i - gh->symoffset < gh->nchain ? i : 0;
}

/* The symbol after i in h's chain whose hash matches h's, 0 at the chain's end. */
static size_t gnu_hash_next(const struct gnu_hash *gh, uint32_t h, size_t i)
{
	for (;;) {
		if (gh->chain[i - gh->symoffset] & 1)
			return 0;                    /* i ended its chain */
		i++;
		if (i - gh->symoffset >= gh->nchain)
			return 0;
		if ((gh->chain[i - gh->symoffset] | 1) == (h | 1))
			return i;
	}
}

/*
 * vt_elfsym_defines on a .dynsym through its GNU hash table: *done false
 * (and found unchanged) when it has none that fits, for the scan.
 */
static uint32_t defines_by_hash(struct vt_elfsym *ef, Elf_Scn *scn, const GElf_Shdr *sh, Elf_Data *data,
				size_t count, const char *const *names, size_t n, uint32_t found, bool *done)
{
	struct gnu_hash gh;
	size_t i, j;

	*done = false;
	if (!gnu_hash_for(ef, scn, count, &gh))
		return found;
	*done = true;
	vt_elfsym_hash_lookups++;
	for (j = 0; j < n; j++) {
		uint32_t h = gnu_hash(names[j]);

		if (found & (UINT32_C(1) << j))
			continue;
		for (i = gnu_hash_first(&gh, h); i; i = gnu_hash_next(&gh, h, i)) {
			const char *name;
			GElf_Sym sym;

			if (i > INT_MAX || !gelf_getsym(data, (int)i, &sym) || !is_defined_func(&sym))
				continue;
			name = elf_strptr(ef->elf, sh->sh_link, sym.st_name);
			if (name && strcmp(name, names[j]) == 0) {
				found |= UINT32_C(1) << j;
				break;
			}
		}
	}
	return found;
}

static void pick_in_table(struct vt_elfsym *ef, Elf_Scn *scn, const GElf_Shdr *sh,
			  const char *name, struct sym_pick *pick)
{
	Elf_Data *data, *versym;
	struct gnu_hash gh;
	size_t entsize, count, i;

	if (sh->sh_size > VT_ELFSYM_SECTION_MAX)
		return;
	entsize = gelf_fsize(ef->elf, ELF_T_SYM, 1, EV_CURRENT);
	errno = 0;
	data = elf_getdata(scn, NULL);
	if (!data && sh->sh_size > 0) {
		unreadable(pick);
		return;
	}
	if (!entsize || !data || data->d_type != ELF_T_SYM)
		return;
	/* its names: libelf reads the string table at the first elf_strptr */
	errno = 0;
	if (sh->sh_link && !elf_getdata(elf_getscn(ef->elf, sh->sh_link), NULL)) {
		unreadable(pick);
		return;
	}
	versym = sh->sh_type == SHT_DYNSYM ? versym_for(ef, scn) : NULL;
	count = data->d_size / entsize;
	/* the dynamic symbols by the GNU hash table when there is one: only those of this name's hash */
	if (sh->sh_type == SHT_DYNSYM && !vt_elfsym_scan_only && gnu_hash_for(ef, scn, count, &gh)) {
		uint32_t h = gnu_hash(name);

		vt_elfsym_hash_lookups++;

		for (i = gnu_hash_first(&gh, h); i; i = gnu_hash_next(&gh, h, i))
			if (consider(ef, sh, data, versym, i, name, pick))
				return;
		return;
	}
	for (i = 1; i < count && i <= INT_MAX; i++)
		if (consider(ef, sh, data, versym, i, name, pick))
			return;
}

int vt_elfsym_symbol(struct vt_elfsym *ef, const char *name, uint64_t *value, struct vt_err *err)
{
	static const Elf64_Word order[] = { SHT_DYNSYM, SHT_SYMTAB };
	struct sym_pick pick = { 0 };
	Elf_Scn *scn;
	GElf_Shdr sh;
	size_t t;

	*value = 0;
	for (t = 0; t < sizeof(order) / sizeof(order[0]) && !pick.found; t++) {
		scn = NULL;
		while ((scn = elf_nextscn(ef->elf, scn)) != NULL && !pick.default_version)
			if (gelf_getshdr(scn, &sh) && sh.sh_type == order[t])
				pick_in_table(ef, scn, &sh, name, &pick);
	}
	if (pick.found && !pick.ifunc) {
		*value = pick.value;
		return VT_OK;
	}
	if (!pick.found && pick.unreadable) {
		if (pick.read_errno == ENOMEM)
			return vt_err_set(err, VT_E_NOMEM, ENOMEM, "out of memory reading the symbol table "
					  "to find '%s'", name);
		return vt_err_set(err, VT_E_PARSE, pick.read_errno, "cannot read the symbol table to find "
				  "'%s': %s", name, pick.read_why ? pick.read_why : "libelf failed");
	}
	return vt_err_set(err, VT_E_NOTFOUND, 0, "no function '%s'", name);
}

bool vt_elfsym_first_load_vaddr(struct vt_elfsym *ef, uint64_t *vaddr)
{
	size_t n, i;
	GElf_Phdr ph;

	*vaddr = 0;
	if (elf_getphdrnum(ef->elf, &n) != 0)
		return false;
	for (i = 0; i < n && i <= INT_MAX; i++) {
		if (gelf_getphdr(ef->elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			*vaddr = ph.p_vaddr;
			return true;
		}
	}
	return false;
}

void vt_elfsym_each_func(struct vt_elfsym *ef, vt_elfsym_func_fn fn, void *ctx)
{
	static const Elf64_Word order[] = { SHT_SYMTAB, SHT_DYNSYM };
	size_t entsize = gelf_fsize(ef->elf, ELF_T_SYM, 1, EV_CURRENT);

	for (size_t t = 0; t < sizeof(order) / sizeof(order[0]); t++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(ef->elf, scn)) != NULL) {
			Elf_Data *data;
			size_t count;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != order[t] ||
			    sh.sh_size > VT_ELFSYM_SECTION_MAX || !entsize)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data || data->d_type != ELF_T_SYM)
				continue;
			count = data->d_size / entsize;
			for (size_t i = 1; i < count && i <= INT_MAX; i++) {
				GElf_Sym sym;
				const char *name;

				if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
					continue;
				name = elf_strptr(ef->elf, sh.sh_link, sym.st_name);
				if (name && name[0] && !fn(ctx, name, sym.st_value, sym.st_size))
					return;
			}
		}
	}
}

bool vt_elfsym_vaddr_offset(struct vt_elfsym *ef, uint64_t vaddr, uint64_t *offset)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(ef->elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n && i <= INT_MAX; i++) {
		if (gelf_getphdr(ef->elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*offset = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}
