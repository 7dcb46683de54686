/*
 * ingest_rules.c - per-tenant ingest rules (`ember serve --rules FILE`,
 * issue 27): the file's lines ("TENANT relabel key=value ...", "TENANT
 * sample key=value ...", cut by
 * ember_config_lines, a value quoted with ' or " when it holds spaces),
 * each a rule of relabel.c or ingest_sampling.c, kept per tenant in the file's order, swapped
 * in whole on SIGHUP with the limits (a file that does not parse changes
 * nothing), and applied by ingest (ingest_pipeline.c) to a profile's
 * labels before the limits, the store or anything else sees them.  A
 * table is counted: a profile holds the table it began with until it is
 * done, while a reload swaps in the next.
 *
 * Cost: at most RULES_PER_TENANT rules a profile, each linear in its
 * labels (RE2), at most RULES_MAX in a file, each regex compiled within
 * PROFSVC_REGEX_MAX_MEM.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RULES_MAX 1024			/* rules in the file */
#define RULES_PER_TENANT 64
#define MAX_WORDS 16			/* key=value words a rule */

struct rule_line {
	char tenant[PROFSVC_TENANT_MAX + 1];
	unsigned no;			/* its line in the file */
	struct profsvc_relabel *relabel;	/* one of the two */
	struct profsvc_sample_rule *sample;
};

struct profsvc_rules {
	_Atomic size_t refs;
	size_t n;
	struct rule_line v[];		/* by tenant, then line */
};

void profsvc_rules_free(struct profsvc_rules *r)
{
	if (!r || atomic_fetch_sub(&r->refs, 1) != 1)
		return;
	for (size_t i = 0; i < r->n; i++) {
		profsvc_relabel_free(r->v[i].relabel);
		profsvc_sample_rule_free(r->v[i].sample);
	}
	free(r);
}

/* ---- parsing ---------------------------------------------------------------------- */

/* The value at *p: quoted ('...' or "...", no escapes) or up to a blank;
 * *p moved past it.  NULL when a quote is not closed or is followed by
 * more than a blank. */
static char *word_value(char **p)
{
	char *v = *p, q = *v, *end;

	if (q != '\'' && q != '"') {
		end = v + strcspn(v, " \t\r");
		*p = *end ? end + 1 : end;
		*end = '\0';
		return v;
	}
	end = strchr(v + 1, q);
	if (!end || (end[1] && !strchr(" \t\r", end[1])))
		return NULL;
	*end = '\0';
	*p = end[1] ? end + 2 : end + 1;
	return v + 1;
}

/* line's key=value words into kv[0, *n). */
static int split_words(char *p, struct profsvc_rule_kv *kv, size_t *n, unsigned no, char *why,
		       size_t why_size)
{
	*n = 0;
	for (p += strspn(p, " \t\r"); *p; p += strspn(p, " \t\r")) {
		size_t k = strcspn(p, "= \t\r");
		char *v;

		if (p[k] != '=' || !k || *n == MAX_WORDS) {
			snprintf(why, why_size, "line %u: '%.40s' %s", no, p,
				 *n == MAX_WORDS ? "is one word too many" : "is not key=value");
			return -EINVAL;
		}
		p[k] = '\0';
		kv[*n].key = p;
		p += k + 1;
		if (!(v = word_value(&p))) {
			snprintf(why, why_size, "line %u: %s=: a quote not closed before a blank",
				 no, kv[*n].key);
			return -EINVAL;
		}
		kv[(*n)++].value = v;
	}
	return 0;
}

struct rules_parse {
	struct profsvc_rules *t;	/* room for RULES_MAX */
	char *why;
	size_t why_size;
};

