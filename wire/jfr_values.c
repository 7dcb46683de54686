/*
 * jfr_values.c - values read by the metadata (docs/formats.md, "JFR
 * recordings"): a value of a class is its fields in order, each a
 * primitive (booleans and bytes one byte, other integers compressed,
 * floats and doubles 4 and 8 bytes big-endian, strings in their
 * encodings), a reference into a constant pool (a compressed ID) when
 * the field says constantPool, a value of its class read in place
 * otherwise, and a count first when it is an array.  Checkpoint events
 * hold the constant pools (a class ID, a count, then ID and value pairs);
 * the pools and the events this reader keeps are recorded as jfr_rec.
 * Every value is read within its event's bytes; the nesting and the
 * number of values read (a value may take no bytes: a class of no
 * fields) are bounded.  Outside input: fuzzed by tests/fuzz/fuzz_jfr.c.
 */
#include "jfr_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int read_value(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end,
		      const struct jfr_class *c, unsigned depth, struct jfr_rec *rec);

/* A primitive of type prim: a number into *num, a string into *s. */
static int read_prim(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, uint8_t prim,
		     int64_t *num, struct jfr_str *s)
{
	uint64_t v = 0;

	switch (prim) {
	case JFR_PRIM_BOOLEAN:
	case JFR_PRIM_BYTE:
	case JFR_PRIM_FLOAT:
	case JFR_PRIM_DOUBLE: {
		size_t n = prim == JFR_PRIM_FLOAT ? 4 : prim == JFR_PRIM_DOUBLE ? 8 : 1;

		EMBER_FAIL_IF(!ember_cur_has(*pos, end, n), x->d, -EINVAL,
			      "jfr: chunk %zu offset %zu: a value runs past the end of its event",
			      x->chunk, jfr_off(x, *pos));
		for (size_t i = 0; i < n; i++)
			v = v << 8 | (*pos)[i];
		*pos += n;
		break;
	}
	case JFR_PRIM_STRING:
		return jfr_string(x, pos, end, s);
	default:
		EMBER_FORWARD_IF_ERROR(jfr_varlong(x, pos, end, &v));
		break;
	}
	/* Java's signed types written as their unsigned bits: a line number -1
	 * is 0xffffffff */
	*num = prim == JFR_PRIM_INT	? (int64_t)(int32_t)(uint32_t)v
	       : prim == JFR_PRIM_SHORT ? (int64_t)(int16_t)(uint16_t)v
	       : prim == JFR_PRIM_BYTE	? (int64_t)(int8_t)(uint8_t)v
					: (int64_t)v;
	return 0;
}

/* A stack frame of the stack trace rec, appended to x->frames. */
static int read_frame(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end,
		      const struct jfr_class *c, unsigned depth, struct jfr_rec *rec)
{
	struct jfr_rec fr = { .v = { 0 } };
	struct jfr_frame f;
	int err;

	EMBER_FORWARD_IF_ERROR(read_value(x, pos, end, c, depth, &fr));
	EMBER_FAIL_IF(rec->n_frames >= x->lim.max_stack_depth, x->d, -E2BIG,
		      "jfr: chunk %zu offset %zu: a stack trace of more than %zu frames",
		      x->chunk, jfr_off(x, *pos), x->lim.max_stack_depth);
	f.method = fr.v[JFR_SLOT_STACK];
	f.line = fr.v[JFR_SLOT_VALUE];
	EMBER_FORWARD_IF_ERROR(JFR_PUSH(x, &x->frames, f, err));
	rec->n_frames++;
	return 0;
}

/* One value of field f of a value of role owner (rec: its record, or NULL). */
static int read_one(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end,
		    const struct jfr_field *f, unsigned depth, uint8_t owner, struct jfr_rec *rec)
{
	int64_t num = 0;
	struct jfr_str s = { 0 };

	EMBER_FAIL_IF(!x->work, x->d, -E2BIG,
		      "jfr: chunk %zu: more values than a recording of its size can hold",
		      x->chunk);
	x->work--;
	if (f->cpool) {
		uint64_t v;

		EMBER_FORWARD_IF_ERROR(jfr_varlong(x, pos, end, &v));
		num = (int64_t)v;
	} else if (f->type->prim) {
		EMBER_FORWARD_IF_ERROR(read_prim(x, pos, end, f->type->prim, &num, &s));
	} else if (f->type->role == JFR_ROLE_FRAME && owner == JFR_ROLE_STACKTRACE && rec) {
		return read_frame(x, pos, end, f->type, depth + 1, rec);
	} else {
		return read_value(x, pos, end, f->type, depth + 1, NULL);
	}
	if (rec && f->slot != JFR_SLOT_NONE) {
		rec->v[f->slot] = num;
		if (s.set && !rec->s.set)
			rec->s = s;
	}
	return 0;
}

static int read_field(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end,
		      const struct jfr_field *f, unsigned depth, uint8_t owner, struct jfr_rec *rec)
{
	uint64_t n = 1;

	if (f->array)
		EMBER_FORWARD_IF_ERROR(jfr_varcount(x, pos, end, (uint64_t)(end - *pos),
						    "an array length", &n));
	for (uint64_t i = 0; i < n; i++)
		EMBER_FORWARD_IF_ERROR(read_one(x, pos, end, f, depth, owner, rec));
	return 0;
}

