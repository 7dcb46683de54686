/*
 * gopclntab.c - Go binaries without DWARF: functions, files and lines
 * from the Go runtime's own table, .gopclntab, into the same nodes and
 * segments as DWARF (the inlined frames are gopclntab_inline.c's).
 *
 * Pipeline position: index.c calls sym_gopclntab_collect when neither the
 * file nor a debug file has DWARF.  The table is read once, function by
 * function: its _func record, its pc-file and pc-line tables (and the
 * PCDATA_InlTreeIndex table) decoded into runs, one node a function, one
 * scope interval a function, line intervals, all flattened by flatten.c
 * as DWARF units are.  Nothing that points into the file is kept.
 *
 * Formats: the pcHeader magics of Go 1.16/1.17 (0xfffffffa), 1.18/1.19
 * (0xfffffff0) and 1.20+ (0xfffffff1), little-endian.  In 1.18+ funcdata
 * are offsets from moduledata.gofunc, which no header records: moduledata
 * is found in .noptrdata by the pointer to the pcHeader that opens it and
 * checked field by field (go_find_moduledata); when it cannot be found
 * exactly, functions and lines are still read but no inline frames.
 * Layouts, checks and limits: docs/symbol-index.md.
 */
#include "gopclntab.h"

#include <stdlib.h>
#include <string.h>

/* Functions flattened a batch: the temporary intervals stay small. */
#define SCOPES_PER_FLATTEN 65536

/* ---- the ELF side ----------------------------------------------------------- */

/* Sections of the file that the table is read with. */
struct go_elf {
	struct sym_go_sect pclntab, noptrdata;
	uint64_t text_addr;
};

static int go_add_sect(struct sym_go_table *t, size_t *alloc,
		       const GElf_Shdr *sh, Elf_Data *d)
{
	struct sym_go_sect s = { sh->sh_addr, d->d_buf, d->d_size };

	return EMBER_VEC_PUSH(t->sects, t->nsects, *alloc, s);
}

/* The allocated sections with contents, and the three Go needs by name. */
static int go_sections(Elf *elf, struct sym_go_table *t, struct go_elf *ge)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, alloc = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0; /* no section names: nothing to find */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED) ||
		    sh.sh_size == 0)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			continue;
		if (go_add_sect(t, &alloc, &sh, d))
			return -ENOMEM;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".gopclntab") == 0)
			ge->pclntab = t->sects[t->nsects - 1];
		else if (strcmp(name, ".noptrdata") == 0)
			ge->noptrdata = t->sects[t->nsects - 1];
		else if (strcmp(name, ".text") == 0)
			ge->text_addr = sh.sh_addr;
	}
	return 0;
}

const uint8_t *sym_go_bytes_at(const struct sym_go_table *t, uint64_t addr,
			       uint64_t size)
{
	for (size_t i = 0; i < t->nsects; i++) {
		const struct sym_go_sect *s = &t->sects[i];

		if (addr >= s->addr && addr - s->addr <= s->size &&
		    size <= s->size - (addr - s->addr))
			return s->data + (addr - s->addr);
	}
	return NULL;
}

/* ---- the header (runtime.pcHeader) ------------------------------------------ */

static int go_version(struct sym_go_table *t, uint32_t magic)
{
	switch (magic) {
	case SYM_GO_MAGIC_116:
		t->ver = SYM_GO_116;
		return 0;
	case SYM_GO_MAGIC_118:
		t->ver = SYM_GO_118;
		return 0;
	case SYM_GO_MAGIC_120:
		t->ver = SYM_GO_120;
		return 0;
	default:
		return EMBER_FAIL(&t->diag, -EINVAL, "unknown pcHeader magic (not Go "
				  "1.16 or later, or big-endian)");
	}
}

/* Table k of the header's five (offsets[]): from its offset to the next
 * table's, or to the section's end (the header gives no sizes). */
