/*
 * store_internal.h - shared between the files of debuginfo-store/ only.
 */
#ifndef EMBER_STORE_INTERNAL_H
#define EMBER_STORE_INTERNAL_H

#include "store.h"

#include "rocksdb_lib.h"

#include <pthread.h>
#include <stdatomic.h>

struct store {
	char *dir;
	int blobs_fd;              /* DIR/blobs: uploaded and fetched files */
	int derived_fd;            /* DIR/derived: what the server computed */
	int tmp_fd;                /* DIR/tmp */
	int pins_fd;               /* DIR/pins (pins.c) */
	int lock_fd;               /* DIR/lock, flock'ed while open */
	pthread_t opener;          /* loads RocksDB and opens the DB */
	bool has_opener;           /* under open_mu */
	pthread_mutex_t open_mu;
	pthread_cond_t open_cv;
	bool opened;               /* the opener finished (under open_mu) */
	int open_err;              /* and its result */
	atomic_bool usable;        /* opened without error: read without the lock */
	struct store_rocksdb rdb;  /* valid once opened without error */
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_cache_t *cache;
	rocksdb_block_based_table_options_t *table_opts;
	rocksdb_writeoptions_t *wsync;   /* sync = true: acknowledgements */
	rocksdb_readoptions_t *ropts;
	pthread_mutex_t write_mu;        /* read-modify-write of records */
	pthread_mutex_t gc_mu;           /* one garbage collection at a time (gc.c) */
	_Atomic uint64_t n_artifacts;
	_Atomic uint64_t n_sources;
	_Atomic uint64_t blob_bytes;
	_Atomic uint64_t upstream_bytes; /* of records STORE_FROM_UPSTREAM */
	_Atomic uint64_t evictions;
	_Atomic uint64_t generation;     /* artifact records written */
	/* The backend (backend.c, fetch.c); has_backend is set before any
	 * other thread runs and never changes. */
	bool has_backend;
	struct store_backend be;
	pthread_mutex_t refresh_mu;      /* refreshed[] */
	struct ember_hash_key refresh_key;
	struct store_refresh_slot *refreshed; /* STORE_REFRESH_SLOTS */
	pthread_mutex_t fetch_mu;        /* fetching, and each fetch's state */
	pthread_cond_t fetch_cv;
	struct store_fetch *fetching;
	_Atomic uint64_t be_listings, be_fetches, be_fetch_bytes, be_fetch_waits;
	/* The bounded cache its blob files are counted in (store_set_cache;
	 * borrowed; NULL: unbounded, uncounted), and the namespaces of
	 * blobs/ and derived/ in it. */
	struct ember_fcache *fcache;
	int cache_blobs_ns, cache_derived_ns;
};

/* ---- keys and records (record.c) ---------------------------------------- */

enum store_key_tag {
	STORE_TAG_ARTIFACT = 'A', /* A id \0 sha           -> artifact record */
	STORE_TAG_NAMED = 'N',    /* N id \0 path          -> "" */
	STORE_TAG_SOURCE = 'S',   /* S id \0 path          -> source record */
	STORE_TAG_DERIVED = 'D',  /* D id \0 what          -> derived record */
	STORE_TAG_FILE_ID = 'F',  /* F file_id \0 id      -> sha256 hex (file_id.c) */
	STORE_TAG_HAS_FILE_ID = 'H', /* H id \0 sha        -> file_id */
	STORE_TAG_META = 'M',     /* M name \0            -> the store's own facts */
};

#define STORE_KEY_MAX (1 + STORE_BUILD_ID_HEX + 4096)

/* tag, id, NUL, rest (rest may be NULL: the prefix of all id's keys).
 * Returns the key length, or -ENAMETOOLONG. */
int store_key_make(char *key, enum store_key_tag tag, const char *id,
		   const char *rest);

/* Fixed little-endian encodings of the records; decode checks lengths. */
size_t store_record_encode(const struct store_artifact *a, uint8_t *out,
			   size_t size);
int store_record_decode(const uint8_t *p, size_t len, struct store_artifact *a);

/* ---- blobs under a key (keyed.c) ---------------------------------------- */

/* The blob recorded under (tag, build_id, rest): its sha256, size, mtime
 * and name in *out.  0, -ENOENT (none, or a damaged record), or a store
 * error. */
int store_keyed_find(struct store *s, enum store_key_tag tag, const char *build_id,
		     const char *rest, struct store_artifact *out);
