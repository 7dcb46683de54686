/*
 * jfr_meta.c - a chunk's metadata event (docs/formats.md, "JFR
 * recordings"): its string table, then a tree of elements (a name, its
 * attributes as pairs of string indexes, its children) whose "class"
 * elements under "metadata" are the types of every value in the chunk
 * and their "field" children the fields, in the order the values hold
 * them.  Every index, count and the tree's depth are checked; the types
 * of the fields must be classes of the same metadata.  Then each class is
 * given what this reader does with it (enum jfr_role) and each field the
 * slot its value is kept in.  Outside input: fuzzed by tests/fuzz/fuzz_jfr.c.
 */
#include "jfr_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The metadata being read: its strings (offsets into x->text). */
struct meta {
	struct jfr_dec *x;
	const uint8_t *end;
	JFR_VEC(uint32_t) strs;
	uint32_t empty; /* "" */
};

/* The attributes of an element this reader looks at. */
struct attrs {
	const char *id, *name, *type, *cpool, *dim;
};

static int str_index(struct meta *m, const uint8_t **pos, const char **out)
{
	uint64_t i;

	EMBER_FORWARD_IF_ERROR(jfr_varcount(m->x, pos, m->end, m->strs.n ? m->strs.n - 1 : 0,
					    "a metadata string index", &i));
	EMBER_FAIL_IF(!m->strs.n, m->x->d, -EINVAL,
		      "jfr: chunk %zu: metadata elements without a string table", m->x->chunk);
	*out = jfr_text(m->x, m->strs.v[i]);
	return 0;
}

static int read_strings(struct meta *m, const uint8_t **pos)
{
	struct jfr_dec *x = m->x;
	uint64_t n;

	EMBER_FORWARD_IF_ERROR(jfr_varcount(x, pos, m->end, (uint64_t)(m->end - *pos),
					    "the metadata string count", &n));
	EMBER_FAIL_IF(n > x->lim.max_meta_strings, x->d, -E2BIG,
		      "jfr: chunk %zu: %llu metadata strings, past the limit of %zu", x->chunk,
		      (unsigned long long)n, x->lim.max_meta_strings);
	EMBER_FORWARD_IF_ERROR(jfr_reserve(x, (void **)&m->strs.v, &m->strs.alloc, n,
					   sizeof(*m->strs.v)));
	for (uint64_t i = 0; i < n; i++) {
		struct jfr_str s;

		EMBER_FORWARD_IF_ERROR(jfr_string(x, pos, m->end, &s));
		EMBER_FAIL_IF(s.is_ref, x->d, -EINVAL,
			      "jfr: chunk %zu: metadata string %llu refers to a constant pool",
			      x->chunk, (unsigned long long)i);
		m->strs.v[m->strs.n++] = s.set ? s.off : m->empty;
	}
	return 0;
}

static void attr_keep(struct attrs *a, const char *k, const char *v)
{
	if (strcmp(k, "id") == 0)
		a->id = v;
	else if (strcmp(k, "name") == 0)
		a->name = v;
	else if (strcmp(k, "class") == 0)
		a->type = v;
	else if (strcmp(k, "constantPool") == 0)
		a->cpool = v;
	else if (strcmp(k, "dimension") == 0)
		a->dim = v;
}

/* A decimal type id. */
static int type_id(struct meta *m, const char *s, int64_t *out)
{
	char *e;
	long long v;

	errno = 0;
	v = s ? strtoll(s, &e, 10) : 0;
	EMBER_FAIL_IF(!s || !*s || *e || errno || v < 0, m->x->d, -EINVAL,
		      "jfr: chunk %zu: metadata type id '%.32s' is not a number", m->x->chunk,
		      s ? s : "(none)");
	*out = v;
	return 0;
}

static int add_class(struct meta *m, const struct attrs *a)
{
	struct jfr_dec *x = m->x;
	struct jfr_class c = { .first_field = (uint32_t)x->fields.n };
	int err;

	EMBER_FAIL_IF(x->classes.n >= x->lim.max_classes, x->d, -E2BIG,
		      "jfr: chunk %zu: more than %zu classes in its metadata", x->chunk,
		      x->lim.max_classes);
	EMBER_FORWARD_IF_ERROR(type_id(m, a->id, &c.id));
	c.name_off = (uint32_t)(a->name ? a->name - x->text.v : m->empty);
	return JFR_PUSH(x, &x->classes, c, err);
}

