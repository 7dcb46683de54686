/*
 * store.c - opening a data directory: its lock and folders, the cleanup
 * of a crashed run, RocksDB (opened on a thread of its own), and the few
 * RocksDB calls the rest of the store uses, which wait for that open.
 *
 * RocksDB is tuned small: the store holds metadata only (a few hundred
 * bytes a candidate), so a 4 MB block cache and 4 MB memtables keep the
 * server's memory near that of elfutils' debuginfod.
 */
#include "store_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

enum ember_errkind store_error_kind(int err)
{
	switch (err) {
	case -ENOENT:
		return EMBER_ERRK_NOT_FOUND;
	default:
		return ember_errkind_of_errno(err);
	}
}

/* mkdir path (0700) unless it exists; a new one is made durable in its
 * parent (fsync), so a crash cannot lose the folder of acknowledged files. */
static int make_dir(const char *path)
{
	if (mkdir(path, 0700))
		return errno == EEXIST ? 0 : -errno;
	return ember_sync_parent(path);
}

static int open_subdir(const char *dir, const char *sub, int *fd)
{
	char path[4096];
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", dir, sub) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	err = make_dir(path);
	if (err)
		goto fail;
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd >= 0)
		return 0;
	err = -errno;
fail:
	pr_warn("store: cannot create '%s': %s", path, strerror(-err));
	return err;
}

/*
 * The data directory holds the upload token and files nobody else needs
 * to read: 0700.  One made by an older version (0755) is narrowed.
 */
static int make_private(const char *dir)
{
	struct stat st;
	int err = make_dir(dir);

	if (err || stat(dir, &st))
		return err ? err : -errno;
	if (!(st.st_mode & 077))
		return 0;
	if (chmod(dir, st.st_mode & 07700))
		return -errno;
	pr_info("store: '%s' was open to other users (mode %04o): now %04o", dir,
		(unsigned)(st.st_mode & 07777), (unsigned)(st.st_mode & 07700));
	return 0;
}

/* Temporary blobs of a crashed run were never acknowledged: drop them. */
static void clear_tmp(int tmp_fd)
{
	DIR *d = fdopendir(dup(tmp_fd));
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(tmp_fd, e->d_name, 0);
	closedir(d);
}

