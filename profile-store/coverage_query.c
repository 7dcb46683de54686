/*
 * coverage_query.c - pstore_coverage: the symbolization coverage of the
 * profiles a selection reaches, from what each profile recorded (at
 * ingest, or recounted when a compaction resolved frames): samples,
 * samples whose frames all resolved, and per build ID and reason the
 * samples it left unresolved, the build IDs that most need debug info
 * first.
 */
#include "pstore_query.h"
#include "pstore_series.h"

/* The rows found through a keyed set by (build ID, reason): a selection
 * of many build IDs costs linear time (issue 23). */
struct cov {
	struct pstore_coverage *c;
	size_t alloc;		/* of c->rows */
	struct ember_hset set;	/* of c->rows */
};

struct row_key {
	const char *bid, *reason;
};

static bool row_equal(const void *ctx, size_t i, const void *key)
{
	const struct pstore_coverage_row *r = &((const struct cov *)ctx)->c->rows[i];
	const struct row_key *k = key;

	return !strcmp(r->build_id, k->bid) && !strcmp(r->reason, k->reason);
}

static int add_row(struct cov *cv, const char *bid, const char *reason, uint64_t n)
{
	struct pstore_coverage *c = cv->c;
	struct row_key k = { bid, reason };
	uint64_t h = ember_hash_u64(&cv->set.key, ember_hash(&cv->set.key, bid, strlen(bid)) ^
						 ember_hash(&cv->set.key, reason, strlen(reason)));
	size_t i = ember_hset_find(&cv->set, h, row_equal, cv, &k);

	if (i != SIZE_MAX) {
		c->rows[i].samples += n;
		return 0;
	}
	if (c->n_rows == cv->alloc) {
		size_t alloc = cv->alloc ? 2 * cv->alloc : 16;
		struct pstore_coverage_row *rows = realloc(c->rows, alloc * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		c->rows = rows;
		cv->alloc = alloc;
	}
	c->rows[c->n_rows] = (struct pstore_coverage_row){ strdup(bid), strdup(reason), n };
	if (!c->rows[c->n_rows].build_id || !c->rows[c->n_rows].reason) {
		free(c->rows[c->n_rows].build_id);
		free(c->rows[c->n_rows].reason);
		return -ENOMEM;
	}
	c->n_rows++;
	return ember_hset_insert(&cv->set, h, c->n_rows - 1);
}

static int on_profile(void *ctx, const struct pstore_seriestab *t, const struct pstore_prof *p,
		      uint64_t count, int32_t col, const int64_t *totals, const struct pstore_cov *cov)
{
	(void)count; /* coverage reads blocks only (no rollups) */
	struct cov *cv = ctx;

	(void)col, (void)totals;
	cv->c->profiles++;
	cv->c->samples += p->samples;
	cv->c->resolved_samples += p->resolved;
	for (uint32_t i = 0; i < p->ncov; i++)
		EMBER_FORWARD_IF_ERROR(add_row(cv, pmodel_str(&t->str, cov[i].build_id),
			       pmodel_str(&t->str, cov[i].reason), cov[i].samples));
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct pstore_coverage_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->build_id, y->build_id);
}

void pstore_coverage_free(struct pstore_coverage *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_rows; i++) {
		free(c->rows[i].build_id);
		free(c->rows[i].reason);
	}
	free(c->rows);
	free(c);
}

int pstore_coverage(struct pstore *s, const struct pstore_selection *sel,
		    struct pstore_coverage **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct cov cv = { .c = calloc(1, sizeof(*cv.c)) };
	struct pstore_scan sc = { .profile = on_profile, .ctx = &cv };
	struct pstore_snapshot snap;
	int err = !cv.c ? -ENOMEM : ember_hset_init(&cv.set) ? -EIO : 0;

	err = err ? err : pstore_scan_begin(s, sel, false, &sc, &snap, &d);

	if (!err) {
		err = pstore_scan_run(&snap, &sc);
		pstore_scan_end(&sc, &snap);
	}
	ember_hset_release(&cv.set);
	if (err) {
		pstore_coverage_free(cv.c);
		return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
	}
	ember_qsort(cv.c->rows, cv.c->n_rows, sizeof(*cv.c->rows), cmp_row);
	*out = cv.c;
	return 0;
}
