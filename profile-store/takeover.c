/*
 * takeover.c - a shared store's writer lease and the takeover of a dead
 * writer's per-push log (docs/object-storage-layout.md, "The per-push
 * log").
 *   lease:    log/WRITER/lease, rewritten (blockio renew) at open and
 *             when a head age (at most a third of the expiry) has passed,
 *             at a compaction pass; it declares its writer's expiry, and
 *             a reader waits the longer of that and its own;
 *   fence:    log/WRITER/claim, written create-only by the store that
 *             takes the log over; a writer that sees it takes no more
 *             appends (-PSTORE_ERR_CLOSED);
 *   takeover: at each renewal, list log/; a writer other than this one
 *             with record objects, no claim, and a lease older than
 *             lease_expiry_ns by the storage's clock (its Last-Modified
 *             against this store's own lease, just rewritten: never a
 *             replica's clock) is claimed; its records are listed again
 *             (after the claim: every record its writer wrote before it
 *             saw the claim), read, and each segment not already held by
 *             live blocks becomes a sealed head of that writer and
 *             segment, queryable at once and flushed by the compaction
 *             into blocks whose log ranges name that writer's segment (a
 *             second flush of the same records, the writer's own after
 *             it comes back, is an entry whose ranges are held: skipped).
 *             The flush deletes the objects (compact.c).
 * An append checks the claim itself (one HEAD) only when its store's last
 * renewal was sent more than lease_expiry_ns - 2 s ago by this machine's
 * monotonic clock: before that no other store can judge the lease
 * expired (Last-Modified is at or after the renewal was sent, to the
 * second), so a claimant's listing after its claim sees every record
 * acknowledged without the check.
 */
#include "pstore_head.h"
#include "pstore_index.h"
#include "pstore_wal.h"

#include <stdio.h>
#include <time.h>

#define LEASE_MAGIC "ember-lease 1\nexpiry_ns "
#define MARGIN_NS ((int64_t)2 * 1000000000) /* Last-Modified's second, and one */

static int64_t mono_ns(void)
{
	return (int64_t)ember_monotonic_ns();
}

static int64_t expiry_ns(const struct pstore *s)
{
	return s->opts.lease_expiry_ns > 0 ? s->opts.lease_expiry_ns : 3 * s->opts.head_max_age_ns;
}

/* How often the lease is rewritten: each head age, at least three times
 * an expiry. */
static int64_t renew_ns(const struct pstore *s)
{
	int64_t e = expiry_ns(s) / 3;

	return e < s->opts.head_max_age_ns ? e : s->opts.head_max_age_ns;
}

/* The expiry a lease declares (its writer's own), or 0 when it says none:
 * a reader waits the longer of its own and this one, so replicas with
 * other options never judge a live writer dead. */
static int64_t declared_expiry(struct pstore *s, const char *name)
{
	struct ember_buf b;
	long long v = 0;

	ember_buf_init(&b, 256);
	if (!s->io.get(s->io.ctx, name, 0, 0, &b) && b.len > strlen(LEASE_MAGIC) &&
	    b.len < 200 && !memcmp(b.data, LEASE_MAGIC, strlen(LEASE_MAGIC))) {
		char tmp[200];

		memcpy(tmp, b.data, b.len);
		tmp[b.len] = '\0';
		v = strtoll(tmp + strlen(LEASE_MAGIC), NULL, 10);
	}
	ember_buf_release(&b);
	return v > 0 ? v : 0;
}

static int fence_if_claimed(struct pstore *s, struct ember_diag *d)
{
	char name[PS_LOGOBJ_NAME_MAX];
	int64_t sec;
	int err;

	pstore_log_leaf_name(s->writer, "claim", name);
	err = s->io.mtime(s->io.ctx, name, &sec);
	if (err == -ENOENT)
		return 0;
	EMBER_FAIL_IF(err, d, err, "cannot check '%s': %s", name, pstore_strerror(err));
	if (!atomic_exchange(&s->fenced, true))
		pr_warn("pstore: '%s' exists: another store took this writer's log over; "
			"no more appends (a new data directory starts a new writer)", name);
	return EMBER_FAIL(d, -PSTORE_ERR_CLOSED,
			  "this writer's log was taken over by another replica (%s)", name);
}

