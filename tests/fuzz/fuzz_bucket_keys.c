/*
 * fuzz_bucket_keys.c - libFuzzer target for what the bucket backend reads
 * from a bucket any writer can fill (bucket/keys.c): a candidate object's
 * name from a listing, a names object's bytes, and a candidate's record
 * (store_artifact_decode, the store's record decoder).  Each must accept
 * or reject the input, never crash, and what it accepts must hold
 * together: a parsed name's sha256 is 64 lowercase hex digits and its
 * kinds and origin are in range; every name passed on is NUL-terminated
 * and non-empty.  Seeds in corpus/bucket_keys/ (names and objects as the
 * backend writes them).
 *
 * Built with -fsanitize=fuzzer under EMBER_FUZZ=ON; the plain build links
 * it with replay.c.
 */
#include "bucket.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_name(void *arg, const char *path)
{
	(void)arg;
	if (!*path || strlen(path) >= 4096)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bucket_cand_name c;
	struct store_artifact a;
	bool bad;

	if (bucket_cand_name_parse((const char *)data, size, &c) == 0) {
		if (strlen(c.sha256) != 64 || strspn(c.sha256, "0123456789abcdef") != 64 ||
		    c.kinds > 255 || c.origin > 1)
			abort();
	}
	if (bucket_names_parse(data, size, check_name, NULL, &bad))
		abort();
	if (store_artifact_decode(data, size, &a) == 0 && strlen(a.name) >= STORE_NAME_MAX)
		abort();
	return 0;
}
