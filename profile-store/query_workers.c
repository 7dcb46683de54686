/*
 * query_workers.c - a query's pieces (plan.c: a block or rollup and the
 * part of the range it answers) summed by several threads, and what a
 * query holds taken from its request's memory account.
 *
 * The pieces, in the plan's order, are cut into consecutive parts of
 * about equal block bytes, one a thread.  Each thread but the caller's
 * sums its part into a result of its own; the caller sums the heads and
 * the first part into the query's result, then merges the others' in
 * their order (pmodel_result_merge), so that the result, its
 * dictionary's order included, is the one summing every piece in turn
 * gives.  Threads: at most the store's query_threads a query, its own
 * included, and as many at once over all the store's queries
 * (s->query_spare, taken without waiting: a query that finds none spare
 * runs on its own thread); a part covers at least query_split_bytes.
 *
 * The request's check and account are one thread's: the query's threads
 * use them under its lock (struct pstore_qshare).  A thread that fails
 * (its check stopped it, its memory was refused, a block is corrupt)
 * sets the share's halt, which the others' polls see, and the query
 * returns the first error in the pieces' order, said as its thread said
 * it.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_query.h"
#include "pstore_series.h"

/* A source's nodes imported into a result between two checks: about a
 * millisecond of work (a node and its location, function and strings
 * hashed). */
#define ADD_STEP 4096

struct worker {
	struct pstore_workers *w;
	struct pstore_qctx q; /* its own result, diag and counts */
	const struct pstore_piece *p;
	size_t n;
	char why[256];
	struct ember_diag d;
	int err;
	pthread_t t;
	bool started;
};

struct pstore_workers {
	struct pstore *s;
	struct pstore_qshare share;
	const struct pstore_piece *p; /* the caller's part */
	size_t n;
	struct worker *wk;	      /* the other parts, in order */
	size_t nwk;
	int spare;		      /* threads taken from s->query_spare */
};

/* ---- memory ------------------------------------------------------------------- */

static int take(struct pstore_qctx *q, uint64_t n)
{
	struct ember_mem_account *a = EMBER_OPTS_GET(q->req, account, NULL);
	int err;

	if (!a || !n)
		return 0;
	if (q->share)
		pthread_mutex_lock(&q->share->mu);
	err = ember_mem_account_take(a, n);
	if (err && q->share) /* the other threads stop too */
		atomic_store(&q->share->halt, 1);
	if (q->share)
		pthread_mutex_unlock(&q->share->mu);
	if (err == -E2BIG)
		return EMBER_FAIL(q->d, err, "query: its sums are past the request's share of "
				  "the server's memory (a narrower selection or range)");
	if (err)
		return EMBER_FAIL(q->d, err, "query: the server's memory is taken by other "
				  "requests now: ask again");
	return 0;
}

int pstore_qctx_hold(struct pstore_qctx *q, uint64_t n)
{
	if (n <= q->held)
		return 0;
	EMBER_FORWARD_IF_ERROR(take(q, n - q->held));
	q->held = n;
	return 0;
}

int pstore_qctx_charge(struct pstore_qctx *q)
{
	uint64_t n = pmodel_result_bytes(q->r) + pmodel_stack_index_bytes(&q->stacks);

	if (n <= q->charged)
		return 0;
	EMBER_FORWARD_IF_ERROR(take(q, n - q->charged));
	q->charged = n;
	return 0;
}

int pstore_qctx_add(struct pstore_qctx *q, const struct pmodel_dict *src,
		    const struct pmodel_stack_key *keys, const int64_t *self)
{
	size_t n = pmodel_dict_nodes(src);
	struct pmodel_import im = { 0 };
	int err = keys ? 0 : pmodel_import_init(&im, src, &q->r->dict);

	for (size_t i = 1; !err && i < n; i += ADD_STEP) {
		size_t end = n - i > ADD_STEP ? i + ADD_STEP : n;

		if ((err = pstore_qctx_check(q)))
			break;
		if (keys)
			err = pmodel_result_add_keyed(q->r, &q->stacks, &im, src, keys, self, i,
						      end);
		else
			err = pmodel_result_add_nodes(q->r, &im, self, i, end);
	}
	pmodel_import_release(&im);
	return err ? err : pstore_qctx_charge(q);
}

