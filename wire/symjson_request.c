/*
 * symjson_request.c - the body of POST /api/v1/symbolize (schema in
 * docs/symbolize-api.md) -> struct symjson_request, parsed as it arrives.
 *
 * yajl tokenizes (a streaming parser: it builds no tree, and keeps only a
 * token that spans two chunks); this file is the schema as a small state
 * machine over its events.  Every value is checked where it stands, the
 * caps are checked as the counts grow, and a rejection names its JSON
 * path ("modules[2].addresses[5]: negative address").  What the request
 * costs is its result alone, 16 bytes an address, and all of it (yajl's
 * buffers included) is taken from the caller's memory account before it
 * is allocated: a tree parser cost 76 bytes of heap per body byte on an
 * array of empty objects, before any check could run.  Unknown keys are
 * errors, so a misspelt option never goes unnoticed; a key given twice is
 * one too.
 */
#include "wire_internal.h"
#include "symbolize_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define MIB ((size_t)1 << 20)
#define KIND_INHERIT 2 /* an address whose kind is its module's, known at its end */

/* Where a value stands: the innermost open container. */
enum where { W_TOP, W_ROOT, W_MODULES, W_MODULE, W_ADDRS, W_ADDR, W_OPTIONS };

/* Keys of the schema, as bits of an object's seen set. */
enum key {
	K_NONE = 0,
	K_MODULES = 1 << 0, K_OPTIONS = 1 << 1,			/* the request */
	K_BUILD_ID = 1 << 2, K_ADDRESSES = 1 << 3, K_KIND = 1 << 4, /* a module */
	K_ADDR = 1 << 5,					/* an address object */
	K_INLINES = 1 << 6, K_DEMANGLE = 1 << 7,		/* options */
};

#define DEPTH_MAX 6

struct module_at { /* a module's addresses: [first, first + n) of r->addrs */
	size_t first, n;
	int kind;
};

struct symjson_parser {
	struct symjson_limits l;
	struct ember_mem_account *acct;
	yajl_handle h;
	yajl_alloc_funcs af;
	enum where stack[DEPTH_MAX];
	unsigned seen[DEPTH_MAX];	/* keys seen in each open object */
	int depth;
	enum key key;			/* whose value comes next, in an object */
	struct symjson_request *r;
	struct module_at *mods;		/* positions, fixed into pointers at the end */
	size_t mods_alloc, modules_alloc, addrs_alloc;
	uint64_t addr;			/* the address object being read */
	int addr_kind;
	size_t fed, line, col;		/* bytes so far, and where the last one stands */
	int err;
	struct ember_diag d;
	char why[256];
};

/* ---- memory, from the caller's account ---------------------------------- */

/* The error of a failed allocation: the account's (-E2BIG: the request is
 * too large; -EAGAIN: the server is busy), else -ENOMEM. */
static int alloc_error(const struct symjson_parser *p)
{
	return p->acct && p->acct->err ? p->acct->err : -ENOMEM;
}

static int grow(struct symjson_parser *p, void **arr, size_t *alloc, size_t need, size_t elem)
{
	size_t n = *alloc ? *alloc : 16;
	void *a;

	if (need <= *alloc)
		return 0;
	while (n < need)
		n *= 2;
	a = ember_mem_realloc(p->acct, *arr, n * elem);
	if (!a)
		return EMBER_FAIL(&p->d, alloc_error(p),
				  "request: no memory for %zu entries (the server's share of "
				  "one request)", need);
	*arr = a;
	*alloc = n;
	return 0;
}

/* ---- paths and failures ----------------------------------------------------- */

/* A failure (sticky); returns 0, which tells yajl to stop. */
static int stop(struct symjson_parser *p, int err)
{
	if (!p->err)
		p->err = err;
	return 0;
}

#define FAIL(p, e, ...) stop((p), EMBER_FAIL(&(p)->d, (e), __VA_ARGS__))

static size_t mod_i(const struct symjson_parser *p)
{
	return p->r->nmodules ? p->r->nmodules - 1 : 0;
}

static size_t addr_j(const struct symjson_parser *p)
{
	return p->mods[mod_i(p)].n;
}

