/*
 * pstore_series.h - the engine's series: what heads and blocks both hold.
 *
 *   labels.c     label validation, sorting, the series key
 *   seriestab.c  series (labels x sample types) and profile types
 *   lindex.c     the label index (name -> values -> series)
 *   series_keys.c  the series the store holds (the series limit)
 *   unbounded.c  labels that look unbounded
 *   links.c      samples' links to spans: tables, the query's filter
 *
 * and the record of one profile of a series (struct pstore_prof), the same
 * in a head and in a block's data.
 *
 * Invariants: a series table's keys are unique; a series' labels are
 * sorted by name with unique names; a label index's names, each name's
 * values and each value's postings are sorted.
 */
#ifndef EMBER_PSTORE_SERIES_H
#define EMBER_PSTORE_SERIES_H

#include "pstore_internal.h"

/* ---- labels and series (labels.c, seriestab.c) -------------------------- */

/* A label of a series: string ids of its table. */
struct pstore_lpair {
	uint32_t name, value;
};

/* A profile type: string ids of its five fields and of its full ID
 * "name:sample_type:sample_unit:period_type:period_unit". */
struct pstore_type {
	uint32_t f[5];
	uint32_t id;
};

struct pstore_series {
	uint32_t label_off, nlabels; /* pairs[label_off..), sorted by name */
	uint32_t type_off, ntypes;   /* type_ids[type_off..): one per column */
	uint64_t key;		     /* pstore_series_key of the labels and types */
};

/*
 * struct pstore_seriestab - series, their labels and types, with the strings
 * they use (label names and values, type strings, coverage reasons and
 * build IDs).  Series keys are unique in a table.
 */
struct pstore_seriestab {
	struct pmodel_strtab str;
	struct ember_hash_key ident;	/* keys series (pstore_series_key) */
	EMBER_VEC(struct pstore_type) types;
	EMBER_VEC(struct pstore_series) series;
	EMBER_VEC(struct pstore_lpair) pairs;
	EMBER_VEC(uint32_t) type_ids;
	struct ember_hset type_set, series_set;
};

/* ident: the key of the series keys (the store's, so that blocks and
 * heads agree; copied). */
int pstore_seriestab_init(struct pstore_seriestab *t, const struct ember_hash_key *ident);
void pstore_seriestab_release(struct pstore_seriestab *t);
/* Id of a type (strings interned). */
int pstore_seriestab_type(struct pstore_seriestab *t, const char *const f[5], uint32_t *id);
static inline const char *pstore_type_str(const struct pstore_seriestab *t, uint32_t type)
{
	return pmodel_str(&t->str, t->types.v[type].id);
}
/* Id of the series with labels (sorted by name, names unique) and types;
 * *added says whether it is new. */
int pstore_seriestab_series(struct pstore_seriestab *t, const struct pstore_label *labels,
			size_t n, const uint32_t *types, size_t ntypes, uint32_t *id,
			bool *added);
/* Series s of src added to dst (strings copied); *id its id in dst. */
int pstore_seriestab_copy(struct pstore_seriestab *dst, const struct pstore_seriestab *src,
			  uint32_t s, uint32_t *id);
/* Series id of these labels (sorted by name) and types, or UINT32_MAX. */
uint32_t pstore_seriestab_find(const struct pstore_seriestab *t, const struct pstore_label *labels,
			       size_t n, const uint32_t *types, size_t ntypes);
/* Build the sets after a decoder filled the table in. */
int pstore_seriestab_index(struct pstore_seriestab *t);
/* Value of label name in series sid, or NULL. */
const char *pstore_series_label(const struct pstore_seriestab *t, uint32_t sid, const char *name);

/* Keyed hash (SipHash under ident) of sorted labels and type ID strings:
 * the series identity the store counts series by.  Interning compares the
 * labels and types themselves; two series colliding here (by chance: the
 * key is random, 2^-64 a pair) would only count as one towards the
 * series limit. */
uint64_t pstore_series_key(const struct ember_hash_key *ident, const struct pstore_label *labels,
			   size_t n, const char *const *type_ids, size_t ntypes);
/* Sort labels by name (stable) and check names/values/duplicates under
 * lim: 0, -PSTORE_ERR_LABEL or -PSTORE_ERR_LIMIT with d set. */
