/*
 * pb_json_read.c - a JSON body read into a protobuf-c message by proto3's
 * JSON mapping (the protobuf documentation, "ProtoJSON Format"), the
 * schema being the message's descriptor itself (wire_json_read_message,
 * wire_internal.h).  Shared by OTLP's JSON encoding (otlp_json.c, which
 * adds OTLP's hex trace and span IDs) and the JSON codec of Pyroscope's
 * query API over Connect (querier_decode.c).
 *
 * A JSON object is a message, its keys matched to the descriptor's fields
 * by their lowerCamelCase JSON names or their proto names; an array is a
 * repeated field.  yajl tokenizes (a streaming parser that builds no
 * tree), so what a body costs is the message alone, allocated through the
 * same budgeted allocator as protobuf-c's unpacking (pb_unpack.c), plus
 * yajl's own small buffers, charged to the same account (yajl_account.c).
 * Submessages nest at most max_nesting deep and any JSON value at most
 * twice that, a repeated field holds at most max_entries, both checked as
 * they grow, so a bomb of nesting or of entries stops at the first one
 * too many.
 *
 * Values as the mapping gives them: 64-bit integers as decimal strings
 * or numbers (32-bit ones too), floats as numbers or "NaN" / "Infinity",
 * enums as integers or their names, bytes as base64 (standard or URL
 * alphabet, padded or not) or, where the caller's hex_bytes says so, hex
 * of a fixed length, null as the field's default.  Unknown keys are
 * ignored with their values, as receivers must; a key given twice, or two
 * members of one oneof, is refused.  A refusal names the value's JSON
 * path ("resourceProfiles[0].scopeProfiles[0].profiles[0].samples[3].values[0]").
 */
#include "wire_internal.h"

#include <math.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define NUM_TEXT_MAX 64 /* bytes of a number's text */
#define PATH_SHOWN 160	/* bytes of a path said: its start and its end */

enum level_kind { L_MSG, L_ARRAY };

/* One open JSON container: a message, or a repeated field's array. */
struct level {
	enum level_kind kind;
	ProtobufCMessage *msg;		   /* the message, or the one holding the array */
	const ProtobufCFieldDescriptor *f; /* L_MSG: the current key's field (NULL:
					      unknown); L_ARRAY: the repeated field */
	const ProtobufCFieldDescriptor *via; /* the field this container is the value of */
	size_t idx;			   /* its index in an array, or SIZE_MAX */
	uint64_t seen;			   /* L_MSG: fields given, by index */
	size_t alloc;			   /* L_ARRAY: entries allocated */
};

/* A JSON value as yajl gives it. */
enum jtype { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_MAP, J_ARRAY };
struct jv {
	enum jtype t;
	const char *s; /* J_NUMBER, J_STRING: the text (not NUL-ended) */
	size_t len;
	int b;	       /* J_BOOL */
};

struct json_reader {
	const struct wire_json_read *o;
	struct wire_pb_budget b;
	ProtobufCAllocator a;
	ProtobufCMessage *root;
	struct level *lv; /* [0, depth) open, max_depth of them */
	size_t depth, max_depth, msgs, max_entries;
	size_t skip;	  /* open containers of an unknown key's value */
	int err;
	char path[4096], shown[PATH_SHOWN + 8];
};

/* ---- failures ---------------------------------------------------------------- */

/* A failure (sticky); returns 0, which tells yajl to stop. */
static int stop(struct json_reader *r, int err)
{
	if (!r->err)
		r->err = err;
	return 0;
}

static int memory_error(struct json_reader *r, int err)
{
	return wire_memory_error(r->o->d, r->o->tag, r->o->account, err);
}

static void put(char *buf, size_t size, size_t *at, const char *s)
{
	int n = snprintf(buf + *at, size - *at, "%s", s);

	*at += n < 0 ? 0 : (size_t)n < size - *at ? (size_t)n : size - *at - 1;
}

/* f's JSON name (protoc's json_name). */
static void put_name(char *buf, size_t size, size_t *at, const ProtobufCFieldDescriptor *f)
{
	char name[64];

	wire_json_name(f->name, name, sizeof(name));
	put(buf, size, at, *at ? "." : "");
	put(buf, size, at, name);
}

static void put_index(char *buf, size_t size, size_t *at, size_t i)
{
	char n[32];

	snprintf(n, sizeof(n), "[%zu]", i);
	put(buf, size, at, n);
}

