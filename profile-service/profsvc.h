/*
 * profsvc.h - the profile service: profiles in, answers out, between the
 * HTTP routes (api/profile_*.c, api/pyroscope_ingest.c) and the stores,
 * as symbol-service/ is for symbolization.  docs/architecture.md walks a
 * pushed profile through it hop by hop.
 *
 * It owns:
 *  - the profile store's life (profsvc_new opens it, its log replayed, with
 *    this service as the resolver of its compactions; profsvc_free closes
 *    it) and the --scrape puller beside it (scrape.c);
 *  - the tenants (X-Scope-OrgID): the service is the tenant "anonymous";
 *    each other tenant is a service of its own with a store of its own,
 *    opened at its first request (profsvc_tenant), which every call
 *    below takes as its s, so one tenant's calls never see another's
 *    profiles (tenants.c);
 *  - ingest: a body decoded (profsvc_decode), its labels (the Pyroscope
 *    rules: profsvc_pyroscope_labels), symbolized through the
 *    symbolization service (symsvc_symbolize_pprof), the build IDs left
 *    unresolved recorded with their reasons, appended to the store
 *    (profsvc_ingest), which answers once the profile is durable;
 *  - the query-time resolver: frames left as addresses are resolved
 *    through the symbolization service when a query merges them and when
 *    a compaction rewrites them (resolver.c), named by the one rule of
 *    symsvc_frame_name;
 *  - every answer's body, whole (query, diff, source view, discovery,
 *    series, coverage, ingest): the caller sets the status and headers and sends
 *    it;
 *  - the profile lines of /metrics.
 * Nothing here knows about HTTP: request parameters arrive parsed (times
 * and Pyroscope's syntax through wire/pyroscope.h), errors leave as the
 * store's kinds (pstore.h) or negative errnos, and the caller maps them
 * to statuses.
 *
 * Thread safety: a struct profsvc is used by any number of threads at
 * once; an answer belongs to its caller.  No global state.
 */
#ifndef EMBER_PROFSVC_H
#define EMBER_PROFSVC_H

#include "common.h"
#include "jfr.h"
#include "otlp.h"
#include "pprof.h"
#include "pstore.h"
#include "pyroscope.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profsvc;
struct symsvc;
struct symsvc_request_opts;

/* ---- the service (profsvc.c) --------------------------------------------- */

/* Options; zero fields take the defaults. */
struct profsvc_opts {
	size_t sz;			/* sizeof(struct profsvc_opts) */
	const char *dir;		/* where the store lives (DATA/profiles) */
	int64_t retention_ns;		/* blocks older are dropped; 0: 14 days */
	int64_t rollup_retention_ns;	/* rollups older are dropped; 0: 90 days */
	uint64_t max_profile_bytes;	/* a profile as received; 0: 16 MiB */
	/* --scrape targets: "URL[,interval=DURATION][,NAME=VALUE...]" */
	const char *const *scrape;
	size_t n_scrape;
	size_t max_series;		/* series in the store; 0: 100,000 */
	int64_t head_age_ns;		/* profiles in the log before blocks; 0: 60 s */
	/* Blocks on shared storage (bucket_profile_blockio): copied, its
	 * context owned by the service from profsvc_new on, whatever its
	 * result.  NULL: blocks in dir. */
	const struct pstore_blockio *blocks;
	int64_t refresh_ns;		/* shared: the block index read again; 0: 2 s */
	int64_t lease_expiry_ns;	/* shared: a dead writer's log taken over; 0: 3 head ages */
	/* A scrape's limits, a push's (whose are the caller's, profsvc_in):
	 * its body, decompressed bytes, decoded profile and symbolization
	 * taken from budget through an account of at most write_bytes
	 * (budget borrowed; NULL: no account), and at most max_fetches build
	 * IDs asked upstream (0: no cap). */
	struct ember_mem_budget *budget;
	uint64_t write_bytes;
	unsigned max_fetches;
	/* The window of profile times a push or a scrape may have, around
	 * now (a replay, a takeover and a replica's reads are never
	 * checked): older than max_age_ns or newer than max_future_ns is
	 * refused.  0: 1 hour and 10 minutes; negative: no limit. */
	int64_t max_age_ns, max_future_ns;
	/* Tenants other than "anonymous" open at once (profsvc_tenant); 0: 64. */
	size_t max_tenants;
	/* A tenant's store closed once no request has held it this long,
	 * opened again by the next; 0: 15 minutes; negative: never. */
	int64_t tenant_idle_ns;
	/* With blocks (shared storage): the block storage of tenant's store
	 * (its local directory dir, made), filled into *out, owned by the
	 * tenant's store from then on (e.g. bucket_profile_blockio under a
	 * prefix of the tenant's).  NULL: a tenant's blocks in its directory. */
	int (*tenant_blocks)(void *ctx, const char *tenant, const char *dir,
			     struct pstore_blockio *out);
	void *tenant_blocks_ctx;	/* borrowed: it must outlive the service */
	/* The service's files (config_files.c), read by profsvc_new (one
	 * that does not read or parse fails it, the reason logged naming the
	 * line) and again by profsvc_reload; NULL: none.
	 * limits_file: per-tenant limits (profsvc_limits_parse; a tenant's
	 * max_series, retention and rollup_retention its store's, at its open
	 * and at each reload); rules_file: per-tenant ingest rules
	 * (profsvc_rules_parse); tokens_file: tenants' write tokens
	 * (profsvc_tokens_read). */
	const char *limits_file, *rules_file, *tokens_file;
};

