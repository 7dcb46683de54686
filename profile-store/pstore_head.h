/*
 * pstore_head.h - appends and the in-memory heads they land in.
 *
 *   rows.c    one profile's rows, sorted and summed per stack
 *   pprof_ingest.c  a decoded pprof -> dictionary entries, rows, coverage
 *   head.c    the in-memory head: what the log segment holds
 *   append.c  pstore_append: the log, then the active head
 *
 * Invariants: a head's profiles are pending until settled (visible or
 * dead), and only visible ones are queried; appends hold a head's lock for
 * writing, queries for reading; a sealed head never changes again.
 */
#ifndef EMBER_PSTORE_HEAD_H
#define EMBER_PSTORE_HEAD_H

#include "pstore_series.h"

/* ---- ingest (pprof_ingest.c, coverage.c) ---------------------------------------- */

/* One profile as rows: nodes of a dictionary, values row-major (ncols
 * per row) and, when a sample had one, link ids (struct pstore_linktab:
 * empty when no row has a link, else one a row, 0 for an unlinked row).
 * After pstore_rows_normalize the (node, link) pairs are ascending and
 * unique. */
struct pstore_rows {
	EMBER_VEC(uint32_t) node;
	EMBER_VEC(int64_t) val;
	EMBER_VEC(uint32_t) link;
	uint32_t ncols;
};

void pstore_rows_release(struct pstore_rows *r);
/* Sort rows by (node, link) and sum equal pairs. */
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
	struct pstore_linktab links;	/* the links the groups' rows name */
	int count_col;		   /* the first "count" column, or -1 */
	uint32_t ncols;
};

/*
 * Intern p's samples into dict: one group per distinct set of string
 * sample labels (all in group 0 unless split_labels) but span_id and
 * trace_id, which are the sample's link (hex; any other value is
 * dropped), and those named '@' KEY, its attributes (PSTORE_ATTR_PREFIX);
 * rows summed per (stack, link).  lim NULL: no limits (offline).  -PSTORE_ERR_TOO_LARGE (samples),
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
	EMBER_VEC(uint32_t) row_link;	/* ids of links, for profiles with links */
	struct pstore_linktab links;
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

/* The store's series limit.  admit: the keys of an add's series that the
 * head does not hold yet (sorted, unique), counted all at once before any
 * is added, or refused with none counted (so a refused profile holds no
 * slot); give_back: those of them that never reached the head when the
 * add failed after admit. */
struct pstore_series_gate {
	int (*admit)(void *ctx, const uint64_t *keys, size_t n, struct ember_diag *d);
	void (*give_back)(void *ctx, const uint64_t *keys, size_t n);
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

/* The part of an append after the log: into the active head (or the
 * recovered head h when replaying). */
int pstore_append_apply(struct pstore *s, struct pstore_head *h, const struct pprof_profile *p,
		    const struct pstore_append_opts *o, int64_t time, int64_t duration,
		    bool replay, size_t *first, size_t *count, struct ember_diag *d);

/* Take a flushed head out of the sealed heads, its series uncounted
 * (under s->mu; compact.c). */
void pstore_head_unpublish(struct pstore *s, struct pstore_head *h);

#endif /* EMBER_PSTORE_HEAD_H */
