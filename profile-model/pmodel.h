/*
 * pmodel.h - the profile model: merged profiles (a dictionary of
 * functions, mappings, locations and stacks with one value per stack),
 * the trees of frame names built from them, their diff, and their
 * outputs: pprof, folded stacks, a top table, a JSON tree and a
 * flame-graph SVG (issue 15, split out of the profile store in issue 22;
 * docs/profile-store.md).
 *
 * Pipeline position: the profile store (profile-store/pstore.h) fills a
 * struct pmodel_result from what it keeps (pstore_query); a tool makes
 * one from a decoded pprof file (pmodel_result_from_pprof, wire/pprof.h).
 * Either is written out here, or two of them compared into a struct
 * pmodel_diff.  The model knows nothing of storage, logs, labels or
 * HTTP: `ember diff` links it (and wire/) without the store.
 *
 * Ownership: a result, a diff and every output are plain values owned by
 * one thread at a time; each *_free accepts NULL.  There is no global
 * state.
 *
 * Errors: int functions return 0 or a negative errno, or -PMODEL_ERR_TYPE
 * (pmodel_strerror()).  Functions taking `char *why, size_t why_size`
 * write a reason for the sender there on failure (NUL-terminated, may be
 * NULL).
 *
 * The second half of this header ("the data model") lays out the
 * dictionary and the result for the layer that fills them, the storage
 * engine, which keeps the same dictionary in its log heads and blocks.
 */
#ifndef EMBER_PMODEL_H
#define EMBER_PMODEL_H

#include "common.h"
#include "pprof.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmodel_result;
struct pmodel_diff;

/* ---- errors ----------------------------------------------------------- */

enum pmodel_error {
	/* An unknown profile type, or two results whose sample
	 * types or units differ (HTTP 400).  The profile store's
	 * PSTORE_ERR_TYPE is this number. */
	PMODEL_ERR_TYPE = 5204,
};

/* Message for a negative error of this component (errno or PMODEL_ERR). */
const char *pmodel_strerror(int err);
/* What such an error means to whoever asked: -PMODEL_ERR_TYPE
 * EMBER_ERRK_MALFORMED (the request names the wrong types), an errno
 * ember_errkind_of_errno(). */
enum ember_errkind pmodel_error_kind(int err);

/* ---- results ------------------------------------------------------------ */

/* A result from one decoded pprof (offline diffs): its samples of type
 * (NULL: the profile's default type). */
int pmodel_result_from_pprof(const struct pprof_profile *p, const char *type,
			     struct pmodel_result **out, char *why, size_t why_size);

void pmodel_result_free(struct pmodel_result *r);

/* The samples of r whose stack, read root first as the trees name its
 * frames (a location's inlined functions outermost first, an
 * unsymbolized one "MODULE+0xOFFSET", or "[MODULE]" for a run of them
 * as pmodel_result_group_unresolved groups them), begins with exactly
 * path[0, n):
 * Pyroscope's stack_trace_selector (focus.c).  A kept sample keeps its
 * whole stack (and its attributes); none kept, the result has no
 * samples (total 0).  *out a new result of r's type, period, profiles
 * and times (r not kept; pmodel_result_free); n 0 keeps every sample.
 * 0 or -ENOMEM. */
int pmodel_result_focus(const struct pmodel_result *r, const char *const *path, size_t n,
			struct pmodel_result **out);

/* ---- views (view.c, view_*.c): a result's stacks rewritten -------------- *
 * Each returns a new result of r's type, period, profiles and times (r
 * not kept; pmodel_result_free), its samples' attributed parts moved
 * with them; a frame is named as the trees name it (a location's inlined
 * functions each a frame, an unsymbolized one "MODULE+0xOFFSET").  0 or
 * -ENOMEM. */

/* The samples whose stack passes through a frame named name, anywhere
 * in it (pprof's -focus by name; pmodel_result_focus keeps a root-first
 * path instead), each whole (view_through.c). */
int pmodel_result_through(const struct pmodel_result *r, const char *name,
			  struct pmodel_result **out);

/* Whether a frame of that name is hidden; ctx the caller's. */
typedef bool (*pmodel_frame_match_fn)(void *ctx, const char *name);

