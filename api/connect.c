/*
 * connect.c - Pyroscope's query API (querier.v1.QuerierService) over the
 * Connect unary protocol (docs/http-api.md, "Pyroscope's query API
 * (Connect)"): POST /querier.v1.QuerierService/METHOD with a body in one
 * of Connect's two codecs (Content-Type: application/proto, binary
 * protobuf, or application/json, proto3's JSON mapping; gzip allowed),
 * the answer in the request's codec (codec_of chooses, for both), answered
 * from the profile service's discovery answers (profsvc_types,
 * profsvc_labels, profsvc_label_sets) re-encoded as the protocol's messages
 * (wire/querier/); SelectMergeStacktraces and SelectMergeProfile from its
 * merge (connect_select.c), SelectSeries (connect_series.c),
 * SelectMergeSpanProfile (connect_span.c), Diff (connect_diff.c) and
 * GetProfileStats (connect_stats.c) in files of their own.  The body
 * becomes its method's request message in querier_decode and an answer's
 * message its body in querier_encode (wire/querier.h, callable without a
 * server for its fuzz target), in the request's codec (binary or JSON).
 * Errors are Connect's: a JSON body
 * {"code":..,"message":..} with the HTTP status its code maps to
 * (api_connect_error_body, which profile_routes.c's answers use for this
 * route).  The body is read under the profile routes' limits and every
 * answer runs in their request context (struct api_profile_ctx), its
 * deadline shortened by Connect-Timeout-Ms.
 */
#include "api_profiles.h"
#include "querier.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_PREFIX "/querier.v1.QuerierService/"
#define CONNECT_PROTO "application/proto"
#define CONNECT_JSON "application/json"
#define ANSWER_CAP ((size_t)1 << 30) /* an answer's body (the account rules first) */
#define MS_NS 1000000LL
#define DEFAULT_RANGE_MS (3600 * 1000LL)
/* Matchers of one discovery call: each is a query of its own, their
 * answers held together until merged (docs/security.md). */
#define MAX_MATCHERS 64

/* Connect's codes and the HTTP statuses they map to. */
static const struct {
	const char *code;
	unsigned status;
} codes[] = {
	{ "invalid_argument", 400 }, { "unauthenticated", 401 },
	{ "permission_denied", 403 }, { "not_found", 404 },
	{ "resource_exhausted", 429 }, { "internal", 500 },
	{ "unimplemented", 501 },    { "unavailable", 503 },
	{ "deadline_exceeded", 504 },
};

/* The methods of the service Ember does not answer yet. */
static const char *const later[] = { "SelectHeatmap", "AnalyzeQuery" };

bool api_connect_route_parse(const char *url, struct api_route *r)
{
	size_t n;

	if (strncmp(url, CONNECT_PREFIX, strlen(CONNECT_PREFIX)))
		return false;
	url += strlen(CONNECT_PREFIX);
	n = strlen(url);
	r->ep = API_EP_CONNECT;
	if (n < sizeof(r->path))
		memcpy(r->path, url, n + 1);
	else
		r->path[0] = '\0'; /* no method of ours */
	return true;
}

/* The Connect code of an HTTP status (its class when not listed): a
 * method or type not answered is unimplemented, a body too large
 * resource_exhausted. */
static size_t code_of_status(unsigned status)
{
	size_t n = sizeof(codes) / sizeof(codes[0]);

	if (status == 405 || status == 415)
		status = 501;
	else if (status == 413)
		status = 429;
	for (size_t i = 0; i < n; i++)
		if (codes[i].status == status)
			return i;
	return code_of_status(status < 500 ? 400 : 500);
}

int api_connect_error_body(unsigned status, const char *msg, struct ember_buf *b,
			   unsigned *out_status)
{
	size_t k = code_of_status(status);
	size_t n = strlen(msg);
	int err;

	while (n && msg[n - 1] == '\n')
		n--;
	ember_buf_init(b, 6 * n + 64); /* a byte escaped is at most \uXXXX */
	err = ember_buf_appendf(b, "{\"code\":\"%s\",\"message\":", codes[k].code);
	err = err ? err : ember_json_str(b, msg, n);
	err = err ? err : ember_buf_appendf(b, "}");
	if (err)
		ember_buf_release(b);
	*out_status = codes[k].status;
	return err;
}

