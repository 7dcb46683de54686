/*
 * fuzz_symbolize_json.c - libFuzzer target for the JSON of POST
 * /api/v1/symbolize: any bytes as a request body under small caps; a
 * request that parses is answered through the writer, with the input
 * bytes themselves as frame names, and the answer must parse back with
 * jansson (valid JSON, valid UTF-8) with as many results as addresses.
 */
#include "symbolize_json.h"

#include <jansson.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symjson_request *r = NULL;
	struct ember_buf b;
	char why[256], *name;

	ember_log_set_handler(quiet, NULL);
	if (symjson_request_parse((const char *)data, size, &lim, &r, why, sizeof(why)) != 0)
		return 0;
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