static int go_table_at(struct sym_go_table *t, const uint64_t *offsets,
		       unsigned k, struct elfdw_sect *out)
{
	uint64_t off = offsets[k], end = t->pclntab.size;

	EMBER_FAIL_IF(off >= t->pclntab.size, &t->diag, -EINVAL,
		      "a table offset is past the section");
	for (unsigned i = 0; i < 5; i++)
		if (offsets[i] > off && offsets[i] < end)
			end = offsets[i];
	*out = (struct elfdw_sect){ t->pclntab.data + off, end - off };
	return 0;
}

static int go_header(struct sym_go_table *t, uint64_t text_addr)
{
	const uint8_t *p = t->pclntab.data, *end = p + t->pclntab.size;
	uint64_t magic, pad1, pad2, w[8];
	unsigned nwords, base;
	int err;

	EMBER_FAIL_IF(ember_cur_uint(&p, end, 4, &magic) || ember_cur_uint(&p, end, 1, &pad1) ||
			      ember_cur_uint(&p, end, 1, &pad2) || ember_cur_uint(&p, end, 1, &w[0]) ||
			      ember_cur_uint(&p, end, 1, &w[1]),
		      &t->diag, -EINVAL, "pcHeader truncated");
	if ((err = go_version(t, (uint32_t)magic)))
		return err;
	t->quantum = (uint8_t)w[0];
	t->ptrsize = (uint8_t)w[1];
	EMBER_FAIL_IF(pad1 || pad2, &t->diag, -EINVAL, "pcHeader padding is not zero");
	EMBER_FAIL_IF(t->quantum != 1 && t->quantum != 2 && t->quantum != 4, &t->diag, -EINVAL,
		      "pcHeader: bad instruction size quantum");
	EMBER_FAIL_IF(t->ptrsize != 4 && t->ptrsize != 8, &t->diag, -EINVAL,
		      "pcHeader: bad pointer size");
	nwords = t->ver == SYM_GO_116 ? 7 : 8;
	for (unsigned i = 0; i < nwords; i++)
		EMBER_FAIL_IF(ember_cur_uint(&p, end, t->ptrsize, &w[i]), &t->diag, -EINVAL,
			      "pcHeader truncated");
	t->nfunc = w[0];
	t->nfiles = w[1];
	base = t->ver == SYM_GO_116 ? 2 : 3;
	if (t->ver != SYM_GO_116) /* unrelocated (0) in a PIE: .text's start */
		t->text_start = w[2] ? w[2] : text_addr;
	if ((err = go_table_at(t, w + base, 0, &t->funcnames)) ||
	    (err = go_table_at(t, w + base, 1, &t->cutab)) ||
	    (err = go_table_at(t, w + base, 2, &t->filetab)) ||
	    (err = go_table_at(t, w + base, 3, &t->pctab)) ||
	    (err = go_table_at(t, w + base, 4, &t->funcs)))
		return err;
	t->funcs_addr = t->pclntab.addr + w[base + 4];
	EMBER_FAIL_IF(t->ver != SYM_GO_116 && t->text_start == 0, &t->diag, -EINVAL,
		      "no text start address (neither pcHeader nor .text)");
	return 0;
}

/* ---- the function table (ftab) and _func records ----------------------------- */

static unsigned go_ftab_field(const struct sym_go_table *t)
{
	return t->ver == SYM_GO_116 ? t->ptrsize : 4;
}

/* Entry address and record offset of ftab entry i (i == nfunc: the end). */
static int go_ftab(struct sym_go_table *t, uint64_t i, uint64_t *entry,
		   uint64_t *funcoff)
{
	unsigned fs = go_ftab_field(t);
	const uint8_t *p = t->funcs.data, *end = p + t->funcs.size;
	uint64_t e, off = 0;

	EMBER_FAIL_IF(ember_cur_skip(&p, end, i * 2 * fs) || ember_cur_uint(&p, end, fs, &e) ||
			      (i < t->nfunc && ember_cur_uint(&p, end, fs, &off)),
		      &t->diag, -EINVAL, "function table truncated");
	*entry = t->ver == SYM_GO_116 ? e : t->text_start + e;
	*funcoff = off;
	return 0;
}

