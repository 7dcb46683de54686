/*
 * series_keys.c - the series the store holds, for its series limit: each series
 * key (pstore_series_key) with the number of holders (blocks and heads that
 * have it), in an open-addressing table.  A series stops counting when
 * its last holder goes (retention, or a head written as blocks that
 * already hold it).  An append admits all the new series of its profile
 * at once, or none (pstore_keys_add_all), so a refused profile holds no
 * slot.
 */
#include "pstore_series.h"

struct pstore_keycount {
	uint64_t *key;
	uint32_t *count; /* 0: free slot */
	size_t mask, used;
};

static size_t slot_of(const struct pstore_keycount *kc, uint64_t key)
{
	size_t i = ember_mix64(key) & kc->mask;

	while (kc->count[i] && kc->key[i] != key)
		i = (i + 1) & kc->mask;
	return i;
}

static int grow(struct pstore_keycount **pkc)
{
	struct pstore_keycount *old = *pkc, *kc = calloc(1, sizeof(*kc));
	size_t n = old ? 2 * (old->mask + 1) : 1024;

	if (!kc)
		return -ENOMEM;
	kc->key = calloc(n, sizeof(*kc->key));
	kc->count = calloc(n, sizeof(*kc->count));
	if (!kc->key || !kc->count) {
		pstore_keys_free(kc);
		return -ENOMEM;
	}
	kc->mask = n - 1;
	for (size_t i = 0; old && i <= old->mask; i++)
		if (old->count[i]) {
			size_t j = slot_of(kc, old->key[i]);

			kc->key[j] = old->key[i];
			kc->count[j] = old->count[i];
			kc->used++;
		}
	pstore_keys_free(old);
	*pkc = kc;
	return 0;
}

int pstore_keys_add(struct pstore_keycount **kc, uint64_t key)
{
	size_t i;

	if (!*kc || 4 * ((*kc)->used + 1) > 3 * ((*kc)->mask + 1))
		EMBER_FORWARD_IF_ERROR(grow(kc));
	i = slot_of(*kc, key);
	if (!(*kc)->count[i]) {
		(*kc)->key[i] = key;
		(*kc)->used++;
	}
	(*kc)->count[i]++;
	return 0;
}

/* Removal with backward-shift deletion, so probing stays correct. */
static void remove_slot(struct pstore_keycount *kc, size_t i)
{
	size_t j = i;

	kc->count[i] = 0;
	kc->used--;
	for (;;) {
		size_t home;

		j = (j + 1) & kc->mask;
		if (!kc->count[j])
			return;
		home = ember_mix64(kc->key[j]) & kc->mask;
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			kc->key[i] = kc->key[j];
			kc->count[i] = kc->count[j];
			kc->count[j] = 0;
			i = j;
		}
	}
}

void pstore_keys_remove(struct pstore_keycount *kc, uint64_t key)
{
	size_t i;

	if (!kc)
		return;
	i = slot_of(kc, key);
	if (kc->count[i] && --kc->count[i] == 0) {
		kc->count[i] = 1; /* remove_slot clears it */
		remove_slot(kc, i);
	}
}

void pstore_keys_remove_all(struct pstore_keycount *kc, const uint64_t *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pstore_keys_remove(kc, keys[i]);
}

int pstore_keys_add_all(struct pstore_keycount **kc, const uint64_t *keys, size_t n, size_t max,
			size_t *fresh)
{
	size_t f = 0;

	for (size_t i = 0; i < n; i++)
		f += !pstore_keys_has(*kc, keys[i]);
	*fresh = f;
	if (f > max || pstore_keys_count(*kc) > max - f)
		return -PSTORE_ERR_SERIES_LIMIT;
	for (size_t i = 0; i < n; i++)
		if (pstore_keys_add(kc, keys[i])) {
			pstore_keys_remove_all(*kc, keys, i);
			return -ENOMEM;
		}
	return 0;
}

bool pstore_keys_has(const struct pstore_keycount *kc, uint64_t key)
{
	return kc && kc->count[slot_of(kc, key)];
}

size_t pstore_keys_count(const struct pstore_keycount *kc)
{
	return kc ? kc->used : 0;
}

void pstore_keys_free(struct pstore_keycount *kc)
{
	if (!kc)
		return;
	free(kc->key);
	free(kc->count);
	free(kc);
}
