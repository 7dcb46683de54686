/*
 * block_index.c - the catalog of a shared store (pstore_opts.shared: replicas
 * of a server on one bucket; docs/object-storage-layout.md, "Profiles"):
 * the live blocks are not the listing of blocks/ but what the block index
 * says, an append-only log per time partition of entries
 * index/PART/SEQ (index_entry.c), each adding a block and superseding
 * others.  Every replica reads the same entries in SEQ order and applies
 * the same rule, so every replica computes the same live set:
 *   - an entry whose superseded blocks are not all live is skipped (a
 *     second replica's merge of blocks that a first already merged);
 *   - an entry adding a block that was ever superseded is skipped (a
 *     flush retried after its block was merged would count it twice);
 *   - an entry adding a block whose log ranges (writer, segments) meet
 *     those of a live block it does not supersede is skipped (the same
 *     log records written as another block: a flush retried after
 *     symbols arrived encodes other bytes);
 *   - otherwise its superseded blocks leave the live set and its block
 *     joins it.
 * An entry is appended with a create-only write (blockio claim) at one
 * past the last SEQ listed; -EEXIST means another replica took that SEQ,
 * so the partition is listed again.  SEQs are dense: a writer takes
 * N + 1 only after N exists, and a listing that shows N + 1 shows N
 * (strong list-after-write), so a reader applies each partition's
 * entries in order and waits at a gap, which can only be a listing
 * racing a write.
 *
 * A refresh lists the partitions that change most (the current and the
 * previous one, and those this store appended to since), and at open and
 * once FULL_EVERY refresh intervals passed the whole of index/ (paged:
 * another replica's change to an older partition, a late profile's flush,
 * a re-resolution, a retention drop, is seen then), reads
 * only the entries it has not applied, then reconciles the store's list with the live set: the
 * blocks that left it are dropped from the list (deleted from the
 * storage only after the grace, by the store whose entry superseded them:
 * pstore_index_collect), the new ones opened
 * (their header and small sections, by range reads) and added, in one
 * critical section with the removal of the head they came from when a
 * flush asks, so a query never counts a profile twice or misses it.  A
 * block whose log ranges cover a head this store still holds (a query's
 * refresh between a flush's entry and its head's removal, or a flush that
 * failed after some of its entries) is not added until the head is gone.
 */
#include "pstore_catalog.h"
#include "pstore_head.h"
#include "pstore_index.h"

#include <stdio.h>

#define ENTRY_CAP ((size_t)1 << 20)
#define APPEND_ATTEMPTS 64
#define DEFAULT_REFRESH_NS ((int64_t)2000000000)
#define FULL_EVERY 30 /* refresh intervals: the whole index listed again */
#define DEFAULT_DELETE_AFTER_NS ((int64_t)600 * 1000000000)

struct ilive {
	char *name;
	uint64_t size;
	struct pstore_index_range *wal; /* its log ranges */
	size_t n_wal;
};

struct idoomed {
	char *name;
	int64_t due_ns;
};

struct ipart {
	int64_t part;
	uint64_t applied; /* entries 1..applied read */
	EMBER_VEC(struct ilive) live;
	EMBER_VEC(char *) dead; /* ever superseded: never added again */
};

struct pstore_index {
	pthread_mutex_t mu; /* one refresh at a time; the parts */
	EMBER_VEC(struct ipart) parts;
	atomic_int_fast64_t refreshed_ns;
	int64_t full_ns; /* the last listing of the whole index; 0: none yet */
	pthread_mutex_t touched_mu;
	EMBER_VEC(int64_t) touched; /* appended to since the last refresh */
	/* blocks this store superseded, deleted once due if dead (under mu) */
	EMBER_VEC(struct idoomed) doomed;
};

int pstore_index_new(struct pstore *s)
{
	s->index = calloc(1, sizeof(*s->index));
	if (!s->index)
		return -ENOMEM;
	pthread_mutex_init(&s->index->mu, NULL);
	pthread_mutex_init(&s->index->touched_mu, NULL);
	atomic_init(&s->index->refreshed_ns, 0);
	if (!s->opts.refresh_ns)
		s->opts.refresh_ns = DEFAULT_REFRESH_NS;
	if (!s->opts.delete_after_ns)
		s->opts.delete_after_ns = DEFAULT_DELETE_AFTER_NS;
	return 0;
}