/* Size of the fixed part of a _func record (runtime2.go). */
static unsigned go_func_size(const struct sym_go_table *t)
{
	switch (t->ver) {
	case SYM_GO_116:
		return t->ptrsize + 36u;
	case SYM_GO_118:
		return 40u;
	default:
		return 44u; /* startLine added in 1.20 */
	}
}

static int go_func_read(struct sym_go_table *t, uint64_t funcoff,
			uint64_t entry, struct sym_go_func *f)
{
	unsigned sz0 = t->ver == SYM_GO_116 ? t->ptrsize : 4, size = go_func_size(t);
	const uint8_t *end = t->funcs.data + t->funcs.size, *p = t->funcs.data;
	const uint8_t *rec;
	uint64_t e, v[9], nfd;

	EMBER_FAIL_IF(ember_cur_skip(&p, end, funcoff) || !ember_cur_has(p, end, size), &t->diag,
		      -EINVAL, "function record past the end of the table");
	rec = p;
	EMBER_FAIL_IF(ember_cur_uint(&p, end, sz0, &e), &t->diag, -EINVAL,
		      "function record truncated");
	for (unsigned i = 1; i <= 8; i++)
		EMBER_FAIL_IF(ember_cur_uint(&p, end, 4, &v[i]), &t->diag, -EINVAL,
			      "function record truncated");
	e = t->ver == SYM_GO_116 ? e : t->text_start + e;
	EMBER_FAIL_IF(e != entry, &t->diag, -EINVAL,
		      "function record's entry differs from the function table's");
	p = rec + size - 1;
	if (ember_cur_uint(&p, end, 1, &nfd))
		return EMBER_FAIL(&t->diag, -EINVAL, "function record truncated");
	*f = (struct sym_go_func){
		.entry = entry, .nameoff = (uint32_t)v[1], .pcfile = (uint32_t)v[5],
		.pcln = (uint32_t)v[6], .npcdata = (uint32_t)v[7],
		.cu_offset = (uint32_t)v[8], .nfuncdata = (uint8_t)nfd,
		.pcdata = rec + size,
		.pcdata_addr = t->funcs_addr + (uint64_t)(rec + size - t->funcs.data),
		.rec_end = end,
	};
	EMBER_FAIL_IF((uint64_t)(end - f->pcdata) / 4 < f->npcdata, &t->diag, -EINVAL,
		      "function record's pcdata past the end of the table");
	return 0;
}

const char *sym_go_name(const struct sym_go_table *t, uint64_t off)
{
	const uint8_t *p = t->funcnames.data, *end = p + t->funcnames.size;
	const char *s;

	if (ember_cur_skip(&p, end, off) || ember_cur_cstr(&p, end, &s))
		return NULL;
	return s;
}

/* ---- pc-value tables ------------------------------------------------------------ */

static int go_runs_push(struct sym_go_runs *r, struct sym_go_run run)
{
	return EMBER_VEC_PUSH(r->v, r->n, r->alloc, run);
}

/*
 * Decode the pc-value table at pctab offset off of the function at
 * entry into runs (the runtime's step(): a zigzag value delta, then a pc
 * delta in quanta, until a zero value delta after the first pair).  A
 * table reaching past limit, the next function, is corrupt.
 */
