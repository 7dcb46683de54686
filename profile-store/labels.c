/*
 * labels.c - the labels of a series: names as Prometheus and Pyroscope
 * allow them ([a-zA-Z_][a-zA-Z0-9_.]*: Pyroscope's dots included), values
 * any bytes but NUL, both bounded in length; sorted by name, names
 * unique, and an empty value meaning the label is absent (as in
 * Prometheus).  The series key hashes the sorted labels and the type IDs
 * of the columns: two profiles with equal labels and sample types are one
 * series.
 */
#include "pstore_series.h"

bool pstore_label_name_valid(const char *name)
{
	return ember_label_name_valid(name);
}

static int cmp_label(const void *a, const void *b)
{
	const struct pstore_label *x = a, *y = b;

	return strcmp(x->name, y->name);
}

void pstore_labels_sort(struct pstore_label *labels, size_t n)
{
	ember_qsort(labels, n, sizeof(*labels), cmp_label);
}

int pstore_labels_check(struct pstore_label *labels, size_t n, const struct pstore_limits *lim,
		    struct ember_diag *d)
{
	pstore_labels_sort(labels, n);
	EMBER_FAIL_IF(lim && n > lim->max_labels, d, -PSTORE_ERR_LIMIT,
		      "%zu labels, more than the limit of %zu", n, lim->max_labels);
	for (size_t i = 0; i < n; i++) {
		const struct pstore_label *l = &labels[i];
		size_t nlen = strlen(l->name);

		EMBER_FAIL_IF(lim && nlen > lim->max_label_name_len, d, -PSTORE_ERR_LIMIT,
			      "label name '%.64s...' longer than %zu bytes", l->name,
			      lim->max_label_name_len);
		EMBER_FAIL_IF(!pstore_label_name_valid(l->name), d, -PSTORE_ERR_LABEL,
			      "label name '%.128s' is not [a-zA-Z_][a-zA-Z0-9_.]*", l->name);
		EMBER_FAIL_IF(lim && strlen(l->value) > lim->max_label_value_len, d,
			      -PSTORE_ERR_LIMIT, "label '%s': value longer than %zu bytes",
			      l->name, lim->max_label_value_len);
		EMBER_FAIL_IF(i && strcmp(labels[i - 1].name, l->name) == 0, d,
			      -PSTORE_ERR_LABEL, "label '%s' given twice", l->name);
	}
	return 0;
}

/* Each string hashed with its NUL (no name, value or type holds one),
 * chained through the key at every step, the types after a separate
 * step: no allocation, and nothing an input can aim at without the key. */
static uint64_t chain(const struct ember_hash_key *k, uint64_t h, const char *s)
{
	return ember_hash_u64(k, h ^ ember_hash(k, s, strlen(s) + 1));
}

uint64_t pstore_series_key(const struct ember_hash_key *ident, const struct pstore_label *labels,
			   size_t n, const char *const *type_ids, size_t ntypes)
{
	uint64_t h = ember_hash_u64(ident, (uint64_t)n << 32 | ntypes);

	for (size_t i = 0; i < n; i++)
		h = chain(ident, chain(ident, h, labels[i].name), labels[i].value);
	for (size_t i = 0; i < ntypes; i++)
		h = chain(ident, h, type_ids[i]);
	return h;
}
