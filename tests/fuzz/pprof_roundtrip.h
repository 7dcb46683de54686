/*
 * pprof_roundtrip.h - what the fuzz targets that make pprof profiles
 * (fuzz_pprof.c, fuzz_otlp.c, fuzz_jfr.c) check of each: encoded (gzip or
 * not) and decoded again, it must succeed with the same counts of
 * locations, samples and functions: what the pipeline reads back.
 */
#ifndef EMBER_FUZZ_PPROF_ROUNDTRIP_H
#define EMBER_FUZZ_PPROF_ROUNDTRIP_H

#include "pprof.h"

#include <stdbool.h>
#include <stdlib.h>

static inline void fuzz_pprof_roundtrip(const struct pprof_profile *p, bool gzip)
{
	const pprof_message_t *m = pprof_message(p);
	struct pprof_profile *q = NULL;
	struct ember_buf b;

	ember_buf_init(&b, 64 << 20);
	if (pprof_encode(p, gzip, &b) == 0) {
		if (pprof_decode(b.data, b.len, NULL, &q, NULL, 0) != 0)
			abort();
		if (pprof_message(q)->n_location != m->n_location ||
		    pprof_message(q)->n_sample != m->n_sample ||
		    pprof_message(q)->n_function != m->n_function)
			abort();
		pprof_profile_free(q);
	}
	ember_buf_release(&b);
}

#endif /* EMBER_FUZZ_PPROF_ROUNDTRIP_H */
