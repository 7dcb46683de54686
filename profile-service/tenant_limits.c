/*
 * tenant_limits.c - per-tenant limits (`ember serve --limits FILE`, issue
 * 27): the file's text parsed into a table (one line a tenant, "TENANT
 * key=value ...", the entry "default" for every tenant it does not name),
 * swapped in whole (a file that does not parse changes nothing), and read
 * by each request for its tenant.  What this file enforces itself: the
 * ingest rate, a token bucket of bytes a tenant (profsvc_ingest_admit).
 * The per-profile limits are checked by ingest (ingest_pipeline.c) and
 * the query limits by the answers, each through profsvc_limits_of.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMITS_MAX_TENANTS 100000

enum unit { UNIT_BYTES, UNIT_COUNT, UNIT_SECONDS };

static const struct {
	const char *name;
	enum unit unit;
	size_t off;
} keys[] = {
#define KEY(name, unit) { #name, unit, offsetof(struct profsvc_limits, name) }
	KEY(ingest_rate, UNIT_BYTES),
	KEY(ingest_burst, UNIT_BYTES),
	KEY(max_profile_bytes, UNIT_BYTES),
	KEY(max_samples, UNIT_COUNT),
	KEY(max_stack_depth, UNIT_COUNT),
	KEY(max_labels, UNIT_COUNT),
	KEY(max_label_name_len, UNIT_COUNT),
	KEY(max_label_value_len, UNIT_COUNT),
	KEY(max_series, UNIT_COUNT),
	KEY(max_query_range, UNIT_SECONDS),
	KEY(max_query_bytes, UNIT_BYTES),
	KEY(retention, UNIT_SECONDS),
	KEY(rollup_retention, UNIT_SECONDS),
#undef KEY
};
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

struct limits_entry {
	char tenant[PROFSVC_TENANT_MAX + 1];
	struct profsvc_limits l;
	uint32_t set;			/* bit i: keys[i] given */
};

struct profsvc_limits_table {
	struct limits_entry dflt;	/* "default" (set 0 when absent) */
	size_t n;
	struct limits_entry v[];	/* sorted by tenant */
};

static uint64_t *field(struct profsvc_limits *l, size_t i)
{
	return (uint64_t *)((char *)l + keys[i].off);
}

/* A value of unit u: digits, then a suffix (bytes: K, M, G, T or KiB..;
 * seconds: s, m, h, d).  0 or -EINVAL. */
static int parse_value(const char *s, enum unit u, uint64_t *out)
{
	static const struct { const char *sfx; enum unit u; uint64_t mult; } sfx[] = {
		{ "", UNIT_BYTES, 1 },
		{ "K", UNIT_BYTES, 1ull << 10 }, { "KiB", UNIT_BYTES, 1ull << 10 },
		{ "M", UNIT_BYTES, 1ull << 20 }, { "MiB", UNIT_BYTES, 1ull << 20 },
		{ "G", UNIT_BYTES, 1ull << 30 }, { "GiB", UNIT_BYTES, 1ull << 30 },
		{ "T", UNIT_BYTES, 1ull << 40 }, { "TiB", UNIT_BYTES, 1ull << 40 },
		{ "", UNIT_COUNT, 1 },
		{ "", UNIT_SECONDS, 1 }, { "s", UNIT_SECONDS, 1 }, { "m", UNIT_SECONDS, 60 },
		{ "h", UNIT_SECONDS, 3600 }, { "d", UNIT_SECONDS, 86400 },
	};
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if (sfx[i].u == u && !strcmp(end, sfx[i].sfx)) {
			if (v > UINT64_MAX / sfx[i].mult / 1000000000) /* ns fit too */
				return -EINVAL;
			*out = v * sfx[i].mult;
			return 0;
		}
	return -EINVAL;
}

static int parse_pair(char *kv, struct limits_entry *e, unsigned no, char *why, size_t why_size)
{
	char *eq = strchr(kv, '=');

	if (eq)
		*eq = '\0';
	for (size_t i = 0; eq && i < N_KEYS; i++) {
		if (strcmp(kv, keys[i].name))
			continue;
		if (parse_value(eq + 1, keys[i].unit, field(&e->l, i))) {
			snprintf(why, why_size, "line %u: %s=%.40s: want %s", no, kv, eq + 1,
				 keys[i].unit == UNIT_BYTES     ? "bytes (e.g. 4MiB)"
				 : keys[i].unit == UNIT_SECONDS ? "a duration (e.g. 30d, 12h)"
								: "a number");
			return -EINVAL;
		}
		e->set |= 1u << i;
		return 0;
	}
	snprintf(why, why_size, "line %u: '%.40s' is not key=value of a known limit", no, kv);
	return -EINVAL;
}

/* What parse_line fills. */
struct limits_parse {
	struct profsvc_limits_table *t;	/* room for a line each */
	char *why;
	size_t why_size;
};

