/*
 * profile_metrics.c - the profile service's lines of GET /metrics
 * (docs/http-api.md, Operations): the store's size, blocks, series and
 * log, profiles ingested by route and rejected by reason, samples
 * symbolized at ingest, and the labels that look unbounded, one series
 * each, so that an alert can name the label.  The store's lines are the
 * tenant anonymous's (the store of the data directory); the traffic
 * counters are every tenant's, summed.  And a tenant's usage
 * (GET /api/v1/tenants/TENANT/usage): its own counters and store.
 */
#include "profsvc_internal.h"

#include <stddef.h>
#include <string.h>

static const char *const route_names[PROFSVC_ROUTE_COUNT] = {
	[PROFSVC_ROUTE_PROFILES] = "profiles", [PROFSVC_ROUTE_INGEST] = "ingest",
	[PROFSVC_ROUTE_SCRAPE] = "scrape", [PROFSVC_ROUTE_OTLP] = "otlp",
};

static const char *const reject_names[PROFSVC_REJECT_COUNT] = {
	[PROFSVC_REJECT_AUTH] = "unauthorized",     [PROFSVC_REJECT_TOO_LARGE] = "too_large",
	[PROFSVC_REJECT_BAD_PROFILE] = "bad_profile", [PROFSVC_REJECT_LIMIT] = "limit",
	[PROFSVC_REJECT_LABEL] = "label",	       [PROFSVC_REJECT_SERIES] = "series_limit",
	[PROFSVC_REJECT_UNAVAILABLE] = "unavailable", [PROFSVC_REJECT_BUSY] = "busy",
	[PROFSVC_REJECT_OUT_OF_BOUNDS] = "out_of_bounds", [PROFSVC_REJECT_TENANT] = "tenant",
	[PROFSVC_REJECT_RATE] = "rate",
};

static int gauge(struct ember_buf *b, const char *name, const char *help, uint64_t v)
{
	return ember_buf_appendf(b, "# HELP %s %s\n# TYPE %s gauge\n%s %llu\n", name, help, name,
				 name, (unsigned long long)v);
}

static int counter(struct ember_buf *b, const char *name, const char *help, uint64_t v)
{
	return ember_buf_appendf(b, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help,
				 name, name, (unsigned long long)v);
}

/* The store's lines: one a field of struct pstore_stats. */
static const struct store_line {
	const char *name, *help;
	bool counter;
	size_t off;
} store_line_table[] = {
#define L(field, is_counter, metric, text) \
	{ metric, text, is_counter, offsetof(struct pstore_stats, field) }
	L(block_bytes, false, "ember_profile_store_bytes", "Bytes of the profile store's blocks."),
	L(blocks, false, "ember_profile_store_blocks", "Blocks of the profile store."),
	L(series, false, "ember_profile_store_series", "Series in the profile store."),
	L(profiles, false, "ember_profile_store_profiles",
	  "Profiles in the profile store (blocks and log)."),
	L(wal_bytes, false, "ember_profile_store_wal_bytes",
	  "Bytes of the profile store's log segments."),
	L(corrupt_blocks, false, "ember_profile_store_corrupt_blocks",
	  "Blocks found corrupt when the store opened."),
	L(compaction_errors, true, "ember_profile_store_compaction_errors_total",
	  "Compaction passes that failed (retried)."),
	L(retention_drops, true, "ember_profile_store_retention_drops_total",
	  "Blocks dropped past the retention."),
	L(rollups, false, "ember_profile_store_rollups",
	  "Rollups of the profile store (pre-merged steps)."),
	L(rollup_bytes, false, "ember_profile_store_rollup_bytes",
	  "Bytes of the profile store's rollups."),
	L(rollups_built, true, "ember_profile_store_rollups_built_total",
	  "Rollups built by compaction."),
	L(rollup_drops, true, "ember_profile_store_rollup_drops_total",
	  "Rollups dropped past the rollup retention."),
	L(profiles_read, true, "ember_profile_store_profiles_read_total",
	  "Profiles summed by queries (a rollup's profile once)."),
	L(rows_bytes_read, true, "ember_profile_store_rows_bytes_read_total",
	  "Bytes of blocks' row streams read by queries."),
	L(unbounded_labels, false, "ember_profile_unbounded_labels",
	  "Labels that look unbounded (a new value in most profiles)."),
#undef L
};