void pstore_index_free(struct pstore_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->parts.n; i++) {
		struct ipart *p = &ix->parts.v[i];

		for (size_t k = 0; k < p->live.n; k++) {
			free(p->live.v[k].name);
			free(p->live.v[k].wal);
		}
		for (size_t k = 0; k < p->dead.n; k++)
			free(p->dead.v[k]);
		EMBER_VEC_FREE(&p->live);
		EMBER_VEC_FREE(&p->dead);
	}
	EMBER_VEC_FREE(&ix->parts);
	EMBER_VEC_FREE(&ix->touched);
	for (size_t i = 0; i < ix->doomed.n; i++)
		free(ix->doomed.v[i].name); /* not due yet: left in the storage */
	EMBER_VEC_FREE(&ix->doomed);
	pthread_mutex_destroy(&ix->mu);
	pthread_mutex_destroy(&ix->touched_mu);
	free(ix);
}

static struct ipart *part_get(struct pstore_index *ix, int64_t part, bool add)
{
	for (size_t i = 0; i < ix->parts.n; i++)
		if (ix->parts.v[i].part == part)
			return &ix->parts.v[i];
	if (!add || EMBER_VEC_APPEND(&ix->parts, ((struct ipart){ .part = part })))
		return NULL;
	return &ix->parts.v[ix->parts.n - 1];
}

static ssize_t live_find(const struct ipart *p, const char *name)
{
	for (size_t i = 0; i < p->live.n; i++)
		if (strcmp(p->live.v[i].name, name) == 0)
			return (ssize_t)i;
	return -1;
}

static bool is_dead(const struct ipart *p, const char *name)
{
	for (size_t i = 0; i < p->dead.n; i++)
		if (strcmp(p->dead.v[i], name) == 0)
			return true;
	return false;
}

static bool in_sup(const struct pstore_index_entry *e, const char *name)
{
	for (size_t i = 0; i < e->n_sup; i++)
		if (strcmp(e->sup[i], name) == 0)
			return true;
	return false;
}

static bool ranges_meet(const struct pstore_index_range *a, size_t na,
			const struct pstore_index_range *b, size_t nb)
{
	for (size_t i = 0; i < na; i++)
		for (size_t k = 0; k < nb; k++)
			if (!memcmp(a[i].writer, b[k].writer, 16) && a[i].lo <= b[k].hi &&
			    b[k].lo <= a[i].hi)
				return true;
	return false;
}

/* Whether e's block holds log records a live block it does not supersede
 * holds too (the same segments written as another block: a flush retried
 * with other symbols, another replica's takeover). */
static bool overlaps_live(const struct ipart *p, const struct pstore_index_entry *e)
{
	for (size_t i = 0; i < p->live.n; i++)
		if (strcmp(p->live.v[i].name, e->add) != 0 && !in_sup(e, p->live.v[i].name) &&
		    ranges_meet(p->live.v[i].wal, p->live.v[i].n_wal, e->wal, e->n_wal))
			return true;
	return false;
}

/* The rule of the file's header. */
static int apply(struct ipart *p, const struct pstore_index_entry *e)
{
	for (size_t i = 0; i < e->n_sup; i++)
		if (live_find(p, e->sup[i]) < 0)
			return 0;
	if (e->add && (is_dead(p, e->add) || overlaps_live(p, e)))
		return 0;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&p->dead, p->dead.n + e->n_sup));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&p->live, p->live.n + 1));
	for (size_t i = 0; i < e->n_sup; i++) {
		ssize_t k = live_find(p, e->sup[i]);

		p->dead.v[p->dead.n++] = p->live.v[k].name;
		free(p->live.v[k].wal);
		p->live.v[k] = p->live.v[--p->live.n];
	}
	if (e->add && live_find(p, e->add) < 0) {
		struct ilive l = { .name = strdup(e->add), .size = e->add_size,
				   .wal = malloc((e->n_wal + 1) * sizeof(*e->wal)),
				   .n_wal = e->n_wal };

		if (!l.name || !l.wal) {
			free(l.name);
			free(l.wal);
			return -ENOMEM;
		}
		if (e->n_wal)
			memcpy(l.wal, e->wal, e->n_wal * sizeof(*e->wal));
		p->live.v[p->live.n++] = l;
	}
	return 0;
}