/* The JSON path of the value being read, into r->path, shortened into
 * r->shown (its start, "...", its end) past PATH_SHOWN bytes. */
static const char *where(struct json_reader *r)
{
	size_t at = 0;

	r->path[0] = '\0';
	for (size_t i = 1; i < r->depth; i++) {
		if (r->lv[i].via)
			put_name(r->path, sizeof(r->path), &at, r->lv[i].via);
		if (r->lv[i].idx != SIZE_MAX)
			put_index(r->path, sizeof(r->path), &at, r->lv[i].idx);
	}
	if (r->depth && r->lv[r->depth - 1].kind == L_MSG && r->lv[r->depth - 1].f)
		put_name(r->path, sizeof(r->path), &at, r->lv[r->depth - 1].f);
	else if (r->depth && r->lv[r->depth - 1].kind == L_ARRAY) {
		const struct level *l = &r->lv[r->depth - 1];

		put_index(r->path, sizeof(r->path), &at,
			  *(const size_t *)((const char *)l->msg + l->f->quantifier_offset));
	}
	if (at <= PATH_SHOWN)
		return at ? r->path : "the request";
	snprintf(r->shown, sizeof(r->shown), "%.*s...%s", PATH_SHOWN / 3, r->path,
		 r->path + at - (PATH_SHOWN - PATH_SHOWN / 3));
	return r->shown;
}

#define FAIL(r, e, fmt, ...)                                                             \
	stop((r), EMBER_FAIL((r)->o->d, (e), "%s%s: " fmt, (r)->o->tag, where(r), __VA_ARGS__))

/* An allocation refused: the account's error, the budget, or malloc. */
static int alloc_failed(struct json_reader *r)
{
	if (r->o->account && r->o->account->err)
		return stop(r, memory_error(r, r->o->account->err));
	if (r->b.exceeded)
		return FAIL(r, -E2BIG, "the request needs more than %zu bytes of memory to read",
			    r->o->max_memory_bytes);
	return stop(r, memory_error(r, -ENOMEM));
}

static void *alloc(struct json_reader *r, size_t n)
{
	void *p = r->a.alloc(r->a.allocator_data, n ? n : 1);

	if (!p)
		alloc_failed(r);
	return p;
}

/* ---- scalars ------------------------------------------------------------------ */

/* v's text as an integer in [lo, hi] (hi > INT64_MAX: unsigned): a JSON
 * number or a string of decimal digits, optionally signed. */
static int parse_int(struct json_reader *r, const struct jv *v, int64_t lo, uint64_t hi,
		     uint64_t *out)
{
	const char *s = v->s ? v->s : "", *end = s + (v->s ? v->len : 0);
	bool neg = s < end && *s == '-';
	uint64_t n = 0;
	int64_t sv;

	if ((v->t != J_NUMBER && v->t != J_STRING) || end - s == neg)
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "not an integer");
	for (s += neg; s < end; s++) {
		if (*s < '0' || *s > '9')
			return FAIL(r, -PPROF_ERR_INVALID, "'%.*s' is not an integer",
				    (int)(v->len > 40 ? 40 : v->len), v->s);
		if (n > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return FAIL(r, -PPROF_ERR_INVALID, "%s", "integer out of range");
		n = n * 10 + (uint64_t)(*s - '0');
	}
	sv = n > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)n;
	if (neg ? n && (lo >= 0 || n > (uint64_t)INT64_MAX + 1 || sv < lo) : n > hi)
		return FAIL(r, -PPROF_ERR_INVALID, "%.*s out of the field's range",
			    (int)(v->len > 40 ? 40 : v->len), v->s);
	*out = neg ? (uint64_t)sv : n;
	return 1;
}

static int parse_double(struct json_reader *r, const struct jv *v, double *out)
{
	char text[NUM_TEXT_MAX + 1], *end;

	if ((v->t != J_NUMBER && v->t != J_STRING) || !v->len || v->len > NUM_TEXT_MAX)
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "not a number");
	memcpy(text, v->s, v->len);
	text[v->len] = '\0';
	if (v->t == J_STRING && (!strcmp(text, "NaN") || !strcmp(text, "Infinity") ||
				 !strcmp(text, "-Infinity"))) {
		*out = text[0] == 'N' ? NAN : text[0] == '-' ? -INFINITY : INFINITY;
		return 1;
	}
	*out = strtod(text, &end);
	if (*end || !isfinite(*out))
		return FAIL(r, -PPROF_ERR_INVALID, "'%s' is not a number", text);
	return 1;
}