/* Every frame that hide matches taken out of its stacks, its callees
 * attached to its caller and its own value given to the caller (pprof's
 * -hide): equal stacks merge.  A stack whose every frame is hidden is
 * dropped (it has no caller to be given to).  hide is asked once per
 * location and frame of r, not per sample (view_hide.c). */
int pmodel_result_hide(const struct pmodel_result *r, pmodel_frame_match_fn hide, void *ctx,
		       struct pmodel_result **out);

/* The two halves of a sandwich view of one function (Pyroscope's and
 * Parca's): its callees, the stacks from its outermost frame on, rooted
 * at it; its callers, the stacks up to its outermost frame read from it
 * to the root (an inverted tree rooted at the function, a sample's value
 * the self of its outermost caller).  A stack that recurses into the
 * function is counted once, from the function's outermost frame, so
 * either tree's total is the function's total in the top table; stacks
 * without the function are dropped (view_sandwich.c). */
enum pmodel_sandwich_side {
	PMODEL_SANDWICH_CALLEES,
	PMODEL_SANDWICH_CALLERS,
};
int pmodel_result_sandwich(const struct pmodel_result *r, const char *name,
			   enum pmodel_sandwich_side side, struct pmodel_result **out);

/* The views of a query, applied in this order (view.c): only the stacks
 * through a frame, hidden frames taken out, one side of a sandwich.
 * None asked (v NULL or every field NULL): a copy of r's stacks and
 * values (pmodel_result_copy: without its attributed parts). */
struct pmodel_view {
	size_t sz;
	const char *through;		/* NULL: every stack */
	pmodel_frame_match_fn hide;	/* NULL: no frame hidden */
	void *hide_ctx;
	const char *sandwich;		/* NULL: the whole tree */
	enum pmodel_sandwich_side side;
};
int pmodel_result_view(const struct pmodel_result *r, const struct pmodel_view *v,
		       struct pmodel_result **out);

/* r with each run of consecutive unsymbolized frames of one module (a
 * stack's locations without lines, caller to callee) made one frame, a
 * function "[MODULE]" (MODULE the base name of the mapping's file, else
 * its build ID; "[unknown]" without a mapping) of the frames' type, as
 * stackcollapse-perf.pl names what perf could not symbolize
 * (unresolved.c).  Equal stacks merge; the total, the attributed parts
 * and the rest of r's info are kept.  r is not kept.  0 or -ENOMEM; *out
 * to pmodel_result_free(). */
int pmodel_result_group_unresolved(const struct pmodel_result *r, struct pmodel_result **out);
/* Whether r has an unsymbolized location (one without lines): whether
 * grouping can change it. */
bool pmodel_result_has_unresolved(const struct pmodel_result *r);
/* How much of r its names explain (name_coverage.c): values of r's type.
 * A stack is named at its leaf when its leaf location has lines, named
 * whole when every location has.  Per module (a mapping's build ID, else
 * its file; frames without a mapping one module of their own): value,
 * the stacks through it (each once); unnamed, those with an unsymbolized
 * frame of it; leaf and leaf_named, the stacks whose leaf is of it, and
 * named.  jit: no build ID and no file an upload could give (no file,
 * "[anon:...]", "//anon", "/memfd:", perf-PID.map, jitdump's jitted-*.so,
 * no mapping).  Modules by unnamed, most first; their strings point into
 * r (valid while r lives). */
struct pmodel_coverage_module {
	const char *build_id, *file; /* "" when the mapping names none */
	bool jit;
	int64_t value, unnamed, leaf, leaf_named;
};
struct pmodel_coverage {
	int64_t total, leaf_named, all_named;
	EMBER_VEC(struct pmodel_coverage_module) m; /* m.v[0, m.n) */
};
/* 0 or -ENOMEM; *out to pmodel_coverage_free() (NULL accepted). */
int pmodel_result_coverage(const struct pmodel_result *r, struct pmodel_coverage **out);
void pmodel_coverage_free(struct pmodel_coverage *c);
/* What a result holds. */
struct pmodel_result_info {
	const char *type;	/* full type ID; valid while r lives */
	int64_t total;		/* sum of every stack's value */
	int64_t period;
	uint64_t profiles;	/* profiles merged */
	uint64_t stacks;	/* distinct stacks */
	int64_t min_time_ns, max_time_ns;
	int64_t rollup_only_step; /* the result's (0: full resolution throughout) */
};