/* A Connect error for HTTP status status saying msg. */
static enum MHD_Result fail(struct api_server *srv, struct MHD_Connection *c,
			    const struct api_request *req, unsigned status, const char *msg)
{
	return api_profile_text(srv, c, req, status, msg, NULL);
}

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* Whether the Content-Type (parameters allowed) is type. */
static bool type_is(const char *ct, const char *type)
{
	size_t n = strlen(type);

	return ct && strncasecmp(ct, type, n) == 0 && (!ct[n] || ct[n] == ';' || ct[n] == ' ');
}

/* The request's codec, which its answer takes too (api_connect_first
 * refused any other Content-Type). */
static enum querier_codec codec_of(struct MHD_Connection *c)
{
	return type_is(header(c, MHD_HTTP_HEADER_CONTENT_TYPE), CONNECT_JSON) ? QUERIER_JSON
									       : QUERIER_PROTO;
}

/* Why the head of a Connect call refuses it (*status its HTTP status), or
 * NULL.  Answered once the body is read (api_connect_first). */
static const char *head_refusal(struct MHD_Connection *c, unsigned *status)
{
	const char *ct = header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
	const char *enc = header(c, MHD_HTTP_HEADER_CONTENT_ENCODING);
	const char *ver = header(c, "Connect-Protocol-Version");

	*status = 400;
	if (ver && strcmp(ver, "1"))
		return "Connect-Protocol-Version must be 1";
	*status = 415;
	if (!type_is(ct, CONNECT_PROTO) && !type_is(ct, CONNECT_JSON))
		return "Content-Type must be application/proto or application/json";
	*status = 501;
	if (enc && *enc && strcasecmp(enc, "gzip") && strcasecmp(enc, "identity"))
		return "Content-Encoding: only gzip and identity are read";
	return NULL;
}

enum MHD_Result api_connect_first(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, const char *method)
{
	const char *len = header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
	unsigned status;

	req->upload_err = -EINVAL; /* answered now, unless the checks pass */
	if (strcmp(method, "POST"))
		return fail(srv, c, req, 405, "Connect unary calls are POST requests");
	if (len && strtoull(len, NULL, 10) > srv->profiles->max_body)
		return fail(srv, c, req, 413, "request body larger than the profile limit");
	req->upload_err = 0;
	if (api_profile_body_begin(srv, req))
		return MHD_NO;
	/* A refusal by the head is answered once the body is read (and dropped):
	 * an answer before it closes the connection while the client still
	 * writes, which it sees as a failed write, not as the error. */
	req->body_drop = head_refusal(c, &status) != NULL;
	return MHD_YES;
}

/* ---- the request ----------------------------------------------------------- */

/* Connect-Timeout-Ms: x's deadline brought closer (never later). */
static int apply_timeout(struct MHD_Connection *c, struct api_profile_ctx *x)
{
	const char *t = header(c, "Connect-Timeout-Ms");
	char *end;
	unsigned long long ms;

	if (!t)
		return 0;
	ms = strtoull(t, &end, 10);
	if (end == t || *end || strlen(t) > 10)
		return -EINVAL;
	if (ember_monotonic_ms() + ms < x->deadline.at_ms)
		x->deadline.at_ms = ember_monotonic_ms() + ms;
	return 0;
}

/* The selection of matchers (at most one: Ember's selector; several are
 * the union of discover's answers) between start and end (milliseconds; 0:
 * the last hour, up to now). */
static int selection(size_t n, char **matchers, int64_t start, int64_t end,
		     struct pstore_selection *sel, const char **why)
{
	assert(n <= 1);
	*sel = (struct pstore_selection){ 0 };
	sel->selector = n && *matchers[0] ? matchers[0] : NULL;
	if (!end)
		end = (int64_t)(ember_realtime_ns() / MS_NS);
	if (!start)
		start = end - DEFAULT_RANGE_MS;
	if (start < 0 || end > INT64_MAX / MS_NS || start >= end) {
		*why = "start must be before end (milliseconds since the epoch)";
		return -EINVAL;
	}
	sel->from_ns = start * MS_NS;
	sel->to_ns = end * MS_NS;
	return 0;
}

