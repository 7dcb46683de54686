/*
 * scan.c - the selections that need no rows: which series (discovery) or
 * which profiles with their totals and coverage (series over time,
 * coverage) a selector, a type and a time range reach.  Heads are
 * scanned profile by profile; a block that lies inside the time range
 * answers series questions from its label index alone, and one that
 * overlaps its edge (or whose totals are wanted) has its profile table
 * read to be exact: the cached data when loaded, else the profiles alone,
 * never the dictionary (a scan sums no rows).
 *
 * Every read (these and pstore_query) polls its request's check between
 * sources, series and every few hundred profiles (pstore_qctx_poll), so a
 * request past its deadline or whose client went away stops reading.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_head.h"
#include "pstore_query.h"
#include "pstore_series.h"

#define POLL_EVERY 256 /* steps between two checks in a per-profile loop */

/* Another thread of q's query failed: stop, saying nothing (its error
 * is the query's). */
static bool halted(struct pstore_qctx *q)
{
	if (!q->share || !atomic_load_explicit(&q->share->halt, memory_order_relaxed))
		return false;
	q->halted = true;
	q->stopped = -ECANCELED;
	return true;
}

int pstore_qctx_check(struct pstore_qctx *q)
{
	const struct pstore_request *r = q->req;

	if (q->stopped || halted(q) || !EMBER_OPTS_HAS(r, check_arg) || !r->check)
		return q->stopped;
	if (q->share) { /* the check is one thread's; the first it stops halts the rest */
		pthread_mutex_lock(&q->share->mu);
		if (!halted(q) && (q->stopped = r->check(r->check_arg)))
			atomic_store(&q->share->halt, 1);
		pthread_mutex_unlock(&q->share->mu);
		if (q->halted)
			return q->stopped;
	} else {
		q->stopped = r->check(r->check_arg);
	}
	if (q->stopped)
		return EMBER_FAIL(q->d, q->stopped, "the request was stopped: %s",
				  q->stopped == -ETIMEDOUT ? "past its deadline"
							   : strerror(-q->stopped));
	return 0;
}

int pstore_qctx_poll(struct pstore_qctx *q)
{
	if (q->stopped || halted(q))
		return q->stopped;
	return ++q->polls % POLL_EVERY ? 0 : pstore_qctx_check(q);
}

static int head_scan(struct pstore_head *h, struct pstore_scan *sc)
{
	struct pstore_lindex ix = { 0 };
	size_t ns = h->series.series.n;
	int32_t *col = malloc((ns + 1) * sizeof(*col));
	uint8_t *seen = calloc(ns + 1, 1);
	bool any = false;
	int err = col && seen ? pstore_lindex_build(&ix, &h->series) : -ENOMEM;

	if (!err)
		err = pstore_plan(&sc->q, &h->series, &ix, col, &any);
	for (size_t i = 0; !err && any && i < h->profs.n; i++) {
		const struct pstore_prof *p = &h->profs.v[i];

		if ((err = pstore_qctx_poll(&sc->q)))
			break;
		if (h->state.v[i] != PS_VISIBLE || col[p->series] < 0 || p->time < sc->q.from ||
		    p->time >= sc->q.to)
			continue;
		if (!seen[p->series] && sc->series)
			err = sc->series(sc->ctx, &h->series, p->series, col[p->series]);
		seen[p->series] = 1;
		if (!err && sc->profile)
			err = sc->profile(sc->ctx, &h->series, p, 1, col[p->series],
					  h->totals.v + p->tot_off,
					  p->ncov ? h->cov.v + p->cov_off : NULL);
	}
	pstore_lindex_release(&ix);
	free(col);
	free(seen);
	return err;
}

static int block_profiles(struct pstore_block *b, const struct pstore_bdata *bd, const int32_t *col,
			  struct pstore_scan *sc)
{
	int err = 0;

	for (uint32_t s = 0; !err && s < b->series.series.n; s++) {
		size_t p0 = bd->series_prof.v[s], p1 = bd->series_prof.v[s + 1];

		if (col[s] < 0 || !pstore_any_in_range(bd->profs.v, p0, p1, sc->q.from, sc->q.to))
			continue;
		if ((err = pstore_qctx_poll(&sc->q)))
			break;
		if (sc->series)
			err = sc->series(sc->ctx, &b->series, s, col[s]);
		for (size_t i = p0; !err && sc->profile && i < p1; i++) {
			const struct pstore_prof *p = &bd->profs.v[i];

			if (p->time < sc->q.from || p->time >= sc->q.to)
				continue;
			sc->q.read++;
			if (!(err = pstore_qctx_poll(&sc->q)))
				err = sc->profile(sc->ctx, &b->series, p,
						  bd->rollup.n ? bd->rollup.v[i].count : 1, col[s],
						  bd->totals.v + p->tot_off,
						  p->ncov ? bd->cov.v + p->cov_off : NULL);
		}
	}
	return err;
}

