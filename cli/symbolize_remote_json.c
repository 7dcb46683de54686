/*
 * symbolize_remote_json.c - the client side of POST /api/v1/symbolize
 * (docs/symbolize-api.md) for `ember symbolize --server`: the request of
 * one batch, the checks an answer must pass before anything of it is
 * printed, and its frames turned into struct sym_frame with the names
 * offline mode would print.
 *
 * wire/symbolize_json.h is the server's half (it parses requests and
 * writes answers); this is the opposite direction, on jansson.  The
 * answer is outside input: every field is checked, and a rejection says
 * which one, by its JSON path.
 *
 * Names: the server sends "function" (demangled with parameters) and
 * "linkage_name" (raw; the outermost frame named after its ELF symbol),
 * which is what --functions=linkage prints with and without demangling.
 * --functions=short prints DWARF's DW_AT_name offline, which the API does
 * not carry: it is derived here from the linkage name (demangled without
 * parameters, last scope component, clone suffix dropped); see
 * docs/cli.md for where that can differ.
 */
#include "symbolize_remote.h"

#include <errno.h>
#include <inttypes.h>
#include <libiberty/demangle.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the request -------------------------------------------------------- */

int remote_request_write(struct ember_buf *body, const char *build_id,
			 bool file_offsets, const uint64_t *addrs, size_t n)
{
	int err = ember_buf_appendf(body, "{\"modules\":[{\"build_id\":\"%s\",\"kind\":\"%s\","
				    "\"addresses\":[", build_id,
				    file_offsets ? "file_offset" : "vaddr");

	for (size_t i = 0; !err && i < n; i++)
		err = ember_buf_appendf(body, "%s\"0x%" PRIx64 "\"", i ? "," : "", addrs[i]);
	if (!err)
		err = ember_buf_appendf(body, "]}],\"options\":{\"inlines\":true,"
					"\"demangle\":true}}");
	return err;
}

/* ---- checking the answer ------------------------------------------------ */