void pmodel_result_info(const struct pmodel_result *r, struct pmodel_result_info *out);

/* r cut to its largest max_nodes nodes, as Pyroscope cuts the pprof of
 * SelectMergeProfile (truncate.c): in the tree of frame names (inlined
 * functions separate nodes) the nodes whose total is below the
 * max_nodes-th largest (the root not counted: the flame graph's rule)
 * are cut, and on each stack its cut frames (a leaf-side suffix) are
 * replaced by one location of a function "other" with no mapping; a
 * stack cut whole becomes "other" alone.  Equal stacks merge: the total,
 * the attributed parts and the rest of r's info are kept.  max_nodes 0,
 * or at least the tree's nodes: the same stacks.  r is not kept.  0 or
 * -ENOMEM; *out to pmodel_result_free(). */
int pmodel_result_truncate(const struct pmodel_result *r, size_t max_nodes,
			   struct pmodel_result **out);

/* ---- outputs ----------------------------------------------------------- */

/* Where an output goes: called with successive pieces; a negative return
 * stops the output and is returned. */
typedef int (*pmodel_write_fn)(void *ctx, const void *data, size_t len);

/* A pmodel_write_fn appending to the struct ember_buf ctx. */
int pmodel_write_buf(void *ctx, const void *data, size_t len);

/* A value with its unit, human-readable as the web UI writes it
 * (web/js/format.js: "25.63 s", "1.20 GiB", "1,234"; out_units.c). */
void pmodel_format_value(double v, const char *unit, char *buf, size_t size);

/* pprof, gzip-compressed (what `go tool pprof` reads), into out. */
int pmodel_write_pprof(const struct pmodel_result *r, struct ember_buf *out);
/* Folded stacks, "root;...;leaf value\n", in tree order (children sorted
 * by name). */
int pmodel_write_folded(const struct pmodel_result *r, pmodel_write_fn fn, void *ctx);

/* One row of the top table: per function, self and cumulative (each
 * stack counted once however often the function recurses in it). */
struct pmodel_top_row {
	const char *name;
	int64_t self, total;
	double self_pct, total_pct; /* of the result's total */
	const char *file;	    /* the function's source file, "" unknown */
	const char *frame_type;	    /* its frames' type ("native", "kernel", ...: OTLP's
				       profile.frame.type), "" none */
};

/* The top table, sorted by self (then total, then name), at most n rows
 * (0: all).  *rows is one allocation of *nrows rows and their names, to
 * free(). */
int pmodel_result_top(const struct pmodel_result *r, size_t n,
		      struct pmodel_top_row **rows, size_t *nrows);
/* As text (pprof -top's columns) or JSON ({"total":..,"rows":[..]}). */
int pmodel_write_top(const struct pmodel_result *r, size_t n, bool json,
		     pmodel_write_fn fn, void *ctx);
/* One function's values per source line (source_lines.c): what the
 * source view and pprof -list show.  A line's self is the value of the
 * stacks whose leaf frame is the function at that line; its total the
 * value of the stacks with a frame of the function at that line (inlined
 * frames included), each stack once.  Line 0: frames without a line. */
struct pmodel_source_line {
	int64_t line, self, total;
};
struct pmodel_source_file {
	const char *file;	/* the function's source file as the profile names
				   it ("" unknown) */
	const char *build_id;	/* of the mapping the file's frames weigh most in
				   ("" none) */
	const char *module;	/* that mapping's file ("" none) */
	int64_t self, total;	/* the function's frames of this file, each stack once */
	struct pmodel_source_line *lines; /* by line number, those with a value */
	size_t n_lines;
};
struct pmodel_source {
	int64_t self, total;	/* the function's, each stack once */
	struct pmodel_source_file *files; /* heaviest total first (then by name) */
	size_t n_files;
};
/* The lines of function (a frame name, as the trees and the top table
 * name it) in r into *out (pmodel_source_free; no files when no stack
 * holds it).  Its strings point into r: valid while r lives.  0 or
 * -ENOMEM. */
int pmodel_result_source(const struct pmodel_result *r, const char *function,
			 struct pmodel_source **out);
