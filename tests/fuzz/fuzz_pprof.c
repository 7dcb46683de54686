/*
 * fuzz_pprof.c - libFuzzer target for pprof_decode(): any bytes (raw,
 * gzip, zstd) under small limits; a profile that decodes is then walked
 * by id, edited the way the symbolizer will edit it, encoded (raw and
 * gzip) and decoded again, which must succeed with the same counts: what
 * Ember writes, Ember (and pprof) must read.
 */
#include "pprof.h"
#include "pprof_roundtrip.h"

#include <stdint.h>
#include <stdlib.h>

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

static const struct pprof_limits lim = {
	.sz = sizeof(lim),
	.max_input_bytes = 8 << 20,
	.max_memory_bytes = 64 << 20,
	.max_samples = 100000,
	.max_locations = 100000,
	.max_functions = 100000,
	.max_strings = 100000,
};

/* Every id resolves to its element. */
static void walk(const struct pprof_profile *p)
{
	const pprof_message_t *m = pprof_message(p);

	for (size_t i = 0; i < m->n_location; i++) {
		const pprof_location_t *l = m->location[i];

		if (pprof_location_by_id(p, l->id) != l)
			abort();
		if (l->mapping_id && !pprof_mapping_by_id(p, l->mapping_id))
			abort();
		for (size_t k = 0; k < l->n_line; k++)
			if (!pprof_function_by_id(p, l->line[k]->function_id))
				abort();
	}
	for (size_t i = 0; i < m->n_function; i++)
		if (!pprof_string(p, m->function[i]->name))
			abort();
}

static void edit(struct pprof_profile *p)
{
	const pprof_message_t *m = pprof_message(p);
	struct pprof_function_desc f = { "fuzz::f()", "_ZN4fuzz1fEv", "/src/fuzz.cc", 1 };
	struct pprof_line ln = { 0, 42, 7 };

	if (pprof_add_function(p, &f, &ln.function_id))
		return;
	if (m->n_location)
		pprof_location_set_lines(p, m->location[0]->id, &ln, 1);
	if (m->n_mapping)
		pprof_mapping_set_flags(p, m->mapping[0]->id, PPROF_MAPPING_HAS_FUNCTIONS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_profile *p = NULL;
	char why[256];

	ember_log_set_handler(quiet, NULL);
	if (pprof_decode(data, size, &lim, &p, why, sizeof(why)) != 0)
		return 0;
	walk(p);
	edit(p);
	fuzz_pprof_roundtrip(p, false);
	fuzz_pprof_roundtrip(p, true);
	pprof_profile_free(p);
	return 0;
}
