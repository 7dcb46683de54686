/*
 * api_profiles.h - the profile routes of the server (issue 15), shared
 * between api/'s profile_*.c, pyroscope_ingest.c and scrape.c only: the
 * profile store (profile-store/pstore.h) behind POST /api/v1/profiles,
 * Pyroscope's POST /ingest, the query, discovery, series, diff and
 * coverage routes, and the scrape puller.  docs/http-api.md, "Profiles",
 * is the contract.
 *
 * The store is opened by api_profiles_start() under the data directory,
 * with the symbolization service as its resolver (profile_resolver.c):
 * frames left as addresses at ingest are resolved at query time and, once
 * their debug info arrives (api_profiles_symbols_arrived(), called when
 * an upload or an upstream fetch stores a file), in the stored blocks.
 */
#ifndef EMBER_API_PROFILES_H
#define EMBER_API_PROFILES_H

#include "api_internal.h"
#include "pprof.h"
#include "pstore.h"

#include <stdatomic.h>

struct api_scrapers;

enum api_profile_reject {
	API_PREJ_AUTH,		/* no or wrong token */
	API_PREJ_TOO_LARGE,	/* the body past the limit */
	API_PREJ_BAD_PROFILE,	/* not a profile (decode, form, folded text) */
	API_PREJ_LIMIT,		/* samples, depth, labels, lengths */
	API_PREJ_LABEL,		/* a malformed label */
	API_PREJ_SERIES,	/* the store's series limit */
	API_PREJ_UNAVAILABLE,	/* the store could not write it */
	API_PREJ_COUNT
};

enum api_profile_route_kind { API_PROUTE_PROFILES, API_PROUTE_INGEST, API_PROUTE_SCRAPE,
			      API_PROUTE_COUNT };

struct api_profiles {
	struct pstore *store;
	struct symsvc *symbols;		/* borrowed: the server's */
	char ingest_token[128];		/* "" when none */
	uint64_t max_body;		/* bytes of a profile as received */
	struct api_scrapers *scrapers;	/* NULL without --scrape */
	_Atomic uint64_t ingested[API_PROUTE_COUNT];
	_Atomic uint64_t rejected[API_PREJ_COUNT];
	_Atomic uint64_t samples_resolved, samples_unresolved;
	_Atomic uint64_t unbounded_warned; /* labels already logged */
};

/* ---- lifecycle (profiles.c) ------------------------------------------------- */

/* Open the store (o->dir) and start the scrapers, into srv->profiles;
 * o NULL: no profile routes.  0 or a negative errno, logged with the
 * reason. */
int api_profiles_start(struct api_server *srv, const struct api_profile_opts *o);
/* Stop the scrapers, close the store (NULL-safe). */
void api_profiles_stop(struct api_server *srv);
/* The debug info of build_id was stored (an upload, a fetch). */
void api_profiles_symbols_arrived(struct api_server *srv, const char *build_id);
/* The profile store's lines of /metrics, appended to b (profile_metrics.c). */
int api_profiles_metrics(struct api_server *srv, struct ember_buf *b);

/* ---- routing (profile_routes.c) --------------------------------------------- */

/* Whether ep is one of the profile routes. */
bool api_profile_endpoint(enum api_endpoint ep);
/* Set r for a profile route's path (the NAME of /labels/NAME/values in
 * r->path); false when url is none of them. */
bool api_profile_route_parse(const char *url, struct api_route *r);
/* The first call of a request to a profile route (headers only). */
enum MHD_Result api_profile_first(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const char *method);
/* Every later call: body pieces, then the answer. */
enum MHD_Result api_profile_next(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const char *data, size_t *size);

/* ---- parameters (profile_params.c) ------------------------------------------ */

/* A query parameter (the first of its name), or NULL. */
const char *api_param(struct MHD_Connection *c, const char *name);
/* The first of several names that is given, or NULL. */
const char *api_param_any(struct MHD_Connection *c, const char *const *names);
/*
 * A time: "now", "now-15m", RFC 3339, or an integer from the epoch whose
 * unit is read from its size (< 1e11 s, < 1e14 ms, < 1e17 us, else ns),
 * into ns.  now_ns is "now".  0 or -EINVAL.
 */
int api_parse_time(const char *s, int64_t now_ns, int64_t *out);
/* "10s", "5m", "1h30m", "2d", "1w", or plain seconds: ns > 0. */
int api_parse_duration(const char *s, int64_t *out);
/* An unsigned number up to max. */
int api_parse_uint(const char *s, uint64_t max, uint64_t *out);
int64_t api_now_ns(void);

/* A selection from the parameters: query (selector), type, from, to (or
 * until), each read under prefix (e.g. "base_"), falling back to the
 * unprefixed names, then to alt[] (Pyroscope's names, may be NULL).  The
 * strings point into the request.  0, or -EINVAL with why set for the
 * sender. */
struct api_selection_names {
	const char *query, *from, *to; /* alternatives, or NULL */
};
int api_selection_from_params(struct MHD_Connection *c, const char *prefix,
			      const struct api_selection_names *alt,
			      struct pstore_selection *sel, char *why, size_t why_size);

/* ---- ingest (profile_ingest.c) ---------------------------------------------- */

/* One profile to store: decoded, labels given, symbolized and appended. */
struct api_profile_in {
	struct pprof_profile *p;	/* taken: freed by api_profile_store */
	const void *body;		/* the body that decodes to p, to log as is (or NULL) */
	size_t body_len;
	size_t input_bytes;		/* the size as received (the size limit) */
	const struct pstore_label *labels;
	size_t n_labels;
	int64_t time_ns, duration_ns;	/* when the profile has none */
	enum api_profile_route_kind route;
};

