/*
 * gopclntab_inline.c - the inlined frames of a Go function from its
 * inline tree (FUNCDATA_InlTree) and its PCDATA_InlTreeIndex table, as
 * the runtime expands them in tracebacks (runtime/traceback.go,
 * runtime/symtabinl.go from 1.20):
 *
 *   ix = InlTreeIndex(pc)              -1: pc is in the function itself
 *   while ix >= 0:
 *       frame: tree[ix]'s function, at pc's file:line
 *       pc = entry + tree[ix].parentPc  (an instruction at the call site)
 *       ix = InlTreeIndex(pc)
 *   frame: the function, at pc's file:line
 *
 * So each tree entry becomes a node whose parent is the entry (or the
 * function) that holds at its parentPc and whose call site is the file
 * and line at its parentPc.  parentPc is used for every version (1.20
 * dropped the parent, file and line fields; 1.16-1.19 have them too, but
 * the runtime follows parentPc).
 *
 * Tree entries (inlinedCall), little-endian:
 *   1.16-1.19 (20 bytes): parent i16, funcID u8, pad, file i32, line i32,
 *                         func_ i32 (name offset), parentPc i32
 *   1.20+     (16 bytes): funcID u8, pad[3], nameOff i32, parentPc i32,
 *                         startLine i32
 * The tree is funcdata 3: an address in 1.16/1.17, an offset from
 * moduledata.gofunc in 1.18+ (^0: none).
 */
#include "gopclntab.h"

#include <stdlib.h>
#include <string.h>

struct inl_ctx {
	struct sym_index *idx;
	struct sym_go_table *t;
	uint32_t *file_cache;
	const struct sym_go_func *f;
	const struct sym_go_fn_runs *runs;
	uint64_t tree;		/* address of entry 0 */
	unsigned esize;		/* bytes an entry */
	uint32_t nentries;	/* entries the index table uses: 0..max */
	uint32_t *node_of;	/* entry -> node id, SYM_NONE until made */
	uint32_t fn_node;
};

/* Address of the inline tree, 0 when the function has none. */
static int inl_tree_addr(struct sym_go_table *t, const struct sym_go_func *f,
			 uint64_t *out)
{
	const uint8_t *p = f->pcdata, *end = f->rec_end;
	uint64_t v;

	*out = 0;
	if (f->nfuncdata <= SYM_GO_FUNCDATA_INLTREE)
		return 0;
	EMBER_FAIL_IF(ember_cur_skip(&p, end, 4 * (uint64_t)f->npcdata), &t->diag, -EINVAL,
		      "function record's funcdata past the end of the table");
	if (t->ver == SYM_GO_116) {
		/* pointers, aligned as the runtime aligns them in memory */
		uint64_t at = f->pcdata_addr + 4 * (uint64_t)f->npcdata;

		if (t->ptrsize == 8 && (at & 4))
			EMBER_FAIL_IF(ember_cur_skip(&p, end, 4), &t->diag, -EINVAL,
				      "function record's funcdata past the end");
		EMBER_FAIL_IF(
			ember_cur_skip(&p, end, (uint64_t)t->ptrsize * SYM_GO_FUNCDATA_INLTREE) ||
				ember_cur_uint(&p, end, t->ptrsize, &v),
			&t->diag, -EINVAL, "function record's funcdata past the end");
		*out = v;
		return 0;
	}
	EMBER_FAIL_IF(ember_cur_skip(&p, end, 4 * SYM_GO_FUNCDATA_INLTREE) ||
			      ember_cur_uint(&p, end, 4, &v),
		      &t->diag, -EINVAL, "function record's funcdata past the end");
	if (v == UINT32_MAX)
		return 0;
	*out = t->gofunc + v;
	return 0;
}

/* Name offset and parentPc of tree entry ix. */
static int inl_entry(struct inl_ctx *c, uint32_t ix, uint64_t *nameoff,
		     uint64_t *pc)
{
	const uint8_t *p = sym_go_bytes_at(c->t, c->tree + (uint64_t)ix * c->esize,
					   c->esize);
	const uint8_t *end;
	uint64_t parent_pc;

	EMBER_FAIL_IF(!p, &c->t->diag, -EINVAL,
		      "inline tree entry outside the file's sections");
	end = p + c->esize;
	EMBER_FAIL_IF(ember_cur_skip(&p, end, c->t->ver == SYM_GO_120 ? 4 : 12) ||
			      ember_cur_uint(&p, end, 4, nameoff) ||
			      ember_cur_uint(&p, end, 4, &parent_pc),
		      &c->t->diag, -EINVAL, "inline tree entry truncated");
	EMBER_FAIL_IF(parent_pc > INT32_MAX || parent_pc >= c->runs->end - c->f->entry,
		      &c->t->diag, -EINVAL,
		      "inline tree entry's call site outside its function");
	*pc = c->f->entry + parent_pc;
	return 0;
}

