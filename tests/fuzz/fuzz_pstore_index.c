/*
 * fuzz_pstore_index.c - libFuzzer target for what a shared profile
 * store reads from its block index (profile-store/index_entry.c): any
 * bytes as an entry (one that parses is written again and must parse to
 * the same entry) and, cut at the first NUL, as an entry's key.  Seeds
 * in corpus/pstore_index/.
 */
#include "pstore.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const struct pstore_index_entry *a, const struct pstore_index_entry *b)
{
	if (!a->add != !b->add || (a->add && strcmp(a->add, b->add)) ||
	    a->add_size != b->add_size || a->n_sup != b->n_sup)
		abort();
	for (size_t i = 0; i < a->n_sup; i++)
		if (strcmp(a->sup[i], b->sup[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pstore_index_entry e, again;
	struct ember_buf out;
	char why[256], *key = malloc(size + 1);
	int64_t part;
	uint64_t seq;
	int err = pstore_index_entry_parse(data, size, &e, why, sizeof(why));

	if (err && err != -PSTORE_ERR_CORRUPT && err != -ENOMEM)
		abort();
	if (err == -PSTORE_ERR_CORRUPT && !why[0])
		abort();
	if (!err) {
		ember_buf_init(&out, 1 << 24);
		if (pstore_index_entry_encode(&e, &out) ||
		    pstore_index_entry_parse(out.data, out.len, &again, why, sizeof(why)))
			abort();
		same(&e, &again);
		pstore_index_entry_release(&again);
		ember_buf_release(&out);
		pstore_index_entry_release(&e);
	}
	if (key) {
		memcpy(key, data, size);
		key[size] = '\0';
		if (pstore_index_key_parse(key, &part, &seq) == 0 && (seq == 0 || part < 0))
			abort();
		free(key);
	}
	return 0;
}
