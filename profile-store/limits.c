/*
 * limits.c - the ingest limits of struct pstore_limits with their
 * defaults: what one profile may cost the store, and how many series the
 * store keeps.  Fields past the caller's sz and zero fields take the
 * defaults (libbpf's OPTS_GET).
 */
#include "pstore_internal.h"

#define MIB ((size_t)1 << 20)

void pstore_limits_resolve(const struct pstore_limits *in, struct pstore_limits *out)
{
	struct pstore_limits l = {
		.sz = sizeof(l),
		.max_profile_bytes = 16 * MIB,
		.max_samples = 100000,
		.max_stack_depth = 1024,
		.max_labels = 32,
		.max_label_name_len = 128,
		.max_label_value_len = 1024,
		.max_series = 100000,
		.series_window_ns = 3600 * (int64_t)1000000000,
	};

#define TAKE(f)                                                              \
	l.f = EMBER_OPTS_OR(in, f, l.f)
	TAKE(max_profile_bytes);
	TAKE(max_samples);
	TAKE(max_stack_depth);
	TAKE(max_labels);
	TAKE(max_label_name_len);
	TAKE(max_label_value_len);
	TAKE(max_series);
	TAKE(series_window_ns);
#undef TAKE
	*out = l;
}
