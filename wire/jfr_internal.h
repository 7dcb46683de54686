/*
 * jfr_internal.h - what only the JFR reader (wire/jfr_*.c) sees.
 *
 * One concept a file:
 *   jfr_read.c    the recording's integers and strings, the decoder's memory
 *   jfr_meta.c    a chunk's metadata event: classes and their fields
 *   jfr_values.c  values read by the metadata: constant pools and events
 *   jfr_chunk.c   jfr_decode: chunk headers, the walk over their events
 *   jfr_build.c   the events resolved into one pprof profile a type
 *   jfr_labels.c  Pyroscope's LabelsSnapshot (the form's labels field)
 *
 * A chunk is read in two steps: its metadata event (at the header's
 * offset) gives the classes; then every event from the header's end to
 * the chunk's end is read by its class: checkpoints fill the constant
 * pools, the sample events are kept (their stack trace, state, value and
 * context IDs).  At the chunk's end the events are resolved through the
 * pools (IDs are a chunk's own) into the profiles, and the chunk's
 * tables are emptied for the next.
 */
#ifndef EMBER_WIRE_JFR_INTERNAL_H
#define EMBER_WIRE_JFR_INTERNAL_H

#include "jfr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JFR_HEADER_SIZE 68
#define JFR_EVENT_METADATA 0
#define JFR_EVENT_CHECKPOINT 1

/* Primitive types, by their class name (0: a class of fields). */
enum jfr_prim {
	JFR_PRIM_NONE,
	JFR_PRIM_BOOLEAN,
	JFR_PRIM_BYTE,
	JFR_PRIM_CHAR,
	JFR_PRIM_SHORT,
	JFR_PRIM_INT,
	JFR_PRIM_LONG,
	JFR_PRIM_FLOAT,
	JFR_PRIM_DOUBLE,
	JFR_PRIM_STRING,
};

/* What a class is to this reader: a constant pool kept, an event kept. */
enum jfr_role {
	JFR_ROLE_NONE,
	JFR_ROLE_EVENT,		/* one of enum jfr_kind (jfr_class.kind) */
	JFR_ROLE_CLASS,		/* java.lang.Class */
	JFR_ROLE_METHOD,	/* jdk.types.Method */
	JFR_ROLE_SYMBOL,	/* jdk.types.Symbol */
	JFR_ROLE_STRING,	/* java.lang.String (its pool) */
	JFR_ROLE_STATE,		/* jdk.types.ThreadState */
	JFR_ROLE_STACKTRACE,	/* jdk.types.StackTrace */
	JFR_ROLE_FRAME,		/* jdk.types.StackFrame */
	JFR_ROLE_COUNT
};

/* Where a field's value is kept in a record (JFR_SLOT_NONE: not kept). */
enum jfr_slot {
	JFR_SLOT_NONE = -1,
	JFR_SLOT_STACK,		/* event: stackTrace; frame: method; method: type */
	JFR_SLOT_STATE,		/* event: state; method: name; class: name */
	JFR_SLOT_VALUE,		/* event: bytes or duration; frame: lineNumber */
	JFR_SLOT_CONTEXT,	/* event: contextId */
	JFR_SLOT_COUNT
};

struct jfr_class;

struct jfr_field {
	int64_t type_id;
	uint32_t name_off;	      /* into the decoder's text */
	const struct jfr_class *type; /* resolved after the metadata is read */
	int8_t slot;		      /* enum jfr_slot */
	bool cpool, array;
};

struct jfr_class {
	int64_t id;
	uint32_t name_off;	/* into the decoder's text */
	uint8_t prim;		/* enum jfr_prim */
	uint8_t role;		/* enum jfr_role */
	uint8_t kind;		/* enum jfr_kind, when role is JFR_ROLE_EVENT */
	const struct jfr_field *fields; /* set once the metadata is read */
	uint32_t first_field, n_fields; /* in the decoder's fields */
};

/* A string read: text in the decoder's text (off, len), or a reference
 * to the java.lang.String pool (is_ref, ref), or none. */
struct jfr_str {
	uint32_t off, len;
	int64_t ref;
	bool is_ref, set;
};

/* The kept fields of one value. */
struct jfr_rec {
	int64_t v[JFR_SLOT_COUNT];
	struct jfr_str s;	/* the first string read (symbol, state name) */
	uint32_t first_frame, n_frames; /* a stack trace's frames */
};

/* One constant of a kept pool: its id and record. */
struct jfr_const {
	int64_t id;
	struct jfr_rec r;
};

struct jfr_frame {
	int64_t method, line;
};

struct jfr_event {
	int64_t stack, state, value, context;
	uint8_t kind;
};

#define JFR_VEC(T)                                                           \
	struct {                                                             \
		T *v;                                                        \
		size_t n, alloc;                                             \
	}

struct jfr_builder;
struct jfr_labels;