static int open_db(struct store *s)
{
	const struct store_rocksdb *r = &s->rdb;
	char path[4096];
	char *err = NULL;

	if (snprintf(path, sizeof(path), "%s/db", s->dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	s->opts = r->options_create();
	s->cache = r->cache_create_lru(4 << 20);
	s->table_opts = r->block_based_options_create();
	r->block_based_options_set_block_cache(s->table_opts, s->cache);
	r->options_set_block_based_table_factory(s->opts, s->table_opts);
	r->options_set_create_if_missing(s->opts, 1);
	r->options_set_write_buffer_size(s->opts, 4 << 20);
	r->options_set_max_open_files(s->opts, 128);
	r->options_set_keep_log_file_num(s->opts, 2);
	s->db = r->open(s->opts, path, &err);
	if (!s->db) {
		pr_warn("store: cannot open '%s': %s", path, err ? err : "unknown");
		r->free(err);
		return -EIO;
	}
	s->wsync = r->writeoptions_create();
	r->writeoptions_set_sync(s->wsync, 1);
	s->ropts = r->readoptions_create();
	return 0;
}

/*
 * -EIO (logged) when the iterator stopped on an error rather than at the
 * end of the keys: RocksDB's iterators turn invalid on an I/O error or a
 * corrupt block too, and only rocksdb_iter_get_error() tells the two apart.
 */
static int iter_error(const struct store_rocksdb *r, const rocksdb_iterator_t *it)
{
	char *err = NULL;

	r->iter_get_error(it, &err);
	if (!err)
		return 0;
	pr_warn("store: cannot read records: %s", err);
	r->free(err);
	return -EIO;
}

/* The walk of store_db_scan_from(), on an open DB. */
static int scan(struct store *s, const char *prefix, size_t plen, const char *start,
		size_t slen,
		int (*cb)(const char *key, size_t klen, const char *val, size_t vlen,
			  void *arg),
		void *arg)
{
	const struct store_rocksdb *r = &s->rdb;
	rocksdb_iterator_t *it = r->create_iterator(s->db, s->ropts);
	int ret = 0;

	for (r->iter_seek(it, start, slen); !ret && r->iter_valid(it); r->iter_next(it)) {
		size_t klen, vlen;
		const char *k = r->iter_key(it, &klen);
		const char *v = r->iter_value(it, &vlen);

		if (klen < plen || memcmp(k, prefix, plen) != 0)
			break;
		ret = cb(k, klen, v, vlen, arg);
	}
	if (!ret)
		ret = iter_error(r, it);
	r->iter_destroy(it);
	return ret;
}

static int count_record(const char *key, size_t klen, const char *val,
			size_t vlen, void *arg)
{
	struct store *s = arg;
	struct store_artifact a;

	if (key[0] == STORE_TAG_SOURCE) {
		s->n_sources++;
		if (vlen > STORE_SHA256_HEX - 1 &&
		    store_record_decode((const uint8_t *)val + STORE_SHA256_HEX - 1,
					vlen - STORE_SHA256_HEX + 1, &a) == 0 &&
		    a.origin == STORE_FROM_UPSTREAM)
			s->upstream_bytes += a.size;
	} else if (key[0] == STORE_TAG_ARTIFACT &&
		   store_record_decode((const uint8_t *)val, vlen, &a) == 0) {
		s->n_artifacts++;
		s->blob_bytes += a.size;
		if (a.origin == STORE_FROM_UPSTREAM)
			s->upstream_bytes += a.size;
	}
	return 0;
}

/* What an older version left, and what no record names (gc.c); a failure
 * only leaves the garbage for the next start. */
#define GC_GRACE_S 3600

static void collect_at_open(struct store *s)
{
	struct store_gc_stats st;

	if (store_collect_garbage(s, GC_GRACE_S, &st) == 0 && st.files)
		pr_info("store: removed %llu files no record names (%llu bytes)",
			(unsigned long long)st.files, (unsigned long long)st.bytes);
}

/* The opening thread: load RocksDB, open the DB, count what it holds
 * (the counters of store_get_stats()), then let every waiting caller in.
 * A DB whose records cannot be read through is not opened: its error is
 * every caller's. */
static void *open_thread(void *arg)
{
	struct store *s = arg;
	int err = store_rocksdb_load(&s->rdb);

	if (!err)
		err = open_db(s);
	if (!err)
		err = scan(s, "A", 1, "A", 1, count_record, s);
	if (!err)
		err = scan(s, "S", 1, "S", 1, count_record, s);
	if (!err)
		store_migrate_derived(s); /* before anyone reads a derived record */
	if (!err && (err = store_file_id_backfill(s)))
		pr_warn("store: cannot index the file IDs of the stored executables: %s",
			strerror(-err));
	if (!err)
		store_rocksdb_fault_opened(&s->rdb, s->db); /* test builds: rocksdb_fault.c */
	pthread_mutex_lock(&s->open_mu);
	s->open_err = err;
	s->opened = true;
	atomic_store_explicit(&s->usable, err == 0, memory_order_release);
	pthread_cond_broadcast(&s->open_cv);
	pthread_mutex_unlock(&s->open_mu);
	if (!err)
		collect_at_open(s); /* while requests are served: the grace covers them */

	return NULL;
}

/*
 * One server per data directory: an advisory lock on DIR/lock, taken
 * before anything else so that a second server fails at once with a clear
 * reason (RocksDB's own lock would refuse it only later, on the opening
 * thread).  Released when the process ends or the store is freed.
 */
static int lock_dir(struct store *s)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/lock", s->dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->lock_fd < 0)
		return -errno;
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	pr_warn("store: '%s' is in use by another process", s->dir);
	return -EBUSY;
}

static int make_dirs(struct store *s)
{
	int err = 0;

	err = make_private(s->dir);
	if (err) {
		pr_warn("store: cannot create '%s': %s", s->dir, strerror(-err));
		return err;
	}
	err = lock_dir(s);
	if (!err)
		err = open_subdir(s->dir, "blobs", &s->blobs_fd);
	if (!err)
		err = open_subdir(s->dir, "derived", &s->derived_fd);
	if (!err)
		err = open_subdir(s->dir, "tmp", &s->tmp_fd);
	if (!err)
		err = open_subdir(s->dir, "pins", &s->pins_fd);
	return err;
}

int store_new(const char *dir, struct store **out)
{
	struct store *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->blobs_fd = s->derived_fd = s->tmp_fd = s->pins_fd = s->lock_fd = -1;
	pthread_mutex_init(&s->write_mu, NULL);
	pthread_mutex_init(&s->gc_mu, NULL);
	pthread_mutex_init(&s->open_mu, NULL);
	pthread_cond_init(&s->open_cv, NULL);
	pthread_mutex_init(&s->refresh_mu, NULL);
	pthread_mutex_init(&s->fetch_mu, NULL);
	pthread_cond_init(&s->fetch_cv, NULL);
	s->dir = strdup(dir);
	err = s->dir ? make_dirs(s) : -ENOMEM;
	if (err) {
		store_free(s);
		return err;
	}
	clear_tmp(s->tmp_fd);
	*out = s;
	return 0;
}

int store_open_begin(struct store *s)
{
	int err = 0;

	pthread_mutex_lock(&s->open_mu);
	if (!s->has_opener) {
		err = -pthread_create(&s->opener, NULL, open_thread, s);
		s->has_opener = err == 0;
	}
	pthread_mutex_unlock(&s->open_mu);
	return err;
}

int store_wait(struct store *s)
{
	int err;

	if (store_is_open(s)) /* every record access asks: no lock once open */
		return 0;
	err = store_open_begin(s);
	if (err)
		return err;
	pthread_mutex_lock(&s->open_mu);
	while (!s->opened)
		pthread_cond_wait(&s->open_cv, &s->open_mu);
	err = s->open_err;
	pthread_mutex_unlock(&s->open_mu);
	return err;
}

bool store_is_open(struct store *s)
{
	return atomic_load_explicit(&s->usable, memory_order_acquire);
}

int store_open(const char *dir, struct store **out)
{
	int err = store_new(dir, out);

	if (!err && (err = store_wait(*out))) {
		store_free(*out);
		*out = NULL;
	}
	return err;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

void store_free(struct store *s)
{
	const struct store_rocksdb *r;

	if (!s)
		return;
	if (s->has_opener)
		pthread_join(s->opener, NULL);
	r = &s->rdb;
	if (s->db)
		r->close(s->db);
	if (s->wsync)
		r->writeoptions_destroy(s->wsync);
	if (s->ropts)
		r->readoptions_destroy(s->ropts);
	if (s->opts)
		r->options_destroy(s->opts);
	if (s->table_opts)
		r->block_based_options_destroy(s->table_opts);
	if (s->cache)
		r->cache_destroy(s->cache);
	close_fd(s->blobs_fd);
	close_fd(s->derived_fd);
	close_fd(s->tmp_fd);
	close_fd(s->pins_fd);
	close_fd(s->lock_fd); /* and with it the lock */
	store_backend_release(s);
	pthread_cond_destroy(&s->fetch_cv);
	pthread_mutex_destroy(&s->fetch_mu);
	pthread_mutex_destroy(&s->refresh_mu);
	pthread_cond_destroy(&s->open_cv);
	pthread_mutex_destroy(&s->open_mu);
	pthread_mutex_destroy(&s->write_mu);
	pthread_mutex_destroy(&s->gc_mu);
	free(s->dir);
	free(s);
}

int store_db_get(struct store *s, const char *key, size_t klen, char **val,
		 size_t *vlen)
{
	int ret = store_wait(s);

	return ret ? ret : store_db_get_opened(s, key, klen, val, vlen);
}

int store_db_get_opened(struct store *s, const char *key, size_t klen, char **val,
			size_t *vlen)
{
	char *err = NULL, *v = s->rdb.get(s->db, s->ropts, key, klen, vlen, &err);

	if (err) {
		pr_warn("store: read failed: %s", err);
		s->rdb.free(err);
		return -EIO;
	}
	if (!v)
		return -ENOENT;
	*val = v;
	return 0;
}

int store_batch_begin(struct store *s, struct store_batch *b)
{
	int err = store_wait(s);

	b->s = s;
	b->wb = err ? NULL : s->rdb.writebatch_create();
	return err;
}

void store_batch_begin_opened(struct store *s, struct store_batch *b)
{
	b->s = s;
	b->wb = s->rdb.writebatch_create();
}

void store_batch_put(struct store_batch *b, const char *key, size_t klen,
		     const char *val, size_t vlen)
{
	b->s->rdb.writebatch_put(b->wb, key, klen, val, vlen);
}

void store_batch_delete(struct store_batch *b, const char *key, size_t klen)
{
	b->s->rdb.writebatch_delete(b->wb, key, klen);
}

int store_batch_commit(struct store_batch *b)
{
	const struct store_rocksdb *r = &b->s->rdb;
	char *err = NULL;

	r->write(b->s->db, b->s->wsync, b->wb, &err);
	r->writebatch_destroy(b->wb);
	b->wb = NULL;
	if (err) {
		pr_warn("store: write failed: %s", err);
		r->free(err);
		return -EIO;
	}
	return 0;
}

void store_batch_discard(struct store_batch *b)
{
	b->s->rdb.writebatch_destroy(b->wb);
	b->wb = NULL;
}

int store_db_scan_opened(struct store *s, const char *prefix, size_t plen,
			 int (*cb)(const char *key, size_t klen, const char *val, size_t vlen,
				   void *arg),
			 void *arg)
{
	return scan(s, prefix, plen, prefix, plen, cb, arg);
}

int store_db_scan(struct store *s, const char *prefix, size_t plen,
		  int (*cb)(const char *key, size_t klen, const char *val,
			    size_t vlen, void *arg),
		  void *arg)
{
	return store_db_scan_from(s, prefix, plen, prefix, plen, cb, arg);
}

int store_db_scan_from(struct store *s, const char *prefix, size_t plen,
		       const char *start, size_t slen,
		       int (*cb)(const char *key, size_t klen, const char *val,
				 size_t vlen, void *arg),
		       void *arg)
{
	int err = store_wait(s);

	return err ? err : scan(s, prefix, plen, start, slen, cb, arg);
}

void store_get_stats(struct store *s, struct store_stats *out)
{
	if (!store_is_open(s)) { /* nothing counted yet */
		*out = (struct store_stats){ 0 };
		return;
	}
	out->artifacts = s->n_artifacts;
	out->sources = s->n_sources;
	out->blob_bytes = s->blob_bytes;
	out->upstream_bytes = s->upstream_bytes;
	out->evictions = s->evictions;
}
