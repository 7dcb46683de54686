/*
 * pprof.h - pprof profiles (profile.proto, github.com/google/pprof) in and
 * out: the body of POST /api/v1/symbolize/pprof and what an agent writes.
 *
 * Pipeline position: the server decodes a profile sent by an agent
 * (raw protobuf, gzip or zstd), the symbolizer walks its mappings and
 * locations and fills in functions and lines through the helpers below,
 * and the server encodes it back.  Nothing here knows about HTTP or ELF.
 *
 * The messages are protobuf-c's, generated at build time from the
 * profile.proto Debian ships with pprof (see wire/CMakeLists.txt).
 *
 * Invariants of a struct pprof_profile (checked by pprof_decode, kept by
 * every helper; see docs/symbolize-api.md for the full list):
 *  - string_table is non-empty and string_table[0] is "";
 *  - every string index in the profile lies in the string table;
 *  - mapping, location and function ids are non-zero and unique per kind;
 *  - a location's mapping_id is 0 or names a mapping; every line's
 *    function_id names a function; every sample's location ids name
 *    locations and it has as many values as there are sample types;
 *  - every mapping has memory_start <= memory_limit.
 * Strings are protobuf-c's C strings: an embedded NUL byte in a
 * string_table entry ends it, on decoding and thus on re-encoding.
 *
 * Ownership: a struct pprof_profile owns its protobuf-c message and every
 * string and submessage in it (all from malloc); pprof_profile_free()
 * releases everything.  Pointers returned by the lookups and by
 * pprof_message() point into the profile and stay valid until the next
 * call that changes the profile (pprof_add_*, pprof_*_set_*) or
 * pprof_profile_free(); callers never free them and never write through
 * them.  A profile is not thread-safe: one thread at a time, reads
 * included while another thread edits.  There is no global state.
 */
#ifndef EMBER_WIRE_PPROF_H
#define EMBER_WIRE_PPROF_H

#include "common.h"
#include "profile.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 1 when this build's profile.proto has Line.column (set by CMake). */
#ifndef PPROF_LINE_HAS_COLUMN
#define PPROF_LINE_HAS_COLUMN 0
#endif

typedef Perftools__Profiles__Profile pprof_message_t;
typedef Perftools__Profiles__Mapping pprof_mapping_t;
typedef Perftools__Profiles__Location pprof_location_t;
typedef Perftools__Profiles__Function pprof_function_t;

struct pprof_profile;

/* ---- errors ----------------------------------------------------------- */

/* Domain errors, returned negated like errnos (see pprof_strerror). */
enum pprof_error {
	PPROF_ERR_COMPRESSION = 5100, /* corrupt or truncated gzip/zstd stream */
	PPROF_ERR_PROTOBUF,	      /* not a protobuf Profile message */
	PPROF_ERR_INVALID,	      /* decodes, but breaks an invariant above */
};

/* Message for a negative error of this component (errno or PPROF_ERR). */
const char *pprof_strerror(int err);

/* ---- decoding --------------------------------------------------------- */

/*
 * Caps on what one decode may cost; a profile past any of them is
 * rejected with -E2BIG.  Zero fields take the default shown.  Pass NULL
 * for all defaults.
 */
struct pprof_limits {
	size_t sz;		 /* sizeof(struct pprof_limits) */
	size_t max_input_bytes;	 /* decompressed protobuf: 64 MiB */
	size_t max_memory_bytes; /* protobuf-c allocations while unpacking: 512 MiB */
	size_t max_samples;	 /* 4 Mi */
	size_t max_locations;	 /* 2 Mi */
	size_t max_mappings;	 /* 64 Ki */
	size_t max_functions;	 /* 2 Mi */
	size_t max_strings;	 /* 4 Mi */
	size_t max_sample_types; /* 64 */
	/* Charged for the decompressed bytes, protobuf-c's allocations and
	 * every later edit of the profile, before each is allocated: past
	 * its share or budget the decode (or the edit) fails with its error
	 * (-E2BIG, -EAGAIN).  Borrowed: it must outlive the profile.  NULL:
	 * only the caps above. */
	struct ember_mem_account *account;
};

