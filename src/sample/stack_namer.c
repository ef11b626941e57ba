/*
 * stack_namer.c — code addresses turned into a profile's locations, cached.
 *
 * Moved out of the profiler so every sampler that fills a vt_profile (CPU
 * and wall samples, allocation sites) names frames the same way.
 */
#include "sample/stack_namer.h"

#include <stdlib.h>
#include <string.h>

#include "elf/demangle.h"
#include "proc/procfs.h"

#define NO_IDX UINT32_MAX

/*
 * Re-read the module list (a failed refresh keeps the old one).  When it changed
 * (an exec, a dlopen) the pcs cached so far were named against the old modules,
 * and the pcs seen since the change as in no module at all: forget them, or a pc
 * first sampled in the moment after an exec stays unnamed for the whole run.
 */
void vt_stack_namer_refresh(struct vt_stack_namer *nm)
{
	struct vt_unwind_stats before, after;
	struct vt_err err;

	vt_unwinder_get_stats(nm->uw, &before);
	vt_unwinder_refresh(nm->uw, &err);
	vt_unwinder_get_stats(nm->uw, &after);
	if (after.reports != before.reports && nm->pcs) {
		memset(nm->pcs, 0, nm->pc_cap * sizeof(*nm->pcs));
		nm->pc_n = 0;
	}
	if (after.reports != before.reports)
		nm->maps_buf = (struct vt_buf)VT_BUF_INIT(VT_PROC_FILE_MAX);
	nm->maps_stale = true;
}

/* The region of l that holds addr (maps lists them in address order), NULL none. */
static const struct vt_region *region_at(const struct vt_region_list *l, uint64_t addr)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < l->v[mid].start)
			hi = mid;
		else if (addr >= l->v[mid].end)
			lo = mid + 1;
		else
			return &l->v[mid];
	}
	return NULL;
}

/*
 * The executable mapping of a module, the one that holds pc: what pprof's
 * Mapping gives a reader to place the profile's addresses in the file.  maps
 * is read again only when the unwinder's module list changed since, so a
 * module's first pc costs a lookup, and maps is read a few times a run.
 */
static void module_mapping(struct vt_stack_namer *nm, uint32_t module, uint64_t pc)
{
	struct vt_err err;
	if (nm->p->modules[module].limit)
		return;
	if (nm->maps_stale) {
		nm->maps_stale = false;
		vt_region_list_release(&nm->maps);
		if (vt_read_at(nm->dirfd, "maps", &nm->maps_buf, &err) != VT_OK ||
		    vt_maps_parse(nm->maps_buf.data, nm->maps_buf.len, &nm->maps, &err) != VT_OK)
			vt_region_list_release(&nm->maps);
	}
	const struct vt_region *r = region_at(&nm->maps, pc);
	if (!r || vt_region_is_anon(r) || r->perms[2] != 'x')
		return;
	struct vt_prof_module *m = &nm->p->modules[module];
	m->start = r->start;
	m->limit = r->end;
	m->offset = r->offset;
}