/* The decoder: the recording's limits and profiles, the current chunk's tables. */
struct jfr_dec {
	struct jfr_limits lim;
	struct ember_diag *d;
	int64_t cpu_period;
	struct jfr_labels *labels;	/* the form's labels field, or NULL */
	uint64_t work;			/* values left to read (a bound on zero-byte values) */
	size_t n_events;		/* of the recording */
	size_t chunk;			/* its index, for messages */
	const uint8_t *base;		/* the chunk's first byte, for offsets */
	JFR_VEC(char) text;		/* strings of the chunk */
	JFR_VEC(struct jfr_class) classes; /* sorted by id after the metadata */
	JFR_VEC(struct jfr_field) fields;  /* every class's, in one array */
	JFR_VEC(struct jfr_const) pools[JFR_ROLE_COUNT];
	JFR_VEC(struct jfr_frame) frames;
	JFR_VEC(struct jfr_event) events;
	JFR_VEC(uint64_t) locs;		/* one stack's location IDs, while building */
	struct jfr_builder *b[JFR_KIND_COUNT];
	struct jfr_recording *rec;
};

/* ---- jfr_read.c ---------------------------------------------------------------- */

/* Room for need elements of elem bytes in *v (capacity *alloc), the
 * growth charged to the account first: 0, -E2BIG, -EAGAIN, -ENOMEM. */
int jfr_reserve(struct jfr_dec *x, void **v, size_t *alloc, size_t need, size_t elem);
/* Append val to vec (a JFR_VEC) through jfr_reserve; err: an int lvalue. */
#define JFR_PUSH(x, vec, val, err)                                           \
	((err) = jfr_reserve((x), (void **)&(vec)->v, &(vec)->alloc, (vec)->n + 1, \
			     sizeof(*(vec)->v)),                               \
	 (err) ? (err) : ((vec)->v[(vec)->n++] = (val), 0))

/* The recording's compressed integers: 7 bits a byte, low first, the
 * 9th byte carrying 8 (JFR's, not LEB128's, last byte).  -EINVAL with
 * why set when the bytes run out. */
int jfr_varlong(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, uint64_t *out);
/* A varlong that must be at most max (a count, an index): -EINVAL above. */
int jfr_varcount(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, uint64_t max,
		 const char *what, uint64_t *out);
/* A string in one of its encodings (null, empty, a String pool reference,
 * UTF-8, UTF-16 chars, Latin-1) into out, its text appended to x->text
 * (as UTF-8). */
int jfr_string(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, struct jfr_str *out);
/* x->text at off (NUL-terminated). */
static inline const char *jfr_text(const struct jfr_dec *x, uint32_t off)
{
	return x->text.v + off;
}
/* The offset of a chunk position, for messages. */
static inline size_t jfr_off(const struct jfr_dec *x, const uint8_t *pos)
{
	return (size_t)(pos - x->base);
}
/* Empty the chunk's tables (kept allocated). */
void jfr_chunk_reset(struct jfr_dec *x);
void jfr_dec_release(struct jfr_dec *x);

/* ---- jfr_meta.c ----------------------------------------------------------------- */

/* The metadata event at [pos, end) into x->classes. */
int jfr_meta_read(struct jfr_dec *x, const uint8_t *pos, const uint8_t *end);
/* The class with id, or NULL. */
const struct jfr_class *jfr_class_find(const struct jfr_dec *x, int64_t id);

/* ---- jfr_values.c ----------------------------------------------------------------- */

/* A checkpoint event's body at [pos, end) (after its size and type). */
int jfr_checkpoint_read(struct jfr_dec *x, const uint8_t *pos, const uint8_t *end);
/* An event of class c, its body at [pos, end): kept when c is a sample event. */
int jfr_event_read(struct jfr_dec *x, const struct jfr_class *c, const uint8_t *pos,
		   const uint8_t *end);
/* The constant of a pool with id, or NULL (pools sorted by jfr_pools_sort). */
const struct jfr_const *jfr_const_find(const struct jfr_dec *x, enum jfr_role pool, int64_t id);
void jfr_pools_sort(struct jfr_dec *x);

/* ---- jfr_build.c ------------------------------------------------------------------- */

/* The chunk's events resolved into the profiles (x->b), ticks_per_s
 * converting durations into ns. */
int jfr_build_chunk(struct jfr_dec *x, uint64_t ticks_per_s);
/* The profiles built moved into x->rec. */
int jfr_build_finish(struct jfr_dec *x);
void jfr_builders_free(struct jfr_dec *x);

/* ---- jfr_labels.c ------------------------------------------------------------------ */

/* A LabelsSnapshot message into *out (charged to x's account). */
int jfr_labels_parse(struct jfr_dec *x, const uint8_t *data, size_t len,
		     struct jfr_labels **out);
/* The labels of context id: pairs (key, value) of strings, *n of them;
 * 0 pairs when the context is unknown. */
void jfr_labels_of(const struct jfr_labels *l, int64_t id, const char *const **pairs,
		   size_t *n);
void jfr_labels_free(struct jfr_labels *l);

#endif /* EMBER_WIRE_JFR_INTERNAL_H */
