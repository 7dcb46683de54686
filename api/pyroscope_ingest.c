/*
 * pyroscope_ingest.c - POST /ingest as Grafana Pyroscope's server takes
 * it, so that Pyroscope's SDKs and Grafana Alloy send to Ember unchanged
 * (docs/http-api.md, "Ingest, Pyroscope's protocol"):
 *   ?name=APP{k=v,...}&from=&until=&format=pprof|folded|lines|jfr&sampleRate=&spyName=
 * APP becomes service_name (app_name when a service_name tag is given),
 * each tag a label (dotted names allowed), spyName the label
 * pyroscope_spy.  A pprof body (raw, gzip, zstd, or the "profile" field of
 * a multipart form, as the Go SDK sends it) keeps its own sample types and
 * period, taking sampleRate only when it has no period; folded and lines
 * bodies become a profile of the type APP's suffix names (".cpu" or none:
 * CPU, counts scaled by the period 1e9 / sampleRate, as Pyroscope does).
 * A JFR recording (the body, or the "jfr" field of a multipart form with
 * an optional "labels" field, as Pyroscope's Java agent sends it; either
 * may be gzipped) becomes one profile a profile type it has events of
 * (wire/jfr.h: CPU, allocations, locks, parks), each stored with the
 * name's labels and its type's __name__; its CPU samples count the
 * period 1e9 / sampleRate (100 Hz when none is given).
 * The name, folded bodies and times are parsed by wire/ (pyroscope.h),
 * the labels made and the profile stored by the profile service
 * (profsvc_pyroscope_labels, profsvc_ingest), as POST /api/v1/profiles
 * stores it; this file reads the request (its parameters, a multipart
 * form through libmicrohttpd's post processor) and sends the answer.
 * The form's field, the decoded or parsed profile and its symbolization
 * are the write's, under its limits as POST /api/v1/profiles's are
 * (api_profile_ctx: the request's memory account, deadline, upstream cap).
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_RATE 100

/* The parsed name and the labels it gives. */
struct api_pyroscope {
	struct pyro_tags tags;
	struct pyro_tags each; /* a JFR profile's: tags and its __name__ */
	struct pstore_label labels[PYRO_MAX_TAGS + PYRO_EXTRA_TAGS];
};

/* ---- pprof bodies ------------------------------------------------------------------ */

struct form {
	const char *field;	/* the recording's: "profile" (pprof) or "jfr" */
	struct ember_buf profile; /* that field */
	struct ember_buf labels;  /* jfr: the "labels" field */
	bool prev;
	int err;
};

static enum MHD_Result form_field(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *filename, const char *content_type,
				  const char *transfer_encoding, const char *data, uint64_t off,
				  size_t size)
{
	struct form *f = cls;

	(void)kind, (void)filename, (void)content_type, (void)transfer_encoding, (void)off;
	if (strcmp(key, "prev_profile") == 0 && size)
		f->prev = true;
	if (strcmp(key, f->field) == 0 && size && !f->err)
		f->err = ember_buf_append(&f->profile, data, size);
	if (strcmp(key, "labels") == 0 && size && !f->err && f->field[0] == 'j')
		f->err = ember_buf_append(&f->labels, data, size);
	return f->err ? MHD_NO : MHD_YES;
}

/* The f->field field of a multipart body, into f->profile (and a
 * recording's labels into f->labels). */
static int read_form(struct MHD_Connection *c, const struct ember_buf *body, struct form *f,
		     char *why, size_t size)
{
	struct MHD_PostProcessor *pp = MHD_create_post_processor(c, 64 * 1024, form_field, f);
	enum MHD_Result ok;

	if (!pp) {
		snprintf(why, size, "multipart body without a boundary");
		return -EINVAL;
	}
	ok = MHD_post_process(pp, body->data ? body->data : "", body->len);
	MHD_destroy_post_processor(pp);
	if (f->err || ok != MHD_YES) {
		snprintf(why, size,
			 f->err == -EAGAIN ? "form: no memory free for the %s field now"
			 : f->err	   ? "form: the %s field is past the limit"
					   : "form: malformed multipart body%.0s",
			 f->field);
		return f->err ? f->err : -EINVAL;
	}
	if (f->prev) {
		snprintf(why, size, "form: a prev_profile (a cumulative profile for the server to "
				    "subtract) is not supported: send delta profiles");
		return -EINVAL;
	}
	if (!f->profile.len) {
		snprintf(why, size, "form: no %s field", f->field);
		return -EINVAL;
	}
	return 0;
}

