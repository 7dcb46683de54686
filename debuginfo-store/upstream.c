/*
 * upstream.c - fetch one artifact from upstream debuginfod servers.
 *
 * libdebuginfod does the protocol: it reads the server list from
 * DEBUGINFOD_URLS, queries them in parallel, and downloads into its cache
 * (DEBUGINFOD_CACHE_PATH); `ember serve` sets both before any thread
 * starts.  This file makes one fetch; caching misses and merging
 * concurrent requests is the server's job (api/upstream.c), and the caller
 * validates and stores what arrives.
 */
#include "store.h"
#include "store_upstream.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int add_headers(debuginfod_client *c, const struct store_fetch *f)
{
	char hdr[1024];

	if (f->forwarded_for &&
	    snprintf(hdr, sizeof(hdr), "X-Forwarded-For: %s", f->forwarded_for) <
		    (int)sizeof(hdr) &&
	    debuginfod_add_http_header(c, hdr))
		return -EINVAL;
	return 0;
}

/* libdebuginfod calls this while it waits; non-zero aborts the transfer. */
static int on_progress(debuginfod_client *c, long done, long total)
{
	const struct store_fetch *f = debuginfod_get_user_data(c);

	return f->cancelled && f->cancelled(f->cancel_arg);
}

int store_upstream_fetch(const struct store_fetch *f, int *fd, char **path)
{
	debuginfod_client *c = debuginfod_begin();
	int ret;

	if (!c)
		return -ENOMEM;
	debuginfod_set_user_data(c, (void *)f);
	debuginfod_set_progressfn(c, on_progress);
	ret = add_headers(c, f);
	if (ret)
		goto out;
	switch (f->want) {
	case STORE_WANT_DEBUGINFO:
		ret = debuginfod_find_debuginfo(c, (const unsigned char *)f->build_id,
						0, path);
		break;
	case STORE_WANT_EXECUTABLE:
		ret = debuginfod_find_executable(c, (const unsigned char *)f->build_id,
						 0, path);
		break;
	default:
		ret = f->source_path
			      ? debuginfod_find_source(c, (const unsigned char *)f->build_id,
						       0, f->source_path, path)
			      : -EINVAL;
	}
out:
	debuginfod_end(c);
	if (ret < 0 && f->cancelled && f->cancelled(f->cancel_arg))
		return -ECANCELED;
	if (ret < 0)
		return ret;
	*fd = ret;
	return 0;
}