static int parse_enum(struct json_reader *r, const ProtobufCFieldDescriptor *f,
		      const struct jv *v, int32_t *out)
{
	char name[128];
	const ProtobufCEnumValue *ev;
	uint64_t n;

	if (v->t == J_NUMBER || (v->t == J_STRING && v->len &&
				 (v->s[0] == '-' || (v->s[0] >= '0' && v->s[0] <= '9')))) {
		if (!parse_int(r, v, INT32_MIN, INT32_MAX, &n))
			return 0;
		*out = (int32_t)n;
		return 1;
	}
	if (v->t != J_STRING || v->len >= sizeof(name))
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "not an enum value");
	memcpy(name, v->s, v->len);
	name[v->len] = '\0';
	ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, name);
	if (!ev)
		return FAIL(r, -PPROF_ERR_INVALID, "'%s' is not a value of the enum", name);
	*out = ev->value;
	return 1;
}

static int parse_string(struct json_reader *r, const struct jv *v, char **out)
{
	char *s;

	if (v->t != J_STRING)
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "not a string");
	if (memchr(v->s, '\0', v->len))
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "a string holding U+0000");
	if (!(s = alloc(r, v->len + 1)))
		return 0;
	memcpy(s, v->s, v->len);
	s[v->len] = '\0';
	*out = s;
	return 1;
}

static int parse_hex(struct json_reader *r, const struct jv *v, size_t want,
		     ProtobufCBinaryData *out)
{
	if (!v->len)
		return 1;
	if (v->len != 2 * want)
		return FAIL(r, -PPROF_ERR_INVALID,
			    "%zu hex digits, not the %zu of a %zu-byte ID (%s)", v->len, 2 * want,
			    want, r->o->hex_hint ? r->o->hex_hint : "hex, not base64");
	if (!(out->data = alloc(r, want)))
		return 0;
	out->len = want;
	for (size_t i = 0; i < want; i++) {
		int hi = ember_hex_digit(v->s[2 * i]), lo = ember_hex_digit(v->s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return FAIL(r, -PPROF_ERR_INVALID, "'%.*s' is not hex", (int)v->len, v->s);
		out->data[i] = (uint8_t)(hi << 4 | lo);
	}
	return 1;
}

/* Base64, standard or URL alphabet, padding optional. */
static int parse_base64(struct json_reader *r, const struct jv *v, ProtobufCBinaryData *out)
{
	struct base64_decode_ctx ctx;
	static const char pad[] = "==";
	size_t n, npad = (4 - v->len % 4) % 4, cap = BASE64_DECODE_LENGTH(v->len + npad);
	bool ok;

	if (!v->len)
		return 1;
	if (!(out->data = alloc(r, cap)))
		return 0;
	if (memchr(v->s, '-', v->len) || memchr(v->s, '_', v->len))
		base64url_decode_init(&ctx);
	else
		base64_decode_init(&ctx);
	n = cap;
	ok = npad < 3 && base64_decode_update(&ctx, &n, out->data, v->len, v->s);
	out->len = ok ? n : 0;
	if (ok && npad) {
		n = cap - out->len;
		ok = base64_decode_update(&ctx, &n, out->data + out->len, npad, pad);
		out->len += ok ? n : 0;
	}
	if (!ok || !base64_decode_final(&ctx))
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "not base64");
	return 1;
}

static int parse_bytes(struct json_reader *r, const ProtobufCFieldDescriptor *f,
		       const struct jv *v, ProtobufCBinaryData *out)
{
	size_t id = r->o->hex_bytes ? r->o->hex_bytes(f) : 0;
	int ok;

	*out = (ProtobufCBinaryData){ 0, NULL };
	if (v->t != J_STRING)
		return FAIL(r, -PPROF_ERR_INVALID, "%s", id ? "not a hex string" : "not a base64 string");
	ok = id ? parse_hex(r, v, id, out) : parse_base64(r, v, out);
	if (!ok) { /* written only on success (a oneof's is not freed with the message) */
		r->a.free(r->a.allocator_data, out->data);
		*out = (ProtobufCBinaryData){ 0, NULL };
	}
	return ok;
}

