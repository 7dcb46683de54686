/*
 * backend.c - the store over a durable backend (store.h, "a durable
 * backend"; docs/object-storage-layout.md): writes go to the backend
 * before the local records, and a build ID's candidates are taken from
 * the backend's listing into the local records, which are then its index.
 * The blob fetches are fetch.c's.
 */
#include "store_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_set_backend(struct store *s, const struct store_backend *be)
{
	int err = -EINVAL;

	if (s->has_backend || !be || be->sz < sizeof(*be) || !be->put_blob ||
	    !be->get_blob || !be->put_candidate || !be->list_candidates ||
	    !be->get_candidate || !be->get_names || !be->put_keyed || !be->get_keyed)
		goto fail;
	s->refreshed = calloc(STORE_REFRESH_SLOTS, sizeof(*s->refreshed));
	err = s->refreshed ? ember_hash_key_init(&s->refresh_key) : -ENOMEM;
	if (err)
		goto fail;
	s->be = *be;
	s->has_backend = true;
	return 0;
fail:
	if (!s->has_backend) {
		free(s->refreshed);
		s->refreshed = NULL;
	}
	if (be && be->release)
		be->release(be->ctx);
	return err;
}

void store_backend_release(struct store *s)
{
	if (s->has_backend && s->be.release)
		s->be.release(s->be.ctx);
	free(s->refreshed);
}

void store_get_backend_stats(struct store *s, struct store_backend_stats *out)
{
	struct ember_fcache_stats blobs, derived;

	ember_fcache_stats(s->fcache, s->fcache ? s->cache_blobs_ns : 0, &blobs);
	ember_fcache_stats(s->fcache, s->fcache ? s->cache_derived_ns : 0, &derived);
	*out = (struct store_backend_stats){
		.listings = s->be_listings,
		.fetches = s->be_fetches,
		.fetch_bytes = s->be_fetch_bytes,
		.fetch_waits = s->be_fetch_waits,
		.cache_bytes = blobs.bytes + derived.bytes,
		.cache_evictions = blobs.evictions + derived.evictions,
	};
}

/* ---- the bounded cache of blob files ----------------------------------------- */

int store_set_cache(struct store *s, struct ember_fcache *c)
{
	int blobs, derived;

	if (!s->has_backend || s->fcache || !c)
		return -EINVAL;
	blobs = ember_fcache_add_dir(c, s->blobs_fd, EMBER_FCACHE_FANOUT);
	if (blobs < 0)
		return blobs;
	derived = ember_fcache_add_dir(c, s->derived_fd, EMBER_FCACHE_FANOUT);
	if (derived < 0)
		return derived;
	s->fcache = c;
	s->cache_blobs_ns = blobs;
	s->cache_derived_ns = derived;
	return 0;
}

void store_cache_use(struct store *s, int ns_fd, const char *sha256, uint64_t size,
		     bool written)
{
	int ns = ns_fd == s->derived_fd ? s->cache_derived_ns : s->cache_blobs_ns;
	char name[3 + STORE_SHA256_HEX];

	if (!s->fcache)
		return;
	snprintf(name, sizeof(name), "%.2s/%s", sha256, sha256);
	if (written)
		ember_fcache_written(s->fcache, ns, name, size);
	else
		ember_fcache_used(s->fcache, ns, name);
}

/* ---- writes ---------------------------------------------------------------- */

int store_backend_put_candidate(struct store *s, struct store_blob *b,
				const struct store_artifact *a,
				const char *const *names, size_t n)
{
	int err;

	if (!s->has_backend)
		return 0;
	err = s->be.put_blob(s->be.ctx, a->sha256, store_blob_fd(b), a->size);
	if (!err)
		err = s->be.put_candidate(s->be.ctx, a, names, n);
	return err;
}

static enum store_keyed_class keyed_class(enum store_key_tag tag)
{
	return tag == STORE_TAG_DERIVED ? STORE_KEYED_DERIVED : STORE_KEYED_SOURCE;
}

int store_backend_put_keyed(struct store *s, struct store_blob *b, enum store_key_tag tag,
			    const char *build_id, const char *rest,
			    struct store_artifact *a)
{
	int err;

	if (!s->has_backend)
		return 0;
	err = s->be.put_blob(s->be.ctx, a->sha256, store_blob_fd(b), a->size);
	if (!err)
		err = s->be.put_keyed(s->be.ctx, keyed_class(tag), build_id, rest, a);
	return err;
}

int store_backend_get_keyed(struct store *s, enum store_key_tag tag, const char *build_id,
			    const char *rest, struct store_artifact *out)
{
	return s->be.get_keyed(s->be.ctx, keyed_class(tag), build_id, rest, out);
}

