/*
 * store.h - Ember's debuginfo store: files keyed by GNU build ID.
 *
 * Layout of a data directory (docs/store-format.md has the byte layout):
 *   DIR/db/           RocksDB: artifact records, source records
 *   DIR/blobs/xx/SHA  artifact bytes, content-addressed by sha256
 *   DIR/derived/xx/SHA derived artifacts' bytes (unwind tables, indexes)
 *   DIR/tmp/          blobs being written; emptied at every open
 *   DIR/pins/BUILD_ID the derived artifacts that serve a build ID (below)
 *   DIR/lock          held (flock) by the process that has the store open
 *
 * Crash safety: a blob is written under a temporary name, fsynced, renamed
 * into blobs/ (and the directory fsynced), and only then recorded in
 * RocksDB with a synced write.  A crash at any point leaves either the
 * whole artifact, recorded, or an unreferenced file that no lookup finds.
 *
 * Several candidates are kept per build ID (each distinct sha256 uploaded
 * under it); store_find_best() picks the one to serve for a purpose, so an
 * executable with only a symbol table never hides a full DWARF file.
 *
 * The store validates nothing about ELF: callers inspect a sealed blob
 * (elf-inspect) and pass what they found in struct store_artifact.
 * Thread safety: all functions may be called concurrently on one store;
 * a struct store_blob belongs to one thread at a time.
 */
#ifndef EMBER_STORE_H
#define EMBER_STORE_H

#include "common.h"

#include <stdbool.h>
#include <stdint.h>

struct store;
struct store_blob;

#define STORE_SHA256_HEX 65 /* 64 hex digits and a NUL */
#define STORE_BUILD_ID_HEX (2 * EMBER_BUILD_ID_MAX + 1)
#define STORE_NAME_MAX 256

/* What an artifact was uploaded as; a record can carry several. */
enum store_kind {
	STORE_KIND_DEBUGINFO = 1 << 0,
	STORE_KIND_EXECUTABLE = 1 << 1,
	STORE_KIND_DERIVED = 1 << 2,	/* set by store_find_derived(): its blob is
					   in derived/, not blobs/ */
};

/* What a lookup wants: the debuginfod endpoint, or symbols for Ember. */
enum store_want {
	STORE_WANT_DEBUGINFO,  /* must carry DWARF (flags & want_dwarf_flag) */
	STORE_WANT_EXECUTABLE, /* must carry code */
	STORE_WANT_SYMBOLS,    /* anything with names: DWARF > symtab > dynsym */
};

/*
 * The properties a ranking needs, as bits the caller sets from its own
 * inspection (elf-inspect's INSPECT_* values are the same bits).
 */
enum store_feature {
	STORE_HAS_DWARF = 1 << 0,
	STORE_HAS_SYMTAB = 1 << 1,
	STORE_HAS_DYNSYM = 1 << 2,
	STORE_HAS_GOPCLNTAB = 1 << 5,
	STORE_HAS_TEXT = 1 << 7,
};

/* Where a file came from: only what upstream sent may be evicted. */
enum store_origin {
	STORE_FROM_UPLOAD = 0,
	STORE_FROM_UPSTREAM = 1,
};

/* One candidate for a build ID.  Plain data; copy freely. */
struct store_artifact {
	char build_id[STORE_BUILD_ID_HEX]; /* lowercase hex */
	char sha256[STORE_SHA256_HEX];     /* lowercase hex of the content */
	unsigned kinds;                    /* enum store_kind bits */
	unsigned flags;                    /* enum store_feature (and more) bits */
	int dwarf_version;                 /* 0 without DWARF */
	uint64_t size;                     /* bytes */
	int64_t mtime;                     /* first upload, seconds since epoch */
	char name[STORE_NAME_MAX];         /* file name it was uploaded as */
	unsigned origin;                   /* enum store_origin: an upload of the same
					      content makes a fetched file an upload */
};

struct store_stats {
	uint64_t artifacts;     /* candidate records */
	uint64_t sources;       /* source files stored */
	uint64_t blob_bytes;    /* bytes of distinct blobs recorded */
	uint64_t upstream_bytes; /* of which fetched from upstream (evictable) */
	uint64_t evictions;     /* records evicted for the upstream quota */
};

/*
 * Open (creating if needed) the store in dir.  Leftover temporary blobs of
 * a crashed run are removed.  On success *out is the caller's, freed with
 * store_free().  Returns 0 or a negative errno: -EBUSY when another
 * process has dir open, -EIO (reason logged) when RocksDB refuses,
 * -ENOSYS when RocksDB cannot be loaded.
 */
int store_open(const char *dir, struct store **out);
void store_free(struct store *s);

