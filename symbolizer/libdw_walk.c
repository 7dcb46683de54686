/*
 * libdw_walk.c - the DWARF walk of the index build through libdw: the
 * reference the DIE reader's walk (die_walk.c) matches byte for byte,
 * and what walks the units that reader leaves to libdw (DWARF 64, split
 * DWARF, unknown forms, anything malformed) and the files it does not
 * read at all (big-endian ones).
 *
 * For every compilation unit: each DW_TAG_subprogram with code becomes a
 * function node, each DW_TAG_inlined_subroutine a node whose parent is the
 * enclosing function or inlined instance, carrying its call site
 * (DW_AT_call_file/line/column, DWARF 5 §3.3.8.2).  Every address range
 * of a node becomes a scope interval; unit_lines.c adds the line rows,
 * flatten.c turns both into one sorted table and collect.c runs the
 * units through all three.
 *
 * Only code in executable sections counts: ranges of functions that the
 * linker discarded (tombstoned to 0 or -1) are dropped here.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct walk {
	struct sym_index *idx;
	const struct elfdw_ranges *exec;
	struct sym_ivals *scopes;
	const struct sym_unit_files *files; /* the unit's file table */
	struct sym_origin_cache *origins;
	Dwarf_CU *cu;
	const char *comp_dir;
};

static int64_t intern(struct sym_index *idx, const char *s)
{
	return s ? sym_strtab_intern(&idx->strtab, s) : 0;
}

/* Path of file number fileno of the current unit (strtab offset). */
static uint32_t walk_file(const struct walk *w, Dwarf_Word fileno)
{
	return fileno < w->files->n ? w->files->off[fileno] : 0;
}

/*
 * Declaration file of die: a file number of the unit that holds the
 * attribute (following abstract_origin/specification).  Ours when that
 * is the current unit; libdw's reader for the rare cross-unit origin.
 */
static int64_t walk_decl_file(struct walk *w, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word fileno;

	if (!dwarf_attr_integrate(die, DW_AT_decl_file, &attr) ||
	    dwarf_formudata(&attr, &fileno))
		return 0;
	if (attr.cu == w->cu)
		return walk_file(w, fileno);
	return sym_intern_path(w->idx, w->comp_dir, dwarf_decl_file(die));
}

static uint32_t attr_udata(Dwarf_Die *die, int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (!dwarf_attr(die, name, &attr) || dwarf_formudata(&attr, &v))
		return 0;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Linkage name (following abstract_origin/specification), else DW_AT_name. */
static const char *die_raw_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *s;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) {
		s = dwarf_formstring(&attr);
		if (s && *s)
			return s;
	}
	return dwarf_diename(die);
}

static int node_names_lookup(struct walk *w, Dwarf_Die *die,
			     struct sym_node *n)
{
	int64_t short_off, decl_off;
	int line = 0;

	if (sym_index_add_name(w->idx, die_raw_name(die), &n->name))
		return -ENOMEM;
	short_off = intern(w->idx, dwarf_diename(die));
	decl_off = walk_decl_file(w, die);
	if (short_off < 0 || decl_off < 0)
		return -ENOMEM;
	n->short_name = (uint32_t)short_off;
	n->decl_file = (uint32_t)decl_off;
	if (dwarf_decl_line(die, &line) == 0 && line > 0)
		n->decl_line = (uint32_t)line;
	return 0;
}

struct own_attrs {
	bool names;		/* a name, linkage name or declaration of its own */
	bool has_origin;
	Dwarf_Attribute origin;	/* DW_AT_abstract_origin or DW_AT_specification */
};

static int own_attr(Dwarf_Attribute *attr, void *arg)
{
	struct own_attrs *o = arg;

	switch (dwarf_whatattr(attr)) {
	case DW_AT_name:
	case DW_AT_linkage_name:
	case DW_AT_MIPS_linkage_name:
	case DW_AT_decl_file:
	case DW_AT_decl_line:
		o->names = true;
		break;
	case DW_AT_abstract_origin:
	case DW_AT_specification:
		if (!o->has_origin) {
			o->origin = *attr;
			o->has_origin = true;
		}
		break;
	default:
		break;
	}
	return DWARF_CB_OK;
}

/*
 * Offset + 1 of the DIE whose names die takes over unchanged, or 0 when
 * die has a name or declaration of its own (an out-of-line C2 constructor
 * names itself; the C4 it comes from names every inlined copy).
 */
static uint64_t die_origin(Dwarf_Die *die)
{
	struct own_attrs o = { 0 };
	Dwarf_Die origin;

	if (dwarf_getattrs(die, own_attr, &o, 0) < 0 || o.names || !o.has_origin)
		return 0;
	if (!dwarf_formref_die(&o.origin, &origin))
		return 0;
	return dwarf_dieoffset(&origin) + 1;
}

/* Names and declaration of die, looked up once per abstract origin. */
static int node_fill_names(struct walk *w, Dwarf_Die *die, struct sym_node *n)
{
	uint64_t key = die_origin(die);
	struct sym_origin *slot;
	int rc;

	if (!key)
		return node_names_lookup(w, die, n);
	rc = sym_origin_cache_get(w->origins, key, n, &slot);
	if (rc)
		return rc < 0 ? rc : 0;
	rc = node_names_lookup(w, die, n);
	if (!rc)
		sym_origin_cache_put(w->origins, slot, key, n);
	return rc;
}