/* Line no ("TENANT relabel key=value ...") into the table. */
static int parse_line(void *arg, unsigned no, char *line)
{
	struct rules_parse *p = arg;
	struct rule_line *l = &p->t->v[p->t->n];
	struct profsvc_rule_kv kv[MAX_WORDS];
	char *save, *tenant = strtok_r(line, " \t\r", &save);
	char *kind = strtok_r(NULL, " \t\r", &save);
	char why[300];
	size_t n;

	bool sample = kind && !strcmp(kind, "sample");
	int err;

	if (!ember_tenant_valid(tenant) || !kind || (!sample && strcmp(kind, "relabel"))) {
		snprintf(p->why, p->why_size, "line %u: %s", no,
			 !ember_tenant_valid(tenant)
				 ? "not a tenant ID first"
				 : "want 'TENANT relabel key=value ...' or 'TENANT sample ...'");
		return -EINVAL;
	}
	if (p->t->n == RULES_MAX) {
		snprintf(p->why, p->why_size, "line %u: more than %d rules", no, RULES_MAX);
		return -E2BIG;
	}
	EMBER_FORWARD_IF_ERROR(split_words(save ? save : (char *)"", kv, &n, no, p->why,
					   p->why_size));
	err = sample ? profsvc_sample_rule_parse(kv, n, &l->sample, why, sizeof(why))
		     : profsvc_relabel_parse(kv, n, &l->relabel, why, sizeof(why));
	if (err) {
		snprintf(p->why, p->why_size, "line %u: %s", no, why);
		return err;
	}
	snprintf(l->tenant, sizeof(l->tenant), "%s", tenant);
	l->no = no;
	p->t->n++;
	return 0;
}

static int by_tenant_line(const void *a, const void *b)
{
	const struct rule_line *x = a, *y = b;
	int c = strcmp(x->tenant, y->tenant);

	return c ? c : x->no < y->no ? -1 : x->no > y->no;
}

/* Each tenant's rules within RULES_PER_TENANT (v sorted). */
static int check_per_tenant(const struct profsvc_rules *t, char *why, size_t why_size)
{
	for (size_t i = 0, first = 0; i < t->n; i++) {
		if (strcmp(t->v[i].tenant, t->v[first].tenant))
			first = i;
		if (i - first == RULES_PER_TENANT) {
			snprintf(why, why_size, "line %u: tenant '%s' has more than %d rules",
				 t->v[i].no, t->v[i].tenant, RULES_PER_TENANT);
			return -E2BIG;
		}
	}
	return 0;
}

int profsvc_rules_parse(const char *text, size_t len, struct profsvc_rules **out, char *why,
			size_t why_size)
{
	struct profsvc_rules *t;
	struct rules_parse p = { .why = why, .why_size = why_size };
	char *copy;
	int err;

	if (len > PROFSVC_RULES_MAX_BYTES || memchr(text, '\0', len)) {
		snprintf(why, why_size, "%s", len > PROFSVC_RULES_MAX_BYTES ? "larger than 1 MiB"
								     : "a NUL byte: not text");
		return -EINVAL;
	}
	copy = strndup(text, len);
	p.t = t = calloc(1, sizeof(*t) + RULES_MAX * sizeof(t->v[0]));
	if (t)
		atomic_init(&t->refs, 1);
	err = copy && t ? ember_config_lines(copy, parse_line, &p) : -ENOMEM;
	free(copy);
	if (!err) {
		qsort(t->v, t->n, sizeof(t->v[0]), by_tenant_line);
		err = check_per_tenant(t, why, why_size);
	}
	if (err) {
		profsvc_rules_free(t);
		return err;
	}
	*out = t;
	return 0;
}

/* ---- the service's rules ---------------------------------------------------------- */

void profsvc_rules_set(struct profsvc *s, struct profsvc_rules *r)
{
	profsvc_rules_free(profsvc_table_swap(s, PROFSVC_FILE_RULES, r));
}

/* The rules now, counted (profsvc_rules_free), or NULL. */
static struct profsvc_rules *rules_get(struct profsvc *s)
{
	struct profsvc *root = s->root;
	struct profsvc_rules *r;

