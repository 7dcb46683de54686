/*
 * pstore.h - the profile store's storage engine: pprof profiles kept by
 * labels and time and merged into the profile model's results (issue 15;
 * split from the model in issue 22; docs/profile-store.md).
 *
 * Pipeline position: the profile service (profile-service/profsvc.h; or a
 * tool, a test, a benchmark) decodes a pprof profile (wire/pprof.h),
 * symbolizes it and calls pstore_append(); the profile is written to an
 * fsynced write-ahead segment before the call returns, is queryable at
 * once, and is compacted in the background into immutable, content-named
 * blocks (docs/profile-store-format.md) kept through a block-storage
 * interface (struct pstore_blockio, blockio/pstore_blockio.h; a local
 * directory by default).
 * Queries select series by a Prometheus-style label selector, a profile
 * type and a time range, sum the matching profiles stack by stack into a
 * struct pmodel_result (profile-model/pmodel.h), which the model writes
 * out as pprof, folded stacks, a top table, a JSON tree or a flame-graph
 * SVG, and compares (struct pmodel_diff).
 *
 * Nothing here speaks HTTP or links the symbolizer: unsymbolized frames
 * are resolved by a callback the caller gives (pstore_resolve_fn).
 *
 * Errors: int functions return 0 or a negative errno, or one of the
 * negated enum pstore_error values (pstore_strerror()).  Functions taking
 * `char *why, size_t why_size` write a reason for the sender there on
 * failure (NUL-terminated, may be NULL).
 *
 * Threads: a struct pstore may be used from many threads at once (append,
 * query and the rest); the results it returns are the caller's, plain
 * values owned by one thread at a time.  There is no global state.
 */
#ifndef EMBER_PSTORE_H
#define EMBER_PSTORE_H

#include "common.h"
#include "pmodel.h"
#include "pprof.h"
#include "pstore_blockio.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pstore;

/* ---- errors ----------------------------------------------------------- */

enum pstore_error {
	PSTORE_ERR_LIMIT = 5200,  /* a profile past a limit of its content: labels, depth */
	PSTORE_ERR_LABEL,	  /* a malformed label name or value */
	PSTORE_ERR_SERIES_LIMIT,  /* the store holds max_series series */
	PSTORE_ERR_SELECTOR,	  /* a selector that does not parse */
	PSTORE_ERR_TYPE = PMODEL_ERR_TYPE, /* an unknown or mismatched profile
					      * type: the model's error (pmodel.h) */
	PSTORE_ERR_CORRUPT,	  /* a block or segment fails its checks */
	PSTORE_ERR_CLOSED,	  /* the store's log failed; it takes no writes */
	PSTORE_ERR_TOO_LARGE,	  /* a profile past a size limit: bytes, samples */
};

/* Message for a negative error of this component (errno or PSTORE_ERR). */
const char *pstore_strerror(int err);

/*
 * What a negative error of this component means to the sender (common.h):
 * TOO_LARGE -> too large, LIMIT -> over a limit, LABEL, SELECTOR, TYPE and
 * -EINVAL -> malformed, SERIES_LIMIT -> capacity, CORRUPT -> corrupt,
 * CLOSED -> unavailable, other errnos as ember_errkind_of_errno().  The
 * kind, never the message, decides an answer's status.
 */
enum ember_errkind pstore_error_kind(int err);

/* ---- block storage ---------------------------------------------------- */

/* struct pstore_blockio, where blocks live: blockio/pstore_blockio.h. */

/* The local-directory implementation over dir (created if missing):
 * files written to a temporary name, fsynced, renamed, the directory
 * fsynced.  On success *out is filled and owns its context (release it
 * with out->release(out->ctx), or hand it to pstore_open). */
int pstore_blockio_dir(const char *dir, struct pstore_blockio *out);

/* ---- symbol resolution (callback) -------------------------------------- */

