/*
 * pstore_internal.h - what every file of profile-store/ shares: the store
 * itself (struct pstore), its clock and partitions, the growable arrays.
 * Only profile-store/ (and its tests and fuzzers) includes it.  Its
 * functions carry the component's prefix too (pstore_), so the library
 * exports no other; its macros are PS_.  The dictionary, the string table,
 * the result's layout and the profile types it fills and reads are the
 * model's (profile-model/pmodel.h); the block-storage interface is
 * blockio/pstore_blockio.h.
 *
 * Each area of the engine has a header of its own, included by that area's
 * files and by its real users only:
 *   pstore_bytes.h    little-endian and cursor helpers of both file formats
 *   pstore_series.h   labels, series tables, label indexes, profiles; the
 *                     series count and the unbounded-label check
 *   pstore_head.h     ingest, the in-memory heads and appends into them
 *   pstore_wal.h      the log: records, segments, per-push objects, replay
 *   pstore_block.h    the block format: encode, decode, row streams, names
 *   pstore_catalog.h  the blocks a store holds, their data and its cache
 *   pstore_index.h    a shared store's block index, leases and takeover
 *   pstore_resolve.h  resolver callbacks applied to a dictionary
 *   pstore_compact.h  rotation, compaction, merges, retention, the thread
 *   pstore_query.h    selectors, snapshots, queries and scans
 *
 * Each area header includes this one (and the series header, where its
 * structs hold series); a file includes the headers of the areas whose
 * declarations it uses, and this one itself only when it uses no area's.
 *
 * One concept a file (pstore_errors.c: pstore_strerror; limits.c: the ingest
 * limits and their defaults; pstore.c: open, free, snapshots, stats,
 * warnings; blockio_dir.c: the local-directory block storage); the other
 * files are listed in their area's header.
 *
 * Invariants of struct pstore are stated at its fields: rot is held shared
 * by appends and exclusive by rotation; mu guards the lists of blocks and
 * heads and the series counts; compact_mu lets one compaction run at a time.
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

/* ---- errors (pstore_errors.c) ----------------------------------------------------
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

/* ---- limits (limits.c) ---------------------------------------------------- */

void pstore_limits_resolve(const struct pstore_limits *in, struct pstore_limits *out);

/* ---- the store (pstore.c) -------------------------------------------------- */

struct pstore_block;
struct pstore_head;
struct pstore_wal;
struct pstore_keycount;
struct pstore_unbounded;
struct pstore_index;

/* Decoded block data under a byte budget (cache.c; its functions are in
 * pstore_catalog.h).  lru holds a reference to each block with data. */
struct pstore_cache {
	pthread_mutex_t mu;
	size_t budget, used;
	EMBER_VEC(struct pstore_block *) lru; /* referenced blocks with data */
	uint64_t tick;
	/* seeds the stack keys of the data it loads (random at each
	 * open: keys are never written) */
	struct ember_hash_key stack_seed;
};

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
	EMBER_VEC(struct pstore_block *) rollups; /* live rollups (rollup_catalog.c) */
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
		compaction_errors, wal_torn_bytes, rollups_built, rollup_drops, profiles_read,
		zero_drops, rows_bytes_read;
	/* opts.shared: the block index (block_index.c); NULL otherwise */
	struct pstore_index *index;
	/* opts.shared with io.renew and io.mtime: this writer's lease
	 * (takeover.c).  lease_sent: CLOCK_MONOTONIC ns when the last renewal
	 * that succeeded was sent; fenced: another store claimed this
	 * writer's log, so appends fail. */
	bool leases;
	atomic_llong lease_sent;
	atomic_bool fenced;
	/* threads the queries may still start (query_workers.c) */
	atomic_int query_spare;
};

int64_t pstore_now(const struct pstore *s);
/* The partition start of time t. */
int64_t pstore_partition_of(const struct pstore *s, int64_t t);
/* Start the active head and its segment (next_seq). */
int pstore_open_segment(struct pstore *s);

#endif /* EMBER_PSTORE_INTERNAL_H */
