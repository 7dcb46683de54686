/*
 * store_internal.h - shared between the files of debuginfo-store/ only.
 */
#ifndef EMBER_STORE_INTERNAL_H
#define EMBER_STORE_INTERNAL_H

#include "store.h"

#include <pthread.h>
#include <rocksdb/c.h>
#include <stdatomic.h>

struct store {
	char *dir;
	int blobs_fd;              /* DIR/blobs */
	int tmp_fd;                /* DIR/tmp */
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_cache_t *cache;
	rocksdb_block_based_table_options_t *table_opts;
	rocksdb_writeoptions_t *wsync;   /* sync = true: acknowledgements */
	rocksdb_readoptions_t *ropts;
	pthread_mutex_t write_mu;        /* read-modify-write of records */
	_Atomic uint64_t n_artifacts;
	_Atomic uint64_t n_sources;
	_Atomic uint64_t blob_bytes;
	_Atomic uint64_t generation;     /* artifact records written */
};

/* ---- keys and records (record.c) ---------------------------------------- */

enum store_key_tag {
	STORE_TAG_ARTIFACT = 'A', /* A id \0 sha           -> artifact record */
	STORE_TAG_NAMED = 'N',    /* N id \0 path          -> "" */
	STORE_TAG_SOURCE = 'S',   /* S id \0 path          -> source record */
	STORE_TAG_DERIVED = 'D',  /* D id \0 what          -> derived record */
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

/* ---- blobs (blob.c) ------------------------------------------------------ */

/* Move a sealed blob to blobs/xx/SHA (fsyncing the directory) and free it.
 * An existing blob of the same content is kept. */
int store_blob_commit(struct store *s, struct store_blob *b, bool *existed);

/* ---- RocksDB helpers (store.c) ------------------------------------------ */

/* Read key; -ENOENT when absent.  *val is malloc'd, the caller's. */
int store_db_get(struct store *s, const char *key, size_t klen, char **val,
		 size_t *vlen);
/* Write a batch with sync, so it survives a crash once this returns. */
int store_db_write(struct store *s, rocksdb_writebatch_t *wb);
/* Call cb for each key with prefix; a non-zero cb return stops the walk. */
int store_db_scan(struct store *s, const char *prefix, size_t plen,
		  int (*cb)(const char *key, size_t klen, const char *val,
			    size_t vlen, void *arg),
		  void *arg);

#endif /* EMBER_STORE_INTERNAL_H */
