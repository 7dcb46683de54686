/*
 * pstore.c - a profile store's lifecycle: pstore_open (the directory, its
 * lock and writer ID, the options, the block storage, the catalog of
 * blocks, the replay of the log, the first segment, the compaction
 * thread), pstore_free, the snapshot queries take, and the stats.
 *
 * Local and not: DIR/wal (the log, fsynced appends), DIR/writer-id and
 * DIR/lock are local files by nature; blocks go only through the
 * struct pstore_blockio (put, get, list, del), so nothing above it
 * assumes a filesystem.
 */
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_index.h"
#include "pstore_query.h"
#include "pstore_series.h"
#include "pstore_wal.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DAY_NS ((int64_t)86400 * 1000000000)
#define MIB ((size_t)1 << 20)

int64_t pstore_now(const struct pstore *s)
{
	if (s->opts.clock_ns)
		return s->opts.clock_ns(s->opts.clock_ctx);
	return (int64_t)ember_realtime_ns();
}

int64_t pstore_partition_of(const struct pstore *s, int64_t t)
{
	int64_t p = s->opts.partition_ns;

	return t >= 0 ? t / p * p : -((-(t + 1)) / p + 1) * p;
}

/* The default threads of a query: the online cores, at most 4
 * (docs/performance-notes.md, "Parallel queries"). */
static unsigned default_query_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 4 ? 4 : (unsigned)n;
}

static void resolve_opts(const struct pstore_opts *in, struct pstore_opts *o)
{
	struct pstore_opts def = {
		.sz = sizeof(def),
		.retention_ns = 14 * DAY_NS,
		.partition_ns = (int64_t)3600 * 1000000000,
		.head_max_age_ns = (int64_t)60 * 1000000000,
		.head_max_bytes = 64 * MIB,
		.cache_bytes = 256 * MIB,
		.zstd_level = 9,
		.rollup_steps_ns = { (int64_t)60 * 1000000000, (int64_t)3600 * 1000000000 },
		.rollup_retention_ns = 90 * DAY_NS,
		.query_threads = default_query_threads(),
		.query_split_bytes = 4 * MIB,
	};

	*o = def;
	if (in) {
		ember_memcpy(o, in, in->sz < sizeof(*o) ? in->sz : sizeof(*o));
		o->sz = sizeof(*o);
	}
#define DEF(f)                                                               \
	if (!o->f)                                                           \
		o->f = def.f
	DEF(retention_ns);
	DEF(partition_ns);
	DEF(head_max_age_ns);
	DEF(head_max_bytes);
	DEF(cache_bytes);
	DEF(zstd_level);
	DEF(rollup_retention_ns);
	DEF(query_threads);
	DEF(query_split_bytes);
#undef DEF
	if (!o->rollup_steps_ns[0])
		ember_memcpy(o->rollup_steps_ns, def.rollup_steps_ns, sizeof(def.rollup_steps_ns));
}

/* DIR/writer-id: 16 random bytes made at the first open, fsynced. */
static int writer_id(const char *dir, uint8_t id[16], struct ember_diag *d)
{
	char path[4096], tmp[4200];
	int fd = -1, err = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/writer-id", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, id, 16);
		close(fd);
		EMBER_FAIL_IF(n != 16, d, -PSTORE_ERR_CORRUPT, "store: '%s' is not 16 bytes",
			      path);
		return 0;
	}
	EMBER_FAIL_IF(errno != ENOENT, d, -errno, "store: cannot read '%s': %s", path,
		      strerror(errno));
	EMBER_FAIL_IF(getrandom(id, 16, 0) != 16, d, -EIO,
		      "store: no random bytes for a writer ID");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, id, 16) != 16 || fsync(fd) < 0 || rename(tmp, path) < 0)
		err = -errno ? -errno : -EIO;
	if (fd >= 0)
		close(fd);
	EMBER_FAIL_IF(err, d, err, "store: cannot write '%s': %s", path, strerror(-err));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