/*
 * store_open() in parts, for a server that should listen before its
 * metadata is readable.  store_new() locks dir, makes its folders and
 * returns; store_open_begin() loads and opens RocksDB on a thread of the
 * store's own (begun by the first function that needs it otherwise).
 * Every function that reads or writes records waits for that open (and
 * fails with its error); blob files (store_blob_open/path) and pins work
 * at once.  store_wait() waits and returns the open's result;
 * store_is_open() says, without waiting, whether it succeeded.
 *
 * Loading RocksDB holds the dynamic loader's lock for milliseconds, and
 * pthread_create() waits for that lock: a server creates its threads
 * before it calls store_open_begin().
 */
int store_new(const char *dir, struct store **out);
int store_open_begin(struct store *s);
int store_wait(struct store *s);
bool store_is_open(struct store *s);

/* ---- writing blobs ---------------------------------------------------- */

/* Start a blob in DIR/tmp.  *out is the caller's until committed or
 * discarded. */
int store_blob_begin(struct store *s, struct store_blob **out);
/* Append bytes; -ENOSPC / -EFBIG / -EIO when the disk refuses. */
int store_blob_write(struct store_blob *b, const void *data, size_t len);
/* Append the whole of the open file fd, read from offset 0 (pread: fd's
 * own offset is left alone); a failed read is its -errno, never a short
 * blob. */
int store_blob_write_fd(struct store_blob *b, int fd);
/* Finish writing: fsync, and the sha256 and size of what was written. */
int store_blob_seal(struct store_blob *b, char sha256[STORE_SHA256_HEX],
		    uint64_t *size);
/* The blob's file, open read-write, for inspecting a sealed blob.  Owned by
 * the blob: valid until commit or discard. */
int store_blob_fd(const struct store_blob *b);
/* Remove the temporary file and free b.  NULL is fine. */
void store_blob_discard(struct store_blob *b);

/*
 * Commit a sealed blob as a candidate for a->build_id, with the source
 * file names its DWARF references (canonical absolute paths; may be 0).
 * a->sha256 and a->size must be what store_blob_seal() returned.  The
 * blob is consumed (freed) whatever the result.  *is_new says whether the
 * record is new; uploading the same content again adds only its kind.
 * Returns 0 or a negative errno.
 */
int store_add_artifact(struct store *s, struct store_blob *b,
		       const struct store_artifact *a,
		       const char *const *source_names, size_t n_names,
		       bool *is_new);

/* ---- reading ---------------------------------------------------------- */

/*
 * A number that grows whenever an artifact record is written (a new
 * candidate, or a new kind for one): what store_find_best() answers can
 * have changed only if it did.  Cheap (an atomic load).
 */
uint64_t store_generation(struct store *s);

/*
 * The best candidate of build_id for want into *out: 0; -ENOENT when the
 * store holds none; or the negative errno of a store that cannot read its
 * records (-EIO, logged, or the open's error): never -ENOENT for that, so
 * a caller can tell "not here" from "cannot say".  The same holds for
 * every reading function below.
 */
int store_find_best(struct store *s, const char *build_id,
		    enum store_want want, struct store_artifact *out);
/*
 * What an error of a reading function (store_find_*()) means to whoever
 * asked: -ENOENT EMBER_ERRK_NOT_FOUND (the store holds none), any other
 * errno ember_errkind_of_errno() (it cannot say: unavailable, never a
 * 404).  A file a record names that is gone is the store's failure, not
 * a miss: callers that open one turn its -ENOENT into -EIO first.
 */
enum ember_errkind store_error_kind(int err);

/*
 * What a file derived from build_id's artifacts (a symbol index, an unwind
 * table) is made from: the best executable (program headers, symbols,
 * .eh_frame) and the best debug file, the latter only when it is another
 * file than the executable (an unstripped binary is both).
 */
struct store_pair {
	struct store_artifact exe, dbg;
	bool has_exe, has_dbg;
};
/* 0 and *out (both has_ false when nothing is stored), or the negative
 * errno of a store that cannot read its records (*out untouched). */
int store_find_pair(struct store *s, const char *build_id, struct store_pair *out);

/* Every candidate of build_id, in sha256 order; a non-zero return of cb
 * stops the walk and is returned.  A store that cannot read its records:
 * its negative errno, possibly after some calls of cb. */
int store_list(struct store *s, const char *build_id,
	       int (*cb)(const struct store_artifact *a, void *arg), void *arg);

/*
 * Every candidate of every build ID, in (build ID, sha256) order, from the
 * first build ID greater than `after` (NULL or "": from the first): what a
 * listing pages through.  cb as for store_list().
 */
