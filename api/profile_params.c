/*
 * profile_params.c - the query parameters of the profile routes
 * (docs/http-api.md, "Profiles", Conventions), read from the request by
 * libmicrohttpd (percent-decoded): a selection (selector, profile type,
 * time range) under a prefix with fallbacks.  The times themselves, as
 * Pyroscope and Grafana write them, are wire/'s (pyroscope.h).
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC_NS ((int64_t)1000000000)
#define DEFAULT_RANGE_NS (3600 * SEC_NS)

const char *api_param(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* The parameter name under prefix, else unprefixed, else alt. */
static const char *param3(struct MHD_Connection *c, const char *prefix, const char *name,
			  const char *alt, const char **used)
{
	char full[64];
	const char *v = NULL;

	if (prefix && *prefix) {
		snprintf(full, sizeof(full), "%s%s", prefix, name);
		if ((v = api_param(c, full)))
			*used = prefix;
	}
	if (!v && alt && (v = api_param(c, alt)))
		*used = alt;
	if (!v && (v = api_param(c, name)))
		*used = "";
	return v;
}

static int time_param(struct MHD_Connection *c, const char *prefix, const char *name,
		      const char *name2, const char *alt, int64_t now, int64_t dflt, int64_t *out,
		      char *why, size_t why_size)
{
	const char *used = "", *v = param3(c, prefix, name, alt, &used);

	if (!v && name2)
		v = param3(c, prefix, name2, NULL, &used);
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (pyro_parse_time(v, now, out)) {
		snprintf(why, why_size,
			 "%s%s: '%.64s' is not a time (now, now-1h, RFC 3339 or an epoch count)\n",
			 used == alt ? "" : used, used == alt ? alt : name, v);
		return -EINVAL;
	}
	return 0;
}

int api_selection_from_params(struct MHD_Connection *c, const char *prefix,
			      const struct api_selection_names *alt,
			      struct pstore_selection *sel, char *why, size_t why_size)
{
	int64_t now = profsvc_now_ns();
	const char *used = "";

	*sel = (struct pstore_selection){ 0 };
	sel->selector = param3(c, prefix, "query", alt ? alt->query : NULL, &used);
	sel->type = api_param(c, "type");
	if (time_param(c, prefix, "to", "until", alt ? alt->to : NULL, now, now, &sel->to_ns, why,
		       why_size))
		return -EINVAL;
	if (time_param(c, prefix, "from", NULL, alt ? alt->from : NULL, now,
		       sel->to_ns - DEFAULT_RANGE_NS, &sel->from_ns, why, why_size))
		return -EINVAL;
	if (sel->from_ns >= sel->to_ns) {
		snprintf(why, why_size, "%sfrom: the range is empty (from is not before to)\n",
			 prefix ? prefix : "");
		return -EINVAL;
	}
	return 0;
}

/* ---- span links ------------------------------------------------------------- */

struct links_walk {
	struct api_links *out;
	int err;
	char *why;
	size_t why_size;
};

/* One ID of a parameter's comma-separated list into the filter. */
static int add_link_id(struct links_walk *w, bool span, const char *id, size_t len)
{
	struct api_links *l = w->out;
	size_t bytes = span ? 8 : 16;
	char hex[33];

	if (l->f.n_span + l->f.n_trace >= PSTORE_MAX_LINK_IDS) {
		snprintf(w->why, w->why_size, "span_id, trace_id: more than %d IDs\n",
			 PSTORE_MAX_LINK_IDS);
		return -EINVAL;
	}
	if (len != 2 * bytes) {
		snprintf(w->why, w->why_size, "%s: '%.40s' is not %zu hex digits\n",
			 span ? "span_id" : "trace_id", id, 2 * bytes);
		return -EINVAL;
	}
	memcpy(hex, id, len);
	hex[len] = '\0';
	if (ember_hex_decode(hex, span ? l->span[l->f.n_span] : l->trace[l->f.n_trace], bytes)) {
		snprintf(w->why, w->why_size, "%s: '%s' is not hex\n", span ? "span_id" : "trace_id",
			 hex);
		return -EINVAL;
	}
	if (span)
		l->f.n_span++;
	else
		l->f.n_trace++;
	return 0;
}

