/*
 * profsvc_internal.h - shared between the files of profile-service/ only.
 *
 * One concept a file:
 *   profsvc.c            the service: the store's start and stop, the clock
 *   config_files.c       its files (--limits, --rules, --tokens): read, reread
 *   tenants.c            one service and store a tenant, opened at its first request
 *   tenant_limits.c      per-tenant limits: the file, the ingest rate, a profile's limits
 *   ingest_rules.c       per-tenant ingest rules: the --rules file, applied at ingest
 *   relabel.c            one relabel rule (Prometheus' semantics) and a profile's label set
 *   relabel_regex.cc     its regexes: RE2 with capturing groups
 *   ingest_sampling.c    one sampling rule: its decision, a profile's totals only
 *   ingest_pipeline.c    a profile decoded, labelled, symbolized and appended
 *   resolver.c           the symbolization service as the store's resolver
 *   read_request.c       a read's request context: the store's and the resolver's
 *   query_answers.c      the answers of a query and a diff
 *   query_view.c         their views: through a frame, frames hidden, a sandwich
 *   source_answers.c     a function's source view: its lines, values and text
 *   empty_hint.c         why a query selected nothing: a label no series has
 *   discovery_answers.c  the answers of labels, types, series and coverage
 *   profile_metrics.c    the profile lines of /metrics
 *   scrape.c             the --scrape puller
 *   scrape_http.c        its HTTP GET (ember_httpc)
 */
#ifndef EMBER_PROFSVC_INTERNAL_H
#define EMBER_PROFSVC_INTERNAL_H

#include "profsvc.h"
#include "relabel_regex.h"

#include <pthread.h>
#include <stdatomic.h>

struct profsvc_scrapers;
struct profsvc_tenants;

/* The files profsvc_reload reads again (config_files.c). */
enum profsvc_file {
	PROFSVC_FILE_LIMITS,
	PROFSVC_FILE_RULES,
	PROFSVC_FILE_TOKENS,
	PROFSVC_FILE_COUNT
};
#define PROFSVC_LIMITS_MAX_BYTES (1 << 20)
#define PROFSVC_RULES_MAX_BYTES (1 << 20)

/* The service of one tenant: the root (profsvc_new) is the tenant
 * "anonymous" and holds the others (tenants.c), each a struct profsvc of
 * its own (profsvc_open) whose root points back to it. */
struct profsvc {
	struct pstore *store;		/* this tenant's */
	struct profsvc *root;		/* the service; itself for the root */
	char tenant[PROFSVC_TENANT_MAX + 1];
	struct profsvc_tenants *tenants; /* the root's: the other tenants open; else NULL */
	struct symsvc *symbols;		/* borrowed: the owner's */
	uint64_t max_body;		/* bytes of a profile as received */
	int64_t max_age_ns, max_future_ns; /* the window of profile times; -1: none */
	struct profsvc_scrapers *scrapers; /* NULL without --scrape */
	_Atomic uint64_t ingested[PROFSVC_ROUTE_COUNT];
	_Atomic uint64_t rejected[PROFSVC_REJECT_COUNT];
	_Atomic uint64_t samples_resolved, samples_unresolved;
	_Atomic uint64_t ingested_bytes;	/* as received, admitted (tenant_limits.c) */
	/* profiles a relabel rule dropped, kept as totals only, kept whole
	 * by a sampling rule, stored with labels the relabel rules changed
	 * (--rules) */
	_Atomic uint64_t dropped_by_rules, sampled_out, kept_by_rules, relabelled;
	/* the ingest rate's token bucket (tenant_limits.c) */
	pthread_mutex_t bucket_lock;
	double bucket_tokens;
	uint64_t bucket_ns;		/* its last refill; 0: never used */
	/* the root's: every tenant's limits (tenant_limits.c) */
	pthread_mutex_t limits_lock;
	struct profsvc_limits_table *limits;	/* NULL: none */
	struct profsvc_rules *rules;		/* --rules, under limits_lock; NULL: none */
	bool empty;				/* a read's of a tenant without a store:
						   the empty store's (tenants.c) */
	char *files[PROFSVC_FILE_COUNT];	/* the root's: their paths (owned); NULL: none */
	struct profsvc_tokens *tokens;		/* --tokens, under limits_lock; NULL: none */
	struct profsvc_arrivals *arrivals;	/* the root's (arrivals.c); else NULL */
	uint64_t arrivals_heard;		/* a tenant's: of the root's, under its lock */
};

