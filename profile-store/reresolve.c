/*
 * reresolve.c - the stored frames of a build ID resolved once its debug
 * info arrives.  Frames that could not be symbolized at ingest are kept
 * as addresses (a query resolves them each time through its resolver);
 * when the caller says the symbols of a build ID arrived
 * (pstore_symbols_arrived: an upload, a fetch from upstream), the
 * compaction rewrites each block that names the build ID among its
 * unresolved frames with the resolver applied (the merge of that one
 * block), so the block's dictionary gets the functions and lines and its
 * coverage is recounted.  A block the resolver resolves nothing more in
 * is not rewritten.  An arrival is remembered for three head ages, so
 * the heads that held such frames then are written as blocks and
 * rewritten too; profiles appended later were symbolized at ingest.
 */
#include "pstore_catalog.h"
#include "pstore_compact.h"

#include <ctype.h>

static void drop_expired(struct pstore *s, int64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < s->arrived.n; i++) {
		if (s->arrived.v[i].until_ns > now)
			s->arrived.v[k++] = s->arrived.v[i];
		else
			free(s->arrived.v[i].build_id);
	}
	s->arrived.n = k;
}

int pstore_symbols_arrived(struct pstore *s, const char *build_id)
{
	int64_t until = pstore_now(s) + 3 * s->opts.head_max_age_ns;
	struct pstore_arrival a = { .until_ns = until };
	int err = 0;

	if (!build_id || !*build_id)
		return -EINVAL;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->arrived.n; i++)
		if (strcmp(s->arrived.v[i].build_id, build_id) == 0) {
			s->arrived.v[i].until_ns = until;
			a.build_id = s->arrived.v[i].build_id;
		}
	if (!a.build_id) {
		a.build_id = strdup(build_id);
		for (char *p = a.build_id; p && *p; p++)
			*p = (char)tolower((unsigned char)*p);
		err = a.build_id ? EMBER_VEC_APPEND(&s->arrived, a) : -ENOMEM;
		if (err)
			free(a.build_id);
	}
	pthread_mutex_unlock(&s->mu);
	if (!err)
		pstore_background_kick(s);
	return err;
}

void pstore_arrivals_free(struct pstore *s)
{
	for (size_t i = 0; i < s->arrived.n; i++)
		free(s->arrived.v[i].build_id);
	EMBER_VEC_FREE(&s->arrived);
}

/* Whether b's coverage strings (its series table's) name an arrived
 * build ID.  Under s->mu. */
static bool names_arrival(const struct pstore *s, const struct pstore_block *b)
{
	const struct pmodel_strtab *t = &b->series.str;

	for (size_t i = 1; i < pmodel_strtab_count(t); i++)
		for (size_t k = 0; k < s->arrived.n; k++)
			if (strcmp(pmodel_str(t, (uint32_t)i), s->arrived.v[k].build_id) == 0)
				return true;
	return false;
}

/* The live blocks to rewrite (referenced). */
static int pick(struct pstore *s, struct pstore_blocks *out)
{
	int err = 0;

	pthread_mutex_lock(&s->mu);
	drop_expired(s, pstore_now(s));
	for (size_t i = 0; !err && s->arrived.n && i < s->blocks.n; i++) {
		struct pstore_block *b = s->blocks.v[i];

		if (b->corrupt || !names_arrival(s, b))
			continue;
		err = EMBER_VEC_APPEND(out, b);
		if (!err)
			pstore_block_ref(b);
	}
	pthread_mutex_unlock(&s->mu);
	return err;
}

int pstore_compact_reresolve(struct pstore *s)
{
	struct pstore_blocks todo = { 0 };
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err;

	if (!s->opts.resolver)
		return 0;
	err = pick(s, &todo);
	for (size_t i = 0; !err && i < todo.n; i++)
		err = pstore_merge_blocks(s, &todo.v[i], 1, true, &d);
	pstore_blocks_release(&todo);
	if (err)
		pr_warn("pstore: resolving stored frames: %s", why[0] ? why : pstore_strerror(err));
	return err;
}