static int add_field(struct meta *m, const struct attrs *a)
{
	struct jfr_dec *x = m->x;
	struct jfr_class *c = &x->classes.v[x->classes.n - 1];
	struct jfr_field f = { .slot = JFR_SLOT_NONE };
	int err;

	EMBER_FAIL_IF(c->n_fields >= x->lim.max_fields, x->d, -E2BIG,
		      "jfr: chunk %zu: class '%s' has more than %zu fields", x->chunk,
		      jfr_text(x, c->name_off), x->lim.max_fields);
	EMBER_FORWARD_IF_ERROR(type_id(m, a->type, &f.type_id));
	f.cpool = a->cpool && strcmp(a->cpool, "true") == 0;
	f.array = a->dim && strcmp(a->dim, "0") != 0;
	f.name_off = (uint32_t)(a->name ? a->name - x->text.v : m->empty);
	EMBER_FORWARD_IF_ERROR(JFR_PUSH(x, &x->fields, f, err));
	c->n_fields++;
	return 0;
}

/*
 * One element and its children.  level: -1 the root, 0 its children, 1
 * under "metadata" (classes), 2 under a class (fields), 3 anything else.
 */
static int element(struct meta *m, const uint8_t **pos, unsigned depth, int level)
{
	struct jfr_dec *x = m->x;
	struct attrs a = { 0 };
	const char *name;
	uint64_t n;

	EMBER_FAIL_IF(depth > x->lim.max_nesting, x->d, -EINVAL,
		      "jfr: chunk %zu: metadata elements nested deeper than %zu", x->chunk,
		      x->lim.max_nesting);
	EMBER_FORWARD_IF_ERROR(str_index(m, pos, &name));
	EMBER_FORWARD_IF_ERROR(jfr_varcount(x, pos, m->end, (uint64_t)(m->end - *pos) / 2,
					    "an attribute count", &n));
	for (uint64_t i = 0; i < n; i++) {
		const char *k, *v;

		EMBER_FORWARD_IF_ERROR(str_index(m, pos, &k));
		EMBER_FORWARD_IF_ERROR(str_index(m, pos, &v));
		attr_keep(&a, k, v);
	}
	if (level == 1 && strcmp(name, "class") == 0)
		EMBER_FORWARD_IF_ERROR(add_class(m, &a));
	else if (level == 2 && strcmp(name, "field") == 0)
		EMBER_FORWARD_IF_ERROR(add_field(m, &a));
	else if (level == 1 || level == 2)
		level = 3; /* annotations, settings: read and passed over */
	EMBER_FORWARD_IF_ERROR(jfr_varcount(x, pos, m->end, (uint64_t)(m->end - *pos) / 3,
					    "a child count", &n));
	level = level < 0    ? 0
		: level == 0 ? (strcmp(name, "metadata") == 0 ? 1 : 3)
		: level < 3  ? level + 1
			     : 3;
	for (uint64_t i = 0; i < n; i++)
		EMBER_FORWARD_IF_ERROR(element(m, pos, depth + 1, level));
	return 0;
}

/* ---- what each class is to this reader -------------------------------------------------- */

static const struct {
	const char *name;
	uint8_t role, kind;
} roles[] = {
	{ "jdk.ExecutionSample", JFR_ROLE_EVENT, JFR_KIND_CPU },
	{ "jdk.ObjectAllocationInNewTLAB", JFR_ROLE_EVENT, JFR_KIND_ALLOC_IN_NEW_TLAB },
	{ "jdk.ObjectAllocationOutsideTLAB", JFR_ROLE_EVENT, JFR_KIND_ALLOC_OUTSIDE_TLAB },
	{ "jdk.ObjectAllocationSample", JFR_ROLE_EVENT, JFR_KIND_ALLOC_SAMPLE },
	{ "jdk.JavaMonitorEnter", JFR_ROLE_EVENT, JFR_KIND_LOCK },
	{ "jdk.ThreadPark", JFR_ROLE_EVENT, JFR_KIND_PARK },
	{ "java.lang.Class", JFR_ROLE_CLASS, 0 },
	{ "jdk.types.Method", JFR_ROLE_METHOD, 0 },
	{ "jdk.types.Symbol", JFR_ROLE_SYMBOL, 0 },
	{ "java.lang.String", JFR_ROLE_STRING, 0 },
	{ "jdk.types.ThreadState", JFR_ROLE_STATE, 0 },
	{ "jdk.types.StackTrace", JFR_ROLE_STACKTRACE, 0 },
	{ "jdk.types.StackFrame", JFR_ROLE_FRAME, 0 },
};

static const char *const prims[] = {
	[JFR_PRIM_BOOLEAN] = "boolean", [JFR_PRIM_BYTE] = "byte",     [JFR_PRIM_CHAR] = "char",
	[JFR_PRIM_SHORT] = "short",	[JFR_PRIM_INT] = "int",	      [JFR_PRIM_LONG] = "long",
	[JFR_PRIM_FLOAT] = "float",	[JFR_PRIM_DOUBLE] = "double", [JFR_PRIM_STRING] = "java.lang.String",
};