void pmodel_source_free(struct pmodel_source *s);
/* {"name":"total","self":0,"total":N,"children":[...]}: one JSON value, no
 * newline after it (the caller's document holds it). */
int pmodel_write_tree_json(const struct pmodel_result *r, pmodel_write_fn fn, void *ctx);
/* Pyroscope's flame graph (out_flamebearer.c; querier.v1's FlameGraph):
 * names[0] "total", one level per depth of four numbers per node (x
 * offset delta-coded against the end of the level's previous node,
 * total, self, name index); past max_nodes nodes (0: no limit) the
 * smallest folded into "other" per parent.  Everything is the graph's
 * own (pmodel_flamegraph_free).
 *
 * A diff's graph (pmodel_flamegraph_diff_new; querier.v1's
 * FlameGraphDiff, the flamebearer of format "double") has seven numbers
 * per node: the left side's x offset (delta-coded against the end of the
 * level's previous node on the left), total and self, the same three of
 * the right side, and the name index. */
struct pmodel_flamegraph {
	const char **names;
	size_t n_names;
	int64_t **levels;	/* levels[d]: level_len[d] numbers */
	size_t *level_len;
	size_t n_levels;
	size_t node_width;	/* numbers per node: 4, a diff's 7 */
	int64_t total, max_self; /* a diff's total: left_total + right_total */
	int64_t left_total, right_total; /* a diff's sides (a plain graph: total, 0) */
};

int pmodel_flamegraph_new(const struct pmodel_result *r, size_t max_nodes,
			  struct pmodel_flamegraph **out);
/* The graph of diff d: left is d's base, right its new side, over the
 * union of their trees (a frame one side lacks has zeros there), children
 * in name order; past max_nodes nodes (0: no limit) the nodes whose
 * larger total of the two is below the max_nodes-th largest are folded
 * per parent into "other", as Pyroscope's NewFlamegraphDiff does.  d is
 * not kept.  0 or -ENOMEM; *out to pmodel_flamegraph_free(). */
int pmodel_flamegraph_diff_new(const struct pmodel_diff *d, size_t max_nodes,
			       struct pmodel_flamegraph **out);
void pmodel_flamegraph_free(struct pmodel_flamegraph *g);
/* The same as JSON, {"names":[..],"levels":[[..],..],"numTicks":N,
 * "maxSelf":M}: one JSON value, no newline. */
int pmodel_write_flamebearer(const struct pmodel_result *r, size_t max_nodes,
			     pmodel_write_fn fn, void *ctx);
/* The diff's graph as that JSON (numTicks: both sides' sum, as
 * Pyroscope's "double" flamebearer has it). */
int pmodel_write_flamebearer_diff(const struct pmodel_diff *d, size_t max_nodes,
				  pmodel_write_fn fn, void *ctx);

struct pmodel_svg_opts {
	size_t sz;
	const char *title; /* NULL: "Flame Graph" */
	int width;	   /* px; 0: 1200 */
	bool icicle;	   /* root at the top */
};

/* One self-contained interactive SVG (hover, click to zoom, search). */
int pmodel_write_flamegraph(const struct pmodel_result *r, const struct pmodel_svg_opts *o,
			    pmodel_write_fn fn, void *ctx);

/* ---- diff -------------------------------------------------------------- */

struct pmodel_diff_opts {
	size_t sz;
	double min_abs_pct;	/* flag past this change of share, in points: 0.5 */
	double min_rel;		/* ... and this relative change: 0.1 (10%) */
	double min_z;		/* ... and this many noise sigmas: 3 */
};

/*
 * Compare base and new (neither kept) after normalizing each to fractions
 * of its own total.  *out to pmodel_diff_free().  -PSTORE_ERR_TYPE when
 * their sample types or units differ, -ENOMEM.
 */
int pmodel_diff_new(const struct pmodel_result *base, const struct pmodel_result *new_,
		    const struct pmodel_diff_opts *o, struct pmodel_diff **out);
void pmodel_diff_free(struct pmodel_diff *d);

/* One function of the regression table; shares in percent of each side's
 * total. */
