/*
 * arrivals.c - the build IDs whose symbols arrived (an upload, a fetch
 * from upstream), remembered by the root: a tenant's store hears of an
 * arrival at once when it is open (profsvc_symbols_arrived), but one that
 * was closed for being idle (tenants.c), or not yet opened since the
 * server started, would never hear of it, and its stored frames of that
 * build ID would stay unresolved in its blocks (a query still resolves
 * them each time; its coverage would not).  So every tenant's service
 * notes how many arrivals it has heard of, and each request of the
 * tenant first catches up on the ones it missed (profsvc_arrivals_catch_up),
 * the newest PROFSVC_ARRIVALS_KEPT of them.  Hearing of one twice is
 * harmless: the store keeps an arrival once (reresolve.c).
 */
#include "profsvc_internal.h"

#include <stdlib.h>
#include <string.h>

struct profsvc_arrivals {
	pthread_mutex_t mu;
	uint64_t n;				/* arrivals so far */
	char *ids[PROFSVC_ARRIVALS_KEPT];	/* arrival i at i % KEPT, the newest kept */
};

int profsvc_arrivals_init(struct profsvc *root)
{
	root->arrivals = calloc(1, sizeof(*root->arrivals));
	if (!root->arrivals)
		return -ENOMEM;
	pthread_mutex_init(&root->arrivals->mu, NULL);
	return 0;
}

void profsvc_arrivals_free(struct profsvc *root)
{
	struct profsvc_arrivals *a = root->arrivals;

	if (!a)
		return;
	for (size_t i = 0; i < PROFSVC_ARRIVALS_KEPT; i++)
		free(a->ids[i]);
	pthread_mutex_destroy(&a->mu);
	free(a);
	root->arrivals = NULL;
}

int profsvc_arrivals_note(struct profsvc *root, const char *build_id)
{
	struct profsvc_arrivals *a = root->arrivals;
	char *id;

	if (!a)
		return 0; /* a service of its own (profsvc_open): no tenants to tell */
	if (!(id = strdup(build_id)))
		return -ENOMEM;
	pthread_mutex_lock(&a->mu);
	free(a->ids[a->n % PROFSVC_ARRIVALS_KEPT]);
	a->ids[a->n % PROFSVC_ARRIVALS_KEPT] = id;
	a->n++;
	pthread_mutex_unlock(&a->mu);
	return 0;
}

/* The arrivals ts has not heard of (copies, *n of them; the oldest past
 * the kept ones are gone) into *out, ts then counted as having heard of
 * them all. */
static int missed(struct profsvc *ts, char ***out, size_t *n)
{
	struct profsvc_arrivals *a = ts->root->arrivals;
	uint64_t from;
	char **v = NULL;
	int err = 0;

	*n = 0;
	pthread_mutex_lock(&a->mu);
	from = a->n - ts->arrivals_heard > PROFSVC_ARRIVALS_KEPT ? a->n - PROFSVC_ARRIVALS_KEPT
								   : ts->arrivals_heard;
	if (from < a->n && !(v = calloc((size_t)(a->n - from), sizeof(*v))))
		err = -ENOMEM;
	for (uint64_t i = from; !err && i < a->n; i++)
		if (!(v[(*n)++] = strdup(a->ids[i % PROFSVC_ARRIVALS_KEPT])))
			err = -ENOMEM;
	if (!err)
		ts->arrivals_heard = a->n;
	pthread_mutex_unlock(&a->mu);
	*out = v;
	return err;
}

int profsvc_arrivals_catch_up(struct profsvc *ts)
{
	char **v = NULL;
	size_t n = 0;
	int err;

	if (ts == ts->root || !ts->store || !ts->root->arrivals)
		return 0; /* the root is always open; the empty store keeps nothing */
	err = missed(ts, &v, &n);
	for (size_t i = 0; i < n; i++) {
		if (!err && v[i])
			profsvc_store_symbols_arrived(ts, v[i]);
		free(v[i]);
	}
	free(v);
	return err;
}
