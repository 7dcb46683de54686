/*
 * tenants.c - one profile store a tenant (X-Scope-OrgID, issue 27): the
 * tenant "anonymous" is the service itself, its store where it always was
 * (DIR, the data directory's profiles/); every other tenant is a service
 * of its own, opened at its first request with its store under
 * DIR/tenants/TENANT (and its blocks where o->tenant_blocks puts them on
 * shared storage), sharing with the others only the symbolization service
 * (build IDs are global) and the service's limits.  Nothing of one
 * tenant's store is reachable from another's service: the isolation is
 * by construction, not by a filter.
 *
 * A tenant's service is held by each request from profsvc_tenant to
 * profsvc_tenant_put.  Its store is closed once no request has held it
 * for o->tenant_idle_ns (15 minutes by default; a thread of the table
 * looks every quarter of that), and opened again by the next request
 * (its log replayed); the service stays, with its counters, until its
 * slot is wanted.  At most max_tenants slots are taken besides
 * anonymous: a new tenant takes a free one, else one whose store is
 * closed (its counters then gone), else it is refused, so a flood of
 * names cannot open a store and a compaction thread each without bound.
 * A read of a tenant that has no store (never written: no directory)
 * opens none: it is answered from one empty store that no one writes,
 * under its own name, taking no slot (on shared storage, where a
 * tenant's blocks may be in the bucket only, a read opens its store).
 *
 * A tenant ID is outside input that names a directory: the rule is
 * Mimir's (at most 150 characters of [a-zA-Z0-9!-_.*'()], not "." or
 * ".."; ember_tenant_valid, common/, which the agent's --tenant is
 * checked by too), which leaves no '/' and no way out of DIR/tenants.
 *
 * A tenant's store is opened outside the table's lock (its log is
 * replayed then): the other tenants' requests go on meanwhile, the
 * tenant's own wait for it.
 */
#include "profsvc_internal.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define DEFAULT_MAX_TENANTS 64
#define DEFAULT_IDLE_NS ((int64_t)15 * 60 * 1000000000)
#define EMPTY_DIR "tenants-empty"	/* under DIR: the empty store's */

/* A tenant's place in the table: its ID from its first request on, its
 * service once open.  While one request opens or the closer closes its
 * store (outside the lock: an open replays the log), the tenant's
 * requests wait, and every other tenant is served. */
struct tenant_slot {
	char id[PROFSVC_TENANT_MAX + 1];	/* "": free (an open that failed) */
	struct profsvc *svc;			/* NULL until first open */
	unsigned users;				/* requests holding svc */
	bool busy;				/* its store opening or closing */
	uint64_t idle_since;			/* monotonic ns, the last put */
};

struct profsvc_tenants {
	pthread_mutex_t lock;
	pthread_cond_t opened;		/* a slot's open or close ended */
	pthread_cond_t wake;		/* the closer's: stop */
	struct profsvc_opts opts;	/* the root's for a tenant's store (no scrape,
					   blocks or files) */
	char *dir;			/* DIR */
	size_t max, n;			/* slots made (open, opening or free) */
	struct tenant_slot *v;		/* [max] */
	int64_t idle_ns;		/* <= 0: never closed */
	pthread_t closer;
	bool closer_started, stop;
	struct pstore *empty;		/* the empty store of reads; NULL until one */
	pthread_mutex_t empty_lock;
};

static int closer_start(struct profsvc_tenants *t);

int profsvc_tenants_init(struct profsvc *s, const struct profsvc_opts *o)
{
	struct profsvc_tenants *t = calloc(1, sizeof(*t));
	int64_t idle = EMBER_OPTS_GET(o, tenant_idle_ns, 0);
	pthread_condattr_t ca;

	snprintf(s->tenant, sizeof(s->tenant), "%s", PROFSVC_TENANT_ANONYMOUS);
	s->root = s;
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->empty_lock, NULL);
	pthread_cond_init(&t->opened, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->wake, &ca);
	pthread_condattr_destroy(&ca);
	s->tenants = t;
	t->max = EMBER_OPTS_GET(o, max_tenants, 0);
	t->max = t->max ? t->max : DEFAULT_MAX_TENANTS;
	t->idle_ns = idle < 0 ? 0 : idle ? idle : DEFAULT_IDLE_NS;
	t->opts = *o;
	t->opts.sz = sizeof(t->opts);
	t->opts.scrape = NULL;
	t->opts.n_scrape = 0;
	t->opts.blocks = NULL;
	t->opts.limits_file = t->opts.rules_file = t->opts.tokens_file = NULL; /* the root's */
	t->dir = strdup(o->dir);
	t->v = calloc(t->max, sizeof(*t->v));
	if (!t->dir || !t->v)
		return -ENOMEM;
	return t->idle_ns ? closer_start(t) : 0;
}

