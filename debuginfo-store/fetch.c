/*
 * fetch.c - a blob missing from the local directories is fetched from the
 * backend (store.h, "a durable backend"): into DIR/tmp, checked by the
 * backend against its sha256, fsynced, and moved into place like any
 * committed blob, after which it is opened (and served with sendfile) as
 * a local file.  However many threads ask for one missing blob at once,
 * one fetches and the others wait for its result.
 */
#include "store_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One fetch in progress, in s->fetching; freed by the last of the
 * fetcher and its waiters (refs). */
struct store_fetch {
	struct store_fetch *next;
	char sha256[STORE_SHA256_HEX];
	int ns_fd;
	unsigned refs;
	bool done;
	int err;
};

static int fetch_into(struct store *s, const char *sha256, int ns_fd)
{
	struct store_blob *b;
	uint64_t size = 0;
	bool existed;
	int err = store_blob_begin(s, &b);

	if (err)
		return err;
	err = s->be.get_blob(s->be.ctx, sha256, store_blob_fd(b), &size);
	if (!err)
		err = store_blob_seal_fetched(b, sha256, size);
	if (err) {
		store_blob_discard(b);
		return err;
	}
	err = store_blob_commit(s, b, ns_fd, &existed);
	if (!err) {
		s->be_fetches++;
		s->be_fetch_bytes += size;
	}
	return err;
}

static struct store_fetch *find_fetch(struct store *s, const char *sha256, int ns_fd)
{
	for (struct store_fetch *f = s->fetching; f; f = f->next)
		if (f->ns_fd == ns_fd && strcmp(f->sha256, sha256) == 0)
			return f;
	return NULL;
}

static void unlink_fetch(struct store *s, struct store_fetch *f)
{
	for (struct store_fetch **p = &s->fetching; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			return;
		}
}

/* Under fetch_mu: drop one reference. */
static void put_fetch(struct store_fetch *f)
{
	if (--f->refs == 0)
		free(f);
}

static int wait_for(struct store *s, struct store_fetch *f)
{
	int err;

	f->refs++;
	s->be_fetch_waits++;
	while (!f->done)
		pthread_cond_wait(&s->fetch_cv, &s->fetch_mu);
	err = f->err;
	put_fetch(f);
	pthread_mutex_unlock(&s->fetch_mu);
	return err;
}

int store_backend_fetch(struct store *s, const char *sha256, int ns_fd)
{
	struct store_fetch *f;
	int err;

	pthread_mutex_lock(&s->fetch_mu);
	f = find_fetch(s, sha256, ns_fd);
	if (f)
		return wait_for(s, f); /* unlocks */
	f = calloc(1, sizeof(*f));
	if (!f) {
		pthread_mutex_unlock(&s->fetch_mu);
		return -ENOMEM;
	}
	memcpy(f->sha256, sha256, STORE_SHA256_HEX);
	f->ns_fd = ns_fd;
	f->refs = 1;
	f->next = s->fetching;
	s->fetching = f;
	pthread_mutex_unlock(&s->fetch_mu);

	err = fetch_into(s, sha256, ns_fd);

	pthread_mutex_lock(&s->fetch_mu);
	f->err = err;
	f->done = true;
	unlink_fetch(s, f);
	put_fetch(f);
	pthread_cond_broadcast(&s->fetch_cv);
	pthread_mutex_unlock(&s->fetch_mu);
	return err;
}
