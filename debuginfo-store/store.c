/*
 * store.c - opening a data directory: its folders, RocksDB, the cleanup
 * of a crashed run, and the few RocksDB calls the rest of the store uses.
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
#include <sys/stat.h>
#include <unistd.h>

static int open_subdir(const char *dir, const char *sub, int *fd)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/%s", dir, sub) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, 0755) && errno != EEXIST)
		goto fail;
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd >= 0)
		return 0;
fail:
	pr_warn("store: cannot create '%s': %s", path, strerror(errno));
	return -errno;
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
	char path[4096];
	char *err = NULL;

	snprintf(path, sizeof(path), "%s/db", s->dir);
	s->opts = rocksdb_options_create();
	s->cache = rocksdb_cache_create_lru(4 << 20);
	s->table_opts = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_cache(s->table_opts, s->cache);
	rocksdb_options_set_block_based_table_factory(s->opts, s->table_opts);
	rocksdb_options_set_create_if_missing(s->opts, 1);
	rocksdb_options_set_write_buffer_size(s->opts, 4 << 20);
	rocksdb_options_set_max_open_files(s->opts, 128);
	rocksdb_options_set_keep_log_file_num(s->opts, 2);
	s->db = rocksdb_open(s->opts, path, &err);
	if (!s->db) {
		pr_warn("store: cannot open '%s': %s", path, err ? err : "unknown");
		rocksdb_free(err);
		return -EIO;
	}
	s->wsync = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(s->wsync, 1);
	s->ropts = rocksdb_readoptions_create();
	return 0;
}

static int count_record(const char *key, size_t klen, const char *val,
			size_t vlen, void *arg)
{
	struct store *s = arg;
	struct store_artifact a;

	if (key[0] == STORE_TAG_SOURCE) {
		s->n_sources++;
	} else if (key[0] == STORE_TAG_ARTIFACT &&
		   store_record_decode((const uint8_t *)val, vlen, &a) == 0) {
		s->n_artifacts++;
		s->blob_bytes += a.size;
	}
	return 0;
}

int store_open(const char *dir, struct store **out)
{
	struct store *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->blobs_fd = s->tmp_fd = -1;
	pthread_mutex_init(&s->write_mu, NULL);
	s->dir = strdup(dir);
	if (!s->dir) {
		err = -ENOMEM;
		goto fail;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		err = -errno;
		pr_warn("store: cannot create '%s': %s", dir, strerror(errno));
		goto fail;
	}
	err = open_subdir(dir, "blobs", &s->blobs_fd);
	if (!err)
		err = open_subdir(dir, "tmp", &s->tmp_fd);
	if (!err)
		err = open_db(s);
	if (err)
		goto fail;
	clear_tmp(s->tmp_fd);
	store_db_scan(s, "A", 1, count_record, s);
	store_db_scan(s, "S", 1, count_record, s);
	*out = s;
	return 0;
fail:
	store_free(s);
	return err;
}

void store_free(struct store *s)
{
	if (!s)
		return;
	if (s->db)
		rocksdb_close(s->db);
	if (s->wsync)
		rocksdb_writeoptions_destroy(s->wsync);
	if (s->ropts)
		rocksdb_readoptions_destroy(s->ropts);
	if (s->opts)
		rocksdb_options_destroy(s->opts);
	if (s->table_opts)
		rocksdb_block_based_options_destroy(s->table_opts);
	if (s->cache)
		rocksdb_cache_destroy(s->cache);
	if (s->blobs_fd >= 0)
		close(s->blobs_fd);
	if (s->tmp_fd >= 0)
		close(s->tmp_fd);
	pthread_mutex_destroy(&s->write_mu);
	free(s->dir);
	free(s);
}

int store_db_get(struct store *s, const char *key, size_t klen, char **val,
		 size_t *vlen)
{
	char *err = NULL;
	char *v = rocksdb_get(s->db, s->ropts, key, klen, vlen, &err);

	if (err) {
		pr_warn("store: read failed: %s", err);
		rocksdb_free(err);
		return -EIO;
	}
	if (!v)
		return -ENOENT;
	*val = v;
	return 0;
}

int store_db_write(struct store *s, rocksdb_writebatch_t *wb)
{
	char *err = NULL;

	rocksdb_write(s->db, s->wsync, wb, &err);
	if (err) {
		pr_warn("store: write failed: %s", err);
		rocksdb_free(err);
		return -EIO;
	}
	return 0;
}

int store_db_scan(struct store *s, const char *prefix, size_t plen,
		  int (*cb)(const char *key, size_t klen, const char *val,
			    size_t vlen, void *arg),
		  void *arg)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator(s->db, s->ropts);
	int ret = 0;

	for (rocksdb_iter_seek(it, prefix, plen); !ret && rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);

		if (klen < plen || memcmp(k, prefix, plen) != 0)
			break;
		ret = cb(k, klen, v, vlen, arg);
	}
	rocksdb_iter_destroy(it);
	return ret;
}

void store_get_stats(struct store *s, struct store_stats *out)
{
	out->artifacts = s->n_artifacts;
	out->sources = s->n_sources;
	out->blob_bytes = s->blob_bytes;
}