int store_list_all(struct store *s, const char *after,
		   int (*cb)(const struct store_artifact *a, void *arg), void *arg);
/* How many source paths the DWARF of build_id's candidates names, and how
 * many of those files are stored: 0, or the store's error. */
int store_count_sources(struct store *s, const char *build_id, uint64_t *named,
			uint64_t *stored);

/* Open a recorded blob (an uploaded or fetched file) read-only; the fd is
 * the caller's.  0 or -errno. */
int store_blob_open(struct store *s, const char *sha256, int *fd);

/* The file name of a recorded blob, for libraries that open paths. */
int store_blob_path(struct store *s, const char *sha256, char *out, size_t size);

/* The same for the blob of a derived artifact (derived/, a namespace of
 * its own: dropping one never touches an uploaded file of equal bytes). */
int store_derived_open(struct store *s, const char *sha256, int *fd);
int store_derived_path(struct store *s, const char *sha256, char *out, size_t size);
/* Open what a found artifact names, in its namespace (STORE_KIND_DERIVED). */
int store_artifact_open(struct store *s, const struct store_artifact *a, int *fd);

/* Whether any candidate of build_id names path as a source: 0, -ENOENT,
 * or a store error. */
int store_source_named(struct store *s, const char *build_id,
		       const char *path);

/* Commit a sealed blob as the content of source path of build_id (which
 * must be named); consumes b like store_add_artifact(). */
int store_add_source(struct store *s, struct store_blob *b,
		     const char *build_id, const char *path,
		     const char sha256[STORE_SHA256_HEX], uint64_t size,
		     unsigned origin, bool *is_new);

/* The stored content of source path of build_id: sha256, size, mtime and
 * name (the path's base name) in *out.  0, -ENOENT (none, or a damaged
 * record: docs/store-format.md), or a store error. */
int store_find_source(struct store *s, const char *build_id, const char *path,
		      struct store_artifact *out);

/*
 * Derived artifacts: files the server computes from what is stored (an
 * unwind table, ...), kept under a name `what` that encodes everything
 * they were computed from (format version, input sha256s), so a change of
 * input is a new name.  Same contract as store_add_source().  A name's
 * kind is what comes before its first '-' ("symidx-v1-..."): a derived
 * artifact is made for its build ID's current best inputs, so recording
 * one supersedes the others of its kind and build ID, whose records (and
 * pins) go at once and whose blobs go once no record names them.
 */
int store_add_derived(struct store *s, struct store_blob *b, const char *build_id,
		      const char *what, const char sha256[STORE_SHA256_HEX],
		      uint64_t size, bool *is_new);
int store_find_derived(struct store *s, const char *build_id, const char *what,
		       struct store_artifact *out);
/* Writes a derived artifact's bytes into b (store_blob_write): 0 or a
 * negative errno. */
typedef int (*store_produce_fn)(void *arg, struct store_blob *b);
/* A new blob filled by produce, sealed and committed as derived artifact
 * what of build_id: 0, or the first negative errno (nothing recorded). */
int store_put_derived(struct store *s, const char *build_id, const char *what,
		      store_produce_fn produce, void *arg);
/* Forget a derived artifact and remove its blob (derived blobs are never
 * shared with uploads): for one found damaged, to be computed again.
 * 0, -ENOENT, or another negative errno. */
int store_drop_derived(struct store *s, const char *build_id, const char *what);

/* Zero until the store is open. */
void store_get_stats(struct store *s, struct store_stats *out);

/* ---- the eBPF profiler's file IDs (file_id.c) ------------------------------
 *
 * The OpenTelemetry eBPF profiler names a mapping's file by its own file
 * ID (process.executable.build_id.htlhash): the first 16 bytes of a
 * SHA-256 over the file's first and last 4 KiB and its size (file_id.c
 * gives the exact definition), 32 lowercase hex digits.  The store
 * computes it for every artifact that carries code (STORE_HAS_TEXT) when
 * store_add_artifact() records it (an upload, a fetch from upstream), and
 * once, after the open, for the executables an older store holds; the
 * index entry goes with the artifact (store_evict_upstream()).  A debug
 * file is never hashed: the profiler hashes the file it mapped.
 */
#define STORE_FILE_ID_BYTES 16
#define STORE_FILE_ID_HEX (2 * STORE_FILE_ID_BYTES + 1)

/* The file ID of the size bytes of open file fd (read with pread: fd's
 * offset is left alone) into out: 0, or -EIO when the file is shorter
 * than size, or a read's negative errno. */
