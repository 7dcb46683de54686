/*
 * pstore_internal.h - what only profile-store/ sees.  Its functions carry
 * the component's prefix too (pstore_), so the library exports no other;
 * its macros are PS_.  The dictionary, the string table, the result's
 * layout and the profile types it fills and reads are the model's
 * (profile-model/pmodel.h, the data model half); the block-storage
 * interface is blockio/pstore_blockio.h.
 *
 * One concept a file:
 *   errors.c        pstore_strerror (reasons: common.h's EMBER_FAIL)
 *   block_name.c    blocks named by sha256; puts read back and compared
 *   labels.c        label validation, sorting, the series key
 *   seriestab.c     series (labels x sample types) and profile types
 *   lindex.c        the label index (name -> values -> series)
 *   limits.c        ingest limits and their defaults
 *   rows.c          one profile's rows, sorted and summed per stack
 *   ingest.c        a decoded pprof -> dictionary entries, rows, coverage
 *   head.c          the in-memory head: what the log segment holds
 *   keys.c          the series the store holds (the series limit)
 *   unbounded.c     labels that look unbounded
 *   append.c        pstore_append
 *   wal_record.c    one append as a log record
 *   wal_segment.c   the log segment writer (group commit)
 *   wal_replay.c    reading a segment back, dropping a torn tail
 *   recover.c       the log replayed at open
 *   block_encode.c  a partition's profiles -> block bytes
 *   block_rows.c    the row streams of a series: encode, decode, sum
 *   block_decode.c  block bytes -> header, meta, series, dictionary
 *   blockio_dir.c   the local-directory block storage
 *   catalog.c       blocks opened, read by range, listed, superseded
 *   cache.c         decoded block data under a byte budget
 *   compact.c       rotation, heads -> blocks, retention
 *   merge.c         a partition's blocks -> one (resolver applied)
 *   reresolve.c     blocks rewritten once their frames' symbols arrive
 *   coverage.c      coverage recounted after a compaction's resolver
 *   background.c    the compaction thread
 *   store.c         open, free, snapshots, stats, warnings
 *   selector.c      the selector parser; matching a label set
 *   match.c         a selector over a label index -> series bitmap
 *   query.c         pstore_query over heads and blocks
 *   block_query.c   one block's share of a query
 *   scan.c          selections without rows: discovery, totals, coverage
 *   discovery.c, series_totals.c, coverage_query.c  those three calls
 *   resolve.c       resolver callbacks applied to a dictionary
 */
#ifndef EMBER_PSTORE_INTERNAL_H
#define EMBER_PSTORE_INTERNAL_H

#include "pstore.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors (errors.c) ----------------------------------------------------
 *
 * Reasons for the sender go through common.h's struct ember_diag and its
 * guards: EMBER_FAIL, EMBER_FAIL_IF, EMBER_FORWARD_IF_ERROR.
 */

/* ---- growable arrays: common.h's EMBER_VEC ------------------------------ */

EMBER_VEC_DEF(pstore_labels, struct pstore_label);
EMBER_VEC_DEF(pstore_u32s, uint32_t);
EMBER_VEC_DEF(pstore_strs, char *);
EMBER_VEC_DEF(pstore_u64s, uint64_t);

static inline int64_t pstore_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* ---- cursors ------------------------------------------------------------
 *
 * Blocks and log records are read and written with common.h's cursors and
 * LEB128 (ember_cur_*, ember_buf_put_*); these two only narrow their
 * results to the types the decoders keep.
 */

