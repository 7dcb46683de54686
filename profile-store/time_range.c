/*
 * time_range.c - whether the store holds a profile, and the times of its
 * oldest and newest (what Pyroscope's GetProfileStats answers), from the
 * heads' and blocks' own bounds: no profile table is read.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_head.h"
#include "pstore_query.h"

int pstore_time_range(struct pstore *s, struct pstore_time_range *out)
{
	struct pstore_snapshot snap;
	struct pstore_time_range r = { .oldest_ns = INT64_MAX, .newest_ns = INT64_MIN };

	EMBER_FORWARD_IF_ERROR(pstore_snapshot_take(s, 0, INT64_MAX, &snap));
	for (size_t i = 0; i < snap.heads.n; i++) {
		struct pstore_head *h = snap.heads.v[i];

		pthread_rwlock_rdlock(&h->lock);
		if (h->visible) {
			r.any = true;
			r.oldest_ns = h->min_time < r.oldest_ns ? h->min_time : r.oldest_ns;
			r.newest_ns = h->max_time > r.newest_ns ? h->max_time : r.newest_ns;
		}
		pthread_rwlock_unlock(&h->lock);
	}
	for (size_t i = 0; i < snap.blocks.n; i++) {
		const struct pstore_block *b = snap.blocks.v[i];

		r.any = true;
		r.oldest_ns = b->meta.min_time < r.oldest_ns ? b->meta.min_time : r.oldest_ns;
		r.newest_ns = b->meta.max_time > r.newest_ns ? b->meta.max_time : r.newest_ns;
	}
	pstore_snapshot_release(&snap);
	if (!r.any)
		r.oldest_ns = r.newest_ns = 0;
	*out = r;
	return 0;
}