int store_file_id_fd(int fd, uint64_t size, char out[STORE_FILE_ID_HEX]);
/* s as a file ID (32 hex digits, either case) in lowercase into out:
 * false, out untouched, when it is not one. */
bool store_file_id_normalize(const char *s, char out[STORE_FILE_ID_HEX]);
/* The build ID of the executable whose file ID is file_id (either case):
 * 0 and build_id; -EINVAL when file_id is not one; -ENOENT when no
 * executable stored has it; or the store's error (as store_find_best()). */
int store_find_file_id(struct store *s, const char *file_id, char build_id[STORE_BUILD_ID_HEX]);
/* cb for each file ID indexed for build_id's candidates (file_id valid
 * during the call); a non-zero cb return stops the walk and is returned,
 * as is the store's error. */
int store_list_file_ids(struct store *s, const char *build_id,
			int (*cb)(const char *file_id, void *arg), void *arg);

/* ---- the upstream quota (evict.c) ------------------------------------------ */

/*
 * Evict what upstream sent (STORE_FROM_UPSTREAM artifacts and sources),
 * oldest first, until it takes at most quota bytes; uploads are never
 * evicted, nor the newest fetched record (so one file larger than the
 * quota stays until the next fetch).  An evicted record's blob goes once
 * no record names it; the build ID's pins and the derived artifacts made
 * from it go too, and the store generation moves.  Returns the number of
 * records evicted, or the store's error.
 */
int store_evict_upstream(struct store *s, uint64_t quota);

/* ---- garbage (gc.c) --------------------------------------------------------- */

struct store_gc_stats {
	uint64_t files, bytes;	/* blob files removed */
};
/*
 * Remove the blob files (uploads' and derived artifacts') that no record
 * names and that are older than grace_s seconds (a writer commits a blob
 * before the record naming it).  Run by the store when it opens (with an
 * hour's grace).  0, or the store's error (nothing removed then).
 */
int store_collect_garbage(struct store *s, uint64_t grace_s, struct store_gc_stats *st);

/* ---- pins ----------------------------------------------------------------- */

/*
 * A pin names, in a small file outside RocksDB (DIR/pins/BUILD_ID), the
 * derived artifact that serves build_id for a purpose (kind, e.g.
 * "symidx"), so that a server can map it while the store is still opening.
 * Pins are hints kept true by three rules: storing an artifact of
 * build_id removes its pins first (durably); dropping a derived artifact
 * removes the pin naming it; and store_pin_derived() refuses with -ESTALE
 * when any artifact was stored since gen, the store_generation() the
 * caller read before it chose the derived artifact's inputs.  Callers
 * still check what they loaded through a pin once the store is open.
 */
struct store_pin {
	char what[STORE_NAME_MAX];
	char sha256[STORE_SHA256_HEX]; /* its blob */
};
/* Pin derived artifact what (recorded) as build_id's kind: 0 or -errno. */
int store_pin_derived(struct store *s, const char *build_id, const char *kind,
		      const char *what, uint64_t gen);
/* The pin of build_id's kind in *out: 0, or -ENOENT.  Never waits. */
int store_find_pin(struct store *s, const char *build_id, const char *kind,
		   struct store_pin *out);

/* ---- a durable backend under the store (backend.c; issue 18) ---------------
 *
 * Without a backend the store is its data directory (RocksDB records and
 * blob directories).  With one (an S3 bucket: bucket/bucket.h), the
 * backend holds every record and blob, and the data directory becomes its
 * index and cache (docs/object-storage-layout.md):
 *   - a write (store_add_artifact, _add_source, _add_derived) puts the blob
 *     and then the record in the backend before the local record, and
 *     fails, recording nothing locally, when the backend fails;
 *   - a lookup of a build ID's candidates first records locally what the
 *     backend lists that the store does not hold (at most once per
 *     refresh_ms per build ID, always when nothing is held locally);
 *   - a source or derived record missing locally is read from the backend;
 *   - a blob missing locally (never fetched, or dropped from the cache) is
 *     fetched into DIR/tmp, checked, and moved into place before it is
 *     opened; concurrent opens of one missing blob wait for one fetch.
 * A backend error is returned as such, never as -ENOENT.
 */

/*
 * An artifact record's bytes, as the store keeps them in RocksDB and a
 * backend may keep them (docs/store-format.md, "RocksDB keys and values"):
 * every field but build_id and sha256, which the key holds.  Encode
 * returns the length (0: size too small; STORE_RECORD_MAX always fits);
 * decode checks every length: 0, or -EINVAL for bytes that are not one.
 */
#define STORE_RECORD_MAX (32 + STORE_NAME_MAX)
size_t store_artifact_encode(const struct store_artifact *a, uint8_t *out, size_t size);
int store_artifact_decode(const uint8_t *p, size_t len, struct store_artifact *a);