struct pmodel_diff_row {
	const char *name;
	double base_self_pct, new_self_pct, base_total_pct, new_total_pct;
	double delta_self_pct, delta_total_pct; /* new - base, points */
	double rel_self;	/* delta / base share (INFINITY for a new one) */
	double noise_self_pct;	/* one sigma of the self delta from counts */
	double z;		/* delta_self / noise */
	int64_t base_self, new_self, base_total, new_total; /* raw values */
	bool flagged;		/* past all three thresholds */
};

/* Rows sorted by delta_self_pct (grown first, vanished last); *rows is
 * one allocation with the names, to free(). */
int pmodel_diff_table(const struct pmodel_diff *d, struct pmodel_diff_row **rows,
		      size_t *nrows);
int pmodel_write_diff_table(const struct pmodel_diff *d, size_t n, bool json,
			    pmodel_write_fn fn, void *ctx);
/* "stack base new\n" as difffolded.pl writes (raw values; normalize:
 * base scaled to new's total, as difffolded.pl -n). */
int pmodel_write_diff_folded(const struct pmodel_diff *d, bool normalize,
			     pmodel_write_fn fn, void *ctx);
/* The union tree as JSON, both sides' raw values per frame:
 * {"name":"total","base_self":..,"base_total":..,"new_self":..,"new_total":..,
 *  "children":[...]}, children sorted by name: one JSON value, no newline
 * after it. */
int pmodel_write_diff_tree_json(const struct pmodel_diff *d, pmodel_write_fn fn, void *ctx);
/* The totals of both sides. */
void pmodel_diff_totals(const struct pmodel_diff *d, int64_t *base, int64_t *new_);
/* Differential flame graph: red grew, blue shrank. */
int pmodel_write_diff_flamegraph(const struct pmodel_diff *d, const struct pmodel_svg_opts *o,
				 pmodel_write_fn fn, void *ctx);
/* pprof (gzip) holding new scaled to base's total and base negated with
 * the label pprof::base=true: `go tool pprof -top` on it prints what
 * `go tool pprof -top -normalize -diff_base base new` prints. */
int pmodel_write_diff_pprof(const struct pmodel_diff *d, struct ember_buf *out);

/* ==== the data model: what the storage engine fills and reads ========== */

/* Sets of element indexes: common.h's struct ember_hset, with uint32_t
 * ids; ops name an element's hash (for building a set over existing
 * elements) and its equality.  The dictionary's tables and the engine's
 * series table intern through them. */
struct pmodel_hset_ops {
	uint64_t (*hash)(const void *ctx, size_t idx);
	bool (*equal)(const void *ctx, size_t idx, const void *key);
};

static inline uint32_t pmodel_hset_find(const struct ember_hset *s, const struct pmodel_hset_ops *ops,
				    const void *ctx, uint64_t h, const void *key)
{
	size_t i = ember_hset_find(s, h, ops->equal, ctx, key);

	return i == SIZE_MAX ? UINT32_MAX : (uint32_t)i;
}

/* Add idx under its hash h. */
static inline int pmodel_hset_insert(struct ember_hset *s, const struct pmodel_hset_ops *ops,
				 const void *ctx, uint32_t idx, uint64_t h)
{
	(void)ops, (void)ctx;
	return ember_hset_insert(s, h, idx);
}

/* Values are summed wrapping (two's complement): a profile or a block
 * may hold any int64, and an overflow must not be undefined. */
static inline int64_t pmodel_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}


/* ---- strings (strtab.c) ------------------------------------------------- */

/* Invariants: string 0 is ""; every string is NUL-terminated in bytes at
 * off[id]; equal strings have one id (when interned). */
struct pmodel_strtab {
	struct ember_buf bytes;
	EMBER_VEC(uint32_t) off;
	struct ember_hset set;
};

int pmodel_strtab_init(struct pmodel_strtab *t);
void pmodel_strtab_release(struct pmodel_strtab *t);
/* Id of s[0..len) (no NUL inside), adding it.  0, -ENOMEM, -E2BIG. */
int pmodel_strtab_intern(struct pmodel_strtab *t, const char *s, size_t len, uint32_t *id);
static inline int pmodel_strtab_intern0(struct pmodel_strtab *t, const char *s, uint32_t *id)
{
	return pmodel_strtab_intern(t, s ? s : "", s ? strlen(s) : 0, id);
}
/* Id of s[0..len) in an interned table, or UINT32_MAX. */
uint32_t pmodel_strtab_find(const struct pmodel_strtab *t, const char *s, size_t len);
/* Add without deduplication (decoders: the table is not interned into
 * until pmodel_strtab_index() builds the set). */