/* A mapping of an unsymbolized frame, as the profile described it. */
struct pstore_mapping {
	const char *build_id; /* hex as pprof keeps it; "" when none */
	const char *filename;
	uint64_t start, limit, offset;
};

/* One frame of an address: innermost (inlined) first. */
struct pstore_frame {
	const char *function;	 /* human-readable name */
	const char *system_name; /* linkage name; NULL means "" */
	const char *filename;	 /* NULL means "" */
	int64_t line;
	int64_t start_line;	 /* the function's (its declaration's); 0 unknown */
};

struct pstore_resolution;

/*
 * Frames for addrs[i], innermost first (copied), or a reason why that
 * address stays unresolved (e.g. "no_debuginfo"; copied).  0 or -ENOMEM.
 */
int pstore_resolution_set(struct pstore_resolution *r, size_t i,
			  const struct pstore_frame *frames, size_t n);
int pstore_resolution_fail(struct pstore_resolution *r, size_t i, const char *reason);

/*
 * The caller's resolver: frames for n addresses (as in the profile) of
 * one mapping, reported through pstore_resolution_set/_fail.  Addresses
 * it leaves alone stay unresolved.  A negative return fails the query or
 * the compaction that asked.
 */
typedef int (*pstore_resolve_fn)(void *ctx, const struct pstore_mapping *m,
				 const uint64_t *addrs, size_t n,
				 struct pstore_resolution *r);

/* ---- opening ---------------------------------------------------------- */

/* Limits of pstore_append; zero fields take the default shown. */
struct pstore_limits {
	size_t sz;		     /* sizeof(struct pstore_limits) */
	size_t max_profile_bytes;    /* the body as received: 16 MiB */
	size_t max_samples;	     /* per profile: 100,000 */
	size_t max_stack_depth;	     /* locations per sample: 1,024 */
	size_t max_labels;	     /* per series, __name__ included: 32 */
	size_t max_label_name_len;   /* bytes: 128 */
	size_t max_label_value_len;  /* bytes: 1,024 */
	size_t max_series;	     /* distinct series in the store: 100,000 */
	/* A series counts against max_series while it has data in a head
	 * or in a block whose time span reaches into the last
	 * series_window_ns (1 hour): older data, or data dropped by the
	 * retention, holds no series' slot. */
	int64_t series_window_ns;
};

/* Steps of rollups a store keeps at most (pstore_opts.rollup_steps_ns). */
#define PSTORE_ROLLUP_TIERS 4

