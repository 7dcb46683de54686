/*
 * wire_internal.h - what only wire/ sees.
 *
 * One concept a file:
 *   decompress.c      gzip/zstd detection and bounded decompression
 *   pb_sink.c         protobuf-c output sinks into an ember_buf: raw or gzip
 *   pb_unpack.c       protobuf-c input: a budgeted allocator, nesting bounded,
 *                     its refusals said
 *   pprof_profile.c   the profile's memory: new/free, lookups, array growth
 *   pprof_decode.c    pprof_decode: decompress, unpack under a budget, check
 *   pprof_validate.c  the profile invariants of pprof.h
 *   pprof_index.c     id -> element index (dense O(1) or sorted O(log n))
 *   pprof_strings.c   the string table: lookups, deduplicated adds
 *   pprof_edit.c      what the symbolizer fills in: functions, lines, flags
 *   pprof_frame_type.c  a location's frame type: Ember's Location field 1000
 *   pprof_build.c     a profile from scratch: types, mappings, locations, samples
 *   pprof_encode.c    profile -> protobuf (raw or gzip) into an ember_buf
 *   json_writer.c     the escaping JSON writer of the answers
 *   symjson_values.c  request scalars: addresses, build IDs, kinds
 *   yajl_account.c    yajl's allocator, charged to a request's memory account
 *   symjson_request.c the POST /api/v1/symbolize request, streamed (yajl)
 *   symjson_answer.c  the answer, written incrementally
 *   symjson_client.c  the client side: a module's request, its reply checked
 *   pyroscope.c       Pyroscope's name=APP{k=v,...} and the kind of its suffix
 *   folded.c          folded and lines bodies as a pprof profile
 *   pyroscope_time.c  times, durations and numbers of query parameters
 *   otlp_decode.c     otlp_decode: unpack, check, one pprof profile a profile
 *   pb_json_read.c    proto3's JSON mapping read into a message, by its descriptor
 *   pb_json_write.c   a message written in proto3's JSON mapping, by its descriptor
 *   otlp_json.c       OTLP's JSON encoding read into the message otlp_decode unpacks
 *   otlp_attrs.c      OTLP attributes: series labels, build IDs, frame types,
 *                     sample labels
 *   otlp_answer.c     OTLP/HTTP answer bodies: the export response, google.rpc.Status
 */
#ifndef EMBER_WIRE_INTERNAL_H
#define EMBER_WIRE_INTERNAL_H

#include "common.h"
#include "pprof.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_common.h>

/* ---- compression (decompress.c, pb_sink.c) ----------------------------- */

enum wire_compression {
	WIRE_COMP_RAW = 0,
	WIRE_COMP_GZIP,	/* 1f 8b */
	WIRE_COMP_ZSTD,	/* 28 b5 2f fd */
};

enum wire_compression wire_detect_compression(const void *data, size_t size);

/* Decompress a whole gzip (all members) or zstd (all frames) input,
 * appending to out, whose cap bounds the output: -E2BIG at the cap,
 * -PPROF_ERR_COMPRESSION on a corrupt or truncated stream, -ENOMEM. */
int wire_gunzip(const void *data, size_t size, struct ember_buf *out,
		struct ember_diag *d);
int wire_unzstd(const void *data, size_t size, struct ember_buf *out,
		struct ember_diag *d);

/* A protobuf-c output sink: appends to out (raw) or gzips into it.
 * err is sticky: the first failure (-E2BIG, -ENOMEM) stops all output. */
struct wire_pb_sink {
	ProtobufCBuffer base;
	struct ember_buf *out;
	int err;
	void *z;	/* z_stream when gzipping */
};

void wire_sink_raw_init(struct wire_pb_sink *s, struct ember_buf *out);
int wire_sink_gzip_init(struct wire_pb_sink *s, struct ember_buf *out);
/* Finish the gzip stream (no-op for raw) and release it; returns s->err. */
int wire_sink_finish(struct wire_pb_sink *s);

