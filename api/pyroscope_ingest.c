/*
 * pyroscope_ingest.c - POST /ingest as Grafana Pyroscope's server takes
 * it, so that Pyroscope's SDKs and Grafana Alloy send to Ember unchanged
 * (docs/http-api.md, "Ingest, Pyroscope's protocol"):
 *   ?name=APP{k=v,...}&from=&until=&format=pprof|folded|lines&sampleRate=&spyName=
 * APP becomes service_name (app_name when a service_name tag is given),
 * each tag a label (dotted names allowed), spyName the label
 * pyroscope_spy.  A pprof body (raw, gzip, zstd, or the "profile" field of
 * a multipart form, as the Go SDK sends it) keeps its own sample types and
 * period, taking sampleRate only when it has no period; folded and lines
 * bodies become a profile of the type APP's suffix names (".cpu" or none:
 * CPU, counts scaled by the period 1e9 / sampleRate, as Pyroscope does).
 * Then the profile is stored as POST /api/v1/profiles stores it.
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_TAGS 48
#define MAX_STACK 1024
#define DEFAULT_RATE 100

struct tags {
	char buf[4096];
	struct pstore_label v[MAX_TAGS + 4];
	size_t n;
	char app[512];
	const char *suffix; /* the type suffix cut from APP (folded), or NULL */
};

/* ---- name=APP{k=v,...} -------------------------------------------------------- */

static int parse_tags(char *p, struct tags *t, char *why, size_t size)
{
	while (*p && *p != '}') {
		char *comma = p + strcspn(p, ",}"), *eq, stop = *comma;

		*comma = '\0';
		eq = strchr(p, '=');
		if (!eq || eq == p) {
			snprintf(why, size, "name: tag '%.64s' is not k=v", p);
			return -EINVAL;
		}
		if (t->n == MAX_TAGS) {
			snprintf(why, size, "name: more than %d tags", MAX_TAGS);
			return -EINVAL;
		}
		*eq = '\0';
		t->v[t->n++] = (struct pstore_label){ p, eq + 1 };
		p = stop ? comma + 1 : comma;
		if (stop == '}')
			break;
	}
	return 0;
}

static bool has_tag(const struct tags *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			return true;
	return false;
}

static int parse_name(const char *name, struct tags *t, char *why, size_t size)
{
	char *brace;

	if (!name || !*name) {
		snprintf(why, size, "name: required (APP or APP{k=v,...})");
		return -EINVAL;
	}
	if (strlen(name) >= sizeof(t->buf)) {
		snprintf(why, size, "name: longer than %zu bytes", sizeof(t->buf) - 1);
		return -EINVAL;
	}
	strcpy(t->buf, name);
	brace = strchr(t->buf, '{');
	if (brace) {
		*brace = '\0';
		EMBER_FORWARD_IF_ERROR(parse_tags(brace + 1, t, why, size));
	}
	if (strlen(t->buf) >= sizeof(t->app)) {
		snprintf(why, size, "name: the application name is longer than %zu bytes",
			 sizeof(t->app) - 1);
		return -EINVAL;
	}
	memcpy(t->app, t->buf, strlen(t->buf) + 1);
	return 0;
}

/* ---- the type of a folded profile -------------------------------------------- */

struct kind {
	const char *suffix;
	const char *name;		/* __name__ */
	const char *type, *unit;	/* its sample type */
	bool timed;			/* counts scaled by the period, cpu:nanoseconds */
};

static const struct kind kinds[] = {
	{ "cpu", "process_cpu", "cpu", "nanoseconds", true },
	{ "itimer", "process_cpu", "cpu", "nanoseconds", true },
	{ "wall", "wall", "wall", "nanoseconds", true },
	{ "inuse_objects", "memory", "inuse_objects", "count", false },
	{ "inuse_space", "memory", "inuse_space", "bytes", false },
	{ "alloc_objects", "memory", "alloc_objects", "count", false },
	{ "alloc_space", "memory", "alloc_space", "bytes", false },
	{ "goroutines", "goroutine", "goroutines", "count", false },
	{ "mutex_count", "mutex", "contentions", "count", false },
	{ "mutex_duration", "mutex", "delay", "nanoseconds", false },
	{ "block_count", "block", "contentions", "count", false },
	{ "block_duration", "block", "delay", "nanoseconds", false },
	{ "objects", "memory", "inuse_objects", "count", false },
	{ "bytes", "memory", "inuse_space", "bytes", false },
};

/* APP's suffix (cut from t->app), else the units parameter, else CPU. */
static const struct kind *folded_kind(struct tags *t, const char *units)
{
	char *dot = strrchr(t->app, '.');

	for (size_t i = 0; dot && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(dot + 1, kinds[i].suffix) == 0) {
			*dot = '\0';
			return &kinds[i];
		}
	for (size_t i = 0; units && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(units, kinds[i].suffix) == 0)
			return &kinds[i];
	return &kinds[0];
}

