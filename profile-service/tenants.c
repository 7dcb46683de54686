/*
 * tenants.c - one profile store a tenant (X-Scope-OrgID, issue 27): the
 * tenant "anonymous" is the service itself, its store where it always was
 * (DIR, the data directory's profiles/); every other tenant is a service
 * of its own, opened at its first request with its store under
 * DIR/tenants/TENANT (and its blocks where o->tenant_blocks puts them on
 * shared storage), sharing with the others only the symbolization service
 * (build IDs are global) and the service's limits.  Nothing of one
 * tenant's store is reachable from another's service: the isolation is
 * by construction, not by a filter.  A tenant opened stays open until the
 * service is freed (a borrowed pointer stays valid that long); at most
 * max_tenants are open besides anonymous, so a flood of names cannot open
 * a store and a compaction thread each without bound.
 *
 * A tenant ID is outside input that names a directory: the rule is
 * Mimir's (at most 150 characters of [a-zA-Z0-9!-_.*'()], not "." or
 * ".."), which leaves no '/' and no way out of DIR/tenants.
 *
 * A tenant's store is opened outside the table's lock (its log is
 * replayed then): the other tenants' requests go on meanwhile, the
 * tenant's own wait for it.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEFAULT_MAX_TENANTS 64

/* A tenant's place in the table: its ID from its first request on, its
 * service once open.  While one request opens it (outside the lock: a
 * store's open replays its log), the tenant's other requests wait for
 * it, and every other tenant is served. */
struct tenant_slot {
	char id[PROFSVC_TENANT_MAX + 1];	/* "": free (an open that failed) */
	struct profsvc *svc;			/* NULL while opening */
};

struct profsvc_tenants {
	pthread_mutex_t lock;
	pthread_cond_t opened;		/* a slot's open ended */
	struct profsvc_opts opts;	/* the root's for a tenant's store (no scrape,
					   blocks or limits) */
	char *dir;			/* DIR */
	size_t max, n;			/* slots made (open, opening or free) */
	struct tenant_slot *v;		/* [max] */
};

static bool tenant_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       strchr("!-_.*'()", ch) != NULL;
}

bool profsvc_tenant_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (!n || n > PROFSVC_TENANT_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!tenant_char(id[i]))
			return false;
	return true;
}

int profsvc_tenants_init(struct profsvc *s, const struct profsvc_opts *o)
{
	struct profsvc_tenants *t = calloc(1, sizeof(*t));

	snprintf(s->tenant, sizeof(s->tenant), "%s", PROFSVC_TENANT_ANONYMOUS);
	s->root = s;
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->opened, NULL);
	s->tenants = t;
	t->max = EMBER_OPTS_GET(o, max_tenants, 0);
	t->max = t->max ? t->max : DEFAULT_MAX_TENANTS;
	t->opts = *o;
	t->opts.sz = sizeof(t->opts);
	t->opts.scrape = NULL;
	t->opts.n_scrape = 0;
	t->opts.blocks = NULL;
	t->opts.limits_file = t->opts.rules_file = t->opts.tokens_file = NULL; /* the root's */
	t->dir = strdup(o->dir);
	t->v = calloc(t->max, sizeof(*t->v));
	return !t->dir || !t->v ? -ENOMEM : 0;
}

void profsvc_tenants_free(struct profsvc_tenants *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		profsvc_free(t->v[i].svc);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->opened);
	free(t->v);
	free(t->dir);
	free(t);
}

/* The tenant id's store opened into a new service (its blocks where
 * tenant_blocks says on shared storage): 0 or the open's error. */
static int tenant_open(struct profsvc *root, const char *id, struct profsvc **out)
{
	struct profsvc_tenants *t = root->tenants;
	struct profsvc_opts o = t->opts;
	struct pstore_blockio io;
	char dir[4352];
	int err = 0;

	if (snprintf(dir, sizeof(dir), "%s/tenants", t->dir) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		err = -errno;
	snprintf(dir, sizeof(dir), "%s/tenants/%s", t->dir, id); /* fits: id <= 150 */
	o.dir = dir;
	pthread_mutex_lock(&root->limits_lock);
	profsvc_limits_store_opts(root->limits, id, &o);
	pthread_mutex_unlock(&root->limits_lock);
	if (!err && t->opts.tenant_blocks) {
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			err = -errno;
		err = err ? err : t->opts.tenant_blocks(t->opts.tenant_blocks_ctx, id, dir, &io);
		o.blocks = err ? NULL : &io;
	}
	if (err) {
		pr_err("profsvc: cannot make the store of tenant '%s' in '%s': %s", id, dir,
		       strerror(-err));
		return err;
	}
	err = profsvc_open(root->symbols, &o, out);
	if (!err) {
		(*out)->root = root;
		snprintf((*out)->tenant, sizeof((*out)->tenant), "%s", id);
	}
	return err;
}

static struct tenant_slot *slot_find(struct profsvc_tenants *t, const char *id)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].id, id))
			return &t->v[i];
	return NULL;
}

/* A slot for a new tenant: a free one, else the next; NULL at max. */
static struct tenant_slot *slot_new(struct profsvc_tenants *t, const char *id)
{
	struct tenant_slot *sl = slot_find(t, "");

	if (!sl && t->n < t->max)
		sl = &t->v[t->n++];
	if (sl)
		snprintf(sl->id, sizeof(sl->id), "%s", id);
	return sl;
}

/* id's slot once open, or NULL when it has none (an open that failed
 * freed it meanwhile): another request's open waited for.  Lock held. */
static struct tenant_slot *slot_open(struct profsvc_tenants *t, const char *id)
{
	struct tenant_slot *sl;

	while ((sl = slot_find(t, id)) && !sl->svc)
		pthread_cond_wait(&t->opened, &t->lock);
	return sl;
}

int profsvc_tenant(struct profsvc *s, const char *id, struct profsvc **out)
{
	struct profsvc_tenants *t = s->root->tenants;
	struct tenant_slot *sl;
	struct profsvc *ts = NULL;
	int err;

	if (!profsvc_tenant_valid(id))
		return -EINVAL;
	if (!strcmp(id, PROFSVC_TENANT_ANONYMOUS)) {
		*out = s->root;
		return 0;
	}
	pthread_mutex_lock(&t->lock);
	sl = slot_open(t, id);
	ts = sl ? sl->svc : NULL;
	sl = sl ? NULL : slot_new(t, id);
	pthread_mutex_unlock(&t->lock);
	if (ts) {
		*out = ts;
		return 0;
	}
	if (!sl)
		return -EUSERS;
	err = tenant_open(s->root, id, &ts); /* outside the lock */
	pthread_mutex_lock(&t->lock);
	if (err)
		sl->id[0] = '\0'; /* the next request tries again */
	else
		sl->svc = ts;
	pthread_cond_broadcast(&t->opened);
	pthread_mutex_unlock(&t->lock);
	if (!err)
		*out = ts;
	return err;
}

const char *profsvc_tenant_id(const struct profsvc *s)
{
	return s->tenant;
}

size_t profsvc_tenants_open(struct profsvc *s, struct profsvc **out, size_t max,
			    size_t *cursor)
{
	struct profsvc_tenants *t = s->root->tenants;
	size_t n = 0;

	if (!*cursor && max) {
		out[n++] = s->root;
		++*cursor;
	}
	pthread_mutex_lock(&t->lock);
	for (; *cursor - 1 < t->n && n < max; ++*cursor)
		if (t->v[*cursor - 1].svc)
			out[n++] = t->v[*cursor - 1].svc;
	pthread_mutex_unlock(&t->lock);
	return n;
}