void pstore_qctx_release_stacks(struct pstore_qctx *q)
{
	pmodel_stack_index_release(&q->stacks);
}

/* ---- parts --------------------------------------------------------------------- */

/* The bytes of block b a part [from, to) of the range reads: its share
 * of the block's time span. */
static uint64_t block_weight(const struct pstore_block *b, int64_t from, int64_t to)
{
	const struct pstore_block_meta *m = &b->meta;
	int64_t lo = from > m->min_time ? from : m->min_time;
	int64_t hi = to < m->max_time ? to : m->max_time;
	double span = (double)m->max_time - (double)m->min_time;

	if (b->corrupt || span <= 0 || hi <= lo)
		return b->size;
	return (uint64_t)((double)b->size * (((double)hi - (double)lo) / span));
}

/* The block bytes a piece reads (a bucket less profiles: the rollup's). */
static uint64_t weight(const struct pstore_piece *p)
{
	if (p->whole)
		return block_weight(p->whole, p->wfrom, p->wto);
	return block_weight(p->b, p->from, p->to);
}

static uint64_t total_weight(const struct pstore_piece *p, size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += weight(&p[i]);
	return t;
}

/* The threads a query of these pieces would use: each at least
 * query_split_bytes, at most query_threads and one a piece. */
static size_t parts_wanted(const struct pstore *s, const struct pstore_piece *p, size_t n)
{
	uint64_t parts = total_weight(p, n) / s->opts.query_split_bytes;

	if (parts > s->opts.query_threads)
		parts = s->opts.query_threads;
	return parts > n ? n : parts ? (size_t)parts : 1;
}

/* Up to want threads from the store's spare ones: how many. */
static int reserve(struct pstore *s, int want)
{
	int have = atomic_load(&s->query_spare), got;

	do {
		got = have < want ? have : want;
		if (got <= 0)
			return 0;
	} while (!atomic_compare_exchange_weak(&s->query_spare, &have, have - got));
	return got;
}

/* The first piece of each of parts parts of about equal weight
 * (cut[parts] = n); each part has a piece. */
static void split(const struct pstore_piece *p, size_t n, size_t parts, size_t *cut)
{
	uint64_t total = total_weight(p, n), acc = 0;
	size_t k = 1;

	cut[0] = 0;
	for (size_t i = 0; i + 1 < n && k < parts; i++) {
		acc += weight(&p[i]);
		/* leave a piece for each part still to cut */
		if (acc >= total / parts * k || n - (i + 1) <= parts - k)
			cut[k++] = i + 1;
	}
	cut[k] = n;
}

/* Sum pieces p[0..n) into q->r, each over its part of the range. */
static int sum_part(struct pstore_qctx *q, const struct pstore_piece *p, size_t n)
{
	int64_t from = q->from, to = q->to;
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		q->from = p[i].from;
		q->to = p[i].to;
		if (pstore_qctx_check(q))
			err = q->stopped;
		else
			err = p[i].whole ? pstore_block_query_less(&p[i], q)
					 : pstore_block_query(p[i].b, q);
	}
	q->from = from;
	q->to = to;
	return err;
}

static void halt(struct pstore_workers *w)
{
	atomic_store(&w->share.halt, 1);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;

	wk->err = sum_part(&wk->q, wk->p, wk->n);
	if (wk->err && !wk->q.halted)
		halt(wk->w);
	return NULL;
}

/* Worker k of w over p[cut[k]..cut[k + 1]), with q's selection. */
static int worker_init(struct pstore_workers *w, struct worker *wk, const struct pstore_qctx *q,
		       const struct pstore_piece *p, size_t n)
{
	*wk = (struct worker){ .w = w, .p = p, .n = n };
	wk->d = ember_diag_make(wk->why, sizeof(wk->why));
	wk->q = (struct pstore_qctx){ .sel = q->sel, .type = q->type, .from = q->from,
				      .to = q->to, .links = q->links, .cache = q->cache,
				      .d = &wk->d, .req = q->req, .share = &w->share };
	return pmodel_result_new(q->r->type, &wk->q.r);
}