/* The outcome: the JSON answer, or the error and its reason. */
struct api_profile_out {
	int err;			/* 0: body holds the answer */
	enum api_profile_reject reject; /* when err */
	char why[512];			/* when err */
	struct ember_buf body;		/* the JSON answer */
};

/* Symbolize and append in (consumed); out->body initialized here (the
 * caller releases it).  In-process: the scraper calls it too. */
void api_profile_store(struct api_profiles *pr, struct api_profile_in *in,
		       struct api_profile_out *out);
/* Whether the request carries a token that may write profiles. */
bool api_profile_auth_ok(const struct api_server *srv, struct MHD_Connection *c);
/* Decode a body (Content-Encoding undone, then raw/gzip/zstd by magic). */
int api_profile_decode(const void *data, size_t len, const char *content_encoding,
		       struct pprof_profile **out, char *why, size_t why_size);
/* POST /api/v1/profiles once the body is whole. */
enum MHD_Result api_profile_ingest(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req);
/* Answer out (consumed) to c. */
enum MHD_Result api_profile_respond(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req, struct api_profile_out *out);

/* ---- Pyroscope's POST /ingest (pyroscope_ingest.c, pyroscope_parse.c) ------- */

#define API_PYROSCOPE_MAX_TAGS 48

/* name=APP{k=v,...}: the tags as labels (pointing into buf), room for the
 * labels the route adds. */
struct api_pyroscope_tags {
	char buf[4096];
	struct pstore_label v[API_PYROSCOPE_MAX_TAGS + 4];
	size_t n;
	char app[512];
};

/* A kind of folded profile, named by APP's suffix. */
struct api_pyroscope_kind {
	const char *suffix;
	const char *name;		/* __name__ */
	const char *type, *unit;	/* its sample type */
	bool timed;			/* counts scaled by the period, cpu:nanoseconds */
};

/* Parse name into t: 0 or -EINVAL with why set. */
int api_pyroscope_name(const char *name, struct api_pyroscope_tags *t, char *why, size_t size);
bool api_pyroscope_has_tag(const struct api_pyroscope_tags *t, const char *name);
/* The kind APP's suffix names (cut from t->app), else units', else CPU. */
const struct api_pyroscope_kind *api_pyroscope_kind(struct api_pyroscope_tags *t,
						    const char *units);
/* A folded (counted) or lines body as a new profile of kind k at rate
 * samples a second into *out: 0 or -EINVAL / -ENOMEM with why set. */
int api_pyroscope_folded(const char *body, size_t len, bool counted,
			 const struct api_pyroscope_kind *k, uint64_t rate,
			 struct pprof_profile **out, char *why, size_t size);

enum MHD_Result api_pyroscope_ingest(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req);

/* ---- reads (profile_query.c, profile_discovery.c) ----------- */

enum MHD_Result api_profile_query(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req);
enum MHD_Result api_profile_diff(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req);
enum MHD_Result api_profile_labels(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req);
enum MHD_Result api_profile_values(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req);
enum MHD_Result api_profile_types(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req);
enum MHD_Result api_profile_series(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req);
enum MHD_Result api_profile_coverage(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req);

/* A store error (err: a negative errno or PSTORE_ERR) answered: its
 * status, api_profile_error_status(err) (400 for what the request got
 * wrong, 413, 429, 500 corrupt, 503 with Retry-After, 507), and the
 * reason, why (pstore_strerror(err) when NULL or empty).  why is only
 * said: it never decides the status. */
enum MHD_Result api_profile_error(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, int err, const char *why);
/* The status of a store error: its pstore_error_kind() through
 * api_status_of_kind(). */
unsigned api_profile_error_status(int err);
/* A text/plain answer of status (one line). */
enum MHD_Result api_profile_text(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req, unsigned status, const char *msg);
/* A 200 answer of type with b's bytes (taken) and extra headers
 * (name/value pairs, NULL-terminated; may be NULL). */
enum MHD_Result api_profile_ok(struct api_server *srv, struct MHD_Connection *c,
			       const struct api_request *req, const char *type,
			       struct ember_buf *b, const char *const *headers);

/* ---- symbolization as the store's resolver (profile_resolver.c) ------------- */

/* A pstore_resolve_fn over the symbolization service (ctx: struct symsvc). */
int api_profile_resolve(void *ctx, const struct pstore_mapping *m, const uint64_t *addrs,
			size_t n, struct pstore_resolution *r);

/* ---- scraping (scrape.c, scrape_http.c) ----------------------------------------- */

/* An HTTP client (libcurl, loaded at the first GET). */
struct api_http;
int api_http_new(struct api_http **out);
void api_http_free(struct api_http *h);
/* GET url into out (whose cap bounds it: -E2BIG), *status the HTTP
 * status; -ECANCELED when *stop was set, -EHOSTUNREACH when the transfer
 * failed, -ENOSYS without libcurl; why says what happened. */
int api_http_get(struct api_http *h, const char *url, long timeout_s, const atomic_bool *stop,
		 struct ember_buf *out, long *status, char *why, size_t why_size);

int api_scrapers_start(struct api_profiles *pr, const char *const *targets, size_t n,
		       struct api_scrapers **out);
void api_scrapers_stop(struct api_scrapers *s);
int api_scrapers_metrics(struct api_scrapers *s, struct ember_buf *b);

#endif /* EMBER_API_PROFILES_H */