/* ---- reading the index --------------------------------------------------------- */

struct ikey {
	int64_t part;
	uint64_t seq;
};

struct listing {
	struct pstore_index *ix;
	EMBER_VEC(struct ikey) keys;
	uint64_t max_seq; /* append: the partition's last */
	size_t touched;	  /* refresh: touched partitions listed */
	int64_t only_part;
	bool one_part;
};

static int on_key(void *arg, const char *name, uint64_t size)
{
	struct listing *l = arg;
	struct ikey k;
	const struct ipart *p;

	(void)size;
	if (pstore_index_key_parse(name, &k.part, &k.seq)) {
		pr_warn("pstore: '%s' under index/ is not an index entry: ignored", name);
		return 0;
	}
	if (l->one_part) {
		if (k.part == l->only_part && k.seq > l->max_seq)
			l->max_seq = k.seq;
		return 0;
	}
	p = part_get(l->ix, k.part, false);
	if (p && k.seq <= p->applied)
		return 0;
	return EMBER_VEC_APPEND(&l->keys, k);
}

static int cmp_key(const void *a, const void *b)
{
	const struct ikey *x = a, *y = b;

	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int read_entry(struct pstore *s, const struct ikey *k, struct ipart *p,
		      struct ember_diag *d)
{
	char name[64], why[200];
	struct pstore_index_entry e;
	struct ember_buf buf;
	int err;

	pstore_index_key(k->part, k->seq, name);
	ember_buf_init(&buf, ENTRY_CAP);
	err = s->io.get(s->io.ctx, name, 0, 0, &buf);
	if (err) {
		ember_buf_release(&buf);
		return EMBER_FAIL(d, err, "store: cannot read index entry '%s': %s", name,
				  pstore_strerror(err));
	}
	err = pstore_index_entry_parse(buf.data, buf.len, &e, why, sizeof(why));
	ember_buf_release(&buf);
	if (err == -PSTORE_ERR_CORRUPT) {
		/* the same bytes for every replica: skipped by all alike */
		pr_warn("pstore: index entry '%s' ignored: %s", name, why);
		return 0;
	}
	if (!err)
		err = apply(p, &e);
	pstore_index_entry_release(&e);
	return err;
}

static int list_part(struct pstore *s, int64_t part, struct listing *l)
{
	char prefix[40];

	snprintf(prefix, sizeof(prefix), "index/%016llx/", (unsigned long long)part);
	return s->io.list(s->io.ctx, prefix, on_key, l);
}

static bool in_parts(const int64_t *v, size_t n, int64_t part)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == part)
			return true;
	return false;
}

/* The partitions a quick refresh lists: the current and the previous
 * one (fresh profiles' flushes, the merges of a partition just closed),
 * and those this store appended to since the last refresh (its flushes
 * of older profiles, its merges, its retention drops). */
static int list_recent(struct pstore *s, struct listing *l)
{
	struct pstore_index *ix = s->index;
	int64_t now = pstore_partition_of(s, pstore_now(s));
	int64_t parts[2] = { now, now - s->opts.partition_ns };
	int err = 0;

	for (size_t i = 0; !err && i < 2; i++)
		err = list_part(s, parts[i], l);
	pthread_mutex_lock(&ix->touched_mu);
	for (size_t i = 0; !err && i < ix->touched.n; i++)
		if (!in_parts(parts, 2, ix->touched.v[i]) &&
		    !in_parts(ix->touched.v, i, ix->touched.v[i]))
			err = list_part(s, ix->touched.v[i], l);
	l->touched = ix->touched.n; /* forgotten once the refresh succeeds */
	pthread_mutex_unlock(&ix->touched_mu);
	return err;
}

/* The touched partitions a successful refresh listed: done with. */
static void touched_done(struct pstore_index *ix, size_t n)
{
	if (!n)
		return;
	pthread_mutex_lock(&ix->touched_mu);
	memmove(ix->touched.v, ix->touched.v + n, (ix->touched.n - n) * sizeof(*ix->touched.v));
	ix->touched.n -= n;
	pthread_mutex_unlock(&ix->touched_mu);
}

