/*
 * ingest_pipeline.c - a profile stored, whichever way it came (POST
 * /api/v1/profiles, Pyroscope's /ingest, OTLP's /v1development/profiles,
 * the scraper): a body decoded (Content-Encoding undone, then
 * raw/gzip/zstd; an OTLP request into its profiles), Pyroscope's label rules,
 * the tenant's ingest rules (--rules: relabeling, then limits, then
 * sampling; ingest_rules.c),
 * the profile symbolized in-process by the symbolization service
 * (symsvc_symbolize_pprof, as POST /api/v1/symbolize/pprof does, under
 * the write's limits: its memory account, its check, its cap on upstream
 * fetches), the build IDs it could not resolve recorded with their reasons (the
 * profile's coverage), and appended to the profile store, which answers
 * once it is durable; then the JSON answer.  docs/http-api.md, "Ingest".
 *
 * A profile dated outside the window around now (--max-profile-age,
 * --max-profile-future) is refused before any work, as Pyroscope does:
 * a time far ahead would hold its series and blocks past every
 * retention.  The log's replay never comes here, so nothing
 * acknowledged is refused later.
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

/* A decoder of plain bytes (arg: its limits and out-param). */
typedef int (*decode_fn)(const void *data, size_t len, void *arg, char *why, size_t why_size);

/* The client's HTTP compression (Content-Encoding) undone into a buffer
 * capped at profsvc_max_decoded and charged to acct, then decode. */
static int decode_body(const struct profsvc *s, const void *data, size_t len,
		       const char *content_encoding, struct ember_mem_account *acct,
		       decode_fn decode, void *arg, char *why, size_t why_size)
{
	struct ember_buf plain;
	int err;

	if (profsvc_encoding_identity(content_encoding))
		return decode(data, len, arg, why, why_size);
	ember_buf_init_account(&plain, (size_t)profsvc_max_decoded(s), acct);
	err = pprof_decompress(data, len, &plain, why, why_size);
	if (!err)
		err = decode(plain.data ? plain.data : "", plain.len, arg, why, why_size);
	ember_buf_release(&plain);
	return err;
}

struct pprof_args {
	struct pprof_limits lim;
	struct pprof_profile **out;
};

static int pprof_body(const void *data, size_t len, void *arg, char *why, size_t why_size)
{
	struct pprof_args *a = arg;

	return pprof_decode(data, len, &a->lim, a->out, why, why_size);
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
	struct pprof_args a = { .lim = { .sz = sizeof(a.lim),
					 .max_input_bytes = (size_t)profsvc_max_decoded(s),
					 .account = acct },
				.out = out };

	return decode_body(s, data, len, content_encoding, acct, pprof_body, &a, why, why_size);
}

typedef int (*otlp_decode_fn)(const void *data, size_t size, const struct otlp_limits *lim,
			      struct otlp_request **out, char *why, size_t why_size);

struct otlp_args {
	struct otlp_limits lim;
	struct otlp_request **out;
	otlp_decode_fn decode; /* the body's encoding: protobuf or JSON */
};

static int otlp_body(const void *data, size_t len, void *arg, char *why, size_t why_size)
{
	struct otlp_args *a = arg;

	return a->decode(data, len, &a->lim, a->out, why, why_size);
}

/* As profsvc_decode, an OTLP request: the Content-Encoding only (an OTLP
 * body has no compression of its own), under the same caps and account. */
static int otlp_decode_body(const struct profsvc *s, otlp_decode_fn decode, const void *data,
			    size_t len, const char *content_encoding,
			    struct ember_mem_account *acct, struct otlp_request **out, char *why,
			    size_t why_size)
{
	struct otlp_args a = { .lim = { .sz = sizeof(a.lim),
					.max_input_bytes = (size_t)profsvc_max_decoded(s),
					.account = acct },
			       .out = out,
			       .decode = decode };
	int err = decode_body(s, data, len, content_encoding, acct, otlp_body, &a, why, why_size);

	if (!err && (err = profsvc_otlp_name_binaries(s, *out))) {
		snprintf(why, why_size, "no memory to name the mappings' binaries");
		otlp_request_free(*out);
		*out = NULL;
	}
	return err;
}

int profsvc_otlp_decode(const struct profsvc *s, const void *data, size_t len,
			const char *content_encoding, struct ember_mem_account *acct,
			struct otlp_request **out, char *why, size_t why_size)
{
	return otlp_decode_body(s, otlp_decode, data, len, content_encoding, acct, out, why,
				why_size);
}