/* Open the store under o->dir (its log replayed) with symbols (borrowed:
 * must outlive the service) as its resolver, and start the scrapers.
 * 0 or a negative errno (or -PSTORE_ERR_*), logged with the reason. */
int profsvc_new(struct symsvc *symbols, const struct profsvc_opts *o, struct profsvc **out);
/* Read the service's files again (o->limits_file, o->rules_file; `ember
 * serve` on SIGHUP), s its service or any tenant's: each file's table
 * every tenant's from now on, the limits' store limits applied to the
 * tenants' stores open; a file that does not read or parse changes
 * nothing.  Each file logged either way.  0 (also without files) or the
 * first file's error. */
int profsvc_reload(struct profsvc *s);
/* Stop the scrapers, close the tenants' stores and the store (NULL-safe). */
void profsvc_free(struct profsvc *s);
/* The store (borrowed: valid until profsvc_free). */
struct pstore *profsvc_store(struct profsvc *s);
/* The limit of a profile as received, in bytes. */
uint64_t profsvc_max_body(const struct profsvc *s);
/* The debug info of build_id was stored (an upload, a fetch): the stored
 * frames of that build ID, and those named by the file ID of one of its
 * executables (file_ids.c), are resolved at the next compaction, in
 * every tenant's store open. */
void profsvc_symbols_arrived(struct profsvc *s, const char *build_id);
/* The wall clock in ns from the epoch: a profile's time, "now" of a query. */
int64_t profsvc_now_ns(void);

/* ---- tenants (tenants.c) ------------------------------------------------------ */

/* The tenant of everything when tenants are off: the service itself, its
 * store in o->dir as before tenants were. */
#define PROFSVC_TENANT_ANONYMOUS "anonymous"
/* The longest tenant ID; whether an ID is one: ember_tenant_valid
 * (common.h, shared with the agent). */
#define PROFSVC_TENANT_MAX EMBER_TENANT_MAX
/* How profsvc_tenant opens a tenant: with CREATE (a write) a tenant
 * without a store gets one; without (a read), such a tenant is answered
 * as an empty one, from a store no one writes, taking no slot. */
enum profsvc_tenant_flags { PROFSVC_TENANT_CREATE = 1 << 0 };
/* The service of tenant id (s: the service or any tenant's) into *out,
 * held until profsvc_tenant_put (a request's: its store stays open that
 * long).  Anonymous is the service; another tenant's store is opened at
 * its first call after a start or an idle close (o->tenant_idle_ns), in
 * o->dir/tenants/ID (blocks by o->tenant_blocks on shared storage),
 * with the service's options and the tenant's limits.  0; -EINVAL for an
 * id that is not valid; -EUSERS when o->max_tenants stores are open and
 * id is none of them; or the open's error (logged), the next call trying
 * again. */
