/*
 * symbolize_pprof.c - POST /api/v1/symbolize/pprof: a profile with raw
 * addresses in, the same profile with functions and lines out.
 *
 * For each location whose mapping carries a build ID: the address is
 * normalized through the mapping (file offset = address - memory_start +
 * file_offset) and the ELF's program headers (offset -> virtual address),
 * looked up, and its frames written as Location.line, inlined callees
 * first as profile.proto specifies.  Mappings get has_functions /
 * has_filenames / has_line_numbers / has_inline_frames from what answered.
 * Locations that already have lines are left alone; the others that stay
 * without lines are counted by reason (X-Ember-Unresolved), never dropped.  Profiles are decoded
 * and validated by wire/ (raw, gzip or zstd); the answer is gzip.
 */
#include "api_internal.h"
#include "pprof.h"
#include "symbolize_json.h"
#include "symcache.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 64
#define PROFILE_OUT_CAP ((size_t)256 << 20)

/* Why a location stays without lines (the X-Ember-Unresolved header). */
enum why {
	WHY_NO_MAPPING,		/* mapping_id 0 */
	WHY_NO_BUILD_ID,	/* its mapping has no build ID */
	WHY_OUTSIDE_MAPPING,	/* address outside [memory_start, memory_limit) */
	WHY_NOT_IN_ELF,		/* normalized offset in no PT_LOAD of the ELF */
	WHY_NO_SYMBOLS,		/* nothing in the ELF covers it */
	WHY_COUNT		/* then the module's reason, as the JSON route's
				   (api_symcache_reason): why_cache[] */
};

static const char *const why_name[WHY_COUNT] = {
	[WHY_NO_MAPPING] = "no_mapping",
	[WHY_NO_BUILD_ID] = "no_build_id",
	[WHY_OUTSIDE_MAPPING] = "outside_mapping",
	[WHY_NOT_IN_ELF] = "offset_not_in_elf",
	[WHY_NO_SYMBOLS] = "no_symbols_at_address",
};

struct pprof_run {
	struct api_server *srv;
	struct pprof_profile *p;
	struct sym_frame frames[MAX_FRAMES];
	struct pprof_line lines[MAX_FRAMES];
	size_t resolved, unresolved;
	size_t why[WHY_COUNT];
	size_t why_cache[SYMJSON_ERR_COUNT];	/* by enum symjson_error */
	int store_err;		/* a mapping's index failed for the store */
};

/* Count every location of mapping mid (0: of none) that has no lines yet
 * as unresolved, in *slot (a why[] or why_cache[] counter). */
static void count_unresolved(struct pprof_run *r, uint64_t mid, size_t *slot)
{
	const pprof_message_t *msg = pprof_message(r->p);

	for (size_t i = 0; i < msg->n_location; i++)
		if (msg->location[i]->mapping_id == mid && !msg->location[i]->n_line) {
			r->unresolved++;
			(*slot)++;
		}
}

/* The mapping's build ID as lowercase hex, or false when it has none. */
static bool mapping_build_id(const struct pprof_profile *p, const pprof_mapping_t *m,
			     char *out, size_t size)
{
	const char *s = pprof_string(p, m->build_id);
	size_t n = s ? strlen(s) : 0;

	if (n < 2 || n % 2 || n >= size)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		out[i] = (char)tolower((unsigned char)s[i]);
	}
	out[n] = '\0';
	return true;
}

static unsigned flags_of(const struct sym_frame *f, int n)
{
	unsigned flags = PPROF_MAPPING_HAS_FUNCTIONS;

	if (f[n - 1].source == SYM_SOURCE_DWARF || f[n - 1].source == SYM_SOURCE_GOPCLNTAB)
		flags |= PPROF_MAPPING_HAS_FILENAMES | PPROF_MAPPING_HAS_LINE_NUMBERS |
			 PPROF_MAPPING_HAS_INLINE_FRAMES;
	return flags;
}

/* Frames of one location into its lines; returns mapping flags, or 0
 * with *why set. */
static unsigned symbolize_location(struct pprof_run *r, const struct sym_index *idx,
				   const pprof_mapping_t *m, const pprof_location_t *loc,
				   enum why *why)
{
	uint64_t vaddr, off = loc->address - m->memory_start + m->file_offset;
	int n;

	*why = WHY_OUTSIDE_MAPPING;
	if (loc->address < m->memory_start || (m->memory_limit && loc->address >= m->memory_limit))
		return 0;
	*why = WHY_NOT_IN_ELF;
	if (sym_index_offset_to_vaddr(idx, off, &vaddr))
		return 0;
	*why = WHY_NO_SYMBOLS;
	n = sym_index_lookup(idx, vaddr, SYM_ADDR_VADDR, SYM_LOOKUP_SYMBOL_NAME, r->frames,
			     MAX_FRAMES);
	if (n <= 0)
		return 0;
	n = n > MAX_FRAMES ? MAX_FRAMES : n;
	for (int i = 0; i < n; i++) {
		const struct sym_frame *f = &r->frames[i];
		const char *dm = sym_frame_demangled(idx, f, true);
		struct pprof_function_desc d = { .name = dm ? dm : f->name ? f->name : "??",
						 .system_name = f->name ? f->name : "??",
						 .filename = f->file ? f->file : "",
						 .start_line = f->decl_line };

		if (pprof_add_function(r->p, &d, &r->lines[i].function_id))
			return 0;
		r->lines[i].line = f->line;
		r->lines[i].column = f->column;
	}
	return pprof_location_set_lines(r->p, loc->id, r->lines, (size_t)n) ? 0
									       : flags_of(r->frames, n);
}