static int store_lines(struct ember_buf *b, struct pstore *s)
{
	struct pstore_stats st;
	int err = 0;

	pstore_stats(s, &st);
	for (size_t i = 0; !err && i < sizeof(store_line_table) / sizeof(store_line_table[0]); i++) {
		const struct store_line *l = &store_line_table[i];
		uint64_t v;

		memcpy(&v, (const char *)&st + l->off, sizeof(v));
		err = (l->counter ? counter : gauge)(b, l->name, l->help, v);
	}
	return err;
}

/* One line per label that looks unbounded ("name: N new values ..."). */
static int unbounded_lines(struct ember_buf *b, struct pstore *s)
{
	struct pstore_strlist *w = NULL;
	int err = pstore_warnings(s, &w);

	if (!err)
		err = ember_buf_appendf(b, "# HELP ember_profile_unbounded_label A label that looks "
					   "unbounded (request IDs, user IDs): 1.\n"
					   "# TYPE ember_profile_unbounded_label gauge\n");
	for (size_t i = 0; !err && w && i < w->n; i++) {
		size_t n = strcspn(w->v[i], ":");

		err = ember_buf_appendf(b, "ember_profile_unbounded_label{name=\"%.*s\"} 1\n",
					(int)n, w->v[i]);
	}
	pstore_strlist_free(w);
	return err;
}

/* The traffic counters of every tenant, summed. */
struct traffic {
	uint64_t ingested[PROFSVC_ROUTE_COUNT], rejected[PROFSVC_REJECT_COUNT];
	uint64_t resolved, unresolved;
};

static void traffic_add(struct traffic *t, struct profsvc *pr)
{
	for (int i = 0; i < PROFSVC_ROUTE_COUNT; i++)
		t->ingested[i] += pr->ingested[i];
	for (int i = 0; i < PROFSVC_REJECT_COUNT; i++)
		t->rejected[i] += pr->rejected[i];
	t->resolved += pr->samples_resolved;
	t->unresolved += pr->samples_unresolved;
}

static void traffic_sum(struct profsvc *s, struct traffic *t)
{
	struct profsvc *v[PROFSVC_TENANTS_BATCH];
	size_t cursor = 0, n;

	memset(t, 0, sizeof(*t));
	while ((n = profsvc_tenants_open(s, v, PROFSVC_TENANTS_BATCH, &cursor,
					 PROFSVC_TENANTS_ALL))) {
		for (size_t i = 0; i < n; i++)
			traffic_add(t, v[i]);
		profsvc_tenants_put(v, n);
	}
}

static int traffic_lines(struct ember_buf *b, struct profsvc *pr)
{
	struct traffic t;
	int err = ember_buf_appendf(b, "# HELP ember_profiles_ingested_total Profiles stored, by "
				       "the way they came.\n"
				       "# TYPE ember_profiles_ingested_total counter\n");

	traffic_sum(pr, &t);
	for (int i = 0; !err && i < PROFSVC_ROUTE_COUNT; i++)
		err = ember_buf_appendf(b, "ember_profiles_ingested_total{route=\"%s\"} %llu\n",
					route_names[i], (unsigned long long)t.ingested[i]);
	err = err ? err : ember_buf_appendf(b, "# HELP ember_profiles_rejected_total Profiles "
					       "refused, by reason.\n"
					       "# TYPE ember_profiles_rejected_total counter\n");
	for (int i = 0; !err && i < PROFSVC_REJECT_COUNT; i++)
		err = ember_buf_appendf(b, "ember_profiles_rejected_total{reason=\"%s\"} %llu\n",
					reject_names[i], (unsigned long long)t.rejected[i]);
	return err ? err
		   : ember_buf_appendf(b,
				       "# HELP ember_profile_samples_total Samples ingested, by whether "
				       "every frame was symbolized at ingest.\n"
				       "# TYPE ember_profile_samples_total counter\n"
				       "ember_profile_samples_total{resolved=\"true\"} %llu\n"
				       "ember_profile_samples_total{resolved=\"false\"} %llu\n",
				       (unsigned long long)t.resolved,
				       (unsigned long long)t.unresolved);
}