/* An unsigned LEB128 that must be <= max (which fits 32 bits). */
static inline int pstore_get_u32max(const uint8_t **pos, const uint8_t *end, uint32_t max,
				    uint32_t *out)
{
	uint64_t v;
	int err = ember_cur_uleb_max(pos, end, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* A length-prefixed string of at most max bytes (not NUL-terminated). */
static inline int pstore_get_str(const uint8_t **pos, const uint8_t *end, size_t max,
				 const char **s, size_t *len)
{
	const uint8_t *bytes;
	int err = ember_cur_lenbytes(pos, end, max, &bytes, len);

	if (!err)
		*s = (const char *)bytes;
	return err;
}

static inline void pstore_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void pstore_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t pstore_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t pstore_rd64(const uint8_t *p)
{
	return (uint64_t)pstore_rd32(p) | (uint64_t)pstore_rd32(p + 4) << 32;
}

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

/* ---- selectors (selector.c, match.c) -------------------------------------- */

enum pstore_match_op { PS_EQ, PS_NE, PS_RE, PS_NRE };

struct pstore_matcher {
	char *name, *value;
	enum pstore_match_op op;
	void *re; /* regex_t for PS_RE / PS_NRE */
};

struct pstore_selector {
	EMBER_VEC(struct pstore_matcher) m;
	char *type; /* "TYPE{...}": a profile type before the braces, or NULL */
};

bool pstore_matcher_value(const struct pstore_matcher *m, const char *value);
/* Series of t matching sel, as a bitmap of nseries bytes (0/1), with ix
 * t's label index.  0 or -ENOMEM. */
int pstore_select_series(const struct pstore_selector *sel, const struct pstore_seriestab *t,
		     const struct pstore_lindex *ix, uint8_t *bitmap);
/* Parse sel->selector (NULL: match all) into *out. */
int pstore_selection_parse(const struct pstore_selection *sel, struct pstore_selector **out,
		       struct ember_diag *d);

/* ---- limits (limits.c) ---------------------------------------------------- */

void pstore_limits_resolve(const struct pstore_limits *in, struct pstore_limits *out);

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
};

/* ---- ingest (ingest.c, coverage.c) ---------------------------------------- */

/* One profile as rows: nodes of a dictionary, ascending and unique after
 * pstore_rows_normalize, values row-major (ncols per row). */
struct pstore_rows {
	EMBER_VEC(uint32_t) node;
	EMBER_VEC(int64_t) val;
	uint32_t ncols;
};

void pstore_rows_release(struct pstore_rows *r);
/* Sort rows by node and sum equal nodes. */
int pstore_rows_normalize(struct pstore_rows *r);

/* Samples of a profile with frames of bid unresolved (bid: index into
 * struct pstore_ingest.bids). */
struct pstore_gcov {
	uint32_t bid;
	uint64_t samples;
};

/* The samples of one sample-label set. */
struct pstore_group {
	struct pstore_rows rows;
	struct pstore_labels labels;	    /* string sample labels (point into p) */
	uint64_t samples, resolved;	    /* coverage: samples, fully resolved */
	EMBER_VEC(struct pstore_gcov) cov;
	uint64_t hash;			    /* of the label set */
};

struct pstore_ingest {
	EMBER_VEC(struct pstore_group) groups;
	struct ember_hset group_set; /* of groups, by label set */
	EMBER_VEC(const char *) bids; /* build IDs of unresolved frames (point into p) */
	int count_col;		   /* the first "count" column, or -1 */
	uint32_t ncols;
};

/*
 * Intern p's samples into dict: one group per distinct set of string
 * sample labels (all in group 0 unless split_labels), rows summed per
 * stack.  lim NULL: no limits (offline).  -PSTORE_ERR_TOO_LARGE (samples),
 * -PSTORE_ERR_LIMIT (stack depth), -PSTORE_ERR_LABEL (a sample label
 * name), -ENOMEM, with d set.
 */
int pstore_ingest_profile(struct pmodel_dict *dict, const struct pprof_profile *p,
		      const struct pstore_limits *lim, bool split_labels,
		      struct pstore_ingest *out, struct ember_diag *d);
void pstore_ingest_release(struct pstore_ingest *in);

/* ---- the head (head.c) ---------------------------------------------------- */

enum pstore_prof_state { PS_PENDING = 0, PS_VISIBLE = 1, PS_DEAD = 2 };

/*
 * struct pstore_head - what one log segment holds, in memory and queryable.
 * Appends take lock for writing; queries for reading.  Once sealed it
 * never changes again.
 */
struct pstore_head {
	pthread_rwlock_t lock;
	atomic_int refs;
	uint64_t seq;		/* the segment's sequence number */
	uint8_t writer[16];	/* whose segment: the store's, or a dead writer's
				 * taken over (takeover.c) */
	int64_t created_ns;
	bool sealed;
	struct pmodel_dict dict;
	struct pstore_seriestab series;
	EMBER_VEC(struct pstore_prof) profs;
	EMBER_VEC(uint8_t) state;	/* enum pstore_prof_state per profile */
	EMBER_VEC(uint32_t) row_node;
	EMBER_VEC(int64_t) row_val;
	EMBER_VEC(int64_t) totals;
	EMBER_VEC(struct pstore_cov) cov;
	int64_t min_time, max_time;
	size_t visible;
};

/* ident: the store's series key (pstore_seriestab_init). */
struct pstore_head *pstore_head_new(uint64_t seq, int64_t now_ns, const struct ember_hash_key *ident);
struct pstore_head *pstore_head_ref(struct pstore_head *h);
void pstore_head_unref(struct pstore_head *h);
size_t pstore_head_bytes(const struct pstore_head *h);

/* What is the same for every group of one append. */
struct pstore_head_add {
	int64_t time, duration, period;
	const char *(*types)[5]; /* the five fields per column */
	size_t ncols;
	const struct pstore_unresolved *unresolved;
	size_t n_unresolved;
};

/* The store's series limit, asked before a new series is added. */
struct pstore_series_gate {
	int (*admit)(void *ctx, uint64_t key, struct ember_diag *d);
	void *ctx;
};

/*
 * Add the groups of in (interned into h->dict by the caller) as pending
 * profiles, group g with the full sorted labels labels[g]; *first and
 * *count name them for pstore_head_settle.  Under h's write lock.
 */
int pstore_head_add(struct pstore_head *h, const struct pstore_ingest *in,
		    const struct pstore_labels *labels, const struct pstore_head_add *a,
		    const struct pstore_series_gate *gate, size_t *first, size_t *count,
		    struct ember_diag *d);
/* Mark profiles [first, first + count) visible (ok) or dead.  Under h's
 * write lock. */
void pstore_head_settle(struct pstore_head *h, size_t first, size_t count, bool ok);

/* ---- blocks (block_encode.c, block_decode.c, block_rows.c) ------------- */

#define PS_BLOCK_MAGIC "EMBPSTB1"
#define PS_BLOCK_VERSION 1
#define PS_BLOCK_HEADER 64
#define PS_SECTION_ENTRY 40
#define PS_BLOCK_MAX_SECTIONS 64
#define PS_SECTION_MAX_RAW ((uint64_t)1 << 31) /* 2 GiB decoded per section */

enum pstore_section_kind {
	PS_SEC_META = 1,	/* parents, log coverage, counts */
	PS_SEC_SERIES_STRINGS,	/* strings of the series table */
	PS_SEC_SERIES,		/* types and series */
	PS_SEC_LABELS,		/* label index */
	PS_SEC_PROFILES,	/* profile rows: series, time, totals, coverage */
	PS_SEC_STRINGS,		/* the dictionary's strings */
	PS_SEC_FUNCTIONS,
	PS_SEC_MAPPINGS,
	PS_SEC_LOCATIONS,
	PS_SEC_NODES,
	PS_SEC_STREAMS,		/* the row streams' directory */
	PS_SEC_ROWS,		/* the row streams (zstd frames, raw section) */
	PS_SEC_KIND_MAX,
};

struct pstore_section {
	uint32_t kind, codec; /* codec 0: raw, 1: zstd */
	uint64_t off, stored, raw, hash;
};

/* Which log segments a block holds: [lo, hi] of writer. */
struct pstore_walrange {
	uint8_t writer[16];
	uint64_t lo, hi;
};

EMBER_VEC_DEF(pstore_walranges, struct pstore_walrange);

struct pstore_block_meta {
	int64_t min_time, max_time, partition, partition_ns;
	EMBER_VEC(char *) parents;	/* names of the blocks this one replaces */
	struct pstore_walranges wal;
	uint64_t profiles, rows, series;
	struct pstore_section sec[PS_SEC_KIND_MAX];
	bool has[PS_SEC_KIND_MAX];
};

void pstore_block_meta_release(struct pstore_block_meta *m);

/* A stream of a series' rows. */
enum pstore_stream_kind {
	PS_STREAM_STACKS = 0,	/* node deltas per profile */
	PS_STREAM_VALUES = 1,	/* zigzag(value / factor) */
	PS_STREAM_DERIVED = 2,	/* column ref times factor: no bytes */
};

struct pstore_stream {
	uint32_t kind, ref;
	int64_t factor;
	uint64_t off, stored, raw; /* inside the ROWS section */
};

EMBER_VEC_DEF(pstore_streams, struct pstore_stream);

/* What a query needs of a block beyond its header: loaded lazily, kept
 * in the cache, read-only once built. */
struct pstore_bdata {
	atomic_int refs;
	size_t bytes;
	struct pmodel_dict dict;
	EMBER_VEC(struct pstore_prof) profs;
	EMBER_VEC(int64_t) totals;
	EMBER_VEC(struct pstore_cov) cov;
	struct pstore_streams streams;
	EMBER_VEC(uint32_t) series_stream; /* first stream of each series */
	EMBER_VEC(uint32_t) series_prof;	/* first profile of each series (n + 1) */
};

struct pstore_bdata *pstore_bdata_ref(struct pstore_bdata *b);
void pstore_bdata_unref(struct pstore_bdata *b);

/* Input of the block encoder: one partition's profiles of a source
 * (head or merge staging), selected by prof index. */
struct pstore_block_src {
	const struct pmodel_dict *dict;
	const struct pstore_seriestab *series;
	const struct pstore_prof *profs;
	const uint32_t *sel; /* indexes into profs */
	size_t nsel;
	const uint32_t *row_node;
	const int64_t *row_val;
	const int64_t *totals;
	const struct pstore_cov *cov;
	int64_t partition, partition_ns;
	char *const *parents;
	size_t nparents;
	const struct pstore_walrange *wal;
	size_t nwal;
	int zstd_level;
};

/* Encode src into out (a whole block file) and its name into name
 * ("blocks/<partition hex>-<hash hex>.pblk"). */
#define PS_BLOCK_NAME_MAX 128 /* "blocks/" 16 hex "-" 64 hex ".pblk" */

/* block_name.c: "blocks/<partition>-<sha256 of data>.pblk" into name; and
 * a put that reads the object back whole: -PSTORE_ERR_CORRUPT when the
 * name holds other bytes (never taken as written), else the storage's
 * error, with d set. */
int pstore_block_name(int64_t partition, const void *data, size_t len,
		      char name[PS_BLOCK_NAME_MAX]);
int pstore_block_put(const struct pstore_blockio *io, const char *name, const void *data,
		     size_t len, struct ember_diag *d);
int pstore_block_encode(const struct pstore_block_src *src, struct ember_buf *out,
		    char name[PS_BLOCK_NAME_MAX]);

/* Parse and check the header and section table of a block whose first
 * bytes are data[0..len) (at least the header and table, or all of it);
 * size is the whole file's.  -PSTORE_ERR_CORRUPT with d set. */
int pstore_block_header(const uint8_t *data, size_t len, uint64_t size,
		    struct pstore_block_meta *m, struct ember_diag *d);
/* Bytes of header + table, once the first PS_BLOCK_HEADER are known. */
int pstore_block_header_len(const uint8_t *data, size_t len, size_t *need, struct ember_diag *d);
/* Decode the stored bytes of section kind (checked against its hash,
 * decompressed) into out. */
int pstore_block_section(const struct pstore_block_meta *m, enum pstore_section_kind kind,
		     const uint8_t *stored, size_t len, struct ember_buf *out,
		     struct ember_diag *d);
/* Decode the META, SERIES_STRINGS, SERIES, LABELS sections. */
int pstore_block_decode_meta(const uint8_t *data, size_t len, struct pstore_block_meta *m,
			 struct ember_diag *d);
int pstore_block_decode_series(const uint8_t *strs, size_t slen, const uint8_t *ser,
			   size_t len, struct pstore_seriestab *t, struct ember_diag *d);
int pstore_block_decode_labels(const uint8_t *data, size_t len, const struct pstore_seriestab *t,
			   struct pstore_lindex *ix, struct ember_diag *d);
/* The dictionary sections, PROFILES and STREAMS into b (checked against
 * the series table t). */
int pstore_block_decode_dict(const uint8_t *const sec[PS_SEC_KIND_MAX],
			 const size_t len[PS_SEC_KIND_MAX], struct pmodel_dict *dict,
			 struct ember_diag *d);
int pstore_block_decode_profiles(const uint8_t *data, size_t len, const struct pstore_seriestab *t,
			     const struct pstore_block_meta *m, struct pstore_bdata *b,
			     struct ember_diag *d);
int pstore_block_decode_streams(const uint8_t *data, size_t len, const struct pstore_seriestab *t,
			    const struct pstore_block_meta *m, struct pstore_bdata *b,
			    struct ember_diag *d);

/* Row streams of one series (block_rows.c): its profiles' rows, in
 * profile order, as one stream of node deltas and one stream per column,
 * each a zstd frame appended to rows. */
struct pstore_rows_in {
	const struct pstore_prof *const *profs; /* of one series, in time order */
	size_t nprofs;
	const uint32_t *row_node;	    /* indexed by prof->row_off */
	const int64_t *row_val;		    /* by prof->val_off, ncols a row */
	const uint32_t *node_map;	    /* source node -> block node */
	uint32_t ncols;
	void *cctx;			    /* ZSTD_CCtx, level set */
};
int pstore_rows_encode(const struct pstore_rows_in *in, struct ember_buf *rows,
		   struct pstore_streams *streams);
/* Decompress stream st's stored bytes (stored[0..len)) into out. */
int pstore_stream_load(const struct pstore_stream *st, const uint8_t *stored, size_t len,
		   struct ember_buf *out, struct ember_diag *d);

/* Sum one column of the profiles [p_first, p_end) of a series whose time
 * lies in [from, to) into self[] (nnodes), from the decompressed stacks
 * and values streams; values are multiplied by factor.  Matching
 * profiles are noted in r.  -PSTORE_ERR_CORRUPT when a stream runs out
 * or names a node past nnodes. */
struct pstore_sum_in {
	const struct pstore_prof *profs;
	size_t p_first, p_end;
	int64_t from, to;
	const uint8_t *stacks, *stacks_end;
	const uint8_t *vals, *vals_end;
	int64_t factor;
	uint32_t nnodes;
	struct pmodel_result *r;
};
int pstore_rows_sum(const struct pstore_sum_in *in, int64_t *self, struct ember_diag *d);
/* Every row of a series (compaction): nodes[nrows] from a stacks stream;
 * one column into vals[i * stride] from a values stream. */
int pstore_rows_decode_stacks(const uint8_t *p, const uint8_t *end, const struct pstore_prof *profs,
			  size_t p_first, size_t p_end, uint32_t nnodes, uint32_t *nodes,
			  struct ember_diag *d);
int pstore_rows_decode_values(const uint8_t *p, const uint8_t *end, uint64_t nrows,
			  int64_t factor, int64_t *vals, size_t stride, struct ember_diag *d);

/* ---- catalog (catalog.c, cache.c) -------------------------------------- */

struct pstore_block {
	atomic_int refs;
	char *name;
	uint64_t size;
	struct pstore_block_meta meta;
	struct pstore_seriestab series;
	struct pstore_lindex lindex;
	bool corrupt;
	char why[256];		  /* when corrupt */
	bool doomed;		  /* delete the object at the last unref */
	const struct pstore_blockio *io;
	pthread_mutex_t mu;	  /* data */
	struct pstore_bdata *data;	  /* cached (cache.c owns the reference) */
	uint64_t last_use;
};

struct pstore_block *pstore_block_ref(struct pstore_block *b);
void pstore_block_unref(struct pstore_block *b);
/* Read a block's header and meta/series/labels through io. */
int pstore_block_open(const struct pstore_blockio *io, const char *name, uint64_t size,
		      const struct ember_hash_key *ident, struct pstore_block **out,
		      struct ember_diag *d);

/* A block the block index names and the storage lacks (a shared store):
 * listed as corrupt, so the queries that need it fail with the reason. */
int pstore_block_missing(const struct pstore_blockio *io, const char *name, uint64_t size,
			 const struct ember_hash_key *ident, struct pstore_block **out);

struct pstore_cache {
	pthread_mutex_t mu;
	size_t budget, used;
	EMBER_VEC(struct pstore_block *) lru; /* referenced blocks with data */
	uint64_t tick;
};

/* The block's data, loading it if needed: a reference to unref. */
int pstore_cache_data(struct pstore_cache *c, struct pstore_block *b, struct pstore_bdata **out,
		  struct ember_diag *d);
/* A stream's bytes of block b (range read). */
int pstore_block_load(struct pstore_block *b, struct pstore_bdata **out, struct ember_diag *d);
int pstore_block_read_stream(struct pstore_block *b, const struct pstore_stream *st,
			 struct ember_buf *out, struct ember_diag *d);
void pstore_cache_drop(struct pstore_cache *c, struct pstore_block *b);
void pstore_cache_release(struct pstore_cache *c);

/* ---- the store (store.c) -------------------------------------------------- */

struct pstore_wal;

struct pstore_arrival {
	char *build_id;
	int64_t until_ns;
};

struct pstore {
	char *dir;
	int lock_fd;
	uint8_t writer[16];
	struct ember_hash_key ident;	  /* series keys (random at each open) */
	struct pstore_opts opts;
	struct pstore_limits lim;
	struct pstore_blockio io;

	pthread_rwlock_t rot;		  /* appends shared, rotation exclusive */
	pthread_mutex_t mu;		  /* blocks, heads, series counts */
	EMBER_VEC(struct pstore_block *) blocks; /* live, sorted by partition then name */
	struct pstore_head *head;		  /* the active head */
	EMBER_VEC(struct pstore_head *) sealed;  /* heads waiting to be compacted */
	struct pstore_wal *wal;		  /* the active head's segment */
	int wal_fd;			  /* DIR/wal */
	uint64_t next_seq;
	/* series keys of blocks and heads, with a count of holders */
	struct pstore_keycount *keys;
	/* build IDs whose symbols arrived (pstore_symbols_arrived), until */
	EMBER_VEC(struct pstore_arrival) arrived;

	pthread_mutex_t compact_mu;	  /* one compaction at a time */
	struct pstore_cache cache;
	struct pstore_unbounded *unbounded;

	pthread_t bg;
	bool has_bg;
	pthread_mutex_t bg_mu;
	pthread_cond_t bg_cv;
	bool bg_stop, bg_kick;

	atomic_uint_fast64_t appends, rejected, flushes, merges, retention_drops,
		compaction_errors, wal_torn_bytes;
	/* opts.shared: the block index (index.c); NULL otherwise */
	struct pstore_index *index;
	/* opts.shared with io.renew and io.mtime: this writer's lease
	 * (takeover.c).  lease_sent: CLOCK_MONOTONIC ns when the last renewal
	 * that succeeded was sent; fenced: another store claimed this
	 * writer's log, so appends fail. */
	bool leases;
	atomic_llong lease_sent;
	atomic_bool fenced;
};

/* ---- the writer's lease and the takeover of a dead writer's log (takeover.c) -- */

/* Renew this writer's lease when a head age has passed since the last
 * renewal (force: now), check its log is not claimed, and take over the
 * logs of writers whose lease expired.  0 when the store has no leases. */
int pstore_lease_tend(struct pstore *s, bool force, struct ember_diag *d);
/* Before an append is acknowledged: 0 when no other store can have
 * claimed this writer's log yet (the last renewal is recent enough by
 * this machine's monotonic clock), else after checking the claim is not
 * there; -PSTORE_ERR_CLOSED when it is (the store is fenced). */
int pstore_lease_check(struct pstore *s, struct ember_diag *d);

/* ---- a shared store's block index (index.c, index_entry.c) ------------------- */

#define PS_INDEX_KEY_MAX 40
void pstore_index_key(int64_t part, uint64_t seq, char name[PS_INDEX_KEY_MAX]);
int pstore_index_new(struct pstore *s);
void pstore_index_free(struct pstore_index *ix);
/* Read the entries not read yet and make the store's list the live set;
 * flushed (may be NULL) is taken out of the sealed heads in the same
 * critical section as its blocks come in.  Lock order: compact_mu, then
 * the index's, then s->mu. */
int pstore_index_refresh(struct pstore *s, struct pstore_head *flushed, struct ember_diag *d);
/* The same when the last refresh is older than opts.refresh_ns; 0 when
 * the store is not shared. */
int pstore_index_maybe_refresh(struct pstore *s, struct ember_diag *d);
/* Append an entry to partition part's index (create-only, next SEQ). */
int pstore_index_append(struct pstore *s, int64_t part, const struct pstore_index_entry *e,
			struct ember_diag *d);
/* The entry "b added (may be NULL), sup[0..n) superseded" in the
 * partition of b (else of sup[0]). */
int pstore_index_add(struct pstore *s, const struct pstore_block *b,
		     struct pstore_block *const *sup, size_t n_sup, struct ember_diag *d);
/* Delete the blocks this store superseded that are due and dead in the
 * index (a compaction pass). */
int pstore_index_collect(struct pstore *s);
/* Take a flushed head out of the sealed heads, its series uncounted
 * (under s->mu; compact.c). */
void pstore_head_unpublish(struct pstore *s, struct pstore_head *h);

int64_t pstore_now(const struct pstore *s);
/* The partition start of time t. */
int64_t pstore_partition_of(const struct pstore *s, int64_t t);
/* Start the active head and its segment (next_seq). */
int pstore_open_segment(struct pstore *s);
/* A block's time span (a corrupt one: its whole partition). */
void pstore_block_span(const struct pstore *s, const struct pstore_block *b, int64_t *lo,
		       int64_t *hi);
/* Read the blocks at open (catalog.c); replay the log (recover.c). */
int pstore_catalog_load(struct pstore *s, struct ember_diag *d);
int pstore_recover(struct pstore *s, struct ember_diag *d);
/* Add a block to the store's list (under s->mu): its series counted. */
int pstore_catalog_add(struct pstore *s, struct pstore_block *b);
/* Note a block's label values for the unbounded-label check (a block
 * read at open). */
void pstore_catalog_seed(struct pstore *s, const struct pstore_block *b);
/* Take a block out of the list (under s->mu), deleted at its last unref. */
void pstore_catalog_remove(struct pstore *s, size_t i);

/* Series key counting (store.c): the series limit. */
struct pstore_keycount;
int pstore_keys_add(struct pstore_keycount **kc, uint64_t key);
void pstore_keys_remove(struct pstore_keycount *kc, uint64_t key);
bool pstore_keys_has(const struct pstore_keycount *kc, uint64_t key);
size_t pstore_keys_count(const struct pstore_keycount *kc);
void pstore_keys_free(struct pstore_keycount *kc);

/* A consistent view for queries: references to blocks and heads. */
struct pstore_snapshot {
	EMBER_VEC(struct pstore_block *) blocks;
	EMBER_VEC(struct pstore_head *) heads;
};

int pstore_snapshot_take(struct pstore *s, int64_t from, int64_t to, struct pstore_snapshot *out);
void pstore_snapshot_release(struct pstore_snapshot *snap);

/* ---- the log (wal_*.c) ------------------------------------------------------ */

#define PS_WAL_MAGIC "EMBPSWL1"
#define PS_WAL_HEADER 32
#define PS_WAL_RECORD_HEADER 16
#define PS_WAL_RECORD_MAX ((size_t)256 << 20)

/* An append's record (wal_record.c). */
struct pstore_record {
	int64_t time, duration;
	EMBER_VEC(struct pstore_label) labels;
	EMBER_VEC(struct pstore_unresolved) unresolved;
	const uint8_t *pprof;
	size_t pprof_len;
	size_t input_bytes;
};

/* body NULL: p encoded raw. */
int pstore_record_encode(const struct pstore_append_opts *o, int64_t time, int64_t duration,
		     const void *body, size_t body_len, const struct pprof_profile *p,
		     struct ember_buf *out);
/* Decode a record payload (borrowed: strings point into data, which is
 * NUL-terminated per string by the encoder). */
int pstore_record_decode(const uint8_t *data, size_t len, struct pstore_record *r,
		     struct ember_diag *d);
void pstore_record_release(struct pstore_record *r);

/* Segment writer (wal_segment.c); its file is made at the first append. */
int pstore_wal_open(int dir_fd, uint64_t seq, const uint8_t writer[16], bool no_fsync,
		struct pstore_wal **out);
/* Append one record and wait until it is durable; *recno (may be NULL)
 * gets its number in the segment (0, 1, ...).  -EIO etc.: the record is
 * not acknowledged; later appends fail with -PSTORE_ERR_CLOSED until the
 * next segment. */
int pstore_wal_append(struct pstore_wal *w, const void *payload, size_t len, uint64_t *recno);
uint64_t pstore_wal_bytes(const struct pstore_wal *w);
uint64_t pstore_wal_seq(const struct pstore_wal *w);
void pstore_wal_close(struct pstore_wal *w);
void pstore_wal_name(uint64_t seq, char out[32]);

/* The per-push log in a shared block storage (wal_bucket.c,
 * docs/object-storage-layout.md "The per-push log"): each record of
 * this writer's segment SEG also as the create-only object
 * log/WRITER/SEG-REC (WRITER 32 hex digits, SEG 16 hex digits, REC 10
 * decimal digits), written before the append is acknowledged. */
#define PS_LOGOBJ_NAME_MAX 80
void pstore_logobj_name(const uint8_t writer[16], uint64_t seg, uint64_t rec,
			char out[PS_LOGOBJ_NAME_MAX]);
/* log/WRITER/LEAF ("lease", "claim"); WRITER as 32 hex digits. */
void pstore_log_leaf_name(const uint8_t writer[16], const char *leaf,
			  char out[PS_LOGOBJ_NAME_MAX]);
void pstore_writer_hex(const uint8_t id[16], char out[33]);
int pstore_logobj_put(struct pstore *s, uint64_t seg, uint64_t rec, const void *data,
		      size_t len, struct ember_diag *d);
/* Delete writer's objects of segment seg (its records are in live
 * blocks); failures are warned about and left. */
void pstore_logobj_drop(struct pstore *s, const uint8_t writer[16], uint64_t seg);

/* The log replayed (recover.c): whether a live block holds writer's
 * segment seq's profiles of time t; one record of h's segment (h->writer,
 * h->seq) into h, visible at once, unless a block holds it (*skipped) or
 * it no longer ingests (*failed, warned). */
bool pstore_log_covered(const struct pstore *s, const uint8_t writer[16], uint64_t seq,
			int64_t t);
int pstore_replay_record(struct pstore *s, struct pstore_head *h, const uint8_t *payload,
			 size_t len, uint64_t *skipped, uint64_t *failed);

/* Replay (wal_replay.c): fn for each record of a segment's bytes, in
 * order, until the end or the first bad record (*torn: bytes dropped);
 * writer gets the segment's writer ID.  -PSTORE_ERR_CORRUPT for a bad
 * header; fn's error stops the scan. */
int pstore_wal_scan(const uint8_t *data, size_t len, uint8_t writer[16],
		int (*fn)(void *ctx, const uint8_t *payload, size_t len), void *ctx,
		uint64_t *torn, struct ember_diag *d);

/* ---- resolution (resolve.c) --------------------------------- */

/* Why a build ID's frames stayed unresolved (the first reason given). */
struct pstore_reason {
	char *build_id, *reason;
};
EMBER_VEC_DEF(pstore_reasons, struct pstore_reason);
void pstore_reasons_free(struct pstore_reasons *r);

/* Apply a resolver to d's unresolved locations (those without lines, in
 * a mapping), one call per mapping; *changed says whether any got lines.
 * reasons (may be NULL) collects the failures' reasons per build ID. */
int pstore_resolve_dict(struct pmodel_dict *d, pstore_resolve_fn fn, void *ctx,
		    struct pstore_reasons *reasons, bool *changed, struct ember_diag *diag);

/* ---- compaction (compact.c, background.c) -------------------------------- */

EMBER_VEC_DEF(pstore_blocks, struct pstore_block *);
/* Drop the reference each block of v holds and free v (catalog.c). */
void pstore_blocks_release(struct pstore_blocks *v);
int pstore_compact_head(struct pstore *s, struct pstore_head *h);
int pstore_compact_sealed(struct pstore *s);
/* Rotate when due (rotate), flush sealed heads, merge, retention: the
 * background pass and pstore_compact. */
int pstore_compact_pass(struct pstore *s, bool rotate);
/* Seal the active head when due (age, size) or forced. */
int pstore_rotate(struct pstore *s, bool force);
/* Encode src, put it through the storage and open it back (compact.c). */
int pstore_encode_put(struct pstore *s, const struct pstore_block_src *src,
		      struct pstore_block **out, struct ember_diag *d);
int pstore_compact_merge(struct pstore *s);
/* Rewrite blocks[0..n) as one, the resolver applied (merge.c); with
 * only_if_resolved, nothing is written unless it resolved a frame. */
int pstore_merge_blocks(struct pstore *s, struct pstore_block **blocks, size_t n,
			bool only_if_resolved, struct ember_diag *d);
/* Blocks naming a build ID whose symbols arrived, rewritten resolved
 * (reresolve.c). */
int pstore_compact_reresolve(struct pstore *s);
void pstore_arrivals_free(struct pstore *s);
int pstore_compact_retention(struct pstore *s);
/* Recount coverage of a staged head after a resolver (coverage.c). */
int pstore_coverage_recount(struct pstore_head *h, const struct pstore_reasons *reasons);
int pstore_background_start(struct pstore *s);
void pstore_background_stop(struct pstore *s);
void pstore_background_kick(struct pstore *s);

/* ---- appends (append.c) ---------------------------------------------------- */

/* The part of an append after the log: into the active head (or the
 * recovered head h when replaying). */
int pstore_append_apply(struct pstore *s, struct pstore_head *h, const struct pprof_profile *p,
		    const struct pstore_append_opts *o, int64_t time, int64_t duration,
		    bool replay, size_t *first, size_t *count, struct ember_diag *d);

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

/* ---- queries (query.c, block_query.c) ------------------------------------- */

struct pstore_qctx {
	const struct pstore_selector *sel;
	const char *type; /* resolved full ID; NULL: any (discovery) */
	int64_t from, to; /* [from, to) */
	struct pmodel_result *r;
	struct pstore_cache *cache;
	struct ember_diag *d;
};

/* Series of t selected by q (and having q->type when set): col[s] is the
 * column of q->type in series s, -1 when s is not selected; *any says
 * whether one is.  col holds t->series.n entries. */
int pstore_plan(const struct pstore_qctx *q, const struct pstore_seriestab *t,
		const struct pstore_lindex *ix, int32_t *col, bool *any);
/* The distinct type IDs of a snapshot, sorted. */
int pstore_snapshot_types(const struct pstore_snapshot *snap, struct pstore_strs *out);
void pstore_strs_free(struct pstore_strs *v);
/* Resolve sel's type (or the selector's "TYPE{...}") against snap. */
int pstore_query_type(const struct pstore_selection *sel, const struct pstore_selector *parsed,
		  const struct pstore_snapshot *snap, char **out, struct ember_diag *d);
/* Whether any profile of [p0, p1) (in time order) lies in [from, to). */
bool pstore_any_in_range(const struct pstore_prof *p, size_t p0, size_t p1, int64_t from,
			 int64_t to);
/* Sum a block's matching rows into q->r. */
int pstore_block_query(struct pstore_block *b, struct pstore_qctx *q);
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

/* Scans of the profiles of a selection without their rows (scan.c):
 * discovery, series totals, coverage.  series() is called once per
 * source and selected series that has a profile in the time range;
 * profile(), when set, for each such profile. */
struct pstore_scan {
	struct pstore_qctx q;
	int (*series)(void *ctx, const struct pstore_seriestab *t, uint32_t s, int32_t col);
	int (*profile)(void *ctx, const struct pstore_seriestab *t, const struct pstore_prof *p,
		       int32_t col, const int64_t *totals, const struct pstore_cov *cov);
	void *ctx;
};
int pstore_scan_run(const struct pstore_snapshot *snap, struct pstore_scan *sc);
/* Parse sel, take a snapshot over its range and resolve its type (NULL
 * allowed when !need_type) into sc->q; release with pstore_scan_end. */
int pstore_scan_begin(struct pstore *s, const struct pstore_selection *sel, bool need_type,
		  struct pstore_scan *sc, struct pstore_snapshot *snap, struct ember_diag *d);
void pstore_scan_end(struct pstore_scan *sc, struct pstore_snapshot *snap);


#endif /* EMBER_PSTORE_INTERNAL_H */