/* One scalar value of f into dst (wire_pb_value_size(f) bytes); 1, or 0 failed. */
static int parse_scalar(struct json_reader *r, const ProtobufCFieldDescriptor *f,
			const struct jv *v, void *dst)
{
	uint64_t n;
	double d;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		if (!parse_int(r, v, INT32_MIN, INT32_MAX, &n))
			return 0;
		*(int32_t *)dst = (int32_t)n;
		return 1;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		if (!parse_int(r, v, 0, UINT32_MAX, &n))
			return 0;
		*(uint32_t *)dst = (uint32_t)n;
		return 1;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		if (!parse_int(r, v, INT64_MIN, INT64_MAX, &n))
			return 0;
		*(int64_t *)dst = (int64_t)n;
		return 1;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return parse_int(r, v, 0, UINT64_MAX, (uint64_t *)dst);
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_DOUBLE:
		if (!parse_double(r, v, &d))
			return 0;
		if (f->type == PROTOBUF_C_TYPE_FLOAT)
			*(float *)dst = (float)d;
		else
			*(double *)dst = d;
		return 1;
	case PROTOBUF_C_TYPE_BOOL:
		if (v->t != J_BOOL)
			return FAIL(r, -PPROF_ERR_INVALID, "%s", "not true or false");
		*(protobuf_c_boolean *)dst = v->b;
		return 1;
	case PROTOBUF_C_TYPE_ENUM:
		return parse_enum(r, f, v, (int32_t *)dst);
	case PROTOBUF_C_TYPE_STRING:
		return parse_string(r, v, (char **)dst);
	case PROTOBUF_C_TYPE_BYTES:
		return parse_bytes(r, f, v, (ProtobufCBinaryData *)dst);
	default:
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "a field of a type Ember does not read");
	}
}

/* ---- containers ------------------------------------------------------------------ */

#define MEMBER(msg, off, type) ((type *)((char *)(msg) + (off)))

static struct level *push(struct json_reader *r, enum level_kind kind, ProtobufCMessage *msg,
			  const ProtobufCFieldDescriptor *f, size_t idx)
{
	struct level *l;

	if (r->depth == r->max_depth) {
		FAIL(r, -E2BIG, "JSON nested deeper than %zu levels", r->max_depth);
		return NULL;
	}
	l = &r->lv[r->depth++];
	*l = (struct level){ .kind = kind, .msg = msg, .f = kind == L_ARRAY ? f : NULL,
			     .via = f, .idx = idx };
	return l;
}

/* A new message of f's type, pushed as the open container. */
static ProtobufCMessage *open_message(struct json_reader *r, const ProtobufCMessageDescriptor *md,
				      const ProtobufCFieldDescriptor *via, size_t idx)
{
	ProtobufCMessage *m;

	if (r->msgs >= r->o->max_nesting) {
		FAIL(r, -E2BIG, "submessages nested deeper than %zu levels", r->o->max_nesting);
		return NULL;
	}
	if (!(m = alloc(r, md->sizeof_message)))
		return NULL;
	protobuf_c_message_init(md, m);
	if (!push(r, L_MSG, m, via, idx)) {
		protobuf_c_message_free_unpacked(m, &r->a);
		return NULL;
	}
	r->msgs++;
	return m;
}

/* Room for one more entry in the array of l. */
static int grow(struct json_reader *r, struct level *l)
{
	size_t n = *MEMBER(l->msg, l->f->quantifier_offset, size_t), size = wire_pb_value_size(l->f);
	void **arr = MEMBER(l->msg, l->f->offset, void *), *a;

	if (n < l->alloc)
		return 1;
	if (n >= r->max_entries)
		return FAIL(r, -E2BIG, "more than %zu entries", r->max_entries);
	l->alloc = l->alloc ? 2 * l->alloc : 4;
	if (l->alloc > r->max_entries)
		l->alloc = r->max_entries;
	if (!(a = alloc(r, l->alloc * size)))
		return 0;
	if (n)
		memcpy(a, *arr, n * size);
	r->a.free(r->a.allocator_data, *arr);
	*arr = a;
	return 1;
}