/* Which keyed record: a source file's, or a derived artifact's. */
enum store_keyed_class {
	STORE_KEYED_SOURCE,
	STORE_KEYED_DERIVED,
};

/* What a backend's listing says of one candidate of a build ID, merged
 * over everything written for it (kinds: the union; origin: an upload if
 * any upload).  ref is the backend's name for one of its records, for
 * get_candidate; valid during the callback only. */
struct store_backend_cand {
	char sha256[STORE_SHA256_HEX];
	unsigned kinds, origin;
	const char *ref;
};

/*
 * The operations; each returns 0 or a negative errno, -ENOENT only for
 * what the backend does not hold, and must be safe to call from several
 * threads.  Strings passed in are borrowed for the call.
 *  put_blob:   make size bytes of fd (from offset 0) durable as blob
 *              sha256 (never whole in memory); an existing one is success.
 *  get_blob:   write blob sha256 to fd (empty, regular) and its size to
 *              *size, the bytes checked against sha256 (-EBADMSG).
 *  put_candidate: record candidate a (a->kinds, a->origin: this upload's)
 *              of a->build_id and the n source names its DWARF names.
 *  list_candidates: cb for each candidate of build_id (merged facts); a
 *              non-zero cb return stops the listing and is returned.
 *  get_candidate: the record ref names into *out (all fields but kinds
 *              and origin, which the listing gave).
 *  get_names:  cb for each source name of candidate sha256 of build_id.
 *  put_keyed / get_keyed: the record a of (cls, build_id, rest), rest the
 *              source path or the derived name; a->sha256 names its blob.
 *              Keyed records are written once: when the backend holds
 *              one already, put_keyed succeeds and sets *a to it, which
 *              the store then records (so every replica agrees).
 *  release:    free ctx (may be NULL).
 */
struct store_backend {
	size_t sz; /* sizeof(struct store_backend) */
	void *ctx;
	unsigned refresh_ms; /* a build ID's listing is reused this long */
	int (*put_blob)(void *ctx, const char *sha256, int fd, uint64_t size);
	int (*get_blob)(void *ctx, const char *sha256, int fd, uint64_t *size);
	int (*put_candidate)(void *ctx, const struct store_artifact *a,
			     const char *const *names, size_t n);
	int (*list_candidates)(void *ctx, const char *build_id,
			       int (*cb)(void *arg, const struct store_backend_cand *c),
			       void *arg);
	int (*get_candidate)(void *ctx, const char *build_id, const char *ref,
			     struct store_artifact *out);
	int (*get_names)(void *ctx, const char *build_id, const char *sha256,
			 int (*cb)(void *arg, const char *path), void *arg);
	int (*put_keyed)(void *ctx, enum store_keyed_class cls, const char *build_id,
			 const char *rest, struct store_artifact *a);
	int (*get_keyed)(void *ctx, enum store_keyed_class cls, const char *build_id,
			 const char *rest, struct store_artifact *out);
	void (*release)(void *ctx);
};

/* Put the store on backend be (copied; the store owns be->ctx from now
 * on, released at store_free, also when this fails).  Call it before
 * store_open_begin() and before any other thread uses the store: 0,
 * -EINVAL (a backend already set, or a missing operation). */
int store_set_backend(struct store *s, const struct store_backend *be);

/*
 * With a backend, count the local blob files (uploads', fetched and
 * derived ones) in bounded cache c (common.h's struct ember_fcache,
 * whose budget other users may share: the server's profile blocks), the
 * least recently opened dropped first past its budget and fetched again
 * when next opened; its grace keeps a file found by store_blob_path()
 * there until its caller opens it.  Records are kept.  What blobs/ and
 * derived/ hold is counted now.  c is borrowed: it must outlive the
 * store.  Call after store_set_backend() and before any other thread uses
 * the store: 0, -EINVAL (no backend, a cache already set), or
 * ember_fcache_add_dir's error.
 */
int store_set_cache(struct store *s, struct ember_fcache *c);

/* Counters of the backend's traffic (zero without one). */
struct store_backend_stats {
	uint64_t listings;	 /* build IDs listed */
	uint64_t fetches;	 /* blobs fetched */
	uint64_t fetch_bytes;
	uint64_t fetch_waits;	 /* opens that waited for another's fetch */
	uint64_t cache_bytes;	 /* blob files kept (with a cache) */
	uint64_t cache_evictions; /* blob files dropped for its budget */
};
void store_get_backend_stats(struct store *s, struct store_backend_stats *out);

#endif /* EMBER_STORE_H */