int pstore_lease_check(struct pstore *s, struct ember_diag *d)
{
	EMBER_FAIL_IF(atomic_load(&s->fenced), d, -PSTORE_ERR_CLOSED,
		      "this writer's log was taken over by another replica: it takes no pushes");
	if (!s->leases || mono_ns() - atomic_load(&s->lease_sent) < expiry_ns(s) - MARGIN_NS)
		return 0;
	return fence_if_claimed(s, d);
}

/* ---- the listing of log/ ------------------------------------------------------- */

struct wlog {
	uint8_t id[16];
	bool lease, claim;
	EMBER_VEC(char *) recs; /* "SEG-REC" */
};

EMBER_VEC_DEF(wlogs, struct wlog);

static int unhex16(const char *h, uint8_t id[16])
{
	for (int i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return -1;
		id[i] = (uint8_t)v;
	}
	return 0;
}

static struct wlog *wlog_of(struct wlogs *l, const uint8_t id[16])
{
	for (size_t i = 0; i < l->n; i++)
		if (!memcmp(l->v[i].id, id, 16))
			return &l->v[i];
	if (EMBER_VEC_APPEND(l, ((struct wlog){ 0 })))
		return NULL;
	ember_memcpy(l->v[l->n - 1].id, id, 16);
	return &l->v[l->n - 1];
}

/* "log/<32 hex>/<leaf>" */
static int on_log_name(void *arg, const char *name, uint64_t size)
{
	struct wlogs *l = arg;
	const char *leaf = name + 4 + 32 + 1;
	uint8_t id[16];
	struct wlog *w;
	char *dup;

	(void)size;
	if (strlen(name) <= 4 + 33 || strncmp(name, "log/", 4) || name[4 + 32] != '/' ||
	    unhex16(name + 4, id))
		return 0; /* not ours to read */
	if (!(w = wlog_of(l, id)))
		return -ENOMEM;
	if (!strcmp(leaf, "lease"))
		w->lease = true;
	else if (!strcmp(leaf, "claim"))
		w->claim = true;
	else if (strlen(leaf) == 27 && leaf[16] == '-') {
		if (!(dup = strdup(leaf)) || EMBER_VEC_APPEND(&w->recs, dup)) {
			free(dup);
			return -ENOMEM;
		}
	}
	return 0;
}

static void wlogs_release(struct wlogs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		for (size_t k = 0; k < l->v[i].recs.n; k++)
			free(l->v[i].recs.v[k]);
		EMBER_VEC_FREE(&l->v[i].recs);
	}
	EMBER_VEC_FREE(l);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- taking one writer's log over ----------------------------------------------- */

/* The records of segment seg (recs[lo..hi), in order) as a sealed head of
 * writer w, handed to the store; nothing when blocks hold them all. */
static int take_segment(struct pstore *s, const uint8_t w[16], uint64_t seg, char **recs,
			size_t n, struct ember_diag *d)
{
	struct pstore_head *h = pstore_head_new(seg, pstore_now(s), &s->ident);
	uint64_t skipped = 0, failed = 0;
	int err = h ? 0 : -ENOMEM;

	if (h)
		ember_memcpy(h->writer, w, 16);
	for (size_t i = 0; !err && i < n; i++) {
		char name[PS_LOGOBJ_NAME_MAX];
		struct ember_buf data;

		pstore_log_leaf_name(w, recs[i], name);
		ember_buf_init(&data, PS_WAL_RECORD_MAX + 64);
		err = s->io.get(s->io.ctx, name, 0, 0, &data);
		EMBER_FAIL_IF(err, d, err, "cannot read log object '%s': %s", name,
			      pstore_strerror(err));
		if (!err)
			err = pstore_replay_record(s, h, (const uint8_t *)data.data, data.len,
						   &skipped, &failed);
		ember_buf_release(&data);
	}
	if (!err && h->visible) {
		h->sealed = true;
		pthread_mutex_lock(&s->mu);
		err = EMBER_VEC_APPEND(&s->sealed, h);
		pthread_mutex_unlock(&s->mu);
		if (!err)
			h = NULL;
	} else if (!err) {
		pstore_logobj_drop(s, w, seg); /* blocks hold every record */
	}
	pstore_head_unref(h);
	return err;
}

