/*
 * profsvc_internal.h - shared between the files of profile-service/ only.
 *
 * One concept a file:
 *   profsvc.c            the service: the store's start and stop, the clock
 *   ingest_pipeline.c    a profile decoded, labelled, symbolized and appended
 *   resolver.c           the symbolization service as the store's resolver
 *   query_answers.c      the answers of a query and a diff
 *   discovery_answers.c  the answers of labels, types, series and coverage
 *   profile_metrics.c    the profile lines of /metrics
 *   scrape.c             the --scrape puller
 *   scrape_http.c        its HTTP GET (ember_httpc)
 */
#ifndef EMBER_PROFSVC_INTERNAL_H
#define EMBER_PROFSVC_INTERNAL_H

#include "profsvc.h"

#include <stdatomic.h>

struct profsvc_scrapers;

struct profsvc {
	struct pstore *store;
	struct symsvc *symbols;		/* borrowed: the owner's */
	uint64_t max_body;		/* bytes of a profile as received */
	int64_t max_age_ns, max_future_ns; /* the window of profile times; -1: none */
	struct profsvc_scrapers *scrapers; /* NULL without --scrape */
	_Atomic uint64_t ingested[PROFSVC_ROUTE_COUNT];
	_Atomic uint64_t rejected[PROFSVC_REJECT_COUNT];
	_Atomic uint64_t samples_resolved, samples_unresolved;
};

/* ---- the answers (query_answers.c, discovery_answers.c) -------------------------------------- */

/* An answer's body initialized under its cap, type application/json. */
void profsvc_answer_init(struct profsvc_answer *a, size_t cap);
/* err of writing an answer, with msg as why when it failed (the store's
 * errors come with their own). */
int profsvc_write_failed(int err, char *why, size_t why_size, const char *msg);

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

int profsvc_scrapers_start(struct profsvc *s, const char *const *targets, size_t n,
			   struct profsvc_scrapers **out);
void profsvc_scrapers_stop(struct profsvc_scrapers *sc);
int profsvc_scrapers_metrics(struct profsvc_scrapers *sc, struct ember_buf *b);

#endif /* EMBER_PROFSVC_INTERNAL_H */
