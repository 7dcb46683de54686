/*
 * resolve.c - the caller's resolver (the symbolization service, in a
 * later phase) applied to a dictionary: the locations without lines that
 * lie in a mapping are handed over one mapping at a time (addresses as
 * the profile has them), and the frames it reports become the location's
 * lines.  A query applies it to its result (each distinct address once,
 * whatever the number of profiles); a compaction to the block it writes,
 * so the block's dictionary is updated.  The dictionary's location set
 * is not used for interning after this (a location's key changed).
 */
#include "pstore_resolve.h"

struct pstore_resolution {
	struct pmodel_dict *d;
	const uint32_t *locs;	/* the locations asked about */
	size_t n;
	const char *build_id;
	struct pstore_reasons *reasons;
	bool changed;
};

int pstore_reasons_init(struct pstore_reasons *r)
{
	memset(r, 0, sizeof(*r));
	return ember_hset_init(&r->set) ? -EIO : 0;
}

void pstore_reasons_free(struct pstore_reasons *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].build_id);
		free(r->v[i].reason);
	}
	EMBER_VEC_FREE(r);
	ember_hset_release(&r->set);
}

static bool reason_equal(const void *ctx, size_t i, const void *key)
{
	return strcmp(((const struct pstore_reasons *)ctx)->v[i].build_id, key) == 0;
}

static uint64_t reason_hash(const struct pstore_reasons *r, const char *build_id)
{
	return ember_hash(&r->set.key, build_id, strlen(build_id));
}

const char *pstore_reasons_find(const struct pstore_reasons *r, const char *build_id)
{
	size_t i = ember_hset_find(&r->set, reason_hash(r, build_id), reason_equal, r, build_id);

	return i == SIZE_MAX ? NULL : r->v[i].reason;
}

int pstore_resolution_set(struct pstore_resolution *r, size_t i,
			  const struct pstore_frame *frames, size_t n)
{
	struct pmodel_loc *l;
	size_t off;

	if (i >= r->n || !n)
		return i >= r->n ? -EINVAL : 0;
	off = r->d->lines.n;
	if (off + n >= UINT32_MAX)
		return -E2BIG;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&r->d->lines, off + n));
	for (size_t k = 0; k < n; k++) {
		struct pmodel_func f = { .start_line = frames[k].start_line };
		struct pmodel_line ln = { .line = frames[k].line };

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&r->d->str, frames[k].function, &f.name));
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&r->d->str, frames[k].system_name, &f.system_name));
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&r->d->str, frames[k].filename, &f.filename));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_func(r->d, &f, &ln.func));
		r->d->lines.v[off + k] = ln;
	}
	r->d->lines.n = off + n;
	l = &r->d->locs.v[r->locs[i]];
	l->line_off = (uint32_t)off;
	l->nlines = (uint32_t)n;
	r->changed = true;
	return 0;
}

int pstore_resolution_fail(struct pstore_resolution *r, size_t i, const char *reason)
{
	struct pstore_reason re;

	if (i >= r->n)
		return -EINVAL;
	if (!r->reasons || pstore_reasons_find(r->reasons, r->build_id))
		return 0;
	re.build_id = strdup(r->build_id);
	re.reason = strdup(reason ? reason : "unsymbolized");
	if (!re.build_id || !re.reason || EMBER_VEC_APPEND(r->reasons, re)) {
		free(re.build_id);
		free(re.reason);
		return -ENOMEM;
	}
	if (ember_hset_insert(&r->reasons->set, reason_hash(r->reasons, re.build_id),
			      r->reasons->n - 1)) {
		r->reasons->n--;
		free(re.build_id);
		free(re.reason);
		return -ENOMEM;
	}
	return 0;
}

static int cmp_by_mapping(const void *a, const void *b, void *ctx)
{
	const struct pmodel_dict *d = ctx;
	const struct pmodel_loc *x = &d->locs.v[*(const uint32_t *)a],
				*y = &d->locs.v[*(const uint32_t *)b];

	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

/* Call fn for locs[0..n), all in one mapping. */
static int resolve_mapping(struct pstore_resolution *r, pstore_resolve_fn fn, void *ctx,
			   struct ember_diag *diag)
{
	const struct pmodel_map *m = &r->d->maps.v[r->d->locs.v[r->locs[0]].mapping - 1];
	struct pstore_mapping pm = { .start = m->start, .limit = m->limit, .offset = m->offset };
	uint64_t *addrs = malloc(r->n * sizeof(*addrs));
	char *bid, *file;
	int err;

	if (!addrs)
		return -ENOMEM;
	/* Copies: the resolver's frames are interned into the same table. */
	bid = strdup(pmodel_str(&r->d->str, m->build_id));
	file = strdup(pmodel_str(&r->d->str, m->filename));
	if (!bid || !file) {
		free(addrs);
		free(bid);
		free(file);
		return -ENOMEM;
	}
	pm.build_id = r->build_id = bid;
	pm.filename = file;
	for (size_t i = 0; i < r->n; i++)
		addrs[i] = r->d->locs.v[r->locs[i]].address;
	err = fn(ctx, &pm, addrs, r->n, r);
	if (err < 0)
		err = EMBER_FAIL(diag, err, "resolver failed for build ID '%.80s': %s", bid,
			      pstore_strerror(err));
	free(addrs);
	free(bid);
	free(file);
	return err;
}

int pstore_resolve_dict(struct pmodel_dict *d, pstore_resolve_fn fn, void *ctx,
		    struct pstore_reasons *reasons, bool *changed, struct ember_diag *diag)
{
	EMBER_VEC(uint32_t) todo = { 0 };
	struct pstore_resolution r = { .d = d, .reasons = reasons };
	int err = 0;

	for (uint32_t i = 0; i < d->locs.n && !err; i++)
		if (!d->locs.v[i].nlines && d->locs.v[i].mapping)
			err = EMBER_VEC_APPEND(&todo, i);
	if (!err)
		ember_qsort_r(todo.v, todo.n, sizeof(*todo.v), cmp_by_mapping, d);
	for (size_t i = 0, j; !err && i < todo.n; i = j) {
		for (j = i; j < todo.n && d->locs.v[todo.v[j]].mapping ==
					      d->locs.v[todo.v[i]].mapping; j++)
			;
		r.locs = todo.v + i;
		r.n = j - i;
		err = resolve_mapping(&r, fn, ctx, diag);
	}
	EMBER_VEC_FREE(&todo);
	if (changed)
		*changed = r.changed;
	return err;
}
