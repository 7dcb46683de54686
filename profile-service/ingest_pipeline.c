/*
 * ingest_pipeline.c - a profile stored, whichever way it came (POST
 * /api/v1/profiles, Pyroscope's /ingest, the scraper): a body decoded
 * (Content-Encoding undone, then raw/gzip/zstd), Pyroscope's label rules,
 * the profile symbolized in-process by the symbolization service
 * (symsvc_symbolize_pprof, as POST /api/v1/symbolize/pprof does, under
 * the write's limits: its memory account, its check, its cap on upstream
 * fetches), the build IDs it could not resolve recorded with their reasons (the
 * profile's coverage), and appended to the profile store, which answers
 * once it is durable; then the JSON answer.  docs/http-api.md, "Ingest".
 *
 * A location that cannot be resolved yet stays an address: the query's
 * resolver and, once the debug info arrives, the compaction resolve it
 * later (resolver.c, pstore_symbols_arrived).
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DECODED_CAP ((uint64_t)64 << 20) /* pprof_decode's default input cap */
#define DECODED_RATIO 4			  /* decompressed bytes per byte of the limit */
#define MAX_UNRESOLVED 256	       /* build IDs listed a profile */
#define ANSWER_CAP ((size_t)1 << 20)

/* ---- decoding ------------------------------------------------------------------ */

uint64_t profsvc_max_decoded(const struct profsvc *s)
{
	return s->max_body < DECODED_CAP / DECODED_RATIO ? s->max_body * DECODED_RATIO
							 : DECODED_CAP;
}

/*
 * Every layer under the write's account: the client's HTTP compression
 * (Content-Encoding), then the pprof's own (a gzip'd pprof sent gzip'd
 * again is two layers, each capped), protobuf-c's allocations and the
 * profile's later edits (pprof_limits.account).
 */
int profsvc_decode(const struct profsvc *s, const void *data, size_t len,
		   const char *content_encoding, struct ember_mem_account *acct,
		   struct pprof_profile **out, char *why, size_t why_size)
{
	struct pprof_limits lim = { .sz = sizeof(lim),
				    .max_input_bytes = (size_t)profsvc_max_decoded(s),
				    .account = acct };
	struct ember_buf plain;
	int err;

	if (profsvc_encoding_identity(content_encoding))
		return pprof_decode(data, len, &lim, out, why, why_size);
	ember_buf_init_account(&plain, lim.max_input_bytes, acct);
	err = pprof_decompress(data, len, &plain, why, why_size);
	if (!err)
		err = pprof_decode(plain.data ? plain.data : "", plain.len, &lim, out, why,
				   why_size);
	ember_buf_release(&plain);
	return err;
}

enum profsvc_reject profsvc_decode_reject(int err)
{
	return err == -E2BIG ? PROFSVC_REJECT_TOO_LARGE
	       : err == -EAGAIN ? PROFSVC_REJECT_BUSY
				: PROFSVC_REJECT_BAD_PROFILE;
}

/* ---- symbolization --------------------------------------------------------------- */

/* The unresolved locations of one mapping, and why (the first reason). */
struct unres_map {
	uint64_t mid;
	unsigned why;
	size_t locations;
};

struct unres {
	EMBER_VEC(struct unres_map) maps;
};

static void on_unresolved(void *arg, uint64_t mid, unsigned why)
{
	struct unres *u = arg;

	for (size_t i = u->maps.n; i-- > 0;)
		if (u->maps.v[i].mid == mid) {
			u->maps.v[i].locations++;
			return;
		}
	if (u->maps.n < 4096) /* bounded by the mappings; a failure only loses a row */
		(void)EMBER_VEC_APPEND(&u->maps, ((struct unres_map){ mid, why, 1 }));
}

/* One build ID's unresolved locations, and why. */
struct unres_bid {
	const char *build_id; /* points into the profile */
	const char *reason;
	size_t locations;
};

/* Per build ID (mappings with one), in the order met. */
static size_t by_build_id(const struct pprof_profile *p, const struct unres *u,
			  struct unres_bid *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < u->maps.n; i++) {
		const pprof_mapping_t *m = u->maps.v[i].mid ? pprof_mapping_by_id(p, u->maps.v[i].mid)
							    : NULL;
		const char *bid = m ? pprof_string(p, m->build_id) : NULL;
		size_t k = 0;

		if (!bid || !*bid)
			continue; /* the store counts these as no_build_id */
		while (k < n && strcmp(out[k].build_id, bid))
			k++;
		if (k == n && n < max)
			out[n++] = (struct unres_bid){ bid, symsvc_pprof_why_name(u->maps.v[i].why), 0 };
		if (k < n)
			out[k].locations += u->maps.v[i].locations;
	}
	return n;
}

/* ---- the answer -------------------------------------------------------------------- */

static int answer_json(struct ember_buf *b, const struct pstore_append_info *info,
		       const struct unres_bid *u, size_t nu)
{
	int err = ember_buf_appendf(b,
				    "{\"profiles\":%zu,\"series\":%zu,\"samples\":%llu,"
				    "\"resolved_samples\":%llu,\"time_ms\":%lld,\"unresolved\":[",
				    info->profiles, info->profiles,
				    (unsigned long long)info->samples,
				    (unsigned long long)info->resolved,
				    (long long)(info->time_ns / 1000000));

	for (size_t i = 0; !err && i < nu; i++) {
		err = ember_buf_appendf(b, "%s{\"build_id\":", i ? "," : "");
		err = err ? err : ember_json_str(b, u[i].build_id, strlen(u[i].build_id));
		err = err ? err : ember_buf_appendf(b, ",\"reason\":");
		err = err ? err : ember_json_str(b, u[i].reason, strlen(u[i].reason));
		err = err ? err : ember_buf_appendf(b, ",\"locations\":%zu}", u[i].locations);
	}
	return err ? err : ember_buf_appendf(b, "]}\n");
}

