/*
 * fuzz_profsvc_tokens.c - libFuzzer target for the tenants' tokens
 * file's parser (profile-service/tenant_tokens.c: `ember serve
 * --tokens`): any bytes as the file's text; one that parses is asked
 * the tenant of a few tokens (each entry compared in constant time), and
 * every tenant found is a valid tenant ID.  Seeds in
 * corpus/profsvc_tokens/.
 */
#include "profsvc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const given[] = { "0123456789abcdef0123", "team-a-token-0123456789",
					     "", "x" };
	struct profsvc_tokens *t = NULL;
	int err;

	ember_log_set_handler(quiet, NULL);
	err = profsvc_tokens_parse((const char *)data, size, "fuzz", &t);
	if (err && err != -EINVAL && err != -E2BIG && err != -ENOMEM)
		abort();
	for (size_t i = 0; !err && i < sizeof(given) / sizeof(given[0]); i++) {
		const char *tenant = profsvc_tokens_find(t, given[i], strlen(given[i]));

		if (tenant && !ember_tenant_valid(tenant))
			abort();
	}
	profsvc_tokens_free(t);
	return 0;
}
