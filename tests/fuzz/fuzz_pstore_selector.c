/*
 * fuzz_pstore_selector.c - libFuzzer target for the profile store's
 * label selector parser (profile-store/selector.c): any bytes as a
 * selector (cut at the first NUL); one that parses is matched against a
 * few label sets, and one that fails says why.  The regexes it compiles
 * are RE2's, each within 1 MiB and matched in linear time, so no input
 * makes compiling or matching slow.  Seeds in
 * corpus/pstore_selector/.
 */
#include "pstore.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pstore_label sets[][3] = {
		{{"service", "checkout"}, {"version", "2.4.1"}, {"__name__", "process_cpu"} },
		{{"a", ""}, {"b", "x\xff\n"}, {"k8s.pod", "pod-1234567890"} },
	};
	char *text = malloc(size + 1), why[256];
	struct pstore_selector *sel = NULL;
	int err;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	err = pstore_selector_parse(text, &sel, why, sizeof(why));
	if (err && (err != -PSTORE_ERR_SELECTOR && err != -ENOMEM))
		abort();
	if (err && !why[0])
		abort();
	for (size_t i = 0; !err && i < sizeof(sets) / sizeof(sets[0]); i++)
		pstore_selector_matches(sel, sets[i], 3);
	pstore_selector_free(sel);
	free(text);
	return 0;
}