static int go_decode(struct sym_go_table *t, uint32_t off, uint64_t entry,
		     uint64_t limit, struct sym_go_runs *out)
{
	const uint8_t *p = t->pctab.data, *end = p + t->pctab.size;
	uint64_t pc = entry, uv, pcd;
	uint32_t val = UINT32_MAX; /* -1 */
	bool first = true;

	out->n = 0;
	if (off == 0)
		return 0; /* no table */
	EMBER_FAIL_IF(ember_cur_skip(&p, end, off), &t->diag, -EINVAL,
		      "pc-value table offset past pctab");
	for (;;) {
		EMBER_FAIL_IF(ember_cur_uleb(&p, end, &uv) || uv > UINT32_MAX, &t->diag, -EINVAL,
			      "pc-value table truncated or malformed");
		if (uv == 0 && !first)
			return 0;
		val += (uint32_t)(-(uv & 1)) ^ (uint32_t)(uv >> 1);
		EMBER_FAIL_IF(ember_cur_uleb(&p, end, &pcd) || pcd > UINT32_MAX, &t->diag,
			      -EINVAL, "pc-value table truncated or malformed");
		EMBER_FAIL_IF(pcd * t->quantum > limit - pc, &t->diag, -EINVAL,
			      "pc-value table runs past its function");
		if (pcd && go_runs_push(out, (struct sym_go_run){
				   pc, pc + pcd * t->quantum, (int32_t)val }))
			return -ENOMEM;
		pc += pcd * t->quantum;
		first = false;
	}
}

int32_t sym_go_runs_at(const struct sym_go_runs *r, uint64_t pc)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].hi <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->v[lo].lo <= pc ? r->v[lo].v : -1;
}

/* ---- files ------------------------------------------------------------------- */

int64_t sym_go_file(struct sym_index *idx, struct sym_go_table *t,
		    uint32_t *cache, uint32_t cu_offset, int32_t fileno)
{
	uint64_t i = (uint64_t)cu_offset + (uint64_t)fileno, fo;
	const uint8_t *p = t->cutab.data, *end = p + t->cutab.size;
	const char *s;
	int64_t off;

	if (fileno < 0 || cu_offset == UINT32_MAX)
		return 0;
	EMBER_FAIL_IF(i >= t->cutab.size / 4, &t->diag, -EINVAL,
		      "file number past the cu table");
	if (cache[i])
		return cache[i] == UINT32_MAX ? 0 : cache[i];
	EMBER_FAIL_IF(ember_cur_skip(&p, end, 4 * i) || ember_cur_uint(&p, end, 4, &fo), &t->diag,
		      -EINVAL, "cu table truncated");
	if (fo == UINT32_MAX) { /* the runtime's "?" */
		cache[i] = UINT32_MAX;
		return 0;
	}
	p = t->filetab.data;
	end = p + t->filetab.size;
	EMBER_FAIL_IF(ember_cur_skip(&p, end, fo) || ember_cur_cstr(&p, end, &s), &t->diag, -EINVAL,
		      "file name past the end of filetab");
	off = sym_strtab_intern(&idx->strtab, s);
	if (off < 0)
		return off;
	cache[i] = off ? (uint32_t)off : UINT32_MAX;
	return off;
}

/* ---- moduledata (Go 1.18+) ---------------------------------------------------- */

/*
 * Words of runtime.moduledata (symtab.go) checked here: the pcHeader
 * pointer, the slices of the pclntab's tables, text, noptrdata, and
 * rodata/gofunc, whose place moved when 1.20 added covctrs/ecovctrs.
 */
enum {
	MD_PCHEADER = 0, MD_FUNCNAMES = 1, MD_CUTAB = 4, MD_FILETAB = 7,
	MD_PCTAB = 10, MD_PCLNTABLE = 13, MD_FTAB = 16, MD_FTAB_LEN = 17,
	MD_TEXT = 22, MD_NOPTRDATA = 24, MD_ENOPTRDATA = 25,
	MD_RODATA_118 = 37, MD_GOFUNC_118 = 38,
	MD_RODATA_120 = 39, MD_GOFUNC_120 = 40,
	MD_WORDS = 41,
};

static uint64_t tab_addr(const struct sym_go_table *t, const struct elfdw_sect *s)
{
	return t->pclntab.addr + (uint64_t)(s->data - t->pclntab.data);
}

