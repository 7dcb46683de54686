/*
 * unbounded.c - labels that look unbounded: request IDs, user IDs, span
 * IDs put a new value in most profiles and make a series of each.  Per
 * label name the store remembers the values seen (hashes, from the
 * blocks at open and every append since) and, over the last 128 profiles
 * carrying the name, how many brought a value never seen before; a name
 * with more than half of them new, and at least 256 values in all, is
 * reported (pstore_warnings, the stats, and one warning in the log).  The
 * second condition keeps a fleet of pods that each send their first
 * profile from looking unbounded: its values stop being new once every
 * pod has been seen, a request ID's never do.
 * Bounded: at most 1,024 names, 100,000 values a name and 1,000,000 in
 * all are remembered.
 */
#include "pstore_series.h"

#include <stdio.h>

#define WINDOW 128
#define MIN_VALUES 256
#define MAX_NAMES 1024
#define MAX_VALUES 100000
#define MAX_TOTAL 1000000 /* hashes remembered in all: 8 MB */

struct uname {
	char *name;
	uint64_t *vals; /* open addressing; 0 = free (hashes are made non-zero) */
	size_t mask, nvals;
	uint8_t ring[WINDOW]; /* 1: the profile brought a new value */
	unsigned pos, seen, fresh;
	bool flagged, warned;
};

struct pstore_unbounded {
	pthread_mutex_t mu;
	struct ember_hash_key key; /* values' hashes: none can be aimed at another */
	size_t total; /* values remembered, all names */
	EMBER_VEC(struct uname) names;
};

struct pstore_unbounded *pstore_unbounded_new(void)
{
	struct pstore_unbounded *u = calloc(1, sizeof(*u));

	if (u && ember_hash_key_init(&u->key)) {
		free(u);
		return NULL;
	}
	if (u)
		pthread_mutex_init(&u->mu, NULL);
	return u;
}

void pstore_unbounded_free(struct pstore_unbounded *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->names.n; i++) {
		free(u->names.v[i].name);
		free(u->names.v[i].vals);
	}
	EMBER_VEC_FREE(&u->names);
	pthread_mutex_destroy(&u->mu);
	free(u);
}

static struct uname *find_name(struct pstore_unbounded *u, const char *name)
{
	struct uname n = { 0 };

	for (size_t i = 0; i < u->names.n; i++)
		if (strcmp(u->names.v[i].name, name) == 0)
			return &u->names.v[i];
	if (u->names.n >= MAX_NAMES || !(n.name = strdup(name)))
		return NULL;
	if (EMBER_VEC_APPEND(&u->names, n)) {
		free(n.name);
		return NULL;
	}
	return &u->names.v[u->names.n - 1];
}

static bool grow_vals(struct uname *n)
{
	size_t size = n->mask ? 2 * (n->mask + 1) : 64;
	uint64_t *v = calloc(size, sizeof(*v));

	if (!v)
		return false;
	for (size_t i = 0; n->mask && i <= n->mask; i++) {
		size_t j = n->vals[i] & (size - 1);

		if (!n->vals[i])
			continue;
		while (v[j])
			j = (j + 1) & (size - 1);
		v[j] = n->vals[i];
	}
	free(n->vals);
	n->vals = v;
	n->mask = size - 1;
	return true;
}

/* Remember value; true when it was not known. */
static bool add_value(struct pstore_unbounded *u, struct uname *n, const char *value)
{
	uint64_t h = ember_hash(&u->key, value, strlen(value)) | 1;
	size_t i;

	if (n->mask)
		for (i = h & n->mask; n->vals[i]; i = (i + 1) & n->mask)
			if (n->vals[i] == h)
				return false;
	if (n->nvals >= MAX_VALUES || u->total >= MAX_TOTAL)
		return true; /* new, but no longer remembered */
	if ((!n->mask || 2 * (n->nvals + 1) > n->mask + 1) && !grow_vals(n))
		return true;
	for (i = h & n->mask; n->vals[i]; i = (i + 1) & n->mask)
		;
	n->vals[i] = h;
	n->nvals++;
	u->total++;
	return true;
}

static void note(struct uname *n, bool fresh)
{
	if (n->seen == WINDOW)
		n->fresh -= n->ring[n->pos];
	else
		n->seen++;
	n->ring[n->pos] = fresh;
	n->fresh += fresh;
	n->pos = (n->pos + 1) % WINDOW;
	n->flagged = n->seen == WINDOW && 2 * n->fresh > n->seen && n->nvals >= MIN_VALUES;
	if (n->flagged && !n->warned) {
		n->warned = true;
		pr_warn("pstore: label '%s' looks unbounded: a new value in %u of the last %u "
			"profiles (each value makes a series)", n->name, n->fresh, n->seen);
	}
}

void pstore_unbounded_observe(struct pstore_unbounded *u, const struct pstore_label *labels,
			      size_t n)
{
	pthread_mutex_lock(&u->mu);
	for (size_t i = 0; i < n; i++) {
		struct uname *un = find_name(u, labels[i].name);

		if (un)
			note(un, add_value(u, un, labels[i].value));
	}
	pthread_mutex_unlock(&u->mu);
}

void pstore_unbounded_seed(struct pstore_unbounded *u, const char *name, const char *value)
{
	struct uname *un;

	pthread_mutex_lock(&u->mu);
	un = find_name(u, name);
	if (un)
		add_value(u, un, value);
	pthread_mutex_unlock(&u->mu);
}

int pstore_unbounded_list(struct pstore_unbounded *u, struct pstore_strlist *out)
{
	int err = 0;

	pthread_mutex_lock(&u->mu);
	for (size_t i = 0; !err && i < u->names.n; i++) {
		const struct uname *n = &u->names.v[i];
		char *s;

		if (!n->flagged)
			continue;
		if (asprintf(&s, "%s: %u new values in the last %u profiles", n->name, n->fresh,
			     n->seen) < 0) {
			err = -ENOMEM;
			break;
		}
		char **v = realloc(out->v, (out->n + 1) * sizeof(*v));

		if (!v) {
			free(s);
			err = -ENOMEM;
			break;
		}
		out->v = v;
		out->v[out->n++] = s;
	}
	pthread_mutex_unlock(&u->mu);
	return err;
}

size_t pstore_unbounded_count(struct pstore_unbounded *u)
{
	size_t n = 0;

	pthread_mutex_lock(&u->mu);
	for (size_t i = 0; i < u->names.n; i++)
		n += u->names.v[i].flagged;
	pthread_mutex_unlock(&u->mu);
	return n;
}