static int lock_dir(struct pstore *s, struct ember_diag *d)
{
	char path[4096];

	EMBER_FAIL_IF(mkdir(s->dir, 0755) < 0 && errno != EEXIST, d, -errno,
		      "store: cannot create '%s': %s", s->dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/lock", s->dir);
	s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	EMBER_FAIL_IF(s->lock_fd < 0, d, -errno, "store: cannot open '%s': %s", path,
		      strerror(errno));
	EMBER_FAIL_IF(flock(s->lock_fd, LOCK_EX | LOCK_NB) < 0, d, -EBUSY,
		      "store: '%s' is open in another process", s->dir);
	return 0;
}

static struct pstore *store_new(const char *dir, const struct pstore_opts *opts)
{
	struct pstore *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->lock_fd = -1;
	s->wal_fd = -1;
	resolve_opts(opts, &s->opts);
	pstore_limits_resolve(&s->opts.limits, &s->lim);
	pthread_rwlock_init(&s->rot, NULL);
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->compact_mu, NULL);
	pthread_mutex_init(&s->bg_mu, NULL);
	pthread_cond_init(&s->bg_cv, NULL);
	pthread_mutex_init(&s->cache.mu, NULL);
	s->cache.budget = s->opts.cache_bytes;
	atomic_init(&s->query_spare, (int)s->opts.query_threads);
	s->dir = strdup(dir);
	s->unbounded = pstore_unbounded_new();
	if (!s->dir || !s->unbounded || ember_hash_key_init(&s->cache.stack_seed)) {
		free(s->dir);
		pstore_unbounded_free(s->unbounded);
		free(s);
		return NULL;
	}
	return s;
}

static int open_storage(struct pstore *s, const struct pstore_opts *opts, struct ember_diag *d)
{
	char path[4096];
	int err;

	if (opts && opts->blocks) {
		s->io = *opts->blocks;
		return 0;
	}
	err = pstore_blockio_dir(s->dir, &s->io);
	EMBER_FAIL_IF(err, d, err, "store: cannot open the block directory of '%s': %s", s->dir,
		      strerror(-err));
	snprintf(path, sizeof(path), "%s/blocks", s->dir);
	EMBER_FAIL_IF(mkdir(path, 0755) < 0 && errno != EEXIST, d, -errno,
		      "store: cannot create '%s': %s", path, strerror(errno));
	return 0;
}

static int open_wal_dir(struct pstore *s, struct ember_diag *d)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/wal", s->dir);
	EMBER_FAIL_IF(mkdir(path, 0755) < 0 && errno != EEXIST, d, -errno,
		      "store: cannot create '%s': %s", path, strerror(errno));
	s->wal_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	EMBER_FAIL_IF(s->wal_fd < 0, d, -errno, "store: cannot open '%s': %s", path,
		      strerror(errno));
	return 0;
}

/* The active head and its segment. */
int pstore_open_segment(struct pstore *s)
{
	struct pstore_head *h = pstore_head_new(s->next_seq, pstore_now(s), &s->ident);
	int err;

	if (!h)
		return -ENOMEM;
	err = pstore_wal_open(s->wal_fd, s->next_seq, s->writer, s->opts.no_fsync, &s->wal);
	if (err) {
		pstore_head_unref(h);
		return err;
	}
	ember_memcpy(h->writer, s->writer, 16);
	s->next_seq++;
	s->head = h;
	return 0;
}

static int open_all(struct pstore *s, const struct pstore_opts *opts, struct ember_diag *d)
{
	int err;

	EMBER_FORWARD_IF_ERROR(lock_dir(s, d));
	EMBER_FORWARD_IF_ERROR(writer_id(s->dir, s->writer, d));
	EMBER_FAIL_IF(ember_hash_key_init(&s->ident), d, -EIO,
		      "store: no random bytes for its hash key");
	EMBER_FORWARD_IF_ERROR(open_storage(s, opts, d));
	EMBER_FAIL_IF(s->opts.shared && !s->io.claim, d, -EINVAL,
		      "store: a shared block storage needs create-only writes (claim)");
	if (s->opts.shared)
		EMBER_FORWARD_IF_ERROR(pstore_index_new(s));
	EMBER_FORWARD_IF_ERROR(open_wal_dir(s, d));
	EMBER_FORWARD_IF_ERROR(pstore_catalog_load(s, d));
	EMBER_FORWARD_IF_ERROR(pstore_recover(s, d));
	s->leases = s->opts.shared && s->io.renew && s->io.mtime;
	err = pstore_lease_tend(s, true, d);
	if (err && err != -PSTORE_ERR_CLOSED) /* fenced: open, taking no appends */
		return err;
	err = pstore_open_segment(s);
	EMBER_FAIL_IF(err, d, err, "store: cannot start a log segment in '%s/wal': %s", s->dir,
		      pstore_strerror(err));
	if (!s->opts.no_background)
		EMBER_FORWARD_IF_ERROR(pstore_background_start(s));
	return 0;
}

