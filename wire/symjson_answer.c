/*
 * symjson_answer.c - the answer of POST /api/v1/symbolize, written as the
 * symbolizer produces it (docs/symbolize-api.md):
 *   {"modules":[{"build_id":"..","results":[{"address":"0x..","frames":[..],
 *     "error":null,"source":"dwarf"},..],"resolved":N,"unresolved":N,
 *     "by_source":{"dwarf":N}},..]}
 * Per-module counts are written after the module's results, when they
 * are known, so nothing is buffered besides the output itself.
 */
#include "wire_internal.h"
#include "symbolize_json.h"

#include <string.h>

const char *symjson_error_name(enum symjson_error e)
{
	static const char *const names[SYMJSON_ERR_COUNT] = {
		[SYMJSON_ERR_UNKNOWN_BUILD_ID] = "unknown_build_id",
		[SYMJSON_ERR_NO_DEBUGINFO] = "no_debuginfo",
		[SYMJSON_ERR_NO_SYMBOLS_AT_ADDRESS] = "no_symbols_at_address",
		[SYMJSON_ERR_UPSTREAM_UNAVAILABLE] = "upstream_unavailable",
		[SYMJSON_ERR_OVER_BUDGET] = "index_over_budget",
		[SYMJSON_ERR_STORE_UNAVAILABLE] = "store_unavailable",
		[SYMJSON_ERR_DEADLINE] = "deadline_exceeded",
		[SYMJSON_ERR_FETCH_LIMIT] = "upstream_fetch_limit",
		[SYMJSON_ERR_BUSY] = "server_busy",
	};

	return (unsigned)e < SYMJSON_ERR_COUNT ? names[e] : NULL;
}

const char *symjson_source_name(enum symjson_source s)
{
	static const char *const names[SYMJSON_SOURCE_COUNT] = {
		[SYMJSON_SOURCE_DWARF] = "dwarf",
		[SYMJSON_SOURCE_SYMTAB] = "symtab",
		[SYMJSON_SOURCE_DYNSYM] = "dynsym",
		[SYMJSON_SOURCE_GOPCLNTAB] = "gopclntab",
	};

	return (unsigned)s < SYMJSON_SOURCE_COUNT ? names[s] : NULL;
}

void symjson_writer_init(struct symjson_writer *w, struct ember_buf *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
}

/* Sticky error: keep the first. */
static int track(struct symjson_writer *w, int err)
{
	if (err && !w->err)
		w->err = err;
	return w->err;
}

static int expect_depth(struct symjson_writer *w, int depth)
{
	return track(w, w->depth == depth ? 0 : -EINVAL);
}

int symjson_answer_begin(struct symjson_writer *w)
{
	if (expect_depth(w, 0))
		return w->err;
	w->depth = 1;
	return track(w, WIRE_JSON_LIT(w->out, "{\"modules\":["));
}

int symjson_module_begin(struct symjson_writer *w, const char *build_id)
{
	struct ember_buf *b = w->out;
	int err;

	if (expect_depth(w, 1))
		return w->err;
	err = w->nmodules++ ? ember_buf_putc(b, ',') : 0;
	if (!err)
		err = WIRE_JSON_LIT(b, "{\"build_id\":");
	if (!err)
		err = wire_json_str(b, build_id ? build_id : "");
	if (!err)
		err = WIRE_JSON_LIT(b, ",\"results\":[");
	w->depth = 2;
	w->nresults = w->resolved = w->unresolved = 0;
	memset(w->by_source, 0, sizeof(w->by_source));
	return track(w, err);
}

/* "key":"value" preceded by a comma, when value is non-NULL. */
static int opt_str(struct ember_buf *b, const char *key, size_t klen, const char *value)
{
	int err;

	if (!value)
		return 0;
	err = wire_json_lit(b, key, klen);
	return err ? err : wire_json_str(b, value);
}

static int opt_num(struct ember_buf *b, const char *key, size_t klen, uint64_t value)
{
	int err;

	if (!value)
		return 0;
	err = wire_json_lit(b, key, klen);
	return err ? err : wire_json_u64(b, value);
}

#define KEY(s) s, sizeof(s) - 1