/* The JSON path of the open object, for "unknown key" and the like. */
static void path_of(const struct symjson_parser *p, enum where w, char *out, size_t size)
{
	switch (w) {
	case W_MODULE:
		snprintf(out, size, "modules[%zu]", mod_i(p));
		break;
	case W_ADDR:
		snprintf(out, size, "modules[%zu].addresses[%zu]", mod_i(p), addr_j(p));
		break;
	case W_OPTIONS:
		snprintf(out, size, "options");
		break;
	default:
		snprintf(out, size, "request");
	}
}

static enum where top(const struct symjson_parser *p)
{
	return p->stack[p->depth];
}

static int push(struct symjson_parser *p, enum where w)
{
	if (p->depth + 1 >= DEPTH_MAX)
		return FAIL(p, -EINVAL, "request: nested too deep");
	p->stack[++p->depth] = w;
	p->seen[p->depth] = 0;
	p->key = K_NONE;
	return 1;
}

/* ---- the values ----------------------------------------------------------- */

/* A value that has no place where it stands: the schema's reason. */
static int misplaced(struct symjson_parser *p)
{
	size_t i = mod_i(p);

	switch (top(p)) {
	case W_TOP:
		return FAIL(p, -EINVAL, "request: not a JSON object");
	case W_ROOT:
		return p->key == K_MODULES ? FAIL(p, -EINVAL, "modules: not an array")
					   : FAIL(p, -EINVAL, "options: not an object");
	case W_MODULES:
		return FAIL(p, -EINVAL, "modules[%zu]: not an object", p->r->nmodules);
	case W_MODULE:
		if (p->key == K_BUILD_ID)
			return FAIL(p, -EINVAL, "modules[%zu].build_id: not a build ID "
					       "(even-length hex, 2 to 128 digits)", i);
		if (p->key == K_ADDRESSES)
			return FAIL(p, -EINVAL, "modules[%zu].addresses: not an array", i);
		return FAIL(p, -EINVAL, "modules[%zu].kind: not \"vaddr\" or \"file_offset\"", i);
	case W_ADDRS:
		return FAIL(p, -EINVAL, "modules[%zu].addresses[%zu]: not an address (a "
				       "non-negative integer or a \"0x\" hex string)", i, addr_j(p));
	case W_ADDR:
		if (p->key == K_ADDR)
			return FAIL(p, -EINVAL, "modules[%zu].addresses[%zu]: not an address (a "
					       "non-negative integer or a \"0x\" hex string)",
				    i, addr_j(p));
		return FAIL(p, -EINVAL, "modules[%zu].addresses[%zu].kind: not \"vaddr\" or "
				       "\"file_offset\"", i, addr_j(p));
	default:
		return FAIL(p, -EINVAL, "options.%s: not a boolean",
			    p->key == K_INLINES ? "inlines" : "demangle");
	}
}

/* Append an address to the current module (its kind: KIND_INHERIT or one). */
static int add_address(struct symjson_parser *p, uint64_t addr, int kind)
{
	struct symjson_request *r = p->r;

	if (r->naddrs >= p->l.max_addresses)
		return FAIL(p, -E2BIG, "modules: %zu addresses in all, more than the limit of %zu",
			    r->naddrs + 1, p->l.max_addresses);
	if (grow(p, (void **)&r->addrs, &p->addrs_alloc, r->naddrs + 1, sizeof(*r->addrs)))
		return stop(p, alloc_error(p));
	r->addrs[r->naddrs++] = (struct symjson_address){ addr, (enum symjson_addr_kind)kind };
	p->mods[mod_i(p)].n++;
	return 1;
}

/* An address as a value: where it stands, into the array or the object. */
static int address_value(struct symjson_parser *p, const char *s, size_t len, bool number)
{
	const char *why = NULL;
	uint64_t v;

	if (symjson_address_text(s, len, number, &v, &why))
		return FAIL(p, -EINVAL, "modules[%zu].addresses[%zu]: %s", mod_i(p), addr_j(p),
			    why);
	if (top(p) == W_ADDRS)
		return add_address(p, v, KIND_INHERIT);
	p->addr = v;
	return 1;
}

static int kind_value(struct symjson_parser *p, const char *s, size_t len, int *out)
{
	const char *why = NULL;

	if (!symjson_kind_str(s, len, out, &why))
		return 1;
	if (top(p) == W_ADDR)
		return FAIL(p, -EINVAL, "modules[%zu].addresses[%zu].kind: %s", mod_i(p),
			    addr_j(p), why);
	return FAIL(p, -EINVAL, "modules[%zu].kind: %s", mod_i(p), why);
}