/* A value of the array at the top. */
static int array_value(struct json_reader *r, struct level *l, const struct jv *v)
{
	const ProtobufCFieldDescriptor *f = l->f;
	size_t *n = MEMBER(l->msg, f->quantifier_offset, size_t);
	char *arr;

	if (v->t == J_NULL || v->t == J_ARRAY || (v->t == J_MAP) != (f->type == PROTOBUF_C_TYPE_MESSAGE))
		return FAIL(r, -PPROF_ERR_INVALID, "%s",
			    f->type == PROTOBUF_C_TYPE_MESSAGE ? "not an object" : "not a value of the field's type");
	if (!grow(r, l))
		return 0;
	arr = *MEMBER(l->msg, f->offset, char *);
	if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
		ProtobufCMessage *m = open_message(r, f->descriptor, NULL, *n);

		if (!m)
			return 0;
		((ProtobufCMessage **)arr)[(*n)++] = m;
		return 1;
	}
	if (!parse_scalar(r, f, v, arr + *n * wire_pb_value_size(f)))
		return 0;
	(*n)++;
	return 1;
}

/* The value of field f of the message at the top. */
static int field_value(struct json_reader *r, struct level *l, const struct jv *v)
{
	const ProtobufCFieldDescriptor *f = l->f;
	uint32_t *oneof = f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF
				  ? MEMBER(l->msg, f->quantifier_offset, uint32_t)
				  : NULL;

	if (v->t == J_NULL) /* the default */
		return 1;
	if (f->label == PROTOBUF_C_LABEL_REPEATED) {
		if (v->t != J_ARRAY)
			return FAIL(r, -PPROF_ERR_INVALID, "%s", "not an array");
		return push(r, L_ARRAY, l->msg, f, SIZE_MAX) ? 1 : 0;
	}
	if (oneof && *oneof)
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "a second member of a oneof");
	if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
		ProtobufCMessage *m;

		if (v->t != J_MAP)
			return FAIL(r, -PPROF_ERR_INVALID, "%s", "not an object");
		if (!(m = open_message(r, f->descriptor, f, SIZE_MAX)))
			return 0;
		*MEMBER(l->msg, f->offset, ProtobufCMessage *) = m;
	} else if (v->t == J_MAP || v->t == J_ARRAY) {
		return FAIL(r, -PPROF_ERR_INVALID, "%s", "not a value of the field's type");
	} else if (!parse_scalar(r, f, v, MEMBER(l->msg, f->offset, char))) {
		return 0;
	}
	if (oneof)
		*oneof = f->id;
	else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset)
		*MEMBER(l->msg, f->quantifier_offset, protobuf_c_boolean) = 1;
	return 1;
}

/* Any value: where it goes is the top of the stack. */
static int value(struct json_reader *r, const struct jv *v)
{
	struct level *l;

	if (r->err)
		return 0;
	if (r->o->account && r->o->account->err) /* yajl's buffers */
		return alloc_failed(r);
	if (r->skip) {
		if (v->t != J_MAP && v->t != J_ARRAY)
			return 1;
		if (r->depth + r->skip >= r->max_depth)
			return FAIL(r, -E2BIG, "JSON nested deeper than %zu levels", r->max_depth);
		r->skip++;
		return 1;
	}
	if (!r->depth) {
		if (v->t != J_MAP)
			return FAIL(r, -PPROF_ERR_INVALID, "not a JSON object (%s %s)",
				    strchr("AEIOU", r->root->descriptor->short_name[0]) ? "an" : "a",
				    r->root->descriptor->short_name);
		if (!push(r, L_MSG, r->root, NULL, SIZE_MAX))
			return 0;
		r->msgs = 1;
		return 1;
	}
	l = &r->lv[r->depth - 1];
	if (l->kind == L_ARRAY)
		return array_value(r, l, v);
	if (!l->f) { /* an unknown key's value */
		r->skip = v->t == J_MAP || v->t == J_ARRAY;
		return 1;
	}
	return field_value(r, l, v);
}

/* ---- yajl's events ------------------------------------------------------------------- */

/* Whether key names the field of proto name name: that, or its JSON name. */
static bool name_is(const char *name, const unsigned char *key, size_t len)
{
	char json[128];

	if (strlen(name) == len && !memcmp(name, key, len))
		return true;
	return wire_json_name(name, json, sizeof(json)) == len && !memcmp(json, key, len);
}

static int on_map_key(void *ctx, const unsigned char *key, size_t len)
{
	struct json_reader *r = ctx;
	struct level *l;
	const ProtobufCMessageDescriptor *md;

	if (r->err || r->skip)
		return !r->err;
	l = &r->lv[r->depth - 1];
	md = l->msg->descriptor;
	l->f = NULL;
	for (unsigned i = 0; i < md->n_fields; i++) {
		if (!name_is(md->fields[i].name, key, len))
			continue;
		l->f = &md->fields[i];
		if (i < 64 && (l->seen & (uint64_t)1 << i))
			return FAIL(r, -PPROF_ERR_INVALID, "%s", "given twice");
		l->seen |= i < 64 ? (uint64_t)1 << i : 0;
		break;
	}
	return 1;
}