int pmodel_strtab_add(struct pmodel_strtab *t, const char *s, size_t len, uint32_t *id);
static inline const char *pmodel_str(const struct pmodel_strtab *t, uint32_t id)
{
	return t->bytes.data + t->off.v[id];
}
static inline size_t pmodel_strtab_count(const struct pmodel_strtab *t)
{
	return t->off.n;
}

/* ---- the dictionary (dict.c, dict_import.c) ------------------------------ */

struct pmodel_func {
	uint32_t name, system_name, filename;
	int64_t start_line;
};

struct pmodel_map {
	uint64_t start, limit, offset;
	uint32_t filename, build_id;
};

struct pmodel_loc {
	uint64_t address;
	uint32_t mapping; /* 0: none, else index + 1 */
	uint32_t line_off, nlines;
	uint32_t type;	  /* frame type (profile.frame.type): a string, 0 none */
};

struct pmodel_line {
	uint32_t func;
	int64_t line;
};

/*
 * struct pmodel_dict - what a block (or a head, or a result) stores once.
 * Invariants: node 0 is the root (the empty stack); every other node's
 * parent is smaller than the node; node_loc[n] names a location; every
 * reference lies inside its table.  A stack is a node: its frames are the
 * locations on the path to the root, the node's own first (leaf).
 */
struct pmodel_dict {
	struct pmodel_strtab str;
	EMBER_VEC(struct pmodel_func) funcs;
	EMBER_VEC(struct pmodel_map) maps;
	EMBER_VEC(struct pmodel_loc) locs;
	EMBER_VEC(struct pmodel_line) lines;
	EMBER_VEC(uint32_t) node_parent;
	EMBER_VEC(uint32_t) node_loc;
	/* Interning sets, built on the first intern call. */
	struct ember_hset func_set, map_set, loc_set, node_set;
	bool indexed;
};

int pmodel_dict_init(struct pmodel_dict *d);
void pmodel_dict_release(struct pmodel_dict *d);
/* Build the interning sets over what a decoder filled in. */
int pmodel_dict_index(struct pmodel_dict *d);
int pmodel_dict_func(struct pmodel_dict *d, const struct pmodel_func *f, uint32_t *id);
int pmodel_dict_map(struct pmodel_dict *d, const struct pmodel_map *m, uint32_t *id);
/* Location of mapping (0 or index + 1), address, frame type (a string
 * id, 0 none) and lines[0..n): all five are its identity. */
int pmodel_dict_loc(struct pmodel_dict *d, uint32_t mapping, uint64_t address, uint32_t type,
		    const struct pmodel_line *lines, uint32_t n, uint32_t *id);
int pmodel_dict_node(struct pmodel_dict *d, uint32_t parent, uint32_t loc, uint32_t *id);
size_t pmodel_dict_bytes(const struct pmodel_dict *d);
static inline size_t pmodel_dict_nodes(const struct pmodel_dict *d)
{
	return d->node_parent.n;
}

/* Maps from one dictionary's ids to another's, filled lazily
 * (UINT32_MAX: not yet).  dict_import.c. */
struct pmodel_import {
	const struct pmodel_dict *src;
	struct pmodel_dict *dst;
	uint32_t *str, *func, *map, *loc, *node;
};

int pmodel_import_init(struct pmodel_import *im, const struct pmodel_dict *src,
		       struct pmodel_dict *dst);
void pmodel_import_release(struct pmodel_import *im);
int pmodel_import_node(struct pmodel_import *im, uint32_t node, uint32_t *out);
int pmodel_import_loc(struct pmodel_import *im, uint32_t loc, uint32_t *out);
int pmodel_import_str(struct pmodel_import *im, uint32_t s, uint32_t *out);

/* A part of a node's self value that samples with attributes gave (the
 * profile store keeps OTLP's sample attributes: thread name and ID, CPU,
 * ...): attrs is the set as the store keeps it, "key=value" pairs sorted
 * by key and joined by '\n' (profile-store/pstore_series.h). */