struct pstore_opts {
	size_t sz;			 /* sizeof(struct pstore_opts) */
	/* Where blocks go; NULL: pstore_blockio_dir(DIR) (blocks in
	 * DIR/blocks).  The store
	 * takes ownership (it calls release at pstore_free, and on a failed
	 * open). */
	const struct pstore_blockio *blocks;
	int64_t retention_ns;		 /* blocks older are dropped: 14 days */
	int64_t partition_ns;		 /* a block's time span: 1 hour */
	int64_t head_max_age_ns;	 /* the log segment is compacted: 60 s */
	size_t head_max_bytes;		 /* ... or when it holds this much: 64 MiB */
	size_t cache_bytes;		 /* decoded block dictionaries kept: 256 MiB */
	int zstd_level;			 /* blocks' compression level: 9 */
	bool no_background;		 /* no compaction thread (tests, tools):
					  * pstore_flush/pstore_compact do it */
	bool no_fsync;			 /* benchmarks only: acknowledgements are
					  * no longer durable */
	struct pstore_limits limits;
	/* Resolver applied when compacting (blocks' dictionaries updated). */
	pstore_resolve_fn resolver;
	void *resolver_ctx;
	/* The block storage is shared by several stores (replicas of a
	 * server on one bucket; docs/object-storage-layout.md, "Profiles"):
	 * the live blocks are those of the block index (index/PART/SEQ,
	 * entries claimed through blocks->claim, which is required), read
	 * again when older than refresh_ns (0: 2 s) at a query and at each
	 * compaction pass; merges, flushes and the retention append entries
	 * instead of swapping blocks locally.  The blocks this store's
	 * merges and retention drops superseded are deleted from the storage
	 * delete_after_ns later (0: 10 minutes; negative: never), when the
	 * index says they are superseded (a superseded block never comes
	 * back) and no query of another replica can still read them. */
	bool shared;
	int64_t refresh_ns;
	int64_t delete_after_ns;
	/* A shared store's writer lease (log/WRITER/lease, rewritten every
	 * head age): another writer whose lease is older than this by the
	 * storage's clock is taken to be dead, and its log taken over (0:
	 * 3 head ages).  docs/object-storage-layout.md, "The per-push log". */
	int64_t lease_expiry_ns;
	/* Clock for retention and the head's age (ns since the epoch); NULL:
	 * CLOCK_REALTIME. */
	int64_t (*clock_ns)(void *ctx);
	void *clock_ctx;
	/* Rollups (docs/profile-store.md, "Rollups"): each closed and merged
	 * partition's profiles summed per series at these steps (ns, in
	 * increasing order, each dividing partition_ns, the rest ignored;
	 * zero-terminated; all zero: 1 minute and 1 hour), and each past
	 * 6 UTC hours' (00, 06, 12, 18) and UTC day's summed from its
	 * partitions' coarsest rollups, kept
	 * rollup_retention_ns (0: 90 days) while blocks of full resolution
	 * are kept retention_ns.  no_rollups: none built (those stored are
	 * still dropped by their retention). */
	int64_t rollup_steps_ns[PSTORE_ROLLUP_TIERS];
	int64_t rollup_retention_ns;
	bool no_rollups;
	/* A query's blocks and rollups are summed by up to query_threads
	 * threads, its own included (1: its own alone; 0: the online
	 * cores, at most 4: docs/performance-notes.md, "Parallel queries"),
	 * each given at least query_split_bytes of them
	 * (0: 4 MiB; the block bytes its part of the range covers); the
	 * store's queries together start at most query_threads threads
	 * besides their own (docs/profile-store.md, "Queries"). */
	unsigned query_threads;
	uint64_t query_split_bytes;
};

/*
 * Open (creating if needed) the store under dir: DIR/wal holds the log
 * segments, DIR/writer-id the name of this writer, DIR/lock a flock.  The
 * log is replayed (its torn tail dropped), the blocks listed and their
 * headers read; blocks superseded by a compaction are deleted.  On
 * success *out is a store to pstore_free().  -EBUSY when another process
 * has dir open; an errno of the directory or the block storage.  A corrupt
 * block does not fail the open: the queries that need it fail, and the
 * stats count it; a segment with a bad header is moved aside.
 */
int pstore_open(const char *dir, const struct pstore_opts *opts, struct pstore **out,
		char *why, size_t why_size);

/* Stop the compaction thread and close (no flush: the log is the truth).
 * Accepts NULL. */
void pstore_free(struct pstore *s);

/* An open store's retentions and series limit changed (a tenant's limits
 * read again); 0: the default, as at pstore_open.  The next append and the next
 * compaction pass go by them: data already past a shorter retention is
 * dropped then, series held past a lower max_series stay (new ones are
 * refused). */
struct pstore_retune {
	size_t sz;			/* sizeof(struct pstore_retune) */
	int64_t retention_ns, rollup_retention_ns;
	size_t max_series;
};
void pstore_retune(struct pstore *s, const struct pstore_retune *r);

/* ---- ingest ----------------------------------------------------------- */

struct pstore_label {
	const char *name;
	const char *value;
};

/* A build ID whose frames the caller could not symbolize, and why. */
struct pstore_unresolved {
	const char *build_id;
	const char *reason; /* "no_debuginfo", "unknown_build_id", ... */
};

