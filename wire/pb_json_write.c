/*
 * pb_json_write.c - a protobuf-c message written as JSON by proto3's JSON
 * mapping (the protobuf documentation, "ProtoJSON Format"), driven by the
 * message's descriptor (wire_json_write_message, wire_internal.h): the
 * answers of Pyroscope's query API over Connect's JSON codec
 * (querier_encode, querier.h).  The counterpart of pb_json_read.c, and
 * where both take a field's JSON name from (wire_json_name).
 *
 * A message is an object of its fields in the descriptor's order (by
 * number), each under its JSON name; a field at its default (0, "",
 * false, an empty repeated field, an absent message, an unset proto2
 * optional or oneof member) is left out, as the mapping's writers do.
 * 64-bit integers are decimal strings, 32-bit ones numbers; enums their
 * value's name (its number when the enum has none); bytes standard base64
 * with padding; floats numbers that read back exactly, NaN and the
 * infinities as "NaN", "Infinity", "-Infinity".  Strings go through
 * json_writer.c's escaping (valid UTF-8 whatever the bytes).  Recursion
 * is one level a submessage: the messages written are Ember's own.
 */
#include "wire_internal.h"

#include <math.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>

#define MEMBER(msg, off, type) ((const type *)((const char *)(msg) + (off)))

size_t wire_json_name(const char *name, char *out, size_t size)
{
	size_t k = 0;
	bool up = false;

	for (const char *p = name; *p && k + 1 < size; p++) {
		if (*p == '_') {
			up = true;
			continue;
		}
		out[k++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
		up = false;
	}
	if (size)
		out[k] = '\0';
	return k;
}

static int write_i64(struct ember_buf *b, int64_t v, bool quoted)
{
	const char *q = quoted ? "\"" : "";

	return ember_buf_appendf(b, "%s%lld%s", q, (long long)v, q);
}

static int write_u64(struct ember_buf *b, uint64_t v, bool quoted)
{
	int err = quoted ? WIRE_JSON_LIT(b, "\"") : 0;

	err = err ? err : wire_json_u64(b, v);
	return err ? err : quoted ? WIRE_JSON_LIT(b, "\"") : 0;
}

static int write_double(struct ember_buf *b, double d, int digits)
{
	if (isnan(d))
		return WIRE_JSON_LIT(b, "\"NaN\"");
	if (isinf(d))
		return d > 0 ? WIRE_JSON_LIT(b, "\"Infinity\"") : WIRE_JSON_LIT(b, "\"-Infinity\"");
	return ember_buf_appendf(b, "%.*g", digits, d);
}

static int write_enum(struct ember_buf *b, const ProtobufCFieldDescriptor *f, int32_t v)
{
	const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);

	return ev ? wire_json_str(b, ev->name) : write_i64(b, v, false);
}

static int write_bytes(struct ember_buf *b, const ProtobufCBinaryData *v)
{
	size_t n = BASE64_ENCODE_RAW_LENGTH(v->len);
	int err = ember_buf_reserve(b, n + 2);

	if (err)
		return err;
	b->data[b->len++] = '"';
	base64_encode_raw(b->data + b->len, v->len, v->data);
	b->len += n;
	b->data[b->len++] = '"';
	b->data[b->len] = '\0';
	return 0;
}

/* One value of f's type at p. */
static int write_value(struct ember_buf *b, const ProtobufCFieldDescriptor *f, const void *p)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return write_i64(b, *(const int32_t *)p, false);
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		return write_u64(b, *(const uint32_t *)p, false);
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return write_i64(b, *(const int64_t *)p, true);
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return write_u64(b, *(const uint64_t *)p, true);
	case PROTOBUF_C_TYPE_FLOAT:
		return write_double(b, *(const float *)p, 9);
	case PROTOBUF_C_TYPE_DOUBLE:
		return write_double(b, *(const double *)p, 17);
	case PROTOBUF_C_TYPE_BOOL:
		return *(const protobuf_c_boolean *)p ? WIRE_JSON_LIT(b, "true")
						      : WIRE_JSON_LIT(b, "false");
	case PROTOBUF_C_TYPE_ENUM:
		return write_enum(b, f, *(const int32_t *)p);
	case PROTOBUF_C_TYPE_STRING:
		return wire_json_str(b, *(char *const *)p ? *(char *const *)p : "");
	case PROTOBUF_C_TYPE_BYTES:
		return write_bytes(b, p);
	case PROTOBUF_C_TYPE_MESSAGE:
		return wire_json_write_message(*(ProtobufCMessage *const *)p, b);
	}
	return -EINVAL;
}

