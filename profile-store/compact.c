/*
 * compact.c - what the compaction thread (and pstore_flush/_compact) do:
 *   rotate:    seal the active head and start a new segment;
 *   flush:     write a sealed head as one block per time partition, put
 *              them, list them, then drop the head and delete its segment
 *              (a crash in between replays only what no block covers);
 *   merge:     rewrite a partition's blocks as one (dictionaries and
 *              series deduplicated, the caller's resolver applied), the
 *              new block naming the old as parents, so a crash before
 *              they are deleted never counts a profile twice;
 *   rollups:   sum each closed partition's block per series and step
 *              (rollup_catalog.c, rollup.c), then each past 6 hours'
 *              and day's (rollup_span.c);
 *   retention: drop whole blocks past the retention, rollups past theirs,
 *              and stop counting the series of blocks past the series
 *              window.
 * One compaction runs at a time (compact_mu); queries run beside it on
 * their snapshots, and a block taken out of the list is deleted when the
 * last query holding it is done.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_index.h"
#include "pstore_series.h"
#include "pstore_wal.h"

#include <unistd.h>

/* Encode src, put it (read back whole: an object of other content under
 * its name is an error, block_name.c), and open it as a block (which
 * also checks what was written). */
int pstore_encode_put(struct pstore *s, const struct pstore_block_src *src,
		      struct pstore_block **out, struct ember_diag *d)
{
	struct ember_buf bytes;
	char name[PS_BLOCK_NAME_MAX];
	int err;

	ember_buf_init(&bytes, SIZE_MAX / 2);
	err = pstore_block_encode(src, &bytes, name);
	if (err)
		err = EMBER_FAIL(d, err, "store: cannot encode a block: %s", pstore_strerror(err));
	if (!err)
		err = pstore_block_put(&s->io, name, bytes.data, bytes.len, d);
	if (!err)
		err = pstore_block_open(&s->io, name, bytes.len, &s->ident, out, d);
	ember_buf_release(&bytes);
	if (!err && (*out)->corrupt) {
		err = EMBER_FAIL(d, -PSTORE_ERR_CORRUPT, "store: block '%s' reads back corrupt: %s",
			      name, (*out)->why);
		pstore_block_unref(*out);
	}
	return err;
}

static int head_src(struct pstore *s, const struct pstore_head *h, const uint32_t *sel, size_t n,
		    int64_t partition, struct pstore_block_src *src)
{
	*src = (struct pstore_block_src){
		.dict = &h->dict, .series = &h->series, .profs = h->profs.v, .sel = sel, .nsel = n,
		.row_node = h->row_node.v, .row_val = h->row_val.v, .row_link = h->row_link.v,
		.links = &h->links, .totals = h->totals.v,
		.cov = h->cov.v, .partition = partition, .partition_ns = s->opts.partition_ns,
		.zstd_level = s->opts.zstd_level,
	};
	return 0;
}

static int cmp_part(const void *a, const void *b, void *ctx)
{
	const struct pstore_head *h = ctx;
	int64_t x = h->profs.v[*(const uint32_t *)a].time,
		y = h->profs.v[*(const uint32_t *)b].time;

	return x < y ? -1 : x > y;
}

/* The visible profiles of h in time order. */
static int visible(const struct pstore_head *h, struct pstore_u32s *out)
{
	for (uint32_t i = 0; i < h->profs.n; i++)
		if (h->state.v[i] == PS_VISIBLE)
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(out, i));
	ember_qsort_r(out->v, out->n, sizeof(*out->v), cmp_part, (void *)h);
	return 0;
}

static int flush_blocks(struct pstore *s, struct pstore_head *h, struct pstore_blocks *out,
			struct ember_diag *d)
{
	struct pstore_u32s sel = { 0 };
	struct pstore_walrange wal = { .lo = h->seq, .hi = h->seq };
	int err = visible(h, &sel);

	ember_memcpy(wal.writer, h->writer, 16);
	for (size_t i = 0, j; !err && i < sel.n; i = j) {
		int64_t part = pstore_partition_of(s, h->profs.v[sel.v[i]].time);
		struct pstore_block_src src;
		struct pstore_block *b;

		for (j = i; j < sel.n && pstore_partition_of(s, h->profs.v[sel.v[j]].time) == part;
		     j++)
			;
		head_src(s, h, sel.v + i, j - i, part, &src);
		src.wal = &wal;
		src.nwal = 1;
		err = pstore_encode_put(s, &src, &b, d);
		if (!err && (err = EMBER_VEC_APPEND(out, b)))
			pstore_block_unref(b);
	}
	EMBER_VEC_FREE(&sel);
	return err;
}