static int string_value(struct symjson_parser *p, const char *s, size_t len)
{
	const char *why = NULL;
	enum where w = top(p);

	if ((w == W_ADDRS) || (w == W_ADDR && p->key == K_ADDR))
		return address_value(p, s, len, false);
	if (w == W_ADDR && p->key == K_KIND)
		return kind_value(p, s, len, &p->addr_kind);
	if (w == W_MODULE && p->key == K_KIND)
		return kind_value(p, s, len, &p->mods[mod_i(p)].kind);
	if (w != W_MODULE || p->key != K_BUILD_ID)
		return misplaced(p);
	if (symjson_build_id_str(s, len, p->r->modules[mod_i(p)].build_id,
				 sizeof(p->r->modules[0].build_id), &why))
		return FAIL(p, -EINVAL, "modules[%zu].build_id: %s", mod_i(p), why);
	return 1;
}

/* ---- yajl's events ------------------------------------------------------- */

static int after_value(struct symjson_parser *p, int ret)
{
	p->key = K_NONE;
	return ret;
}

static int on_null(void *ctx)
{
	return misplaced(ctx);
}

static int on_boolean(void *ctx, int v)
{
	struct symjson_parser *p = ctx;

	if (top(p) != W_OPTIONS)
		return misplaced(p);
	if (p->key == K_INLINES)
		p->r->inlines = v;
	else
		p->r->demangle = v;
	return after_value(p, 1);
}

static int on_number(void *ctx, const char *s, size_t len)
{
	struct symjson_parser *p = ctx;

	if (top(p) == W_ADDRS || (top(p) == W_ADDR && p->key == K_ADDR))
		return after_value(p, address_value(p, s, len, true));
	return misplaced(p);
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
	struct symjson_parser *p = ctx;

	return after_value(p, string_value(p, (const char *)s, len));
}

/* A new module: counted against the cap, room made for it. */
static int start_module(struct symjson_parser *p)
{
	struct symjson_request *r = p->r;

	if (r->nmodules >= p->l.max_modules)
		return FAIL(p, -E2BIG, "modules: %zu modules, more than the limit of %zu",
			    r->nmodules + 1, p->l.max_modules);
	if (grow(p, (void **)&p->mods, &p->mods_alloc, r->nmodules + 1, sizeof(*p->mods)) ||
	    grow(p, (void **)&r->modules, &p->modules_alloc, r->nmodules + 1,
		 sizeof(*r->modules)))
		return stop(p, alloc_error(p));
	memset(&r->modules[r->nmodules], 0, sizeof(r->modules[0]));
	p->mods[r->nmodules++] = (struct module_at){ r->naddrs, 0, SYMJSON_VADDR };
	return push(p, W_MODULE);
}

static int on_start_map(void *ctx)
{
	struct symjson_parser *p = ctx;

	switch (top(p)) {
	case W_TOP:
		return push(p, W_ROOT);
	case W_ROOT:
		return p->key == K_OPTIONS ? push(p, W_OPTIONS) : misplaced(p);
	case W_MODULES:
		return start_module(p);
	case W_ADDRS:
		p->addr_kind = KIND_INHERIT;
		return push(p, W_ADDR);
	default:
		return misplaced(p);
	}
}

static int on_start_array(void *ctx)
{
	struct symjson_parser *p = ctx;

	if (top(p) == W_ROOT && p->key == K_MODULES)
		return push(p, W_MODULES);
	if (top(p) == W_MODULE && p->key == K_ADDRESSES)
		return push(p, W_ADDRS);
	return misplaced(p);
}

/* The schema's keys of the object w. */
static enum key key_of(enum where w, const char *k, size_t n)
{
	static const struct {
		enum where w;
		const char *name;
		enum key key;
	} keys[] = {
		{ W_ROOT, "modules", K_MODULES },     { W_ROOT, "options", K_OPTIONS },
		{ W_MODULE, "build_id", K_BUILD_ID }, { W_MODULE, "addresses", K_ADDRESSES },
		{ W_MODULE, "kind", K_KIND },	      { W_ADDR, "addr", K_ADDR },
		{ W_ADDR, "kind", K_KIND },	      { W_OPTIONS, "inlines", K_INLINES },
		{ W_OPTIONS, "demangle", K_DEMANGLE },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].w == w && strlen(keys[i].name) == n && !memcmp(keys[i].name, k, n))
			return keys[i].key;
	return K_NONE;
}