struct pstore_append_info {
	size_t profiles;		/* one per sample-label set, each its own series */
	uint64_t samples, resolved;	/* coverage, as pstore_coverage counts it */
	int64_t time_ns;		/* the time the profile was given */
};

struct pstore_append_opts {
	size_t sz; /* sizeof(struct pstore_append_opts) */
	/* Series labels.  Names: [a-zA-Z_][a-zA-Z0-9_.]*; "__name__" names
	 * the profile (else derived from its types, docs/profile-store.md).
	 * Sample labels of the profile add to these (a profile whose samples
	 * carry different string labels is stored as one profile per label
	 * set); a caller's label wins over a sample label of the same name. */
	const struct pstore_label *labels;
	size_t n_labels;
	int64_t time_ns;	/* when time_nanos is 0: the arrival time */
	int64_t duration_ns;	/* when duration_nanos is 0 */
	size_t input_bytes;	/* size of the body as received (limit check) */
	const struct pstore_unresolved *unresolved;
	size_t n_unresolved;
	/* The profile as received (raw, gzip or zstd protobuf), written to
	 * the log as is instead of encoding p again; it must decode to p.
	 * NULL: p is encoded.  Its size is input_bytes when that is 0. */
	const void *body;
	size_t body_len;
	/* Filled on success when set: what was stored. */
	struct pstore_append_info *info;
};


/*
 * Store one profile (read, not kept: the store copies what it needs).
 * Returns 0 once the profile is durable (fsynced) and queryable; nothing
 * of it is visible before.  Errors: -PSTORE_ERR_TOO_LARGE (bytes, samples),
 * -PSTORE_ERR_LIMIT, -PSTORE_ERR_LABEL, -PSTORE_ERR_SERIES_LIMIT (why
 * says which limit and the value), -EINVAL
 * (no sample types), -EIO / -ENOSPC (the log; nothing stored),
 * -PSTORE_ERR_CLOSED (an earlier log failure), -ENOMEM.
 */
int pstore_append(struct pstore *s, const struct pprof_profile *p,
		  const struct pstore_append_opts *o, char *why, size_t why_size);
/* What pstore_append checks of the caller's labels and p's sample types,
 * and nothing stored (info, when set: 0 profiles).  The same errors for
 * the same labels: -PSTORE_ERR_LIMIT, -PSTORE_ERR_LABEL, -EINVAL, -ENOMEM. */
int pstore_append_check(struct pstore *s, const struct pprof_profile *p,
			const struct pstore_append_opts *o, char *why, size_t why_size);

/* ---- selections ------------------------------------------------------- */

/*
 * On whose behalf a read runs (a query, discovery, series, coverage),
 * given with its selection: the one request context of the profile
 * routes (api/profile_routes.c builds it; profile-service/ passes it
 * down).  Every field is optional; a NULL request has no limits (tools,
 * tests, the compaction).
 *  - check is polled between sources, series and every few hundred
 *    profiles: 0 to go on, or a negative errno that stops the read, which
 *    returns it (-ETIMEDOUT past the request's deadline, -ECANCELED when
 *    its client went away).
 *  - account is the request's memory (common.h, struct ember_mem_account):
 *    what a read holds in proportion to what the request asks (the
 *    series grid; a query's sums over a source's stacks and its merged
 *    result; a selector's compiled regexes, where selectors are parsed:
 *    pstore_selection_parse) is taken from it, and past its share or the
 *    server's budget the read fails with its error (-E2BIG, -EAGAIN).
 */
struct pstore_request {
	size_t sz;				/* sizeof(struct pstore_request) */
	int (*check)(void *arg);
	void *check_arg;
	struct ember_mem_account *account;	/* borrowed */
};