static void drop_segment(struct pstore *s, uint64_t seq)
{
	char name[32];

	pstore_wal_name(seq, name);
	if (unlinkat(s->wal_fd, name, 0) == 0)
		fsync(s->wal_fd);
}

void pstore_head_unpublish(struct pstore *s, struct pstore_head *h)
{
	for (size_t i = 0; i < s->sealed.n; i++)
		if (s->sealed.v[i] == h) {
			memmove(s->sealed.v + i, s->sealed.v + i + 1,
				(s->sealed.n - i - 1) * sizeof(*s->sealed.v));
			s->sealed.n--;
			break;
		}
	for (size_t i = 0; i < h->series.series.n; i++)
		pstore_keys_remove(s->keys, h->series.series.v[i].key);
}

/* Swap h for its blocks in the store's lists. */
static int publish_flush(struct pstore *s, struct pstore_head *h, struct pstore_block **blocks,
			 size_t n)
{
	int err = 0;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < n && !err; i++)
		err = pstore_catalog_add(s, pstore_block_ref(blocks[i]));
	pstore_head_unpublish(s, h);
	pthread_mutex_unlock(&s->mu);
	return err;
}

/* A shared store: an index entry for each block, then the list from the
 * index, h leaving it as its blocks come in. */
static int publish_shared(struct pstore *s, struct pstore_head *h, struct pstore_block **blocks,
			  size_t n, struct ember_diag *d)
{
	for (size_t i = 0; i < n; i++)
		EMBER_FORWARD_IF_ERROR(pstore_index_add(s, blocks[i], NULL, 0, d));
	return pstore_index_refresh(s, h, d);
}

int pstore_compact_head(struct pstore *s, struct pstore_head *h)
{
	struct pstore_blocks blocks = { 0 };
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err = flush_blocks(s, h, &blocks, &d);

	if (!err && s->index)
		err = publish_shared(s, h, blocks.v, blocks.n, &d);
	else if (!err)
		err = publish_flush(s, h, blocks.v, blocks.n);
	pstore_blocks_release(&blocks);
	if (err) {
		pr_warn("pstore: writing log segment %llu as blocks: %s",
			(unsigned long long)h->seq, why[0] ? why : pstore_strerror(err));
		return err;
	}
	if (!memcmp(h->writer, s->writer, 16))
		drop_segment(s, h->seq); /* a dead writer's has no local file */
	if (s->index)
		pstore_logobj_drop(s, h->writer, h->seq);
	pstore_head_unref(h);
	atomic_fetch_add(&s->flushes, 1);
	return 0;
}

int pstore_rotate(struct pstore *s, bool force)
{
	struct pstore_head *old;
	struct pstore_wal *old_wal;
	bool due;
	int err;

	pthread_rwlock_wrlock(&s->rot);
	old = s->head;
	due = old->profs.n &&
	      (force || pstore_now(s) - old->created_ns >= s->opts.head_max_age_ns ||
	       pstore_head_bytes(old) >= s->opts.head_max_bytes);
	if (!due) {
		pthread_rwlock_unlock(&s->rot);
		return 0;
	}
	old_wal = s->wal;
	pthread_mutex_lock(&s->mu);
	err = EMBER_VEC_RESERVE(&s->sealed, s->sealed.n + 1);
	if (!err)
		err = pstore_open_segment(s); /* sets s->head and s->wal */
	if (!err) {
		old->sealed = true;
		s->sealed.v[s->sealed.n++] = old;
	}
	pthread_mutex_unlock(&s->mu);
	pthread_rwlock_unlock(&s->rot);
	if (err) {
		pr_warn("pstore: cannot start a new log segment: %s", pstore_strerror(err));
		return err;
	}
	pstore_wal_close(old_wal);
	return 0;
}

