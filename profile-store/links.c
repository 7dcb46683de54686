/*
 * links.c - the links of samples to traces and spans (OTLP's link table,
 * the span_id and trace_id labels of pprof samples) and their attribute
 * sets (OTLP's sample attributes), kept per row beside the rows and never
 * as series labels: a head's or a block's table of the distinct links its
 * rows name, and the query's test of a link against the span and trace
 * IDs asked for (docs/profile-store-format.md).
 */
#include "pstore_series.h"

static bool link_equal(const void *ctx, size_t i, const void *key)
{
	return memcmp(&((const struct pstore_link *)ctx)[i], key, sizeof(struct pstore_link)) == 0;
}

static int linktab_ready(struct pstore_linktab *t)
{
	uint32_t none;

	if (t->ready)
		return 0;
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&t->set));
	/* "" interned (indexed), so that pstore_linktab_attrs can look up */
	if (pmodel_strtab_init(&t->attrs) || pmodel_strtab_intern(&t->attrs, "", 0, &none)) {
		ember_hset_release(&t->set);
		pmodel_strtab_release(&t->attrs);
		return -ENOMEM;
	}
	t->ready = true;
	return 0;
}

int pstore_linktab_intern(struct pstore_linktab *t, const struct pstore_link *l, uint32_t *id)
{
	uint64_t h;
	size_t i;

	EMBER_FORWARD_IF_ERROR(linktab_ready(t));
	h = ember_hash(&t->set.key, l, sizeof(*l));
	i = ember_hset_find(&t->set, h, link_equal, t->v.v, l);
	if (i == SIZE_MAX) {
		i = t->v.n;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->v, *l));
		EMBER_FORWARD_IF_ERROR(ember_hset_insert(&t->set, h, i));
	}
	*id = (uint32_t)i + 1;
	return 0;
}

int pstore_linktab_attrs(struct pstore_linktab *t, const char *s, size_t len, size_t max,
			 uint32_t *id)
{
	*id = 0;
	if (!len)
		return 0;
	EMBER_FORWARD_IF_ERROR(linktab_ready(t));
	*id = pmodel_strtab_find(&t->attrs, s, len);
	if (*id != UINT32_MAX)
		return 0;
	*id = 0;
	if (pmodel_strtab_count(&t->attrs) > max)
		return 0;
	return pmodel_strtab_intern(&t->attrs, s, len, id);
}

int pstore_linktab_copy(struct pstore_linktab *dst, const struct pstore_linktab *src,
			uint32_t sid, uint32_t *id)
{
	struct pstore_link l = src->v.v[sid - 1];

	if (l.attrs) {
		const char *a = pmodel_str(&src->attrs, l.attrs);

		EMBER_FORWARD_IF_ERROR(pstore_linktab_attrs(dst, a, strlen(a), PSTORE_MAX_ATTR_SETS,
							    &l.attrs));
	}
	return pstore_linktab_intern(dst, &l, id);
}

const char *pstore_linktab_attrs_of(const struct pstore_linktab *t, uint32_t id)
{
	if (!id || !t->v.v[id - 1].attrs)
		return NULL;
	return pmodel_str(&t->attrs, t->v.v[id - 1].attrs);
}

size_t pstore_linktab_bytes(const struct pstore_linktab *t)
{
	if (!t->ready)
		return t->v.alloc * sizeof(struct pstore_link);
	return t->v.alloc * sizeof(struct pstore_link) +
	       (t->set.mask + 1) * sizeof(struct ember_hset_slot) + t->attrs.bytes.alloc +
	       t->attrs.off.alloc * 4 + (t->attrs.set.mask + 1) * sizeof(struct ember_hset_slot);
}

void pstore_linktab_release(struct pstore_linktab *t)
{
	EMBER_VEC_FREE(&t->v);
	if (t->ready) {
		ember_hset_release(&t->set);
		pmodel_strtab_release(&t->attrs);
	}
	t->ready = false;
}

static int cmp8(const void *a, const void *b)
{
	return memcmp(a, b, 8);
}

static int cmp16(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

static bool zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* want[i + 1] for v[i]: whether f names its span or trace; how many. */
static size_t wanted(const struct pstore_link *v, size_t n, const struct pstore_link_filter *f,
		     uint8_t *want)
{
	size_t hits = 0;

	want[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pstore_link *l = &v[i];
		bool w = (f->n_span && !zero(l->span, 8) &&
			  bsearch(l->span, f->span, f->n_span, 8, cmp8)) ||
			 (f->n_trace && !zero(l->trace, 16) &&
			  bsearch(l->trace, f->trace, f->n_trace, 16, cmp16));

		want[i + 1] = w;
		hits += w;
	}
	return hits;
}

int pstore_links_want(const struct pstore_link *v, size_t n, const struct pstore_link_filter *f,
		      uint8_t **want, bool *none)
{
	*want = NULL;
	*none = false;
	if (!pstore_link_filter_on(f))
		return 0;
	if (!(*want = malloc(n + 1)))
		return -ENOMEM;
	*none = !wanted(v, n, f, *want);
	return 0;
}