struct pmodel_attr_part {
	uint32_t node;
	const char *attrs;
	int64_t value;
};
struct pmodel_attr_row {
	uint32_t node, attrs; /* attrs: an id of the result's attr_str */
	int64_t value;
};

struct pmodel_result {
	struct pmodel_dict dict;
	EMBER_VEC(int64_t) self; /* per node */
	/* The parts of self[] that samples with attributes gave, one per
	 * (node, attribute set): empty when none did.  Only the pprof output
	 * writes them (as sample labels); the others read self[] alone. */
	EMBER_VEC(struct pmodel_attr_row) attr_rows;
	struct pmodel_strtab attr_str;
	struct ember_hset attr_set;
	bool attrs_ready;
	char *type;
	char *sample_type, *sample_unit, *period_type, *period_unit;
	int64_t period;
	uint64_t profiles;
	int64_t min_time, max_time;
	/* Nonzero: part of the range was answered from the store's rollups
	 * alone (its profiles past the retention), its edges rounded in to
	 * this step (ns). */
	int64_t rollup_only_step;
};

int pmodel_result_new(const char *type_id, struct pmodel_result **out);
/* Add self[] (per node of src) into r. */
int pmodel_result_add(struct pmodel_result *r, const struct pmodel_dict *src, const int64_t *self);
/* The same for src's nodes [first, end) alone, through im (from src to
 * r's dictionary, kept across calls): calls over consecutive ranges add
 * what one pmodel_result_add does, and a caller can stop between them. */
int pmodel_result_add_nodes(struct pmodel_result *r, struct pmodel_import *im,
			    const int64_t *self, size_t first, size_t end);
int64_t pmodel_result_total(const struct pmodel_result *r);

/*
 * Stack keys (stack_keys.c): a 128-bit key per node of a dictionary from
 * its stack's content under a seed (two 64-bit lanes, each seeded with
 * one word of it): equal stacks of any dictionaries keyed under one seed
 * have equal keys, unequal ones collide with probability about 2^-128.
 * *out (one a node) is the caller's to free.  A query summing many
 * blocks keeps the stacks its result holds by key (struct
 * pmodel_stack_index, empty when zeroed), so a stack it holds already is
 * added with one probe rather than imported again.
 */
struct pmodel_stack_key {
	uint64_t a, b;
};
struct pmodel_stack_entry {
	struct pmodel_stack_key key;
	uint32_t node; /* the result's */
};
struct pmodel_stack_index {
	struct ember_hset set;
	EMBER_VEC(struct pmodel_stack_entry) v;
	bool ready;
};
int pmodel_dict_stack_keys(const struct pmodel_dict *d, const struct ember_hash_key *seed,
			   struct pmodel_stack_key **out);
void pmodel_stack_index_release(struct pmodel_stack_index *ix);
size_t pmodel_stack_index_bytes(const struct pmodel_stack_index *ix);
/* pmodel_result_add_nodes for the nodes of src whose keys (keys[n]) are
 * those of ix's dictionary's seed: a stack ix holds is added to its node,
 * another imported through im (initialised from src at the first: a
 * zeroed im; the caller releases it) and noted in ix.  ix names r's nodes
 * and nothing else adds to r between two calls but through ix or an
 * import (a stack ix lacks is found by the import). */
int pmodel_result_add_keyed(struct pmodel_result *r, struct pmodel_stack_index *ix,
			    struct pmodel_import *im, const struct pmodel_dict *src,
			    const struct pmodel_stack_key *keys, const int64_t *self,
			    size_t first, size_t end);
/* self_r[m] += self_b[n] for every node n of dictionary b whose value
 * is not 0, m the node of dictionary r with n's key (both keyed under
 * one seed; only r's nodes with a value are looked in): what a sum of
 * some of r's sources' rows, taken off r's sums, leaves (the store's
 * bucket less profiles).  *all false when a stack of b has no node with
 * a value in r: nothing is added then. */
int pmodel_self_take_off(const struct pmodel_stack_key *keys_r, int64_t *self_r, size_t nr,
			 const struct pmodel_stack_key *keys_b, const int64_t *self_b, size_t nb,
			 bool *all);