/* Flush every sealed head, oldest first. */
int pstore_compact_sealed(struct pstore *s)
{
	int err = 0;

	for (;;) {
		struct pstore_head *h = NULL;

		pthread_mutex_lock(&s->mu);
		if (s->sealed.n)
			h = pstore_head_ref(s->sealed.v[0]);
		pthread_mutex_unlock(&s->mu);
		if (!h)
			return err;
		err = pstore_compact_head(s, h);
		pstore_head_unref(h);
		if (err)
			return err;
	}
}

static bool expired(const struct pstore *s, const struct pstore_block *b, int64_t cutoff)
{
	int64_t lo, hi;

	pstore_block_span(s, b, &lo, &hi);
	return hi < cutoff;
}

/* A shared store: the expired blocks of each partition superseded by
 * nothing, through the index (every replica drops them alike). */
static int retention_shared(struct pstore *s, int64_t cutoff)
{
	struct pstore_blocks old = { 0 };
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err = 0;

	pthread_mutex_lock(&s->mu);
	pstore_catalog_age(s);
	for (size_t i = 0; !err && i < s->blocks.n; i++)
		if (expired(s, s->blocks.v[i], cutoff) &&
		    !(err = EMBER_VEC_APPEND(&old, s->blocks.v[i])))
			pstore_block_ref(s->blocks.v[i]);
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; !err && i < old.n; i++) {
		pr_info("pstore: block '%s' is past the retention: dropped", old.v[i]->name);
		err = pstore_index_add(s, NULL, &old.v[i], 1, &d);
	}
	if (!err && old.n)
		err = pstore_index_refresh(s, NULL, &d);
	if (!err)
		atomic_fetch_add(&s->retention_drops, old.n);
	pstore_blocks_release(&old);
	if (err)
		pr_warn("pstore: retention: %s", why[0] ? why : pstore_strerror(err));
	return err;
}

int pstore_compact_retention(struct pstore *s)
{
	int64_t cutoff = pstore_now(s) - __atomic_load_n(&s->opts.retention_ns, __ATOMIC_RELAXED);
	size_t dropped = 0;

	if (s->index)
		return retention_shared(s, cutoff);
	pthread_mutex_lock(&s->mu);
	pstore_catalog_age(s);
	for (size_t i = s->blocks.n; i-- > 0;) {
		if (!expired(s, s->blocks.v[i], cutoff))
			continue;
		pr_info("pstore: block '%s' is past the retention: dropped", s->blocks.v[i]->name);
		pstore_catalog_remove(s, i);
		dropped++;
	}
	pthread_mutex_unlock(&s->mu);
	atomic_fetch_add(&s->retention_drops, dropped);
	return 0;
}

int pstore_flush(struct pstore *s)
{
	int err;

	pthread_mutex_lock(&s->compact_mu);
	err = pstore_rotate(s, true);
	if (!err)
		err = pstore_compact_sealed(s);
	pthread_mutex_unlock(&s->compact_mu);
	return err;
}

/* A shared store: what other replicas wrote, before merging; the
 * writer's lease, and the logs of dead writers (takeover.c: a failure
 * is warned about and tried at the next pass, the rest goes on). */
static int refresh_due(struct pstore *s)
{
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err = pstore_index_maybe_refresh(s, &d);

	if (err)
		pr_warn("pstore: %s", why[0] ? why : pstore_strerror(err));
	if (!err && !atomic_load(&s->fenced) && pstore_lease_tend(s, false, &d))
		pr_warn("pstore: lease: %s", why);
	return err;
}

int pstore_compact_pass(struct pstore *s, bool rotate)
{
	int err;

	pthread_mutex_lock(&s->compact_mu);
	err = rotate ? pstore_rotate(s, false) : 0;
	if (!err)
		err = refresh_due(s);
	if (!err)
		err = pstore_compact_sealed(s);
	if (!err)
		err = pstore_compact_merge(s);
	if (!err)
		err = pstore_compact_reresolve(s);
	if (!err)
		err = pstore_compact_rollups(s);
	if (!err)
		err = pstore_compact_spans(s);
	if (!err)
		err = pstore_compact_retention(s);
	if (!err)
		err = pstore_rollups_retention(s);
	if (!err)
		err = pstore_index_collect(s);
	pthread_mutex_unlock(&s->compact_mu);
	if (err)
		atomic_fetch_add(&s->compaction_errors, 1);
	return err;
}

int pstore_compact(struct pstore *s)
{
	return pstore_compact_pass(s, false);
}