static int on_end(void *ctx)
{
	struct json_reader *r = ctx;

	if (r->err)
		return 0;
	if (r->skip) {
		r->skip--;
		return 1;
	}
	r->msgs -= r->lv[r->depth - 1].kind == L_MSG;
	r->depth--;
	if (r->depth && r->lv[r->depth - 1].kind == L_MSG)
		r->lv[r->depth - 1].f = NULL;
	return 1;
}

static int on_null(void *ctx)
{
	return value(ctx, &(struct jv){ .t = J_NULL });
}

static int on_boolean(void *ctx, int b)
{
	return value(ctx, &(struct jv){ .t = J_BOOL, .b = b });
}

static int on_number(void *ctx, const char *s, size_t len)
{
	return value(ctx, &(struct jv){ .t = J_NUMBER, .s = s, .len = len });
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	return value(ctx, &(struct jv){ .t = J_STRING, .s = (const char *)s, .len = len });
}

static int on_start_map(void *ctx)
{
	return value(ctx, &(struct jv){ .t = J_MAP });
}

static int on_start_array(void *ctx)
{
	return value(ctx, &(struct jv){ .t = J_ARRAY });
}

static const yajl_callbacks callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_boolean,
	.yajl_number = on_number,
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_map_key,
	.yajl_end_map = on_end,
	.yajl_start_array = on_start_array,
	.yajl_end_array = on_end,
};

/* ---- the request ----------------------------------------------------------------------- */

/* yajl stopped: ours (r->err), yajl's buffers past the account, or the
 * body is not JSON. */
static int parse_failed(struct json_reader *r, yajl_handle h, const uint8_t *data, size_t size)
{
	unsigned char *msg;
	size_t at = yajl_get_bytes_consumed(h), line = 1;

	if (r->err)
		return r->err;
	if (r->o->account && r->o->account->err)
		return alloc_failed(r), r->err;
	for (size_t i = 0; i < at && i < size; i++)
		line += data[i] == '\n';
	msg = yajl_get_error(h, 0, NULL, 0);
	stop(r, EMBER_FAIL(r->o->d, -PPROF_ERR_PROTOBUF,
			   "%snot JSON: byte %zu (line %zu): %.*s", r->o->tag, at, line,
			   msg ? (int)strcspn((char *)msg, "\n") : 0, msg ? (char *)msg : ""));
	yajl_free_error(h, msg);
	return r->err;
}

static int parse(struct json_reader *r, const uint8_t *data, size_t size)
{
	yajl_alloc_funcs af = wire_yajl_funcs(r->o->account);
	yajl_handle h = yajl_alloc(&callbacks, &af, r);
	yajl_status st;

	if (!h)
		return memory_error(r, -ENOMEM);
	st = yajl_parse(h, data, size);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	if (st != yajl_status_ok || r->err)
		parse_failed(r, h, data, size);
	else if (r->o->account && r->o->account->err)
		alloc_failed(r);
	yajl_free(h);
	return r->err;
}

int wire_json_read_message(const ProtobufCMessageDescriptor *md, const uint8_t *data,
			  size_t size, const struct wire_json_read *o, ProtobufCMessage **out)
{
	struct json_reader r = { .o = o,
				 .b = { .cap = o->max_memory_bytes, .acct = o->account },
				 .max_depth = 2 * o->max_nesting + 1,
				 .max_entries = o->max_entries };
	int err;

	EMBER_FAIL_IF(size > o->max_input_bytes, o->d, -E2BIG,
		      "%srequest of %zu bytes larger than %zu", o->tag, size, o->max_input_bytes);
	r.a = wire_pb_allocator(&r.b);
	r.lv = ember_mem_alloc(o->account, r.max_depth * sizeof(*r.lv));
	if (!r.lv || !(r.root = alloc(&r, md->sizeof_message))) {
		free(r.lv);
		return r.err ? r.err : memory_error(&r, -ENOMEM);
	}
	protobuf_c_message_init(md, r.root);
	err = parse(&r, data, size);
	free(r.lv);
	if (err) {
		protobuf_c_message_free_unpacked(r.root, &r.a);
		return err;
	}
	*out = r.root;
	return 0;
}