int profsvc_tenant(struct profsvc *s, const char *id, unsigned flags, struct profsvc **out);
/* The hold of profsvc_tenant let go (NULL and the service: nothing). */
void profsvc_tenant_put(struct profsvc *ts);
/* The tenant s serves (static for s's life). */
const char *profsvc_tenant_id(const struct profsvc *s);

/* ---- per-tenant limits (tenant_limits.c) ---------------------------------------- */

/* The service's own errors (beside the store's and negative errnos). */
enum profsvc_error {
	PROFSVC_ERR_RATE = 5300,	/* past the tenant's ingest rate: ask again later */
};
/* The kind of an error of the service or the store (pstore_error_kind
 * for the store's): PROFSVC_ERR_RATE is EMBER_ERRK_CAPACITY. */
enum ember_errkind profsvc_error_kind(int err);
/* Message for it (pstore_strerror for the store's). */
const char *profsvc_strerror(int err);

/* A tenant's limits; 0: none of the tenant's (the server's own apply). */
struct profsvc_limits {
	uint64_t ingest_rate;		/* bytes a second taken (a token bucket) */
	uint64_t ingest_burst;		/* the bucket's size; 0: twice the rate */
	uint64_t max_profile_bytes;	/* a profile as received */
	uint64_t max_samples;		/* samples of a profile */
	uint64_t max_stack_depth;	/* locations of a sample */
	uint64_t max_labels;		/* labels of a profile's series */
	uint64_t max_label_name_len, max_label_value_len;
	uint64_t max_series;		/* the tenant's store's */
	uint64_t max_query_range;	/* seconds a read's range may span */
	uint64_t max_query_bytes;	/* memory of a read's answer */
	uint64_t retention;		/* seconds: the tenant's store's full resolution */
	uint64_t rollup_retention;	/* seconds: its rollups' */
};
/* The entry of the limits file naming the limits of every tenant it
 * does not name itself. */
#define PROFSVC_LIMITS_DEFAULT "default"
struct profsvc_limits_table;
/* The limits file's text[0, len) ("TENANT key=value ..." lines, '#'
 * comments; docs/cli.md, "--limits") into *out
 * (profsvc_limits_table_free).  0, or -EINVAL with why saying which line
 * and what, -ENOMEM. */
int profsvc_limits_parse(const char *text, size_t len, struct profsvc_limits_table **out,
			 char *why, size_t why_size);
void profsvc_limits_table_free(struct profsvc_limits_table *t);
/* t (taken; NULL: none) the limits of every tenant of the service s
 * belongs to from now on, in place of the table before; each store open
 * takes its tenant's max_series, retention and rollup_retention
 * (pstore_retune; a tenant without them the service's options). */
void profsvc_limits_set(struct profsvc *s, struct profsvc_limits_table *t);
/*
 * Per-tenant ingest rules (`ember serve --rules FILE`; docs/cli.md,
 * "Ingest rules"): "TENANT relabel key=value ..." lines (a value in '...'
 * or "..." may hold spaces), each tenant's applied in the file's order to
 * the labels of each profile it writes before anything else looks at
 * them; the lines of "default" for every tenant the file does not name.
 */
struct profsvc_rules;
/* text[0, len) into *out (profsvc_rules_free): 0, or -EINVAL / -E2BIG
 * with why naming the line and what (a regex that does not compile, a
 * key unknown, more rules than a tenant or the file may have), -ENOMEM. */
int profsvc_rules_parse(const char *text, size_t len, struct profsvc_rules **out, char *why,
			size_t why_size);
/* Accepts NULL; rules still applied to a profile are freed after it. */
void profsvc_rules_free(struct profsvc_rules *r);
/* r (taken; NULL: none) the rules of every tenant of s's service from
 * now on, in place of those before (a profile being written keeps the
 * rules it began with). */