/* Commit sealed blob b and record it under (tag, build_id, rest) as name;
 * consumes b like store_add_artifact().  *is_new: there was none. */
int store_keyed_add(struct store *s, struct store_blob *b, enum store_key_tag tag,
		    const char *build_id, const char *rest, const char *name,
		    const char sha256[STORE_SHA256_HEX], uint64_t size, unsigned origin,
		    bool *is_new);

/* ---- the file-ID index (file_id.c) ------------------------------------- */

struct store_batch; /* below */

/* Index artifact a (its build_id and sha256) under file_id, in wb. */
void store_file_id_put(struct store_batch *wb, const struct store_artifact *a,
		       const char *file_id);
/* Delete in wb the index entry of candidate sha256 of build_id, if any
 * (read now): 0 or the store's error. */
int store_file_id_drop(struct store *s, struct store_batch *wb, const char *build_id,
		       const char *sha256);
/* Index the executables an older store holds, once (a key remembers it),
 * on the opening thread before anyone reads a record; a blob not here (a
 * backend's, not cached) is skipped.  0 or the store's error (the store
 * is not opened then, as for a records walk that fails). */
int store_file_id_backfill(struct store *s);

/* ---- blobs (blob.c) ------------------------------------------------------ */

/* write(2) all of data to fd (retrying short writes and EINTR): 0, or the
 * negative errno of the first failure (-EIO for a write of nothing). */

/* Move a sealed blob to NS/xx/SHA (fsyncing the directory) and free it,
 * NS being blobs/ (ns_fd s->blobs_fd) or derived/ (s->derived_fd).  An
 * existing blob of the same content is kept. */
int store_blob_commit(struct store *s, struct store_blob *b, int ns_fd, bool *existed);

/* ---- the backend (backend.c, fetch.c) ------------------------------------ */

/* The build IDs listed lately, direct-mapped by a keyed hash of the ID:
 * an entry is reused for be.refresh_ms when its listing found a
 * candidate (a build ID with none is always listed again), and while one
 * thread lists it again (listing) the others answer from what is
 * recorded. */
#define STORE_REFRESH_SLOTS 1024
struct store_refresh_slot {
	char id[STORE_BUILD_ID_HEX];
	uint64_t at_ms;
	bool found, listing;
};

/* Record locally what the backend lists for build_id and the store does
 * not hold (records only: blobs come at their first open).  Skipped,
 * *listed false, when build_id was listed less than refresh_ms ago with a
 * candidate, unless force.  0 without a backend. */
int store_backend_refresh(struct store *s, const char *build_id, bool force,
			  bool *listed);
/* With a backend: blob b (sealed) and candidate a, or keyed record a of
 * (tag, build_id, rest) (*a becomes the backend's, store.h), into the
 * backend.  0 without one. */
int store_backend_put_candidate(struct store *s, struct store_blob *b,
				const struct store_artifact *a,
				const char *const *names, size_t n);
int store_backend_put_keyed(struct store *s, struct store_blob *b, enum store_key_tag tag,
			    const char *build_id, const char *rest,
			    struct store_artifact *a);
/* The backend's keyed record of (tag, build_id, rest) into *out. */
int store_backend_get_keyed(struct store *s, enum store_key_tag tag, const char *build_id,
			    const char *rest, struct store_artifact *out);
/* Fetch blob sha256 from the backend into namespace ns_fd (blobs_fd or
 * derived_fd), once however many threads ask at the same time: 0 when
 * it is in place, or the fetch's error. */
int store_backend_fetch(struct store *s, const char *sha256, int ns_fd);
void store_backend_release(struct store *s);

/* Tell the bounded cache (backend.c; nothing without one) that blob
 * sha256 of namespace ns_fd (blobs_fd or derived_fd) was opened, or
 * (written) committed with size bytes; it evicts past its budget. */
void store_cache_use(struct store *s, int ns_fd, const char *sha256, uint64_t size,
		     bool written);

/* Seal a blob whose bytes were written to its fd by someone else (a
 * fetch that checked them against sha256): fsync, and take sha256 and
 * size as the blob's. */
int store_blob_seal_fetched(struct store_blob *b, const char *sha256, uint64_t size);

/* Record candidate a locally (merged with what is recorded: *a becomes
 * the merged record), with the source names and its file ID (NULL:
 * none), clearing the build ID's pins first: store_add_artifact()
 * without the blob. */
int store_record_candidate(struct store *s, struct store_artifact *a,
			   const char *const *source_names, size_t n_names,
			   const char *file_id, bool *is_new);