/* The strings of JSON array arr (names or values), those starting with "__"
 * left out when hide; pointing into arr. */
static int strings_of(json_t *arr, bool hide, char ***v, size_t *n)
{
	size_t i;
	json_t *s;

	*v = calloc(json_array_size(arr) + 1, sizeof(**v));
	*n = 0;
	if (!*v)
		return -ENOMEM;
	json_array_foreach(arr, i, s) {
		const char *str = json_string_value(s);

		if (str && (!hide || strncmp(str, "__", 2)))
			(*v)[(*n)++] = (char *)str;
	}
	return 0;
}

/* ---- discovery: LabelNames, LabelValues, Series ------------------------------ */

/* What one of the discovery methods asks, whatever its matchers. */
struct discovery {
	const char *key;	       /* the answer's array: names, values, sets */
	const char *name;	       /* LabelValues' label; NULL for LabelNames */
	const char *const *label_names; /* Series' */
	size_t n_label_names;
	bool series;
};

/* The answer of d for one selection into a. */
static int discover_one(struct api_server *srv, const struct api_profile_ctx *x,
			const struct discovery *d, const struct pstore_selection *sel,
			struct profsvc_answer *a, char *why, size_t why_size)
{
	if (d->series)
		return profsvc_label_sets(x->svc, &x->ro, sel, d->label_names,
					  d->n_label_names, a, why, why_size);
	return profsvc_labels(x->svc, &x->ro, sel, d->name, a, why, why_size);
}

/* Names and values by strcmp, label sets ({"NAME":"VALUE",..}) pair by pair
 * (name, then value), a set before those it begins. */
static int json_cmp(const void *pa, const void *pb)
{
	json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
	void *ia, *ib;
	int c = 0;

	if (json_is_string(a))
		return strcmp(json_string_value(a), json_string_value(b));
	ia = json_object_iter(a);
	ib = json_object_iter(b);
	for (; !c && ia && ib; ia = json_object_iter_next(a, ia), ib = json_object_iter_next(b, ib)) {
		c = strcmp(json_object_iter_key(ia), json_object_iter_key(ib));
		if (!c)
			c = strcmp(json_string_value(json_object_iter_value(ia)),
				   json_string_value(json_object_iter_value(ib)));
	}
	return c ? c : (ia != NULL) - (ib != NULL);
}

/* arr sorted, each element once. */
static int sort_unique(json_t *arr)
{
	size_t n = json_array_size(arr), k = 0;
	json_t **v = calloc(n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), json_cmp);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++) {
		if (k && json_cmp(&v[i], &v[k - 1]) == 0) {
			json_decref(v[i]);
			continue;
		}
		v[k++] = v[i];
		json_array_append_new(arr, v[i]);
	}
	free(v);
	return 0;
}

/*
 * d's answer for matchers between start and end: per matcher the answer of
 * its selection, their union (Pyroscope's: what matches any of them),
 * sorted and unique; no matcher: everything.  The array in *out (a new
 * reference: json_decref), or a Connect error answered in *ret.
 */
static int discover(struct api_server *srv, struct MHD_Connection *c, struct api_request *req,
		    const struct api_profile_ctx *x, const struct discovery *d, size_t n,
		    char **matchers, int64_t start, int64_t end, json_t **out,
		    enum MHD_Result *ret)
{
	json_t *all = json_array();
	int err = all ? 0 : -ENOMEM;