void profsvc_tenants_free(struct profsvc_tenants *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_broadcast(&t->wake);
	pthread_mutex_unlock(&t->lock);
	if (t->closer_started)
		pthread_join(t->closer, NULL);
	for (size_t i = 0; i < t->n; i++)
		profsvc_free(t->v[i].svc);
	pstore_free(t->empty);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->empty_lock);
	pthread_cond_destroy(&t->opened);
	pthread_cond_destroy(&t->wake);
	free(t->v);
	free(t->dir);
	free(t);
}

/* ---- a tenant's store ------------------------------------------------------------ */

/* o for tenant id's store: its directory (made) into dir, its limits,
 * its blocks where tenant_blocks says on shared storage (into *io). */
static int tenant_opts(struct profsvc *root, const char *id, char *dir, size_t dir_size,
		       struct pstore_blockio *io, struct profsvc_opts *o)
{
	struct profsvc_tenants *t = root->tenants;
	int err = 0;

	*o = t->opts;
	if (snprintf(dir, dir_size, "%s/tenants", t->dir) >= (int)dir_size)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		err = -errno;
	snprintf(dir, dir_size, "%s/tenants/%s", t->dir, id); /* fits: id <= 150 */
	o->dir = dir;
	pthread_mutex_lock(&root->limits_lock);
	profsvc_limits_store_opts(root->limits, id, o);
	pthread_mutex_unlock(&root->limits_lock);
	if (!err && t->opts.tenant_blocks) {
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			err = -errno;
		err = err ? err : t->opts.tenant_blocks(t->opts.tenant_blocks_ctx, id, dir, io);
		o->blocks = err ? NULL : io;
	}
	if (err)
		pr_err("profsvc: cannot make the store of tenant '%s' in '%s': %s", id, dir,
		       strerror(-err));
	return err;
}

/* The store of tenant id opened into ts (a new service when *ts is
 * NULL): 0 or the open's error. */
static int tenant_open(struct profsvc *root, const char *id, struct profsvc **ts)
{
	struct profsvc_opts o;
	struct pstore_blockio io;
	struct profsvc *opened;
	char dir[4352];
	int err = tenant_opts(root, id, dir, sizeof(dir), &io, &o);

	if (err)
		return err;
	if (*ts)
		return profsvc_store_open(*ts, &o);
	err = profsvc_open(root->symbols, &o, &opened);
	if (!err) {
		opened->root = root;
		snprintf(opened->tenant, sizeof(opened->tenant), "%s", id);
		*ts = opened;
	}
	return err;
}

/* Whether tenant id has a store to read: its directory, or shared
 * storage (its blocks may be in the bucket only). */
static bool tenant_stored(const struct profsvc_tenants *t, const char *id)
{
	char dir[4352];
	struct stat st;

	if (t->opts.tenant_blocks)
		return true;
	snprintf(dir, sizeof(dir), "%s/tenants/%s", t->dir, id);
	return stat(dir, &st) == 0 || errno != ENOENT;
}

/* The empty store (opened at its first need, then kept): 0 or its
 * open's error. */
static int empty_store(struct profsvc *root, struct pstore **out)
{
	struct profsvc_tenants *t = root->tenants;
	struct profsvc_opts o = t->opts;
	struct profsvc *tmp;
	char dir[4352];
	int err = 0;

	pthread_mutex_lock(&t->empty_lock);
	if (!t->empty) {
		snprintf(dir, sizeof(dir), "%s/" EMPTY_DIR, t->dir);
		o.dir = dir;
		err = profsvc_open(root->symbols, &o, &tmp);
		if (!err) {
			t->empty = tmp->store; /* the store taken, the service freed */
			tmp->store = NULL;
			profsvc_free(tmp);
		}
	}
	*out = t->empty;
	pthread_mutex_unlock(&t->empty_lock);
	return err;
}

/* A service of tenant id on the empty store, held by its one request
 * (profsvc_tenant_put frees it). */
