/*
 * scrape_http.c - the scraper's HTTP GET, through libcurl (the client the
 * rest of Ember uses: ember upload, the agent, libdebuginfod), loaded with
 * dlopen when the first target is scraped, as the debuginfo store loads
 * libdebuginfod: a server without --scrape never maps libcurl and its
 * TLS libraries.  One transfer at a time per caller; the answer is read
 * into a buffer capped at the profile limit, and a transfer is cut short
 * when the caller's stop flag is set.
 */
#include "profsvc_internal.h"

#define CURL_DISABLE_TYPECHECK /* the calls go through pointers, not its macros */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define CURL_SONAME "libcurl-gnutls.so.4"

#define CURL_FUNCS(X)                                                          \
	X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_perform) \
	X(curl_easy_getinfo) X(curl_easy_cleanup) X(curl_easy_strerror)

struct curl_api {
#define CURL_FIELD(name) __typeof__(name) *name;
	CURL_FUNCS(CURL_FIELD)
#undef CURL_FIELD
};

struct api_http {
	pthread_mutex_t mu;
	bool tried;
	void *handle;
	struct curl_api api;
};

int api_http_new(struct api_http **out)
{
	struct api_http *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	pthread_mutex_init(&h->mu, NULL);
	*out = h;
	return 0;
}

void api_http_free(struct api_http *h)
{
	if (!h)
		return;
	/* libcurl stays loaded: its global state is never cleaned up while
	 * other libraries of the process (libdebuginfod) may share it */
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static int load(struct api_http *h)
{
#define CURL_SLOT(name) { #name, (void **)&h->api.name },
	const struct ember_dl_fn fns[] = { CURL_FUNCS(CURL_SLOT) };
#undef CURL_SLOT
	int err = 0;

	pthread_mutex_lock(&h->mu);
	if (!h->tried) {
		h->tried = true;
		h->handle = ember_dl_load(CURL_SONAME, "scrape", fns, sizeof(fns) / sizeof(fns[0]));
		if (h->handle && h->api.curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK)
			h->handle = NULL;
	}
	if (!h->handle)
		err = -ENOSYS;
	pthread_mutex_unlock(&h->mu);
	return err;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct ember_buf *out = arg;

	return ember_buf_append(out, data, size * n) ? 0 : size * n; /* 0 stops past the cap */
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const atomic_bool *stop = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return atomic_load(stop) ? 1 : 0;
}

int api_http_get(struct api_http *h, const char *url, long timeout_s, const atomic_bool *stop,
		 struct ember_buf *out, long *status, char *why, size_t why_size)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode rc;
	CURL *c;

	if (load(h)) {
		snprintf(why, why_size, "cannot load %s (libcurl)", CURL_SONAME);
		return -ENOSYS;
	}
	if (!(c = h->api.curl_easy_init()))
		return -ENOMEM;
	h->api.curl_easy_setopt(c, CURLOPT_URL, url);
	h->api.curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	h->api.curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	h->api.curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
	h->api.curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	h->api.curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	h->api.curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	h->api.curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	h->api.curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)stop);
	h->api.curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	h->api.curl_easy_setopt(c, CURLOPT_USERAGENT, "ember-scrape");
	h->api.curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = h->api.curl_easy_perform(c);
	*status = 0;
	h->api.curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	h->api.curl_easy_cleanup(c);
	if (rc == CURLE_OK)
		return 0;
	snprintf(why, why_size, "%s", errbuf[0] ? errbuf : h->api.curl_easy_strerror(rc));
	if (rc == CURLE_WRITE_ERROR)
		return -E2BIG;
	return rc == CURLE_ABORTED_BY_CALLBACK ? -ECANCELED : -EHOSTUNREACH;
}