int pstore_labels_check(struct pstore_label *labels, size_t n, const struct pstore_limits *lim,
		    struct ember_diag *d);
bool pstore_label_name_valid(const char *name);
void pstore_labels_sort(struct pstore_label *labels, size_t n);

/* ---- label index (lindex.c) ---------------------------------------------- */

struct pstore_lname {
	uint32_t name;		/* string id in the series table */
	uint32_t val_off, nvals;
};

struct pstore_lval {
	uint32_t value;
	uint32_t post_off, npost; /* postings: series ids, ascending */
};

/* Names sorted, each name's values sorted (by string), postings sorted. */
struct pstore_lindex {
	EMBER_VEC(struct pstore_lname) names;
	EMBER_VEC(struct pstore_lval) vals;
	EMBER_VEC(uint32_t) post;
};

int pstore_lindex_build(struct pstore_lindex *ix, const struct pstore_seriestab *t);
void pstore_lindex_release(struct pstore_lindex *ix);
/* Index of name in ix->names, or UINT32_MAX. */
uint32_t pstore_lindex_find(const struct pstore_lindex *ix, const struct pstore_seriestab *t,
			const char *name);

/* Series key counting (series_keys.c): the series limit. */
struct pstore_keycount;
int pstore_keys_add(struct pstore_keycount **kc, uint64_t key);
void pstore_keys_remove(struct pstore_keycount *kc, uint64_t key);
/* Count each of keys (unique) once more, all or none: 0, -ENOMEM, or
 * -PSTORE_ERR_SERIES_LIMIT when the keys not counted yet (*fresh of them,
 * set either way) would take the count past max. */
int pstore_keys_add_all(struct pstore_keycount **kc, const uint64_t *keys, size_t n, size_t max,
			size_t *fresh);
void pstore_keys_remove_all(struct pstore_keycount *kc, const uint64_t *keys, size_t n);
bool pstore_keys_has(const struct pstore_keycount *kc, uint64_t key);
size_t pstore_keys_count(const struct pstore_keycount *kc);
void pstore_keys_free(struct pstore_keycount *kc);

/* ---- unbounded labels (unbounded.c) ------------------------------------- */

struct pstore_unbounded;
struct pstore_unbounded *pstore_unbounded_new(void);
void pstore_unbounded_free(struct pstore_unbounded *u);
/* One profile's series labels seen. */
void pstore_unbounded_observe(struct pstore_unbounded *u, const struct pstore_label *labels,
			  size_t n);
/* A value known from the blocks at open (not an observation). */
void pstore_unbounded_seed(struct pstore_unbounded *u, const char *name, const char *value);
int pstore_unbounded_list(struct pstore_unbounded *u, struct pstore_strlist *out);
size_t pstore_unbounded_count(struct pstore_unbounded *u);

/* ---- sample links (links.c) ----------------------------------------------- */

/* A sample's link, its context beside its stack: a trace and a span ID
 * (zero bytes where absent) and its attribute set (OTLP's sample
 * attributes: thread name and ID, CPU, ...), an id of its table's attrs
 * (0: none). */
struct pstore_link {
	uint8_t trace[16];
	uint8_t span[8];
	uint32_t attrs;
};

/*
 * An attribute set as stored: its (key, value) pairs sorted by key, keys
 * unique, each "key=value" and the pairs joined by '\n'; keys are label
 * names ([a-zA-Z_][a-zA-Z0-9_.]*), values have no byte below 0x20, so
 * the text is unambiguous.  At most PSTORE_MAX_ATTRS_LEN bytes.
 */
#define PSTORE_MAX_ATTRS_LEN 1024
/* A pprof sample label named '@' KEY is the sample's attribute KEY (what
 * OTLP's sample attributes become in wire/), never a series label. */
#define PSTORE_ATTR_PREFIX '@'
/* Distinct attribute sets a table (a head's, a block's) holds: past it a
 * link keeps its trace and span, its attributes are dropped. */
#define PSTORE_MAX_ATTR_SETS 65536
/* Distinct attribute sets one profile brings (the rest: dropped). */
#define PSTORE_MAX_PROFILE_ATTR_SETS 4096

