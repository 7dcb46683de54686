/*
 * otlp.h - OTLP profiles in: an ExportProfilesServiceRequest (the body of
 * OTLP/HTTP's POST /v1development/profiles and of OTLP/gRPC's
 * ProfilesService/Export, opentelemetry-proto v1.11.0, package
 * opentelemetry.proto.profiles.v1development) read into pprof profiles,
 * the model the ingest pipeline takes.  docs/formats.md, "OTLP profiles",
 * gives the pinned release, how a newer one is adopted and the mapping
 * rules; the .proto files of wire/otlp/ are the messages, compiled by protoc-c.
 *
 * Pipeline position: a parser of outside input under the routes that
 * will take OTLP (HTTP, gRPC), on ember_common and pprof.h only.  The
 * route undoes Content-Encoding / gRPC compression first (pprof_decompress)
 * and hands each profile to the profile service with its labels.
 * Fuzzed by tests/fuzz/fuzz_otlp.c and tests/fuzz/fuzz_otlp_json.c.
 *
 * Errors: 0 or a negative errno / pprof error kind, with a reason for the
 * sender: -E2BIG (a limit), -EAGAIN (the memory budget is taken),
 * -ENOMEM, -PPROF_ERR_PROTOBUF (not the message), -PPROF_ERR_INVALID
 * (data that will never be accepted: an index out of its table, a sample
 * whose values and timestamps disagree, samples with neither).
 * Also the bodies of OTLP/HTTP's answers (otlp_answer.c).
 * No global state; a request is used by one thread at a time.
 */
#ifndef EMBER_WIRE_OTLP_H
#define EMBER_WIRE_OTLP_H

#include "common.h"
#include "otlp_profiles_service.pb-c.h"
#include "pprof.h"

#include <stddef.h>
#include <stdint.h>

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	otlp_request_message_t;

/*
 * Caps on what one decode may cost; past any of them the request is
 * refused with -E2BIG.  Zero fields take the default shown; NULL: all.
 */
struct otlp_limits {
	size_t sz;		  /* sizeof(struct otlp_limits) */
	size_t max_input_bytes;	  /* the protobuf: 64 MiB */
	size_t max_memory_bytes;  /* protobuf-c's allocations: 512 MiB */
	size_t max_table_entries; /* each dictionary table: 4 Mi */
	size_t max_profiles;	  /* (resource, scope, profile) triples: 4096 */
	size_t max_samples;	  /* OTLP samples in all: 4 Mi */
	size_t max_stack_depth;	  /* locations of one stack: 4096 */
	size_t max_attributes;	  /* attributes of one resource, mapping, location or sample: 256 */
	size_t max_string_bytes;  /* one string: 64 KiB */
	size_t max_nesting;	  /* submessages inside each other: 32 */
	/* Charged for protobuf-c's allocations and every profile built, before
	 * each is allocated (-E2BIG past its share, -EAGAIN when the budget is
	 * taken).  Borrowed: it must outlive the request.  NULL: caps only. */
	struct ember_mem_account *account;
};

/* Which attribute named a mapping's binary (process.executable.build_id.*). */
enum otlp_build_id_kind {
	OTLP_BUILD_ID_GNU = 1 << 0,	/* .gnu: the ELF note, hex */
	OTLP_BUILD_ID_GO = 1 << 1,	/* .go: Go's build ID */
	OTLP_BUILD_ID_HTLHASH = 1 << 2, /* .htlhash: the eBPF profiler's file ID */
};

#define OTLP_BUILD_ID_MAX 130 /* bytes of a build ID attribute, NUL included */

/* The binary of pprof mapping id (i + 1 in otlp_profile.mappings).  The
 * pprof mapping's build_id is gnu, else go; the htlhash is kept only
 * here, for the file-ID index to resolve into a build ID.  Hex strings
 * lowercase when the attribute was bytes, as sent when it was a string. */