static enum profsvc_reject reject_of(int err)
{
	switch (err) {
	case -PSTORE_ERR_LIMIT:
	case -PSTORE_ERR_TOO_LARGE:
		return PROFSVC_REJECT_LIMIT;
	case -PSTORE_ERR_LABEL:
		return PROFSVC_REJECT_LABEL;
	case -PSTORE_ERR_SERIES_LIMIT:
		return PROFSVC_REJECT_SERIES;
	case -EINVAL:
		return PROFSVC_REJECT_BAD_PROFILE;
	case -E2BIG: /* the write's memory share */
		return PROFSVC_REJECT_TOO_LARGE;
	case -EAGAIN: /* the memory budget, taken by other work */
		return PROFSVC_REJECT_BUSY;
	default:
		return PROFSVC_REJECT_UNAVAILABLE;
	}
}

/* ---- the core ---------------------------------------------------------------------- */

/* Why the write's symbolization stopped (its account, check or store). */
static void symbolize_failed(int err, char *why, size_t size)
{
	if (err == -E2BIG)
		snprintf(why, size, "the symbolized profile needs more memory than the server "
				    "gives one request");
	else if (err == -EAGAIN)
		snprintf(why, size, "the server has no memory free to symbolize the profile now");
	else
		snprintf(why, size, "cannot symbolize the profile: %s", strerror(-err));
}

static int append(struct profsvc *pr, struct profsvc_in *in,
		  const struct symsvc_pprof_stats *st, const struct unres_bid *u, size_t nu,
		  struct pstore_append_info *info, char *why, size_t why_size)
{
	struct pstore_unresolved un[MAX_UNRESOLVED];
	struct pstore_append_opts o = {
		.sz = sizeof(o), .labels = in->labels, .n_labels = in->n_labels,
		.time_ns = in->time_ns, .duration_ns = in->duration_ns,
		.input_bytes = in->input_bytes, .unresolved = un, .n_unresolved = nu,
		/* unchanged by symbolization: logged as received */
		.body = st->resolved ? NULL : in->body,
		.body_len = st->resolved ? 0 : in->body_len,
		.info = info,
	};

	for (size_t i = 0; i < nu; i++)
		un[i] = (struct pstore_unresolved){ u[i].build_id, u[i].reason };
	return pstore_append(pr->store, in->p, &o, why, why_size);
}

void profsvc_ingest(struct profsvc *pr, struct profsvc_in *in, struct profsvc_out *out)
{
	struct symsvc_pprof_stats st;
	struct unres u = { 0 };
	struct symsvc_pprof_opts so = { .sz = sizeof(so), .on_unresolved = on_unresolved,
					.on_unresolved_arg = &u, .request = in->request };
	struct unres_bid bids[MAX_UNRESOLVED];
	struct pstore_append_info info = { 0 };
	size_t nb = 0;
	int err = symsvc_symbolize_pprof(pr->symbols, in->p, &so, &st);

	ember_buf_init(&out->body, ANSWER_CAP);
	out->why[0] = '\0';
	if (err)
		symbolize_failed(err, out->why, sizeof(out->why));
	if (!err) {
		nb = by_build_id(in->p, &u, bids, MAX_UNRESOLVED);
		err = append(pr, in, &st, bids, nb, &info, out->why, sizeof(out->why));
	}
	if (!err)
		err = answer_json(&out->body, &info, bids, nb);
	out->err = err;
	if (err) {
		out->reject = reject_of(err);
		if (!out->why[0])
			snprintf(out->why, sizeof(out->why), "%s", pstore_strerror(err));
		atomic_fetch_add(&pr->rejected[out->reject], 1);
	} else {
		atomic_fetch_add(&pr->ingested[in->route], 1);
		atomic_fetch_add(&pr->samples_resolved, info.resolved);
		atomic_fetch_add(&pr->samples_unresolved, info.samples - info.resolved);
	}
	EMBER_VEC_FREE(&u.maps);
	pprof_profile_free(in->p);
	in->p = NULL;
}

void profsvc_count_reject(struct profsvc *s, enum profsvc_reject why)
{
	atomic_fetch_add(&s->rejected[why], 1);
}

bool profsvc_encoding_identity(const char *content_encoding)
{
	return !content_encoding || !*content_encoding ||
	       !strcasecmp(content_encoding, "identity");
}

/* ---- Pyroscope's labels ---------------------------------------------------------- */

void profsvc_pyroscope_labels(struct pyro_tags *t, const char *spy, const struct pyro_kind *k,
			      struct pstore_label *out)
{
	bool named = pyro_tags_has(t, "service_name");

	if (*t->app)
		t->v[t->n++] = (struct pyro_tag){ named ? "app_name" : "service_name", t->app };
	if (spy && *spy && !pyro_tags_has(t, "pyroscope_spy"))
		t->v[t->n++] = (struct pyro_tag){ "pyroscope_spy", spy };
	if (k && !pyro_tags_has(t, "__name__"))
		t->v[t->n++] = (struct pyro_tag){ "__name__", k->name };
	for (size_t i = 0; i < t->n; i++)
		out[i] = (struct pstore_label){ t->v[i].name, t->v[i].value };
}
