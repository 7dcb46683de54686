/*
 * fuzz_store_record.c - libFuzzer target for the decoder of the records
 * the debuginfo store keeps in RocksDB (debuginfo-store/record.c,
 * store_record_decode): a damaged record must decode as none, never
 * over-read or yield a name without its NUL, and a record that decodes
 * must encode to bytes that decode to the same artifact.  Seeds in
 * corpus/store_record/ (made by make_store_record_seeds.py).
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const struct store_artifact *a, const struct store_artifact *b)
{
	return a->kinds == b->kinds && a->flags == b->flags &&
	       a->dwarf_version == b->dwarf_version && a->size == b->size &&
	       a->mtime == b->mtime && strcmp(a->name, b->name) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_artifact a, b;
	uint8_t *copy = malloc(size ? size : 1), again[64 + STORE_NAME_MAX];
	size_t n;

	if (!copy)
		return 0;
	memcpy(copy, data, size); /* exactly size bytes: ASan sees any over-read */
	memset(&a, 0xa5, sizeof(a));
	if (store_record_decode(copy, size, &a) == 0) {
		if (strnlen(a.name, STORE_NAME_MAX) >= STORE_NAME_MAX)
			abort();
		n = store_record_encode(&a, again, sizeof(again));
		if (n == 0 || store_record_decode(again, n, &b) != 0 || !same(&a, &b))
			abort();
	}
	free(copy);
	return 0;
}