/* ---- symbols that arrived, for tenants closed meanwhile (arrivals.c) ------------------ */

#define PROFSVC_ARRIVALS_KEPT 1024
int profsvc_arrivals_init(struct profsvc *root);
void profsvc_arrivals_free(struct profsvc *root);
/* build_id's symbols arrived: remembered (the oldest past the kept ones
 * forgotten).  0 or -ENOMEM. */
int profsvc_arrivals_note(struct profsvc *root, const char *build_id);
/* Tenant ts's store told of the arrivals it has not heard of (a no-op
 * for the root and a tenant without a store).  0 or -ENOMEM. */
int profsvc_arrivals_catch_up(struct profsvc *ts);
/* The symbols of build_id arrived, for s's store alone (profsvc.c). */
void profsvc_store_symbols_arrived(struct profsvc *s, const char *build_id);

/* ---- the service's files (config_files.c) --------------------------------------------- */

/* o's files read into the root (their paths kept for profsvc_reload): 0,
 * or the first's error, logged (what was read is the root's, freed by
 * profsvc_free). */
int profsvc_files_init(struct profsvc *root, const struct profsvc_opts *o);
/* Their paths and the tokens freed (the other tables are the root's own). */
void profsvc_files_release(struct profsvc *root);
/* s's root's table of kind (limits, rules, tokens: a struct
 * profsvc_limits_table, profsvc_rules or profsvc_tokens) set to table
 * under limits_lock, so a request sees the old table or the new one
 * whole; the old returned, for the caller to free. */
void *profsvc_table_swap(struct profsvc *s, enum profsvc_file kind, void *table);

/* ---- per-tenant limits (tenant_limits.c) --------------------------------------------- */

/* in's profile within the limits of pr's tenant (its size, samples,
 * stack depth, labels): 0, or -PSTORE_ERR_TOO_LARGE (bytes, samples) /
 * -PSTORE_ERR_LIMIT (the rest) with why naming the limit. */
/* o with the store limits of tenant in t (max_series, retention), when t
 * gives them. */
void profsvc_limits_store_opts(const struct profsvc_limits_table *t, const char *tenant,
			       struct profsvc_opts *o);
int profsvc_limits_check_profile(struct profsvc *pr, const struct profsvc_in *in, char *why,
				 size_t why_size);

/* ---- ingest rules: relabeling (relabel.c, relabel_regex.cc, ingest_rules.c) ---------- */

/* Its regexes: relabel_regex.h. */

/* A profile's labels while rules edit them: a set by name (a name at
 * most once; an empty value is no label), each name and value owned. */
EMBER_VEC_DEF(profsvc_labels, struct pstore_label);
/* ls (zeroed) a copy of in[0, n): 0 or -ENOMEM (ls released). */
int profsvc_labels_copy(struct profsvc_labels *ls, const struct pstore_label *in, size_t n);
void profsvc_labels_release(struct profsvc_labels *ls);
/* name set to value (both NUL-terminated, copied; "" removes it): 0,
 * -E2BIG (past PROFSVC_RELABEL_MAX_LABELS), -ENOMEM. */
int profsvc_labels_set(struct profsvc_labels *ls, const char *name, const char *value);

/* One relabel rule (docs/cli.md, "Ingest rules"). */
struct profsvc_relabel;
/* One key=value of a rule's line. */
struct profsvc_rule_kv {
	const char *key, *value;
};
/* The rule of kv[0, n) (action, source_labels, separator, regex,
 * target_label, replacement, modulus; Prometheus' defaults for the rest)
 * into *out (profsvc_relabel_free): 0, or -EINVAL / -E2BIG with why
 * saying which key and why, -ENOMEM. */
int profsvc_relabel_parse(const struct profsvc_rule_kv *kv, size_t n,
			  struct profsvc_relabel **out, char *why, size_t why_size);