/* ---- folded and lines bodies ---------------------------------------------------- */

struct folded {
	struct pprof_profile *p;
	uint64_t *loc_of_func; /* function id -> location id */
	size_t nfunc;
};

static int location_of(struct folded *f, const char *name, size_t len, uint64_t *out)
{
	char buf[1024];
	struct pprof_function_desc fd = { .name = buf, .system_name = buf };
	uint64_t fid, lid;
	struct pprof_line ln = { 0 };

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), name);
	EMBER_FORWARD_IF_ERROR(pprof_add_function(f->p, &fd, &fid));
	if (fid >= f->nfunc) {
		size_t n = 2 * fid + 16;
		uint64_t *v = realloc(f->loc_of_func, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + f->nfunc, 0, (n - f->nfunc) * sizeof(*v));
		f->loc_of_func = v;
		f->nfunc = n;
	}
	if (!f->loc_of_func[fid]) {
		EMBER_FORWARD_IF_ERROR(pprof_add_location(f->p, 0, 0, &lid));
		ln.function_id = fid;
		EMBER_FORWARD_IF_ERROR(pprof_location_set_lines(f->p, lid, &ln, 1));
		f->loc_of_func[fid] = lid;
	}
	*out = f->loc_of_func[fid];
	return 0;
}

/* One line "root;...;leaf COUNT" (lines format: no count, 1). */
static int folded_line(struct folded *f, const char *s, size_t len, bool counted, int64_t scale,
		       char *why, size_t size)
{
	uint64_t locs[MAX_STACK];
	size_t n = 0, end = len;
	int64_t count = 1;

	if (counted) {
		const char *sp = memrchr(s, ' ', len);
		char num[24];

		if (!sp || (size_t)(s + len - sp - 1) >= sizeof(num) || sp + 1 == s + len) {
			snprintf(why, size, "folded: line '%.64s' does not end in a count", s);
			return -EINVAL;
		}
		snprintf(num, sizeof(num), "%.*s", (int)(s + len - sp - 1), sp + 1);
		if (api_parse_uint(num, INT64_MAX / (scale ? scale : 1), (uint64_t *)&count)) {
			snprintf(why, size, "folded: '%s' is not a count", num);
			return -EINVAL;
		}
		end = (size_t)(sp - s);
	}
	for (size_t i = 0; i < end && count;) {
		size_t k = i;

		while (k < end && s[k] != ';')
			k++;
		if (n == MAX_STACK) {
			snprintf(why, size, "folded: a stack deeper than %d frames", MAX_STACK);
			return -EINVAL;
		}
		if (k > i)
			EMBER_FORWARD_IF_ERROR(location_of(f, s + i, k - i, &locs[n++]));
		i = k + 1;
	}
	for (size_t a = 0, b = n; b-- > a + 1; a++) { /* leaf first */
		uint64_t x = locs[a];

		locs[a] = locs[b];
		locs[b] = x;
	}
	if (!n || !count)
		return 0;
	count *= scale;
	return pprof_add_sample(f->p, locs, n, &count, 1);
}

static int parse_folded(const char *body, size_t len, bool counted, const struct kind *k,
			uint64_t rate, struct pprof_profile **out, char *why, size_t size)
{
	struct folded f = { .p = pprof_profile_new() };
	int64_t period = k->timed ? (int64_t)(1000000000 / rate) : 0;
	int err = f.p ? pprof_add_sample_type(f.p, k->type, k->unit) : -ENOMEM;

	if (!err && k->timed)
		err = pprof_set_period(f.p, "cpu", "nanoseconds", period);
	for (size_t i = 0; !err && i < len;) {
		const char *nl = memchr(body + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (body + i)) : len - i;

		while (n && (body[i + n - 1] == '\r' || body[i + n - 1] == ' '))
			n--;
		if (n)
			err = folded_line(&f, body + i, n, counted, k->timed ? period : 1, why, size);
		i += (nl ? (size_t)(nl - (body + i)) : len - i) + 1;
	}
	free(f.loc_of_func);
	if (err) {
		pprof_profile_free(f.p);
		return err;
	}
	*out = f.p;
	return 0;
}

/* ---- pprof bodies ------------------------------------------------------------------ */

struct form {
	struct ember_buf profile;
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
	if (strcmp(key, "profile") == 0 && size && !f->err)
		f->err = ember_buf_append(&f->profile, data, size);
	return f->err ? MHD_NO : MHD_YES;
}

