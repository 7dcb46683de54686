/*
 * fuzz_profsvc_limits.c - libFuzzer target for the tenants' limits
 * file's parser (profile-service/tenant_limits.c: `ember serve
 * --limits`): any bytes as the file; one that parses is asked the
 * limits of a few tenants (their own entry's keys, the default's for the
 * rest) and the store options they give, and one that fails says why.
 * Seeds in corpus/profsvc_limits/.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const tenants[] = { "a", "team-a", "default", "anonymous", "zz" };
	struct profsvc_limits_table *t = NULL;
	char why[512] = "";
	int err = profsvc_limits_parse((const char *)data, size, &t, why, sizeof(why));

	if (err && err != -EINVAL && err != -ENOMEM)
		abort();
	if (err == -EINVAL && !why[0])
		abort();
	for (size_t i = 0; !err && i < sizeof(tenants) / sizeof(tenants[0]); i++) {
		struct profsvc_opts o = { .sz = sizeof(o) };

		profsvc_limits_store_opts(t, tenants[i], &o);
		if (o.retention_ns < 0 || o.rollup_retention_ns < 0)
			abort(); /* a limit's seconds always fit in ns */
	}
	profsvc_limits_table_free(t);
	return 0;
}