static bool multipart(struct MHD_Connection *c)
{
	const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_CONTENT_TYPE);

	return ct && strncasecmp(ct, "multipart/form-data", 19) == 0;
}

/* The pprof of the request into in (and the body to log as is). */
static int read_pprof(const struct profsvc *svc, struct MHD_Connection *c,
		      struct api_request *req, uint64_t rate, struct profsvc_in *in, struct form *f,
		      char *why, size_t size)
{
	const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_ENCODING);
	const struct ember_buf *src = &req->body;
	const pprof_message_t *m;

	if (multipart(c)) {
		EMBER_FORWARD_IF_ERROR(read_form(c, &req->body, f, why, size));
		src = &f->profile;
		enc = NULL;
	}
	EMBER_FORWARD_IF_ERROR(profsvc_decode(svc, src->data ? src->data : "", src->len, enc,
					      req->acct, &in->p, why, size));
	m = pprof_message(in->p);
	if (!m->period && rate) /* the pprof's own period wins */
		return pprof_set_period(in->p, "cpu", "nanoseconds", (int64_t)(1000000000 / rate));
	if (profsvc_encoding_identity(enc)) {
		in->body = src->data;
		in->body_len = src->len;
	}
	return 0;
}

/* ---- JFR recordings ----------------------------------------------------------------- */

/* The recording of the request (the body, or the form's jfr and labels
 * fields) read into *jr. */
static int read_jfr(const struct profsvc *svc, struct MHD_Connection *c,
		    struct api_request *req, uint64_t rate, struct form *f,
		    struct jfr_recording **jr, char *why, size_t size)
{
	const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_ENCODING);
	struct jfr_opts o = { .sz = sizeof(o), .cpu_period_ns = (int64_t)(1000000000 / rate) };
	const struct ember_buf *src = &req->body;

	if (multipart(c)) {
		f->field = "jfr";
		EMBER_FORWARD_IF_ERROR(read_form(c, &req->body, f, why, size));
		src = &f->profile;
		enc = NULL;
		o.labels = f->labels.len ? f->labels.data : NULL;
		o.labels_len = f->labels.len;
	}
	return profsvc_jfr_decode(svc, src->data ? src->data : "", src->len, enc, &o, req->acct,
				  jr, why, size);
}

/* The answer of a recording stored whole: its profile types. */
static void jfr_answer(const struct jfr_recording *jr, struct profsvc_out *out)
{
	int err = ember_buf_appendf(&out->body, "{\"profiles\":%zu,\"types\":[", jr->n_profiles);

	for (size_t i = 0; !err && i < jr->n_profiles; i++)
		err = ember_buf_appendf(&out->body, "%s{\"name\":\"%s\",\"event\":\"%s\",\"events\":%zu}",
					i ? "," : "", jr->profiles[i].name, jr->profiles[i].event,
					jr->profiles[i].n_events);
	err = err ? err : ember_buf_appendf(&out->body, "]}\n");
	if (err) {
		out->err = err;
		snprintf(out->why, sizeof(out->why), "jfr: the answer does not fit");
	}
}

/* Each profile of the recording stored with the name's labels and its
 * type's __name__; the first refusal stops the rest and is the answer
 * (the profiles before it stay stored). */
static void ingest_jfr(struct profsvc *svc, struct MHD_Connection *c, struct api_pyroscope *t,
		       struct jfr_recording *jr, const struct profsvc_in *base,
		       struct profsvc_out *out)
{
	*out = (struct profsvc_out){ .err = 0 };
	for (size_t i = 0; i < jr->n_profiles; i++) {
		const struct pyro_kind k = { .name = jr->profiles[i].name };
		struct profsvc_in in = *base;

		t->each = t->tags;
		profsvc_pyroscope_labels(&t->each, api_param(c, "spyName"), &k, t->labels);
		in.labels = t->labels;
		in.n_labels = t->each.n;
		in.p = jfr_profile_take(jr, i);
		profsvc_ingest(svc, &in, out);
		if (out->err)
			return;
		ember_buf_release(&out->body);
	}
	ember_buf_init(&out->body, 64 << 10);
	jfr_answer(jr, out);
}

/* ---- the route ---------------------------------------------------------------------- */

static int times(struct MHD_Connection *c, struct profsvc_in *in, char *why, size_t size)
{
	const char *from = api_param(c, "from"), *until = api_param(c, "until");
	int64_t now = profsvc_now_ns(), f = now, u = now;

	if ((from && pyro_parse_time(from, now, &f)) || (until && pyro_parse_time(until, now, &u))) {
		snprintf(why, size, "from/until: not a time (seconds since the epoch)");
		return -EINVAL;
	}
	in->time_ns = f;
	in->duration_ns = u > f ? u - f : 0;
	return 0;
}

