/*
 * pstore_catalog.h - the blocks a store holds and their data.
 *
 *   block_catalog.c  blocks opened, read by range, listed, superseded
 *   cache.c    decoded block data under a byte budget (struct pstore_cache
 *              is in pstore_internal.h: the store holds one)
 *
 * Invariants: s->blocks is sorted by partition then name and changes
 * under s->mu only; a block is freed (and, when doomed, its object
 * deleted) at its last unref; a block's data is loaded under its mu and
 * the cache owns the block's reference to it.
 */
#ifndef EMBER_PSTORE_CATALOG_H
#define EMBER_PSTORE_CATALOG_H

#include "pstore_block.h"

/* ---- catalog (block_catalog.c, cache.c) -------------------------------------- */

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
	bool counted;		  /* its series in s->keys (recent: pstore_catalog_add) */
	const struct pstore_blockio *io;
	pthread_mutex_t mu;	  /* data */
	struct pstore_bdata *data;	  /* cached (cache.c owns the reference) */
	struct pstore_bdata *profiles;	  /* cached without its dictionary, while
					     data is not (cache.c's too) */
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

/* The block's data, loading it if needed: a reference to unref. */
int pstore_cache_data(struct pstore_cache *c, struct pstore_block *b, struct pstore_bdata **out,
		  struct ember_diag *d);
/* The block's profiles, totals, coverage and stream directory without
 * its dictionary (scans of totals): the cached data when it is loaded,
 * else read without the dictionary and kept in c (NULL: for the caller
 * alone), so that a replica's next series query fetches nothing.  A
 * reference to unref; its dictionary may be empty. */
int pstore_cache_profiles(struct pstore_cache *c, struct pstore_block *b,
			  struct pstore_bdata **out, struct ember_diag *d);
/* Read and decode a block's data (pstore_block_load_profiles: all but
 * the dictionary, left empty); a new reference. */
int pstore_block_load(struct pstore_block *b, struct pstore_bdata **out, struct ember_diag *d);
int pstore_block_load_profiles(struct pstore_block *b, struct pstore_bdata **out,
			       struct ember_diag *d);
/* What a query reads a block's streams with: a zstd context (made once
 * a block: making one costs more than decompressing a small stream) and
 * a window of the ROWS section read at once, [off, off + win.len), from
 * which a stream it holds is taken without a read of its own
 * (pstore_block_read_rows; an empty window holds none). */
struct pstore_rows_reader {
	struct ZSTD_DCtx_s *z;
	uint64_t off;
	struct ember_buf win;
	uint64_t bytes; /* read through it: its windows and streams read alone */
};
/* A stream's bytes of block b (range read; st one of bd's, taken from
 * its decoded rows when it has them: NULL, read), decompressed into out.
 * _frames_z: stream si of its data bd, only the rows of its frames
 * [f0, f1) (a framed block's; f1 SIZE_MAX: to the end:
 * pstore_stream_load_frames), through the caller's reader (its context
 * and window; NULL: neither), reading only their bytes once bd's frame
 * table knows where they lie (pstore_frames_span), else the whole
 * stream, which teaches the table. */
int pstore_block_read_stream(struct pstore_block *b, const struct pstore_bdata *bd,
			     const struct pstore_stream *st, struct ember_buf *out,
			     struct ember_diag *d);
int pstore_block_read_frames_z(struct pstore_block *b, struct pstore_bdata *bd, size_t si,
			       size_t f0, size_t f1, struct pstore_rows_reader *rd,
			       struct ember_buf *out, struct ember_diag *d);
/* Bytes [off, off + len) of b's ROWS section into rd's window. */
int pstore_block_read_rows(struct pstore_block *b, uint64_t off, uint64_t len,
			   struct pstore_rows_reader *rd, struct ember_diag *d);
void pstore_cache_drop(struct pstore_cache *c, struct pstore_block *b);
void pstore_cache_release(struct pstore_cache *c);

/* A block's time span (a corrupt one: its whole partition). */
void pstore_block_span(const struct pstore *s, const struct pstore_block *b, int64_t *lo,
		       int64_t *hi);
/* Read the blocks at open (block_catalog.c); replay the log (recover.c). */
int pstore_catalog_load(struct pstore *s, struct ember_diag *d);
/* Add a block to the store's list (under s->mu): its series counted
 * when it has data within the series window (pstore_limits). */
int pstore_catalog_add(struct pstore *s, struct pstore_block *b);
/* Uncount the series of the blocks whose data all left the series
 * window (under s->mu; each compaction pass). */
void pstore_catalog_age(struct pstore *s);
/* Note a block's label values for the unbounded-label check (a block
 * read at open). */
void pstore_catalog_seed(struct pstore *s, const struct pstore_block *b);
/* Take a block out of the list (under s->mu), deleted at its last unref. */
void pstore_catalog_remove(struct pstore *s, size_t i);

/* Take rollup i out of s->rollups (under s->mu), deleted at its last
 * unref (rollup_catalog.c). */
void pstore_rollups_remove(struct pstore *s, size_t i);
/* At open (a local store): drop the rollups a crash left beside the
 * rollups that replaced them (rollup_catalog.c). */
void pstore_rollups_tidy(struct pstore *s);

EMBER_VEC_DEF(pstore_blocks, struct pstore_block *);
/* Drop the reference each block of v holds and free v (block_catalog.c). */
void pstore_blocks_release(struct pstore_blocks *v);

#endif /* EMBER_PSTORE_CATALOG_H */
