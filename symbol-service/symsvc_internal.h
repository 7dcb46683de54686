/*
 * symsvc_internal.h - shared between the files of symbol-service/ only.
 *
 * One concept a file:
 *   service.c          the service: options, lifetime, stats, error reasons
 *   request_budget.c   what one request may spend: its check, its fetch
 *                      cap, its memory account
 *   fetch_upstream.c   a build ID's files asked of the owner's upstream fetch
 *   index_cache.c      the LRU of loaded indexes: one build per build ID,
 *                      eviction, replacement when better files arrive
 *   saved_index.c      indexes saved in the store as derived artifacts, pins
 *   batch.c            lookups of many addresses in address order
 *   service_lookup.c   symsvc_lookup: a build ID's addresses through batches
 *   json_answer.c      the answer of POST /api/v1/symbolize, chunk by chunk
 *   pprof_symbolize.c  a profile's locations given lines
 *   frame_name.c       the names a frame takes in a profile
 */
#ifndef EMBER_SYMSVC_INTERNAL_H
#define EMBER_SYMSVC_INTERNAL_H

#include "symsvc.h"

#include <pthread.h>

/* ---- one request's limits (request_budget.c) ------------------------------------- */

/* A request's check and fetch count, for one thread (symsvc_req_new in
 * symsvc.h makes one on the heap). */
struct symsvc_req {
	struct symsvc_request_opts opts; /* as the caller gave them */
	int stopped;		/* the check's first error, kept */
	unsigned polls;
	unsigned fetches_left;
	bool capped;		/* fetches_left counts */
};

void symsvc_req_init(struct symsvc_req *r, const struct symsvc_request_opts *o);
/* The check now: 0, or its error (kept: every later call returns it).
 * r may be NULL (no limits). */
int symsvc_req_check(struct symsvc_req *r);
/* symsvc_req_check() once every few hundred calls, for per-address loops. */
int symsvc_req_poll(struct symsvc_req *r);
/* One more build ID asked upstream: 0, or -ENOBUFS at the request's cap. */
int symsvc_req_take_fetch(struct symsvc_req *r);

/* ---- batches (batch.c) ------------------------------------------------------ */

/* Invariant: after a run, answers[i] for each position i of the batch,
 * its frames pool[first, first + n) when n > 0. */
struct symsvc_batch {
	struct batch_item {	/* the batch sorted by address */
		uint64_t vaddr;
		uint32_t pos;
	} *items, *spare;	/* spare: the radix sort's other half */
	struct batch_answer {	/* per position in the batch */
		uint32_t first;	/* its frames: pool[first, first + n) */
		int32_t n;	/* sym_index_lookup's result, clamped */
	} *answers;
	struct sym_frame *pool;
	size_t pool_len, pool_cap;
};

/* symsvc_batch_frames() inline, for the folder's per-address loops. */
static inline const struct sym_frame *symsvc_batch_frames_at(const struct symsvc_batch *b,
							     size_t i, int *n)
{
	*n = b->answers[i].n;
	return *n > 0 ? &b->pool[b->answers[i].first] : NULL;
}

/* ---- the index cache (index_cache.c) --------------------------------------- */

#define SYMSVC_CACHE_BUCKETS 1024

/*
 * Invariants (under mu): every index in the table is in one bucket chain
 * (by the hash of its build ID); an index is in the LRU (most recent
 * first) and counted in bytes/loaded exactly when it is ready and not
 * superseded; an index in use (refs > 0) is never freed.
 */
struct symsvc_cache {
	pthread_mutex_t mu;
	pthread_cond_t built;			/* an index finished building */
	struct symsvc_index *table[SYMSVC_CACHE_BUCKETS];
	struct symsvc_index *lru_head, *lru_tail;
	struct ember_hash_key key;		/* of the table's hash */
	struct ember_errcache *failed;		/* inputs (what) whose build failed for
						   what they are, with the error */
	uint64_t bytes, budget;
	size_t loaded, builds, evictions, refused, disk_loads, pin_loads, unsaved, rebuilds;
	size_t build_failures, failures_cached;
};