struct otlp_mapping_ids {
	unsigned kinds; /* enum otlp_build_id_kind present */
	char gnu[OTLP_BUILD_ID_MAX], go[OTLP_BUILD_ID_MAX], htlhash[OTLP_BUILD_ID_MAX];
};

/* A series label: name and value point into the request (or are static). */
struct otlp_label {
	const char *name, *value;
};

/* One (resource, scope, profile) of the request. */
struct otlp_profile {
	struct pprof_profile *p; /* owned by the request until otlp_profile_take */
	struct otlp_label *labels; /* the resource's series labels */
	size_t n_labels;
	struct otlp_mapping_ids *mappings; /* by pprof mapping id - 1 */
	size_t n_mappings;
	size_t n_samples;	  /* OTLP samples read (empty ones included) */
	size_t n_empty;		  /* of which with neither values nor timestamps */
};

struct otlp_request {
	otlp_request_message_t *msg; /* owned: labels point into it */
	struct otlp_profile *profiles;
	size_t n_profiles;
	struct ember_mem_account *acct;
};

/*
 * Decode data (raw protobuf: an ExportProfilesServiceRequest) into *out,
 * one pprof profile a (resource, scope, profile), in the request's order.
 * On success returns 0 and *out is new (caller frees with
 * otlp_request_free).  On failure returns an error of the header comment,
 * leaves *out unchanged and writes a reason to why (why_size bytes, NUL
 * terminated) when why is non-NULL.  A request in which samples exist but
 * none has values or timestamps is refused (-PPROF_ERR_INVALID) naming
 * the likely cause, a sender built on a release before 1.10.
 */
int otlp_decode(const void *data, size_t size, const struct otlp_limits *lim,
		struct otlp_request **out, char *why, size_t why_size);

/* As otlp_decode, data in OTLP's JSON encoding (the OTLP specification's
 * "JSON Protobuf Encoding": lowerCamel or proto names, hex trace and span
 * IDs, 64-bit integers as strings or numbers; docs/formats.md).  The same
 * limits, max_nesting bounding the JSON's nesting too (twice it, arrays
 * counted) and max_table_entries (or max_samples, the larger) every
 * array; -PPROF_ERR_PROTOBUF when data is not JSON, -PPROF_ERR_INVALID
 * for a value of the wrong type, range or length, naming its path. */
int otlp_decode_json(const void *data, size_t size, const struct otlp_limits *lim,
		     struct otlp_request **out, char *why, size_t why_size);

/* Take profile i's pprof profile (the caller frees it; the entry's p
 * becomes NULL); its labels and mappings stay valid until
 * otlp_request_free.  NULL when i is out of range or already taken. */
struct pprof_profile *otlp_profile_take(struct otlp_request *r, size_t i);

/* Release a request and every profile not taken.  Accepts NULL. */
void otlp_request_free(struct otlp_request *r);

/* ---- answers (otlp_answer.c) ----------------------------------------------- */

/* An ExportProfilesServiceResponse appended to out: partial_success
 * (rejected, message) when rejected > 0 or message is non-empty, else
 * empty (all accepted).  0, or -E2BIG past out's cap, -ENOMEM. */
int otlp_response_encode(int64_t rejected, const char *message, struct ember_buf *out);
/* A google.rpc.Status (code: a gRPC status code, message) appended to
 * out, the body of a refused OTLP/HTTP request.  As otlp_response_encode. */
int otlp_status_encode(int32_t code, const char *message, struct ember_buf *out);
/* The same in OTLP's JSON encoding, for a request that came as JSON:
 * {"partialSuccess":{"rejectedProfiles":"N","errorMessage":"..."}} or {},
 * and {"code":N,"message":"..."}.  As otlp_response_encode. */
int otlp_response_json(int64_t rejected, const char *message, struct ember_buf *out);
int otlp_status_json(int32_t code, const char *message, struct ember_buf *out);

#endif /* EMBER_WIRE_OTLP_H */
