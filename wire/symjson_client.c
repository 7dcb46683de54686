/*
 * symjson_client.c - the client side of POST /api/v1/symbolize
 * (docs/symbolize-api.md), for `ember symbolize --server`: the request of
 * one module's batch, and the checks its reply must pass before anything
 * of it is used.  The reply is outside input: every field is checked, and
 * a rejection names the failed check by its JSON path ("results[3].frames
 * [0].line: not a line number").  The server's half is symjson_request.c
 * (it parses what this writes) and symjson_answer.c (it writes what this
 * parses).
 */
#include "wire_internal.h"
#include "symbolize_json.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- the request ---------------------------------------------------------- */

int symjson_request_write(struct ember_buf *body, const char *build_id,
			  enum symjson_addr_kind kind, const uint64_t *addrs, size_t n)
{
	char hex[17];
	int err = WIRE_JSON_LIT(body, "{\"modules\":[{\"build_id\":");

	if (!err)
		err = ember_json_str(body, build_id, strlen(build_id));
	if (!err)
		err = kind == SYMJSON_FILE_OFFSET
			      ? WIRE_JSON_LIT(body, ",\"kind\":\"file_offset\",\"addresses\":[")
			      : WIRE_JSON_LIT(body, ",\"kind\":\"vaddr\",\"addresses\":[");
	for (size_t i = 0; !err && i < n; i++) {
		size_t len = ember_hex_u64(addrs[i], hex);

		err = i ? ember_buf_putc(body, ',') : 0;
		if (!err)
			err = WIRE_JSON_LIT(body, "\"0x");
		if (!err)
			err = ember_buf_append(body, hex, len);
		if (!err)
			err = ember_buf_putc(body, '"');
	}
	return err ? err : WIRE_JSON_LIT(body, "]}],\"options\":{\"inlines\":true,"
					       "\"demangle\":true}}");
}

/* ---- the reply ------------------------------------------------------------ */

struct symjson_reply {
	json_t *root;			/* owns every string below */
	struct symjson_reply_item *items;
	struct symjson_frame *frames;	/* all items' frames, item after item */
};

/* A key that is absent, null or of the type wanted. */
static bool opt_string(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return !v || json_is_null(v) || json_is_string(v);
}

static bool opt_u32(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return !v || json_is_null(v) ||
	       (json_is_integer(v) && json_integer_value(v) >= 0 &&
		json_integer_value(v) <= UINT32_MAX);
}

static const char *get_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static uint32_t get_u32(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint32_t)json_integer_value(v) : 0;
}

/* Frame j of result i, checked, into *out. */
static int take_frame(const json_t *f, size_t i, size_t j, struct symjson_frame *out,
		      struct ember_diag *d)
{
	static const char *const strings[] = { "function", "linkage_name", "file" };
	const json_t *inl = json_object_get(f, "inlined");

	EMBER_FAIL_IF(!json_is_object(f), d, -EPROTO, "results[%zu].frames[%zu]: not an object",
		      i, j);
	for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++)
		EMBER_FAIL_IF(!opt_string(f, strings[k]), d, -EPROTO,
			      "results[%zu].frames[%zu].%s: not a string", i, j, strings[k]);
	EMBER_FAIL_IF(!opt_u32(f, "line"), d, -EPROTO,
		      "results[%zu].frames[%zu].line: not a line number", i, j);
	EMBER_FAIL_IF(!opt_u32(f, "column"), d, -EPROTO,
		      "results[%zu].frames[%zu].column: not a column", i, j);
	EMBER_FAIL_IF(inl && !json_is_boolean(inl), d, -EPROTO,
		      "results[%zu].frames[%zu].inlined: not a boolean", i, j);
	*out = (struct symjson_frame){ .function = get_str(f, "function"),
				       .linkage_name = get_str(f, "linkage_name"),
				       .file = get_str(f, "file"),
				       .line = get_u32(f, "line"), .column = get_u32(f, "column"),
				       .inlined = json_is_true(inl) };
	return 0;
}

/* Result i, which must answer addr, checked (its frames' count in *n). */
static int check_result(const json_t *r, size_t i, uint64_t addr, size_t *n,
			struct ember_diag *d)
{
	const json_t *frames = json_object_get(r, "frames");
	const char *why = NULL;
	uint64_t got = 0;