int pstore_open(const char *dir, const struct pstore_opts *opts, struct pstore **out,
		char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct pstore *s = store_new(dir, opts);
	int err;

	if (!s) {
		if (opts && opts->blocks && opts->blocks->release)
			opts->blocks->release(opts->blocks->ctx);
		return EMBER_FAIL(&d, -ENOMEM, "out of memory");
	}
	err = open_all(s, opts, &d);
	if (err) {
		if (!s->io.release && opts && opts->blocks && opts->blocks->release)
			opts->blocks->release(opts->blocks->ctx);
		pstore_free(s);
		return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
	}
	*out = s;
	return 0;
}

/* Each value one aligned word, stored whole (readers load it once per
 * use, at an append or a compaction pass). */
void pstore_retune(struct pstore *s, const struct pstore_retune *r)
{
	struct pstore_opts o = {
		.sz = sizeof(o),
		.retention_ns = EMBER_OPTS_GET(r, retention_ns, 0),
		.rollup_retention_ns = EMBER_OPTS_GET(r, rollup_retention_ns, 0),
		.limits = { .sz = sizeof(o.limits), .max_series = EMBER_OPTS_GET(r, max_series, 0) },
	};
	struct pstore_opts d;
	struct pstore_limits l;

	resolve_opts(&o, &d); /* 0: the defaults, as at the open */
	pstore_limits_resolve(&o.limits, &l);
	__atomic_store_n(&s->opts.retention_ns, d.retention_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&s->opts.rollup_retention_ns, d.rollup_retention_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&s->lim.max_series, l.max_series, __ATOMIC_RELAXED);
}

void pstore_free(struct pstore *s)
{
	if (!s)
		return;
	pstore_background_stop(s);
	pstore_cache_release(&s->cache);
	for (size_t i = 0; i < s->blocks.n; i++)
		pstore_block_unref(s->blocks.v[i]);
	EMBER_VEC_FREE(&s->blocks);
	for (size_t i = 0; i < s->rollups.n; i++)
		pstore_block_unref(s->rollups.v[i]);
	EMBER_VEC_FREE(&s->rollups);
	for (size_t i = 0; i < s->sealed.n; i++)
		pstore_head_unref(s->sealed.v[i]);
	EMBER_VEC_FREE(&s->sealed);
	pstore_head_unref(s->head);
	pstore_wal_close(s->wal);
	if (s->io.release)
		s->io.release(s->io.ctx);
	if (s->wal_fd >= 0)
		close(s->wal_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	pstore_keys_free(s->keys);
	pstore_arrivals_free(s);
	pstore_unbounded_free(s->unbounded);
	pstore_index_free(s->index);
	pthread_rwlock_destroy(&s->rot);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->compact_mu);
	pthread_mutex_destroy(&s->bg_mu);
	pthread_cond_destroy(&s->bg_cv);
	free(s->dir);
	free(s);
}

/* ---- snapshots ------------------------------------------------------------------ */

/* A block's time span; a corrupt one covers its whole partition. */
void pstore_block_span(const struct pstore *s, const struct pstore_block *b, int64_t *lo,
		       int64_t *hi)
{
	if (!b->corrupt) {
		*lo = b->meta.min_time;
		*hi = b->meta.max_time;
		return;
	}
	*lo = b->meta.partition;
	*hi = b->meta.partition + s->opts.partition_ns - 1;
}

int pstore_snapshot_take(struct pstore *s, int64_t from, int64_t to, struct pstore_snapshot *out)
{
	char why[256] = "";
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err = pstore_index_maybe_refresh(s, &d); /* shared: others' blocks */

	memset(out, 0, sizeof(*out));
	if (err) {
		pr_warn("pstore: %s", why[0] ? why : pstore_strerror(err));
		return err;
	}
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; !err && i < s->blocks.n; i++) {
		struct pstore_block *b = s->blocks.v[i];
		int64_t lo, hi;

		pstore_block_span(s, b, &lo, &hi);
		if (hi < from || lo >= to)
			continue;
		err = EMBER_VEC_APPEND(&out->blocks, pstore_block_ref(b));
		if (err)
			pstore_block_unref(b);
	}
	for (size_t i = 0; !err && i < s->rollups.n; i++) {
		struct pstore_block *b = s->rollups.v[i];
		int64_t lo, hi;

		pstore_block_span(s, b, &lo, &hi);
		if (hi < from || lo >= to)
			continue;
		if ((err = EMBER_VEC_APPEND(&out->rollups, pstore_block_ref(b))))
			pstore_block_unref(b);
	}
	if (!err && s->head) {
		err = EMBER_VEC_APPEND(&out->heads, pstore_head_ref(s->head));
		if (err)
			pstore_head_unref(s->head);
	}
	for (size_t i = 0; !err && i < s->sealed.n; i++) {
		err = EMBER_VEC_APPEND(&out->heads, pstore_head_ref(s->sealed.v[i]));
		if (err)
			pstore_head_unref(s->sealed.v[i]);
	}
	pthread_mutex_unlock(&s->mu);
	if (err)
		pstore_snapshot_release(out);
	return err;
}