/* Whether the value at p is its type's default (left out). */
static bool is_default(const ProtobufCFieldDescriptor *f, const void *p)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return *(const uint64_t *)p == 0;
	case PROTOBUF_C_TYPE_DOUBLE:
		return *(const double *)p == 0 && !signbit(*(const double *)p);
	case PROTOBUF_C_TYPE_FLOAT:
		return *(const float *)p == 0 && !signbit(*(const float *)p);
	case PROTOBUF_C_TYPE_BOOL:
		return !*(const protobuf_c_boolean *)p;
	case PROTOBUF_C_TYPE_STRING:
		return !*(char *const *)p || !**(char *const *)p;
	case PROTOBUF_C_TYPE_BYTES:
		return !((const ProtobufCBinaryData *)p)->len;
	case PROTOBUF_C_TYPE_MESSAGE:
		return !*(ProtobufCMessage *const *)p;
	default: /* 32-bit integers, enums */
		return *(const uint32_t *)p == 0;
	}
}

size_t wire_pb_value_size(const ProtobufCFieldDescriptor *f)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		return 8;
	case PROTOBUF_C_TYPE_DOUBLE:
		return sizeof(double);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	case PROTOBUF_C_TYPE_STRING:
		return sizeof(char *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(ProtobufCMessage *);
	default: /* 32-bit integers, enums, float */
		return 4;
	}
}

/* Whether field f of m is written. */
static bool is_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
	const void *p = MEMBER(m, f->offset, char);

	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return *MEMBER(m, f->quantifier_offset, size_t) > 0;
	if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
		return *MEMBER(m, f->quantifier_offset, uint32_t) == f->id;
	if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset)
		return *MEMBER(m, f->quantifier_offset, protobuf_c_boolean);
	if (f->type == PROTOBUF_C_TYPE_MESSAGE)
		return !is_default(f, p);
	return f->label == PROTOBUF_C_LABEL_REQUIRED || !is_default(f, p);
}

static int write_repeated(struct ember_buf *b, const ProtobufCMessage *m,
			  const ProtobufCFieldDescriptor *f)
{
	size_t n = *MEMBER(m, f->quantifier_offset, size_t), size = wire_pb_value_size(f);
	const char *arr = *MEMBER(m, f->offset, char *);
	int err = WIRE_JSON_LIT(b, "[");

	for (size_t i = 0; i < n && !err; i++) {
		err = i ? WIRE_JSON_LIT(b, ",") : 0;
		err = err ? err : write_value(b, f, arr + i * size);
	}
	return err ? err : WIRE_JSON_LIT(b, "]");
}

static int write_field(struct ember_buf *b, const ProtobufCMessage *m,
		       const ProtobufCFieldDescriptor *f, bool first)
{
	char name[128];
	int err = first ? 0 : WIRE_JSON_LIT(b, ",");

	wire_json_name(f->name, name, sizeof(name));
	err = err ? err : wire_json_str(b, name);
	err = err ? err : WIRE_JSON_LIT(b, ":");
	if (err)
		return err;
	if (f->label == PROTOBUF_C_LABEL_REPEATED)
		return write_repeated(b, m, f);
	return write_value(b, f, MEMBER(m, f->offset, char));
}

int wire_json_write_message(const ProtobufCMessage *m, struct ember_buf *out)
{
	const ProtobufCMessageDescriptor *md = m->descriptor;
	bool first = true;
	int err = WIRE_JSON_LIT(out, "{");

	for (unsigned i = 0; i < md->n_fields && !err; i++) {
		if (!is_present(m, &md->fields[i]))
			continue;
		err = write_field(out, m, &md->fields[i], first);
		first = false;
	}
	return err ? err : WIRE_JSON_LIT(out, "}");
}