/* A node for tree entry ix under parent (its call site at call_pc). */
static int inl_make(struct inl_ctx *c, uint32_t ix, uint32_t parent)
{
	/* no entry: the table records none for an inlined call (whose code
	 * may be scattered), and a guess would read as one */
	struct sym_node n = { .parent = parent, .entry = SYM_ADDR_UNKNOWN };
	uint64_t nameoff, pc;
	const char *name;
	int64_t file;
	int32_t line;
	int err;

	if ((err = inl_entry(c, ix, &nameoff, &pc)))
		return err;
	name = sym_go_name(c->t, nameoff);
	EMBER_FAIL_IF(!name, &c->t->diag, -EINVAL, "inlined function's name past funcnametab");
	if ((err = sym_index_add_name(c->idx, name, &n.name)))
		return err;
	n.short_name = n.name == SYM_NONE ? 0 : c->idx->names[n.name];
	file = sym_go_file(c->idx, c->t, c->file_cache, c->f->cu_offset,
			   sym_go_runs_at(&c->runs->file, pc));
	if (file < 0)
		return (int)file;
	line = sym_go_runs_at(&c->runs->line, pc);
	n.call_file = (uint32_t)file;
	n.call_line = line > 0 ? (uint32_t)line : 0;
	c->node_of[ix] = (uint32_t)c->idx->nnodes;
	return sym_index_add_node(c->idx, &n);
}

/*
 * The node of tree entry ix, made with the entries it is inlined into
 * (outermost first, so that parents have the smaller ids).  A chain
 * deeper than SYM_GO_MAX_INLINE_DEPTH, which is also how a cycle ends,
 * is corrupt.
 */
static int inl_node(struct inl_ctx *c, uint32_t ix, uint32_t *out)
{
	uint32_t chain[SYM_GO_MAX_INLINE_DEPTH], parent;
	int32_t cur = (int32_t)ix;
	size_t n = 0;
	int err;

	while (cur >= 0 && c->node_of[cur] == SYM_NONE) {
		uint64_t nameoff, pc;

		EMBER_FAIL_IF(n == SYM_GO_MAX_INLINE_DEPTH, &c->t->diag, -EINVAL,
			      "inline chain too deep (or a cycle)");
		chain[n++] = (uint32_t)cur;
		if ((err = inl_entry(c, (uint32_t)cur, &nameoff, &pc)))
			return err;
		cur = sym_go_runs_at(&c->runs->inl, pc);
	}
	parent = cur < 0 ? c->fn_node : c->node_of[cur];
	while (n > 0) {
		if ((err = inl_make(c, chain[--n], parent)))
			return err;
		parent = c->node_of[chain[n]];
	}
	*out = c->node_of[ix];
	return 0;
}

static int inl_scopes(struct inl_ctx *c, struct sym_ivals *scopes)
{
	const struct sym_go_runs *r = &c->runs->inl;
	int err;

	for (size_t i = 0; i < r->n; i++) {
		uint32_t node = SYM_NONE;

		if (r->v[i].v < 0)
			continue;
		if ((err = inl_node(c, (uint32_t)r->v[i].v, &node)))
			return err;
		/* runs are disjoint and inside the function: one level */
		if (sym_ivals_push(scopes, (struct sym_ival){
				   r->v[i].lo, r->v[i].hi, node, 1, 0, 0 }))
			return -ENOMEM;
	}
	return 0;
}

int sym_go_inline(struct sym_index *idx, struct sym_go_table *t,
		  uint32_t *file_cache, const struct sym_go_func *f,
		  uint32_t fn_node, const struct sym_go_fn_runs *runs,
		  struct sym_ivals *scopes)
{
	struct inl_ctx c = { idx, t, file_cache, f, runs, 0,
			     t->ver == SYM_GO_120 ? 16 : 20, 0, NULL, fn_node };
	int32_t max = -1;
	int err;

	if (t->ver != SYM_GO_116 && !t->gofunc_found)
		return 0; /* funcdata offsets from an unknown base */
	for (size_t i = 0; i < runs->inl.n; i++)
		if (runs->inl.v[i].v > max)
			max = runs->inl.v[i].v;
	if (max < 0)
		return 0;
	if ((err = inl_tree_addr(t, f, &c.tree)))
		return err;
	EMBER_FAIL_IF(c.tree == 0, &t->diag, -EINVAL,
		      "inline tree index without an inline tree");
	c.nentries = (uint32_t)max + 1;
	/* every entry used must be in the file: bounds the table below */
	EMBER_FAIL_IF(!sym_go_bytes_at(t, c.tree, (uint64_t)c.nentries * c.esize), &t->diag,
		      -EINVAL, "inline tree past the end of its section");
	c.node_of = malloc(c.nentries * sizeof(*c.node_of));
	if (!c.node_of)
		return -ENOMEM;
	memset(c.node_of, 0xff, c.nentries * sizeof(*c.node_of)); /* SYM_NONE */
	err = inl_scopes(&c, scopes);
	free(c.node_of);
	return err;
}