static int on_map_key(void *ctx, const unsigned char *k, size_t n)
{
	struct symjson_parser *p = ctx;
	enum key key = key_of(top(p), (const char *)k, n);
	char path[64];

	path_of(p, top(p), path, sizeof(path));
	if (!key)
		return FAIL(p, -EINVAL, "%s: unknown key '%.*s'", path, (int)(n > 64 ? 64 : n),
			    (const char *)k);
	if (p->seen[p->depth] & key)
		return FAIL(p, -EINVAL, "%s: duplicate object key '%.*s'", path, (int)n,
			    (const char *)k);
	p->seen[p->depth] |= key;
	p->key = key;
	return 1;
}

/* The end of an object: what it must have had. */
static int end_object(struct symjson_parser *p, enum where w, unsigned seen)
{
	size_t i = mod_i(p);

	if (w == W_ROOT && !(seen & K_MODULES))
		return FAIL(p, -EINVAL, "modules: missing");
	if (w == W_MODULE && !(seen & K_BUILD_ID))
		return FAIL(p, -EINVAL, "modules[%zu].build_id: missing", i);
	if (w == W_MODULE && !(seen & K_ADDRESSES))
		return FAIL(p, -EINVAL, "modules[%zu].addresses: missing", i);
	if (w == W_ADDR && !(seen & K_ADDR))
		return FAIL(p, -EINVAL, "modules[%zu].addresses[%zu].addr: missing", i, addr_j(p));
	if (w == W_ADDR)
		return add_address(p, p->addr, p->addr_kind);
	return 1;
}

static int on_end_map(void *ctx)
{
	struct symjson_parser *p = ctx;
	enum where w = top(p);
	unsigned seen = p->seen[p->depth];

	p->depth--;
	return after_value(p, end_object(p, w, seen));
}

static int on_end_array(void *ctx)
{
	struct symjson_parser *p = ctx;

	p->depth--;
	return after_value(p, 1);
}

static const yajl_callbacks callbacks = {
	.yajl_null = on_null,
	.yajl_boolean = on_boolean,
	.yajl_number = on_number,
	.yajl_string = on_string,
	.yajl_start_map = on_start_map,
	.yajl_map_key = on_map_key,
	.yajl_end_map = on_end_map,
	.yajl_start_array = on_start_array,
	.yajl_end_array = on_end_array,
};

/* ---- the parser ------------------------------------------------------------ */

static void resolve_limits(const struct symjson_limits *in, struct symjson_limits *out)
{
	struct symjson_limits l = {
		.sz = sizeof(l), .max_body_bytes = 32 * MIB, .max_modules = 4096,
		.max_addresses = MIB,
	};

#define TAKE(f)                                                              \
	l.f = EMBER_OPTS_OR(in, f, l.f)
	TAKE(max_body_bytes);
	TAKE(max_modules);
	TAKE(max_addresses);
#undef TAKE
	*out = l;
}

int symjson_parser_new(const struct symjson_limits *lim, struct ember_mem_account *acct,
		       struct symjson_parser **out)
{
	struct symjson_parser *p = ember_mem_alloc(acct, sizeof(*p));
	struct symjson_request *r = ember_mem_alloc(acct, sizeof(*r));

	if (!p || !r) {
		free(p);
		free(r);
		return acct && acct->err ? acct->err : -ENOMEM;
	}
	memset(p, 0, sizeof(*p));
	memset(r, 0, sizeof(*r));
	r->inlines = r->demangle = true;
	resolve_limits(lim, &p->l);
	p->acct = acct;
	p->r = r;
	p->line = 1;
	p->d = ember_diag_make(p->why, sizeof(p->why));
	p->af = wire_yajl_funcs(acct);
	p->h = yajl_alloc(&callbacks, &p->af, p);
	if (!p->h) {
		symjson_parser_free(p);
		return acct && acct->err ? acct->err : -ENOMEM;
	}
	*out = p;
	return 0;
}

/* Count the lines and columns of data[0, n): where a syntax error stands. */
static void advance(struct symjson_parser *p, const char *data, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (data[i] == '\n') {
			p->line++;
			p->col = 0;
		} else {
			p->col++;
		}
	}
}