/*
 * What a query reads.  selector: "{name="v",name!="v",name=~"re",name!~"re"}"
 * (NULL or "{}": everything); regexes are RE2's (Go's syntax, as
 * Prometheus takes them), matched against the whole value; at most 8 a
 * selector, each compiled within 1 MiB taken from request->account (if
 * any) before it is compiled (docs/profile-store.md, "Selectors").  type: a profile type ID
 * "name:sample_type:sample_unit:period_type:period_unit" (as
 * pstore_profile_types lists them) or an alias ("cpu", "wall",
 * "alloc_space", ...); NULL where a call allows any type.  Times are ns
 * since the epoch, [from_ns, to_ns); to_ns 0 means no end.
 */
/* Samples linked to a trace or span (a pprof sample's span_id/trace_id
 * labels, an OTLP sample's link): a query keeps those linked to any of
 * these spans or traces (raw IDs, big-endian as on the wire; each list
 * sorted by memcmp, no duplicates). */
#define PSTORE_MAX_LINK_IDS 64 /* span and trace IDs of one query */
struct pstore_link_filter {
	const uint8_t (*span)[8];
	size_t n_span;
	const uint8_t (*trace)[16];
	size_t n_trace;
};

struct pstore_selection {
	const char *selector;
	const char *type;
	int64_t from_ns, to_ns;
	const struct pstore_request *request;	/* its limits (borrowed); NULL: none */
	/* pstore_query only: the samples linked to these (borrowed); NULL
	 * or both lists empty: every sample */
	const struct pstore_link_filter *links;
	/* pstore_query only: the samples whose stack begins, root first,
	 * with these frame names (pmodel_result_focus, after the merge and
	 * its resolving; borrowed); n_focus 0: every sample */
	const char *const *focus;
	size_t n_focus;
	/* pstore_query, pstore_series_totals: every profile read from its
	 * block, none from the rollups (benchmarks, tests; a span or trace
	 * filter implies it) */
	bool full_resolution;
};

/* ---- query ------------------------------------------------------------- */

struct pstore_query_opts {
	size_t sz;
	pstore_resolve_fn resolver; /* unsymbolized frames; NULL: left as addresses */
	void *resolver_ctx;
};

/*
 * Merge the profiles of sel (type required) by summing each stack; with
 * sel->links, only the samples linked to one of its spans or traces;
 * with sel->n_focus, only the stacks under sel->focus.
 * *out is a new result to pmodel_result_free() (possibly with no
 * samples).  Errors: -PSTORE_ERR_SELECTOR, -PSTORE_ERR_TYPE,
 * -PSTORE_ERR_CORRUPT (a block it needs fails its checks: never taken as
 * empty), an errno of the block storage, -ENOMEM; with sel->request, its
 * check's error (-ETIMEDOUT, -ECANCELED) and its account's (-E2BIG,
 * -EAGAIN).
 */
int pstore_query(struct pstore *s, const struct pstore_selection *sel,
		 const struct pstore_query_opts *o, struct pmodel_result **out,
		 char *why, size_t why_size);

/* ---- discovery, series, coverage ---------------------------------------- */

/* A list of strings; pstore_strlist_free() releases all. */
struct pstore_strlist {
	size_t n;
	char **v;
};
void pstore_strlist_free(struct pstore_strlist *l);

/* Label names, values of one label, and profile types in sel (every field
 * optional), sorted and unique.  *out to pstore_strlist_free(). */
int pstore_label_names(struct pstore *s, const struct pstore_selection *sel,
		       struct pstore_strlist **out, char *why, size_t why_size);
int pstore_label_values(struct pstore *s, const char *name,
			const struct pstore_selection *sel, struct pstore_strlist **out,
			char *why, size_t why_size);
int pstore_profile_types(struct pstore *s, const struct pstore_selection *sel,
			 struct pstore_strlist **out, char *why, size_t why_size);
/* The label sets of the series in sel, each restricted to names[0, n_names)
 * (n_names 0: every label) and written as a JSON object {"NAME":"VALUE",
 * ...} (names sorted; a series keeping no label gives none), sorted and
 * unique.  The name __profile_type__ among names adds the series' type
 * under it: a set per type the series holds, or sel's type alone. */
