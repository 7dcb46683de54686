/*
 * profsvc.c - the profile store's life in the service: opened under the
 * data directory when the service starts (its log replayed), with the
 * symbolization service as the resolver of its compactions
 * (profsvc_resolve), the scrapers started beside it; stopped after the
 * last request.  Uploads and upstream fetches tell it when a build ID's
 * debug info arrives, so that the stored frames of that build ID are
 * resolved (reresolve.c in profile-store/), in every tenant's store
 * (tenants.c: a tenant's service is opened by profsvc_open, the root's
 * by profsvc_new, which adds the tenant table and the scrapers).
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#define DEFAULT_MAX_BODY ((uint64_t)16 << 20)
#define DEFAULT_MAX_AGE (3600 * (int64_t)1000000000)	/* Pyroscope's defaults */
#define DEFAULT_MAX_FUTURE (600 * (int64_t)1000000000)

/* A window option: 0 the default, negative none (-1). */
static int64_t window_of(int64_t v, int64_t dflt)
{
	return v < 0 ? -1 : v ? v : dflt;
}

static int open_store(struct profsvc *s, const struct profsvc_opts *o)
{
	struct pstore_opts po = {
		.sz = sizeof(po),
		.retention_ns = o->retention_ns,
		.rollup_retention_ns = o->rollup_retention_ns,
		.head_max_age_ns = o->head_age_ns,
		.blocks = o->blocks,
		.shared = o->blocks != NULL,
		.refresh_ns = o->refresh_ns,
		.lease_expiry_ns = o->lease_expiry_ns,
		.resolver = profsvc_resolve,
		.resolver_ctx = s->symbols,
		.limits = { .sz = sizeof(po.limits), .max_profile_bytes = s->max_body,
			    .max_series = o->max_series },
	};
	char why[512];
	int err = pstore_open(o->dir, &po, &s->store, why, sizeof(why));

	if (err)
		pr_err("profsvc: cannot open the profile store in '%s': %s", o->dir,
		       why[0] ? why : pstore_strerror(err));
	return err;
}

/* A service without its store yet (NULL; -ENOMEM), a root until told
 * otherwise. */
static struct profsvc *svc_alloc(struct symsvc *symbols, const struct profsvc_opts *o)
{
	struct profsvc *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->root = s;
	pthread_mutex_init(&s->bucket_lock, NULL);
	pthread_mutex_init(&s->limits_lock, NULL);
	s->symbols = symbols;
	s->max_body = o->max_profile_bytes ? o->max_profile_bytes : DEFAULT_MAX_BODY;
	s->max_age_ns = window_of(EMBER_OPTS_GET(o, max_age_ns, 0), DEFAULT_MAX_AGE);
	s->max_future_ns = window_of(EMBER_OPTS_GET(o, max_future_ns, 0), DEFAULT_MAX_FUTURE);
	return s;
}

int profsvc_store_open(struct profsvc *s, const struct profsvc_opts *o)
{
	return open_store(s, o);
}

/* o's blocks released: the store that would have owned them is not opened. */
static void blocks_release(const struct profsvc_opts *o)
{
	if (o->blocks && o->blocks->release)
		o->blocks->release(o->blocks->ctx);
}

int profsvc_open(struct symsvc *symbols, const struct profsvc_opts *o, struct profsvc **out)
{
	struct profsvc *s = svc_alloc(symbols, o);
	int err;

	if (!s) {
		blocks_release(o);
		return -ENOMEM;
	}
	err = open_store(s, o);
	if (err) {
		profsvc_free(s);
		return err;
	}
	*out = s;
	return 0;
}

int profsvc_new(struct symsvc *symbols, const struct profsvc_opts *o, struct profsvc **out)
{
	struct profsvc_opts ro = *o;
	struct profsvc *s = svc_alloc(symbols, o);
	int err = s ? profsvc_files_init(s, o) : -ENOMEM;

	if (err) {
		blocks_release(o);
		profsvc_free(s);
		return err;
	}
	ro.sz = sizeof(ro);
	profsvc_limits_store_opts(s->limits, PROFSVC_TENANT_ANONYMOUS, &ro);
	err = profsvc_arrivals_init(s);
	err = err ? err : open_store(s, &ro);
	err = err ? err : profsvc_tenants_init(s, o);
	if (!err && o->n_scrape)
		err = profsvc_scrapers_start(s, o, &s->scrapers);
	if (err) {
		profsvc_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void profsvc_free(struct profsvc *s)
{
	if (!s)
		return;
	profsvc_scrapers_stop(s->scrapers);
	profsvc_tenants_free(s->tenants);
	pstore_free(s->store);
	profsvc_limits_table_free(s->limits);
	profsvc_rules_free(s->rules);
	profsvc_files_release(s);
	profsvc_arrivals_free(s);
	pthread_mutex_destroy(&s->bucket_lock);
	pthread_mutex_destroy(&s->limits_lock);
	free(s);
}

struct pstore *profsvc_store(struct profsvc *s)
{
	return s->store;
}

uint64_t profsvc_max_body(const struct profsvc *s)
{
	return s->max_body;
}

void profsvc_store_symbols_arrived(struct profsvc *s, const char *build_id)
{
	if (pstore_symbols_arrived(s->store, build_id))
		pr_warn("profsvc: profile store of tenant '%s': cannot note the symbols of '%s'",
			s->tenant, build_id);
	profsvc_file_ids_arrived(s, build_id);
}

void profsvc_symbols_arrived(struct profsvc *s, const char *build_id)
{
	struct profsvc *v[PROFSVC_TENANTS_BATCH];
	size_t cursor = 0, n;

	if (profsvc_arrivals_note(s->root, build_id)) /* first: an open to come hears of it */
		pr_warn("profsvc: cannot remember the symbols of '%s' for closed tenants: out "
			"of memory", build_id);
	while ((n = profsvc_tenants_open(s, v, PROFSVC_TENANTS_BATCH, &cursor,
					 PROFSVC_TENANTS_STORES))) {
		for (size_t i = 0; i < n; i++)
			profsvc_store_symbols_arrived(v[i], build_id);
		profsvc_tenants_put(v, n);
	}
}

int64_t profsvc_now_ns(void)
{
	return (int64_t)ember_realtime_ns();
}