static int write_frame(struct ember_buf *b, const struct symjson_frame *f)
{
	int err = f->inlined ? WIRE_JSON_LIT(b, "{\"inlined\":true")
			     : WIRE_JSON_LIT(b, "{\"inlined\":false");

	if (!err)
		err = opt_str(b, KEY(",\"function\":"), f->function);
	if (!err)
		err = opt_str(b, KEY(",\"linkage_name\":"), f->linkage_name);
	if (!err)
		err = opt_str(b, KEY(",\"file\":"), f->file);
	if (!err)
		err = opt_num(b, KEY(",\"line\":"), f->line);
	if (!err)
		err = opt_num(b, KEY(",\"column\":"), f->column);
	return err ? err : ember_buf_putc(b, '}');
}

/* ,"error":..,"source":..} closing a result. */
static int write_status(struct ember_buf *b, const struct symjson_result *r)
{
	const char *e = symjson_error_name(r->error), *s = symjson_source_name(r->source);
	int err = WIRE_JSON_LIT(b, "],\"error\":");

	if (!err)
		err = e ? wire_json_str(b, e) : WIRE_JSON_LIT(b, "null");
	if (!err)
		err = WIRE_JSON_LIT(b, ",\"source\":");
	if (!err)
		err = s ? wire_json_str(b, s) : WIRE_JSON_LIT(b, "null");
	return err ? err : ember_buf_putc(b, '}');
}

static void count_result(struct symjson_writer *w, const struct symjson_result *r)
{
	if (r->error != SYMJSON_OK) {
		w->unresolved++;
		return;
	}
	w->resolved++;
	w->by_source[r->source]++;
}

int symjson_write_result(struct symjson_writer *w, const struct symjson_result *r)
{
	struct ember_buf *b = w->out;
	int err;

	if (expect_depth(w, 2))
		return w->err;
	if ((unsigned)r->error >= SYMJSON_ERR_COUNT || (unsigned)r->source >= SYMJSON_SOURCE_COUNT)
		return track(w, -EINVAL);
	err = w->nresults++ ? ember_buf_putc(b, ',') : 0;
	if (!err)
		err = WIRE_JSON_LIT(b, "{\"address\":");
	if (!err)
		err = wire_json_hex(b, r->address);
	if (!err && r->kind == SYMJSON_FILE_OFFSET)
		err = WIRE_JSON_LIT(b, ",\"kind\":\"file_offset\"");
	if (!err)
		err = WIRE_JSON_LIT(b, ",\"frames\":[");
	for (size_t i = 0; !err && i < r->nframes; i++) {
		err = i ? ember_buf_putc(b, ',') : 0;
		if (!err)
			err = write_frame(b, &r->frames[i]);
	}
	if (!err)
		err = write_status(b, r);
	if (!err)
		count_result(w, r);
	return track(w, err);
}

static int write_by_source(struct symjson_writer *w)
{
	struct ember_buf *b = w->out;
	int err = WIRE_JSON_LIT(b, ",\"by_source\":{");
	bool first = true;

	for (int s = SYMJSON_SOURCE_NONE + 1; !err && s < SYMJSON_SOURCE_COUNT; s++) {
		if (!w->by_source[s])
			continue;
		err = first ? 0 : ember_buf_putc(b, ',');
		first = false;
		if (!err)
			err = wire_json_str(b, symjson_source_name(s));
		if (!err)
			err = ember_buf_putc(b, ':');
		if (!err)
			err = wire_json_u64(b, w->by_source[s]);
	}
	return err ? err : WIRE_JSON_LIT(b, "}}");
}

int symjson_module_end(struct symjson_writer *w)
{
	struct ember_buf *b = w->out;
	int err;

	if (expect_depth(w, 2))
		return w->err;
	err = WIRE_JSON_LIT(b, "],\"resolved\":");
	if (!err)
		err = wire_json_u64(b, w->resolved);
	if (!err)
		err = WIRE_JSON_LIT(b, ",\"unresolved\":");
	if (!err)
		err = wire_json_u64(b, w->unresolved);
	if (!err)
		err = write_by_source(w);
	w->depth = 1;
	return track(w, err);
}

int symjson_answer_end(struct symjson_writer *w)
{
	if (expect_depth(w, 1))
		return w->err;
	w->depth = 0;
	return track(w, WIRE_JSON_LIT(w->out, "]}"));
}