int pstore_label_sets(struct pstore *s, const struct pstore_selection *sel,
		      const char *const *names, size_t n_names, struct pstore_strlist **out,
		      char *why, size_t why_size);

/* Totals over time: one line per distinct value tuple of group_by (one
 * line in all without group_by), n points at from + i * step. */
struct pstore_series_line {
	struct pstore_label *labels; /* the group_by labels; value "" if absent */
	size_t n_labels;
	int64_t *values;
	uint32_t *counts; /* the profiles summed into each value */
};
struct pstore_series_set {
	int64_t from_ns, step_ns;
	size_t n_points;
	size_t n_lines;
	struct pstore_series_line *lines;
	char *type; /* the full type ID the selection's type resolved to */
	/* nonzero: part of the range answered from rollups alone (its
	 * profiles past the retention), rounded in to this step (ns) */
	int64_t rollup_only_step;
};
/* sel needs a type and a from/to range; step > 0.  The grid is bounded
 * before any profile is read: at most PSTORE_SERIES_MAX_POINTS points (a
 * larger step), and lines * points at most PSTORE_SERIES_MAX_CELLS (so at
 * most PSTORE_SERIES_MAX_CELLS / points lines, and never more than
 * PSTORE_SERIES_MAX_LINES): past either, -E2BIG with why saying which,
 * as soon as the line that crosses it is met.  The grid's values are
 * taken from sel->request's account.  *out to pstore_series_set_free(). */
#define PSTORE_SERIES_MAX_POINTS 11000	/* Prometheus' resolution limit */
#define PSTORE_SERIES_MAX_CELLS 1000000	/* 12 MB of values and counts, ~20 MB of JSON */
#define PSTORE_SERIES_MAX_LINES 10000
int pstore_series_totals(struct pstore *s, const struct pstore_selection *sel,
			 int64_t step_ns, const char *const *group_by, size_t n_group_by,
			 struct pstore_series_set **out, char *why, size_t why_size);
void pstore_series_set_free(struct pstore_series_set *set);

/* Symbolization coverage of the profiles of sel: samples are the values
 * of each profile's first "count" sample type (else one per sample). */
struct pstore_coverage_row {
	char *build_id;
	char *reason;
	uint64_t samples; /* samples with a frame of this build ID unresolved */
};
struct pstore_coverage {
	uint64_t profiles, samples, resolved_samples;
	size_t n_rows; /* by samples affected, most first */
	struct pstore_coverage_row *rows;
};
int pstore_coverage(struct pstore *s, const struct pstore_selection *sel,
		    struct pstore_coverage **out, char *why, size_t why_size);
void pstore_coverage_free(struct pstore_coverage *c);

/* ---- maintenance and stats ---------------------------------------------- */

/* Whether the store holds a profile (log and blocks), and the times of
 * its oldest and newest (0 when none), from their sources' bounds. */
struct pstore_time_range {
	bool any;
	int64_t oldest_ns, newest_ns;
};
/* 0 or -ENOMEM. */
int pstore_time_range(struct pstore *s, struct pstore_time_range *out);

/*
 * The debug info of build_id (hex) is now there (an upload, a fetch): the
 * compaction rewrites the blocks whose unresolved frames name it, the
 * resolver (pstore_opts.resolver) applied, their coverage recounted; the
 * heads that hold such frames now get the same once written as blocks.
 * Queries resolve such frames before that (pstore_query_opts.resolver).
 * 0, -EINVAL, -ENOMEM.
 */
int pstore_symbols_arrived(struct pstore *s, const char *build_id);

/* Seal the log segment and write what it holds as blocks, now. */
int pstore_flush(struct pstore *s);
/* One compaction pass: flush sealed segments, merge each partition's
 * blocks, drop blocks past retention.  What the background thread runs. */
int pstore_compact(struct pstore *s);