/* protobuf-c allocations of one unpack under a budget of cap bytes, each
 * also taken from acct (NULL: none) first; exceeded set when cap stopped
 * one (pb_unpack.c). */
struct wire_pb_budget {
	size_t used, cap;
	bool exceeded;
	struct ember_mem_account *acct;
};

/* An allocator drawing on b (borrowed for as long as the unpack runs). */
ProtobufCAllocator wire_pb_allocator(struct wire_pb_budget *b);

/* -E2BIG when data, a message of md, holds submessages nested deeper than
 * depth levels (md itself one), else 0 (malformed bytes are left for
 * protobuf-c to refuse).  Recurses at most depth times. */
int wire_pb_check_nesting(const ProtobufCMessageDescriptor *md, const uint8_t *data,
			  size_t size, unsigned depth);

/* err (-E2BIG, -EAGAIN, -ENOMEM: acct's own error first, acct may be
 * NULL) said in d as the request's memory, the message prefixed by tag;
 * other errors returned as they are. */
int wire_memory_error(struct ember_diag *d, const char *tag, const struct ember_mem_account *acct,
		      int err);

/* ---- JSON output (json_writer.c) ------------------------------------- */

/* Append a JSON string literal of s (common.h's ember_json_str: names
 * from ELF files are bytes, JSON text is UTF-8). */
int wire_json_str(struct ember_buf *b, const char *s);
/* Append v in decimal. */
int wire_json_u64(struct ember_buf *b, uint64_t v);
/* Append v as a JSON string "0x<lowercase hex>". */
int wire_json_hex(struct ember_buf *b, uint64_t v);
/* Append a literal (punctuation, keys already quoted). */
static inline int wire_json_lit(struct ember_buf *b, const char *lit, size_t len)
{
	return ember_buf_append(b, lit, len);
}
#define WIRE_JSON_LIT(b, s) wire_json_lit((b), (s), sizeof(s) - 1)

/* ---- JSON input (yajl_account.c) -------------------------------------- */

/* yajl's allocations charged to acct (NULL: none), never refused (yajl
 * does not survive a failed one): past the share or the budget the
 * account's error is set, for the parser to stop at its next event. */
yajl_alloc_funcs wire_yajl_funcs(struct ember_mem_account *acct);

/* ---- proto3's JSON mapping (pb_json_read.c, pb_json_write.c) ----------- */

/* One JSON read's limits and caller's parts. */
struct wire_json_read {
	const char *tag;		/* refusals' prefix ("otlp: ") */
	size_t max_input_bytes;		/* the JSON text */
	size_t max_memory_bytes;	/* the message's allocations */
	size_t max_nesting;		/* submessages inside each other; any JSON
					   value at most twice as deep */
	size_t max_entries;		/* of one repeated field */
	struct ember_mem_account *account; /* charged for it all; NULL: none */
	/* The bytes of hex a bytes field is read as instead of base64 (0:
	 * base64); NULL: every one base64.  hex_hint says why, in a refusal. */
	size_t (*hex_bytes)(const ProtobufCFieldDescriptor *f);
	const char *hex_hint;
	struct ember_diag *d;		/* where a refusal is explained */
};

/* data, a JSON object, read as a message of md (proto3's JSON mapping:
 * lowerCamel or proto names, 64-bit integers as strings or numbers, enums
 * as names or numbers, bytes base64, unknown keys skipped) under o's
 * limits.  0 and *out (freed with protobuf_c_message_free_unpacked(.., NULL));
 * -PPROF_ERR_PROTOBUF when data is not JSON, -PPROF_ERR_INVALID for a
 * value of the wrong type, range or length (naming its path), -E2BIG past
 * a limit, the account's errors or -ENOMEM; the reason in o->d. */
int wire_json_read_message(const ProtobufCMessageDescriptor *md, const uint8_t *data,
			   size_t size, const struct wire_json_read *o, ProtobufCMessage **out);

