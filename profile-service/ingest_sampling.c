/*
 * ingest_sampling.c - a sampling rule of the ingest rules (issue 27;
 * "TENANT sample selector='{...}' keep=P [window=D]" lines of --rules,
 * ingest_rules.c): a profile of a series the selector matches is kept
 * whole with probability P, decided by an unkeyed hash
 * (ember_checksum64) of its labels (after the relabel rules, sorted by
 * name) and of the window of D seconds its time falls in, so every
 * replica, and every profile of the series within one window, decide
 * alike.  A profile not kept is stored as its totals only: one sample
 * without a stack holding the sum of each sample type's values, in the
 * series labelled besides __sampled__="true", so totals over time stay
 * exact while flame graphs thin out (docs/cli.md, "Ingest rules").
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_WINDOW_S 60

struct profsvc_sample_rule {
	struct pstore_selector *sel;
	double keep;			/* [0, 1] */
	int64_t window_ns;
};

void profsvc_sample_rule_free(struct profsvc_sample_rule *r)
{
	if (!r)
		return;
	pstore_selector_free(r->sel);
	free(r);
}

/* ---- parsing ---------------------------------------------------------------------- */

/* A probability in [0, 1] (a decimal number). */
static int parse_keep(const char *v, double *out)
{
	char *end;
	double d;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	d = strtod(v, &end);
	if (*end || !(d >= 0 && d <= 1))
		return -EINVAL;
	*out = d;
	return 0;
}

/* Seconds with an optional s, m or h, 1 s to 1 day. */
static int parse_window(const char *v, int64_t *ns)
{
	char *end;
	unsigned long long n = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
	unsigned long long mult = 1;

	if (!n)
		return -EINVAL;
	if (*end && (end[1] || !strchr("smh", *end)))
		return -EINVAL;
	mult = *end == 'm' ? 60 : *end == 'h' ? 3600 : 1;
	if (n > 86400 / mult)
		return -EINVAL;
	*ns = (int64_t)(n * mult) * 1000000000;
	return 0;
}

static int parse_kv(struct profsvc_sample_rule *r, const struct profsvc_rule_kv *kv,
		    unsigned *given, char *why, size_t why_size)
{
	static const char *const keys[] = { "selector", "keep", "window" };
	char swhy[200];
	int k = 0, err;

	while (k < 3 && strcmp(kv->key, keys[k]))
		k++;
	if (k == 3 || *given & 1u << k) {
		snprintf(why, why_size, "'%.40s' %s", kv->key,
			 k == 3 ? "is not a key of a sample rule" : "given twice");
		return -EINVAL;
	}
	*given |= 1u << k;
	if (k == 0 && (err = pstore_selector_parse(kv->value, &r->sel, swhy, sizeof(swhy)))) {
		snprintf(why, why_size, "selector=%.60s: %s", kv->value, swhy);
		return err == -ENOMEM ? err : -EINVAL;
	}
	if (k == 1 && parse_keep(kv->value, &r->keep)) {
		snprintf(why, why_size, "keep=%.40s: want a probability from 0 to 1", kv->value);
		return -EINVAL;
	}
	if (k == 2 && parse_window(kv->value, &r->window_ns)) {
		snprintf(why, why_size, "window=%.40s: want 1s to 24h (e.g. 60s, 5m)", kv->value);
		return -EINVAL;
	}
	return 0;
}

int profsvc_sample_rule_parse(const struct profsvc_rule_kv *kv, size_t n,
			      struct profsvc_sample_rule **out, char *why, size_t why_size)
{
	struct profsvc_sample_rule *r = calloc(1, sizeof(*r));
	unsigned given = 0;
	int err = r ? 0 : -ENOMEM;

	if (r)
		r->window_ns = (int64_t)DEFAULT_WINDOW_S * 1000000000;
	for (size_t i = 0; !err && i < n; i++)
		err = parse_kv(r, &kv[i], &given, why, why_size);
	if (!err && (given & 3) != 3) {
		snprintf(why, why_size, "a sample rule needs selector= and keep=");
		err = -EINVAL;
	}
	if (err) {
		profsvc_sample_rule_free(r);
		return err;
	}
	*out = r;
	return 0;
}

/* ---- the decision ----------------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct pstore_label *)a)->name,
		      ((const struct pstore_label *)b)->name);
}

/* The hash of the labels (sorted by name) and the window: uniform in [0, 1). */
static double series_window_draw(const struct pstore_label *labels, size_t n, int64_t window)
{
	struct pstore_label sorted[PROFSVC_RELABEL_MAX_LABELS];
	uint64_t h = ember_checksum64(&window, sizeof(window), 0x27);

	n = n < PROFSVC_RELABEL_MAX_LABELS ? n : PROFSVC_RELABEL_MAX_LABELS;
	memcpy(sorted, labels, n * sizeof(*labels));
	qsort(sorted, n, sizeof(*sorted), by_name);
	for (size_t i = 0; i < n; i++) {
		h = ember_checksum64(sorted[i].name, strlen(sorted[i].name) + 1, h);
		h = ember_checksum64(sorted[i].value, strlen(sorted[i].value) + 1, h);
	}
	return (double)(h >> 11) * 0x1.0p-53;
}

bool profsvc_sample_rule_matches(const struct profsvc_sample_rule *r,
				 const struct pstore_label *labels, size_t n)
{
	return pstore_selector_matches(r->sel, labels, n);
}

bool profsvc_sample_rule_keeps(const struct profsvc_sample_rule *r,
			       const struct pstore_label *labels, size_t n, int64_t time_ns)
{
	int64_t w = time_ns / r->window_ns - (time_ns < 0 && time_ns % r->window_ns);

	return r->keep >= 1 || series_window_draw(labels, n, w) < r->keep;
}

/* ---- totals only -------------------------------------------------------------------- */

/* a + b, held at INT64_MAX / INT64_MIN rather than wrapping. */
static int64_t add_held(int64_t a, int64_t b)
{
	int64_t s;

	return !__builtin_add_overflow(a, b, &s) ? s : b > 0 ? INT64_MAX : INT64_MIN;
}

static int copy_types(const struct pprof_profile *p, struct pprof_profile *q)
{
	const pprof_message_t *m = pprof_message(p);
	int err = 0;

	for (size_t i = 0; !err && i < m->n_sample_type; i++)
		err = pprof_add_sample_type(q, pprof_string(p, m->sample_type[i]->type),
					    pprof_string(p, m->sample_type[i]->unit));
	if (!err && m->period_type)
		err = pprof_set_period(q, pprof_string(p, m->period_type->type),
				       pprof_string(p, m->period_type->unit), m->period);
	return err;
}

int profsvc_totals_only(const struct pprof_profile *p, struct pprof_profile **out)
{
	const pprof_message_t *m = pprof_message(p);
	struct pprof_profile *q = pprof_profile_new();
	int64_t *sum = calloc(m->n_sample_type ? m->n_sample_type : 1, sizeof(*sum));
	int err = q && sum ? copy_types(p, q) : -ENOMEM;

	for (size_t i = 0; !err && i < m->n_sample; i++)
		for (size_t k = 0; k < m->n_sample_type && k < m->sample[i]->n_value; k++)
			sum[k] = add_held(sum[k], m->sample[i]->value[k]);
	if (!err && m->n_sample)
		err = pprof_add_sample(q, NULL, 0, sum, m->n_sample_type);
	free(sum);
	if (err) {
		pprof_profile_free(q);
		return err;
	}
	pprof_set_time(q, m->time_nanos, m->duration_nanos);
	*out = q;
	return 0;
}