void profsvc_relabel_free(struct profsvc_relabel *r); /* accepts NULL */
/* Apply r to ls: 0 (ls edited or not), PROFSVC_RELABEL_DROP when the
 * rule drops the profile, -ENOMEM, -E2BIG (a value made past
 * PROFSVC_RELABEL_MAX_VALUE bytes, a set past PROFSVC_RELABEL_MAX_LABELS). */
#define PROFSVC_RELABEL_DROP 1
#define PROFSVC_RELABEL_MAX_VALUE 4096
#define PROFSVC_RELABEL_MAX_LABELS 256
int profsvc_relabel_apply(const struct profsvc_relabel *r, struct profsvc_labels *ls);

/* One sampling rule (ingest_sampling.c; docs/cli.md, "Ingest rules"):
 * selector=, keep=, window= of kv[0, n) into *out
 * (profsvc_sample_rule_free): 0, -EINVAL with why, -ENOMEM. */
struct profsvc_sample_rule;
int profsvc_sample_rule_parse(const struct profsvc_rule_kv *kv, size_t n,
			      struct profsvc_sample_rule **out, char *why, size_t why_size);
void profsvc_sample_rule_free(struct profsvc_sample_rule *r); /* accepts NULL */
/* Whether r's selector matches the series labels[0, n). */
bool profsvc_sample_rule_matches(const struct profsvc_sample_rule *r,
				 const struct pstore_label *labels, size_t n);
/* Whether r keeps the profile of time_ns of the series labels[0, n)
 * whole: the hash of the labels and of time_ns's window against keep. */
bool profsvc_sample_rule_keeps(const struct profsvc_sample_rule *r,
			       const struct pstore_label *labels, size_t n, int64_t time_ns);
/* p's totals only: its sample types, period and times, one sample
 * without a stack holding each type's sum (held at INT64_MAX/MIN), none
 * when p has none; *out to pprof_profile_free.  0 or -ENOMEM. */
int profsvc_totals_only(const struct pprof_profile *p, struct pprof_profile **out);
/* The label of a series whose profiles a sampling rule kept as totals. */
#define PROFSVC_SAMPLED_LABEL "__sampled__"

/* Whether t (may be NULL) has rules for tenant (its own, else default's). */
bool profsvc_rules_for(const struct profsvc_rules *t, const char *tenant);
/* tenant's rules of t (may be NULL) applied to ls in the file's order:
 * 0, PROFSVC_RELABEL_DROP (the rules after it not applied), or a
 * negative errno with why naming the rule's line. */
int profsvc_rules_apply(const struct profsvc_rules *t, const char *tenant,
			struct profsvc_labels *ls, char *why, size_t why_size);
/* Whether the first sampling rule of tenant in t (may be NULL) whose
 * selector matches labels[0, n) keeps its profile of time_ns whole (true
 * too when none matches). */
bool profsvc_rules_keep(const struct profsvc_rules *t, const char *tenant,
			const struct pstore_label *labels, size_t n, int64_t time_ns);
/* What the sampling rules of pr's service now decide of a profile: no
 * rule's selector matches, or the first that does keeps it whole or
 * as its totals. */
enum profsvc_sampled { PROFSVC_SAMPLED_NO_RULE, PROFSVC_SAMPLED_KEPT, PROFSVC_SAMPLED_TOTALS };
enum profsvc_sampled profsvc_rules_sample_now(struct profsvc *pr,
					      const struct pstore_label *labels, size_t n,
					      int64_t time_ns);
/* The relabel rules of pr's tenant (--rules) applied to in's labels, in
 * the file's order, into ls (zeroed; profsvc_labels_release it whatever
 * the result), *applied false when the tenant has none (ls left empty:
 * in's labels stand).  0, PROFSVC_RELABEL_DROP, or a negative errno with
 * why naming the rule's line. */
int profsvc_rules_relabel(struct profsvc *pr, const struct profsvc_in *in,
			  struct profsvc_labels *ls, bool *applied, char *why, size_t why_size);

/* ---- tenants (profsvc.c, tenants.c) ------------------------------------------------- */

/* A service of o's store only (no tenant table, no scrapers): a tenant's,
 * or the start of the root's.  Errors as profsvc_new's. */
int profsvc_open(struct symsvc *symbols, const struct profsvc_opts *o, struct profsvc **out);
/* o's store opened into s (whose store is closed): 0 or the open's error,
 * logged. */