/* Distinct links: id i + 1 names v[i], id 0 is "no link"; attrs: the
 * attribute sets they name (string 0, "", is none).  Both are made at
 * the first intern, so a table that never holds one costs nothing. */
struct pstore_linktab {
	EMBER_VEC(struct pstore_link) v;
	struct ember_hset set;
	struct pmodel_strtab attrs;
	bool ready;
};

/* The id of l in t, added when new: 0 or -ENOMEM/-E2BIG. */
int pstore_linktab_intern(struct pstore_linktab *t, const struct pstore_link *l, uint32_t *id);
/* The id in t of attribute set s[0..len) (the stored text), added when
 * new; 0 (none) when t holds max sets already. */
int pstore_linktab_attrs(struct pstore_linktab *t, const char *s, size_t len, size_t max,
			 uint32_t *id);
/* The id in dst of src's link sid (its attribute set interned into dst
 * as well, dropped past PSTORE_MAX_ATTR_SETS). */
int pstore_linktab_copy(struct pstore_linktab *dst, const struct pstore_linktab *src,
			uint32_t sid, uint32_t *id);
/* The attribute set of link id (NULL: none, or id 0). */
const char *pstore_linktab_attrs_of(const struct pstore_linktab *t, uint32_t id);
size_t pstore_linktab_bytes(const struct pstore_linktab *t);
/* Whether a link of t has an attribute set. */
static inline bool pstore_linktab_has_attrs(const struct pstore_linktab *t)
{
	return t->ready && pmodel_strtab_count(&t->attrs) > 1;
}
/* The parts of a query's sums that rows with attributes gave. */
EMBER_VEC_DEF(pstore_attr_parts, struct pmodel_attr_part);
/* Row (node, link id, value) noted in parts when its link has attributes. */
static inline int pstore_attr_part(struct pstore_attr_parts *parts, const struct pstore_linktab *t,
				   uint32_t node, uint32_t link, int64_t value)
{
	const char *a = pstore_linktab_attrs_of(t, link);

	if (!a || !value)
		return 0;
	return EMBER_VEC_APPEND(parts, ((struct pmodel_attr_part){ node, a, value }));
}
void pstore_linktab_release(struct pstore_linktab *t);
/* For a source's links v[0..n) (ids 1..n): with a filter (f on), *want
 * [0..n] (malloc'ed, caller frees) 1 for the ids whose span or trace f
 * names (want[0], no link, is 0), and *none when no link is wanted (the
 * source has nothing to read); without, *want NULL. */
int pstore_links_want(const struct pstore_link *v, size_t n, const struct pstore_link_filter *f,
		      uint8_t **want, bool *none);
/* Whether f names anything (NULL or both lists empty: no filter). */
static inline bool pstore_link_filter_on(const struct pstore_link_filter *f)
{
	return f && (f->n_span || f->n_trace);
}

/* ---- profiles and rows ----------------------------------------------------- */

/* Coverage of one profile: samples with a frame of build_id unresolved. */
struct pstore_cov {
	uint32_t build_id, reason; /* strings of the series table */
	uint64_t samples;
};

EMBER_VEC_DEF(pstore_covs, struct pstore_cov);

struct pstore_prof {
	int64_t time, duration, period;
	uint32_t series;
	uint32_t nrows;
	uint64_t row_off;  /* head: into the row arrays; block: into the series' streams */
	uint64_t val_off;  /* head: into row_vals */
	uint32_t tot_off;  /* totals[tot_off..+ncols) */
	uint32_t cov_off, ncov;
	uint64_t samples, resolved;
	uint64_t link_off; /* head: into row_link, PS_NO_LINKS when no row has a
			    * link; unused in a block (its link stream says) */
};

#define PS_NO_LINKS UINT64_MAX

/* Note a matched profile in the result's counts. */
static inline void pstore_result_note(struct pmodel_result *r, const struct pstore_prof *p)
{
	r->profiles++;
	if (!r->period)
		r->period = p->period;
	if (p->time < r->min_time)
		r->min_time = p->time;
	if (p->time > r->max_time)
		r->max_time = p->time;
}

#endif /* EMBER_PSTORE_SERIES_H */