/* Line no ("TENANT key=value ...") into the table: 0 or -EINVAL, why set. */
static int parse_line(void *arg, unsigned no, char *line)
{
	struct limits_parse *p = arg;
	struct profsvc_limits_table *t = p->t;
	char *save, *tenant = strtok_r(line, " \t\r", &save);
	bool dflt = !strcmp(tenant, PROFSVC_LIMITS_DEFAULT);
	struct limits_entry *e = dflt ? &t->dflt : &t->v[t->n];

	if (!ember_tenant_valid(tenant)) {
		snprintf(p->why, p->why_size, "line %u: '%.40s' is not a tenant ID", no, tenant);
		return -EINVAL;
	}
	if (dflt && t->dflt.tenant[0]) {
		snprintf(p->why, p->why_size, "line %u: a second 'default'", no);
		return -EINVAL;
	}
	memset(e, 0, sizeof(*e));
	snprintf(e->tenant, sizeof(e->tenant), "%s", tenant);
	for (char *kv; (kv = strtok_r(NULL, " \t\r", &save));)
		EMBER_FORWARD_IF_ERROR(parse_pair(kv, e, no, p->why, p->why_size));
	t->n += !dflt;
	return 0;
}

static int by_tenant(const void *a, const void *b)
{
	return strcmp(((const struct limits_entry *)a)->tenant,
		      ((const struct limits_entry *)b)->tenant);
}

/* Every line of text into t, sorted, a tenant named once. */
static int parse_lines(char *text, struct profsvc_limits_table *t, char *why, size_t why_size)
{
	struct limits_parse p = { .t = t, .why = why, .why_size = why_size };

	EMBER_FORWARD_IF_ERROR(ember_config_lines(text, parse_line, &p));
	qsort(t->v, t->n, sizeof(t->v[0]), by_tenant);
	for (size_t i = 1; i < t->n; i++)
		if (!by_tenant(&t->v[i - 1], &t->v[i])) {
			snprintf(why, why_size, "tenant '%s' named twice", t->v[i].tenant);
			return -EINVAL;
		}
	return 0;
}