void profsvc_rules_set(struct profsvc *s, struct profsvc_rules *r);
/* The limits of s's tenant now. */
void profsvc_limits_of(struct profsvc *s, struct profsvc_limits *out);
/*
 * Tenants' own write tokens (`ember serve --tokens FILE`, tenant_tokens.c):
 * "TOKEN TENANT" lines in a secret file (ember_secret_check).
 */
struct profsvc_tokens;
/* The tokens of path into *out (profsvc_tokens_free).  0 or a negative
 * errno, the reason logged. */
int profsvc_tokens_read(const char *path, struct profsvc_tokens **out);
/* The tokens file's text[0, len) into *out (path names it in what is
 * logged): 0, or -EINVAL / -E2BIG (the line and why logged), -ENOMEM. */
int profsvc_tokens_parse(const char *text, size_t len, const char *path,
			 struct profsvc_tokens **out);
void profsvc_tokens_free(struct profsvc_tokens *t);
/* Whether given[0, len) is a token of the service's --tokens file as it
 * reads now (o->tokens_file, read again by profsvc_reload): its tenant
 * copied into tenant. */
bool profsvc_token_tenant(struct profsvc *s, const char *given, size_t len,
			  char tenant[PROFSVC_TENANT_MAX + 1]);
/* The tenant of token given[0, len) (pointing into t), or NULL: every
 * entry compared in constant time. */
const char *profsvc_tokens_find(const struct profsvc_tokens *t, const char *given, size_t len);
/* A write of bytes as received, for s's tenant: taken from its ingest
 * rate's bucket and counted as ingested, or -PROFSVC_ERR_RATE (counted
 * as PROFSVC_REJECT_RATE, why set) with *retry_after_s the seconds until
 * it would fit (0: never, past the burst). */
int profsvc_ingest_admit(struct profsvc *s, uint64_t bytes, unsigned *retry_after_s,
			 char *why, size_t why_size);

/* ---- ingest (ingest_pipeline.c) ------------------------------------------------------- */

/* How a profile came. */
enum profsvc_route { PROFSVC_ROUTE_PROFILES, PROFSVC_ROUTE_INGEST, PROFSVC_ROUTE_SCRAPE,
		     PROFSVC_ROUTE_OTLP, PROFSVC_ROUTE_COUNT };

/* Why a profile was refused (the rejected counters of /metrics). */
enum profsvc_reject {
	PROFSVC_REJECT_AUTH,		/* no or wrong token */
	PROFSVC_REJECT_TOO_LARGE,	/* the body past the limit */
	PROFSVC_REJECT_BAD_PROFILE,	/* not a profile (decode, form, folded text) */
	PROFSVC_REJECT_LIMIT,		/* samples, depth, labels, lengths */
	PROFSVC_REJECT_LABEL,		/* a malformed label */
	PROFSVC_REJECT_SERIES,		/* the store's series limit */
	PROFSVC_REJECT_OUT_OF_BOUNDS,	/* a time outside the accepted window */
	PROFSVC_REJECT_UNAVAILABLE,	/* the store could not write it */
	PROFSVC_REJECT_BUSY,		/* the memory budget taken by other work */
	PROFSVC_REJECT_TENANT,		/* no, a bad, or one tenant too many */
	PROFSVC_REJECT_RATE,		/* past the tenant's ingest rate */
	PROFSVC_REJECT_COUNT
};

/* One profile to store: decoded, labels given, symbolized and appended. */
struct profsvc_in {
	struct pprof_profile *p;	/* taken: freed by profsvc_ingest */
	const void *body;		/* the body that decodes to p, to log as is (or NULL) */
	size_t body_len;
	size_t input_bytes;		/* the size as received (the size limit) */
	const struct pstore_label *labels;
	size_t n_labels;
	int64_t time_ns, duration_ns;	/* when the profile has none */
	enum profsvc_route route;
	bool check_only;		/* checked as a write is, nothing stored */
	/* The write's limits while it is symbolized (borrowed): its check,
	 * its cap on upstream fetches, its memory account (the one p was
	 * decoded under).  NULL: none. */
	const struct symsvc_request_opts *request;
};