/* ---- a build ID's candidates from the backend -------------------------------- */

static struct store_refresh_slot *slot_of(struct store *s, const char *id)
{
	uint64_t h = ember_hash(&s->refresh_key, id, strlen(id));

	return &s->refreshed[h % STORE_REFRESH_SLOTS];
}

/* Whether build ID id needs no listing now: listed less than refresh_ms
 * ago with a candidate found, or (with one found before) being listed by
 * another thread, whose listing the caller need not wait for.  Otherwise
 * the caller lists, and says so in the slot. */
static bool listed_lately(struct store *s, const char *id)
{
	struct store_refresh_slot *sl;
	bool fresh = false;

	pthread_mutex_lock(&s->refresh_mu);
	sl = slot_of(s, id);
	if (sl->found && strcmp(sl->id, id) == 0) {
		fresh = sl->listing || ember_monotonic_ms() - sl->at_ms < s->be.refresh_ms;
		if (!fresh)
			sl->listing = true;
	}
	pthread_mutex_unlock(&s->refresh_mu);
	return fresh;
}

static void mark_listed(struct store *s, const char *id, uint64_t at_ms, int err, bool found)
{
	struct store_refresh_slot *sl;

	pthread_mutex_lock(&s->refresh_mu);
	sl = slot_of(s, id);
	if (strcmp(sl->id, id) == 0)
		sl->listing = false;
	if (!err) {
		snprintf(sl->id, sizeof(sl->id), "%s", id);
		sl->at_ms = at_ms;
		sl->found = found;
		sl->listing = false;
	}
	pthread_mutex_unlock(&s->refresh_mu);
}

/* A candidate's source names, as the backend lists them. */
struct names {
	char **v;
	size_t n, alloc;
};

static int add_name(void *arg, const char *path)
{
	struct names *nm = arg;
	char *copy;

	if (ember_vec_grow((void **)&nm->v, &nm->alloc, nm->n, sizeof(*nm->v)))
		return -ENOMEM;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	nm->v[nm->n++] = copy;
	return 0;
}

static void names_release(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
}

/* The local record of candidate c, if it says all that c says: true. */
static bool known_locally(struct store *s, const char *id,
			  const struct store_backend_cand *c, int *err)
{
	char key[STORE_KEY_MAX];
	struct store_artifact old;
	char *val;
	size_t vlen;
	int klen = store_key_make(key, STORE_TAG_ARTIFACT, id, c->sha256);
	bool known;

	if (klen < 0) {
		*err = klen;
		return false;
	}
	*err = store_db_get(s, key, (size_t)klen, &val, &vlen);
	if (*err) {
		*err = *err == -ENOENT ? 0 : *err;
		return false;
	}
	known = store_record_decode((const uint8_t *)val, vlen, &old) == 0 &&
		(old.kinds | c->kinds) == old.kinds &&
		(c->origin == STORE_FROM_UPSTREAM || old.origin == STORE_FROM_UPLOAD);
	free(val);
	return known;
}

struct refresh_walk {
	struct store *s;
	const char *id;
	bool found;
};

static int take_candidate(void *arg, const struct store_backend_cand *c)
{
	struct refresh_walk *w = arg;
	struct store *s = w->s;
	struct store_artifact a = { 0 };
	struct names nm = { 0 };
	bool is_new;
	int err;

	w->found = true;
	if (known_locally(s, w->id, c, &err) || err)
		return err;
	err = s->be.get_candidate(s->be.ctx, w->id, c->ref, &a);
	if (!err)
		err = s->be.get_names(s->be.ctx, w->id, c->sha256, add_name, &nm);
	if (!err) {
		snprintf(a.build_id, sizeof(a.build_id), "%s", w->id);
		memcpy(a.sha256, c->sha256, sizeof(a.sha256));
		a.kinds = c->kinds;
		a.origin = c->origin;
		err = store_record_candidate(s, &a, (const char *const *)nm.v, nm.n, NULL,
					     &is_new);
	}
	names_release(&nm);
	return err;
}

int store_backend_refresh(struct store *s, const char *build_id, bool force,
			  bool *listed)
{
	struct refresh_walk w = { s, build_id, false };
	uint64_t at = ember_monotonic_ms();
	int err;

	*listed = false;
	if (!s->has_backend || strlen(build_id) >= STORE_BUILD_ID_HEX)
		return 0;
	if (!force && listed_lately(s, build_id))
		return 0;
	err = store_wait(s); /* local records are written below */
	if (!err)
		err = s->be.list_candidates(s->be.ctx, build_id, take_candidate, &w);
	s->be_listings++;
	mark_listed(s, build_id, at, err, w.found);
	*listed = !err;
	return err;
}
