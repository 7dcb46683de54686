/*
 * jfr_labels.c - the "labels" field of the Java agent's form: a
 * protobuf LabelsSnapshot (grafana/jfr-parser, pprof/jfr_labels.proto):
 *   message Context        { map<int64, int64> labels = 1; }
 *   message LabelsSnapshot { map<int64, Context> contexts = 1;
 *                            map<int64, string> strings = 2; }
 * a context ID (the contextId field of the agent's events) naming label
 * pairs of string IDs.  Read by hand (a map entry is a message of key 1
 * and value 2), every length checked by the cursor, the pairs resolved
 * into strings once the whole message is read (its fields may come in
 * any order); a pair naming a string the snapshot lacks is refused.
 * Outside input: fuzzed by tests/fuzz/fuzz_jfr.c.
 */
#include "jfr_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct lstr {
	int64_t id;
	const char *s;
};

struct lctx {
	int64_t id;
	size_t first, n; /* pairs[2 * first ...] */
};

struct jfr_labels {
	JFR_VEC(struct lstr) strs;
	JFR_VEC(struct lctx) ctxs;
	JFR_VEC(int64_t) ids;	     /* key, value string IDs of every pair */
	JFR_VEC(const char *) pairs; /* the same resolved */
	char *text;		     /* the strings, NUL-terminated */
	size_t text_len;
};

#define WIRE_VARINT 0
#define WIRE_LEN 2

/* One field: number, and either a varint (*v) or bytes (*b, *n). */
static int field(struct jfr_dec *x, const uint8_t **p, const uint8_t *end, uint64_t *num,
		 uint64_t *v, const uint8_t **b, size_t *n)
{
	uint64_t key;
	int err = ember_cur_uleb(p, end, &key);

	if (!err && (key & 7) == WIRE_VARINT)
		err = ember_cur_uleb(p, end, v);
	else if (!err && (key & 7) == WIRE_LEN)
		err = ember_cur_lenbytes(p, end, (uint64_t)(end - *p), b, n);
	else if (!err)
		err = -EINVAL;
	EMBER_FAIL_IF(err, x->d, -EINVAL,
		      "jfr: labels: not a LabelsSnapshot (a field of wire type %llu, or truncated)",
		      (unsigned long long)(key & 7));
	*num = key >> 3;
	return 0;
}

/* A map entry: key (1, varint) into *k, value (2) as varint *v or bytes. */
static int entry(struct jfr_dec *x, const uint8_t *p, const uint8_t *end, int64_t *k,
		 uint64_t *v, const uint8_t **b, size_t *n)
{
	while (p < end) {
		uint64_t num, iv = 0;
		const uint8_t *ib = NULL;
		size_t in = 0;

		EMBER_FORWARD_IF_ERROR(field(x, &p, end, &num, &iv, &ib, &in));
		if (num == 1)
			*k = (int64_t)iv;
		else if (num == 2 && ib) {
			*b = ib;
			*n = in;
		} else if (num == 2)
			*v = iv;
	}
	return 0;
}

static int add_string(struct jfr_dec *x, struct jfr_labels *l, const uint8_t *p,
		      const uint8_t *end)
{
	int64_t id = 0;
	uint64_t v = 0;
	const uint8_t *b = NULL;
	size_t n = 0;
	struct lstr s;
	int err;

	EMBER_FORWARD_IF_ERROR(entry(x, p, end, &id, &v, &b, &n));
	s = (struct lstr){ .id = id, .s = l->text + l->text_len };
	if (n)
		memcpy(l->text + l->text_len, b, n);
	l->text[l->text_len + n] = '\0';
	l->text_len += n + 1;
	return JFR_PUSH(x, &l->strs, s, err);
}