/* Push the live ranges of die as scope intervals of node; count them. */
static int node_add_ranges(struct walk *w, Dwarf_Die *die, uint32_t node,
			   uint32_t depth, size_t *count)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	*count = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		struct sym_ival iv = { lo, hi, node, depth, 0, 0 };

		if (hi <= lo || !elfdw_ranges_contain(w->exec, lo, hi))
			continue;
		if (sym_ivals_push(w->scopes, iv))
			return -ENOMEM;
		(*count)++;
	}
	return 0;
}

/*
 * Make a node for die (a subprogram when parent is SYM_NONE, an inlined
 * instance otherwise).  *out is SYM_NONE when die has no live code.
 */
static int walk_add_node(struct walk *w, Dwarf_Die *die, uint32_t parent,
			 uint32_t depth, uint32_t *out)
{
	struct sym_index *idx = w->idx;
	struct sym_node n = { .parent = parent, .entry = SYM_ADDR_UNKNOWN };
	uint32_t id = (uint32_t)idx->nnodes;
	Dwarf_Addr lowpc;
	size_t nranges;
	int err;

	*out = SYM_NONE;
	if (idx->nnodes >= SYM_NONE - 1)
		return -E2BIG;
	err = node_add_ranges(w, die, id, depth, &nranges);
	if (err || nranges == 0)
		return err;
	/* Like llvm-symbolizer's StartAddress: only a DW_AT_low_pc counts. */
	if (dwarf_lowpc(die, &lowpc) == 0)
		n.entry = lowpc;
	err = node_fill_names(w, die, &n);
	if (err)
		return err;
	if (parent != SYM_NONE) {
		n.call_file = walk_file(w, attr_udata(die, DW_AT_call_file));
		n.call_line = attr_udata(die, DW_AT_call_line);
		n.call_col = attr_udata(die, DW_AT_call_column);
		n.call_disc = attr_udata(die, SYM_AT_GNU_DISCRIMINATOR);
	}
	err = sym_index_add_node(idx, &n);
	if (!err)
		*out = id;
	return err;
}

static int walk_children(struct walk *w, Dwarf_Die *die, uint32_t node,
			 uint32_t depth, unsigned nest);

static int walk_die(struct walk *w, Dwarf_Die *die, uint32_t node,
		    uint32_t depth, unsigned nest)
{
	int tag = dwarf_tag(die);
	uint32_t child_node;
	int err;

	switch (sym_walk_step(tag < 0 ? SYM_KIND_OTHER : sym_tag_kind((unsigned)tag),
			      node)) {
	case SYM_WALK_FUNCTION: /* depth: 0, or deeper than the enclosing one's */
		err = walk_add_node(w, die, SYM_NONE, depth, &child_node);
		if (err || child_node == SYM_NONE)
			return err;
		return walk_children(w, die, child_node, depth + 1, nest + 1);
	case SYM_WALK_INLINED:
		err = walk_add_node(w, die, node, depth, &child_node);
		if (err || child_node == SYM_NONE)
			return err;
		return walk_children(w, die, child_node, depth + 1, nest + 1);
	case SYM_WALK_DESCEND:
		return walk_children(w, die, node, depth, nest + 1);
	case SYM_WALK_NESTED:
		return walk_children(w, die, SYM_NONE, depth, nest + 1);
	default:
		return 0;
	}
}

static int walk_children(struct walk *w, Dwarf_Die *die, uint32_t node,
			 uint32_t depth, unsigned nest)
{
	Dwarf_Die child;
	int rc, err;

	if (nest > SYM_WALK_MAX_DEPTH)
		return 0;
	if (!dwarf_haschildren(die) || dwarf_child(die, &child) != 0)
		return 0;
	do {
		err = walk_die(w, &child, node, depth, nest);
		if (err)
			return err;
	} while ((rc = dwarf_siblingof(&child, &child)) == 0);
	if (rc < 0)
		pr_debug("symbolizer: DIE walk stopped: %s", dwarf_errmsg(-1));
	return 0;
}

/* DW_AT_comp_dir of a unit, or NULL. */
static const char *unit_comp_dir(Dwarf_Die *cudie)
{
	Dwarf_Attribute attr;
	const char *dir;

	if (!dwarf_attr(cudie, DW_AT_comp_dir, &attr))
		return NULL;
	dir = dwarf_formstring(&attr);
	return dir && *dir ? dir : NULL;
}

/* The unit's own ranges (sorted) and line-program header (files
 * interned) into su. */
static int unit_prepare(const struct sym_walk_ctx *c, Dwarf_Die *cudie,
			const char *comp_dir, struct sym_unit *su)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_Attribute attr;
	ptrdiff_t off = 0;
	Dwarf_Word stmt;

	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0)
		if (elfdw_ranges_add(&su->ranges, lo, hi))
			return -ENOMEM;
	elfdw_ranges_sort(&su->ranges);
	if (!dwarf_attr(cudie, DW_AT_stmt_list, &attr) ||
	    dwarf_formudata(&attr, &stmt))
		return 0; /* no line table: functions still resolve */
	return sym_unit_lines_open(c->idx, c->sects, stmt, comp_dir, su);
}

int sym_libdw_walk_unit(const struct sym_walk_ctx *c, Dwarf_Die *cudie,
			struct sym_unit *su)
{
	const char *comp_dir = unit_comp_dir(cudie);
	struct walk w = { .idx = c->idx, .exec = c->exec, .scopes = &su->scopes,
			  .files = &su->files, .origins = c->origins,
			  .cu = cudie->cu, .comp_dir = comp_dir };
	int err = unit_prepare(c, cudie, comp_dir, su);

	return err ? err : walk_children(&w, cudie, SYM_NONE, 0, 0);
}
