/*
 * fuzz_pins.c - libFuzzer target for the parser of pin files
 * (debuginfo-store/pins.c, store_pins_find): a pin file is read back from
 * the data directory at every start, so a damaged one must parse as no
 * pin, never crash, and never yield a pin that is not one (a blob name of
 * 64 lowercase hex digits, a name without spaces).  Seeds in corpus/pins/.
 *
 * Built with -fsanitize=fuzzer under EMBER_FUZZ=ON; the plain build links
 * it with replay.c.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_pin(const struct store_pin *p)
{
	size_t n = strlen(p->sha256);

	if (n != STORE_SHA256_HEX - 1 || strspn(p->sha256, "0123456789abcdef") != n)
		abort();
	if (!p->what[0] || strpbrk(p->what, " \t\n") || strlen(p->what) >= STORE_NAME_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const kinds[] = { "symidx", "unwind", "" };
	char *text = malloc(size + 1);
	struct store_pin pin;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (store_pins_find(text, kinds[i], &pin) == 0)
			check_pin(&pin);
	free(text);
	return 0;
}