/* yajl stopped: ours (p->err), or a syntax error of the body. */
static int parse_failed(struct symjson_parser *p, yajl_status st, const char *data,
			size_t len)
{
	(void)st;
	unsigned char *msg;
	size_t at = yajl_get_bytes_consumed(p->h);

	if (p->err)
		return p->err;
	advance(p, data, at < len ? at : len);
	msg = yajl_get_error(p->h, 0, NULL, 0);
	FAIL(p, -EINVAL, "request: not JSON: line %zu, column %zu: %.*s", p->line, p->col + 1,
	     msg ? (int)strcspn((char *)msg, "\n") : 0, msg ? (char *)msg : "");
	yajl_free_error(p->h, msg);
	return p->err;
}

/* yajl's buffers passed the request's share or the budget (charged, not
 * refused: wire_yajl_funcs): the parse stops here. */
static int over_account(struct symjson_parser *p)
{
	if (p->err || !p->acct || !p->acct->err)
		return p->err;
	FAIL(p, p->acct->err, p->acct->err == -E2BIG
				      ? "request: needs more memory than the server gives one request"
				      : "request: the server has no memory free for it now");
	return p->err;
}

int symjson_parser_feed(struct symjson_parser *p, const void *data, size_t len)
{
	yajl_status st;

	if (p->err)
		return p->err;
	if (len > p->l.max_body_bytes - p->fed) {
		stop(p, EMBER_FAIL(&p->d, -E2BIG,
				   "request: body of more than %zu bytes, more than the limit of %zu",
				   p->fed + len, p->l.max_body_bytes));
		return p->err;
	}
	p->fed += len;
	st = yajl_parse(p->h, data, len);
	if (st != yajl_status_ok)
		return over_account(p) ? p->err : parse_failed(p, st, data, len);
	advance(p, data, len);
	return over_account(p);
}

/* The modules' positions as pointers into the address array, and each
 * address of KIND_INHERIT given its module's kind. */
static void fix_modules(struct symjson_parser *p)
{
	struct symjson_request *r = p->r;

	for (size_t i = 0; i < r->nmodules; i++) {
		struct module_at *m = &p->mods[i];

		r->modules[i].addrs = r->addrs + m->first;
		r->modules[i].naddrs = m->n;
		for (size_t k = m->first; k < m->first + m->n; k++)
			if ((int)r->addrs[k].kind == KIND_INHERIT)
				r->addrs[k].kind = (enum symjson_addr_kind)m->kind;
	}
}

int symjson_parser_finish(struct symjson_parser *p, struct symjson_request **out)
{
	yajl_status st;

	if (p->err)
		return p->err;
	st = yajl_complete_parse(p->h);
	if (st != yajl_status_ok)
		return over_account(p) ? p->err : parse_failed(p, st, "", 0);
	if (over_account(p))
		return p->err;
	/* never NULL, even empty (callers index them: &modules[nmodules]) */
	if (grow(p, (void **)&p->r->modules, &p->modules_alloc, 1, sizeof(*p->r->modules)) ||
	    grow(p, (void **)&p->r->addrs, &p->addrs_alloc, 1, sizeof(*p->r->addrs))) {
		stop(p, alloc_error(p));
		return p->err;
	}
	fix_modules(p);
	*out = p->r;
	p->r = NULL;
	return 0;
}

const char *symjson_parser_why(const struct symjson_parser *p)
{
	return p->why;
}

void symjson_parser_free(struct symjson_parser *p)
{
	if (!p)
		return;
	if (p->h)
		yajl_free(p->h);
	symjson_request_free(p->r);
	free(p->mods);
	free(p);
}

int symjson_request_parse(const char *body, size_t len, const struct symjson_limits *lim,
			  struct symjson_request **out, char *why, size_t why_size)
{
	struct symjson_parser *p;
	int err = symjson_parser_new(lim, NULL, &p);

	if (why && why_size)
		why[0] = '\0';
	if (err)
		return err;
	err = symjson_parser_feed(p, body, len);
	if (!err)
		err = symjson_parser_finish(p, out);
	if (err && why && why_size)
		snprintf(why, why_size, "%s", p->why);
	symjson_parser_free(p);
	return err;
}

void symjson_request_free(struct symjson_request *r)
{
	if (!r)
		return;
	free(r->addrs);
	free(r->modules);
	free(r);
}