int profsvc_limits_parse(const char *text, size_t len, struct profsvc_limits_table **out,
			 char *why, size_t why_size)
{
	struct profsvc_limits_table *t;
	size_t lines = ember_config_line_count(text, len);
	char *copy;
	int err;

	if (len > PROFSVC_LIMITS_MAX_BYTES || memchr(text, '\0', len) ||
	    lines > LIMITS_MAX_TENANTS) {
		snprintf(why, why_size, "%s",
			 len > PROFSVC_LIMITS_MAX_BYTES	 ? "larger than 1 MiB"
			 : lines > LIMITS_MAX_TENANTS ? "more than 100000 lines"
						      : "a NUL byte: not text");
		return -EINVAL;
	}
	copy = strndup(text, len);
	t = calloc(1, sizeof(*t) + lines * sizeof(t->v[0]));
	err = copy && t ? parse_lines(copy, t, why, why_size) : -ENOMEM;
	free(copy);
	if (err) {
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

void profsvc_limits_table_free(struct profsvc_limits_table *t)
{
	free(t);
}

/* The limits of tenant in t: its entry's keys, the default's for the rest. */
static void limits_in(const struct profsvc_limits_table *t, const char *tenant,
		      struct profsvc_limits *out)
{
	struct limits_entry key;
	const struct limits_entry *e;

	memset(out, 0, sizeof(*out));
	if (!t)
		return;
	snprintf(key.tenant, sizeof(key.tenant), "%s", tenant);
	e = bsearch(&key, t->v, t->n, sizeof(t->v[0]), by_tenant);
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct limits_entry *from = e && e->set & 1u << i ? e : &t->dflt;

		*field(out, i) = *field((struct profsvc_limits *)&from->l, i);
	}
}

void profsvc_limits_store_opts(const struct profsvc_limits_table *t, const char *tenant,
			       struct profsvc_opts *o)
{
	struct profsvc_limits l;

	limits_in(t, tenant, &l);
	if (l.max_series)
		o->max_series = l.max_series;
	if (l.retention)
		o->retention_ns = (int64_t)l.retention * 1000000000;
	if (l.rollup_retention)
		o->rollup_retention_ns = (int64_t)l.rollup_retention * 1000000000;
}

void profsvc_limits_of(struct profsvc *s, struct profsvc_limits *out)
{
	struct profsvc *root = s->root;

	pthread_mutex_lock(&root->limits_lock);
	limits_in(root->limits, s->tenant, out);
	pthread_mutex_unlock(&root->limits_lock);
}

void profsvc_limits_set(struct profsvc *s, struct profsvc_limits_table *t)
{
	profsvc_limits_table_free(profsvc_table_swap(s, PROFSVC_FILE_LIMITS, t));
	profsvc_tenants_retune(s->root);
}

/* ---- the ingest rate: a token bucket of bytes ------------------------------------- */

#define NS 1000000000.0

int profsvc_ingest_admit(struct profsvc *s, uint64_t bytes, unsigned *retry_after_s,
			 char *why, size_t why_size)
{
	struct profsvc_limits l;
	uint64_t now = ember_monotonic_ns();
	double rate, burst, need;
	int err = 0;

	profsvc_limits_of(s, &l);
	*retry_after_s = 0;
	atomic_fetch_add(&s->ingested_bytes, bytes);
	if (!l.ingest_rate)
		return 0;
	rate = (double)l.ingest_rate;
	burst = l.ingest_burst ? (double)l.ingest_burst : 2 * rate;
	pthread_mutex_lock(&s->bucket_lock);
	if (!s->bucket_ns || s->bucket_tokens > burst) /* first use, or a smaller burst */
		s->bucket_tokens = burst;
	else
		s->bucket_tokens += rate * (double)(now - s->bucket_ns) / NS;
	s->bucket_tokens = s->bucket_tokens > burst ? burst : s->bucket_tokens;
	s->bucket_ns = now;
	need = (double)bytes - s->bucket_tokens;
	if (need <= 0)
		s->bucket_tokens -= (double)bytes;
	else
		err = -PROFSVC_ERR_RATE;
	pthread_mutex_unlock(&s->bucket_lock);
	if (!err)
		return 0;
	atomic_fetch_sub(&s->ingested_bytes, bytes);
	atomic_fetch_add(&s->rejected[PROFSVC_REJECT_RATE], 1);
	if ((double)bytes > burst) {
		snprintf(why, why_size, "tenant '%s': a write of %llu bytes, more than its ingest "
					"burst of %.0f bytes: it never fits",
			 s->tenant, (unsigned long long)bytes, burst);
		return err;
	}
	*retry_after_s = (unsigned)(need / rate) + 1;
	snprintf(why, why_size, "tenant '%s': past its ingest rate of %llu bytes a second "
				"(burst %.0f): send again in %u s",
		 s->tenant, (unsigned long long)l.ingest_rate, burst, *retry_after_s);
	return err;
}

/* ---- a profile's limits ------------------------------------------------------------ */

/* -err with why "tenant 'T': WHAT N, more than its LIMIT of M" when n > max (0: none). */
static int over(const struct profsvc *s, int err, const char *what, uint64_t n, const char *limit,
		uint64_t max, char *why, size_t why_size)
{
	if (!max || n <= max)
		return 0;
	snprintf(why, why_size, "tenant '%s': %s %llu, more than its %s of %llu", s->tenant, what,
		 (unsigned long long)n, limit, (unsigned long long)max);
	return err;
}

static uint64_t deepest_stack(const pprof_message_t *m)
{
	uint64_t d = 0;

	for (size_t i = 0; i < m->n_sample; i++)
		d = m->sample[i]->n_location_id > d ? m->sample[i]->n_location_id : d;
	return d;
}

static int check_labels(const struct profsvc *s, const struct profsvc_limits *l,
			const struct profsvc_in *in, char *why, size_t why_size)
{
	int err = over(s, -PSTORE_ERR_LIMIT, "labels", in->n_labels, "max_labels", l->max_labels,
		       why, why_size);

	for (size_t i = 0; !err && i < in->n_labels; i++) {
		err = over(s, -PSTORE_ERR_LIMIT, "a label name of bytes",
			   strlen(in->labels[i].name), "max_label_name_len",
			   l->max_label_name_len, why, why_size);
		err = err ? err : over(s, -PSTORE_ERR_LIMIT, "a label value of bytes",
				       strlen(in->labels[i].value), "max_label_value_len",
				       l->max_label_value_len, why, why_size);
	}
	return err;
}

int profsvc_limits_check_profile(struct profsvc *pr, const struct profsvc_in *in, char *why,
				 size_t why_size)
{
	const pprof_message_t *m = pprof_message(in->p);
	struct profsvc_limits l;

	profsvc_limits_of(pr, &l);
	EMBER_FORWARD_IF_ERROR(over(pr, -PSTORE_ERR_TOO_LARGE, "a profile of bytes",
				    in->input_bytes, "max_profile_bytes", l.max_profile_bytes, why,
				    why_size));
	EMBER_FORWARD_IF_ERROR(over(pr, -PSTORE_ERR_TOO_LARGE, "samples", m->n_sample,
				    "max_samples", l.max_samples, why, why_size));
	if (l.max_stack_depth)
		EMBER_FORWARD_IF_ERROR(over(pr, -PSTORE_ERR_LIMIT, "a stack of locations",
					    deepest_stack(m), "max_stack_depth",
					    l.max_stack_depth, why, why_size));
	return check_labels(pr, &l, in, why, why_size);
}

/* ---- the errors ------------------------------------------------------- */

enum ember_errkind profsvc_error_kind(int err)
{
	return err == -PROFSVC_ERR_RATE ? EMBER_ERRK_CAPACITY : pstore_error_kind(err);
}

const char *profsvc_strerror(int err)
{
	return err == -PROFSVC_ERR_RATE ? "past the tenant's ingest rate" : pstore_strerror(err);
}
