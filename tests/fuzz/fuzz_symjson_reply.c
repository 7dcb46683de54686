/*
 * fuzz_symjson_reply.c - libFuzzer target for the client's check of a
 * POST /api/v1/symbolize reply (wire/symjson_client.c,
 * symjson_reply_parse): what `ember symbolize --server` receives from a
 * server it does not control.  The first byte chooses how many addresses
 * were asked (0x1000, 0x2000, ...), the rest is the reply.  A reply that
 * passes must hold one item per address, in order, with frames whose
 * strings are readable; written again through the server's writer it must
 * pass again with the same items (a round trip through both halves).
 * Seeds in corpus/symjson_reply/.
 */
#include "symbolize_json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ADDRS 8

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

/* The items of r written as the server writes an answer. */
static void write_back(const struct symjson_reply *r, size_t n, struct ember_buf *b)
{
	struct symjson_writer w;

	symjson_writer_init(&w, b);
	symjson_answer_begin(&w);
	symjson_module_begin(&w, "abcd");
	for (size_t i = 0; i < n; i++) {
		const struct symjson_reply_item *it = symjson_reply_item(r, i);
		struct symjson_result res = { .address = it->address, .frames = it->frames,
					      .nframes = it->nframes,
					      .error = it->error ? SYMJSON_ERR_NO_DEBUGINFO
								 : SYMJSON_OK };

		symjson_write_result(&w, &res);
	}
	symjson_module_end(&w);
	if (symjson_answer_end(&w))
		abort();
}

static size_t check_item(const struct symjson_reply_item *it, uint64_t addr)
{
	size_t sum = 0;

	if (it->address != addr)
		abort();
	for (size_t j = 0; j < it->nframes; j++) /* every string readable */
		sum += strlen(it->frames[j].function ? it->frames[j].function : "") +
		       strlen(it->frames[j].linkage_name ? it->frames[j].linkage_name : "") +
		       strlen(it->frames[j].file ? it->frames[j].file : "");
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t addrs[MAX_ADDRS];
	struct symjson_reply *r, *again;
	struct ember_buf b;
	char why[256];
	size_t n;

	ember_log_set_handler(quiet, NULL);
	if (size < 1)
		return 0;
	n = data[0] % (MAX_ADDRS + 1);
	for (size_t i = 0; i < n; i++)
		addrs[i] = 0x1000 * (i + 1);
	if (symjson_reply_parse((const char *)data + 1, size - 1, addrs, n, &r, why,
				sizeof(why)) != 0) {
		if (!why[0]) /* a rejection explains itself */
			abort();
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		check_item(symjson_reply_item(r, i), addrs[i]);
	ember_buf_init(&b, 64 << 20);
	write_back(r, n, &b);
	if (symjson_reply_parse(b.data, b.len, addrs, n, &again, why, sizeof(why)) != 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (symjson_reply_item(again, i)->nframes != symjson_reply_item(r, i)->nframes)
			abort();
	symjson_reply_free(again);
	ember_buf_release(&b);
	symjson_reply_free(r);
	return 0;
}