/* The outcome: the JSON answer, or the error and its reason. */
struct profsvc_out {
	int err;			/* 0: body holds the answer */
	enum profsvc_reject reject;	/* when err */
	char why[512];			/* when err */
	struct ember_buf body;		/* the JSON answer */
};

/* Symbolize and append in (consumed); out->body initialized here (the
 * caller releases it).  With in->check_only, the labels and types are
 * checked as an append checks them (pstore_append_check), the answer
 * says 0 profiles, and nothing is symbolized, stored or counted as ingested.  A profile whose time (time_nanos, else
 * in->time_ns) is outside the service's window is refused first,
 * -PSTORE_ERR_LIMIT with reject PROFSVC_REJECT_OUT_OF_BOUNDS.  Counted
 * in the service's metrics either way. */
void profsvc_ingest(struct profsvc *s, struct profsvc_in *in, struct profsvc_out *out);
/* A profile refused before it reached profsvc_ingest, counted. */
void profsvc_count_reject(struct profsvc *s, enum profsvc_reject why);
/* Decode a body (content_encoding undone, then raw/gzip/zstd by magic)
 * into *out (caller frees): 0 or wire's error with why set.  The
 * decompressed bytes are capped at profsvc_max_decoded(s) (-E2BIG past
 * it); they, the protobuf and every later edit of the profile are taken
 * from acct first (borrowed: it must outlive *out; NULL: none), -E2BIG
 * past its share and -EAGAIN when its budget is taken. */
int profsvc_decode(const struct profsvc *s, const void *data, size_t len,
		   const char *content_encoding, struct ember_mem_account *acct,
		   struct pprof_profile **out, char *why, size_t why_size);
/* As profsvc_decode, an OTLP ExportProfilesServiceRequest (wire/otlp.h)
 * into *out (caller frees with otlp_request_free): content_encoding
 * undone under the same cap, otlp_decode's limits (its input capped at
 * profsvc_max_decoded(s)) charged to acct; then each mapping named by the
 * eBPF profiler's file ID only given the build ID of the stored
 * executable with that ID, or "htlhash:FILE_ID" until one is stored
 * (file_ids.c). */
int profsvc_otlp_decode(const struct profsvc *s, const void *data, size_t len,
			const char *content_encoding, struct ember_mem_account *acct,
			struct otlp_request **out, char *why, size_t why_size);
/* The same for a body in OTLP's JSON encoding (otlp_decode_json). */
int profsvc_otlp_json_decode(const struct profsvc *s, const void *data, size_t len,
			     const char *content_encoding, struct ember_mem_account *acct,
			     struct otlp_request **out, char *why, size_t why_size);
/* As profsvc_decode, a JFR recording (wire/jfr.h) read as o says (its
 * labels, the CPU period; its limits are the service's) into *out
 * (caller frees with jfr_recording_free): content_encoding undone, then
 * the gzip of the recording and of the labels (as the Java agent sends
 * them), under the same cap, charged to acct. */
int profsvc_jfr_decode(const struct profsvc *s, const void *data, size_t len,
		       const char *content_encoding, const struct jfr_opts *o,
		       struct ember_mem_account *acct, struct jfr_recording **out, char *why,
		       size_t why_size);
/* The cap on a body's decompressed bytes: 4 times the profile limit,
 * at most 64 MiB. */
uint64_t profsvc_max_decoded(const struct profsvc *s);
/* The reject a failure of decoding a body (err) is counted as. */
enum profsvc_reject profsvc_decode_reject(int err);
/* Whether content_encoding leaves the body as the log replays it (none
 * or identity): then it may be logged as received. */
bool profsvc_encoding_identity(const char *content_encoding);
/* The labels of Pyroscope's /ingest, added to t: APP as service_name
 * (app_name when a service_name tag is given), spy as pyroscope_spy, the
 * kind's __name__ (k may be NULL), unless the tags carry them.  Then
 * t->v[0, t->n) are the profile's labels, as out[] of the same size
 * (pointing into t). */