/* Read and apply the entries not applied yet: of every partition at open
 * and once FULL_EVERY refresh intervals passed, else of the recent ones. */
static int read_new(struct pstore *s, int64_t now, size_t *touched, struct ember_diag *d)
{
	struct listing l = { .ix = s->index };
	bool full = !s->index->full_ns || now - s->index->full_ns >= FULL_EVERY * s->opts.refresh_ns;
	int err = full ? s->io.list(s->io.ctx, "index/", on_key, &l) : list_recent(s, &l);

	if (err)
		err = EMBER_FAIL(d, err, "store: cannot list the block index: %s",
				 pstore_strerror(err));
	if (!err && full)
		s->index->full_ns = now;
	if (!err && l.keys.n)
		qsort(l.keys.v, l.keys.n, sizeof(*l.keys.v), cmp_key);
	for (size_t i = 0; !err && i < l.keys.n; i++) {
		struct ipart *p = part_get(s->index, l.keys.v[i].part, true);

		if (!p)
			err = -ENOMEM;
		else if (l.keys.v[i].seq == p->applied + 1 &&
			 !(err = read_entry(s, &l.keys.v[i], p, d)))
			p->applied++;
	}
	EMBER_VEC_FREE(&l.keys);
	*touched = l.touched;
	return err;
}

/* ---- the store's list from the live set ------------------------------------------ */

static bool in_live(const struct pstore_index *ix, const struct pstore_block *b)
{
	const struct ipart *p = part_get((struct pstore_index *)ix, b->meta.partition, false);

	if (p && live_find(p, b->name) >= 0)
		return true;
	/* a corrupt block's partition comes from its name: look everywhere */
	for (size_t i = 0; b->corrupt && i < ix->parts.n; i++)
		if (live_find(&ix->parts.v[i], b->name) >= 0)
			return true;
	return false;
}

/* Whether the store's list (its rollups' for a rollup) holds name. */
static bool in_list(const struct pstore *s, const char *name)
{
	bool rollup = pstore_is_rollup_name(name);
	size_t n = rollup ? s->rollups.n : s->blocks.n;

	for (size_t i = 0; i < n; i++)
		if (strcmp((rollup ? s->rollups.v : s->blocks.v)[i]->name, name) == 0)
			return true;
	return false;
}

/* A block opened from the index: its partition when corrupt; a rollup
 * without its section is a corrupt one. */
static void opened(struct pstore *s, struct pstore_block *b, int64_t part)
{
	bool rollup = pstore_is_rollup_name(b->name);

	if (rollup && !b->corrupt && !b->meta.rollup_step) {
		b->corrupt = true;
		snprintf(b->why, sizeof(b->why), "not a rollup: no ROLLUP section");
	}
	if (b->corrupt) {
		b->meta.partition = part;
		pr_warn("pstore: %s '%s' is corrupt: %s", rollup ? "rollup" : "block", b->name,
			b->why);
	} else if (!rollup) {
		pstore_catalog_seed(s, b);
	}
}

/* The live blocks the list lacks, opened (outside s->mu: range reads). */
static int open_missing(struct pstore *s, struct pstore_blocks *out, struct ember_diag *d)
{
	int err = 0;

	for (size_t i = 0; !err && i < s->index->parts.n; i++) {
		const struct ipart *p = &s->index->parts.v[i];

		for (size_t k = 0; !err && k < p->live.n; k++) {
			struct pstore_block *b;
			bool have;

			pthread_mutex_lock(&s->mu);
			have = in_list(s, p->live.v[k].name);
			pthread_mutex_unlock(&s->mu);
			if (have)
				continue;
			err = pstore_block_open(&s->io, p->live.v[k].name, p->live.v[k].size,
						&s->ident, &b, d);
			if (err == -ENOENT) /* a hole: its queries fail, not all */
				err = pstore_block_missing(&s->io, p->live.v[k].name,
							   p->live.v[k].size, &s->ident, &b);
			if (!err)
				opened(s, b, p->part);
			if (!err && (err = EMBER_VEC_APPEND(out, b)))
				pstore_block_unref(b);
		}
	}
	return err;
}

