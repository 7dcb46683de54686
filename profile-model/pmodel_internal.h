/*
 * pmodel_internal.h - what only profile-model/ sees: the tree of frame
 * names, the buffered writer, the flame-graph renderer, the pprof
 * builder and the diff's layout.
 *
 * One concept a file:
 *   pmodel_errors.c pmodel_strerror, pmodel_error_kind
 *   strtab.c        interned strings
 *   dict.c          the dictionary: functions, mappings, locations, stack nodes
 *   dict_import.c   entries of one dictionary interned into another
 *   from_pprof.c    a decoded pprof's locations and stacks into a dictionary
 *   types.c         profile type names, aliases, the profile's name
 *   result.c        the merged result: dictionary + value per stack
 *   focus.c         a result's samples under one call path
 *   restack.c       a result's stacks rewritten node by node (the views' engine)
 *   view.c, view_through.c, view_hide.c, view_sandwich.c  the views: stacks
 *                   through a frame, frames hidden, a function's sandwich
 *   source_lines.c  one function's values per source line (the source view)
 *   unresolved.c    unsymbolized frames grouped per module
 *   name_coverage.c how much of a result its names explain
 *   ntree.c         the tree of frame names (outputs, diffs)
 *   truncate.c      a result cut to its largest nodes, the rest "other"
 *   out.c           buffered writing, XML and JSON escaping
 *   out_units.c     values in human units (the top table, flame graphs)
 *   out_pprof.c, out_folded.c, out_top.c, out_tree.c, out_svg.c,
 *   out_flamebearer.c (Pyroscope's flame graph), out_flamegraph_diff.c (its diff),
 *   svg_script.c    the outputs; the flame graph's script
 *   diff.c, diff_table.c, diff_out.c, diff_tree.c  the diff and its outputs
 */
#ifndef EMBER_PMODEL_INTERNAL_H
#define EMBER_PMODEL_INTERNAL_H

#include "pmodel.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

EMBER_VEC_DEF(pmodel_u64s, uint64_t);
EMBER_VEC_DEF(pmodel_u32s, uint32_t);

/* Value of one sample of a result, for noise estimates: its period when
 * the period is in the unit of the values, else 1. */
double pmodel_result_quantum(const struct pmodel_result *r);
/* An empty result of r's type, period, profile count and times. */
int pmodel_result_new_like(const struct pmodel_result *r, struct pmodel_result **out);
/* Copy r (dictionary and values). */
int pmodel_result_copy(const struct pmodel_result *r, struct pmodel_result **out);
/* r's attributed parts added to c as parts of nodes of dict: each row's
 * node through map (NULL: the node itself, dict being r's); with keep
 * (per node of r: the focus's and the views'), the rows of the nodes it
 * marks alone; a row of value 0 (parts taken off again) never. */
int pmodel_result_add_attrs_of(struct pmodel_result *c, const struct pmodel_dict *dict,
			       const struct pmodel_result *r, const uint32_t *map,
			       const bool *keep);

/* A new result of r's type, period, profiles and times over the stacks
 * of d, r's node i's value and attributed parts on node map[i] of d (r
 * and d not kept; truncate.c, unresolved.c).  0 or -ENOMEM. */
int pmodel_result_remap(const struct pmodel_result *r, const struct pmodel_dict *d,
			const uint32_t *map, struct pmodel_result **out);

/* Location l of im's source with its lines [first, first + n) only
 * (lines innermost first, as a location keeps them), interned into the
 * destination as a location of its own (dict_import.c). */
int pmodel_import_loc_lines(struct pmodel_import *im, uint32_t l, uint32_t first, uint32_t n,
			    uint32_t *out);

/* ---- stacks rewritten (restack.c): the views' engine ---------------------- */

/* A result's stacks rewritten parent first: a view's step gives node i
 * of r's dictionary (i > 0) its stack in d, out[i], from its parent's
 * stack there and its location.  A sample of a node left at 0 (the empty
 * stack) or marked in drop[] is dropped; the rest are summed per stack
 * of d.  out[0] is 0 and drop[0] false. */
struct pmodel_restack {
	const struct pmodel_result *r;
	struct pmodel_dict d;
	struct pmodel_import im;	/* r's dictionary into d */
	uint32_t *out;			/* per node of r */
	bool *drop;			/* per node of r */
};

typedef int (*pmodel_restack_fn)(struct pmodel_restack *rs, uint32_t i, void *ctx);

/* The result of r's stacks rewritten by step (called for every node but
 * the root, in order) into *out (pmodel_result_free).  0, step's error
 * or -ENOMEM. */
int pmodel_restack(const struct pmodel_result *r, pmodel_restack_fn step, void *ctx,
		   struct pmodel_result **out);
/* *out: the stack of d under parent with the frames [first, first + n)
 * of r's location l (innermost first, as a location keeps its lines; a
 * location without lines is one frame, whole). */
int pmodel_restack_push(struct pmodel_restack *rs, uint32_t parent, uint32_t l, uint32_t first,
			uint32_t n, uint32_t *out);
