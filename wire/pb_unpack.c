/*
 * pb_unpack.c - unpacking an untrusted protobuf with protobuf-c, bounded:
 * every allocation under a byte budget (and the request's account), and,
 * before protobuf-c recurses into it, the nesting of submessages checked
 * against a depth (protobuf-c's unpacking recurses once a level, so a
 * self-nesting message like OTLP's AnyValue could exhaust the stack).
 * Shared by pprof_decode.c and otlp_decode.c.
 */
#include "wire_internal.h"

#include <stdlib.h>

static void *budget_alloc(void *ctx, size_t n)
{
	struct wire_pb_budget *b = ctx;

	if (n > b->cap - b->used) {
		b->exceeded = true;
		return NULL;
	}
	if (ember_mem_account_take(b->acct, PPROF_BLOCK_COST(n)))
		return NULL;
	b->used += n;
	return malloc(n);
}

static void budget_free(void *ctx, void *ptr)
{
	free(ptr);
}

ProtobufCAllocator wire_pb_allocator(struct wire_pb_budget *b)
{
	return (ProtobufCAllocator){ budget_alloc, budget_free, b };
}

int wire_memory_error(struct ember_diag *d, const char *tag, const struct ember_mem_account *acct,
		      int err)
{
	if (acct && acct->err)
		err = acct->err;
	if (err == -E2BIG)
		return EMBER_FAIL(d, err, "%sthe request needs more memory than the server "
					  "gives one request", tag);
	if (err == -EAGAIN)
		return EMBER_FAIL(d, err, "%sthe server has no memory free for the request now", tag);
	if (err == -ENOMEM)
		return EMBER_FAIL(d, err, "%sout of memory", tag);
	return err;
}

static const ProtobufCFieldDescriptor *field_of(const ProtobufCMessageDescriptor *md,
						uint64_t number)
{
	for (unsigned i = 0; i < md->n_fields; i++)
		if (md->fields[i].id == number)
			return &md->fields[i];
	return NULL;
}

/* Skip one field's payload of wire type wt; 0 or -1 (malformed). */
static int skip_field(const uint8_t **pos, const uint8_t *end, unsigned wt, uint64_t *len)
{
	uint64_t v;

	*len = 0;
	switch (wt) {
	case 0:
		return ember_cur_uleb(pos, end, &v) ? -1 : 0;
	case 1:
	case 5: {
		size_t n = wt == 1 ? 8 : 4;

		if ((size_t)(end - *pos) < n)
			return -1;
		*pos += n;
		return 0;
	}
	case 2:
		if (ember_cur_uleb(pos, end, len) || *len > (uint64_t)(end - *pos))
			return -1;
		return 0;
	default:
		return -1;
	}
}

int wire_pb_check_nesting(const ProtobufCMessageDescriptor *md, const uint8_t *data,
			  size_t size, unsigned depth)
{
	const uint8_t *pos = data, *end = data + size;

	if (!depth)
		return -E2BIG;
	while (pos < end) {
		uint64_t key, len;
		const ProtobufCFieldDescriptor *f;

		if (ember_cur_uleb(&pos, end, &key) || skip_field(&pos, end, key & 7, &len))
			return 0; /* malformed: protobuf-c will say so */
		f = field_of(md, key >> 3);
		if ((key & 7) == 2 && f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			int err = wire_pb_check_nesting(f->descriptor, pos, len, depth - 1);

			if (err)
				return err;
		}
		if ((key & 7) == 2)
			pos += len;
	}
	return 0;
}