static bool covers(const struct pstore *s, const struct pstore_block *b,
		   const struct pstore_head *h)
{
	for (size_t i = 0; i < b->meta.wal.n; i++)
		if (!memcmp(b->meta.wal.v[i].writer, h->writer, 16) &&
		    b->meta.wal.v[i].lo <= h->seq && h->seq <= b->meta.wal.v[i].hi)
			return true;
	return false;
}

/* Whether b holds profiles of a head this store still answers from (its
 * flush appended b's entry and has not taken the head out yet, or failed
 * between two entries): b waits until the head leaves, or it would count
 * them twice.  Under s->mu. */
static bool covers_a_head(const struct pstore *s, const struct pstore_block *b,
			  const struct pstore_head *flushed)
{
	if (s->head && covers(s, b, s->head))
		return true;
	for (size_t i = 0; i < s->sealed.n; i++)
		if (s->sealed.v[i] != flushed && covers(s, b, s->sealed.v[i]))
			return true;
	return false;
}

static int reconcile(struct pstore *s, struct pstore_head *flushed, struct ember_diag *d)
{
	struct pstore_blocks add = { 0 };
	int err = open_missing(s, &add, d);

	if (err) {
		pstore_blocks_release(&add);
		return err;
	}
	pthread_mutex_lock(&s->mu);
	for (size_t i = s->blocks.n; i-- > 0;)
		if (!in_live(s->index, s->blocks.v[i]))
			pstore_catalog_remove(s, i);
	for (size_t i = s->rollups.n; i-- > 0;)
		if (!in_live(s->index, s->rollups.v[i]))
			pstore_rollups_remove(s, i);
	for (size_t i = 0; i < add.n; i++) {
		if (!err && pstore_is_rollup_name(add.v[i]->name) &&
		    !(err = EMBER_VEC_APPEND(&s->rollups, add.v[i])))
			continue;
		if (!err && !covers_a_head(s, add.v[i], flushed))
			err = pstore_catalog_add(s, add.v[i]);
		else
			pstore_block_unref(add.v[i]); /* the next refresh tries again */
	}
	if (!err && flushed)
		pstore_head_unpublish(s, flushed);
	pthread_mutex_unlock(&s->mu);
	EMBER_VEC_FREE(&add);
	return err;
}

static bool due(struct pstore *s)
{
	return pstore_now(s) - atomic_load(&s->index->refreshed_ns) >= s->opts.refresh_ns;
}

static int refresh(struct pstore *s, struct pstore_head *flushed, bool if_due,
		   struct ember_diag *d)
{
	int64_t started = pstore_now(s);
	size_t touched = 0;
	int err = 0;

	pthread_mutex_lock(&s->index->mu);
	if (if_due && !due(s)) { /* another thread's refresh while this one waited */
		pthread_mutex_unlock(&s->index->mu);
		return 0;
	}
	err = read_new(s, started, &touched, d);
	if (!err)
		err = reconcile(s, flushed, d);
	if (!err) {
		touched_done(s->index, touched);
		atomic_store(&s->index->refreshed_ns, started);
	}
	pthread_mutex_unlock(&s->index->mu);
	return err;
}

int pstore_index_refresh(struct pstore *s, struct pstore_head *flushed, struct ember_diag *d)
{
	return refresh(s, flushed, false, d);
}

int pstore_index_maybe_refresh(struct pstore *s, struct ember_diag *d)
{
	return s->index && due(s) ? refresh(s, NULL, true, d) : 0;
}

/* ---- appending ------------------------------------------------------------------- */

int pstore_index_append(struct pstore *s, int64_t part, const struct pstore_index_entry *e,
			struct ember_diag *d)
{
	struct ember_buf body;
	char prefix[40], name[64];
	int err;