static int tenant_empty(struct profsvc *root, const char *id, struct profsvc **out)
{
	struct profsvc *e = calloc(1, sizeof(*e));
	int err = e ? empty_store(root, &e->store) : -ENOMEM;

	if (err) {
		free(e);
		return err;
	}
	e->root = root;
	e->empty = true;
	e->symbols = root->symbols;
	e->max_body = root->max_body;
	e->max_age_ns = root->max_age_ns;
	e->max_future_ns = root->max_future_ns;
	pthread_mutex_init(&e->bucket_lock, NULL);
	pthread_mutex_init(&e->limits_lock, NULL);
	snprintf(e->tenant, sizeof(e->tenant), "%s", id);
	*out = e;
	return 0;
}

/* ---- the table ------------------------------------------------------------------ */

static struct tenant_slot *slot_find(struct profsvc_tenants *t, const char *id)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].id, id))
			return &t->v[i];
	return NULL;
}

/* A slot for a new tenant: a free one, else the next, else one whose
 * store is closed and that no request holds (its service freed); NULL
 * when every slot's store is open.  Lock held. */
static struct tenant_slot *slot_new(struct profsvc_tenants *t, const char *id)
{
	struct tenant_slot *sl = slot_find(t, "");

	if (!sl && t->n < t->max)
		sl = &t->v[t->n++];
	for (size_t i = 0; !sl && i < t->n; i++)
		if (!t->v[i].users && !t->v[i].busy && t->v[i].svc && !t->v[i].svc->store)
			sl = &t->v[i];
	if (!sl)
		return NULL;
	profsvc_free(sl->svc); /* store closed: no log replayed, nothing waited for */
	*sl = (struct tenant_slot){ .svc = NULL };
	snprintf(sl->id, sizeof(sl->id), "%s", id);
	return sl;
}

/* id's slot once no open or close of it is under way, or NULL.  Lock held. */
static struct tenant_slot *slot_settled(struct profsvc_tenants *t, const char *id)
{
	struct tenant_slot *sl;

	while ((sl = slot_find(t, id)) && sl->busy)
		pthread_cond_wait(&t->opened, &t->lock);
	return sl;
}

/* sl's store opened outside the lock (sl busy and held meanwhile): 0 or
 * the open's error (a slot that never had a store freed).  Lock held. */
static int slot_open(struct profsvc *root, struct tenant_slot *sl, const char *id)
{
	struct profsvc_tenants *t = root->tenants;
	struct profsvc *ts = sl->svc;
	int err;

	sl->busy = true;
	sl->users++;
	pthread_mutex_unlock(&t->lock);
	err = tenant_open(root, id, &ts);
	pthread_mutex_lock(&t->lock);
	sl->busy = false;
	if (err) {
		sl->users--;
		if (!sl->svc)
			sl->id[0] = '\0'; /* the next request tries again */
	}
	sl->svc = err ? sl->svc : ts;
	pthread_cond_broadcast(&t->opened);
	return err;
}

int profsvc_tenant(struct profsvc *s, const char *id, unsigned flags, struct profsvc **out)
{
	struct profsvc *root = s->root;
	struct profsvc_tenants *t = root->tenants;
	struct tenant_slot *sl;
	int err = 0;

	if (!ember_tenant_valid(id))
		return -EINVAL;
	if (!strcmp(id, PROFSVC_TENANT_ANONYMOUS)) {
		*out = root;
		return 0;
	}
	pthread_mutex_lock(&t->lock);
	sl = slot_settled(t, id);
	if (!sl && !(flags & PROFSVC_TENANT_CREATE) && !tenant_stored(t, id)) {
		pthread_mutex_unlock(&t->lock);
		return tenant_empty(root, id, out);
	}
	sl = sl ? sl : slot_new(t, id);
	if (!sl)
		err = -EUSERS;
	else if (sl->svc && sl->svc->store)
		sl->users++;
	else
		err = slot_open(root, sl, id);
	if (!err)
		*out = sl->svc;
	pthread_mutex_unlock(&t->lock);
	if (!err && profsvc_arrivals_catch_up(*out))
		pr_warn("profsvc: tenant '%s': cannot hear of the symbols that arrived while its "
			"store was closed: out of memory", id);
	return err;
}

