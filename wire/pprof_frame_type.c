/*
 * pprof_frame_type.c - Ember's extension of profile.proto's Location: field
 * PPROF_LOCATION_FRAME_TYPE_FIELD, a string index naming the frame's type
 * (OTLP's profile.frame.type, docs/formats.md).  The field is kept in the
 * message's unknown fields, which protobuf-c reads and writes back as
 * they are, so a profile carries it through decoding, edits and encoding
 * (the profile store's log keeps pushes so) with profile.proto as pprof
 * ships it.  A field of that number that is not a valid string index is
 * someone else's: it is ignored, never trusted.
 */
#include "wire_internal.h"

#include <stdlib.h>
#include <string.h>

static ProtobufCMessageUnknownField *find_field(const pprof_location_t *loc)
{
	for (size_t i = 0; i < loc->base.n_unknown_fields; i++)
		if (loc->base.unknown_fields[i].tag == PPROF_LOCATION_FRAME_TYPE_FIELD)
			return &loc->base.unknown_fields[i];
	return NULL;
}

const char *pprof_location_frame_type(const struct pprof_profile *p,
				      const pprof_location_t *loc)
{
	const ProtobufCMessageUnknownField *f = find_field(loc);
	const uint8_t *pos, *end;
	uint64_t idx;

	if (!f || f->wire_type != PROTOBUF_C_WIRE_TYPE_VARINT)
		return NULL;
	pos = f->data;
	end = f->data + f->len;
	if (ember_cur_uleb(&pos, end, &idx) || pos != end || idx == 0 || idx > INT64_MAX)
		return NULL;
	return pprof_string(p, (int64_t)idx);
}

/* The field's value: idx as a varint in a new block. */
static int field_value(uint64_t idx, uint8_t **data, size_t *len)
{
	struct ember_buf b;
	int err;

	ember_buf_init(&b, 16);
	err = ember_buf_put_uleb(&b, idx);
	if (err) {
		ember_buf_release(&b);
		return err;
	}
	*data = (uint8_t *)b.data;
	*len = b.len;
	return 0;
}

static void drop_field(pprof_location_t *loc, ProtobufCMessageUnknownField *f)
{
	size_t i = (size_t)(f - loc->base.unknown_fields);

	free(f->data);
	memmove(f, f + 1, (loc->base.n_unknown_fields - i - 1) * sizeof(*f));
	loc->base.n_unknown_fields--;
}

static int add_field(struct pprof_profile *p, pprof_location_t *loc, uint8_t *data, size_t len)
{
	size_t n = loc->base.n_unknown_fields;
	ProtobufCMessageUnknownField *v;
	int err = pprof_charge(p, PPROF_BLOCK_COST((n + 1) * sizeof(*v)));

	if (err)
		return err;
	v = realloc(loc->base.unknown_fields, (n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[n] = (ProtobufCMessageUnknownField){ .tag = PPROF_LOCATION_FRAME_TYPE_FIELD,
					       .wire_type = PROTOBUF_C_WIRE_TYPE_VARINT,
					       .len = len, .data = data };
	loc->base.unknown_fields = v;
	loc->base.n_unknown_fields = n + 1;
	return 0;
}

int pprof_location_set_frame_type(struct pprof_profile *p, uint64_t location_id,
				  const char *type)
{
	size_t i = pprof_index_find(&p->locations, location_id);
	pprof_location_t *loc;
	ProtobufCMessageUnknownField *f;
	uint8_t *data = NULL;
	size_t len = 0;
	int64_t idx;
	int err;

	if (i == SIZE_MAX)
		return -ENOENT;
	loc = p->msg->location[i];
	if ((f = find_field(loc)))
		drop_field(loc, f);
	if (!type || !*type)
		return 0;
	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, type, &idx));
	EMBER_FORWARD_IF_ERROR(pprof_charge(p, PPROF_BLOCK_COST(16)));
	EMBER_FORWARD_IF_ERROR(field_value((uint64_t)idx, &data, &len));
	err = add_field(p, loc, data, len);
	if (err)
		free(data);
	return err;
}