void profsvc_pyroscope_labels(struct pyro_tags *t, const char *spy, const struct pyro_kind *k,
			      struct pstore_label *out);

/* ---- answers (query_answers.c, discovery_answers.c) ------------------------------------------ */

/*
 * Every answer is made on a request's behalf: ro (symsvc.h, the limits
 * the symbolization routes take too; NULL: none) is the one request
 * context of the profile routes (api/profile_routes.c builds it once).
 * Its check is polled by the store between sources, series and profiles
 * and by the query-time resolver: its error (-ETIMEDOUT past the
 * deadline, -ECANCELED when the client went away) stops the answer and is
 * returned.  Its max_fetches caps the build IDs the query-time resolver
 * asks upstream for over the whole request (the rest stay unresolved as
 * upstream_fetch_limit), deadline_ms bounds the wait for one.  Its
 * account takes the answer's body and what the store holds for the
 * request (the series grid): past the request's share -E2BIG, past the
 * server's budget -EAGAIN.
 */

/* A whole answer body and what its headers say. */
struct profsvc_answer {
	struct ember_buf body;		/* initialized by the call; the caller releases it */
	const char *type;		/* its Content-Type (static) */
	uint64_t profiles;		/* merged (a diff: the new side's) */
	uint64_t base_profiles;		/* a diff's base side */
	int64_t total;			/* a query's total value */
	char hint[256];			/* a query that selected nothing: why,
					   when its selector names a label no
					   series has (else "") */
};

/* The output options of a query or a diff. */
struct profsvc_output {
	size_t sz;			/* sizeof(struct profsvc_output) */
	const char *format;		/* a query: json (NULL), pprof, folded, top,
					   top-text, svg; a diff: table (NULL),
					   table-text, json, folded, svg, pprof */
	size_t rows;			/* top and table rows */
	struct pmodel_svg_opts svg;	/* title, width, icicle */
	bool normalize;			/* a diff's folded output */
	size_t max_nodes;		/* a query's pprof: cut to its largest
					   nodes, the rest "other"
					   (pmodel_result_truncate); 0 whole */
	bool unsymbolized_frames;	/* each unsymbolized frame its own
					   ("MODULE+0xOFFSET"); false: every
					   format but pprof groups them per
					   module, "[MODULE]"
					   (pmodel_result_group_unresolved),
					   a diff both sides alike */
	/* The views of the merge (both sides of a diff), applied before any
	 * output in this order (pmodel_result_view; query_view.c); NULL:
	 * none.  through: only the stacks through a frame of that name;
	 * hide: the frames whose whole name this RE2 pattern matches, hidden
	 * into their callers (-EINVAL, why set, for a pattern RE2 refuses or
	 * past its memory); sandwich: that function's callers (callers set)
	 * or callees. */
	const char *through, *hide, *sandwich;
	bool callers;
};

/* Whether format names a query's output (diff false) or a diff's. */
bool profsvc_format_known(const char *format, bool diff);

/*
 * The selection merged (its unsymbolized frames resolved on the way) and
 * written in o's format into a.  0, or the store's error with why set;
 * -E2BIG when the answer passes its cap (512 MiB).  a is initialized
 * whatever the result (every answer's function here: the caller releases
 * a->body); an error of writing the answer comes with why set too.
 */
int profsvc_query(struct profsvc *s, const struct symsvc_request_opts *ro,
		  const struct pstore_selection *sel, const struct profsvc_output *o,
		  struct profsvc_answer *a, char *why, size_t why_size);
/* Pyroscope's render answer (GET /pyroscope/render): {"version":1,
 * "flamebearer":{..},"metadata":{..},"timeline":{..}}, the flame graph
 * past max_nodes nodes (0: no limit) folded as pmodel_write_flamebearer
 * does, the timeline the selection's totals at whole-second steps (the
 * range / 240, at least 10 s).  As profsvc_query otherwise. */
int profsvc_render(struct profsvc *s, const struct symsvc_request_opts *ro,
		   const struct pstore_selection *sel, size_t max_nodes,
		   struct profsvc_answer *a, char *why, size_t why_size);