static int answer_fail(char *why, size_t why_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int answer_fail(char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (why && why_size)
		vsnprintf(why, why_size, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

/* Reject the answer unless cond holds; the message names the JSON path. */
#define ANSWER_REQUIRE(cond, ...)                                              \
	do {                                                                   \
		if (!(cond))                                                   \
			return answer_fail(why, why_size, __VA_ARGS__);        \
	} while (0)

static bool opt_string(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return !v || json_is_null(v) || json_is_string(v);
}

static bool opt_u32(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return !v || json_is_null(v) ||
	       (json_is_integer(v) && json_integer_value(v) >= 0 &&
		json_integer_value(v) <= UINT32_MAX);
}

static int check_frame(json_t *f, size_t i, size_t j, char *why, size_t why_size)
{
	static const char *const strings[] = { "function", "linkage_name", "file" };
	json_t *inl = json_object_get(f, "inlined");

	ANSWER_REQUIRE(json_is_object(f), "results[%zu].frames[%zu]: not an object", i, j);
	for (size_t k = 0; k < sizeof(strings) / sizeof(strings[0]); k++)
		ANSWER_REQUIRE(opt_string(f, strings[k]),
			       "results[%zu].frames[%zu].%s: not a string", i, j, strings[k]);
	ANSWER_REQUIRE(opt_u32(f, "line"), "results[%zu].frames[%zu].line: not a line number",
		       i, j);
	ANSWER_REQUIRE(opt_u32(f, "column"), "results[%zu].frames[%zu].column: not a column",
		       i, j);
	ANSWER_REQUIRE(!inl || json_is_boolean(inl),
		       "results[%zu].frames[%zu].inlined: not a boolean", i, j);
	return 0;
}

static int check_result(json_t *r, size_t i, uint64_t addr, char *why, size_t why_size)
{
	json_t *frames = json_object_get(r, "frames");
	const char *a = json_string_value(json_object_get(r, "address"));
	uint64_t got;
	size_t j;
	json_t *f;
	int err;

	ANSWER_REQUIRE(json_is_object(r), "results[%zu]: not an object", i);
	ANSWER_REQUIRE(a && cli_parse_addr(a, strlen(a), &got) && got == addr,
		       "results[%zu].address: %s, but 0x%" PRIx64 " was asked", i,
		       a ? a : "missing", addr);
	ANSWER_REQUIRE(json_is_array(frames), "results[%zu].frames: not an array", i);
	ANSWER_REQUIRE(opt_string(r, "error"), "results[%zu].error: not a string", i);
	ANSWER_REQUIRE(opt_string(r, "source"), "results[%zu].source: not a string", i);
	json_array_foreach(frames, j, f) {
		err = check_frame(f, i, j, why, why_size);
		if (err)
			return err;
	}
	return 0;
}

int remote_answer_parse(const char *body, size_t len, const uint64_t *addrs,
			size_t naddrs, struct remote_answer *out, char *why,
			size_t why_size)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	json_t *results = json_object_get(json_array_get(json_object_get(root, "modules"), 0),
					  "results");
	int err = 0;

	if (!root)
		return answer_fail(why, why_size, "not JSON: line %d, column %d: %s",
				   jerr.line, jerr.column, jerr.text);
	if (!json_is_array(results))
		err = answer_fail(why, why_size, "modules[0].results: not an array");
	else if (json_array_size(results) != naddrs)
		err = answer_fail(why, why_size, "%zu results for %zu addresses",
				  json_array_size(results), naddrs);
	for (size_t i = 0; !err && i < naddrs; i++)
		err = check_result(json_array_get(results, i), i, addrs[i], why, why_size);
	if (err) {
		json_decref(root);
		return err;
	}
	*out = (struct remote_answer){ .root = root, .results = results };
	return 0;
}

void remote_answer_release(struct remote_answer *a)
{
	if (!a)
		return;
	json_decref(a->root);
	a->root = a->results = NULL;
}

/* ---- frames and names ----------------------------------------------------- */

static enum sym_source source_of(const char *s)
{
	if (!s)
		return SYM_SOURCE_NONE;
	if (strcmp(s, "dwarf") == 0)
		return SYM_SOURCE_DWARF;
	if (strcmp(s, "dynsym") == 0)
		return SYM_SOURCE_DYNSYM;
	return SYM_SOURCE_SYMTAB; /* symtab; gopclntab is a symbol table too */
}

static bool is_mangled(const char *s)
{
	return (s[0] == '_' && (s[1] == 'Z' || s[1] == 'R')) ||
	       (s[0] == '_' && s[1] == '_' && s[2] == 'Z');
}

/* The last "::" component of a demangled name, ignoring "::" inside
 * <...>, (...), {...} and [...] ("(anonymous namespace)::f", lambdas). */
static const char *last_component(const char *s)
{
	const char *last = s;
	int depth = 0;

	for (const char *p = s; *p; p++) {
		if (*p == '<' || *p == '(' || *p == '{' || *p == '[')
			depth++;
		else if ((*p == '>' || *p == ')' || *p == '}' || *p == ']') && depth > 0)
			depth--;
		else if (depth == 0 && p[0] == ':' && p[1] == ':')
			last = p + 2, p++;
	}
	return last;
}

/* "name[abi:cxx11]" -> "name": DW_AT_name has no ABI tags. */
static void drop_abi_tags(char *s)
{
	char *tag, *end;

	while ((tag = strstr(s, "[abi:")) && (end = strchr(tag, ']')))
		memmove(tag, end + 1, strlen(end + 1) + 1);
}

/*
 * What offline --functions=short prints, from the raw name: DW_AT_name
 * for DWARF frames (approximated: no scope, no GCC clone suffix such as
 * ".constprop.0" or " [clone .cold]", no ABI tag; template arguments as
 * the demangler spells them, not as GCC does), the symbol demangled
 * without parameters otherwise.  Caller frees.
 */
static char *short_name(const char *raw, bool dwarf, bool demangle)
{
	char *d = is_mangled(raw) && (demangle || dwarf)
			  ? cplus_demangle(raw, DMGL_ANSI) : NULL;
	const char *s = d ? d : raw, *cut;
	char *out;

	if (dwarf) {
		s = last_component(s);
		cut = d ? strstr(s, " [clone ") : strchr(s, '.');
		out = strndup(s, cut ? (size_t)(cut - s) : strlen(s));
		if (out && d)
			drop_abi_tags(out);
	} else {
		out = strdup(s);
	}
	free(d);
	return out;
}

static const char *get_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static uint32_t get_u32(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (uint32_t)json_integer_value(v) : 0;
}

/* The name frame i is printed with, as offline mode would choose it. */
static void name_frame(struct remote_result *r, size_t i, json_t *f,
		       const struct cli_symbolize_opts *o)
{
	const char *fn = get_str(f, "function"), *raw = get_str(f, "linkage_name");

	if (!raw)
		raw = fn;
	if (o->functions == CLI_FN_NONE || !raw) {
		r->names[i] = NULL;
	} else if (o->functions == CLI_FN_SHORT) {
		r->owned[i] = short_name(raw, r->frames[i].source == SYM_SOURCE_DWARF,
					 o->demangle);
		r->names[i] = r->owned[i];
	} else {
		r->names[i] = o->demangle && fn ? fn : raw;
	}
}

void remote_result_get(const struct remote_answer *a, size_t i,
		       const struct cli_symbolize_opts *o, struct remote_result *r)
{
	json_t *res = json_array_get(a->results, i);
	json_t *frames = json_object_get(res, "frames");
	enum sym_source src = source_of(get_str(res, "source"));
	size_t n = json_array_size(frames);

	r->n = n < REMOTE_MAX_FRAMES ? (int)n : REMOTE_MAX_FRAMES;
	r->reason = get_str(res, "error");
	for (int k = 0; k < r->n; k++) {
		json_t *f = json_array_get(frames, (size_t)k);

		r->frames[k] = (struct sym_frame){
			.name = get_str(f, "linkage_name"),
			.file = get_str(f, "file"),
			.line = get_u32(f, "line"),
			.column = get_u32(f, "column"),
			.func_start = SYM_ADDR_UNKNOWN,
			.source = src,
			.inlined = json_is_true(json_object_get(f, "inlined")),
		};
		r->owned[k] = NULL;
		name_frame(r, (size_t)k, f, o);
	}
}

void remote_result_release(struct remote_result *r)
{
	if (!r)
		return;
	for (int k = 0; k < r->n; k++) {
		free(r->owned[k]);
		r->owned[k] = NULL;
	}
	r->n = 0;
}