void pstore_snapshot_release(struct pstore_snapshot *snap)
{
	for (size_t i = 0; i < snap->blocks.n; i++)
		pstore_block_unref(snap->blocks.v[i]);
	for (size_t i = 0; i < snap->rollups.n; i++)
		pstore_block_unref(snap->rollups.v[i]);
	for (size_t i = 0; i < snap->heads.n; i++)
		pstore_head_unref(snap->heads.v[i]);
	EMBER_VEC_FREE(&snap->blocks);
	EMBER_VEC_FREE(&snap->rollups);
	EMBER_VEC_FREE(&snap->heads);
}

/* ---- stats ------------------------------------------------------------------------- */

static void head_stats(struct pstore_head *h, struct pstore_stats *st)
{
	pthread_rwlock_rdlock(&h->lock);
	st->head_profiles += h->visible;
	st->profiles += h->visible;
	pthread_rwlock_unlock(&h->lock);
}

/* The heads' counts, each read under its lock once s->mu is let go: an
 * append holds its head's lock while it takes s->mu (admit, a new series),
 * so a head's lock is never waited for under s->mu (a deadlock with
 * /metrics otherwise).  A head that cannot be listed is left out. */
static void heads_stats(struct pstore *s, struct pstore_stats *st)
{
	EMBER_VEC(struct pstore_head *) heads = { 0 };

	pthread_mutex_lock(&s->mu);
	if (s->head && !EMBER_VEC_APPEND(&heads, s->head))
		pstore_head_ref(s->head);
	for (size_t i = 0; i < s->sealed.n; i++)
		if (!EMBER_VEC_APPEND(&heads, s->sealed.v[i]))
			pstore_head_ref(s->sealed.v[i]);
	st->wal_segments = 1 + s->sealed.n;
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < heads.n; i++) {
		head_stats(heads.v[i], st);
		pstore_head_unref(heads.v[i]);
	}
	EMBER_VEC_FREE(&heads);
}

void pstore_stats(struct pstore *s, struct pstore_stats *st)
{
	memset(st, 0, sizeof(*st));
	heads_stats(s, st);
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->blocks.n; i++) {
		const struct pstore_block *b = s->blocks.v[i];

		st->blocks++;
		st->block_bytes += b->size;
		st->corrupt_blocks += b->corrupt;
		st->profiles += b->corrupt ? 0 : b->meta.profiles;
	}
	for (size_t i = 0; i < s->rollups.n; i++) {
		st->rollups++;
		st->rollup_bytes += s->rollups.v[i]->size;
	}
	st->series = pstore_keys_count(s->keys);
	pthread_mutex_unlock(&s->mu);
	pthread_rwlock_rdlock(&s->rot);
	st->wal_bytes = pstore_wal_bytes(s->wal);
	pthread_rwlock_unlock(&s->rot);
	st->appends = atomic_load(&s->appends);
	st->rejected = atomic_load(&s->rejected);
	st->flushes = atomic_load(&s->flushes);
	st->merges = atomic_load(&s->merges);
	st->retention_drops = atomic_load(&s->retention_drops);
	st->compaction_errors = atomic_load(&s->compaction_errors);
	st->wal_torn_bytes = atomic_load(&s->wal_torn_bytes);
	st->unbounded_labels = pstore_unbounded_count(s->unbounded);
	st->rollups_built = atomic_load(&s->rollups_built);
	st->rollup_drops = atomic_load(&s->rollup_drops);
	st->profiles_read = atomic_load(&s->profiles_read);
	st->zero_drops = atomic_load(&s->zero_drops);
	st->rows_bytes_read = atomic_load(&s->rows_bytes_read);
}

int pstore_warnings(struct pstore *s, struct pstore_strlist **out)
{
	struct pstore_strlist *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	err = pstore_unbounded_list(s->unbounded, l);
	if (err) {
		pstore_strlist_free(l);
		return err;
	}
	*out = l;
	return 0;
}

void pstore_strlist_free(struct pstore_strlist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	free(l);
}
