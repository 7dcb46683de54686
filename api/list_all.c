/*
 * list_all.c - GET /api/v1/artifacts[?after=ID&limit=N]: every build ID
 * the store holds, with its candidates (as GET /api/v1/artifacts/ID lists
 * them) and how many source files its DWARF names and how many are
 * stored, in build ID order, a page at a time: what the web UI's
 * debuginfo view shows (docs/http-api.md).  Read only; at most 1,000 IDs
 * a page, so no request walks the whole store.
 */
#include "api_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define LIST_DEFAULT 100
#define LIST_MAX 1000

struct page {
	struct store *s;
	json_t *ids;               /* the answer's array */
	json_t *cur;               /* the candidates of the current ID */
	char last[STORE_BUILD_ID_HEX];
	size_t limit;
	bool more;                 /* an ID past the page exists */
};

/* Close the current ID's entry: its source counts, appended to ids. */
static int close_id(struct page *p)
{
	uint64_t named, stored;
	json_t *o;
	int err;

	if (!p->cur)
		return 0;
	err = store_count_sources(p->s, p->last, &named, &stored);
	if (err) /* the walk's error: never a page that silently lacks counts */
		return err;
	o = json_pack("{s:s, s:o, s:I, s:I}", "build_id", p->last, "artifacts", p->cur,
		      "sources_named", (json_int_t)named, "sources_stored", (json_int_t)stored);
	p->cur = NULL;
	return o && json_array_append_new(p->ids, o) == 0 ? 0 : -ENOMEM;
}

static int take(const struct store_artifact *a, void *arg)
{
	struct page *p = arg;

	if (!p->cur || strcmp(a->build_id, p->last) != 0) {
		if (json_array_size(p->ids) + (p->cur != NULL) >= p->limit) {
			p->more = true;
			return 1; /* the page is full */
		}
		if (p->cur) {
			int err = close_id(p);

			if (err)
				return err;
		}
		p->cur = json_array();
		if (!p->cur)
			return -ENOMEM;
		memcpy(p->last, a->build_id, sizeof(p->last));
	}
	return api_list_add_candidate(a, p->cur);
}

/* limit= as a number in [1, LIST_MAX] (absent: the default), else 0. */
static size_t parse_limit(const char *v)
{
	char *end;
	unsigned long n;

	if (!v || !*v)
		return LIST_DEFAULT;
	n = strtoul(v, &end, 10);
	return *end || n == 0 ? 0 : n > LIST_MAX ? LIST_MAX : n;
}

/* The page after `after`: 0 and *out (the caller's), or a negative errno. */
static int page_json(struct store *s, const char *after, size_t limit, json_t **out)
{
	struct page p = { .s = s, .ids = json_array(), .limit = limit };
	int err = p.ids ? store_list_all(s, after, take, &p) : -ENOMEM;

	if (err == 1)
		err = 0;
	if (!err)
		err = close_id(&p);
	json_decref(p.cur);
	if (err) {
		json_decref(p.ids);
		return err;
	}
	*out = json_pack("{s:o, s:o}", "build_ids", p.ids, "next",
			 p.more ? json_string(p.last) : json_null());
	return *out ? 0 : -ENOMEM;
}

static bool valid_id(const char *v)
{
	size_t n = strlen(v);

	if (n >= STORE_BUILD_ID_HEX)
		return false;
	return strspn(v, "0123456789abcdef") == n;
}

enum MHD_Result api_serve_list_all(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	const char *after = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "after");
	size_t limit = parse_limit(MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
							       "limit"));
	json_t *o = NULL;
	int err;

	if (!limit)
		return api_respond_text(srv, c, req, api_status_of_kind(EMBER_ERRK_MALFORMED), NULL,
					"limit: want a number from 1 to 1000\n");
	if (after && !valid_id(after))
		return api_respond_text(srv, c, req, api_status_of_kind(EMBER_ERRK_MALFORMED), NULL,
					"after: want a build ID in lowercase hex\n");
	err = page_json(srv->store, after, limit, &o);
	return api_respond_json_or(srv, c, req, err, o);
}
