/*
 * fuzz_profsvc_rules.c - libFuzzer target for the ingest rules file's
 * parser (profile-service/ingest_rules.c, relabel.c, ingest_sampling.c:
 * `ember serve --rules`): any bytes as the file; one that parses is
 * applied, each tenant's rules and default's, to a few label sets and
 * asked its sampling decision, and one that fails says why.  Its regexes
 * are RE2's, each within a memory bound and linear in its input, so no
 * file makes parsing or applying slow.  Seeds in corpus/profsvc_rules/.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

/* Every rule of tenant applied to a copy of in[0, n), then sampled. */
static void apply(const struct profsvc_rules *t, const char *tenant,
		  const struct pstore_label *in, size_t n)
{
	struct profsvc_labels ls = { 0 };
	char why[512];
	int err;

	if (profsvc_labels_copy(&ls, in, n))
		return;
	why[0] = '\0';
	err = profsvc_rules_apply(t, tenant, &ls, why, sizeof(why));
	if (err < 0 && !why[0])
		abort();
	if (err >= 0 && err != 0 && err != PROFSVC_RELABEL_DROP)
		abort();
	profsvc_rules_keep(t, tenant, ls.v, ls.n, (int64_t)1700000000 * 1000000000);
	profsvc_labels_release(&ls);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct pstore_label sets[][4] = {
		{ { "service_name", "checkout" }, { "pod", "checkout-7f9c" },
		  { "request_id", "8f3a" }, { "env", "prod" } },
		{ { "a", "" }, { "b", "x\xff\n" }, { "k8s_pod", "pod-1234567890" },
		  { "__name__", "process_cpu" } },
	};
	static const char *const tenants[] = { "t", "a", "default", "other" };
	struct profsvc_rules *t = NULL;
	char why[512] = "";
	int err;

	ember_log_set_handler(quiet, NULL);
	err = profsvc_rules_parse((const char *)data, size, &t, why, sizeof(why));
	if (err && err != -EINVAL && err != -E2BIG && err != -ENOMEM)
		abort();
	if (err && !why[0] && err != -ENOMEM)
		abort();
	for (size_t i = 0; !err && i < sizeof(tenants) / sizeof(tenants[0]); i++)
		for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++)
			apply(t, tenants[i], sets[k], 4);
	profsvc_rules_free(t);
	return 0;
}