static struct vt_namer_slot *pc_cache_slot(struct vt_stack_namer *nm, uint64_t key, bool *found)
{
	if ((nm->pc_n + 1) * 2 > nm->pc_cap) {
		size_t cap = nm->pc_cap ? nm->pc_cap * 2 : 1024;
		struct vt_namer_slot *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < nm->pc_cap; i++) {
			if (!nm->pcs[i].key)
				continue;
			size_t s = (size_t)((nm->pcs[i].key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
			while (n[s].key)
				s = (s + 1) & (cap - 1);
			n[s] = nm->pcs[i];
		}
		free(nm->pcs);
		nm->pcs = n;
		nm->pc_cap = cap;
	}
	size_t s = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (nm->pc_cap - 1);
	while (nm->pcs[s].key && nm->pcs[s].key != key)
		s = (s + 1) & (nm->pc_cap - 1);
	*found = nm->pcs[s].key == key;
	if (!*found) {
		nm->pcs[s] = (struct vt_namer_slot){ .key = key, .loc = NO_IDX, .module = NO_IDX };
		nm->pc_n++;
	}
	return &nm->pcs[s];
}

uint32_t vt_stack_namer_kernel(struct vt_stack_namer *nm, uint64_t pc, uint32_t kernel_module)
{
	bool found;
	struct vt_namer_slot *slot = pc_cache_slot(nm, pc << 1 | 1, &found);
	if (!slot) {
		nm->nomem = true;
		return NO_IDX;
	}
	if (found)
		return slot->loc;
	/* named after sampling (name_kernel_locs): loading kallsyms takes a while */
	struct vt_profile *p = nm->p;
	uint32_t func = vt_profile_intern_func(p, 0, p->modules[kernel_module].name);
	slot->loc = vt_profile_intern_loc(p, pc, pc, func, true);
	slot->module = kernel_module;
	if (slot->loc == NO_IDX)
		nm->nomem = true;
	return slot->loc;
}

/* The function sym names in module mod_name: its demangling, the symbol kept
 * beside it; name "" when sym is NULL. */
static uint32_t user_func(struct vt_profile *p, const char *sym, uint32_t mod_name)
{
	uint32_t name = 0, system_name = 0;
	if (sym) {
		char demangled[1024];   /* longer names (Rust generics) are cut, the symbol kept whole */
		if (vt_demangle(sym, demangled, sizeof(demangled))) {
			name = vt_profile_intern_str(p, demangled);
			system_name = vt_profile_intern_str(p, sym);
		} else {
			name = vt_profile_intern_str(p, sym);
		}
	}
	return vt_profile_intern_func_sym(p, name == NO_IDX ? 0 : name,
					  system_name == NO_IDX ? 0 : system_name, mod_name);
}

/*
 * The locations of pc in module mod_name: with DWARF, one for each function
 * inlined at pc and one for the function whose code it is (named by its
 * symbol when it has one), each with its source line, chained by
 * inlined_into; else one, named by the symbol.  The innermost's index.
 */
static uint32_t user_locs(struct vt_stack_namer *nm, uint64_t pc, bool is_return,
			  const struct vt_unwind_sym *sym, uint64_t off, uint32_t mod_name)
{
	struct vt_profile *p = nm->p;
	struct vt_unwind_inline chain[VT_UNWIND_MAX_INLINE];
	size_t n = sym ? vt_unwind_source(nm->uw, pc, is_return, chain, VT_UNWIND_MAX_INLINE) : 0;
	struct vt_prof_loc key = { .pc = pc, .module_off = off };
	uint32_t loc = NO_IDX;

	key.func = user_func(p, sym && sym->func ? sym->func : n ? chain[n - 1].func : NULL,
			     mod_name);
	for (size_t i = n; ; i--) {
		if (key.func == NO_IDX)
			return NO_IDX;
		if (i > 0) {
			const struct vt_unwind_inline *f = &chain[i - 1];
			key.file = f->file ? vt_profile_intern_str(p, f->file) : 0;
			key.line = f->line;
			if (f->decl_file)
				vt_profile_func_set_source(p, key.func, vt_profile_intern_str(p, f->decl_file),
							   f->decl_line);
			if (key.file == NO_IDX)
				return NO_IDX;
		}
		loc = vt_profile_intern_loc_full(p, &key);
		if (loc == NO_IDX || i <= 1)
			return loc;
		key.inlined_into = loc + 1;
		key.func = user_func(p, chain[i - 2].func, mod_name);
	}
}

/* The location of a user pc; a caller's return address is named at pc - 1.  With
 * inlined functions at pc, the innermost one's (its callers follow by inlined_into). */
uint32_t vt_stack_namer_user(struct vt_stack_namer *nm, uint64_t pc, bool is_return, uint32_t *module)
{
	bool found;
	struct vt_namer_slot *slot = pc_cache_slot(nm, pc << 1, &found);
	struct vt_profile *p = nm->p;
	if (!slot) {
		nm->nomem = true;
		return NO_IDX;
	}
	if (found) {
		*module = slot->module;
		return slot->loc;
	}
	struct vt_unwind_sym sym;
	uint32_t mod_name = 0;
	*module = NO_IDX;
	uint64_t off = pc;
	bool named = vt_unwind_symbolize(nm->uw, pc, is_return, &sym) && sym.module;
	if (named) {
		*module = vt_profile_intern_module(p, sym.module, sym.path ? sym.path : "");
		if (*module != NO_IDX) {
			struct vt_unwind_debug dbg;

			p->modules[*module].symbols = sym.symbols;
			if (!p->modules[*module].lines && vt_unwind_module_debug(nm->uw, pc, &dbg) &&
			    vt_profile_module_set_debug(p, *module, dbg.lines, dbg.debug_file, dbg.ignored,
							dbg.ignored_why) != VT_OK)
				nm->nomem = true;
			mod_name = p->modules[*module].name;
			if (sym.path && sym.path[0] == '/')
				module_mapping(nm, *module, pc);
		}
		off = sym.module_off;
	} else {
		nm->unnamed++;
	}
	slot->loc = user_locs(nm, pc, is_return, named ? &sym : NULL, off, mod_name);
	slot->module = *module;
	if (slot->loc == NO_IDX)
		nm->nomem = true;
	return slot->loc;
}

/*
 * Append the user frames of pcs[0..n) (leaf first, methods as found) to
 * locs from *depth on, tallying each step's method against its module.
 */
void vt_stack_namer_push(struct vt_stack_namer *nm, const struct vt_unwind_frame *frames, size_t n,
			 uint32_t *locs, uint32_t *depth)
{
	for (size_t i = 0; i < n && *depth < VT_PROFILE_MAX_DEPTH; i++) {
		uint32_t module;
		uint32_t loc = vt_stack_namer_user(nm, frames[i].pc, !frames[i].activation, &module);
		if (loc == NO_IDX)
			return;
		locs[(*depth)++] = loc;
		/* the functions loc's was inlined into, innermost first */
		while (nm->p->locs[loc].inlined_into && *depth < VT_PROFILE_MAX_DEPTH)
			locs[(*depth)++] = loc = nm->p->locs[loc].inlined_into - 1;
		if (module != NO_IDX && frames[i].method < VT_UNWIND__COUNT)
			nm->p->modules[module].frames[frames[i].method]++;
	}
}

void vt_stack_namer_init(struct vt_stack_namer *nm, struct vt_profile *p, struct vt_unwinder *uw,
			 int dirfd)
{
	memset(nm, 0, sizeof(*nm));
	nm->p = p;
	nm->uw = uw;
	nm->dirfd = dirfd;
	nm->maps_buf = (struct vt_buf)VT_BUF_INIT(VT_PROC_FILE_MAX);
	nm->maps_stale = true;
}

void vt_stack_namer_release(struct vt_stack_namer *nm)
{
	free(nm->pcs);
	nm->pcs = NULL;
	nm->pc_cap = nm->pc_n = 0;
	vt_region_list_release(&nm->maps);
	vt_buf_release(&nm->maps_buf);
}