/* The frames of location l: its lines, or 1 when it has none. */
static inline uint32_t pmodel_loc_frames(const struct pmodel_loc *l)
{
	return l->nlines ? l->nlines : 1;
}
/* The name of frame k (0 the innermost) of location l of d, as the trees
 * name it: pmodel_line_name, or an unsymbolized one's into buf. */
const char *pmodel_frame_name(const struct pmodel_dict *d, const struct pmodel_loc *l,
			      uint32_t k, char *buf, size_t size);
/* The outermost frame of location l of d named name, or UINT32_MAX. */
uint32_t pmodel_loc_find_frame(const struct pmodel_dict *d, const struct pmodel_loc *l,
			       const char *name);

/* Tree of frame names (ntree.c): node 0 the root, every parent before
 * its children; a location with inlined frames is several nodes.  Names
 * are the tree's own strings. */
struct pmodel_ntree {
	struct pmodel_strtab names;
	EMBER_VEC(uint32_t) parent;
	EMBER_VEC(uint32_t) name;
	EMBER_VEC(int64_t) self;
	EMBER_VEC(int64_t) total;
	struct pmodel_u32s file;  /* per name id: its function's source file (a name
				     id too; 0 unknown), the first one seen */
	struct pmodel_u32s type;  /* per name id: its frames' type (profile.frame.type,
				     a name id; 0 none), the first one seen */
	EMBER_VEC(int64_t) line;  /* per node: the source line of its frames, 0 when
				     unknown or when they name different lines */
	struct ember_hset set;
	uint32_t *first, *next; /* children sorted by name (pmodel_ntree_finish) */
};

/* The source file of name id name ("" when unknown). */
static inline const char *pmodel_ntree_file(const struct pmodel_ntree *t, uint32_t name)
{
	return pmodel_str(&t->names, name < t->file.n ? t->file.v[name] : 0);
}

/* The frame type of name id name ("" when none). */
static inline const char *pmodel_ntree_type(const struct pmodel_ntree *t, uint32_t name)
{
	return pmodel_str(&t->names, name < t->type.n ? t->type.v[name] : 0);
}

/* The name of unsymbolized location l of d into buf (NUL-terminated,
 * truncated to size - 1): "MODULE+0xOFFSET", MODULE the base name of its
 * mapping's file (else its build ID, else "?") and OFFSET the address's
 * offset in that file; "0xADDRESS" without a mapping.  Its length.  The
 * trees (ntree.c) and the pprof output (out_pprof.c) name it alike. */
#define PMODEL_UNRESOLVED_NAME_MAX 320
size_t pmodel_loc_unresolved_name(const struct pmodel_dict *d, const struct pmodel_loc *l,
				  char *buf, size_t size);

/* The module of location l of d as its unsymbolized name names it: the
 * base name of its mapping's file, else its build ID, else "?"; NULL
 * without a mapping (points into d). */
const char *pmodel_loc_module(const struct pmodel_dict *d, const struct pmodel_loc *l);
/* The name of the group of unsymbolized location l (unresolved.c):
 * "[MODULE]", "[unknown]" without a mapping; into buf as
 * pmodel_loc_unresolved_name writes.  Its length. */
size_t pmodel_loc_unresolved_group(const struct pmodel_dict *d, const struct pmodel_loc *l,
				   char *buf, size_t size);
/* Whether a and b (of d) are unsymbolized frames of one group. */
bool pmodel_loc_same_group(const struct pmodel_dict *d, const struct pmodel_loc *a,
			   const struct pmodel_loc *b);

/* The frame name of line ln of a location of d: its function's name,
 * else its system name, else "?" (points into d).  The trees and the
 * focus (focus.c) name frames alike. */
const char *pmodel_line_name(const struct pmodel_dict *d, const struct pmodel_line *ln);

int pmodel_ntree_init(struct pmodel_ntree *t);
void pmodel_ntree_release(struct pmodel_ntree *t);
/* The child of parent named name[0..len), added when absent. */
int pmodel_ntree_child(struct pmodel_ntree *t, uint32_t parent, const char *name, size_t len,
		   uint32_t *out);
/* Node n's frames come from file and line (line -1: none seen, as in
 * t->line): the name's file when it has none yet, the node's line unless
 * another was seen.  0 or -ENOMEM. */
int pmodel_ntree_note_source(struct pmodel_ntree *t, uint32_t n, const char *file, int64_t line);
/* The tree of r (self values summed per frame path), finished. */
int pmodel_ntree_build(const struct pmodel_result *r, struct pmodel_ntree *t);
/* The same, and per stack node i of r's dictionary the tree node of its
 * leaf frame into leaf[i] (pmodel_dict_nodes() entries, the caller's);
 * a location's other frames are that node's nearest ancestors, one per
 * inlined function (its lines, innermost nearest). */
int pmodel_ntree_build_leaves(const struct pmodel_result *r, struct pmodel_ntree *t,
			      uint32_t *leaf);