int profsvc_otlp_json_decode(const struct profsvc *s, const void *data, size_t len,
			     const char *content_encoding, struct ember_mem_account *acct,
			     struct otlp_request **out, char *why, size_t why_size)
{
	return otlp_decode_body(s, otlp_decode_json, data, len, content_encoding, acct, out, why,
				why_size);
}

struct jfr_args {
	const struct profsvc *s;
	struct jfr_opts o;
	struct jfr_limits lim;
	struct ember_mem_account *acct;
	struct jfr_recording **out;
};

/* data, or its gzip undone (the Java agent gzips the form's fields) into
 * plain, capped as a body's decompressed bytes are. */
static int gunzipped(const struct jfr_args *a, const void *data, size_t len,
		     struct ember_buf *plain, const void **out, size_t *out_len, char *why,
		     size_t why_size)
{
	const uint8_t *b = data;

	*out = data;
	*out_len = len;
	if (len < 2 || b[0] != 0x1f || b[1] != 0x8b)
		return 0;
	ember_buf_init_account(plain, (size_t)profsvc_max_decoded(a->s), a->acct);
	EMBER_FORWARD_IF_ERROR(pprof_decompress(data, len, plain, why, why_size));
	*out = plain->data ? plain->data : "";
	*out_len = plain->len;
	return 0;
}

static int jfr_body(const void *data, size_t len, void *arg, char *why, size_t why_size)
{
	struct jfr_args *a = arg;
	struct ember_buf rec = { 0 }, labels = { 0 };
	int err = gunzipped(a, data, len, &rec, &data, &len, why, why_size);

	if (!err && a->o.labels)
		err = gunzipped(a, a->o.labels, a->o.labels_len, &labels, &a->o.labels,
				&a->o.labels_len, why, why_size);
	if (!err)
		err = jfr_decode(data, len, &a->o, a->out, why, why_size);
	ember_buf_release(&rec);
	ember_buf_release(&labels);
	return err;
}

/* As profsvc_otlp_decode, a JFR recording (wire/jfr.h): Content-Encoding
 * undone, then the recording's and the labels' own gzip, under the same
 * caps and account. */