int profsvc_store_open(struct profsvc *s, const struct profsvc_opts *o);
/* The root s's tenant table under o's limits (o->max_tenants,
 * o->tenant_idle_ns: its closer thread started), a tenant's store
 * opened as o says for DIR/tenants/TENANT.  0 or a negative errno. */
int profsvc_tenants_init(struct profsvc *s, const struct profsvc_opts *o);
/* Stop the closer, close every tenant's service (NULL-safe). */
void profsvc_tenants_free(struct profsvc_tenants *t);
/* The services, the root first, from *cursor on (0: the start): at most
 * max into out, each held (profsvc_tenants_put them) and *cursor moved
 * past them; how many (0: no more).  which: those with their store open,
 * or every one (its counters: the store may be closed, NULL).  Pages see
 * each tenant throughout once; one opened meanwhile may be left out. */
#define PROFSVC_TENANTS_BATCH 32
enum profsvc_tenants_which { PROFSVC_TENANTS_STORES, PROFSVC_TENANTS_ALL };
size_t profsvc_tenants_open(struct profsvc *s, struct profsvc **out, size_t max,
			    size_t *cursor, enum profsvc_tenants_which which);
/* v[0, n) of profsvc_tenants_open let go (their idle times untouched). */
void profsvc_tenants_put(struct profsvc **v, size_t n);
/* The limits of the root's table now applied to every store open (its
 * max_series, retention, rollup_retention; pstore_retune). */
void profsvc_tenants_retune(struct profsvc *root);

/* ---- mappings named by the eBPF profiler's file ID (file_ids.c) ---------------------- */

/* The build ID a mapping named by file ID only has while no executable
 * with that file ID is stored: PREFIX and the file ID in lowercase hex. */
#define PROFSVC_FILE_ID_PREFIX "htlhash:"

/* The file ID of such a build ID (pointing into it), or NULL. */
const char *profsvc_file_id_named(const char *build_id);
/* Every mapping of r's profiles named by file ID only given the build ID
 * of the stored executable with that file ID, else PREFIX FILE_ID:
 * 0, or the profile's memory error. */
int profsvc_otlp_name_binaries(const struct profsvc *s, struct otlp_request *r);
/* build_id's symbols arrived: so did those of each of its file IDs. */
void profsvc_file_ids_arrived(struct profsvc *s, const char *build_id);

/* ---- a read's request context (read_request.c, resolver.c) -------------------------------- */

struct symsvc_req;

/* What the query-time resolver works for: the symbolization service and
 * one request's running limits (NULL: none, the compaction's). */
struct profsvc_resolving {
	struct symsvc *symbols;
	struct symsvc_req *req;
};
/* A pstore_resolve_fn on a struct profsvc_resolving: as profsvc_resolve,
 * each build ID through symsvc_index_get_for (the request's cap on
 * upstream fetches counts over every mapping of the query), and the read
 * stopped with the check's error once the request is stopped. */
int profsvc_resolve_for(void *ctx, const struct pstore_mapping *m, const uint64_t *addrs,
			size_t n, struct pstore_resolution *r);

/* One read of the service on a request's behalf (ro: the route's limits,
 * NULL none): begun before the store is asked, ended after. */
struct profsvc_read {
	struct pstore_request store;		/* given with each selection */
	struct profsvc_resolving resolving;	/* the query-time resolver's */
	const char *tenant;			/* the service's (static) */
	uint64_t max_range_s;			/* the tenant's max_query_range; 0 none */
};
/* 0 or -ENOMEM; r is ended (profsvc_read_end) whatever the result. */
int profsvc_read_begin(struct profsvc *s, const struct symsvc_request_opts *ro,
		       struct profsvc_read *r);
void profsvc_read_end(struct profsvc_read *r);
/* sel's range within the tenant's max_query_range (a selection without
 * an end: up to now): 0, or -PSTORE_ERR_LIMIT with why saying so. */
int profsvc_read_range(const struct profsvc_read *r, const struct pstore_selection *sel,
		       char *why, size_t why_size);
/* sel (may be NULL: everything) with r's request. */
struct pstore_selection profsvc_read_selection(const struct profsvc_read *r,
					       const struct pstore_selection *sel);