/*
 * Decode a profile from data: gzip (1f 8b), zstd (28 b5 2f fd) or raw
 * protobuf.  It is decompressed into a buffer capped at max_input_bytes
 * (a decompression bomb fails with -E2BIG once the cap is reached, never
 * allocating past it), unpacked with protobuf-c under a memory budget,
 * checked against every invariant above, and indexed by id.
 *
 * On success returns 0 and *out is a new profile the caller frees with
 * pprof_profile_free(); data is not referenced afterwards.  On failure
 * returns -E2BIG (a limit), -ENOMEM, -PPROF_ERR_COMPRESSION,
 * -PPROF_ERR_PROTOBUF or -PPROF_ERR_INVALID, leaves *out unchanged and,
 * if why is non-NULL, writes a reason for the sender to why (at most
 * why_size bytes, NUL-terminated), e.g. "location 12: mapping_id 7 does
 * not exist".
 */
int pprof_decode(const void *data, size_t size, const struct pprof_limits *lim,
		 struct pprof_profile **out, char *why, size_t why_size);

/*
 * One layer of compression undone: data is gzip or zstd by its magic
 * (-PPROF_ERR_COMPRESSION otherwise, or when the stream is corrupt),
 * decompressed into out, whose cap bounds the output (-E2BIG at it).
 * For bodies an HTTP client compressed again (Content-Encoding) before
 * pprof_decode.  why as pprof_decode's.
 */
int pprof_decompress(const void *data, size_t size, struct ember_buf *out, char *why,
		     size_t why_size);

/*
 * A new empty profile: no samples, a string table holding only "".
 * Returns NULL on allocation failure.  Caller frees with pprof_profile_free().
 */
struct pprof_profile *pprof_profile_new(void);

/* Release a profile and everything in it.  Accepts NULL. */
void pprof_profile_free(struct pprof_profile *p);

/* ---- reading ---------------------------------------------------------- */

/* The whole message, to iterate over (n_location, location[i], ...). */
const pprof_message_t *pprof_message(const struct pprof_profile *p);

/* string_table[idx], or NULL when idx is out of range. */
const char *pprof_string(const struct pprof_profile *p, int64_t idx);

/* Lookups by id: O(1) when ids are 1..n in order (as Go writes them),
 * else O(log n).  NULL when no element has that id (0 never matches). */
const pprof_mapping_t *pprof_mapping_by_id(const struct pprof_profile *p, uint64_t id);
const pprof_location_t *pprof_location_by_id(const struct pprof_profile *p, uint64_t id);
const pprof_function_t *pprof_function_by_id(const struct pprof_profile *p, uint64_t id);
/* The position of the mapping with id in pprof_message(p)->mapping (as
 * fast as the lookup above), or SIZE_MAX when there is none: what a walk
 * that groups locations by mapping indexes its groups by. */
size_t pprof_mapping_index(const struct pprof_profile *p, uint64_t id);

/* ---- filling in symbolization results --------------------------------- */

/*
 * Index of s in the string table, adding it if absent (deduplicated:
 * the same string always gets the same index).  s is copied.  0 or
 * -ENOMEM, -E2BIG past 2^31 strings; *idx written on success only.
 */
int pprof_add_string(struct pprof_profile *p, const char *s, int64_t *idx);

/* A function as the symbolizer describes it; NULL strings mean "". */
struct pprof_function_desc {
	const char *name;	 /* human-readable (demangled) */
	const char *system_name; /* as the system names it (linkage name) */
	const char *filename;
	int64_t start_line;
};

/*
 * Id of a function with these fields, adding it (with the next free id)
 * if the profile has no identical one.  Strings are copied.  0 or
 * -ENOMEM; *id written on success only.
 */
int pprof_add_function(struct pprof_profile *p, const struct pprof_function_desc *f,
		       uint64_t *id);

/* One line of a location: innermost (inlined) first, the caller last. */
struct pprof_line {
	uint64_t function_id;
	int64_t line;
	int64_t column; /* dropped when PPROF_LINE_HAS_COLUMN is 0 */
};

/*
 * Replace the lines of location location_id with lines[0..n).  Every
 * function_id must name a function.  0, -ENOENT (no such location or
 * function; nothing changed) or -ENOMEM (nothing changed).
 */
int pprof_location_set_lines(struct pprof_profile *p, uint64_t location_id,
			     const struct pprof_line *lines, size_t n);

enum pprof_mapping_flags {
	PPROF_MAPPING_HAS_FUNCTIONS = 1 << 0,
	PPROF_MAPPING_HAS_FILENAMES = 1 << 1,
	PPROF_MAPPING_HAS_LINE_NUMBERS = 1 << 2,
	PPROF_MAPPING_HAS_INLINE_FRAMES = 1 << 3,
};