	ember_buf_init(&body, ENTRY_CAP);
	err = pstore_index_entry_encode(e, &body);
	snprintf(prefix, sizeof(prefix), "index/%016llx/", (unsigned long long)part);
	for (int attempt = 0; !err; attempt++) {
		struct listing l = { .ix = s->index, .one_part = true, .only_part = part };

		if (attempt == APPEND_ATTEMPTS) {
			err = -EBUSY;
			break;
		}
		err = s->io.list(s->io.ctx, prefix, on_key, &l);
		if (err)
			break;
		pstore_index_key(part, l.max_seq + 1, name);
		err = s->io.claim(s->io.ctx, name, body.data, body.len);
		if (err != -EEXIST)
			break;
		err = 0; /* another replica's entry: list again */
	}
	ember_buf_release(&body);
	if (!err) { /* the next refresh reads it, however old the partition */
		pthread_mutex_lock(&s->index->touched_mu);
		err = EMBER_VEC_APPEND(&s->index->touched, part);
		pthread_mutex_unlock(&s->index->touched_mu);
	}
	if (err)
		return EMBER_FAIL(d, err, "store: cannot append to the block index of partition "
				  "%016llx: %s", (unsigned long long)part, pstore_strerror(err));
	return 0;
}

static void doom(struct pstore *s, struct pstore_block *const *sup, size_t n);

int pstore_index_add(struct pstore *s, const struct pstore_block *b, struct pstore_block *const *sup,
		     size_t n_sup, struct ember_diag *d)
{
	char **names = calloc(n_sup + 1, sizeof(*names));
	struct pstore_index_range *wal = b ? calloc(b->meta.wal.n + 1, sizeof(*wal)) : NULL;
	struct pstore_index_entry e = { .sup = names, .n_sup = n_sup, .wal = wal };
	int err;

	if (!names || (b && !wal)) {
		free(names);
		free(wal);
		return -ENOMEM;
	}
	if (b) {
		e.add = b->name;
		e.add_size = b->size;
		for (size_t i = 0; i < b->meta.wal.n; i++) {
			memcpy(wal[i].writer, b->meta.wal.v[i].writer, 16);
			wal[i].lo = b->meta.wal.v[i].lo;
			wal[i].hi = b->meta.wal.v[i].hi;
		}
		e.n_wal = b->meta.wal.n;
	}
	for (size_t i = 0; i < n_sup; i++)
		names[i] = sup[i]->name;
	err = pstore_index_append(s, b ? b->meta.partition : sup[0]->meta.partition, &e, d);
	free(names);
	free(wal);
	if (!err && s->opts.delete_after_ns > 0)
		doom(s, sup, n_sup);
	return err;
}

/* ---- deleting superseded blocks ----------------------------------------------- */

static void doom(struct pstore *s, struct pstore_block *const *sup, size_t n)
{
	int64_t due = pstore_now(s) + s->opts.delete_after_ns;

	pthread_mutex_lock(&s->index->mu);
	for (size_t i = 0; i < n; i++) {
		struct idoomed x = { .name = strdup(sup[i]->name), .due_ns = due };

		if (!x.name || EMBER_VEC_APPEND(&s->index->doomed, x))
			free(x.name); /* then left in the storage */
	}
	pthread_mutex_unlock(&s->index->mu);
}

static bool dead_anywhere(const struct pstore_index *ix, const char *name)
{
	for (size_t i = 0; i < ix->parts.n; i++)
		if (is_dead(&ix->parts.v[i], name))
			return true;
	return false;
}

int pstore_index_collect(struct pstore *s)
{
	struct pstore_strs due = { 0 };
	int64_t now;
	size_t k = 0;

	if (!s->index)
		return 0;
	now = pstore_now(s);
	pthread_mutex_lock(&s->index->mu);
	for (size_t i = 0; i < s->index->doomed.n; i++) {
		struct idoomed *x = &s->index->doomed.v[i];

		if (x->due_ns > now) {
			s->index->doomed.v[k++] = *x;
			continue;
		}
		/* dead: superseded by an applied entry, never live again; not
		 * dead: this store's entry was skipped, the block may be live */
		if (!dead_anywhere(s->index, x->name) || EMBER_VEC_APPEND(&due, x->name))
			free(x->name);
	}
	s->index->doomed.n = k;
	pthread_mutex_unlock(&s->index->mu);
	for (size_t i = 0; i < due.n; i++) {
		int err = s->io.del(s->io.ctx, due.v[i]);

		if (err && err != -ENOENT)
			pr_warn("pstore: cannot delete superseded block '%s': %s", due.v[i],
				pstore_strerror(err));
		else
			pr_info("pstore: superseded block '%s' deleted", due.v[i]);
		free(due.v[i]);
	}
	EMBER_VEC_FREE(&due);
	return 0;
}
