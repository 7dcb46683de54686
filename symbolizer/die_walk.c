/*
 * die_walk.c - the DIE walk of the index build on the ELF/DWARF layer's
 * DIE reader: the same walk as libdw_walk.c does through libdw, with the
 * same result (nodes, names, scope intervals, interned in the same
 * order), at a fraction of the cost: subtrees the index does not need are skipped by
 * DW_AT_sibling or by their abbreviations' sizes, and only subprograms
 * and inlined subroutines have their attributes read.
 *
 * For every unit: each DW_TAG_subprogram with code becomes a function
 * node, each DW_TAG_inlined_subroutine inside one a node whose parent is
 * the enclosing function or inlined instance, with its call site (DWARF
 * 5 §3.3.8.2); lexical, try and catch blocks are looked through, and so
 * are namespaces, modules and types outside functions (C++ and Rust
 * define functions there).  Names follow DW_AT_abstract_origin and
 * DW_AT_specification as libdw's dwarf_attr_integrate does.  Whatever
 * the reader does not handle ends the walk with an input error
 * (elfdw_err_input), and the caller walks the unit with libdw instead.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <limits.h>

/* DIEs dwarf_attr_integrate looks at: the DIE and 16 origins. */
#define CHAIN_MAX 17

/* Slots that give a DIE names of its own (then no origin lends them). */
#define OWN_NAMES ((1u << SYM_SLOT_NAME) | (1u << SYM_SLOT_LINKAGE_NAME) |  \
		   (1u << SYM_SLOT_MIPS_LINKAGE_NAME) |                      \
		   (1u << SYM_SLOT_DECL_FILE) | (1u << SYM_SLOT_DECL_LINE))

struct walk {
	struct sym_die_reader *r;
	struct sym_die_unit *u;
	const struct elfdw_abbrevs *t;
	const struct sym_walk_ctx *c;
	struct sym_ivals *scopes;
	const struct sym_unit_files *files;
	const char *comp_dir;
};

/* Path of file number fileno of the current unit (strtab offset). */
static uint32_t walk_file(const struct walk *w, uint64_t fileno)
{
	return fileno < w->files->n ? w->files->off[fileno] : 0;
}

/*
 * The attributes a node's names come from, each from the first DIE of
 * the chain that has it: the DIE and up to 16 DIEs its abstract_origin
 * (else specification) reaches, as dwarf_attr_integrate looks them up.
 */
struct chain_names {
	const char *name, *linkage, *mips;
	bool has_linkage, has_mips, has_file, has_line, file_here;
	uint64_t fileno, line;
};

/* Take from d what no DIE before it in the chain had. */
static int chain_take(const struct walk *w, const struct elfdw_die *d,
		      struct chain_names *cn)
{
	int err = 0;

	if (!cn->name && elfdw_die_has(d, SYM_SLOT_NAME))
		err = elfdw_val_str(w->r->s, d, SYM_SLOT_NAME, &cn->name);
	if (!err && !cn->has_linkage && elfdw_die_has(d, SYM_SLOT_LINKAGE_NAME)) {
		cn->has_linkage = true;
		err = elfdw_val_str(w->r->s, d, SYM_SLOT_LINKAGE_NAME, &cn->linkage);
	}
	if (!err && !cn->has_mips && elfdw_die_has(d, SYM_SLOT_MIPS_LINKAGE_NAME)) {
		cn->has_mips = true;
		err = elfdw_val_str(w->r->s, d, SYM_SLOT_MIPS_LINKAGE_NAME, &cn->mips);
	}
	if (!err && !cn->has_file && elfdw_die_has(d, SYM_SLOT_DECL_FILE)) {
		cn->has_file = true;
		cn->file_here = d->unit == &w->u->u;
		err = elfdw_val_const(w->r->s, d, SYM_SLOT_DECL_FILE, &cn->fileno);
	}
	if (!err && !cn->has_line && elfdw_die_has(d, SYM_SLOT_DECL_LINE)) {
		cn->has_line = true;
		err = elfdw_val_const(w->r->s, d, SYM_SLOT_DECL_LINE, &cn->line);
	}
	return err;
}