/* Whether words w of a candidate at address at are moduledata for t. */
static bool go_moduledata_ok(const struct sym_go_table *t, const uint64_t *w,
			     uint64_t at, const struct sym_go_sect *nd)
{
	bool v120 = t->ver == SYM_GO_120;
	uint64_t rodata = w[v120 ? MD_RODATA_120 : MD_RODATA_118];
	uint64_t gofunc = w[v120 ? MD_GOFUNC_120 : MD_GOFUNC_118];

	return w[MD_PCHEADER] == t->pclntab.addr &&
	       w[MD_FUNCNAMES] == tab_addr(t, &t->funcnames) &&
	       w[MD_CUTAB] == tab_addr(t, &t->cutab) &&
	       w[MD_FILETAB] == tab_addr(t, &t->filetab) &&
	       w[MD_PCTAB] == tab_addr(t, &t->pctab) &&
	       w[MD_PCLNTABLE] == t->funcs_addr && w[MD_FTAB] == t->funcs_addr &&
	       w[MD_FTAB_LEN] == t->nfunc + 1 && w[MD_TEXT] == t->text_start &&
	       w[MD_NOPTRDATA] == nd->addr && at >= w[MD_NOPTRDATA] &&
	       at < w[MD_ENOPTRDATA] && rodata != 0 && rodata <= gofunc &&
	       sym_go_bytes_at(t, gofunc, 1) != NULL;
}

/*
 * Find moduledata.gofunc: moduledata sits in .noptrdata and starts with
 * the address of the pcHeader (the OpenTelemetry eBPF profiler finds it
 * the same way).  Every aligned word equal to that address is a
 * candidate, kept only if all the words go_moduledata_ok checks agree;
 * two that disagree on gofunc leave it unknown.
 */
static void go_find_moduledata(struct sym_go_table *t, const struct sym_go_sect *nd)
{
	unsigned ps = t->ptrsize;
	uint64_t need = (uint64_t)MD_WORDS * ps;

	if (t->ver == SYM_GO_116 || !nd->data || nd->size < need)
		return;
	for (uint64_t off = 0; off <= nd->size - need; off += ps) {
		const uint8_t *p = nd->data + off, *end = nd->data + nd->size;
		uint64_t w[MD_WORDS], gofunc;

		if (ember_cur_uint(&p, end, ps, &w[0]) || w[0] != t->pclntab.addr)
			continue;
		for (unsigned i = 1; i < MD_WORDS; i++)
			if (ember_cur_uint(&p, end, ps, &w[i]))
				return;
		if (!go_moduledata_ok(t, w, nd->addr + off, nd))
			continue;
		gofunc = w[t->ver == SYM_GO_120 ? MD_GOFUNC_120 : MD_GOFUNC_118];
		if (t->gofunc_found && t->gofunc != gofunc) {
			pr_debug("symbolizer: two Go moduledata disagree: no inline frames");
			t->gofunc_found = false;
			return;
		}
		t->gofunc = gofunc;
		t->gofunc_found = true;
	}
	if (!t->gofunc_found)
		pr_debug("symbolizer: Go moduledata not found: no inline frames");
}

/* ---- functions into the index ----------------------------------------------------- */

struct go_build {
	struct sym_build *b;
	struct sym_go_table *t;
	uint32_t *file_cache;	/* a slot a cu-table entry */
	struct sym_go_fn_runs runs;
};

/* The line intervals of a function: where both its file and line runs
 * hold, a positive line. */