/* The "profile" field of a multipart body, into f->profile. */
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
		snprintf(why, size, f->err ? "form: the profile field is past the limit"
					   : "form: malformed multipart body");
		return f->err ? f->err : -EINVAL;
	}
	if (f->prev) {
		snprintf(why, size, "form: a prev_profile (a cumulative profile for the server to "
				    "subtract) is not supported: send delta profiles");
		return -EINVAL;
	}
	if (!f->profile.len) {
		snprintf(why, size, "form: no profile field");
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
static int read_pprof(struct MHD_Connection *c, struct api_request *req, uint64_t rate,
		      struct api_profile_in *in, struct form *f, char *why, size_t size)
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
	EMBER_FORWARD_IF_ERROR(api_profile_decode(src->data ? src->data : "", src->len, enc,
						  &in->p, why, size));
	m = pprof_message(in->p);
	if (!m->period && rate) /* the pprof's own period wins */
		return pprof_set_period(in->p, "cpu", "nanoseconds", (int64_t)(1000000000 / rate));
	if (!enc || !*enc || !strcasecmp(enc, "identity")) {
		in->body = src->data;
		in->body_len = src->len;
	}
	return 0;
}

/* ---- the route ---------------------------------------------------------------------- */

static int times(struct MHD_Connection *c, struct api_profile_in *in, char *why, size_t size)
{
	const char *from = api_param(c, "from"), *until = api_param(c, "until");
	int64_t now = api_now_ns(), f = now, u = now;

	if ((from && api_parse_time(from, now, &f)) || (until && api_parse_time(until, now, &u))) {
		snprintf(why, size, "from/until: not a time (seconds since the epoch)");
		return -EINVAL;
	}
	in->time_ns = f;
	in->duration_ns = u > f ? u - f : 0;
	return 0;
}

static void labels_of(struct tags *t, const char *spy, const struct kind *k)
{
	bool named = has_tag(t, "service_name");

	if (*t->app)
		t->v[t->n++] = (struct pstore_label){ named ? "app_name" : "service_name", t->app };
	if (spy && *spy && !has_tag(t, "pyroscope_spy"))
		t->v[t->n++] = (struct pstore_label){ "pyroscope_spy", spy };
	if (k && !has_tag(t, "__name__"))
		t->v[t->n++] = (struct pstore_label){ "__name__", k->name };
}

static int parse_request(struct MHD_Connection *c, struct api_request *req, struct tags *t,
			 struct api_profile_in *in, struct form *f, char *why, size_t size,
			 bool *unsupported)
{
	const char *fmt = api_param(c, "format") ? api_param(c, "format") : "folded";
	const char *rate_s = api_param(c, "sampleRate");
	const struct kind *k = NULL;
	uint64_t rate = 0;

	*unsupported = false;
	EMBER_FORWARD_IF_ERROR(parse_name(api_param(c, "name"), t, why, size));
	if (rate_s && (api_parse_uint(rate_s, 1000000000, &rate) || !rate)) {
		snprintf(why, size, "sampleRate: '%.32s' is not samples a second", rate_s);
		return -EINVAL;
	}
	EMBER_FORWARD_IF_ERROR(times(c, in, why, size));
	if (strcmp(fmt, "pprof") == 0) {
		EMBER_FORWARD_IF_ERROR(read_pprof(c, req, rate, in, f, why, size));
	} else if (strcmp(fmt, "folded") == 0 || strcmp(fmt, "lines") == 0) {
		k = folded_kind(t, api_param(c, "units"));
		EMBER_FORWARD_IF_ERROR(parse_folded(req->body.data ? req->body.data : "",
						    req->body.len, fmt[0] == 'f', k,
						    rate ? rate : DEFAULT_RATE, &in->p, why, size));
		pprof_set_time(in->p, in->time_ns, in->duration_ns);
	} else {
		*unsupported = true;
		snprintf(why, size, "format: '%.32s' is not read here (pprof, folded, lines)", fmt);
		return -EINVAL;
	}
	labels_of(t, api_param(c, "spyName"), k);
	in->labels = t->v;
	in->n_labels = t->n;
	return 0;
}

enum MHD_Result api_pyroscope_ingest(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req)
{
	struct tags *t = calloc(1, sizeof(*t));
	struct api_profile_in in = { .route = API_PROUTE_INGEST, .input_bytes = req->body.len };
	struct form f = { .err = 0 };
	struct api_profile_out out;
	enum MHD_Result ret;
	char why[512] = "";
	bool unsupported;
	int err;

	if (!t)
		return MHD_NO;
	ember_buf_init(&f.profile, srv->profiles->max_body);
	err = parse_request(c, req, t, &in, &f, why, sizeof(why), &unsupported);
	if (err) {
		pprof_profile_free(in.p);
		atomic_fetch_add(&srv->profiles->rejected[API_PREJ_BAD_PROFILE], 1);
		ret = unsupported ? api_profile_text(srv, c, req, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, why)
				  : api_profile_error(srv, c, req,
						      err == -E2BIG ? -PSTORE_ERR_LIMIT : -EINVAL,
						      err == -E2BIG ? "profile bytes, larger than the "
								      "limit"
								    : why);
	} else {
		api_profile_store(srv->profiles, &in, &out);
		ret = api_profile_respond(srv, c, req, &out);
	}
	ember_buf_release(&f.profile);
	free(t);
	return ret;
}
