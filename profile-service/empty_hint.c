/*
 * empty_hint.c - why a query selected nothing, when its selector names a
 * label that no series of the range has (`{Comm="shop"}` where the agent
 * writes `comm`): a sentence the answer carries (profsvc_answer.hint: the
 * X-Ember-Hint header, the JSON tree's "hint", the top-text table's
 * place), so a person reads "no series has the label 'Comm' (did you
 * mean 'comm'?)" rather than an empty table of 0 of 0 functions.
 */
#include "profsvc_internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define NAMES_MAX 16

static bool listed(const struct pstore_strlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], name) == 0)
			return true;
	return false;
}

/* The name of l equal to name but for case, or NULL. */
static const char *case_twin(const struct pstore_strlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcasecmp(l->v[i], name) == 0)
			return l->v[i];
	return NULL;
}

/* "no series ... has the label 'X' (did you mean 'x'?)" for the first
 * name of names[0, n) that l lacks, into hint ("" when none lacks). */
static void write_hint(const struct pstore_strlist *l, const char **names, size_t n,
		       char *hint, size_t size)
{
	hint[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *twin = case_twin(l, names[i]);

		if (listed(l, names[i]))
			continue;
		if (twin)
			snprintf(hint, size, "no series in this range has the label '%.64s' (did "
					     "you mean '%.64s'?)", names[i], twin);
		else
			snprintf(hint, size, "no series in this range has the label '%.64s' "
					     "(GET /api/v1/labels lists those it has)", names[i]);
		return;
	}
}

int profsvc_empty_hint(struct profsvc *s, const struct profsvc_read *rd,
		       const struct pstore_selection *sel, char *hint, size_t size, char *why,
		       size_t why_size)
{
	struct pstore_selection all = profsvc_read_selection(rd, sel);
	struct pstore_selector *ps = NULL;
	struct pstore_strlist *l = NULL;
	const char *names[NAMES_MAX];
	size_t n;
	int err;

	hint[0] = '\0';
	if (!sel->selector || pstore_selector_parse(sel->selector, &ps, why, why_size))
		return 0; /* nothing to name (the query parsed it first) */
	n = pstore_selector_names(ps, names, NAMES_MAX);
	all.selector = NULL;
	err = n ? pstore_label_names(s->store, &all, &l, why, why_size) : 0;
	if (!err && l)
		write_hint(l, names, n < NAMES_MAX ? n : NAMES_MAX, hint, size);
	pstore_strlist_free(l);
	pstore_selector_free(ps);
	return err;
}
