/*
 * symjson_request.c - the body of POST /api/v1/symbolize (schema in
 * docs/symbolize-api.md) -> struct symjson_request.  jansson parses; this
 * file checks the shape, the caps and every value, and explains a
 * rejection with its JSON path ("modules[2].addresses[5]: negative
 * address").  Two passes: the first checks the shape and counts the
 * addresses, so a batch over a cap fails before anything is allocated;
 * the second fills one array of addresses shared by all modules.
 * Unknown keys are errors, so a misspelt option never goes unnoticed.
 */
#include "wire_internal.h"
#include "symbolize_json.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((size_t)1 << 20)

static void resolve_limits(const struct symjson_limits *in, struct symjson_limits *out)
{
	struct symjson_limits l = {
		.sz = sizeof(l), .max_body_bytes = 32 * MIB, .max_modules = 4096,
		.max_addresses = MIB,
	};

#define TAKE(f)                                                              \
	if (in && in->sz >= offsetof(struct symjson_limits, f) + sizeof(in->f) && in->f) \
		l.f = in->f
	TAKE(max_body_bytes);
	TAKE(max_modules);
	TAKE(max_addresses);
#undef TAKE
	*out = l;
}

/* Every key of obj is one of keys[] (NULL-terminated). */
static int only_keys(const json_t *obj, const char *const *keys, const char *path,
		     struct ember_diag *d)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)obj, k, v) {
		size_t i = 0;

		while (keys[i] && strcmp(keys[i], k) != 0)
			i++;
		EMBER_FAIL_IF(!keys[i], d, -EINVAL, "%s: unknown key '%.64s'", path, k);
	}
	return 0;
}

static int parse_options(const json_t *opts, struct symjson_request *r, struct ember_diag *d)
{
	static const char *const keys[] = { "inlines", "demangle", NULL };
	const json_t *v;

	if (!opts)
		return 0;
	EMBER_FAIL_IF(!json_is_object(opts), d, -EINVAL, "options: not an object");
	EMBER_FORWARD_IF_ERROR(only_keys(opts, keys, "options", d));
	if ((v = json_object_get(opts, "inlines"))) {
		EMBER_FAIL_IF(!json_is_boolean(v), d, -EINVAL,
			      "options.inlines: not a boolean");
		r->inlines = json_is_true(v);
	}
	if ((v = json_object_get(opts, "demangle"))) {
		EMBER_FAIL_IF(!json_is_boolean(v), d, -EINVAL,
			      "options.demangle: not a boolean");
		r->demangle = json_is_true(v);
	}
	return 0;
}

/* Pass 1: module i's shape; adds its address count to *total. */
static int check_module(const json_t *m, size_t i, size_t *total, struct ember_diag *d)
{
	static const char *const keys[] = { "build_id", "addresses", "kind", NULL };
	const json_t *addrs = json_object_get(m, "addresses");
	char path[48];

	snprintf(path, sizeof(path), "modules[%zu]", i);
	EMBER_FAIL_IF(!json_is_object(m), d, -EINVAL, "%s: not an object", path);
	EMBER_FORWARD_IF_ERROR(only_keys(m, keys, path, d));
	EMBER_FAIL_IF(!json_object_get(m, "build_id"), d, -EINVAL, "%s.build_id: missing",
		      path);
	EMBER_FAIL_IF(!addrs, d, -EINVAL, "%s.addresses: missing", path);
	EMBER_FAIL_IF(!json_is_array(addrs), d, -EINVAL, "%s.addresses: not an array", path);
	*total += json_array_size(addrs);
	return 0;
}

static int check_shape(const json_t *mods, const struct symjson_limits *l, size_t *total,
		       struct ember_diag *d)
{
	EMBER_FAIL_IF(!mods, d, -EINVAL, "modules: missing");
	EMBER_FAIL_IF(!json_is_array(mods), d, -EINVAL, "modules: not an array");
	EMBER_FAIL_IF(json_array_size(mods) > l->max_modules, d, -E2BIG,
		      "modules: %zu modules, more than the limit of %zu", json_array_size(mods),
		      l->max_modules);
	*total = 0;
	for (size_t i = 0; i < json_array_size(mods); i++)
		EMBER_FORWARD_IF_ERROR(check_module(json_array_get(mods, i), i, total, d));
	EMBER_FAIL_IF(*total > l->max_addresses, d, -E2BIG,
		      "modules: %zu addresses in all, more than the limit of %zu", *total,
		      l->max_addresses);
	return 0;
}

