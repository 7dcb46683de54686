/*
 * fuzz_jfr.c - libFuzzer target for jfr_decode(): any bytes as a JFR
 * recording under small limits; the first bytes of an input that starts
 * with "LBL" and a length byte are taken as the form's labels field
 * (a LabelsSnapshot) instead.  Each profile that decodes is taken,
 * encoded and decoded again as pprof, which must succeed with the same
 * counts (what a recording becomes, the pipeline reads).
 */
#include "jfr.h"
#include "pprof_roundtrip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

static const struct jfr_limits lim = {
	.sz = sizeof(lim),
	.max_input_bytes = 4 << 20,
	.max_classes = 4096,
	.max_constants = 1 << 20,
	.max_events = 1 << 20,
	.max_stack_depth = 512,
	.max_nesting = 16,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jfr_opts o = { .sz = sizeof(o), .lim = &lim };
	struct jfr_recording *r = NULL;
	char why[256];

	ember_log_set_handler(quiet, NULL);
	if (size >= 4 && memcmp(data, "LBL", 3) == 0 && data[3] <= size - 4) {
		o.labels = data + 4;
		o.labels_len = data[3];
		data += 4 + data[3];
		size -= 4 + (size_t)o.labels_len;
	}
	if (jfr_decode(data, size, &o, &r, why, sizeof(why)) != 0) {
		if (!why[0])
			abort(); /* a refusal always says why */
		return 0;
	}
	for (size_t i = 0; i < r->n_profiles; i++) {
		struct pprof_profile *p = jfr_profile_take(r, i);

		if (!p || jfr_profile_take(r, i))
			abort();
		fuzz_pprof_roundtrip(p, false);
		pprof_profile_free(p);
	}
	jfr_recording_free(r);
	return 0;
}
