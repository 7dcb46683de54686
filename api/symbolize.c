/*
 * symbolize.c - POST /api/v1/symbolize: a batch of build IDs and
 * addresses in, frames out (docs/symbolize-api.md).
 *
 * The body is read into a buffer capped at the request limit (413 past
 * it), parsed by wire/ (jansson), and answered module by module: each
 * module's index comes from the symbol cache (symcache.c), each address
 * is one lookup, and the answer is written straight into the response
 * buffer by wire/'s streaming writer.
 */
#include "api_internal.h"
#include "symbolize_json.h"
#include "symbatch.h"
#include "symcache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ANSWER_CAP ((size_t)1 << 30)

static enum symjson_source source_of(enum sym_source s)
{
	switch (s) {
	case SYM_SOURCE_DWARF: return SYMJSON_SOURCE_DWARF;
	case SYM_SOURCE_SYMTAB: return SYMJSON_SOURCE_SYMTAB;
	case SYM_SOURCE_DYNSYM: return SYMJSON_SOURCE_DYNSYM;
	case SYM_SOURCE_GOPCLNTAB: return SYMJSON_SOURCE_GOPCLNTAB;
	default: return SYMJSON_SOURCE_NONE;
	}
}

static enum symjson_error module_error(int err)
{
	if (err == -ENOENT)
		return SYMJSON_ERR_UNKNOWN_BUILD_ID;
	if (err == -E2BIG)
		return SYMJSON_ERR_OVER_BUDGET;
	if (err == -EHOSTUNREACH)
		return SYMJSON_ERR_UPSTREAM_UNAVAILABLE;
	return SYMJSON_ERR_NO_DEBUGINFO; /* no symbols, unreadable */
}

/* One address's result, from its frames (frames may be rewritten). */
static int write_address(struct symjson_writer *w, const struct sym_index *idx,
			 const struct symjson_address *a, const struct symjson_request *rq,
			 const struct sym_frame *frames, int n, struct symjson_frame *out)
{
	struct symjson_result r = { .address = a->addr, .kind = a->kind };
	struct sym_frame outer;

	if (n > 0 && !rq->inlines) {
		outer = frames[n - 1];
		outer.inlined = false;
		frames = &outer;
		n = 1;
	}
	for (int i = 0; i < n; i++) {
		const char *dm = rq->demangle ? sym_frame_demangled(idx, &frames[i], true) : NULL;

		out[i] = (struct symjson_frame){ .function = dm ? dm : frames[i].name,
						 .linkage_name = frames[i].name,
						 .file = frames[i].file, .line = frames[i].line,
						 .column = frames[i].column,
						 .inlined = frames[i].inlined };
	}
	r.frames = out;
	r.nframes = n > 0 ? (size_t)n : 0;
	r.error = n > 0 ? SYMJSON_OK : SYMJSON_ERR_NO_SYMBOLS_AT_ADDRESS;
	r.source = n > 0 ? source_of(frames[n - 1].source) : SYMJSON_SOURCE_NONE;
	return symjson_write_result(w, &r);
}

/* The addresses of a module with an index: in batches looked up in
 * address order (symbatch.c), written in request order. */
static int answer_addresses(struct symjson_writer *w, const struct sym_index *idx,
			    const struct symjson_request *rq, const struct symjson_module *m,
			    struct symbatch *batch, struct symjson_frame *out)
{
	int err = 0;

	for (size_t at = 0; !err && at < m->naddrs; at += SYMBATCH_MAX) {
		size_t n = m->naddrs - at < SYMBATCH_MAX ? m->naddrs - at : SYMBATCH_MAX;

		err = symbatch_run(batch, idx, m->addrs + at, n, SYM_LOOKUP_SYMBOL_NAME);
		for (size_t i = 0; !err && i < n; i++) {
			int nf;
			const struct sym_frame *f = symbatch_frames(batch, i, &nf);

			err = write_address(w, idx, &m->addrs[at + i], rq, f, nf, out);
		}
	}
	return err;
}

static int answer_module(struct api_server *srv, struct symjson_writer *w,
			 const struct symjson_request *rq, const struct symjson_module *m,
			 struct symbatch *batch, struct symjson_frame *out)
{
	struct symcache_entry *e = NULL;
	int err = symcache_get(srv->symbols, m->build_id, &e);

	symjson_module_begin(w, m->build_id);
	if (e) {
		err = answer_addresses(w, symcache_index(e), rq, m, batch, out);
		symcache_put(srv->symbols, e);
		if (err)
			return err;
	} else {
		for (size_t i = 0; i < m->naddrs; i++) {
			struct symjson_result r = { .address = m->addrs[i].addr,
						    .kind = m->addrs[i].kind,
						    .error = module_error(err) };

			symjson_write_result(w, &r);
		}
	}
	return symjson_module_end(w);
}

static int answer(struct api_server *srv, const struct symjson_request *rq,
		  struct ember_buf *out)
{
	struct symjson_frame *jf = malloc(SYMBATCH_FRAMES * sizeof(*jf));
	struct symjson_writer w;
	struct symbatch batch;
	int err = symbatch_init(&batch);

	if (!err && !jf)
		err = -ENOMEM;

	symjson_writer_init(&w, out);
	if (!err)
		err = symjson_answer_begin(&w);
	for (size_t m = 0; !err && m < rq->nmodules; m++)
		err = answer_module(srv, &w, rq, &rq->modules[m], &batch, jf);
	if (!err)
		err = symjson_answer_end(&w);
	symbatch_release(&batch);
	free(jf);
	return err;
}

enum MHD_Result api_symbolize_json(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	struct symjson_request *rq;
	struct ember_buf out;
	char why[512];
	int err = symjson_request_parse(req->body.data ? req->body.data : "", req->body.len,
					NULL, &rq, why, sizeof(why));

	if (err)
		return api_respond_text(srv, c, req,
					err == -E2BIG ? MHD_HTTP_CONTENT_TOO_LARGE
						      : MHD_HTTP_BAD_REQUEST,
					NULL, why);
	ember_buf_init(&out, ANSWER_CAP);
	err = answer(srv, rq, &out);
	symjson_request_free(rq);
	if (err) {
		ember_buf_release(&out);
		return api_respond_text(srv, c, req, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL,
					"cannot write the answer\n");
	}
	return api_respond_owned(srv, c, req, MHD_HTTP_OK, "application/json", out.data,
				 out.len);
}