/* One element of "addresses": a value, or {"addr": value, "kind": ..}. */
static int parse_address(const json_t *v, int kind, struct symjson_address *out,
			 size_t mi, size_t ai, struct ember_diag *d)
{
	static const char *const keys[] = { "addr", "kind", NULL };
	const char *why = NULL;
	char path[64];

	/* The path is formatted only for an error or an object: a plain
	 * address costs no snprintf. */
	if (json_is_object(v)) {
		const json_t *k = json_object_get(v, "kind");

		snprintf(path, sizeof(path), "modules[%zu].addresses[%zu]", mi, ai);
		EMBER_FORWARD_IF_ERROR(only_keys(v, keys, path, d));
		EMBER_FAIL_IF(k && symjson_kind_value(k, &kind, &why), d, -EINVAL,
			      "%s.kind: %s", path, why);
		v = json_object_get(v, "addr");
		EMBER_FAIL_IF(!v, d, -EINVAL, "%s.addr: missing", path);
	}
	EMBER_FAIL_IF(symjson_address_value(v, &out->addr, &why), d, -EINVAL,
		      "modules[%zu].addresses[%zu]: %s", mi, ai, why);
	out->kind = (enum symjson_addr_kind)kind;
	return 0;
}

/* Pass 2: module mi into out, its addresses into addrs. */
static int parse_module(const json_t *m, size_t mi, struct symjson_module *out,
			struct symjson_address *addrs, struct ember_diag *d)
{
	const json_t *a = json_object_get(m, "addresses"), *k = json_object_get(m, "kind");
	const char *why = NULL;
	int kind = SYMJSON_VADDR;

	EMBER_FAIL_IF(symjson_build_id_value(json_object_get(m, "build_id"), out->build_id,
					     sizeof(out->build_id), &why),
		      d, -EINVAL, "modules[%zu].build_id: %s", mi, why);
	EMBER_FAIL_IF(k && symjson_kind_value(k, &kind, &why), d, -EINVAL,
		      "modules[%zu].kind: %s", mi, why);
	out->addrs = addrs;
	out->naddrs = json_array_size(a);
	for (size_t i = 0; i < out->naddrs; i++)
		EMBER_FORWARD_IF_ERROR(parse_address(json_array_get(a, i), kind, &addrs[i], mi, i, d));
	return 0;
}

static int fill(const json_t *mods, size_t total, struct symjson_request *r,
		struct ember_diag *d)
{
	struct symjson_address *next;

	r->nmodules = json_array_size(mods);
	r->naddrs = total;
	r->modules = calloc(r->nmodules ? r->nmodules : 1, sizeof(*r->modules));
	r->addrs = next = calloc(total ? total : 1, sizeof(*next));
	EMBER_FAIL_IF(!r->modules || !next, d, -ENOMEM, "out of memory for %zu addresses",
		      total);
	for (size_t i = 0; i < r->nmodules; i++) {
		EMBER_FORWARD_IF_ERROR(parse_module(json_array_get(mods, i), i, &r->modules[i],
						   next, d));
		next += r->modules[i].naddrs;
	}
	return 0;
}

static int parse_root(const json_t *root, const struct symjson_limits *l,
		      struct symjson_request *r, struct ember_diag *d)
{
	static const char *const keys[] = { "modules", "options", NULL };
	const json_t *mods = json_object_get(root, "modules");
	size_t total = 0;

	EMBER_FAIL_IF(!json_is_object(root), d, -EINVAL, "request: not a JSON object");
	EMBER_FORWARD_IF_ERROR(only_keys(root, keys, "request", d));
	EMBER_FORWARD_IF_ERROR(check_shape(mods, l, &total, d));
	EMBER_FORWARD_IF_ERROR(parse_options(json_object_get(root, "options"), r, d));
	return fill(mods, total, r, d);
}

int symjson_request_parse(const char *body, size_t len, const struct symjson_limits *lim,
			  struct symjson_request **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct symjson_limits l;
	struct symjson_request *r;
	json_error_t jerr;
	json_t *root;
	int err;

	resolve_limits(lim, &l);
	EMBER_FAIL_IF(len > l.max_body_bytes, &d, -E2BIG,
		      "request: body of %zu bytes, more than the limit of %zu", len,
		      l.max_body_bytes);
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	EMBER_FAIL_IF(!root, &d, -EINVAL, "request: not JSON: line %d, column %d: %s",
		      jerr.line, jerr.column, jerr.text);
	r = calloc(1, sizeof(*r));
	if (!r) {
		json_decref(root);
		return EMBER_FAIL(&d, -ENOMEM, "out of memory");
	}
	r->inlines = r->demangle = true;
	err = parse_root(root, &l, r, &d);
	json_decref(root);
	if (err) {
		symjson_request_free(r);
		return err;
	}
	*out = r;
	return 0;
}

void symjson_request_free(struct symjson_request *r)
{
	if (!r)
		return;
	free(r->addrs);
	free(r->modules);
	free(r);
}
