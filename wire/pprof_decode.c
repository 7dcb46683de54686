/*
 * pprof_decode.c - pprof_decode(): an untrusted pprof body -> a profile the
 * symbolizer can trust.  Three phases, each bounded:
 *   1. decompress (gzip, zstd or none) into a buffer capped at
 *      max_input_bytes (decompress.c);
 *   2. unpack profile.proto with protobuf-c through an allocator that
 *      refuses to pass max_memory_bytes (a few bytes of protobuf can ask
 *      for a large submessage struct, so the input cap alone is no bound);
 *   3. check every invariant of pprof.h and index by id (pprof_validate.c).
 */
#include "wire_internal.h"

#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

void pprof_limits_resolve(const struct pprof_limits *in, struct pprof_limits *out)
{
	static const struct pprof_limits defaults = {
		.sz = sizeof(struct pprof_limits),
		.max_input_bytes = 64 * MIB,
		.max_memory_bytes = 512 * MIB,
		.max_samples = 4 * MIB,
		.max_locations = 2 * MIB,
		.max_mappings = 64 * 1024,
		.max_functions = 2 * MIB,
		.max_strings = 4 * MIB,
		.max_sample_types = 64,
	};
	struct pprof_limits l = defaults;

	/* Fields past in->sz are unknown to the caller: keep the defaults. */
#define TAKE(f)                                                              \
	l.f = EMBER_OPTS_OR(in, f, l.f)
	TAKE(max_input_bytes);
	TAKE(max_memory_bytes);
	TAKE(max_samples);
	TAKE(max_locations);
	TAKE(max_mappings);
	TAKE(max_functions);
	TAKE(max_strings);
	TAKE(max_sample_types);
	TAKE(account);
#undef TAKE
	*out = l;
}

static int unpack(const uint8_t *data, size_t size, const struct pprof_limits *lim,
		  pprof_message_t **out, struct ember_diag *d)
{
	struct wire_pb_budget b = { .cap = lim->max_memory_bytes, .acct = lim->account };
	ProtobufCAllocator a = wire_pb_allocator(&b);

	*out = perftools__profiles__profile__unpack(&a, size, data);
	EMBER_FAIL_IF(!*out && lim->account && lim->account->err == -E2BIG, d, -E2BIG,
		      "profile needs more memory to unpack than the server gives one request");
	EMBER_FAIL_IF(!*out && lim->account && lim->account->err, d, lim->account->err,
		      "the server has no memory free to unpack the profile now");
	EMBER_FAIL_IF(!*out && b.exceeded, d, -E2BIG,
		      "profile needs more than %zu bytes of memory to unpack",
		      lim->max_memory_bytes);
	EMBER_FAIL_IF(
		!*out, d, -PPROF_ERR_PROTOBUF,
		"not a profile.proto message: truncated or malformed protobuf (%zu bytes)",
		size);
	return 0;
}

/* Phase 1: the protobuf bytes, in raw (borrowed from data or owned). */
static int plain_bytes(const void *data, size_t size, const struct pprof_limits *lim,
		       struct ember_buf *raw, const uint8_t **pb, size_t *pb_size,
		       struct ember_diag *d)
{
	enum wire_compression c = wire_detect_compression(data, size);

	if (c == WIRE_COMP_RAW) {
		EMBER_FAIL_IF(size > lim->max_input_bytes, d, -E2BIG,
			      "profile of %zu bytes larger than %zu", size,
			      lim->max_input_bytes);
		*pb = data;
		*pb_size = size;
		return 0;
	}
	EMBER_FORWARD_IF_ERROR(c == WIRE_COMP_GZIP ? wire_gunzip(data, size, raw, d)
						  : wire_unzstd(data, size, raw, d));
	*pb = (const uint8_t *)raw->data;
	*pb_size = raw->len;
	return 0;
}

static void take_capacities(struct pprof_profile *p)
{
	const pprof_message_t *m = p->msg;

	p->caps = (struct pprof_caps){
		.strings = m->n_string_table, .functions = m->n_function,
		.mappings = m->n_mapping, .locations = m->n_location,
		.samples = m->n_sample, .sample_types = m->n_sample_type,
	};
}

int pprof_decode(const void *data, size_t size, const struct pprof_limits *lim_in,
		 struct pprof_profile **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct pprof_limits lim;
	struct pprof_profile *p = NULL;
	struct ember_buf raw;
	const uint8_t *pb = NULL;
	size_t pb_size = 0;
	int err;

	pprof_limits_resolve(lim_in, &lim);
	ember_buf_init_account(&raw, lim.max_input_bytes, lim.account);
	err = plain_bytes(data, size, &lim, &raw, &pb, &pb_size, &d);
	if (err)
		goto out;
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = EMBER_FAIL(&d, -ENOMEM, "out of memory");
		goto out;
	}
	p->acct = lim.account;
	err = unpack(pb ? pb : (const uint8_t *)"", pb_size, &lim, &p->msg, &d);
	if (err)
		goto out;
	take_capacities(p);
	err = pprof_validate(p, &lim, &d);
out:
	ember_buf_release(&raw);
	if (err) {
		pprof_profile_free(p);
		return err;
	}
	*out = p;
	return 0;
}

int pprof_decompress(const void *data, size_t size, struct ember_buf *out, char *why,
		     size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	enum wire_compression c = wire_detect_compression(data, size);

	if (c == WIRE_COMP_RAW)
		return EMBER_FAIL(&d, -PPROF_ERR_COMPRESSION,
				  "body is neither gzip (1f 8b) nor zstd (28 b5 2f fd)");
	return c == WIRE_COMP_GZIP ? wire_gunzip(data, size, out, &d)
				   : wire_unzstd(data, size, out, &d);
}

const char *pprof_strerror(int err)
{
	switch (-err) {
	case PPROF_ERR_COMPRESSION:
		return "corrupt or truncated gzip or zstd stream";
	case PPROF_ERR_PROTOBUF:
		return "not a protobuf profile (truncated or malformed)";
	case PPROF_ERR_INVALID:
		return "inconsistent profile (dangling id, bad string index, ...)";
	default:
		return strerror(-err);
	}
}