/* Record keyed record a (a->sha256 its blob) locally. */
int store_keyed_record(struct store *s, enum store_key_tag tag, const char *build_id,
		       const char *rest, const struct store_artifact *a, bool *is_new);

/* ---- garbage (gc.c) ------------------------------------------------------- */

/* Seconds a blob file is kept after its last commit or touch although no
 * record names it yet: a writer's gap from commit to record is short. */
#define STORE_COMMIT_GRACE_S 2

/* A set of sha256s, sorted once filled (store_named_blobs). */
struct sha_set {
	char (*v)[STORE_SHA256_HEX];
	size_t n, alloc;
};
/* The blobs the records of tags ("AS": uploads' namespace, "D":
 * derived) name, into set (the caller frees set->v). */
int store_named_blobs(struct store *s, const char *tags, struct sha_set *set);
bool store_sha_set_has(const struct sha_set *set, const char *sha);
/* Add a sha256 (64 hex digits, not NUL-terminated); unsorted. */
int store_sha_set_add(struct sha_set *set, const char *sha);
/* Remove NS/path when it is older than grace_s (adding its size to
 * *bytes): true when removed. */
bool store_remove_old(int ns_fd, const char *path, uint64_t grace_s, uint64_t *bytes);

/* Drop the derived artifacts of id that what supersedes (same kind, other
 * name): records and pins at once, blobs no record names. */
int store_derived_supersede(struct store *s, const char *id, const char *what);
/* Give each derived record whose blob an older version kept under blobs/
 * the same file under derived/ (a hard link); on the opening thread. */
int store_migrate_derived(struct store *s);

/* ---- pins (pins.c) -------------------------------------------------------- */

/* Remove every pin of build_id, durably (under write_mu, before an
 * artifact record of build_id is written): 0 or a negative errno. */
int store_pins_clear(struct store *s, const char *build_id);
/* The pin of kind in text, a pin file's bytes (NUL-terminated): 0 and
 * *out, or -ENOENT.  Lines that do not parse are skipped. */
int store_pins_find(const char *text, const char *kind, struct store_pin *out);
/* Remove the pin naming derived artifact what of build_id, if any (under
 * write_mu, before the artifact is dropped). */
int store_pin_drop(struct store *s, const char *build_id, const char *what);

/* ---- RocksDB helpers (store.c) ------------------------------------------ */

/* Each of these waits until the DB is open, and fails with the open's
 * error if it could not be. */

/* Read key; -ENOENT when absent.  *val is malloc'd, the caller's. */
int store_db_get(struct store *s, const char *key, size_t klen, char **val,
		 size_t *vlen);

/* A write batch.  After begin returns 0, commit must follow: it writes
 * the batch with sync (it survives a crash once this returns) and frees
 * it. */
struct store_batch {
	struct store *s;
	rocksdb_writebatch_t *wb;
};
int store_batch_begin(struct store *s, struct store_batch *b);
void store_batch_put(struct store_batch *b, const char *key, size_t klen,
		     const char *val, size_t vlen);
void store_batch_delete(struct store_batch *b, const char *key, size_t klen);
int store_batch_commit(struct store_batch *b);
/* Drop a begun batch unwritten (instead of committing it). */
void store_batch_discard(struct store_batch *b);
/* store_db_get() and store_batch_begin() on the opening thread, the DB
 * open (no wait). */
int store_db_get_opened(struct store *s, const char *key, size_t klen, char **val,
			size_t *vlen);
void store_batch_begin_opened(struct store *s, struct store_batch *b);
/* store_db_scan() on the opening thread, the DB open (no wait). */
int store_db_scan_opened(struct store *s, const char *prefix, size_t plen,
			 int (*cb)(const char *key, size_t klen, const char *val, size_t vlen,
				   void *arg),
			 void *arg);
/* Call cb for each key with prefix; a non-zero cb return stops the walk. */
int store_db_scan(struct store *s, const char *prefix, size_t plen,
		  int (*cb)(const char *key, size_t klen, const char *val,
			    size_t vlen, void *arg),
		  void *arg);
/* The same from the first key at or after start (which begins with prefix). */
int store_db_scan_from(struct store *s, const char *prefix, size_t plen,
		       const char *start, size_t slen,
		       int (*cb)(const char *key, size_t klen, const char *val,
				 size_t vlen, void *arg),
		       void *arg);

#endif /* EMBER_STORE_INTERNAL_H */