int profsvc_jfr_decode(const struct profsvc *s, const void *data, size_t len,
		       const char *content_encoding, const struct jfr_opts *o,
		       struct ember_mem_account *acct, struct jfr_recording **out, char *why,
		       size_t why_size)
{
	struct jfr_args a = { .s = s, .o = *o, .acct = acct, .out = out,
			      .lim = { .sz = sizeof(a.lim),
				       .max_input_bytes = (size_t)profsvc_max_decoded(s),
				       .account = acct } };

	a.o.sz = sizeof(a.o);
	a.o.lim = &a.lim;
	return decode_body(s, data, len, content_encoding, acct, jfr_body, &a, why, why_size);
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

/* Per mapping, found through a keyed set: a profile of many mappings
 * costs linear time (issue 23). */
struct unres {
	EMBER_VEC(struct unres_map) maps;
	struct ember_hset set; /* of maps, by mid */
};

static bool map_equal(const void *ctx, size_t i, const void *key)
{
	return ((const struct unres *)ctx)->maps.v[i].mid == *(const uint64_t *)key;
}

static void on_unresolved(void *arg, uint64_t mid, unsigned why)
{
	struct unres *u = arg;
	uint64_t h = ember_hash_u64(&u->set.key, mid);
	size_t i = ember_hset_find(&u->set, h, map_equal, u, &mid);

	if (i != SIZE_MAX) {
		u->maps.v[i].locations++;
		return;
	}
	/* bounded by the mappings; a failure only loses a row */
	if (u->maps.n < 4096 && !EMBER_VEC_APPEND(&u->maps, ((struct unres_map){ mid, why, 1 })) &&
	    ember_hset_insert(&u->set, h, u->maps.n - 1))
		u->maps.n--;
}

/* One build ID's unresolved locations, and why. */
struct unres_bid {
	const char *build_id; /* points into the profile */
	const char *reason;
	size_t locations;
};

struct bid_rows {
	struct unres_bid *v;
	size_t n, max;
	struct ember_hset set; /* of v, by build ID */
};

static bool bid_equal(const void *ctx, size_t i, const void *key)
{
	return strcmp(((const struct bid_rows *)ctx)->v[i].build_id, key) == 0;
}

/* The row of bid (added with why when new and there is room), or NULL. */
static struct unres_bid *bid_row(struct bid_rows *b, const char *bid, unsigned why)
{
	uint64_t h = ember_hash(&b->set.key, bid, strlen(bid));
	size_t k = ember_hset_find(&b->set, h, bid_equal, b, bid);

	if (k != SIZE_MAX)
		return &b->v[k];
	if (b->n == b->max || ember_hset_insert(&b->set, h, b->n))
		return NULL;
	b->v[b->n] = (struct unres_bid){ bid, symsvc_pprof_why_name(why), 0 };
	return &b->v[b->n++];
}

/* Per build ID (mappings with one), in the order met. */
static size_t by_build_id(const struct pprof_profile *p, const struct unres *u,
			  struct unres_bid *out, size_t max)
{
	struct bid_rows b = { .v = out, .max = max };

	if (ember_hset_init(&b.set))
		return 0; /* the answer lists none; the store counts them anyway */
	for (size_t i = 0; i < u->maps.n; i++) {
		const pprof_mapping_t *m = u->maps.v[i].mid ? pprof_mapping_by_id(p, u->maps.v[i].mid)
							    : NULL;
		const char *bid = m ? pprof_string(p, m->build_id) : NULL;
		struct unres_bid *row;

		if (!bid || !*bid)
			continue; /* the store counts these as no_build_id */
		if ((row = bid_row(&b, bid, u->maps.v[i].why)))
			row->locations += u->maps.v[i].locations;
	}
	ember_hset_release(&b.set);
	return b.n;
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

/* ---- the window of times --------------------------------------------------------- */

/* in's time: the profile's, else the caller's, else now. */
static int64_t profile_time(const struct profsvc_in *in, int64_t now)
{
	int64_t t = pprof_message(in->p)->time_nanos;

	return t ? t : in->time_ns ? in->time_ns : now;
}

/* 0, or -PSTORE_ERR_LIMIT with why set when in's time is outside the
 * service's window around now. */
static int check_window(const struct profsvc *pr, const struct profsvc_in *in, char *why,
			size_t why_size)
{
	int64_t now = profsvc_now_ns(), t = profile_time(in, now);

	if (pr->max_age_ns >= 0 && t < now - pr->max_age_ns) {
		snprintf(why, why_size,
			 "profile time out of bounds: %lld s in the past, older than the limit "
			 "of %lld s (--max-profile-age)",
			 (long long)((now - t) / 1000000000), (long long)(pr->max_age_ns / 1000000000));
		return -PSTORE_ERR_LIMIT;
	}
	if (pr->max_future_ns >= 0 && t > now + pr->max_future_ns) {
		snprintf(why, why_size,
			 "profile time out of bounds: %lld s in the future, past the limit of "
			 "%lld s (--max-profile-future)",
			 (long long)((t - now) / 1000000000), (long long)(pr->max_future_ns / 1000000000));
		return -PSTORE_ERR_LIMIT;
	}
	return 0;
}

/* ---- the core ---------------------------------------------------------------------- */

/* Whether ls holds other labels than in[0, n) (a set: a name at most once). */
static bool labels_changed(const struct profsvc_labels *ls, const struct pstore_label *in,
			   size_t n)
{
	size_t same = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < ls->n; j++)
			if (!strcmp(in[i].name, ls->v[j].name)) {
				same += !strcmp(in[i].value, ls->v[j].value);
				break;
			}
	return same != n || ls->n != n;
}

/* in's labels those of its tenant's relabel rules (when it has any: ls
 * holds them until the write is done; *changed when they differ): 0,
 * PROFSVC_RELABEL_DROP, or the rules' error (-E2BIG, -ENOMEM: a label
 * past its limit, or none free). */
static int relabel(struct profsvc *pr, struct profsvc_in *in, struct profsvc_labels *ls,
		   bool *applied, bool *changed, char *why, size_t why_size)
{
	int err = profsvc_rules_relabel(pr, in, ls, applied, why, why_size);

	if (err < 0)
		return err == -E2BIG ? -PSTORE_ERR_LABEL : err;
	if (*applied) {
		*changed = labels_changed(ls, in->labels, in->n_labels);
		in->labels = ls->v;
		in->n_labels = ls->n;
	}
	return err;
}

/* in kept whole, or, when its tenant's sampling rules do not keep it (*d
 * says what they decided),
 * made its totals only (profsvc_totals_only) in the series labelled
 * besides __sampled__="true" (ls holds them; *relabeled then true), not
 * logged as received.  0, or -ENOMEM / -PSTORE_ERR_LABEL (a label too many). */
static int sample(struct profsvc *pr, struct profsvc_in *in, struct profsvc_labels *ls,
		  bool *relabeled, enum profsvc_sampled *d)
{
	int64_t t = profile_time(in, profsvc_now_ns());
	struct pprof_profile *q;
	int err = 0;

	*d = profsvc_rules_sample_now(pr, in->labels, in->n_labels, t);
	if (*d != PROFSVC_SAMPLED_TOTALS)
		return 0;
	if (!*relabeled)
		err = profsvc_labels_copy(ls, in->labels, in->n_labels);
	*relabeled = true;
	err = err ? err : profsvc_labels_set(ls, PROFSVC_SAMPLED_LABEL, "true");
	err = err ? err : profsvc_totals_only(in->p, &q);
	if (err)
		return err == -E2BIG ? -PSTORE_ERR_LABEL : err;
	pprof_profile_free(in->p);
	in->p = q;
	in->body = NULL; /* the profile logged is the totals, not the body */
	in->body_len = 0;
	in->labels = ls->v;
	in->n_labels = ls->n;
	atomic_fetch_add(&pr->sampled_out, 1);
	return 0;
}

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
	struct profsvc_labels relabeled = { 0 };
	const struct pstore_label *labels = in->labels;
	const void *body = in->body;
	size_t nb = 0, n_labels = in->n_labels, body_len = in->body_len;
	int err;
	bool late, applied = false, dropped = false, changed = false;
	enum profsvc_sampled sampled = PROFSVC_SAMPLED_NO_RULE;

	ember_buf_init(&out->body, ANSWER_CAP);
	out->why[0] = '\0';
	err = check_window(pr, in, out->why, sizeof(out->why));
	late = err != 0;
	err = err ? err : relabel(pr, in, &relabeled, &applied, &changed, out->why,
				  sizeof(out->why));
	if (err == PROFSVC_RELABEL_DROP) { /* the rules drop it: nothing stored */
		dropped = true;
		err = answer_json(&out->body, &info, bids, 0);
		goto done;
	}
	err = err ? err : profsvc_limits_check_profile(pr, in, out->why, sizeof(out->why));
	err = err ? err : ember_hset_init(&u.set);
	if (!err && in->check_only) {
		struct pstore_append_opts co = { .sz = sizeof(co), .labels = in->labels,
						 .n_labels = in->n_labels, .info = &info };

		err = pstore_append_check(pr->store, in->p, &co, out->why, sizeof(out->why));
		err = err ? err : answer_json(&out->body, &info, bids, 0);
		goto done;
	}
	if (!err && (err = sample(pr, in, &relabeled, &applied, &sampled)))
		snprintf(out->why, sizeof(out->why), "cannot keep the profile's totals: %s",
			 pstore_strerror(err));
	if (!err) {
		err = symsvc_symbolize_pprof(pr->symbols, in->p, &so, &st);
		if (err)
			symbolize_failed(err, out->why, sizeof(out->why));
	}
	if (!err) {
		nb = by_build_id(in->p, &u, bids, MAX_UNRESOLVED);
		err = append(pr, in, &st, bids, nb, &info, out->why, sizeof(out->why));
	}
	if (!err)
		err = answer_json(&out->body, &info, bids, nb);
done:
	out->err = err;
	if (err) {
		out->reject = late ? PROFSVC_REJECT_OUT_OF_BOUNDS : reject_of(err);
		if (!out->why[0])
			snprintf(out->why, sizeof(out->why), "%s", pstore_strerror(err));
		atomic_fetch_add(&pr->rejected[out->reject], 1);
	} else if (dropped && !in->check_only) {
		atomic_fetch_add(&pr->dropped_by_rules, 1);
	} else if (!in->check_only) {
		atomic_fetch_add(&pr->ingested[in->route], 1);
		atomic_fetch_add(&pr->relabelled, changed);
		atomic_fetch_add(&pr->kept_by_rules, sampled == PROFSVC_SAMPLED_KEPT);
		atomic_fetch_add(&pr->samples_resolved, info.resolved);
		atomic_fetch_add(&pr->samples_unresolved, info.samples - info.resolved);
	}
	EMBER_VEC_FREE(&u.maps);
	ember_hset_release(&u.set);
	pprof_profile_free(in->p);
	in->p = NULL;
	in->labels = labels; /* the caller's again */
	in->n_labels = n_labels;
	in->body = body;
	in->body_len = body_len;
	profsvc_labels_release(&relabeled);
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
