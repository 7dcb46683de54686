/*
 * symbolize.c - POST /api/v1/symbolize: a batch of build IDs and
 * addresses in, frames out (docs/symbolize-api.md).
 *
 * The body is read into a buffer capped at the request limit (413 past
 * it), parsed by wire/ (jansson), and answered module by module: each
 * module's index comes from the symbol cache (symcache.c), each address
 * is one lookup (in address order, symbatch.c), and the answer is
 * streamed: written by wire/'s writer a chunk at a time as MHD sends it.
 */
#include "api_internal.h"
#include "symbolize_json.h"
#include "symbatch.h"
#include "symcache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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

int api_symcache_reason(int err)
{
	if (err == -ENOENT)
		return SYMJSON_ERR_UNKNOWN_BUILD_ID;
	if (err == -E2BIG)
		return SYMJSON_ERR_OVER_BUDGET;
	if (err == -EHOSTUNREACH)
		return SYMJSON_ERR_UPSTREAM_UNAVAILABLE;
	if (-err >= SYM_ERR_NOT_ELF && -err <= SYM_ERR_INDEX_VERSION)
		return SYMJSON_ERR_NO_DEBUGINFO; /* no symbols, unreadable ELF */
	return SYMJSON_ERR_STORE_UNAVAILABLE; /* the store or its files failed */
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

/*
 * The answer is streamed: MHD asks for the next bytes (stream_read), and
 * the next addresses are looked up and written into a small buffer until
 * it holds STREAM_CHUNK bytes.  However large the batch (a million
 * addresses, kilobytes of C++ names each), the answer never sits whole in
 * memory, and the same few pages are reused: a whole answer of hundreds
 * of MB cost a page fault per 4 KB and twice its size at peak.  The
 * status (200) is sent before the first byte: a failure later (out of
 * memory) ends the chunked answer early, which the client sees as an
 * incomplete body.
 */
#define STREAM_CHUNK ((size_t)64 << 10)
/* The chunk buffer holds STREAM_CHUNK bytes and the one address that
 * crossed it (at most SYMBATCH_FRAMES frames, but names have no bound:
 * the cap only stops a runaway). */
#define STREAM_BUF_CAP ((size_t)1 << 30)

struct answer_stream {
	struct api_server *srv;
	enum api_endpoint ep;
	struct symjson_request *rq;
	struct symjson_writer w;
	struct ember_buf out;		/* written, not yet sent: [sent, len) */
	size_t sent, total;
	size_t m, at;			/* the next address: modules[m].addrs[at] */
	bool begun, in_module, done;
	bool counted;			/* answered otherwise: no count in stream_free */
	struct symcache_entry *e;	/* modules[m]'s index while in it */
	int cache_err;
	bool first_got;			/* modules[0]'s index got before the answer began */
	struct symbatch batch;		/* looked up: [batch_at, batch_at + batch_n) */
	size_t batch_at, batch_n;
	struct symjson_frame *jf;
};

/* The next address of the current module, looked up in batches. */
static int stream_address(struct answer_stream *s, const struct symjson_module *mod)
{
	const struct symjson_address *a = &mod->addrs[s->at];
	const struct sym_frame *f;
	int err = 0, nf;

	if (!s->e) {
		struct symjson_result r = { .address = a->addr, .kind = a->kind,
					    .error = (enum symjson_error)api_symcache_reason(s->cache_err) };

		return symjson_write_result(&s->w, &r);
	}
	if (s->at >= s->batch_at + s->batch_n) {
		s->batch_at = s->at;
		s->batch_n = mod->naddrs - s->at < SYMBATCH_MAX ? mod->naddrs - s->at : SYMBATCH_MAX;
		err = symbatch_run(&s->batch, symcache_index(s->e), a, s->batch_n,
				   SYM_LOOKUP_SYMBOL_NAME);
	}
	f = err ? NULL : symbatch_frames(&s->batch, s->at - s->batch_at, &nf);
	return err ? err : write_address(&s->w, symcache_index(s->e), a, s->rq, f, nf, s->jf);
}

/* The index of mod into s->e, or its error into s->cache_err (a store
 * failure counted in the metrics: its addresses get store_unavailable). */
static void get_index(struct answer_stream *s, const struct symjson_module *mod)
{
	s->e = NULL;
	s->cache_err = symcache_get(s->srv->symbols, mod->build_id, &s->e);
	if (s->cache_err &&
	    api_symcache_reason(s->cache_err) == SYMJSON_ERR_STORE_UNAVAILABLE)
		api_metrics_store_error(&s->srv->metrics, s->ep);
}

/* One step of the answer: a module's start or end, or one address. */
static int stream_step(struct answer_stream *s)
{
	const struct symjson_module *mod = &s->rq->modules[s->m];
	int err;

	if (!s->begun) {
		s->begun = true;
		return symjson_answer_begin(&s->w);
	}
	if (s->m == s->rq->nmodules) {
		s->done = true;
		return symjson_answer_end(&s->w);
	}
	if (!s->in_module) {
		s->in_module = true;
		s->at = s->batch_at = s->batch_n = 0;
		if (!s->first_got)
			get_index(s, mod);
		s->first_got = false;
		return symjson_module_begin(&s->w, mod->build_id);
	}
	if (s->at < mod->naddrs) {
		err = stream_address(s, mod);
		s->at++;
		return err;
	}
	if (s->e)
		symcache_put(s->srv->symbols, s->e);
	s->e = NULL;
	s->in_module = false;
	s->m++;
	return symjson_module_end(&s->w);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct answer_stream *s = cls;
	size_t n;

	(void)pos;
	if (s->sent == s->out.len) {
		ember_buf_reset(&s->out);
		s->sent = 0;
		while (!s->done && s->out.len < STREAM_CHUNK)
			if (stream_step(s))
				return MHD_CONTENT_READER_END_WITH_ERROR;
		if (s->out.len == 0)
			return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = s->out.len - s->sent < max ? s->out.len - s->sent : max;
	memcpy(buf, s->out.data + s->sent, n);
	s->sent += n;
	s->total += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct answer_stream *s = cls;

	if (!s->counted)
		api_metrics_count(&s->srv->metrics, s->ep,
				  s->done ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR,
				  s->total);
	if (s->e)
		symcache_put(s->srv->symbols, s->e);
	symjson_request_free(s->rq);
	symbatch_release(&s->batch);
	ember_buf_release(&s->out);
	free(s->jf);
	free(s);
}

static struct answer_stream *stream_new(struct api_server *srv, enum api_endpoint ep,
					struct symjson_request *rq)
{
	struct answer_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->srv = srv;
	s->ep = ep;
	s->rq = rq;
	ember_buf_init(&s->out, STREAM_BUF_CAP);
	symjson_writer_init(&s->w, &s->out);
	s->jf = malloc(SYMBATCH_FRAMES * sizeof(*s->jf));
	if (!s->jf || symbatch_init(&s->batch)) {
		free(s->jf);
		free(s);
		return NULL;
	}
	return s;
}

enum MHD_Result api_symbolize_json(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	struct symjson_request *rq;
	struct answer_stream *s;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char why[512];
	int err = symjson_request_parse(req->body.data ? req->body.data : "", req->body.len,
					NULL, &rq, why, sizeof(why));

	if (err)
		return api_respond_text(srv, c, req,
					err == -E2BIG ? MHD_HTTP_CONTENT_TOO_LARGE
						      : MHD_HTTP_BAD_REQUEST,
					NULL, why);
	s = stream_new(srv, req->route.ep, rq);
	if (!s) {
		symjson_request_free(rq);
		return api_respond_text(srv, c, req, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL,
					"out of memory\n");
	}
	/* The status goes out before the first byte: a store that cannot be
	 * read for the first module is a 503 (later ones: per address). */
	if (rq->nmodules) {
		s->cache_err = symcache_get(srv->symbols, rq->modules[0].build_id, &s->e);
		s->first_got = true;
		if (s->cache_err &&
		    api_symcache_reason(s->cache_err) == SYMJSON_ERR_STORE_UNAVAILABLE) {
			err = s->cache_err;
			s->counted = true; /* answered below */
			stream_free(s);
			return api_respond_unavailable(srv, c, req, err);
		}
	}
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_CHUNK, stream_read, s,
						 stream_free);
	if (!resp) {
		stream_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}