static enum MHD_Result link_param(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct links_walk *w = cls;
	bool span = key && !strcmp(key, "span_id");

	(void)kind;
	if (!span && (!key || strcmp(key, "trace_id")))
		return MHD_YES;
	for (const char *p = value ? value : ""; !w->err;) {
		size_t n = strcspn(p, ",");

		w->err = add_link_id(w, span, p, n);
		if (!p[n])
			break;
		p += n + 1;
	}
	return w->err ? MHD_NO : MHD_YES;
}

static int cmp8(const void *a, const void *b)
{
	return memcmp(a, b, 8);
}

static int cmp16(const void *a, const void *b)
{
	return memcmp(a, b, 16);
}

/* Sort each list and drop repeats (the filter's order). */
static size_t sort_unique(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	uint8_t *b = v;
	size_t out = 0;

	ember_qsort(v, n, size, cmp);
	for (size_t i = 0; i < n; i++)
		if (!out || cmp(b + (out - 1) * size, b + i * size))
			memmove(b + out++ * size, b + i * size, size);
	return out;
}

static void links_init(struct api_links *out)
{
	memset(out, 0, sizeof(*out));
	out->f.span = (const uint8_t(*)[8])out->span;
	out->f.trace = (const uint8_t(*)[16])out->trace;
}

static void links_finish(struct api_links *out)
{
	out->f.n_span = sort_unique(out->span, out->f.n_span, 8, cmp8);
	out->f.n_trace = sort_unique(out->trace, out->f.n_trace, 16, cmp16);
}

int api_links_from_params(struct MHD_Connection *c, struct api_links *out, char *why,
			  size_t why_size)
{
	struct links_walk w = { out, 0, why, why_size };

	links_init(out);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, link_param, &w);
	if (w.err)
		return w.err;
	links_finish(out);
	return 0;
}

int api_links_from_lists(char *const *spans, size_t n_span, char *const *traces,
			 size_t n_trace, struct api_links *out, char *why, size_t why_size)
{
	struct links_walk w = { out, 0, why, why_size };

	links_init(out);
	for (size_t i = 0; !w.err && i < n_span; i++)
		w.err = add_link_id(&w, true, spans[i], strlen(spans[i]));
	for (size_t i = 0; !w.err && i < n_trace; i++)
		w.err = add_link_id(&w, false, traces[i], strlen(traces[i]));
	if (w.err)
		return w.err;
	links_finish(out);
	return 0;
}

/* ---- a call path (focus=) ---------------------------------------------------- */

void api_focus_release(struct api_focus *f)
{
	free(f->text);
	free(f->v);
	*f = (struct api_focus){ 0 };
}

/* out->text split at ';' into out->v (room for every frame). */
static int focus_split(struct api_focus *out, char *why, size_t why_size)
{
	for (char *p = out->text, *semi; p; p = semi ? semi + 1 : NULL) {
		semi = strchr(p, ';');
		if (semi)
			*semi = '\0';
		if (!*p) {
			snprintf(why, why_size, "focus: an empty frame name (frames are separated "
						"by ';', root first)\n");
			return -EINVAL;
		}
		out->v[out->n++] = p;
	}
	return 0;
}

int api_focus_from_params(struct MHD_Connection *c, const char *prefix, struct api_focus *out,
			  struct pstore_selection *sel, char *why, size_t why_size)
{
	const char *used = "", *v = param3(c, prefix, "focus", NULL, &used);
	size_t frames = 1;
	int err;

	*out = (struct api_focus){ 0 };
	if (!v || !*v)
		return 0;
	for (const char *p = v; (p = strchr(p, ';')); p++)
		frames++;
	out->text = strdup(v);
	out->v = malloc(frames * sizeof(*out->v));
	err = out->text && out->v ? focus_split(out, why, why_size) : -ENOMEM;
	if (err == -ENOMEM)
		snprintf(why, why_size, "focus: out of memory\n");
	if (err) {
		api_focus_release(out);
		return err;
	}
	sel->focus = out->v;
	sel->n_focus = out->n;
	return 0;
}