static int add_context(struct jfr_dec *x, struct jfr_labels *l, const uint8_t *p,
		       const uint8_t *end)
{
	struct lctx c = { .first = l->ids.n / 2 };
	const uint8_t *b = NULL;
	uint64_t v = 0;
	size_t n = 0;
	int err;

	EMBER_FORWARD_IF_ERROR(entry(x, p, end, &c.id, &v, &b, &n));
	for (const uint8_t *q = b, *qe = b ? b + n : b; q < qe;) { /* Context: its labels map */
		uint64_t num, iv = 0;
		const uint8_t *eb = NULL;
		size_t en = 0;
		int64_t key = 0;
		uint64_t val = 0;

		EMBER_FORWARD_IF_ERROR(field(x, &q, qe, &num, &iv, &eb, &en));
		if (num != 1 || !eb)
			continue;
		EMBER_FORWARD_IF_ERROR(entry(x, eb, eb + en, &key, &val, &(const uint8_t *){ NULL },
					     &(size_t){ 0 }));
		if (JFR_PUSH(x, &l->ids, key, err) || JFR_PUSH(x, &l->ids, (int64_t)val, err))
			return err;
		c.n++;
	}
	return JFR_PUSH(x, &l->ctxs, c, err);
}

static int by_id(const void *a, const void *b)
{
	int64_t p = *(const int64_t *)a, q = *(const int64_t *)b;

	return (p > q) - (p < q);
}

/* Every pair's string IDs resolved; contexts sorted by ID. */
static int resolve(struct jfr_dec *x, struct jfr_labels *l)
{
	if (l->strs.n)
		qsort(l->strs.v, l->strs.n, sizeof(*l->strs.v), by_id);
	if (l->ctxs.n)
		qsort(l->ctxs.v, l->ctxs.n, sizeof(*l->ctxs.v), by_id);
	EMBER_FORWARD_IF_ERROR(jfr_reserve(x, (void **)&l->pairs.v, &l->pairs.alloc, l->ids.n + 1,
					   sizeof(*l->pairs.v)));
	for (size_t i = 0; i < l->ids.n; i++) {
		const struct lstr *s = l->strs.n ? bsearch(&l->ids.v[i], l->strs.v, l->strs.n,
							   sizeof(*s), by_id)
						 : NULL;

		EMBER_FAIL_IF(!s, x->d, -EINVAL,
			      "jfr: labels: a label names string %lld, which the snapshot lacks",
			      (long long)l->ids.v[i]);
		l->pairs.v[l->pairs.n++] = s->s;
	}
	return 0;
}

static int parse(struct jfr_dec *x, struct jfr_labels *l, const uint8_t *p, const uint8_t *end)
{
	EMBER_FORWARD_IF_ERROR(ember_mem_account_take(x->lim.account, (size_t)(end - p) + 1));
	l->text = malloc((size_t)(end - p) + 1); /* the strings and a NUL each fit */
	if (!l->text)
		return -ENOMEM;
	while (p < end) {
		uint64_t num, v = 0;
		const uint8_t *b = NULL;
		size_t n = 0;

		EMBER_FORWARD_IF_ERROR(field(x, &p, end, &num, &v, &b, &n));
		if (num == 1 && b)
			EMBER_FORWARD_IF_ERROR(add_context(x, l, b, b + n));
		else if (num == 2 && b)
			EMBER_FORWARD_IF_ERROR(add_string(x, l, b, b + n));
	}
	return resolve(x, l);
}

int jfr_labels_parse(struct jfr_dec *x, const uint8_t *data, size_t len, struct jfr_labels **out)
{
	struct jfr_labels *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	err = parse(x, l, data, data + len);
	if (err) {
		jfr_labels_free(l);
		return err;
	}
	*out = l;
	return 0;
}

void jfr_labels_of(const struct jfr_labels *l, int64_t id, const char *const **pairs, size_t *n)
{
	const struct lctx *c = l->ctxs.n ? bsearch(&id, l->ctxs.v, l->ctxs.n, sizeof(*c), by_id)
					 : NULL;

	*pairs = c ? l->pairs.v + 2 * c->first : NULL;
	*n = c ? c->n : 0;
}

void jfr_labels_free(struct jfr_labels *l)
{
	if (!l)
		return;
	free(l->strs.v);
	free(l->ctxs.v);
	free(l->ids.v);
	free(l->pairs.v);
	free(l->text);
	free(l);
}