static void workers_free(struct pstore_workers *w)
{
	for (size_t i = 0; i < w->nwk; i++) {
		pmodel_result_free(w->wk[i].q.r);
		pstore_qctx_release_stacks(&w->wk[i].q);
	}
	if (w->wk)
		pthread_mutex_destroy(&w->share.mu);
	atomic_fetch_add(&w->s->query_spare, w->spare);
	free(w->wk);
	free(w);
}

/* Threads for parts 1.. of the pieces cut at cut[0..parts]. */
static int workers_begin(struct pstore_workers *w, struct pstore_qctx *q, const size_t *cut,
			 size_t parts)
{
	int err = 0;

	w->wk = calloc(parts - 1, sizeof(*w->wk));
	if (!w->wk)
		return -ENOMEM;
	pthread_mutex_init(&w->share.mu, NULL);
	atomic_init(&w->share.halt, 0);
	w->nwk = parts - 1;
	w->n = cut[1];
	q->share = &w->share;
	for (size_t k = 1; !err && k < parts; k++)
		err = worker_init(w, &w->wk[k - 1], q, w->p + cut[k], cut[k + 1] - cut[k]);
	for (size_t k = 0; !err && k < w->nwk; k++) /* one that cannot start: finish runs it */
		w->wk[k].started = !pthread_create(&w->wk[k].t, NULL, worker_main, &w->wk[k]);
	return err;
}

int pstore_workers_start(struct pstore *s, const struct pstore_piece *p, size_t n,
			 struct pstore_qctx *q, struct pstore_workers **out)
{
	struct pstore_workers *w = calloc(1, sizeof(*w));
	size_t parts = n ? parts_wanted(s, p, n) : 1, *cut = NULL;
	int err = 0;

	if (!w)
		return -ENOMEM;
	*w = (struct pstore_workers){ .s = s, .p = p, .n = n };
	if (parts > 1)
		parts = 1 + (size_t)(w->spare = reserve(s, (int)(parts - 1)));
	if (parts > 1 && !(cut = malloc((parts + 1) * sizeof(*cut))))
		err = -ENOMEM;
	if (!err && parts > 1) {
		split(p, n, parts, cut);
		err = workers_begin(w, q, cut, parts);
	}
	free(cut);
	*out = w;
	return err;
}

/* The query's error: the first in the pieces' order that did not come
 * from another thread's halt, said as it was. */
static int first_error(struct pstore_workers *w, struct pstore_qctx *q, int err)
{
	if (err && !q->halted)
		return err;
	for (size_t i = 0; i < w->nwk; i++) {
		const struct worker *wk = &w->wk[i];

		if (!wk->err || wk->q.halted)
			continue;
		if (wk->why[0])
			EMBER_FAIL(q->d, wk->err, "%s", wk->why);
		return wk->err;
	}
	return err;
}

/* The other parts' results merged into q->r in order. */
static int merge_parts(struct pstore_workers *w, struct pstore_qctx *q)
{
	int err = 0;

	for (size_t i = 0; !err && i < w->nwk; i++) {
		err = pmodel_result_merge(q->r, w->wk[i].q.r);
		pmodel_result_free(w->wk[i].q.r); /* not kept until the end */
		pstore_qctx_release_stacks(&w->wk[i].q);
		w->wk[i].q.r = NULL;
		if (!err)
			err = pstore_qctx_charge(q);
	}
	return err;
}

int pstore_workers_finish(struct pstore_workers *w, struct pstore_qctx *q, int err)
{
	if (!err)
		err = sum_part(q, w->p, w->n);
	if (err && !q->halted && w->nwk)
		halt(w);
	for (size_t i = 0; i < w->nwk; i++) {
		if (w->wk[i].started)
			pthread_join(w->wk[i].t, NULL);
		else if (w->wk[i].q.r)
			worker_main(&w->wk[i]);
		q->read += w->wk[i].q.read;
		q->rows_bytes += w->wk[i].q.rows_bytes;
		q->zeros |= w->wk[i].q.zeros;
	}
	q->share = NULL;
	err = first_error(w, q, err);
	if (!err)
		err = merge_parts(w, q);
	workers_free(w);
	return err;
}