	*ret = MHD_NO;
	if (n > MAX_MATCHERS) {
		char msg[64];

		json_decref(all);
		snprintf(msg, sizeof(msg), "at most %d matchers are read in one call", MAX_MATCHERS);
		*ret = fail(srv, c, req, 400, msg);
		return -EINVAL;
	}
	for (size_t i = 0; !err && i < (n ? n : 1); i++) {
		struct pstore_selection sel;
		struct profsvc_answer a;
		const char *bad = "";
		char why[512] = "";
		json_t *root;

		err = selection(n ? 1 : 0, matchers + i, start, end, &sel, &bad);
		if (err) {
			*ret = fail(srv, c, req, 400, bad);
			break;
		}
		err = discover_one(srv, x, d, &sel, &a, why, sizeof(why));
		if (err) {
			*ret = api_profile_answer(srv, c, req, x, err, &a, NULL, why);
			break;
		}
		root = json_loadb(a.body.data, a.body.len, 0, NULL);
		ember_buf_release(&a.body);
		err = json_array_extend(all, json_object_get(root, d->key)) ? -ENOMEM : 0;
		json_decref(root);
	}
	if (!err && n > 1)
		err = sort_unique(all);
	if (err) {
		json_decref(all);
		return err;
	}
	*out = all;
	return 0;
}

/* m encoded in the request's codec into an answer. */
static enum MHD_Result answer(struct api_server *srv, struct MHD_Connection *c,
			      const struct api_request *req, const ProtobufCMessage *m)
{
	enum querier_codec codec = codec_of(c);
	struct ember_buf b;

	ember_buf_init_account(&b, ANSWER_CAP, req->acct);
	if (querier_encode(m, codec, &b)) {
		ember_buf_release(&b);
		return MHD_NO;
	}
	return api_profile_ok(srv, c, req, codec == QUERIER_JSON ? CONNECT_JSON : CONNECT_PROTO,
			      &b, NULL);
}

/* LabelNames and LabelValues (name given). */
static enum MHD_Result labels(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, const struct api_profile_ctx *x,
			      const ProtobufCMessage *in, bool values)
{
	const Types__V1__LabelNamesRequest *nr = values ? NULL : (const void *)in;
	const Types__V1__LabelValuesRequest *vr = values ? (const void *)in : NULL;
	Types__V1__LabelNamesResponse out = TYPES__V1__LABEL_NAMES_RESPONSE__INIT;
	struct discovery d = { .key = values ? "values" : "names",
			       .name = values ? vr->name : NULL };
	json_t *arr = NULL;
	enum MHD_Result ret;
	int err;

	if (values && !*vr->name)
		return fail(srv, c, req, 400, "LabelValues needs a name");
	err = values ? discover(srv, c, req, x, &d, vr->n_matchers, vr->matchers, vr->start,
				vr->end, &arr, &ret)
		     : discover(srv, c, req, x, &d, nr->n_matchers, nr->matchers, nr->start,
				nr->end, &arr, &ret);
	if (err)
		return ret;
	err = strings_of(arr, !values, &out.names, &out.n_names);
	ret = err ? MHD_NO : answer(srv, c, req, &out.base);
	free(out.names);
	json_decref(arr);
	return ret;
}

/* The ProfileType of one object of profsvc_types' answer. */
static void type_of(json_t *o, Types__V1__ProfileType *t)
{
	types__v1__profile_type__init(t);
	t->id = (char *)json_string_value(json_object_get(o, "id"));
	t->name = (char *)json_string_value(json_object_get(o, "name"));
	t->sample_type = (char *)json_string_value(json_object_get(o, "sample_type"));
	t->sample_unit = (char *)json_string_value(json_object_get(o, "sample_unit"));
	t->period_type = (char *)json_string_value(json_object_get(o, "period_type"));
	t->period_unit = (char *)json_string_value(json_object_get(o, "period_unit"));
}