/* querier.v1's SelectMergeStacktraces: the selection merged as
 * profsvc_query merges it, as the flame graph of pmodel_flamegraph_new
 * (past max_nodes nodes, 0: no limit, folded) into *out (NULL on error;
 * pmodel_flamegraph_free).  Errors as profsvc_query's. */
int profsvc_flamegraph(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, size_t max_nodes,
		       struct pmodel_flamegraph **out, char *why, size_t why_size);
/* Pyroscope's render-diff answer (GET /pyroscope/render-diff):
 * {"version":1,"flamebearer":{..},"metadata":{"format":"double",..},
 * "timeline":null,"leftTicks":L,"rightTicks":R}, the flamebearer the
 * diff's graph (pmodel_write_flamebearer_diff: left the base side, right
 * the new one; past max_nodes nodes, 0: no limit, folded), numTicks L + R.
 * As profsvc_diff otherwise (-PMODEL_ERR_TYPE when the sides' sample
 * types or units differ). */
int profsvc_render_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
			const struct pstore_selection *left, const struct pstore_selection *right,
			size_t max_nodes, struct profsvc_answer *a, char *why, size_t why_size);
/* querier.v1's Diff: both sides merged as profsvc_flamegraph merges
 * them, left as the diff's base, as pmodel_flamegraph_diff_new's graph
 * (past max_nodes nodes, 0: no limit, folded) into *out (NULL on error;
 * pmodel_flamegraph_free).  -PMODEL_ERR_TYPE (why set) when the sides'
 * sample types or units differ; otherwise as profsvc_query's. */
int profsvc_flamegraph_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
			    const struct pstore_selection *left,
			    const struct pstore_selection *right, size_t max_nodes,
			    struct pmodel_flamegraph **out, char *why, size_t why_size);
/* Both sides merged and compared under d, written in o's format. */
int profsvc_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
		 const struct pstore_selection *base, const struct pstore_selection *new_,
		 const struct pmodel_diff_opts *d, const struct profsvc_output *o,
		 struct profsvc_answer *a, char *why, size_t why_size);

/* What a source view answers (source_answers.c). */
struct profsvc_source_opts {
	size_t sz;			/* sizeof(struct profsvc_source_opts) */
	const char *function;		/* the frame name (required) */
	const char *file;		/* only this source file of it (NULL: every one) */
	const char *format;		/* json (NULL) or text (pprof -list's listing) */
};
/* The source view of o->function in the selection merged as profsvc_query
 * merges it (docs/http-api.md, "Source view"): its self and total per
 * line of each of its source files (pmodel_result_source), heaviest file
 * first, each file's text read from the debuginfo store by the build ID
 * of the mapping its frames weigh most in (at most 16 files read; 4 MiB
 * a file), or why there is none and which build ID and module an `ember
 * upload --sources` would need.  -EINVAL (why set) without a function or
 * with an unknown format; the store's error (why set) when the
 * debuginfo store cannot be read; otherwise as profsvc_query. */
int profsvc_source(struct profsvc *s, const struct symsvc_request_opts *ro,
		   const struct pstore_selection *sel, const struct profsvc_source_opts *o,
		   struct profsvc_answer *a, char *why, size_t why_size);
/* The same over two selections: each line's values on both sides (raw;
 * text: shares of each side's total), the text by the new side's build
 * ID, else the base's.  -PMODEL_ERR_TYPE (why set) when the sides'
 * types differ. */
int profsvc_source_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
			const struct pstore_selection *base, const struct pstore_selection *new_,
			const struct profsvc_source_opts *o, struct profsvc_answer *a, char *why,
			size_t why_size);

/* {"names":[...]} of the selection's label names; name given: {"name":
 * NAME,"values":[...]} of its values. */
int profsvc_labels(struct profsvc *s, const struct symsvc_request_opts *ro,
		   const struct pstore_selection *sel, const char *name, struct profsvc_answer *a,
		   char *why, size_t why_size);
/* The same as a bare JSON array of strings, as Pyroscope's GET
 * /pyroscope/labels and /pyroscope/label-values answer. */