/* One tenant's lines of ember_profile_rules_total. */
static int rules_tenant_lines(struct ember_buf *b, const struct profsvc *pr)
{
	const struct {
		const char *outcome;
		uint64_t n;
	} v[] = {
		{ "relabelled", pr->relabelled },
		{ "dropped", pr->dropped_by_rules },
		{ "kept", pr->kept_by_rules },
		{ "sampled", pr->sampled_out },
	};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(v) / sizeof(v[0]); i++)
		err = ember_buf_appendf(b, "ember_profile_rules_total{tenant=\"%s\",outcome=\"%s\"} "
					   "%llu\n", pr->tenant, v[i].outcome,
					(unsigned long long)v[i].n);
	return err;
}

/* What the ingest rules (--rules) did, by tenant (each tenant in the
 * table: at most --max-tenants and anonymous; an ID needs no escaping). */
static int rules_lines(struct ember_buf *b, struct profsvc *s)
{
	struct profsvc *v[PROFSVC_TENANTS_BATCH];
	size_t cursor = 0, n;
	int err = ember_buf_appendf(b, "# HELP ember_profile_rules_total Profiles the ingest "
				       "rules acted on, by tenant and outcome: stored with labels "
				       "the relabel rules changed, dropped by a relabel rule, kept "
				       "whole or stored as totals by a sampling rule.\n"
				       "# TYPE ember_profile_rules_total counter\n");

	while (!err && (n = profsvc_tenants_open(s, v, PROFSVC_TENANTS_BATCH, &cursor,
						 PROFSVC_TENANTS_ALL))) {
		for (size_t i = 0; !err && i < n; i++)
			err = rules_tenant_lines(b, v[i]);
		profsvc_tenants_put(v, n);
	}
	return err;
}

int profsvc_metrics(struct profsvc *s, struct ember_buf *b)
{
	int err = store_lines(b, s->store);

	err = err ? err : unbounded_lines(b, s->store);
	err = err ? err : traffic_lines(b, s);
	err = err ? err : rules_lines(b, s);
	return err || !s->scrapers ? err : profsvc_scrapers_metrics(s->scrapers, b);
}

/* {"NAME":N,..} of counts[0, n) named by names. */
static int counts_json(struct ember_buf *b, const char *const *names, const _Atomic uint64_t *v,
		       size_t n)
{
	int err = ember_buf_putc(b, '{');

	for (size_t i = 0; !err && i < n; i++)
		err = ember_buf_appendf(b, "%s\"%s\":%llu", i ? "," : "", names[i],
					(unsigned long long)v[i]);
	return err ? err : ember_buf_putc(b, '}');
}

int profsvc_usage(struct profsvc *s, struct profsvc_answer *a)
{
	struct ember_buf *b = &a->body;
	struct pstore_stats st;
	int err;

	profsvc_answer_init(a, (size_t)1 << 20, NULL);
	pstore_stats(s->store, &st);
	err = ember_buf_appendf(b, "{\"tenant\":");
	err = err ? err : ember_json_str(b, s->tenant, strlen(s->tenant));
	err = err ? err : ember_buf_appendf(b, ",\"ingested_bytes\":%llu,\"ingested_profiles\":",
					    (unsigned long long)s->ingested_bytes);
	err = err ? err : counts_json(b, route_names, s->ingested, PROFSVC_ROUTE_COUNT);
	err = err ? err : ember_buf_appendf(b, ",\"series\":%llu,\"profiles\":%llu,"
					       "\"stored_bytes\":%llu,\"log_bytes\":%llu,"
					       "\"rejected\":",
					    (unsigned long long)st.series,
					    (unsigned long long)st.profiles,
					    (unsigned long long)st.block_bytes,
					    (unsigned long long)st.wal_bytes);
	err = err ? err : counts_json(b, reject_names, s->rejected, PROFSVC_REJECT_COUNT);
	err = err ? err : ember_buf_appendf(b, ",\"dropped_by_rules\":%llu,\"sampled_out\":%llu,"
					       "\"kept_by_rules\":%llu,\"relabelled\":%llu}",
					    (unsigned long long)s->dropped_by_rules,
					    (unsigned long long)s->sampled_out,
					    (unsigned long long)s->kept_by_rules,
					    (unsigned long long)s->relabelled);
	return err;
}