	pthread_mutex_lock(&root->limits_lock);
	r = root->rules;
	if (r)
		atomic_fetch_add(&r->refs, 1);
	pthread_mutex_unlock(&root->limits_lock);
	return r;
}

/* The first rule of tenant in t, else of "default"; [*first, *end). */
static void tenant_rules(const struct profsvc_rules *t, const char *tenant, size_t *first,
			 size_t *end)
{
	for (int pass = 0; pass < 2; pass++, tenant = PROFSVC_LIMITS_DEFAULT) {
		size_t lo = 0, hi = t->n;

		while (lo < hi) { /* the first line of a tenant >= tenant */
			size_t mid = lo + (hi - lo) / 2;

			if (strcmp(t->v[mid].tenant, tenant) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (*first = *end = lo; *end < t->n && !strcmp(t->v[*end].tenant, tenant);)
			(*end)++;
		if (*end > *first)
			return;
	}
}

int profsvc_rules_apply(const struct profsvc_rules *t, const char *tenant,
			struct profsvc_labels *ls, char *why, size_t why_size)
{
	size_t i = 0, end = 0;
	int err = 0;

	if (t)
		tenant_rules(t, tenant, &i, &end);
	for (; !err && i < end; i++)
		if (t->v[i].relabel && (err = profsvc_relabel_apply(t->v[i].relabel, ls)) < 0)
			snprintf(why, why_size, "the relabel rule of line %u of the rules file: %s",
				 t->v[i].no, err == -E2BIG ? "a label or label set past its limit"
							   : strerror(-err));
	return err;
}

/* What the first sampling rule of tenant whose selector matches decides. */
static enum profsvc_sampled rules_decide(const struct profsvc_rules *t, const char *tenant,
					 const struct pstore_label *labels, size_t n,
					 int64_t time_ns)
{
	size_t i = 0, end = 0;

	if (t)
		tenant_rules(t, tenant, &i, &end);
	for (; i < end; i++)
		if (t->v[i].sample && profsvc_sample_rule_matches(t->v[i].sample, labels, n))
			return profsvc_sample_rule_keeps(t->v[i].sample, labels, n, time_ns)
				       ? PROFSVC_SAMPLED_KEPT
				       : PROFSVC_SAMPLED_TOTALS;
	return PROFSVC_SAMPLED_NO_RULE;
}

bool profsvc_rules_keep(const struct profsvc_rules *t, const char *tenant,
			const struct pstore_label *labels, size_t n, int64_t time_ns)
{
	return rules_decide(t, tenant, labels, n, time_ns) != PROFSVC_SAMPLED_TOTALS;
}

enum profsvc_sampled profsvc_rules_sample_now(struct profsvc *pr,
					      const struct pstore_label *labels, size_t n,
					      int64_t time_ns)
{
	struct profsvc_rules *t = rules_get(pr);
	enum profsvc_sampled d = rules_decide(t, pr->tenant, labels, n, time_ns);

	profsvc_rules_free(t);
	return d;
}

bool profsvc_rules_for(const struct profsvc_rules *t, const char *tenant)
{
	size_t i = 0, end = 0;

	if (t)
		tenant_rules(t, tenant, &i, &end);
	return i < end;
}

int profsvc_rules_relabel(struct profsvc *pr, const struct profsvc_in *in,
			  struct profsvc_labels *ls, bool *applied, char *why, size_t why_size)
{
	struct profsvc_rules *t = rules_get(pr);
	int err = 0;

	*applied = profsvc_rules_for(t, pr->tenant);
	if (*applied && (err = profsvc_labels_copy(ls, in->labels, in->n_labels)))
		snprintf(why, why_size, "no memory to relabel the profile");
	err = err ? err : *applied ? profsvc_rules_apply(t, pr->tenant, ls, why, why_size) : 0;
	profsvc_rules_free(t);
	return err;
}