static int chain_read(struct walk *w, const struct elfdw_die *die,
		      struct chain_names *cn)
{
	const struct elfdw_die *cur = die;
	struct elfdw_die mem[2];

	*cn = (struct chain_names){ 0 };
	for (unsigned n = 1;; n++) {
		unsigned s = elfdw_die_has(cur, SYM_SLOT_ABSTRACT_ORIGIN)
					     ? SYM_SLOT_ABSTRACT_ORIGIN
					     : SYM_SLOT_SPECIFICATION;
		uint64_t off;
		int err = chain_take(w, cur, cn);

		if (err || n == CHAIN_MAX || !elfdw_die_has(cur, s))
			return err;
		err = elfdw_val_ref(w->r->s, cur, s, &off);
		if (!err)
			err = sym_die_at(w->r, off, &mem[n & 1]);
		if (err)
			return err;
		cur = &mem[n & 1];
	}
}

/* Declaration file: a file number of the unit whose DIE has it; libdw
 * reads another unit's file table (a cross-unit origin, rare). */
static int64_t chain_decl_file(const struct walk *w,
			       const struct elfdw_die *die,
			       const struct chain_names *cn)
{
	Dwarf_Die ld;

	if (!cn->has_file)
		return 0;
	if (cn->file_here)
		return walk_file(w, cn->fileno);
	if (!dwarf_offdie(w->c->dw, die->off, &ld))
		return -EINVAL;
	return sym_intern_path(w->c->idx, w->comp_dir, dwarf_decl_file(&ld));
}

/* Linkage name, else DW_AT_name: die_raw_name() of libdw_walk.c. */
static const char *chain_raw_name(const struct chain_names *cn)
{
	const char *s = cn->has_linkage ? cn->linkage : cn->mips;

	return s && *s ? s : cn->name;
}

static int names_lookup(struct walk *w, const struct elfdw_die *die,
			struct sym_node *n)
{
	struct sym_index *idx = w->c->idx;
	int64_t short_off, decl_off;
	struct chain_names cn;
	int err = chain_read(w, die, &cn);

	if (err)
		return err;
	if (sym_index_add_name(idx, chain_raw_name(&cn), &n->name))
		return -ENOMEM;
	short_off = cn.name ? sym_strtab_intern(&idx->strtab, cn.name) : 0;
	if (short_off < 0)
		return (int)short_off;
	decl_off = chain_decl_file(w, die, &cn);
	if (decl_off < 0)
		return (int)decl_off;
	n->short_name = (uint32_t)short_off;
	n->decl_file = (uint32_t)decl_off;
	if (cn.has_line && cn.line > 0 && cn.line <= INT_MAX) /* dwarf_decl_line */
		n->decl_line = (uint32_t)cn.line;
	return 0;
}

/* Offset + 1 of the DIE whose names die takes over unchanged, or 0 when
 * die has a name or declaration of its own (die_origin() of
 * libdw_walk.c: the first origin attribute in attribute order). */
static int origin_key(const struct walk *w, const struct elfdw_die *die,
		      uint64_t *key)
{
	int err;

	*key = 0;
	if ((die->have & OWN_NAMES) || !die->first_slot)
		return 0;
	err = elfdw_val_ref(w->r->s, die, die->first_slot, key);
	if (!err)
		(*key)++;
	return err;
}

static int fill_names(struct walk *w, const struct elfdw_die *die,
		      struct sym_node *n)
{
	struct sym_origin *slot;
	uint64_t key;
	int rc = origin_key(w, die, &key);

	if (rc)
		return rc;
	if (!key)
		return names_lookup(w, die, n);
	rc = sym_origin_cache_get(w->c->origins, key, n, &slot);
	if (rc)
		return rc < 0 ? rc : 0;
	rc = names_lookup(w, die, n);
	if (!rc)
		sym_origin_cache_put(w->c->origins, slot, key, n);
	return rc;
}

struct node_ranges {
	struct walk *w;
	uint32_t node, depth;
	size_t count;
};