static void symbolize_mapping(struct pprof_run *r, const pprof_mapping_t *m)
{
	const pprof_message_t *msg = pprof_message(r->p);
	struct symcache_entry *e;
	char id[STORE_BUILD_ID_HEX];
	unsigned flags = 0;
	uint64_t mid = m->id;
	enum why why;
	int err;

	if (!mapping_build_id(r->p, m, id, sizeof(id))) {
		count_unresolved(r, mid, &r->why[WHY_NO_BUILD_ID]);
		return;
	}
	err = symcache_get(r->srv->symbols, id, &e);
	if (err) {
		if (api_symcache_reason(err) == SYMJSON_ERR_STORE_UNAVAILABLE && !r->store_err)
			r->store_err = err;
		count_unresolved(r, mid, &r->why_cache[api_symcache_reason(err)]);
		return;
	}
	for (size_t i = 0; i < msg->n_location; i++) {
		const pprof_location_t *loc = msg->location[i];
		unsigned f;

		if (loc->mapping_id != mid || loc->n_line)
			continue;
		f = symbolize_location(r, symcache_index(e), m, loc, &why);
		flags |= f;
		if (f) {
			r->resolved++;
		} else {
			r->unresolved++;
			r->why[why]++;
		}
		msg = pprof_message(r->p); /* edits may move the arrays */
		m = pprof_mapping_by_id(r->p, mid);
	}
	symcache_put(r->srv->symbols, e);
	if (flags)
		pprof_mapping_set_flags(r->p, mid, flags);
}

static void symbolize_profile(struct pprof_run *r)
{
	size_t n = pprof_message(r->p)->n_mapping;

	for (size_t i = 0; i < n; i++) {
		uint64_t mid = pprof_message(r->p)->mapping[i]->id;

		symbolize_mapping(r, pprof_mapping_by_id(r->p, mid));
	}
	count_unresolved(r, 0, &r->why[WHY_NO_MAPPING]);
}

/* "reason=count, ..." of the unresolved locations ("" when none). */
static void why_header(const struct pprof_run *r, char *out, size_t size)
{
	size_t at = 0;

	out[0] = '\0';
	for (int i = 0; i < WHY_COUNT + SYMJSON_ERR_COUNT && at < size; i++) {
		size_t n = i < WHY_COUNT ? r->why[i] : r->why_cache[i - WHY_COUNT];
		const char *name = i < WHY_COUNT
					   ? why_name[i]
					   : symjson_error_name((enum symjson_error)(i - WHY_COUNT));

		if (n && name)
			at += (size_t)snprintf(out + at, size - at, "%s%s=%zu", at ? ", " : "",
					       name, n);
	}
}

enum MHD_Result api_symbolize_pprof(struct api_server *srv, struct MHD_Connection *c,
				    struct api_request *req)
{
	struct pprof_run *r = calloc(1, sizeof(*r));
	struct ember_buf out;
	char why[512], hdr[64], reasons[512];
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int err;

	if (!r)
		return MHD_NO;
	r->srv = srv;
	err = pprof_decode(req->body.data, req->body.len, NULL, &r->p, why, sizeof(why));
	if (err) {
		free(r);
		return api_respond_text(srv, c, req, err == -E2BIG ? MHD_HTTP_CONTENT_TOO_LARGE
								    : MHD_HTTP_BAD_REQUEST,
					NULL, why);
	}
	symbolize_profile(r);
	if (r->store_err) { /* a partial answer would pass for the whole one */
		err = r->store_err;
		pprof_profile_free(r->p);
		free(r);
		return api_respond_unavailable(srv, c, req, err);
	}
	ember_buf_init(&out, PROFILE_OUT_CAP);
	err = pprof_encode(r->p, true, &out);
	pprof_profile_free(r->p);
	snprintf(hdr, sizeof(hdr), "%zu resolved, %zu unresolved", r->resolved, r->unresolved);
	why_header(r, reasons, sizeof(reasons));
	free(r);
	if (err) {
		ember_buf_release(&out);
		return api_respond_text(srv, c, req, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL,
					"cannot encode the profile\n");
	}
	resp = MHD_create_response_from_buffer(out.len, out.data, MHD_RESPMEM_MUST_FREE);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(resp, "X-Ember-Locations", hdr);
	if (reasons[0])
		MHD_add_response_header(resp, "X-Ember-Unresolved", reasons);
	ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
	api_metrics_count(&srv->metrics, req->route.ep, MHD_HTTP_OK, out.len);
	MHD_destroy_response(resp);
	return ret;
}