static enum MHD_Result profile_types(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req, const struct api_profile_ctx *x,
				     const ProtobufCMessage *m)
{
	const Querier__V1__ProfileTypesRequest *in = (const void *)m;
	Querier__V1__ProfileTypesResponse out = QUERIER__V1__PROFILE_TYPES_RESPONSE__INIT;
	Types__V1__ProfileType *types = NULL;
	struct pstore_selection sel;
	struct profsvc_answer a;
	const char *bad = "";
	char why[512] = "";
	json_t *root = NULL, *arr, *o;
	enum MHD_Result ret = MHD_NO;
	size_t i;
	int err = selection(0, NULL, in->start, in->end, &sel, &bad);

	if (err)
		return fail(srv, c, req, 400, bad);
	err = profsvc_types(x->svc, &x->ro, &sel, &a, why, sizeof(why));
	if (err)
		return api_profile_answer(srv, c, req, x, err, &a, NULL, why);
	root = json_loadb(a.body.data, a.body.len, 0, NULL);
	ember_buf_release(&a.body);
	arr = json_object_get(root, "types");
	types = calloc(json_array_size(arr) + 1, sizeof(*types));
	out.profile_types = calloc(json_array_size(arr) + 1, sizeof(*out.profile_types));
	if (arr && types && out.profile_types) {
		json_array_foreach(arr, i, o) {
			type_of(o, &types[i]);
			out.profile_types[out.n_profile_types++] = &types[i];
		}
		ret = answer(srv, c, req, &out.base);
	}
	free(out.profile_types);
	free(types);
	json_decref(root);
	return ret;
}

/* The Labels of one object {"NAME":"VALUE",..} of profsvc_label_sets'
 * answer, its pairs in pairs[0, json_object_size(o)). */
static void set_of(json_t *o, Types__V1__Labels *l, Types__V1__LabelPair *pairs,
		   Types__V1__LabelPair **ptrs)
{
	const char *k;
	json_t *v;

	types__v1__labels__init(l);
	l->labels = ptrs;
	json_object_foreach(o, k, v) {
		types__v1__label_pair__init(&pairs[l->n_labels]);
		pairs[l->n_labels].name = (char *)k;
		pairs[l->n_labels].value = (char *)json_string_value(v);
		ptrs[l->n_labels] = &pairs[l->n_labels];
		l->n_labels++;
	}
}

/* The SeriesResponse of label sets arr (pointing into it). */
static int series_out(json_t *arr, Querier__V1__SeriesResponse *out, void **mem)
{
	json_t *o;
	size_t i, pairs = 0, n;
	Types__V1__Labels *sets;
	Types__V1__LabelPair *p, **pp;

	n = json_array_size(arr);
	json_array_foreach(arr, i, o)
		pairs += json_object_size(o);
	*mem = calloc(1, n * (sizeof(*sets) + sizeof(sets)) + pairs * (sizeof(*p) + sizeof(p)) + 1);
	if (!*mem)
		return -ENOMEM;
	out->labels_set = *mem;
	sets = (void *)(out->labels_set + n);
	p = (void *)(sets + n);
	pp = (void *)(p + pairs);
	json_array_foreach(arr, i, o) {
		set_of(o, &sets[i], p, pp);
		p += sets[i].n_labels;
		pp += sets[i].n_labels;
		out->labels_set[out->n_labels_set++] = &sets[i];
	}
	return 0;
}

static enum MHD_Result series(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, const struct api_profile_ctx *x,
			      const ProtobufCMessage *m)
{
	const Querier__V1__SeriesRequest *in = (const void *)m;
	Querier__V1__SeriesResponse out = QUERIER__V1__SERIES_RESPONSE__INIT;
	struct discovery d = { .key = "sets", .series = true,
			       .label_names = (const char *const *)in->label_names,
			       .n_label_names = in->n_label_names };
	json_t *arr = NULL;
	void *mem = NULL;
	enum MHD_Result ret;
	int err = discover(srv, c, req, x, &d, in->n_matchers, in->matchers, in->start, in->end,
			   &arr, &ret);

	if (err)
		return ret;
	err = series_out(arr, &out, &mem);
	ret = err ? MHD_NO : answer(srv, c, req, &out.base);
	free(mem);
	json_decref(arr);
	return ret;
}

static bool later_method(const char *m)
{
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
		if (strcmp(m, later[i]) == 0)
			return true;
	return false;
}

