/*
 * json_answer.c - the answer of POST /api/v1/symbolize (docs/symbolize-api.md),
 * produced a chunk at a time (symsvc_json_answer_* in symsvc.h).
 *
 * Each module's index comes from the index cache (index_cache.c), its
 * addresses are looked up in batches in address order (batch.c), and
 * each address's frames are written by wire/'s writer.  The caller asks
 * for the next bytes (an HTTP server as its client takes them), and the
 * next addresses are looked up and written into a small buffer until it
 * holds ANSWER_CHUNK bytes.  However large the batch (a million
 * addresses, kilobytes of C++ names each), the answer never sits whole in
 * memory, and the same few pages are reused: a whole answer of hundreds
 * of MB cost a page fault per 4 KB and twice its size at peak.
 */
#include "symsvc_internal.h"

#include <errno.h>
#include <stdlib.h>

#define ANSWER_CHUNK ((size_t)64 << 10)
/* The chunk buffer holds ANSWER_CHUNK bytes and the one address that
 * crossed it (at most SYMSVC_FRAMES_MAX frames, but names have no bound:
 * the cap only stops a runaway). */
#define ANSWER_BUF_CAP ((size_t)1 << 30)

struct symsvc_json_answer {
	struct symsvc *svc;
	struct symjson_request *rq;	/* owned */
	struct symjson_writer w;
	struct ember_buf out;		/* the chunk being written */
	size_t m, at;			/* the next address: modules[m].addrs[at] */
	bool begun, in_module, done;
	bool first_got;			/* modules[0]'s index got by _new */
	struct symsvc_index *ix;	/* modules[m]'s index while in it */
	int index_err;			/* or why there is none */
	size_t store_errors;		/* modules that got store_unavailable */
	struct symsvc_batch *batch;	/* looked up: [batch_at, batch_at + batch_n) */
	size_t batch_at, batch_n;
	struct symjson_frame *jf;	/* SYMSVC_FRAMES_MAX */
	struct symsvc_req req;		/* the request's check and fetch cap */
};

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

/* The index of mod into a->ix, or why not into a->index_err. */
static void get_index(struct symsvc_json_answer *a, const struct symjson_module *mod)
{
	a->ix = NULL;
	a->index_err = symsvc_index_get_for(a->svc, mod->build_id, &a->req, &a->ix);
	if (a->index_err && symsvc_error_reason(a->index_err) == SYMJSON_ERR_STORE_UNAVAILABLE)
		a->store_errors++;
}

/* The next address of the current module, looked up in batches. */
static int write_next_address(struct symsvc_json_answer *a, const struct symjson_module *mod)
{
	const struct symjson_address *addr = &mod->addrs[a->at];
	const struct sym_frame *f;
	int err = a->ix ? symsvc_req_poll(&a->req) : 0, nf;

	if (err == -ETIMEDOUT) { /* the rest of the answer: deadline_exceeded */
		symsvc_index_put(a->svc, a->ix);
		a->ix = NULL;
		a->index_err = err;
	} else if (err) {
		return err;
	}
	if (!a->ix) {
		struct symjson_result r = { .address = addr->addr, .kind = addr->kind,
					    .error = symsvc_error_reason(a->index_err) };

		return symjson_write_result(&a->w, &r);
	}
	if (a->at >= a->batch_at + a->batch_n) {
		a->batch_at = a->at;
		a->batch_n = mod->naddrs - a->at < SYMSVC_BATCH_MAX ? mod->naddrs - a->at
								     : SYMSVC_BATCH_MAX;
		err = symsvc_batch_run(a->batch, symsvc_index_sym(a->ix), addr, a->batch_n,
				       SYM_LOOKUP_SYMBOL_NAME);
	}
	f = err ? NULL : symsvc_batch_frames_at(a->batch, a->at - a->batch_at, &nf);
	return err ? err : write_address(&a->w, symsvc_index_sym(a->ix), addr, a->rq, f, nf,
					 a->jf);
}

/* Leave the current module: its index back to the cache. */
static int end_module(struct symsvc_json_answer *a)
{
	if (a->ix)
		symsvc_index_put(a->svc, a->ix);
	a->ix = NULL;
	a->in_module = false;
	a->m++;
	return symjson_module_end(&a->w);
}

/* One step of the answer: a module's start or end, or one address. */
static int step(struct symsvc_json_answer *a)
{
	const struct symjson_module *mod = &a->rq->modules[a->m];
	int err;

	if (a->req.stopped && a->req.stopped != -ETIMEDOUT)
		return a->req.stopped; /* the client went away: no more work */
	if (!a->begun) {
		a->begun = true;
		return symjson_answer_begin(&a->w);
	}
	if (a->m == a->rq->nmodules) {
		a->done = true;
		return symjson_answer_end(&a->w);
	}
	if (!a->in_module) {
		a->in_module = true;
		a->at = a->batch_at = a->batch_n = 0;
		if (!a->first_got)
			get_index(a, mod);
		a->first_got = false;
		return symjson_module_begin(&a->w, mod->build_id);
	}
	if (a->at < mod->naddrs) {
		err = write_next_address(a, mod);
		a->at++;
		return err;
	}
	return end_module(a);
}

int symsvc_json_answer_read(struct symsvc_json_answer *a, const char **data, size_t *len)
{
	int err = 0;

	ember_buf_reset(&a->out);
	while (!err && !a->done && a->out.len < ANSWER_CHUNK)
		err = step(a);
	*data = a->out.data;
	*len = err ? 0 : a->out.len;
	return err;
}

size_t symsvc_json_answer_store_errors(const struct symsvc_json_answer *a)
{
	return a->store_errors;
}

void symsvc_json_answer_free(struct symsvc_json_answer *a)
{
	if (!a)
		return;
	if (a->ix)
		symsvc_index_put(a->svc, a->ix);
	symjson_request_free(a->rq);
	symsvc_batch_free(a->batch);
	ember_buf_release(&a->out);
	free(a->jf);
	free(a);
}

int symsvc_json_answer_new(struct symsvc *svc, struct symjson_request *rq,
			   const struct symsvc_request_opts *ro,
			   struct symsvc_json_answer **out)
{
	struct symsvc_json_answer *a = calloc(1, sizeof(*a));
	int err;

	if (!a) {
		symjson_request_free(rq);
		return -ENOMEM;
	}
	a->svc = svc;
	a->rq = rq;
	symsvc_req_init(&a->req, ro);
	ember_buf_init_account(&a->out, ANSWER_BUF_CAP, a->req.opts.account);
	symjson_writer_init(&a->w, &a->out);
	a->jf = malloc(SYMSVC_FRAMES_MAX * sizeof(*a->jf));
	err = a->jf ? symsvc_batch_new(&a->batch) : -ENOMEM;
	if (!err && rq->nmodules) { /* the first module's store error comes first */
		get_index(a, &rq->modules[0]);
		a->first_got = true;
		if (a->index_err &&
		    (a->req.stopped ||
		     symsvc_error_reason(a->index_err) == SYMJSON_ERR_STORE_UNAVAILABLE))
			err = a->index_err;
	}
	if (err) {
		symsvc_json_answer_free(a);
		return err;
	}
	*out = a;
	return 0;
}