static int go_lines(struct go_build *g, const struct sym_go_func *f)
{
	const struct sym_go_runs *fr = &g->runs.file, *lr = &g->runs.line;
	size_t i = 0, j = 0;

	while (i < lr->n && j < fr->n) {
		const struct sym_go_run *l = &lr->v[i], *fl = &fr->v[j];
		uint64_t lo = l->lo > fl->lo ? l->lo : fl->lo;
		uint64_t hi = l->hi < fl->hi ? l->hi : fl->hi;

		if (lo < hi && l->v > 0) {
			int64_t file = sym_go_file(g->b->idx, g->t, g->file_cache,
						   f->cu_offset, fl->v);

			if (file < 0)
				return (int)file;
			if (sym_ivals_push(&g->b->lines, (struct sym_ival){
					   lo, hi, (uint32_t)file, (uint32_t)l->v, 0, 0 }))
				return -ENOMEM;
		}
		if (l->hi <= fl->hi)
			i++;
		else
			j++;
	}
	return 0;
}

/* The PCDATA_InlTreeIndex table's offset, or 0. */
static uint32_t go_pcdata(const struct sym_go_func *f, uint32_t table)
{
	uint32_t off;

	if (table >= f->npcdata)
		return 0;
	memcpy(&off, f->pcdata + 4 * (size_t)table, 4);
	return off;
}

/* Decode the function's tables; its extent is where its line table ends
 * (padding after it is nobody's), else the next function. */
static int go_func_runs(struct go_build *g, const struct sym_go_func *f)
{
	struct sym_go_fn_runs *r = &g->runs;
	int err;

	if ((err = go_decode(g->t, f->pcfile, f->entry, f->limit, &r->file)) ||
	    (err = go_decode(g->t, f->pcln, f->entry, f->limit, &r->line)) ||
	    (err = go_decode(g->t, go_pcdata(f, SYM_GO_PCDATA_INLTREEINDEX),
			     f->entry, f->limit, &r->inl)))
		return err;
	r->end = r->line.n ? r->line.v[r->line.n - 1].hi : f->limit;
	return 0;
}

/* Drop the nodes added from first on (a function's inline frames). */
static void go_drop_nodes(struct sym_index *idx, size_t first)
{
	while (idx->nnodes > first) {
		if (idx->nodes[--idx->nnodes].parent != SYM_NONE)
			idx->ninlined--;
		else
			idx->nfunctions--;
	}
}

static int go_function(struct go_build *g, const struct sym_go_func *f)
{
	struct sym_index *idx = g->b->idx;
	struct sym_node n = { .parent = SYM_NONE, .entry = f->entry };
	const char *name;
	size_t nscopes;
	uint32_t node;
	int err;

	if ((err = go_func_runs(g, f)))
		return err;
	if (g->runs.end <= f->entry ||
	    !elfdw_ranges_contain(&g->t->exec, f->entry, g->runs.end))
		return 0; /* no code, or not in an executable section */
	name = sym_go_name(g->t, f->nameoff);
	EMBER_FAIL_IF(!name, &g->t->diag, -EINVAL, "function name past the end of funcnametab");
	if ((err = sym_index_add_name(idx, name, &n.name)))
		return err;
	n.short_name = n.name == SYM_NONE ? 0 : idx->names[n.name];
	node = (uint32_t)idx->nnodes;
	if ((err = sym_index_add_node(idx, &n)) ||
	    (err = sym_ivals_push(&g->b->scopes, (struct sym_ival){
				  f->entry, g->runs.end, node, 0, 0, 0 })) ||
	    (err = go_lines(g, f)))
		return err;
	nscopes = g->b->scopes.n;
	err = sym_go_inline(idx, g->t, g->file_cache, f, node, &g->runs,
			    &g->b->scopes);
	if (err == -EINVAL) { /* keep the function, without inline frames */
		pr_debug("symbolizer: inline tree of '%s' unreadable: %s",
			 sym_go_name(g->t, f->nameoff), g->t->why);
		g->t->diag = ember_diag_make(g->t->why, sizeof(g->t->why));
		go_drop_nodes(idx, (size_t)node + 1);
		g->b->scopes.n = nscopes;
		err = 0;
	}
	return err;
}