/* Note parts[0..n) (nodes of src, already in self[] through
 * pmodel_result_add) as attributed parts of r's self values. */
int pmodel_result_add_attrs(struct pmodel_result *r, const struct pmodel_dict *src,
			    const struct pmodel_attr_part *parts, size_t n);
/* Add src (a result of the same type, summed apart) into r: every node
 * of src's dictionary imported in its order, then its values, attributed
 * parts, profiles, times and period (r's when set), so that results of
 * consecutive sources summed apart and merged in their order equal the
 * sum of those sources into one result (the store's parallel query). */
int pmodel_result_merge(struct pmodel_result *r, const struct pmodel_result *src);
/* *r replaced by a copy of its stacks whose values are not 0, in its
 * order, with its attributed parts, profiles and times: what a sum that
 * took some sources' values off again (the store's bucket less profiles)
 * leaves is what the sum of the rest alone would hold. */
int pmodel_result_drop_zeros(struct pmodel_result **r);
/* The bytes r holds (its dictionary, values and attributed parts). */
size_t pmodel_result_bytes(const struct pmodel_result *r);

/* ---- profile types (types.c) --------------------------------------------- */

/* types.c: the profile's name when no __name__ is given ("process_cpu",
 * "memory", ...), from its period type and sample types. */
const char *pmodel_profile_name(const struct pprof_profile *p);
/* A query's type: a full ID (5 fields) as it is, or an alias resolved
 * against the distinct type IDs held (ids[0..n)) by a fixed rule: the
 * first built-in type (the Go types, "cpu" first) the alias matches that
 * is held, else the held type it matches first in byte order, else the
 * first built-in type it matches (an empty answer); never ambiguous.
 * -PMODEL_ERR_TYPE when it matches nothing.  *out: a copy, caller frees. */
int pmodel_type_resolve(const char *text, char *const *ids, size_t n, char **out,
		    struct ember_diag *d);
/* Whether a type ID's sample type/unit has unit "count". */
bool pmodel_type_is_count(const char *sample_unit);


/* ---- a decoded pprof's locations and stacks (from_pprof.c) --------------- */

/*
 * Locations of one decoded pprof (wire/pprof.h) interned into a
 * dictionary on demand: each of the profile's strings hashed once, each
 * location interned at its first use.  The store's ingest and
 * pmodel_result_from_pprof walk samples through it.
 */
struct pmodel_pprof_walk {
	struct pmodel_dict *dict;
	const struct pprof_profile *p;
	const pprof_message_t *m;
	bool dense;			/* location ids are 1..n, in table order */
	struct pmodel_pprof_walk_slot *slots; /* else: (id, index) sorted by id */
	uint32_t *loc;			/* pprof location index -> dict location,
					 * PMODEL_UNSET until interned */
	uint32_t *str;			/* pprof string index -> dict string */
};

#define PMODEL_UNSET UINT32_MAX

/* Begin a walk of p into dict (both borrowed for its length).  0 or
 * -ENOMEM; release either way. */
int pmodel_pprof_walk_init(struct pmodel_pprof_walk *w, struct pmodel_dict *dict,
		      const struct pprof_profile *p);
void pmodel_pprof_walk_release(struct pmodel_pprof_walk *w);
uint32_t pmodel_pprof_walk_index_sparse(const struct pmodel_pprof_walk *w, uint64_t id);
/* The index in p's location table of location id (the decoder checked
 * that every sample's ids exist). */
static inline uint32_t pmodel_pprof_walk_index(const struct pmodel_pprof_walk *w, uint64_t id)
{
	return w->dense ? (uint32_t)(id - 1) : pmodel_pprof_walk_index_sparse(w, id);
}
/* Intern location li of p (its mapping, functions and lines) into
 * w->loc[li]. */
int pmodel_pprof_walk_intern(struct pmodel_pprof_walk *w, uint32_t li);
/* The stack node of sample s (its locations leaf first, as pprof lists
 * them): every location interned, the path added from the root. */
int pmodel_pprof_walk_stack(struct pmodel_pprof_walk *w, const Perftools__Profiles__Sample *s,
		       uint32_t *node);

#endif /* EMBER_PMODEL_H */
