/*
 * fuzz_otlp.c - libFuzzer target for otlp_decode(): any bytes as an
 * ExportProfilesServiceRequest under small limits; each profile that
 * decodes is taken, encoded and decoded again as pprof, which must
 * succeed with the same counts (what OTLP becomes, the pipeline reads).
 * fuzz_otlp_json.c is this target with OTLP_FUZZ_DECODE otlp_decode_json.
 */
#include "otlp.h"

#ifndef OTLP_FUZZ_DECODE
#define OTLP_FUZZ_DECODE otlp_decode
#endif

#include <stdint.h>
#include <stdlib.h>

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

static const struct otlp_limits lim = {
	.sz = sizeof(lim),
	.max_input_bytes = 4 << 20,
	.max_memory_bytes = 64 << 20,
	.max_table_entries = 100000,
	.max_profiles = 64,
	.max_samples = 100000,
	.max_stack_depth = 256,
};

static void roundtrip(const struct pprof_profile *p)
{
	const pprof_message_t *m = pprof_message(p);
	struct pprof_profile *q = NULL;
	struct ember_buf b;

	ember_buf_init(&b, 64 << 20);
	if (pprof_encode(p, false, &b) == 0) {
		if (pprof_decode(b.data, b.len, NULL, &q, NULL, 0) != 0)
			abort();
		if (pprof_message(q)->n_location != m->n_location ||
		    pprof_message(q)->n_sample != m->n_sample)
			abort();
		pprof_profile_free(q);
	}
	ember_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct otlp_request *r = NULL;
	char why[256];

	ember_log_set_handler(quiet, NULL);
	if (OTLP_FUZZ_DECODE(data, size, &lim, &r, why, sizeof(why)) != 0)
		return 0;
	for (size_t i = 0; i < r->n_profiles; i++) {
		struct pprof_profile *p = otlp_profile_take(r, i);

		if (!p || otlp_profile_take(r, i))
			abort();
		roundtrip(p);
		pprof_profile_free(p);
	}
	otlp_request_free(r);
	return 0;
}