/* ts's hold let go; touch: as a request's, its idle time from now. */
static void tenant_release(struct profsvc *ts, bool touch)
{
	struct profsvc_tenants *t;

	if (!ts || ts == ts->root)
		return;
	if (ts->empty) {
		ts->store = NULL; /* the table's */
		profsvc_free(ts);
		return;
	}
	t = ts->root->tenants;
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].svc == ts) {
			assert(t->v[i].users > 0);
			t->v[i].users--;
			if (touch)
				t->v[i].idle_since = ember_monotonic_ns();
		}
	pthread_mutex_unlock(&t->lock);
}

void profsvc_tenant_put(struct profsvc *ts)
{
	tenant_release(ts, true);
}

const char *profsvc_tenant_id(const struct profsvc *s)
{
	return s->tenant;
}

size_t profsvc_tenants_open(struct profsvc *s, struct profsvc **out, size_t max,
			    size_t *cursor, enum profsvc_tenants_which which)
{
	struct profsvc_tenants *t = s->root->tenants;
	size_t n = 0;

	if (!*cursor && max) {
		out[n++] = s->root;
		++*cursor;
	}
	pthread_mutex_lock(&t->lock);
	for (; *cursor - 1 < t->n && n < max; ++*cursor) {
		struct tenant_slot *sl = &t->v[*cursor - 1];

		if (!sl->svc || (which == PROFSVC_TENANTS_STORES && (sl->busy || !sl->svc->store)))
			continue; /* a service being closed or opened still counts */
		sl->users++;
		out[n++] = sl->svc;
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

void profsvc_tenants_put(struct profsvc **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tenant_release(v[i], false);
}

void profsvc_tenants_retune(struct profsvc *root)
{
	struct profsvc *v[PROFSVC_TENANTS_BATCH];
	size_t cursor = 0, n;

	if (!root->tenants)
		return; /* the start: each store takes its limits at its open */
	while ((n = profsvc_tenants_open(root, v, PROFSVC_TENANTS_BATCH, &cursor,
					 PROFSVC_TENANTS_STORES))) {
		for (size_t i = 0; i < n; i++) {
			struct profsvc_opts o = root->tenants->opts;

			pthread_mutex_lock(&root->limits_lock);
			profsvc_limits_store_opts(root->limits, v[i]->tenant, &o);
			pthread_mutex_unlock(&root->limits_lock);
			pstore_retune(v[i]->store, &(struct pstore_retune){
				.sz = sizeof(struct pstore_retune), .retention_ns = o.retention_ns,
				.rollup_retention_ns = o.rollup_retention_ns,
				.max_series = o.max_series });
		}
		profsvc_tenants_put(v, n);
	}
}

/* ---- closing idle stores ------------------------------------------------------------- */

/* The store of one slot idle past t->idle_ns closed (the lock let go
 * meanwhile): true when one was, false when none is idle.  Lock held. */
static bool close_one_idle(struct profsvc_tenants *t)
{
	uint64_t now = ember_monotonic_ns();
	struct pstore *store;

	for (size_t i = 0; i < t->n; i++) {
		struct tenant_slot *sl = &t->v[i];

		if (sl->users || sl->busy || !sl->svc || !sl->svc->store ||
		    now - sl->idle_since < (uint64_t)t->idle_ns)
			continue;
		sl->busy = true;
		store = sl->svc->store;
		sl->svc->store = NULL;
		pthread_mutex_unlock(&t->lock);
		pstore_free(store);
		pr_info("profsvc: tenant '%s' idle: its store closed until its next request",
			sl->id);
		pthread_mutex_lock(&t->lock);
		sl->busy = false;
		pthread_cond_broadcast(&t->opened);
		return true;
	}
	return false;
}

static void *closer_main(void *arg)
{
	struct profsvc_tenants *t = arg;
	int64_t tick = t->idle_ns / 4;
	struct timespec at;

	pthread_mutex_lock(&t->lock);
	while (!t->stop) {
		while (!t->stop && close_one_idle(t))
			;
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec += tick / 1000000000 + (at.tv_nsec + tick % 1000000000) / 1000000000;
		at.tv_nsec = (at.tv_nsec + tick % 1000000000) % 1000000000;
		if (!t->stop)
			pthread_cond_timedwait(&t->wake, &t->lock, &at);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static int closer_start(struct profsvc_tenants *t)
{
	int err = pthread_create(&t->closer, NULL, closer_main, t);

	t->closer_started = !err;
	return -err;
}
