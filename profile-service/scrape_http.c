/*
 * scrape_http.c - the scraper's HTTP GET, through Ember's HTTP client
 * (http-client/httpc.h), which loads libcurl with dlopen at its first
 * request, as the debuginfo store loads libdebuginfod: a server without
 * --scrape never maps libcurl and its TLS libraries.  One transfer at a
 * time per call; the answer is read into a buffer capped at the profile
 * limit, and a transfer is cut short when the caller's stop flag is set.
 */
#include "profsvc_internal.h"
#include "httpc.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* What every GET of the scraper sends the same way. */
struct api_http {
	unsigned connect_timeout_ms;
	const char *user_agent;
};

int api_http_new(struct api_http **out)
{
	struct api_http *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->connect_timeout_ms = 10000;
	h->user_agent = "ember-scrape";
	*out = h;
	return 0;
}

void api_http_free(struct api_http *h)
{
	free(h);
}

static int on_progress(void *arg, uint64_t up_now, uint64_t up_total)
{
	const atomic_bool *stop = arg;

	(void)up_now, (void)up_total;
	return atomic_load(stop) ? 1 : 0;
}

int api_http_get(struct api_http *h, const char *url, long timeout_s, const atomic_bool *stop,
		 struct ember_buf *out, long *status, char *why, size_t why_size)
{
	struct httpc_req q = { .url = url, .reply = out, .progress = on_progress,
			       .progress_ctx = (void *)stop,
			       .connect_timeout_ms = h->connect_timeout_ms,
			       .timeout_ms = (unsigned)timeout_s * 1000u,
			       .user_agent = h->user_agent };
	struct httpc_answer a;
	struct httpc *c;
	int err = httpc_new(NULL, &c);

	*status = 0;
	if (err == -ENOSYS)
		snprintf(why, why_size, "cannot load %s (libcurl)", HTTPC_SONAME);
	if (err)
		return err;
	err = httpc_do(c, &q, &a);
	httpc_free(c);
	*status = a.status;
	if (!err)
		return 0;
	snprintf(why, why_size, "%s", a.why);
	if (err == -E2BIG || err == -EAGAIN || err == -ECANCELED)
		return err;
	return -EHOSTUNREACH;
}