/* The value field of each event kind (bytes or a duration). */
static const char *const value_field[JFR_KIND_COUNT] = {
	[JFR_KIND_ALLOC_IN_NEW_TLAB] = "tlabSize",
	[JFR_KIND_ALLOC_OUTSIDE_TLAB] = "allocationSize",
	[JFR_KIND_ALLOC_SAMPLE] = "weight",
	[JFR_KIND_LOCK] = "duration",
	[JFR_KIND_PARK] = "duration",
};

static int8_t slot_of(const struct jfr_class *c, const char *f)
{
	switch (c->role) {
	case JFR_ROLE_EVENT:
		return strcmp(f, "stackTrace") == 0 ? JFR_SLOT_STACK
		       : strcmp(f, "state") == 0    ? JFR_SLOT_STATE
		       : strcmp(f, "contextId") == 0 ? JFR_SLOT_CONTEXT
		       : value_field[c->kind] && strcmp(f, value_field[c->kind]) == 0
			       ? JFR_SLOT_VALUE
			       : JFR_SLOT_NONE;
	case JFR_ROLE_FRAME:
		return strcmp(f, "method") == 0	      ? JFR_SLOT_STACK
		       : strcmp(f, "lineNumber") == 0 ? JFR_SLOT_VALUE
						      : JFR_SLOT_NONE;
	case JFR_ROLE_METHOD:
		return strcmp(f, "type") == 0	? JFR_SLOT_STACK
		       : strcmp(f, "name") == 0 ? JFR_SLOT_STATE
						: JFR_SLOT_NONE;
	case JFR_ROLE_CLASS:
	case JFR_ROLE_SYMBOL:
	case JFR_ROLE_STATE:
		return strcmp(f, "name") == 0 || strcmp(f, "string") == 0 ? JFR_SLOT_STATE
									   : JFR_SLOT_NONE;
	default:
		return JFR_SLOT_NONE;
	}
}

static void class_describe(struct jfr_class *c, const char *name)
{
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (prims[i] && strcmp(name, prims[i]) == 0)
			c->prim = (uint8_t)i;
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (strcmp(name, roles[i].name) == 0) {
			c->role = roles[i].role;
			c->kind = roles[i].kind;
		}
}

static int by_id(const void *a, const void *b)
{
	int64_t x = ((const struct jfr_class *)a)->id, y = ((const struct jfr_class *)b)->id;

	return (x > y) - (x < y);
}

const struct jfr_class *jfr_class_find(const struct jfr_dec *x, int64_t id)
{
	struct jfr_class key = { .id = id };

	return x->classes.n ? bsearch(&key, x->classes.v, x->classes.n, sizeof(key), by_id)
			    : NULL;
}

/* Classes sorted, unique; field types resolved; roles and slots given. */
static int resolve(struct jfr_dec *x)
{
	if (x->classes.n)
		qsort(x->classes.v, x->classes.n, sizeof(*x->classes.v), by_id);
	for (size_t i = 0; i < x->classes.n; i++) {
		struct jfr_class *c = &x->classes.v[i];

		EMBER_FAIL_IF(i && c[-1].id == c->id, x->d, -EINVAL,
			      "jfr: chunk %zu: class id %lld defined twice in its metadata",
			      x->chunk, (long long)c->id);
		class_describe(c, jfr_text(x, c->name_off));
		c->fields = x->fields.v ? x->fields.v + c->first_field : NULL; /* no fields at all */
	}
	for (size_t i = 0; i < x->classes.n; i++) {
		struct jfr_class *c = &x->classes.v[i];

		for (uint32_t k = 0; k < c->n_fields; k++) {
			struct jfr_field *f = &x->fields.v[c->first_field + k];
			const char *fname = jfr_text(x, f->name_off);

			f->type = jfr_class_find(x, f->type_id);
			EMBER_FAIL_IF(!f->type, x->d, -EINVAL,
				      "jfr: chunk %zu: field '%s' of class '%s' has type %lld, which "
				      "the metadata does not define",
				      x->chunk, fname, jfr_text(x, c->name_off),
				      (long long)f->type_id);
			if (!f->array && (f->cpool || f->type->prim))
				f->slot = slot_of(c, fname);
		}
	}
	return 0;
}

int jfr_meta_read(struct jfr_dec *x, const uint8_t *pos, const uint8_t *end)
{
	struct meta m = { .x = x, .end = end };
	uint64_t v;
	int err;

	for (int i = 0; i < 3; i++) /* start, duration, metadata id */
		EMBER_FORWARD_IF_ERROR(jfr_varlong(x, &pos, end, &v));
	m.empty = (uint32_t)x->text.n;
	err = JFR_PUSH(x, &x->text, '\0', err);
	if (!err)
		err = read_strings(&m, &pos);
	if (!err)
		err = element(&m, &pos, 0, -1);
	free(m.strs.v);
	if (!err)
		err = resolve(x);
	return err;
}