struct pstore_stats {
	uint64_t block_bytes, blocks, corrupt_blocks;
	uint64_t series, profiles;	  /* blocks and log together */
	uint64_t head_profiles, wal_bytes, wal_segments;
	uint64_t appends, rejected;	  /* since open */
	uint64_t flushes, merges, retention_drops, compaction_errors;
	uint64_t wal_torn_bytes;	  /* dropped at the tails replayed at open */
	uint64_t unbounded_labels;
	uint64_t rollups, rollup_bytes;	  /* rollups kept, their size */
	uint64_t rollups_built, rollup_drops; /* since open: built, dropped */
	uint64_t profiles_read;		  /* since open: profiles (a rollup's
					   * each one) summed by queries */
	uint64_t zero_drops;		  /* since open: query results copied to
					   * drop stacks a rollup's bucket less a
					   * block's profiles left at 0 (rows with
					   * attributes: docs/profile-store.md) */
	uint64_t rows_bytes_read;	  /* since open: bytes of blocks' row
					   * streams queries read */
};
void pstore_stats(struct pstore *s, struct pstore_stats *out);

/* Labels that look unbounded (a new value in most profiles that carry
 * them), as "name: N new values in the last M profiles".  *out to
 * pstore_strlist_free(). */
int pstore_warnings(struct pstore *s, struct pstore_strlist **out);

/* ---- the block index's entries (exposed for the fuzz target) ------------ */

/*
 * One entry of a shared store's block index (docs/object-storage-layout.md,
 * "Profiles"): the block it adds (NULL: none, a retention drop) and the
 * blocks it supersedes.  Text: "ember-pindex 1\n", then at most one
 * "add NAME SIZE\n", the added block's log ranges as
 * "wal WRITER LO HI\n" (the writer's 32 hex digits, segments LO..HI), and
 * any number of "sup NAME\n" lines.
 */
struct pstore_index_range {
	uint8_t writer[16];
	uint64_t lo, hi;
};

struct pstore_index_entry {
	char *add;		/* NULL: the entry adds nothing */
	uint64_t add_size;
	struct pstore_index_range *wal; /* the added block's log ranges */
	size_t n_wal;
	char **sup;
	size_t n_sup;
};

/* Parse an entry's bytes (outside input: any writer of the bucket).  On
 * success *out is filled (release with pstore_index_entry_release);
 * -PSTORE_ERR_CORRUPT with why saying what is wrong; -ENOMEM. */
int pstore_index_entry_parse(const void *data, size_t len, struct pstore_index_entry *out,
			     char *why, size_t why_size);
void pstore_index_entry_release(struct pstore_index_entry *e);
/* An entry's name "index/PART/SEQ" (PART 16 lowercase hex digits, SEQ 10
 * decimal digits, from 1) into *part and *seq: 0, or -EINVAL. */
int pstore_index_key_parse(const char *name, int64_t *part, uint64_t *seq);
/* The bytes of e into out (appended). */
int pstore_index_entry_encode(const struct pstore_index_entry *e, struct ember_buf *out);

/* ---- selectors (exposed for the fuzz target and the HTTP layer) -------- */

struct pstore_selector;

/* Parse text (NUL-terminated).  *out to pstore_selector_free(). */
int pstore_selector_parse(const char *text, struct pstore_selector **out, char *why,
			  size_t why_size);
void pstore_selector_free(struct pstore_selector *sel);
/* The label names sel's matchers name, in the selector's order (repeats
 * kept): their count, of which the first max are written to names[]
 * (pointing into sel; valid until pstore_selector_free). */
size_t pstore_selector_names(const struct pstore_selector *sel, const char **names,
			     size_t max);
/* Whether a label set (sorted or not) matches. */
bool pstore_selector_matches(const struct pstore_selector *sel,
			     const struct pstore_label *labels, size_t n);

#endif /* EMBER_PSTORE_H */