/* m appended to out in proto3's JSON mapping: lowerCamel names (protoc's
 * json_name), fields at their default left out, 64-bit integers as
 * strings, enums by name, bytes base64, NaN and infinities as strings.
 * 0, -E2BIG past out's cap, or -ENOMEM. */
int wire_json_write_message(const ProtobufCMessage *m, struct ember_buf *out);
/* name's JSON name (protoc's json_name: each '_' dropped, the letter after
 * it upper-cased) into out[0, size), NUL-ended; its length. */
size_t wire_json_name(const char *name, char *out, size_t size);
/* The bytes of one value of f's type in a message or a repeated field's array. */
size_t wire_pb_value_size(const ProtobufCFieldDescriptor *f);

/* ---- request scalars (symjson_values.c) ------------------------------- */

struct json_t;

/* Each returns 0, or -EINVAL with *why set to a static reason.
 * An address: a non-negative JSON integer, or "0x" + 1..16 hex digits
 * (leading zeros allowed, at most 64 characters in all). */
int symjson_address_value(const struct json_t *v, uint64_t *out, const char **why);
/* The same from a JSON number's text (number) or a string's bytes; a
 * number may be any integer of 64 bits. */
int symjson_address_text(const char *s, size_t len, bool number, uint64_t *out,
			 const char **why);
/* A build ID: even-length hex of 2..SYMJSON_BUILD_ID_HEX_MAX digits,
 * either case, written lowercase into out (s, len: a string's bytes). */
int symjson_build_id_str(const char *s, size_t len, char *out, size_t out_size,
			 const char **why);
/* "vaddr" or "file_offset" (s, len: a string's bytes). */
int symjson_kind_str(const char *s, size_t len, int *out, const char **why);

/* ---- the profile (pprof_*.c) ------------------------------------------ */

/* id -> index into the message's array of that kind. */
struct pprof_id_slot {
	uint64_t id;
	size_t idx;
};

struct pprof_id_index {
	bool dense;		    /* element i has id i + 1: no slots */
	struct pprof_id_slot *slots; /* else sorted by id, n of them */
	size_t n, alloc;
	uint64_t max_id;	    /* 0 when empty */
};

/* Capacities of the message's repeated arrays (n_* are the lengths). */
struct pprof_caps {
	size_t strings, functions, mappings, locations, samples, sample_types;
};

struct pprof_profile {
	pprof_message_t *msg;		/* owned; freed with free_unpacked */
	struct pprof_id_index mappings, locations, functions;
	struct pprof_caps caps;
	struct ember_hset strings;	/* built on first pprof_add_string */
	struct ember_hset funcs;		/* built on first pprof_add_function */
	struct ember_mem_account *acct;	/* edits charged to it (pprof_limits.account) */
};

/* What an edit is about to allocate, charged to p's account (if any)
 * before it does: 0, -E2BIG (past the request's share) or -EAGAIN (the
 * budget is full).  Bytes are estimates: the blocks and malloc's
 * overhead of each. */
static inline int pprof_charge(struct pprof_profile *p, size_t bytes)
{
	return ember_mem_account_take(p->acct, bytes);
}
#define PPROF_BLOCK_COST(n) ((n) + 16) /* a malloc'd block of n bytes */

/* Limits with zero fields replaced by the defaults. */
void pprof_limits_resolve(const struct pprof_limits *in, struct pprof_limits *out);

/* Check the invariants of pprof.h on a freshly unpacked message and build
 * the id indexes.  -E2BIG (a count past lim) or -PPROF_ERR_INVALID. */
int pprof_validate(struct pprof_profile *p, const struct pprof_limits *lim,
		   struct ember_diag *d);

typedef uint64_t (*pprof_id_of_fn)(const void *elem);

/* Build ix over elems[0..n).  -EEXIST with *dup set on a repeated id,
 * -ENOMEM.  Zero ids must have been rejected before. */