enum MHD_Result api_connect_answer(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	const char *m = req->route.path;
	struct api_profile_ctx x;
	const char *enc = header(c, MHD_HTTP_HEADER_CONTENT_ENCODING);
	unsigned status;
	const char *refusal = head_refusal(c, &status);
	struct ember_buf plain;
	ProtobufCMessage *in = NULL;
	char why[320] = "";
	char msg[320];
	enum MHD_Result ret;
	int err;

	if (refusal)
		return fail(srv, c, req, status, refusal);
	if (req->body_err)
		return api_profile_body_refused(srv, c, req);
	ret = api_profile_tenant_of(srv, c, req, NULL, false);
	if (!req->profiles)
		return ret;
	if (api_profile_ctx_init(&x, srv, req))
		return MHD_NO;
	if (apply_timeout(c, &x))
		return fail(srv, c, req, 400, "Connect-Timeout-Ms must be a number of milliseconds");
	ember_buf_init_account(&plain, srv->profiles->max_body, req->acct);
	err = querier_decode(m, codec_of(c), enc && strcasecmp(enc, "gzip") == 0,
			     req->body.data ? req->body.data : "", req->body.len, &plain, &in, why,
			     sizeof(why));
	ember_buf_release(&plain);
	if (err == -EINVAL)
		return fail(srv, c, req, 400, why);
	if (err && err != -ENOENT)
		return fail(srv, c, req, err == -E2BIG ? 413 : 503,
			    *why ? why : "the request body could not be read now");
	if (strcmp(m, "ProfileTypes") == 0)
		ret = profile_types(srv, c, req, &x, in);
	else if (strcmp(m, "LabelNames") == 0 || strcmp(m, "LabelValues") == 0)
		ret = labels(srv, c, req, &x, in, m[5] == 'V');
	else if (strcmp(m, "Series") == 0)
		ret = series(srv, c, req, &x, in);
	else if (strcmp(m, "SelectMergeStacktraces") == 0)
		ret = api_connect_select_stacktraces(srv, c, req, &x, in);
	else if (strcmp(m, "SelectMergeProfile") == 0)
		ret = api_connect_select_profile(srv, c, req, &x, in);
	else if (strcmp(m, "SelectSeries") == 0)
		ret = api_connect_select_series(srv, c, req, &x, in);
	else if (strcmp(m, "SelectMergeSpanProfile") == 0)
		ret = api_connect_select_span(srv, c, req, &x, in);
	else if (strcmp(m, "Diff") == 0)
		ret = api_connect_diff(srv, c, req, &x, in);
	else if (strcmp(m, "GetProfileStats") == 0)
		ret = api_connect_profile_stats(srv, c, req, &x, in);
	else {
		snprintf(msg, sizeof(msg), "querier.v1.QuerierService/%.64s is %s", m,
			 later_method(m) ? "not answered by Ember yet" : "no method of the service");
		ret = fail(srv, c, req, 501, msg);
	}
	protobuf_c_message_free_unpacked(in, NULL);
	return ret;
}

int api_connect_selection(size_t n, char **matchers, int64_t start, int64_t end,
			  struct pstore_selection *sel, const char **why)
{
	return selection(n, matchers, start, end, sel, why);
}

enum MHD_Result api_connect_reply(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, const ProtobufCMessage *m)
{
	return answer(srv, c, req, m);
}

enum MHD_Result api_connect_reply_packed(struct api_server *srv, struct MHD_Connection *c,
					 const struct api_request *req,
					 const ProtobufCMessageDescriptor *md, struct ember_buf *packed)
{
	struct ember_buf b;

	if (codec_of(c) == QUERIER_PROTO)
		return api_profile_ok(srv, c, req, CONNECT_PROTO, packed, NULL);
	ember_buf_init_account(&b, ANSWER_CAP, req->acct);
	if (querier_encode_json_packed(md, packed->data ? packed->data : "", packed->len, &b)) {
		ember_buf_release(&b);
		ember_buf_release(packed);
		return api_profile_text(srv, c, req, 500, "the answer does not unpack", NULL);
	}
	ember_buf_release(packed);
	return api_profile_ok(srv, c, req, CONNECT_JSON, &b, NULL);
}