static int go_functions(struct go_build *g)
{
	struct sym_go_table *t = g->t;
	uint64_t entry, limit, funcoff, next_off;
	int err;

	EMBER_FAIL_IF(t->nfunc > t->funcs.size / (2 * go_ftab_field(t)), &t->diag, -EINVAL,
		      "pcHeader: more functions than the function table holds");
	if ((err = go_ftab(t, 0, &entry, &funcoff)))
		return err;
	for (uint64_t i = 0; i < t->nfunc; i++, entry = limit, funcoff = next_off) {
		struct sym_go_func f;

		if ((err = go_ftab(t, i + 1, &limit, &next_off)))
			return err;
		EMBER_FAIL_IF(limit < entry, &t->diag, -EINVAL,
			      "function table not sorted by address");
		if ((err = go_func_read(t, funcoff, entry, &f)))
			return err;
		f.limit = limit;
		if ((err = go_function(g, &f)))
			return err;
		if (g->b->scopes.n >= SCOPES_PER_FLATTEN &&
		    (err = sym_flatten_unit(g->b)))
			return err;
	}
	return sym_flatten_unit(g->b);
}

/* ---- the entry point ------------------------------------------------------------ */

/* What the index held before: restored when the table is unusable. */
struct go_mark {
	size_t nnodes, nsegs, nblocks, block_first;
};

static void go_rollback(struct sym_build *b, const struct go_mark *m)
{
	go_drop_nodes(b->idx, m->nnodes);
	b->idx->nsegs = m->nsegs;
	b->nblocks = m->nblocks;
	b->block_first = m->block_first;
	b->scopes.n = b->lines.n = b->inner.n = 0;
}

int sym_go_table_open(struct sym_go_table *t, Elf *elf)
{
	struct go_elf ge = { 0 };
	int err;

	memset(t, 0, sizeof(*t));
	t->diag = ember_diag_make(t->why, sizeof(t->why));
	if ((err = go_sections(elf, t, &ge)))
		return err;
	if ((err = elfdw_exec_sections(elf, &t->exec)))
		return err == -EINVAL ? -SYM_ERR_BAD_ELF : err;
	if (!ge.pclntab.data)
		return 1;
	t->pclntab = ge.pclntab;
	if ((err = go_header(t, ge.text_addr)))
		return err;
	go_find_moduledata(t, &ge.noptrdata);
	return 0;
}

void sym_go_table_release(struct sym_go_table *t)
{
	if (!t)
		return;
	free(t->sects);
	free(t->exec.r);
	t->sects = NULL;
	t->exec.r = NULL;
	t->nsects = t->exec.n = t->exec.alloc = 0;
}

static int go_collect(struct sym_build *b, struct sym_go_table *t)
{
	struct go_build g = { .b = b, .t = t };
	int err;

	g.file_cache = calloc(t->cutab.size / 4 + 1, sizeof(*g.file_cache));
	err = g.file_cache ? go_functions(&g) : -ENOMEM;
	free(g.file_cache);
	free(g.runs.file.v);
	free(g.runs.line.v);
	free(g.runs.inl.v);
	return err;
}

int sym_gopclntab_collect(struct sym_build *b, Elf *elf)
{
	struct sym_go_table t;
	struct go_mark m = { b->idx->nnodes, b->idx->nsegs, b->nblocks,
			     b->block_first };
	int err = sym_go_table_open(&t, elf);

	if (err == 0)
		err = go_collect(b, &t);
	if (err == -EINVAL) {
		pr_warn("symbolizer: '.gopclntab' unusable: %s; using the symbol tables",
			t.why[0] ? t.why : "malformed");
		err = 0;
		go_rollback(b, &m);
	} else if (err < 0) {
		go_rollback(b, &m);
	} else if (err == 0 && b->idx->nsegs > m.nsegs) {
		b->idx->seg_source = SYM_SOURCE_GOPCLNTAB;
	}
	sym_go_table_release(&t);
	return err < 0 ? err : 0;
}