static int take_over(struct pstore *s, struct wlog *w, struct ember_diag *d)
{
	char name[PS_LOGOBJ_NAME_MAX], body[80], me[33];
	struct wlogs again = { 0 };
	struct wlog *x;
	int err;

	pstore_writer_hex(s->writer, me);
	snprintf(body, sizeof(body), "ember-claim 1\n%s\n", me);
	pstore_log_leaf_name(w->id, "claim", name);
	err = s->io.claim(s->io.ctx, name, body, strlen(body));
	if (err == -EEXIST)
		return 0; /* another store has it */
	EMBER_FAIL_IF(err, d, err, "cannot write '%s': %s", name, pstore_strerror(err));
	pr_info("pstore: the lease of writer %.32s expired: its log taken over (%s)", name + 4,
		name);
	pstore_log_leaf_name(w->id, "", name);
	err = s->io.list(s->io.ctx, name, on_log_name, &again);
	x = !err && again.n ? &again.v[0] : NULL;
	EMBER_FAIL_IF(err, d, err, "cannot list '%s': %s", name, pstore_strerror(err));
	if (x)
		ember_qsort(x->recs.v, x->recs.n, sizeof(*x->recs.v), cmp_str);
	for (size_t i = 0, j; !err && x && i < x->recs.n; i = j) {
		uint64_t seg = strtoull(x->recs.v[i], NULL, 16);

		for (j = i; j < x->recs.n && !strncmp(x->recs.v[j], x->recs.v[i], 17); j++)
			;
		err = take_segment(s, w->id, seg, x->recs.v + i, j - i, d);
	}
	wlogs_release(&again);
	return err;
}

static int scan(struct pstore *s, int64_t now_sec, struct ember_diag *d)
{
	struct wlogs l = { 0 };
	int64_t own = expiry_ns(s);
	int err = s->io.list(s->io.ctx, "log/", on_log_name, &l);

	EMBER_FAIL_IF(err, d, err, "cannot list 'log/': %s", pstore_strerror(err));
	for (size_t i = 0; !err && i < l.n; i++) {
		struct wlog *w = &l.v[i];
		char name[PS_LOGOBJ_NAME_MAX];
		int64_t sec = 0;

		if (!memcmp(w->id, s->writer, 16) || w->claim || !w->recs.n)
			continue;
		pstore_log_leaf_name(w->id, "lease", name);
		err = w->lease ? s->io.mtime(s->io.ctx, name, &sec) : -ENOENT;
		if (err && err != -ENOENT) {
			err = EMBER_FAIL(d, err, "cannot read the time of '%s': %s", name,
					 pstore_strerror(err));
			break;
		}
		/* no lease: its writer never took one (every store renews
		 * before its first append) or it was removed: expired */
		err = 0;
		if (w->lease) {
			int64_t e = declared_expiry(s, name);

			e = e > own ? e : own;
			if (now_sec - sec < (e + 999999999) / 1000000000)
				continue;
		}
		err = take_over(s, w, d);
	}
	wlogs_release(&l);
	return err;
}

int pstore_lease_tend(struct pstore *s, bool force, struct ember_diag *d)
{
	char name[PS_LOGOBJ_NAME_MAX], body[80];
	int64_t sent = mono_ns(), now_sec;
	int err;


	if (!s->leases || (!force && sent - atomic_load(&s->lease_sent) < renew_ns(s)))
		return 0;
	pstore_log_leaf_name(s->writer, "lease", name);
	snprintf(body, sizeof(body), LEASE_MAGIC "%lld\n", (long long)expiry_ns(s));
	err = s->io.renew(s->io.ctx, name, body, strlen(body));
	EMBER_FAIL_IF(err, d, err, "cannot renew the lease '%s': %s", name, pstore_strerror(err));
	err = fence_if_claimed(s, d);
	if (err)
		return err;
	atomic_store(&s->lease_sent, sent);
	err = s->io.mtime(s->io.ctx, name, &now_sec);
	EMBER_FAIL_IF(err, d, err, "cannot read the time of '%s': %s", name,
		      pstore_strerror(err));
	return scan(s, now_sec, d);
}
