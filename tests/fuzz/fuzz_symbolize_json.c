/*
 * fuzz_symbolize_json.c - libFuzzer target for the JSON of POST
 * /api/v1/symbolize: any bytes as a request body under small caps; a
 * request that parses is answered through the writer, with the input
 * bytes themselves as frame names, and the answer must parse back with
 * jansson (valid JSON, valid UTF-8) with as many results as addresses.
 * The streamed parser is checked against itself: fed in pieces under a
 * memory account it must reach the same result.
 */
#include "symbolize_json.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

static const struct symjson_limits lim = {
	.sz = sizeof(lim), .max_body_bytes = 1 << 20, .max_modules = 64,
	.max_addresses = 4096,
};

static void answer(const struct symjson_request *r, const char *name, struct ember_buf *b)
{
	struct symjson_frame f[2] = {
		{ .function = name, .linkage_name = name, .file = name, .line = 1, .inlined = true },
		{ .function = name, .line = 2, .column = 3 },
	};
	struct symjson_writer w;

	symjson_writer_init(&w, b);
	symjson_answer_begin(&w);
	for (size_t i = 0; i < r->nmodules; i++) {
		symjson_module_begin(&w, r->modules[i].build_id);
		for (size_t k = 0; k < r->modules[i].naddrs; k++) {
			struct symjson_result res = {
				.address = r->modules[i].addrs[k].addr,
				.kind = r->modules[i].addrs[k].kind,
				.frames = f, .nframes = k % 3,
				.error = (enum symjson_error)(k % SYMJSON_ERR_COUNT),
				.source = (enum symjson_source)(k % SYMJSON_SOURCE_COUNT),
			};
			symjson_write_result(&w, &res);
		}
		symjson_module_end(&w);
	}
	if (symjson_answer_end(&w) != 0)
		abort();
}

static void check(const struct symjson_request *r, const struct ember_buf *b)
{
	json_error_t e;
	json_t *root = json_loadb(b->data, b->len, JSON_REJECT_DUPLICATES, &e);
	json_t *mods = json_object_get(root, "modules");

	if (!root || json_array_size(mods) != r->nmodules)
		abort();
	for (size_t i = 0; i < r->nmodules; i++)
		if (json_array_size(json_object_get(json_array_get(mods, i), "results")) !=
		    r->modules[i].naddrs)
			abort();
	json_decref(root);
}

/* The invariants of symbolize_json.h on a parsed request. */
static void check_request(const struct symjson_request *r)
{
	size_t total = 0;

	if (r->nmodules > lim.max_modules || r->naddrs > lim.max_addresses)
		abort();
	for (size_t i = 0; i < r->nmodules; i++) {
		size_t n = strlen(r->modules[i].build_id);

		if (n < 2 || n % 2 || n > SYMJSON_BUILD_ID_HEX_MAX ||
		    strspn(r->modules[i].build_id, "0123456789abcdef") != n ||
		    r->modules[i].addrs != r->addrs + total)
			abort();
		for (size_t k = 0; k < r->modules[i].naddrs; k++)
			if ((unsigned)r->modules[i].addrs[k].kind > SYMJSON_FILE_OFFSET)
				abort();
		total += r->modules[i].naddrs;
	}
	if (total != r->naddrs)
		abort();
}

static bool same_request(const struct symjson_request *a, const struct symjson_request *b)
{
	if (a->naddrs != b->naddrs || a->nmodules != b->nmodules || a->inlines != b->inlines ||
	    a->demangle != b->demangle)
		return false;
	for (size_t i = 0; i < a->naddrs; i++) /* field by field: the struct has padding */
		if (a->addrs[i].addr != b->addrs[i].addr || a->addrs[i].kind != b->addrs[i].kind)
			return false;
	for (size_t i = 0; i < a->nmodules; i++)
		if (strcmp(a->modules[i].build_id, b->modules[i].build_id) ||
		    a->modules[i].naddrs != b->modules[i].naddrs)
			return false;
	return true;
}

/*
 * The same body fed in pieces (of a size the input picks) through an
 * account: the same result as parsed whole (err), the same request, or a
 * refusal by the account (-E2BIG, its share of 64 KiB) after which
 * nothing is left charged.
 */
static void check_streamed(const uint8_t *data, size_t size, int err,
			   const struct symjson_request *whole)
{
	struct ember_mem_budget budget;
	struct ember_mem_account acct;
	struct symjson_parser *p;
	struct symjson_request *r = NULL;
	size_t piece = size ? 1 + data[0] % 97 : 1;
	int e = 0;

	ember_mem_budget_init(&budget, 1 << 30);
	ember_mem_account_init(&acct, &budget, 64 << 10);
	if (symjson_parser_new(&lim, &acct, &p))
		abort();
	for (size_t at = 0; !e && at < size; at += piece)
		e = symjson_parser_feed(p, data + at, size - at < piece ? size - at : piece);
	if (!e)
		e = symjson_parser_finish(p, &r);
	symjson_parser_free(p);
	if (e == -E2BIG && acct.err == -E2BIG)
		; /* refused for its memory: fine whatever the whole parse said */
	else if (e != err)
		abort();
	else if (!e && !same_request(r, whole))
		abort();
	symjson_request_free(r);
	ember_mem_account_release(&acct);
	if (ember_mem_budget_used(&budget))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symjson_request *r = NULL;
	struct ember_buf b;
	char why[256], *name;
	int err;

	ember_log_set_handler(quiet, NULL);
	err = symjson_request_parse((const char *)data, size, &lim, &r, why, sizeof(why));
	check_streamed(data, size, err, r);
	if (err)
		return 0;
	check_request(r);
	name = malloc(size + 1);
	if (!name)
		abort();
	memcpy(name, data, size);
	name[size] = '\0';
	ember_buf_init(&b, 256 << 20);
	answer(r, name, &b);
	check(r, &b);
	ember_buf_release(&b);
	free(name);
	symjson_request_free(r);
	return 0;
}