static int block_scan(struct pstore_block *b, struct pstore_scan *sc)
{
	int32_t *col;
	struct pstore_bdata *bd = NULL;
	bool any, inside = b->meta.min_time >= sc->q.from && b->meta.max_time < sc->q.to;
	int err;

	EMBER_FAIL_IF(b->corrupt, sc->q.d, -PSTORE_ERR_CORRUPT, "block '%s' is corrupt: %s",
		      b->name, b->why);
	col = malloc((b->series.series.n + 1) * sizeof(*col));
	if (!col)
		return -ENOMEM;
	err = pstore_plan(&sc->q, &b->series, &b->lindex, col, &any);
	if (!err && any && inside && !sc->profile) {
		for (uint32_t s = 0; !err && s < b->series.series.n; s++)
			if (col[s] >= 0 && !(err = pstore_qctx_poll(&sc->q)))
				err = sc->series(sc->ctx, &b->series, s, col[s]);
	} else if (!err && any) {
		err = pstore_cache_profiles(sc->q.cache, b, &bd, sc->q.d);
		if (!err)
			err = block_profiles(b, bd, col, sc);
	}
	pstore_bdata_unref(bd);
	free(col);
	return err;
}

/* The blocks' and rollups' share (plan.c): each part of the range from
 * the block or rollup the plan gives it. */
static int blocks_scan(const struct pstore_snapshot *snap, struct pstore_scan *sc)
{
	struct pstore_plan_out plan;
	int64_t from = sc->q.from, to = sc->q.to;
	int err = pstore_plan_range(snap, from, to, sc->grid, sc->rollups, false, &plan);

	for (size_t i = 0; !err && i < plan.pieces.n; i++) {
		sc->q.from = plan.pieces.v[i].from;
		sc->q.to = plan.pieces.v[i].to;
		err = pstore_qctx_check(&sc->q) ? sc->q.stopped : block_scan(plan.pieces.v[i].b, sc);
	}
	sc->q.from = from;
	sc->q.to = to;
	sc->rollup_only_step = plan.rollup_only_step;
	pstore_plan_release(&plan);
	return err;
}

int pstore_scan_run(const struct pstore_snapshot *snap, struct pstore_scan *sc)
{
	int err = 0;

	for (size_t i = 0; !err && i < snap->heads.n; i++) {
		if ((err = pstore_qctx_check(&sc->q)))
			break;
		pthread_rwlock_rdlock(&snap->heads.v[i]->lock);
		err = head_scan(snap->heads.v[i], sc);
		pthread_rwlock_unlock(&snap->heads.v[i]->lock);
	}
	return err ? err : blocks_scan(snap, sc);
}

int pstore_scan_begin(struct pstore *s, const struct pstore_selection *sel, bool need_type,
		  struct pstore_scan *sc, struct pstore_snapshot *snap, struct ember_diag *d)
{
	struct pstore_selector *parsed = NULL;
	char *type = NULL;
	int err;

	memset(snap, 0, sizeof(*snap));
	sc->q = (struct pstore_qctx){ .from = sel ? sel->from_ns : 0, .cache = &s->cache, .d = d,
				      .req = sel ? sel->request : NULL };
	sc->q.to = sel && sel->to_ns ? sel->to_ns : INT64_MAX;
	EMBER_FORWARD_IF_ERROR(pstore_selection_parse(sel, &parsed, d));
	sc->q.sel = parsed;
	err = pstore_snapshot_take(s, sc->q.from, sc->q.to, snap);
	if (!err && (need_type || (sel && sel->type) || parsed->type))
		err = pstore_query_type(sel, parsed, snap, &type, d);
	sc->q.type = type;
	if (err)
		pstore_scan_end(sc, snap);
	return err;
}

void pstore_scan_end(struct pstore_scan *sc, struct pstore_snapshot *snap)
{
	pstore_selector_free((struct pstore_selector *)sc->q.sel);
	free((char *)sc->q.type);
	sc->q.sel = NULL;
	sc->q.type = NULL;
	pstore_snapshot_release(snap);
}