/* A live range of the node becomes a scope interval. */
static int node_range(void *arg, uint64_t lo, uint64_t hi)
{
	struct node_ranges *nr = arg;

	if (hi <= lo || !elfdw_ranges_contain(nr->w->c->exec, lo, hi))
		return 0;
	nr->count++;
	return sym_ivals_push(nr->w->scopes, (struct sym_ival){
		lo, hi, nr->node, nr->depth, 0, 0 });
}

/* A constant of the DIE itself, clamped to 32 bits; 0 when absent. */
static int own_u32(const struct walk *w, const struct elfdw_die *die,
		   unsigned s, uint32_t *out)
{
	uint64_t v;
	int err = elfdw_val_const(w->r->s, die, s, &v);

	*out = 0;
	if (err == -ENOENT)
		return 0;
	if (!err)
		*out = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	return err;
}

static int call_site(const struct walk *w, const struct elfdw_die *die,
		     struct sym_node *n)
{
	uint32_t fileno;
	int err = own_u32(w, die, SYM_SLOT_CALL_FILE, &fileno);

	n->call_file = walk_file(w, fileno);
	if (!err)
		err = own_u32(w, die, SYM_SLOT_CALL_LINE, &n->call_line);
	if (!err)
		err = own_u32(w, die, SYM_SLOT_CALL_COLUMN, &n->call_col);
	if (!err)
		err = own_u32(w, die, SYM_SLOT_DISCRIMINATOR, &n->call_disc);
	return err;
}

/* A node for die (a subprogram when parent is SYM_NONE, an inlined
 * instance otherwise); *out is SYM_NONE when die has no live code. */
static int add_node(struct walk *w, const struct elfdw_die *die,
		    uint32_t parent, uint32_t depth, uint32_t *out)
{
	struct sym_index *idx = w->c->idx;
	struct sym_node n = { .parent = parent, .entry = SYM_ADDR_UNKNOWN };
	struct node_ranges nr = { w, (uint32_t)idx->nnodes, depth, 0 };
	uint64_t lowpc;
	int err;

	*out = SYM_NONE;
	if (idx->nnodes >= SYM_NONE - 1)
		return -E2BIG;
	err = elfdw_die_ranges(w->r->s, die, node_range, &nr);
	if (err || nr.count == 0)
		return err;
	err = elfdw_val_addr(w->r->s, die, ELFDW_SLOT_LOW_PC, &lowpc);
	if (!err)
		n.entry = lowpc; /* only DW_AT_low_pc, like llvm-symbolizer */
	else if (err != -ENOENT)
		return err;
	err = fill_names(w, die, &n);
	if (!err && parent != SYM_NONE)
		err = call_site(w, die, &n);
	if (!err)
		err = sym_index_add_node(idx, &n);
	if (!err)
		*out = nr.node;
	return err;
}

static int walk_children(struct walk *w, const struct elfdw_die *die,
			 uint32_t node, uint32_t depth, unsigned nest,
			 const uint8_t **after);

/* One DIE; *after is where its subtree ends when its children were
 * walked, else NULL. */
static int walk_die(struct walk *w, const struct elfdw_die *die,
		    uint32_t node, uint32_t depth, unsigned nest,
		    const uint8_t **after)
{
	uint32_t child;
	int err;

	*after = NULL;
	switch (sym_walk_step(die->ab->kind, node)) {
	case SYM_WALK_FUNCTION: /* depth: 0, or deeper than the enclosing one's */
		err = add_node(w, die, SYM_NONE, depth, &child);
		if (err || child == SYM_NONE)
			return err;
		return walk_children(w, die, child, depth + 1, nest + 1, after);
	case SYM_WALK_INLINED:
		err = add_node(w, die, node, depth, &child);
		if (err || child == SYM_NONE)
			return err;
		return walk_children(w, die, child, depth + 1, nest + 1, after);
	case SYM_WALK_DESCEND:
		return walk_children(w, die, node, depth, nest + 1, after);
	case SYM_WALK_NESTED:
		return walk_children(w, die, SYM_NONE, depth, nest + 1, after);
	default:
		return 0;
	}
}

/* The DIE kinds whose attributes the walk reads, inside a function or not. */
static unsigned full_kinds(uint32_t node)
{
	return (1u << SYM_KIND_FUNC) | (node != SYM_NONE ? 1u << SYM_KIND_INLINED : 0);
}