static int read_value(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end,
		      const struct jfr_class *c, unsigned depth, struct jfr_rec *rec)
{
	EMBER_FAIL_IF(depth > x->lim.max_nesting, x->d, -EINVAL,
		      "jfr: chunk %zu offset %zu: values of '%s' nested deeper than %zu",
		      x->chunk, jfr_off(x, *pos), jfr_text(x, c->name_off), x->lim.max_nesting);
	if (c->prim) { /* a pool of strings (or numbers) */
		int64_t num = 0;
		struct jfr_str s = { 0 };

		EMBER_FORWARD_IF_ERROR(read_prim(x, pos, end, c->prim, &num, &s));
		if (rec) {
			rec->v[0] = num;
			rec->s = s;
		}
		return 0;
	}
	if (rec)
		rec->first_frame = (uint32_t)x->frames.n;
	for (uint32_t i = 0; i < c->n_fields; i++)
		EMBER_FORWARD_IF_ERROR(read_field(x, pos, end, &c->fields[i], depth, c->role, rec));
	return 0;
}

/* ---- constant pools ----------------------------------------------------------------- */

static bool kept_pool(uint8_t role)
{
	return role != JFR_ROLE_NONE && role != JFR_ROLE_EVENT && role != JFR_ROLE_FRAME;
}

/* One pool of a checkpoint: a class ID, a count, the constants. */
static int read_pool(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, size_t *total)
{
	const struct jfr_class *c;
	uint64_t id, n;
	int err;

	EMBER_FORWARD_IF_ERROR(jfr_varlong(x, pos, end, &id));
	c = jfr_class_find(x, (int64_t)id);
	EMBER_FAIL_IF(!c, x->d, -EINVAL,
		      "jfr: chunk %zu offset %zu: a constant pool of class %llu, which the "
		      "metadata does not define",
		      x->chunk, jfr_off(x, *pos), (unsigned long long)id);
	EMBER_FORWARD_IF_ERROR(jfr_varcount(x, pos, end, (uint64_t)(end - *pos),
					    "a constant count", &n));
	EMBER_FAIL_IF(n > x->lim.max_constants - *total, x->d, -E2BIG,
		      "jfr: chunk %zu: more than %zu constants", x->chunk, x->lim.max_constants);
	*total += n;
	for (uint64_t i = 0; i < n; i++) {
		struct jfr_const k = { .r.v = { 0 } };
		uint64_t key;

		EMBER_FORWARD_IF_ERROR(jfr_varlong(x, pos, end, &key));
		k.id = (int64_t)key;
		EMBER_FORWARD_IF_ERROR(read_value(x, pos, end, c, 0, kept_pool(c->role) ? &k.r : NULL));
		if (kept_pool(c->role) && JFR_PUSH(x, &x->pools[c->role], k, err))
			return err;
	}
	return 0;
}

int jfr_checkpoint_read(struct jfr_dec *x, const uint8_t *pos, const uint8_t *end)
{
	size_t total = 0;
	uint64_t v, n;

	for (size_t i = 0; i < JFR_ROLE_COUNT; i++)
		total += x->pools[i].n;
	for (int i = 0; i < 4; i++) /* start, duration, delta, type */
		EMBER_FORWARD_IF_ERROR(jfr_varlong(x, &pos, end, &v));
	EMBER_FORWARD_IF_ERROR(jfr_varcount(x, &pos, end, (uint64_t)(end - pos), "a pool count",
					    &n));
	for (uint64_t i = 0; i < n; i++)
		EMBER_FORWARD_IF_ERROR(read_pool(x, &pos, end, &total));
	return 0;
}

int jfr_event_read(struct jfr_dec *x, const struct jfr_class *c, const uint8_t *pos,
		   const uint8_t *end)
{
	struct jfr_rec rec = { .v = { 0 } };
	struct jfr_event e;
	int err;

	if (c->role != JFR_ROLE_EVENT)
		return 0;
	EMBER_FAIL_IF(x->n_events >= x->lim.max_events, x->d, -E2BIG,
		      "jfr: more than %zu sample events", x->lim.max_events);
	rec.v[JFR_SLOT_STATE] = INT64_MIN; /* no state field: running */
	EMBER_FORWARD_IF_ERROR(read_value(x, &pos, end, c, 0, &rec));
	e = (struct jfr_event){ .stack = rec.v[JFR_SLOT_STACK], .state = rec.v[JFR_SLOT_STATE],
				.value = rec.v[JFR_SLOT_VALUE], .context = rec.v[JFR_SLOT_CONTEXT],
				.kind = c->kind };
	EMBER_FORWARD_IF_ERROR(JFR_PUSH(x, &x->events, e, err));
	x->n_events++;
	return 0;
}

/* ---- lookups --------------------------------------------------------------------------- */

static int const_cmp(const void *a, const void *b)
{
	int64_t p = ((const struct jfr_const *)a)->id, q = ((const struct jfr_const *)b)->id;

	return (p > q) - (p < q);
}

void jfr_pools_sort(struct jfr_dec *x)
{
	for (size_t i = 0; i < JFR_ROLE_COUNT; i++)
		if (x->pools[i].n)
			qsort(x->pools[i].v, x->pools[i].n, sizeof(*x->pools[i].v), const_cmp);
}

const struct jfr_const *jfr_const_find(const struct jfr_dec *x, enum jfr_role pool, int64_t id)
{
	struct jfr_const key = { .id = id };

	return x->pools[pool].n ? bsearch(&key, x->pools[pool].v, x->pools[pool].n, sizeof(key),
					  const_cmp)
				: NULL;
}