int profsvc_label_list(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, const char *name,
		       struct profsvc_answer *a, char *why, size_t why_size);
/* {"sets":[{"NAME":"VALUE",..},..]}: the label sets of the selection's
 * series, each restricted to names[0, n_names) (n_names 0: all),
 * unique (pstore_label_sets). */
int profsvc_label_sets(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, const char *const *names,
		       size_t n_names, struct profsvc_answer *a, char *why, size_t why_size);
/* {"types":[{"id":..,"name":..,...}]} of the profile types. */
int profsvc_types(struct profsvc *s, const struct symsvc_request_opts *ro,
		  const struct pstore_selection *sel, struct profsvc_answer *a, char *why,
		  size_t why_size);
/* What profsvc_series reads.  Zero fields take the defaults. */
struct profsvc_series_opts {
	size_t sz;			/* sizeof(struct profsvc_series_opts) */
	int64_t step_ns;		/* 0: the range / 240, at least 10 s */
	const char *const *group_by;	/* one line per distinct value tuple */
	size_t n_group_by;
	bool average;			/* a point: the mean of its profiles' totals */
	size_t limit;			/* the lines of largest total kept (0: all) */
};
/* The selection's totals over time as o says, grouped, the limit lines
 * of largest total (the sum of their points) kept, largest first (ties
 * by label values), into *out (pstore_series_set_free; NULL on error):
 * a point's value is profsvc_series_value's.  -EINVAL (why set) when the
 * grid passes the store's bounds (pstore_series_totals: more points than
 * PSTORE_SERIES_MAX_POINTS, more lines than the points leave of
 * PSTORE_SERIES_MAX_CELLS), refused before it is allocated. */
int profsvc_series_set(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *sel, const struct profsvc_series_opts *o,
		       struct pstore_series_set **out, char *why, size_t why_size);
/* Point i of line of set: its sum, or with average the mean of the
 * profiles' totals summed into it (0 where none is). */
double profsvc_series_value(const struct pstore_series_set *set, size_t line, size_t i,
			    bool average);
/* The same as JSON: {"type":..,"series":[...]} (docs/http-api.md,
 * "Totals over time"). */
int profsvc_series(struct profsvc *s, const struct symsvc_request_opts *ro,
		   const struct pstore_selection *sel, const struct profsvc_series_opts *o,
		   struct profsvc_answer *a, char *why, size_t why_size);
/* Whether the store holds a profile, its oldest and newest times
 * (pstore_time_range: the sources' bounds, no profile read).  0 or
 * -ENOMEM. */
int profsvc_time_range(struct profsvc *s, struct pstore_time_range *out);
/* The symbolization coverage: the first rows build IDs (0: all). */
int profsvc_coverage(struct profsvc *s, const struct symsvc_request_opts *ro,
		     const struct pstore_selection *sel, size_t rows, struct profsvc_answer *a,
		     char *why, size_t why_size);

/* ---- the query-time resolver (resolver.c) ------------------------------------- */

/* A pstore_resolve_fn over the symbolization service (ctx: struct symsvc),
 * on no request's behalf (the compaction's; a query's resolver counts
 * its request's limits: resolver.c). */
int profsvc_resolve(void *ctx, const struct pstore_mapping *m, const uint64_t *addrs, size_t n,
		    struct pstore_resolution *r);

/* ---- metrics (profile_metrics.c) ----------------------------------------------------- */

/* The profile lines of GET /metrics, appended to b. */
int profsvc_metrics(struct profsvc *s, struct ember_buf *b);
/* The usage of s's tenant as JSON into a (initialized here): {"tenant":
 * ID, "ingested_bytes": N, "ingested_profiles": {ROUTE: N, ..},
 * "series": N, "profiles": N, "stored_bytes": N, "log_bytes": N,
 * "rejected": {REASON: N, ..}} (docs/http-api.md, "Tenants").  0 or
 * -ENOMEM. */
int profsvc_usage(struct profsvc *s, struct profsvc_answer *a);

#endif /* EMBER_PROFSVC_H */
