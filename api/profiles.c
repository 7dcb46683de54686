/*
 * profiles.c - the profile store's life in the server: opened under the
 * data directory when the server starts (its log replayed), with the
 * symbolization service as the resolver of its compactions, the scrapers
 * started beside it; stopped after the last request.  Uploads and
 * upstream fetches tell it when a build ID's debug info arrives, so that
 * the stored frames of that build ID are resolved (reresolve.c in
 * profile-store/).
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_BODY ((uint64_t)16 << 20)

static int open_store(struct api_profiles *pr, const struct api_profile_opts *o)
{
	struct pstore_opts po = {
		.sz = sizeof(po),
		.retention_ns = o->retention_ns,
		.head_max_age_ns = o->head_age_ns,
		.blocks = o->blocks,
		.shared = o->blocks != NULL,
		.refresh_ns = o->refresh_ns,
		.lease_expiry_ns = o->lease_expiry_ns,
		.resolver = api_profile_resolve,
		.resolver_ctx = pr->symbols,
		.limits = { .sz = sizeof(po.limits), .max_profile_bytes = pr->max_body,
			    .max_series = o->max_series },
	};
	char why[512];
	int err = pstore_open(o->dir, &po, &pr->store, why, sizeof(why));

	if (err)
		pr_err("api: cannot open the profile store in '%s': %s", o->dir,
		       why[0] ? why : pstore_strerror(err));
	return err;
}

/* The store was not opened: the block storage it would own. */
static void release_blocks(const struct api_profile_opts *o)
{
	if (o->blocks && o->blocks->release)
		o->blocks->release(o->blocks->ctx);
}

int api_profiles_start(struct api_server *srv, const struct api_profile_opts *o)
{
	struct api_profiles *pr;
	int err;

	if (!o || !o->dir)
		return 0;
	pr = calloc(1, sizeof(*pr));
	if (!pr) {
		release_blocks(o);
		return -ENOMEM;
	}
	pr->symbols = srv->symbols;
	pr->max_body = o->max_profile_bytes ? o->max_profile_bytes : DEFAULT_MAX_BODY;
	if (o->ingest_token && strlen(o->ingest_token) >= sizeof(pr->ingest_token)) {
		release_blocks(o);
		free(pr);
		return -EINVAL;
	}
	snprintf(pr->ingest_token, sizeof(pr->ingest_token), "%s",
		 o->ingest_token ? o->ingest_token : "");
	err = open_store(pr, o);
	if (!err && o->n_scrape)
		err = api_scrapers_start(pr, o->scrape, o->n_scrape, &pr->scrapers);
	srv->profiles = pr;
	if (err)
		api_profiles_stop(srv);
	return err;
}

void api_profiles_stop(struct api_server *srv)
{
	struct api_profiles *pr = srv->profiles;

	if (!pr)
		return;
	api_scrapers_stop(pr->scrapers);
	pstore_free(pr->store);
	free(pr);
	srv->profiles = NULL;
}

void api_profiles_symbols_arrived(struct api_server *srv, const char *build_id)
{
	if (srv->profiles && pstore_symbols_arrived(srv->profiles->store, build_id))
		pr_warn("api: profile store: cannot note the symbols of '%s'", build_id);
}