	EMBER_FAIL_IF(!json_is_object(r), d, -EPROTO, "results[%zu]: not an object", i);
	EMBER_FAIL_IF(!json_is_string(json_object_get(r, "address")) ||
			      symjson_address_value(json_object_get(r, "address"), &got, &why) ||
			      got != addr,
		      d, -EPROTO, "results[%zu].address: %.40s, but 0x%llx was asked", i,
		      get_str(r, "address") ? get_str(r, "address") : "missing",
		      (unsigned long long)addr);
	EMBER_FAIL_IF(!json_is_array(frames), d, -EPROTO, "results[%zu].frames: not an array", i);
	EMBER_FAIL_IF(!opt_string(r, "error"), d, -EPROTO, "results[%zu].error: not a string", i);
	EMBER_FAIL_IF(!opt_string(r, "source"), d, -EPROTO, "results[%zu].source: not a string",
		      i);
	*n = json_array_size(frames);
	return 0;
}

/* Every result checked; the total of their frames in *nframes. */
static int check_results(const json_t *results, const uint64_t *addrs, size_t naddrs,
			 size_t *nframes, struct ember_diag *d)
{
	size_t n;

	EMBER_FAIL_IF(!json_is_array(results), d, -EPROTO, "modules[0].results: not an array");
	EMBER_FAIL_IF(json_array_size(results) != naddrs, d, -EPROTO,
		      "%zu results for %zu addresses", json_array_size(results), naddrs);
	*nframes = 0;
	for (size_t i = 0; i < naddrs; i++) {
		EMBER_FORWARD_IF_ERROR(check_result(json_array_get(results, i), i, addrs[i], &n, d));
		*nframes += n;
	}
	return 0;
}

/* The items of the checked results into r (frames taken and checked). */
static int take_items(struct symjson_reply *r, const json_t *results, size_t naddrs,
		      struct ember_diag *d)
{
	size_t at = 0;

	for (size_t i = 0; i < naddrs; i++) {
		const json_t *res = json_array_get(results, i);
		const json_t *frames = json_object_get(res, "frames");
		struct symjson_reply_item *it = &r->items[i];

		symjson_address_value(json_object_get(res, "address"), &it->address,
				      &(const char *){ NULL });
		it->frames = r->frames + at;
		it->nframes = json_array_size(frames);
		it->error = get_str(res, "error");
		it->source = get_str(res, "source");
		for (size_t j = 0; j < it->nframes; j++)
			EMBER_FORWARD_IF_ERROR(take_frame(json_array_get(frames, j), i, j,
							  &r->frames[at + j], d));
		at += it->nframes;
	}
	return 0;
}

void symjson_reply_free(struct symjson_reply *r)
{
	if (!r)
		return;
	json_decref(r->root);
	free(r->items);
	free(r->frames);
	free(r);
}

int symjson_reply_parse(const char *body, size_t len, const uint64_t *addrs, size_t naddrs,
			struct symjson_reply **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct symjson_reply *r = calloc(1, sizeof(*r));
	const json_t *results;
	json_error_t jerr;
	size_t nframes;
	int err;

	if (!r)
		return -ENOMEM;
	r->root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	results = json_object_get(json_array_get(json_object_get(r->root, "modules"), 0),
				  "results");
	err = r->root ? check_results(results, addrs, naddrs, &nframes, &d)
		      : EMBER_FAIL(&d, -EPROTO, "not JSON: line %d, column %d: %s", jerr.line,
				   jerr.column, jerr.text);
	if (!err) {
		r->items = calloc(naddrs ? naddrs : 1, sizeof(*r->items));
		r->frames = calloc(nframes ? nframes : 1, sizeof(*r->frames));
		err = r->items && r->frames ? take_items(r, results, naddrs, &d) : -ENOMEM;
	}
	if (err) {
		symjson_reply_free(r);
		return err;
	}
	*out = r;
	return 0;
}

const struct symjson_reply_item *symjson_reply_item(const struct symjson_reply *r, size_t i)
{
	return &r->items[i];
}