/* Set the four has_* fields of a mapping to flags (enum pprof_mapping_flags).
 * 0 or -ENOENT. */
int pprof_mapping_set_flags(struct pprof_profile *p, uint64_t mapping_id, unsigned flags);
/* Set a mapping's build_id to build_id (copied into the string table).
 * 0, -ENOENT, or -ENOMEM / the account's error. */
int pprof_mapping_set_build_id(struct pprof_profile *p, uint64_t mapping_id,
			       const char *build_id);

/* ---- building a profile (agents, tests) -------------------------------- */

/* Append a sample type ("cpu", "nanoseconds").  Only while the profile has
 * no samples: -EBUSY after.  0, -EBUSY or -ENOMEM. */
int pprof_add_sample_type(struct pprof_profile *p, const char *type, const char *unit);

/* Set period_type and period.  0 or -ENOMEM. */
int pprof_set_period(struct pprof_profile *p, const char *type, const char *unit,
		     int64_t period);

struct pprof_mapping_desc {
	uint64_t start, limit, offset; /* start <= limit */
	const char *filename;	       /* NULL means "" */
	const char *build_id;	       /* as pprof keeps it: hex; NULL means "" */
};

/* Add a mapping with the next free id.  0, -EINVAL (start > limit) or
 * -ENOMEM; *id written on success only. */
int pprof_add_mapping(struct pprof_profile *p, const struct pprof_mapping_desc *m,
		      uint64_t *id);

/* Add a location without lines at address in mapping mapping_id (0: none),
 * with the next free id.  0, -ENOENT or -ENOMEM. */
int pprof_add_location(struct pprof_profile *p, uint64_t mapping_id, uint64_t address,
		       uint64_t *id);

/* Add a sample: location ids leaf first, one value per sample type.
 * 0, -ENOENT (unknown location), -EINVAL (value count) or -ENOMEM. */
int pprof_add_sample(struct pprof_profile *p, const uint64_t *location_ids, size_t nlocs,
		     const int64_t *values, size_t nvalues);

/* A sample label: key and a string value (str non-NULL), or key and a
 * number (str NULL; num_unit NULL means none). */
struct pprof_sample_label {
	const char *key;
	const char *str;
	int64_t num;
	const char *num_unit;
};

/* pprof_add_sample() with labels[0..nlabels) (strings copied), as pprof
 * marks the base of a diff ("pprof::base" = "true"). */
int pprof_add_sample_labeled(struct pprof_profile *p, const uint64_t *location_ids,
			     size_t nlocs, const int64_t *values, size_t nvalues,
			     const struct pprof_sample_label *labels, size_t nlabels);

/* Set time_nanos and duration_nanos (when the profile was taken, for how
 * long).  Never fails. */
void pprof_set_time(struct pprof_profile *p, int64_t time_nanos, int64_t duration_nanos);

/* ---- Ember's extension: a location's frame type ----------------------- */

/*
 * Location field 1000 (varint, a string_table index): the frame's type as
 * OTLP's location attribute profile.frame.type gives it ("native",
 * "kernel", "jvm", "cpython", ...; docs/formats.md).  Not in
 * profile.proto: protobuf-c keeps it as an unknown field, decoding and
 * encoding, and readers that do not know it (go tool pprof) skip it.
 */
#define PPROF_LOCATION_FRAME_TYPE_FIELD 1000

/* The frame type of loc (a location of p), or NULL when it has none: no
 * field 1000, or one that is not a varint naming a string of p (ignored).
 * Points into p's string table, valid as pprof_string()'s answers. */
const char *pprof_location_frame_type(const struct pprof_profile *p,
				      const pprof_location_t *loc);

/* Set the frame type of location location_id to type (copied into the
 * string table; NULL or "" removes it).  0, -ENOENT (no such location) or
 * -ENOMEM / the account's error (nothing changed). */
int pprof_location_set_frame_type(struct pprof_profile *p, uint64_t location_id,
				  const char *type);

/* ---- encoding --------------------------------------------------------- */

/*
 * Append the profile as protobuf to out, gzip-compressed (zlib) when gzip
 * is true.  0, -E2BIG (past out's cap) or -ENOMEM; on failure out is left
 * as it was.  The output decodes to an equal profile.
 */
int pprof_encode(const struct pprof_profile *p, bool gzip, struct ember_buf *out);

#endif /* EMBER_WIRE_PPROF_H */
