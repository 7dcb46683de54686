/*
 * profile_ingest.c - POST /api/v1/profiles, and the core every way in
 * shares (Pyroscope's /ingest, the scraper): a decoded profile
 * symbolized in-process by the symbolization service
 * (symsvc_symbolize_pprof, as POST /api/v1/symbolize/pprof does), the
 * build IDs it could not resolve recorded with their reasons (the
 * profile's coverage), and appended to the profile store, which answers
 * once it is durable.  docs/http-api.md, "Ingest".
 *
 * A location that cannot be resolved yet stays an address: the query's
 * resolver and, once the debug info arrives, the compaction resolve it
 * later (profile_resolver.c, pstore_symbols_arrived).
 */
#include "api_profiles.h"
#include "symsvc.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DECODED_CAP ((size_t)64 << 20) /* pprof_decode's default input cap */
#define MAX_UNRESOLVED 256	       /* build IDs listed a profile */

/* ---- the token ------------------------------------------------------------- */

/* The password of "Basic base64(user:password)", into out. */
static bool basic_password(const char *b64, char *out, size_t size, size_t *len)
{
	struct base64_decode_ctx ctx;
	uint8_t buf[512];
	size_t n = sizeof(buf);
	const char *colon;

	if (strlen(b64) > BASE64_ENCODE_LENGTH(sizeof(buf) - 2))
		return false;
	base64_decode_init(&ctx);
	if (!base64_decode_update(&ctx, &n, buf, strlen(b64), b64) || !base64_decode_final(&ctx))
		return false;
	colon = memchr(buf, ':', n);
	if (!colon || (size_t)(buf + n - (const uint8_t *)colon - 1) >= size)
		return false;
	*len = (size_t)(buf + n - (const uint8_t *)colon - 1);
	memcpy(out, colon + 1, *len);
	return true;
}

static bool token_ok(const struct api_server *srv, const char *given, size_t len)
{
	/* both compared, whatever the first says */
	bool up = api_token_matches(given, len, srv->token);
	bool in = api_token_matches(given, len, srv->profiles->ingest_token);

	return up || in;
}

bool api_profile_auth_ok(const struct api_server *srv, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	char pw[512];
	size_t n;

	if (h && strncasecmp(h, "Bearer ", 7) == 0)
		return token_ok(srv, h + 7, strlen(h + 7));
	if (h && strncasecmp(h, "Basic ", 6) == 0 && basic_password(h + 6, pw, sizeof(pw), &n))
		return token_ok(srv, pw, n);
	return false;
}

/* ---- decoding ------------------------------------------------------------------ */

int api_profile_decode(const void *data, size_t len, const char *content_encoding,
		       struct pprof_profile **out, char *why, size_t why_size)
{
	struct ember_buf plain;
	int err;

	if (!content_encoding || !*content_encoding || !strcasecmp(content_encoding, "identity"))
		return pprof_decode(data, len, NULL, out, why, why_size);
	/* the client's HTTP compression first; the pprof may be gzip'd itself */
	ember_buf_init(&plain, DECODED_CAP);
	err = pprof_decompress(data, len, &plain, why, why_size);
	if (!err)
		err = pprof_decode(plain.data ? plain.data : "", plain.len, NULL, out, why,
				   why_size);
	ember_buf_release(&plain);
	return err;
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

static enum api_profile_reject reject_of(int err)
{
	switch (err) {
	case -PSTORE_ERR_LIMIT:
	case -PSTORE_ERR_TOO_LARGE:
		return API_PREJ_LIMIT;
	case -PSTORE_ERR_LABEL:
		return API_PREJ_LABEL;
	case -PSTORE_ERR_SERIES_LIMIT:
		return API_PREJ_SERIES;
	case -EINVAL:
		return API_PREJ_BAD_PROFILE;
	default:
		return API_PREJ_UNAVAILABLE;
	}
}

/* ---- the core ---------------------------------------------------------------------- */

static int append(struct api_profiles *pr, struct api_profile_in *in,
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

void api_profile_store(struct api_profiles *pr, struct api_profile_in *in,
		       struct api_profile_out *out)
{
	struct symsvc_pprof_stats st;
	struct unres u = { 0 };
	struct symsvc_pprof_opts so = { .sz = sizeof(so), .on_unresolved = on_unresolved,
					.on_unresolved_arg = &u };
	struct unres_bid bids[MAX_UNRESOLVED];
	struct pstore_append_info info = { 0 };
	size_t nb = 0;
	int err = symsvc_symbolize_pprof(pr->symbols, in->p, &so, &st);

	ember_buf_init(&out->body, (size_t)1 << 20);
	out->why[0] = '\0';
	if (err)
		snprintf(out->why, sizeof(out->why), "cannot symbolize the profile: %s",
			 strerror(-err));
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

enum MHD_Result api_profile_respond(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req, struct api_profile_out *out)
{
	enum MHD_Result ret;

	if (!out->err)
		return api_profile_ok(srv, c, req, "application/json", &out->body, NULL);
	ret = api_profile_error(srv, c, req, out->err, out->why);
	ember_buf_release(&out->body);
	return ret;
}

/* A malformed body: 400 (413 for a decompression past the cap). */
static enum MHD_Result bad_profile(struct api_server *srv, struct MHD_Connection *c,
				   const struct api_request *req, int err, const char *why)
{
	char msg[600];

	atomic_fetch_add(&srv->profiles->rejected[err == -E2BIG ? API_PREJ_TOO_LARGE
								: API_PREJ_BAD_PROFILE], 1);
	snprintf(msg, sizeof(msg), "not a pprof profile: %s", why);
	return api_profile_error(srv, c, req, err == -E2BIG ? -PSTORE_ERR_TOO_LARGE : -EINVAL,
				 err == -E2BIG ? "profile bytes, larger than the limit once "
						 "decompressed"
					       : msg);
}

/* Every query parameter a label. */
struct label_walk {
	struct pstore_label v[64];
	size_t n;
	bool over;
};

static enum MHD_Result take_label(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct label_walk *w = cls;

	(void)kind;
	if (w->n == sizeof(w->v) / sizeof(w->v[0])) {
		w->over = true;
		return MHD_NO;
	}
	w->v[w->n++] = (struct pstore_label){ key, value ? value : "" };
	return MHD_YES;
}

enum MHD_Result api_profile_ingest(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_ENCODING);
	struct label_walk lw = { .n = 0 };
	struct api_profile_in in = { .route = API_PROUTE_PROFILES };
	struct api_profile_out out;
	char why[512];
	int err;

	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, take_label, &lw);
	if (lw.over)
		return api_profile_error(srv, c, req, -PSTORE_ERR_LIMIT,
					 "more than 64 query parameters (labels)");
	err = api_profile_decode(req->body.data ? req->body.data : "", req->body.len, enc, &in.p,
				 why, sizeof(why));
	if (err)
		return bad_profile(srv, c, req, err, why);
	in.labels = lw.v;
	in.n_labels = lw.n;
	in.time_ns = api_now_ns();
	in.input_bytes = req->body.len;
	if (!enc || !*enc || !strcasecmp(enc, "identity")) { /* else not what the log replays */
		in.body = req->body.data;
		in.body_len = req->body.len;
	}
	api_profile_store(srv->profiles, &in, &out);
	return api_profile_respond(srv, c, req, &out);
}