/* The DIE kinds walk_die does anything with, inside a function or not:
 * the others are stepped over with their subtrees, unread. */
static unsigned wanted_kinds(uint32_t node)
{
	unsigned want = 0;

	for (uint8_t k = SYM_KIND_OTHER; k <= SYM_KIND_SCOPE; k++)
		if (sym_walk_step(k, node) != SYM_WALK_SKIP)
			want |= 1u << k;
	return want;
}

/* Walk the children of die; *after is past the null entry ending them
 * (or the unit's end), NULL when nesting stopped the walk. */
static int walk_children(struct walk *w, const struct elfdw_die *die,
			 uint32_t node, uint32_t depth, unsigned nest,
			 const uint8_t **after)
{
	const uint8_t *p = die->end, *sub;
	unsigned want = wanted_kinds(node), full = full_kinds(node);
	struct elfdw_die c;
	int rc;

	*after = NULL;
	if (nest > SYM_WALK_MAX_DEPTH)
		return 0;
	if (!die->ab->children) {
		*after = p;
		return 0;
	}
	while ((rc = elfdw_next_child(w->r->s, &w->u->u, w->t, &p, want, full,
				       &c)) == 0) {
		rc = walk_die(w, &c, node, depth, nest, &sub);
		if (rc)
			return rc;
		if (elfdw_die_has(&c, ELFDW_SLOT_SIBLING) || !sub)
			rc = elfdw_die_after(w->r->s, w->t, &c, &p);
		else
			p = sub;
		if (rc)
			return rc;
	}
	if (rc < 0)
		return rc;
	*after = p;
	return 0;
}

/* The unit's comp_dir, ranges and line-program header into su. */
static int unit_prepare(struct sym_die_reader *r, const struct elfdw_die *cu,
			const struct sym_walk_ctx *c, const char **comp_dir,
			struct sym_unit *su)
{
	uint64_t stmt;
	int err = elfdw_val_str(r->s, cu, SYM_SLOT_COMP_DIR, comp_dir);

	if (err == -ENOENT || (!err && !**comp_dir))
		*comp_dir = NULL;
	else if (err)
		return err;
	err = elfdw_die_ranges(r->s, cu, elfdw_ranges_add, &su->ranges);
	if (err)
		return err;
	elfdw_ranges_sort(&su->ranges);
	err = elfdw_val_secoff(r->s, cu, SYM_SLOT_STMT_LIST, &stmt);
	if (err == -ENOENT)
		return 0; /* no line table: functions still resolve */
	return err ? err : sym_unit_lines_open(c->idx, c->sects, stmt,
					       *comp_dir, su);
}

int sym_die_walk_unit(struct sym_die_reader *r, struct sym_die_unit *u,
		      const struct sym_walk_ctx *c, struct sym_unit *su)
{
	struct walk w = { .r = r, .u = u, .c = c, .scopes = &su->scopes,
			  .files = &su->files };
	const uint8_t *p = r->s->info.data + u->u.die_off, *after;
	struct elfdw_die cu;
	int err;

	r->diag = ember_diag_make(r->why, sizeof(r->why));
	err = sym_die_unit_abbrevs(r, u, &w.t);
	if (err)
		return err;
	r->pinned = w.t; /* reads in other units must not evict it */
	err = elfdw_die_read(r->s, &u->u, w.t, &p, ELFDW_ALL_KINDS, &cu);
	if (!err && cu.ab->kind != SYM_KIND_UNIT)
		err = EMBER_FAIL(&r->diag, -EOPNOTSUPP, "unit at 0x%llx: a unit DIE of tag 0x%x",
				 (unsigned long long)u->u.off, cu.ab->tag);
	if (!err)
		err = unit_prepare(r, &cu, c, &w.comp_dir, su);
	if (!err)
		err = walk_children(&w, &cu, SYM_NONE, 0, 0, &after);
	if (err && err != -ENOMEM)
		(void)EMBER_FAIL(&r->diag, err, "unit at 0x%llx: %s", (unsigned long long)u->u.off,
			   strerror(-err));
	r->pinned = NULL;
	r->last_walked = w.t;
	return err;
}
