/*
 * list.c - every key under a prefix (S3 API Reference: ListObjectsV2),
 * one page a request, following NextContinuationToken until the listing
 * is not truncated.  Each page's XML is read into a capped buffer and
 * parsed by xml.c; the caller sees the keys one by one.  A listing is
 * bounded (the handle's max_list_pages and max_list_keys) and a truncated
 * page must carry a token that is neither empty nor the one just sent, so
 * a store answering endless pages cannot make a caller loop.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The caller's callback behind a count of the listing's keys. */
struct list_count {
	objstore_list_fn fn;
	void *ctx;
	unsigned keys, max_keys;
};

static int list_counted(void *ctx, const struct objstore_list_entry *e)
{
	struct list_count *c = ctx;

	if (c->keys == c->max_keys)
		return -E2BIG;
	c->keys++;
	return c->fn(c->ctx, e);
}

static int list_page(struct objstore *s, const char *prefix, const char *max_keys,
		     const char *token, struct list_count *count,
		     struct objstore_xml_list *page, struct objstore_status *st)
{
	struct sigv4_param p[4] = { { "list-type", "2" }, { "prefix", prefix ? prefix : "" },
				    { "max-keys", max_keys }, { "continuation-token", token } };
	struct ember_diag d;
	struct ember_buf b;
	int err;

	err = os_bucket_get_xml(s, p, token ? 4 : 3, &b, st);
	if (!err) {
		d = ember_diag_make(st ? st->msg : NULL, st ? sizeof(st->msg) : 0);
		err = objstore_xml_parse_list(b.data ? b.data : "", b.len, list_counted, count,
					      page, &d);
	}
	ember_buf_release(&b);
	return err;
}

/* After page n (from 1) of a truncated listing: may the next be asked
 * for?  0, or the bound it breaks with st saying so.  ListMultipartUploads
 * (multipart.c) asks it too, its two markers joined in one string. */
int os_list_next_ok(const struct objstore *s, const char *prefix, unsigned n,
			const char *sent, const char *next, struct objstore_status *st)
{
	if (!next || !*next || (sent && strcmp(sent, next) == 0)) {
		objstore_status_set(st, 200, "", "objstore: list '%s' in bucket '%s': page %u "
				    "is truncated with %s continuation token", prefix, s->bucket, n,
				    !next || !*next ? "an empty" : "the same");
		return -EPROTO;
	}
	if (n >= s->max_list_pages) {
		objstore_status_set(st, 200, "", "objstore: list '%s' in bucket '%s': more than "
				    "%u pages (max_list_pages)", prefix, s->bucket,
				    s->max_list_pages);
		return -E2BIG;
	}
	return 0;
}

int objstore_list(struct objstore *s, const char *prefix, unsigned page_size,
		  objstore_list_fn fn, void *ctx, unsigned *pages,
		  struct objstore_status *st)
{
	struct list_count count = { .fn = fn, .ctx = ctx, .max_keys = s->max_list_keys };
	char max_keys[16], *token = NULL;
	unsigned n = 0;
	int err;

	os_status_begin(st);
	prefix = prefix ? prefix : "";
	snprintf(max_keys, sizeof(max_keys), "%u", page_size ? page_size : 1000);
	for (;;) {
		struct objstore_xml_list page = { 0 };

		err = list_page(s, prefix, max_keys, token, &count, &page, st);
		n++;
		if (err == -E2BIG && count.keys == count.max_keys)
			objstore_status_set(st, 200, "", "objstore: list '%s' in bucket '%s': "
					    "more than %u keys (max_list_keys)", prefix,
					    s->bucket, count.max_keys);
		if (!err && page.truncated)
			err = os_list_next_ok(s, prefix, n, token, page.next_token, st);
		free(token);
		token = NULL;
		if (err || !page.truncated) {
			objstore_xml_list_release(&page);
			break;
		}
		token = page.next_token; /* the next request's */
		page.next_token = NULL;
	}
	if (pages)
		*pages = n;
	return err;
}