/* The smallest total a node keeps when at most max_nodes of n nodes (the
 * root not among them), whose totals are v[0..n) (sorted here, largest
 * first), are kept: the max_nodes-th largest, or 0 (nothing cut) when
 * max_nodes is 0 or they fit.  A node whose total is below it is cut: the
 * flame graph folds it into "other" (out_flamebearer.c), a truncated
 * result replaces it (truncate.c), as Pyroscope ranks nodes for both. */
int64_t pmodel_ntree_cutoff(int64_t *v, size_t n, size_t max_nodes);
/* Totals from selves, and the sorted children lists. */
int pmodel_ntree_finish(struct pmodel_ntree *t);
static inline size_t pmodel_ntree_count(const struct pmodel_ntree *t)
{
	return t->parent.n;
}
/* "a;b;c" of node n into b (reset first). */
int pmodel_ntree_path(const struct pmodel_ntree *t, uint32_t n, struct ember_buf *b);
/* Per name: self, and total counting each stack once however often the
 * name recurses in it; out indexed by name id (t->names). */
struct pmodel_fstat {
	int64_t self, total;
};
int pmodel_ntree_functions(const struct pmodel_ntree *t, struct pmodel_fstat **out);
/* Visit nodes depth first, children in name order: fn(enter) before a
 * node's children, fn(!enter) after them.  fn's negative return stops
 * the walk; a positive one on entering skips the node's children (and
 * its exit call). */
int pmodel_ntree_walk(const struct pmodel_ntree *t, int (*fn)(void *ctx, uint32_t n, int depth,
						       bool enter), void *ctx);

/* ---- writing (out_*.c) --------------------------------------------------- */

/* Buffered writer over a pmodel_write_fn. */
struct pmodel_out {
	pmodel_write_fn fn;
	void *ctx;
	struct ember_buf buf;
	int err;
};

void pmodel_out_init(struct pmodel_out *o, pmodel_write_fn fn, void *ctx);
int pmodel_out_write(struct pmodel_out *o, const void *data, size_t len);
int pmodel_out_printf(struct pmodel_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int pmodel_out_str(struct pmodel_out *o, const char *s)
{
	return pmodel_out_write(o, s, strlen(s));
}
/* Escaped for XML text and attributes. */
int pmodel_out_xml(struct pmodel_out *o, const char *s);
/* A JSON string literal. */
int pmodel_out_json(struct pmodel_out *o, const char *s);
/* Flush and release; returns the first error. */
int pmodel_out_finish(struct pmodel_out *o);

/* Pyroscope's flame graph of tree t (out_flamebearer.c), over one side
 * (a result's tree: 4 numbers a node) or two (a diff's union tree: 7):
 * each side's self and total per node of t. */
struct pmodel_fg_side {
	const int64_t *self, *total;
};

int pmodel_fg_build(const struct pmodel_ntree *t, const struct pmodel_fg_side *side,
		    size_t sides, size_t max_nodes, struct pmodel_flamegraph **out);
/* g as the flamebearer's JSON object, then g freed.  0 or fn's error. */
int pmodel_fg_write(struct pmodel_flamegraph *g, pmodel_write_fn fn, void *ctx);

/* The flame graph renderer shared by the plain and the differential one
 * (out_svg.c): frames of tree t, each as wide as width[n] (a fraction of
 * the root), coloured and titled by the callbacks. */
struct pmodel_svg_src {
	const struct pmodel_ntree *t;
	const double *width;
	void (*fill)(const void *ctx, uint32_t n, char rgb[32]);
	void (*title)(const void *ctx, uint32_t n, struct pmodel_out *o);
	const void *ctx;
	const char *subtitle;
	const char *legend; /* NULL, or a line under the title */
	const char *empty;  /* the line drawn instead when no frame is wide enough */
};

int pmodel_svg_render(const struct pmodel_svg_src *src, const struct pmodel_svg_opts *o,
		  pmodel_write_fn fn, void *ctx);
extern const char pmodel_svg_script[];

/* The pprof of a dict's stacks: values per node; labels per call. */
struct pmodel_pprof_add {
	const struct pmodel_dict *dict;
	const int64_t *self;
	double scale;	/* multiply values (rounded) */
	bool base;	/* label pprof::base=true */
	/* NULL, or a result of dict whose attr_rows are added as samples
	 * labelled with their attributes (self then holds the rest) */
	const struct pmodel_result *attrs;
};

int pmodel_pprof_begin(const struct pmodel_result *r, struct pprof_profile **out);
int pmodel_pprof_add(struct pprof_profile *p, const struct pmodel_pprof_add *a);

/* ---- diff (diff.c) ----------------------------------------------------------- */

struct pmodel_diff {
	struct pmodel_result *base, *new_; /* copies */
	struct pmodel_ntree bt, nt;		   /* each side's tree */
	struct pmodel_ntree ut;		   /* the union: self/total are new's */
	EMBER_VEC(int64_t) ub_self, ub_total; /* ... and base's, per union node */
	struct pmodel_diff_opts opts;
	int64_t btotal, ntotal;
	double bquant, nquant;		   /* value of one sample, for the noise */
};

#endif /* EMBER_PMODEL_INTERNAL_H */
