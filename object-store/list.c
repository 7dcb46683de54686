/*
 * list.c - every key under a prefix (S3 API Reference: ListObjectsV2),
 * one page a request, following NextContinuationToken until the listing
 * is not truncated.  Each page's XML is read into a capped buffer and
 * parsed by xml.c; the caller sees the keys one by one.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static int list_page(struct objstore *s, const char *prefix, const char *max_keys,
		     const char *token, objstore_list_fn fn, void *ctx,
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
		err = objstore_xml_parse_list(b.data ? b.data : "", b.len, fn, ctx, page, &d);
	}
	ember_buf_release(&b);
	return err;
}

int objstore_list(struct objstore *s, const char *prefix, unsigned page_size,
		  objstore_list_fn fn, void *ctx, unsigned *pages,
		  struct objstore_status *st)
{
	char max_keys[16], *token = NULL;
	unsigned n = 0;
	int err;

	os_status_begin(st);
	snprintf(max_keys, sizeof(max_keys), "%u", page_size ? page_size : 1000);
	for (;;) {
		struct objstore_xml_list page = { 0 };

		err = list_page(s, prefix, max_keys, token, fn, ctx, &page, st);
		n++;
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