/* What an index build may take, and from where. */
struct symsvc_build_limits {
	struct ember_mem_budget *budget;	/* borrowed; NULL: nothing taken */
	uint64_t bytes;
};

struct symsvc {
	struct store *store;		/* borrowed */
	symsvc_fetch_fn fetch;		/* NULL: no upstream */
	void *fetch_arg;
	struct symsvc_build_limits build;
	struct symsvc_cache cache;
};

/* An empty cache with budget bytes: 0 or a negative errno. */
int symsvc_cache_init(struct symsvc_cache *c, uint64_t budget);
/* Frees every index (none may be in use). */
void symsvc_cache_release(struct symsvc_cache *c);
void symsvc_cache_get_stats(struct symsvc_cache *c, struct symsvc_stats *st);

/* ---- upstream (fetch_upstream.c) ----------------------------------------------------- */

/*
 * Bring build_id's debug file and executable from upstream into the store
 * through svc->fetch (either is enough to symbolize): 0 when either
 * arrived; -ENOENT when nobody has them (or there is no upstream);
 * -EHOSTUNREACH when upstream failed or is stopping; the request ro's
 * stop (-ETIMEDOUT, ...; ro may be NULL); or the store's error.
 */
int symsvc_fetch_build_id(struct symsvc *svc, const char *build_id,
			  const struct symsvc_request_opts *ro);

/* ---- saved indexes (saved_index.c) ------------------------------------------ */

/*
 * A build ID's index is made from the best executable (program headers,
 * symbol tables) and the best debug file (DWARF) the store holds, and
 * saved as a derived artifact named after the index format version and
 * both inputs' sha256 (docs/symbol-index-format.md): a restart maps it
 * instead of parsing DWARF, and better debug info arriving later names a
 * new index.
 */
struct symsvc_inputs {
	struct store_artifact main, dbg; /* main: the file given to the
					    symbolizer; dbg: its DWARF */
	bool has_dbg;			 /* dbg is another file than main */
	char what[STORE_NAME_MAX];	 /* the derived artifact's name */
};

/* The inputs of build_id's index: 0, -ENOENT when the store has no file
 * with symbols for it, or the store's error. */
int symsvc_inputs_find(struct store *s, const char *build_id, struct symsvc_inputs *in);

/* How symsvc_saved_open() got its index. */
enum symsvc_origin {
	SYMSVC_LOADED,		/* mapped from the saved index */
	SYMSVC_BUILT,		/* built, saved and mapped back */
	SYMSVC_BUILT_UNSAVED,	/* built; saving failed (logged), kept in memory */
};

/*
 * The index of build_id for inputs in: the saved one when it exists and
 * loads, else built from the inputs and saved.  A saved index that does
 * not load (damaged, another version) is rebuilt and replaced; one that
 * cannot be saved is served from memory (SYMSVC_BUILT_UNSAVED).  A build
 * takes bl->bytes of bl->budget while it runs (-EAGAIN when it cannot).
 * NULL with the symbolizer's error or a negative errno in *err (the
 * store's, when it cannot say whether an index is saved; -EIO when a
 * stored file is missing).
 */
struct sym_index *symsvc_saved_open(struct store *s, const char *build_id,
				    const struct symsvc_inputs *in,
				    const struct symsvc_build_limits *bl,
				    enum symsvc_origin *origin, int *err);

/*
 * While the store is still opening: the index its pin names for build_id
 * (store_find_pin), mapped, with the name of what it was made from in
 * what.  NULL with a negative errno in *err (-ENOENT: no pin).  The
 * caller checks what against symsvc_inputs_find() once the store is open.
 */
struct sym_index *symsvc_saved_open_pinned(struct store *s, const char *build_id,
					   char what[STORE_NAME_MAX], int *err);

/* Pin the saved index of in for build_id; gen is the store generation
 * read before in was found.  Failures are logged only: a pin is a hint. */
void symsvc_saved_pin(struct store *s, const char *build_id,
		      const struct symsvc_inputs *in, uint64_t gen);

#endif /* EMBER_SYMSVC_INTERNAL_H */
