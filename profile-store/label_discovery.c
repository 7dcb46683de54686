/*
 * label_discovery.c - what a UI offers for completion: the label names, the
 * values of one label, the profile types and the label sets of the series
 * a selection reaches (each part of the selection optional), sorted and
 * unique.  A label set asked with the name __profile_type__ carries the
 * series' type under it, as Pyroscope's Series answers: one set per type
 * the series holds (only the selection's type when it has one).
 */
#include "pstore_query.h"
#include "pstore_series.h"

#define PROFILE_TYPE_LABEL "__profile_type__"

enum what { NAMES, VALUES, TYPES, SETS };

struct disc {
	enum what what;
	const char *name;
	const char *const *names; /* SETS: the names kept (n_names 0: all) */
	size_t n_names;
	const char *type; /* the selection's type (NULL: any), once resolved */
	struct pstore_strs out;
};

static int add(struct disc *d, const char *s)
{
	char *c = strdup(s);

	if (!c || EMBER_VEC_APPEND(&d->out, c)) {
		free(c);
		return -ENOMEM;
	}
	return 0;
}

static bool kept(const struct disc *d, const char *name)
{
	for (size_t i = 0; i < d->n_names; i++)
		if (strcmp(d->names[i], name) == 0)
			return true;
	return d->n_names == 0;
}

/* One "NAME":"VALUE" pair of a set's JSON object, after a comma when the
 * object has begun. */
static int set_pair(struct ember_buf *b, const char *n, const char *v)
{
	int err = ember_buf_putc(b, b->len ? ',' : '{');

	err = err ? err : ember_json_str(b, n, strlen(n));
	err = err ? err : ember_buf_putc(b, ':');
	return err ? err : ember_json_str(b, v, strlen(v));
}

/* Series sid's labels (those kept) as a JSON object, with type (when not
 * NULL) as the label __profile_type__ in its sorted place; none kept:
 * nothing. */
static int add_set(struct disc *d, const struct pstore_seriestab *t, uint32_t sid,
		   const char *type)
{
	const struct pstore_series *s = &t->series.v[sid];
	struct ember_buf b;
	int err = 0;

	ember_buf_init(&b, (size_t)1 << 20); /* past the store's label limits */
	for (uint32_t i = 0; !err && i < s->nlabels; i++) {
		const struct pstore_lpair *p = &t->pairs.v[s->label_off + i];
		const char *n = pmodel_str(&t->str, p->name);

		if (type && strcmp(n, PROFILE_TYPE_LABEL) > 0) {
			err = set_pair(&b, PROFILE_TYPE_LABEL, type);
			type = NULL;
		}
		if (!err && kept(d, n))
			err = set_pair(&b, n, pmodel_str(&t->str, p->value));
	}
	err = err || !type ? err : set_pair(&b, PROFILE_TYPE_LABEL, type);
	err = err || !b.len ? err : ember_buf_putc(&b, '}');
	err = err || !b.len ? err : ember_buf_putc(&b, '\0');
	if (!err && b.len && EMBER_VEC_APPEND(&d->out, b.data))
		err = -ENOMEM;
	if (err || !b.len)
		ember_buf_release(&b);
	return err;
}

/* Series sid's sets: one, or with __profile_type__ among the names kept
 * one per type it holds (the selection's type alone when it has one). */
static int add_sets(struct disc *d, const struct pstore_seriestab *t, uint32_t sid)
{
	const struct pstore_series *s = &t->series.v[sid];

	if (!d->n_names || !kept(d, PROFILE_TYPE_LABEL))
		return add_set(d, t, sid, NULL);
	if (d->type)
		return add_set(d, t, sid, d->type);
	for (uint32_t i = 0; i < s->ntypes; i++)
		EMBER_FORWARD_IF_ERROR(
			add_set(d, t, sid, pstore_type_str(t, t->type_ids.v[s->type_off + i])));
	return 0;
}

static int on_series(void *ctx, const struct pstore_seriestab *t, uint32_t sid, int32_t col)
{
	struct disc *d = ctx;
	const struct pstore_series *s = &t->series.v[sid];
	const char *v;

	(void)col;
	if (d->what == SETS)
		return add_sets(d, t, sid);
	if (d->what == VALUES)
		return (v = pstore_series_label(t, sid, d->name)) ? add(d, v) : 0;
	for (uint32_t i = 0; d->what == NAMES && i < s->nlabels; i++)
		EMBER_FORWARD_IF_ERROR(add(d, pmodel_str(&t->str, t->pairs.v[s->label_off + i].name)));
	for (uint32_t i = 0; d->what == TYPES && i < s->ntypes; i++)
		EMBER_FORWARD_IF_ERROR(add(d, pstore_type_str(t, t->type_ids.v[s->type_off + i])));
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int to_list(struct pstore_strs *v, struct pstore_strlist **out)
{
	struct pstore_strlist *l = calloc(1, sizeof(*l));
	size_t k = 0;

	if (!l)
		return -ENOMEM;
	ember_qsort(v->v, v->n, sizeof(*v->v), cmp_str);
	for (size_t i = 0; i < v->n; i++) {
		if (k && strcmp(v->v[k - 1], v->v[i]) == 0) {
			free(v->v[i]);
			continue;
		}
		v->v[k++] = v->v[i];
	}
	l->n = k;
	l->v = v->v;
	memset(v, 0, sizeof(*v));
	*out = l;
	return 0;
}

static int discover(struct pstore *s, struct disc *dc, const struct pstore_selection *sel,
		    struct pstore_strlist **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct pstore_scan sc = { .series = on_series, .ctx = dc };
	struct pstore_snapshot snap;
	int err = pstore_scan_begin(s, sel, false, &sc, &snap, &d);

	if (err)
		return err;
	dc->type = sc.q.type;
	err = pstore_scan_run(&snap, &sc);
	pstore_scan_end(&sc, &snap);
	if (!err)
		err = to_list(&dc->out, out);
	pstore_strs_free(&dc->out);
	return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
}

int pstore_label_names(struct pstore *s, const struct pstore_selection *sel,
		       struct pstore_strlist **out, char *why, size_t why_size)
{
	struct disc dc = { .what = NAMES };

	return discover(s, &dc, sel, out, why, why_size);
}

int pstore_label_values(struct pstore *s, const char *name, const struct pstore_selection *sel,
			struct pstore_strlist **out, char *why, size_t why_size)
{
	struct disc dc = { .what = VALUES, .name = name };

	return discover(s, &dc, sel, out, why, why_size);
}

int pstore_profile_types(struct pstore *s, const struct pstore_selection *sel,
			 struct pstore_strlist **out, char *why, size_t why_size)
{
	struct disc dc = { .what = TYPES };

	return discover(s, &dc, sel, out, why, why_size);
}

int pstore_label_sets(struct pstore *s, const struct pstore_selection *sel,
		      const char *const *names, size_t n_names, struct pstore_strlist **out,
		      char *why, size_t why_size)
{
	struct disc dc = { .what = SETS, .names = names, .n_names = n_names };

	return discover(s, &dc, sel, out, why, why_size);
}