static int parse_request(const struct profsvc *svc, struct MHD_Connection *c,
			 struct api_request *req, struct api_pyroscope *t, struct profsvc_in *in,
			 struct form *f, struct jfr_recording **jr, char *why, size_t size,
			 bool *unsupported)
{
	/* no format: a multipart form holds a pprof (Pyroscope's server reads
	 * it so; the Node.js SDK before 0.6 sends no format), else folded */
	const char *fmt = api_param(c, "format") ? api_param(c, "format")
			  : multipart(c)	 ? "pprof"
						 : "folded";
	const char *rate_s = api_param(c, "sampleRate");
	const struct pyro_kind *k = NULL;
	uint64_t rate = 0;

	*unsupported = false;
	EMBER_FORWARD_IF_ERROR(pyro_name_parse(api_param(c, "name"), &t->tags, why, size));
	if (rate_s && (pyro_parse_uint(rate_s, 1000000000, &rate) || !rate)) {
		snprintf(why, size, "sampleRate: '%.32s' is not samples a second", rate_s);
		return -EINVAL;
	}
	EMBER_FORWARD_IF_ERROR(times(c, in, why, size));
	if (strcmp(fmt, "pprof") == 0) {
		EMBER_FORWARD_IF_ERROR(read_pprof(svc, c, req, rate, in, f, why, size));
	} else if (strcmp(fmt, "jfr") == 0) {
		return read_jfr(svc, c, req, rate ? rate : DEFAULT_RATE, f, jr, why, size);
	} else if (strcmp(fmt, "folded") == 0 || strcmp(fmt, "lines") == 0) {
		k = pyro_kind_of(&t->tags, api_param(c, "units"));
		EMBER_FORWARD_IF_ERROR(pyro_folded_parse(req->body.data ? req->body.data : "",
						  req->body.len, fmt[0] == 'f', k,
						  rate ? rate : DEFAULT_RATE, req->acct, &in->p,
						  why, size));
		pprof_set_time(in->p, in->time_ns, in->duration_ns);
	} else {
		*unsupported = true;
		snprintf(why, size, "format: '%.32s' is not read here (pprof, folded, lines, jfr)",
			 fmt);
		return -EINVAL;
	}
	profsvc_pyroscope_labels(&t->tags, api_param(c, "spyName"), k, t->labels);
	in->labels = t->labels;
	in->n_labels = t->tags.n;
	return 0;
}

enum MHD_Result api_pyroscope_ingest(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req)
{
	struct api_pyroscope *t = calloc(1, sizeof(*t));
	struct profsvc_in in = { .route = PROFSVC_ROUTE_INGEST, .input_bytes = req->body.len };
	struct form f = { .field = "profile" };
	struct jfr_recording *jr = NULL;
	struct api_profile_ctx x;
	struct profsvc_out out;
	enum MHD_Result ret;
	char why[512] = "";
	bool unsupported;
	int err;

	if (req->body_err)
		return api_profile_body_refused(srv, c, req);
	if (!t)
		return MHD_NO;
	ember_buf_init_account(&f.profile, srv->profiles->max_body, req->acct);
	ember_buf_init_account(&f.labels, srv->profiles->max_body, req->acct);
	err = parse_request(req->profiles, c, req, t, &in, &f, &jr, why, sizeof(why),
			    &unsupported);
	if (err) {
		pprof_profile_free(in.p);
		profsvc_count_reject(req->profiles, profsvc_decode_reject(err));
		ret = unsupported ? api_profile_text(srv, c, req, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, why,
						     NULL)
				  : api_profile_refuse(srv, c, req,
						       err == -E2BIG || err == -EAGAIN ||
								       err == -ENOMEM
							       ? err
							       : -EINVAL,
						       why);
	} else if (api_profile_ctx_init(&x, srv, req)) { /* the body's account is there */
		ret = MHD_NO;
	} else {
		in.request = &x.ro;
		if (jr)
			ingest_jfr(x.svc, c, t, jr, &in, &out);
		else
			profsvc_ingest(x.svc, &in, &out);
		ret = api_profile_respond(srv, c, req, &out);
	}
	jfr_recording_free(jr);
	ember_buf_release(&f.profile);
	ember_buf_release(&f.labels);
	free(t);
	return ret;
}