int pprof_index_build(struct pprof_id_index *ix, void *const *elems, size_t n,
		      pprof_id_of_fn id_of, uint64_t *dup);
/* Index of the element with id, or SIZE_MAX. */
size_t pprof_index_find(const struct pprof_id_index *ix, uint64_t id);
/* Record element idx == ix->n with id ix->max_id + 1; returns that id or 0
 * on -ENOMEM. */
uint64_t pprof_index_append(struct pprof_id_index *ix, size_t idx);
void pprof_index_release(struct pprof_id_index *ix);

/* Make room for one more pointer in a repeated field (*arr, n, *cap). */
int pprof_grow(void *arr, size_t n, size_t *cap, size_t elem_size);

/* Copy of s (NULL as ""), from malloc. */
char *pprof_strdup(const char *s);

/* ---- OTLP profiles (otlp_decode.c, otlp_attrs.c) ------------------------ */

#include "otlp.h"

typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary otlp_dict_t;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit otlp_attr_t;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping otlp_mapping_t;
typedef Opentelemetry__Proto__Profiles__V1development__Location otlp_location_t;
typedef Opentelemetry__Proto__Profiles__V1development__Sample otlp_sample_t;
typedef Opentelemetry__Proto__Common__V1__AnyValue otlp_value_t;
typedef Opentelemetry__Proto__Resource__V1__Resource otlp_resource_t;

/* What the conversion of one request reads from: its dictionary, its
 * limits (resolved), where a refusal is explained. */
struct otlp_ctx {
	const otlp_dict_t *dict; /* never NULL: an empty one when absent */
	struct otlp_limits lim;
	struct ember_diag *d;
};

/* Room for the labels of one sample: its attributes (named '@' KEY) and
 * its link's trace and span. */
struct otlp_sample_scratch {
	struct pprof_sample_label *labels; /* lim.max_attributes + 2 */
	char (*text)[32];		   /* numbers written as text, as many */
	size_t *name_off;		   /* of each label's name in names */
	struct ember_buf names;
	char trace[33], span[17];
};

/* Phase 1 of a decode in one encoding: data into *out (allocated
 * through pb_unpack.c's budgeted allocator, freed with
 * protobuf_c_message_free_unpacked) under c's limits; 0, or an error of
 * otlp.h with its reason in c->d. */
typedef int (*otlp_unpack_fn)(const uint8_t *data, size_t size, struct otlp_ctx *c,
			      otlp_request_message_t **out);
/* OTLP's JSON encoding (otlp_json.c). */
int otlp_json_unpack(const uint8_t *data, size_t size, struct otlp_ctx *c,
		     otlp_request_message_t **out);
/* err (-E2BIG, -EAGAIN, -ENOMEM: the account's own error first) said in
 * c->d as the request's memory; other errors returned as they are. */
int otlp_memory_error(const struct otlp_ctx *c, int err);

/* dict string idx; 0 is "" whatever the table holds; NULL out of range. */
const char *otlp_string(const struct otlp_ctx *c, int64_t idx);
/* The resource's series labels into op (labels allocated from the
 * account, values pointing into the message). */
int otlp_resource_labels(const struct otlp_ctx *c, const otlp_resource_t *r,
			 struct otlp_profile *op);
/* A mapping's build IDs from its attributes. */
int otlp_mapping_build_ids(const struct otlp_ctx *c, const otlp_mapping_t *m,
			   struct otlp_mapping_ids *ids);
/* A location's profile.frame.type into *type (NULL when it has none, a
 * value that is not a string or is empty; else points into the message). */
int otlp_location_frame_type(const struct otlp_ctx *c, const otlp_location_t *l,
			     const char **type);
/* A sample's attributes and link as pprof labels into s->labels[0, *n). */
int otlp_sample_labels(const struct otlp_ctx *c, const otlp_sample_t *smp,
		       struct otlp_sample_scratch *s, size_t *n);

#endif /* EMBER_WIRE_INTERNAL_H */