/* A query's options: the resolver bound to r. */
struct pstore_query_opts profsvc_read_query_opts(struct profsvc_read *r);
/* The request's memory account (NULL: none): the answer grows through it. */
struct ember_mem_account *profsvc_read_account(const struct profsvc_read *r);
/* The selection merged and resolved on r's behalf into *out
 * (query_answers.c; pmodel_result_free): 0 or the store's error with
 * why set. */
int profsvc_read_merge(struct profsvc *s, struct profsvc_read *r,
		       const struct pstore_selection *sel, struct pmodel_result **out, char *why,
		       size_t why_size);

/* ---- the answers (query_answers.c, discovery_answers.c) -------------------------------------- */

/* An answer's body initialized under its cap, growing through acct (may
 * be NULL), type application/json. */
void profsvc_answer_init(struct profsvc_answer *a, size_t cap, struct ember_mem_account *acct);
/* Why sel (read on rd's behalf) selected no profile, when its selector
 * names a label no series of its range and type has: a sentence into
 * hint ("" otherwise; empty_hint.c).  0, or the store's error with why. */
int profsvc_empty_hint(struct profsvc *s, const struct profsvc_read *rd,
		       const struct pstore_selection *sel, char *hint, size_t size, char *why,
		       size_t why_size);
/* err of writing an answer, with msg as why when it failed (the store's
 * errors come with their own). */
int profsvc_write_failed(int err, char *why, size_t why_size, const char *msg);
/* A query's views (struct profsvc_output's through, hide, sandwich),
 * its hide pattern compiled (query_view.c). */
struct profsvc_view {
	struct pmodel_view v;
	struct profsvc_regex *hide;
	bool any;			/* a view is asked for */
};
/* The views of o into v (released by profsvc_view_release, also on
 * error): 0, or -EINVAL (-E2BIG) with why naming hide= for a pattern RE2
 * refuses, -ENOMEM. */
int profsvc_view_init(struct profsvc_view *v, const struct profsvc_output *o, char *why,
		      size_t why_size);
void profsvc_view_release(struct profsvc_view *v);
/* *r replaced by its view under v (nothing asked: kept), the copy's
 * bytes charged to acct (profsvc_result_replace).  0, -ENOMEM, or the
 * account's -E2BIG / -EAGAIN with why (*r kept). */
int profsvc_view_apply(const struct profsvc_view *v, struct ember_mem_account *acct,
		       struct pmodel_result **r, char *why, size_t why_size);
/* *r replaced by next (a rewritten copy of it: a view, grouped frames)
 * once next's bytes are charged to acct (NULL: none), so that a request's
 * copies count against its share of the server's memory as its merge
 * does.  Past the share (-E2BIG) or the server's budget (-EAGAIN, the
 * account's errors: 413 and 503) next is freed, *r kept, why says so. */
int profsvc_result_replace(struct ember_mem_account *acct, struct pmodel_result **r,
			   struct pmodel_result *next, char *why, size_t why_size);

/* ---- scraping (scrape.c, scrape_http.c) ----------------------------------------- */

/* An HTTP client (libcurl, loaded at the first GET). */
struct api_http;
int api_http_new(struct api_http **out);
void api_http_free(struct api_http *h);
/* GET url into out (whose cap bounds it: -E2BIG; its account's error
 * when that refuses), *status the HTTP status; -ECANCELED when *stop was
 * set, -EHOSTUNREACH when the transfer failed, -ENOSYS without libcurl;
 * why says what happened. */
int api_http_get(struct api_http *h, const char *url, long timeout_s, const atomic_bool *stop,
		 struct ember_buf *out, long *status, char *why, size_t why_size);

/* The scrapers of o->scrape, under o's limits for a scrape (budget,
 * write_bytes, max_fetches). */
int profsvc_scrapers_start(struct profsvc *s, const struct profsvc_opts *o,
			   struct profsvc_scrapers **out);
void profsvc_scrapers_stop(struct profsvc_scrapers *sc);
int profsvc_scrapers_metrics(struct profsvc_scrapers *sc, struct ember_buf *b);

#endif /* EMBER_PROFSVC_INTERNAL_H */
