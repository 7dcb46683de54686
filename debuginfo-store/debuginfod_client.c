/*
 * debuginfod_client.c - fetch one artifact from upstream debuginfod servers
 * (store_upstream.h).
 *
 * libdebuginfod does the protocol: it reads the server list from
 * DEBUGINFOD_URLS, queries them in parallel, and downloads into its cache
 * (DEBUGINFOD_CACHE_PATH); `ember serve` sets both before any thread
 * starts.  This file makes one fetch; caching misses and merging
 * concurrent requests is the server's job (api/federation.c), and the caller
 * validates and stores what arrives.
 *
 * The library is loaded with dlopen on the first fetch, as elfutils' own
 * libdwfl does: it pulls in libcurl and its TLS, Kerberos and LDAP
 * libraries (about 30 shared objects, some 20 ms of page faults at every
 * start on this kind of machine), which a server without upstreams, or
 * one that never misses, should not pay for.
 */
#include "store.h"
#include "store_upstream.h"
#include "common.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEBUGINFOD_SONAME "libdebuginfod.so.1"

/* The functions of libdebuginfod this file calls, without "debuginfod_". */
#define DBGD_FUNCS(X)                                                        \
	X(begin) X(end) X(set_progressfn) X(add_http_header) X(find_debuginfo) \
	X(find_executable) X(find_source)

struct dbgd_api {
#define DBGD_FIELD(name) __typeof__(debuginfod_##name) *name;
	DBGD_FUNCS(DBGD_FIELD)
#undef DBGD_FIELD
};

struct store_upstream {
	pthread_mutex_t mu;
	bool tried;		/* dlopen attempted (under mu) */
	int err;		/* its result: 0 or -ENOSYS */
	void *handle;
	struct dbgd_api api;
};

int store_upstream_new(struct store_upstream **out)
{
	struct store_upstream *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	pthread_mutex_init(&u->mu, NULL);
	*out = u;
	return 0;
}

void store_upstream_free(struct store_upstream *u)
{
	if (!u)
		return;
	if (u->handle)
		dlclose(u->handle);
	pthread_mutex_destroy(&u->mu);
	free(u);
}

/* Load the library once; -ENOSYS (logged once) when it cannot be. */
static int load(struct store_upstream *u)
{
#define DBGD_SLOT(name) { "debuginfod_" #name, (void **)&u->api.name },
	const struct ember_dl_fn fns[] = { DBGD_FUNCS(DBGD_SLOT) };
#undef DBGD_SLOT
	int err;

	pthread_mutex_lock(&u->mu);
	if (!u->tried) {
		u->tried = true;
		u->handle = ember_dl_load(DEBUGINFOD_SONAME, "upstream", fns,
					  sizeof(fns) / sizeof(fns[0]));
		u->err = u->handle ? 0 : -ENOSYS;
	}
	err = u->err;
	pthread_mutex_unlock(&u->mu);
	return err;
}

static int add_headers(const struct dbgd_api *api, debuginfod_client *c,
		       const struct store_upstream_query *f)
{
	char hdr[1024];

	if (f->forwarded_for &&
	    snprintf(hdr, sizeof(hdr), "X-Forwarded-For: %s", f->forwarded_for) <
		    (int)sizeof(hdr) &&
	    api->add_http_header(c, hdr))
		return -EINVAL;
	return 0;
}

/*
 * The fetch running on this thread, for on_progress: libdebuginfod calls
 * it synchronously from inside debuginfod_find_*, on the caller's thread,
 * with only the client, and the library's get_user_data is behind the
 * table the callback cannot reach.  Set for the duration of one fetch,
 * like errno.
 */
static _Thread_local const struct store_upstream_query *this_fetch;

/* libdebuginfod calls this while it waits; non-zero aborts the transfer. */
static int on_progress(debuginfod_client *c, long done, long total)
{
	const struct store_upstream_query *f = this_fetch;

	(void)c, (void)done, (void)total;
	return f && f->cancelled && f->cancelled(f->cancel_arg);
}

static int find(const struct dbgd_api *api, debuginfod_client *c,
		const struct store_upstream_query *f, char **path)
{
	const unsigned char *id = (const unsigned char *)f->build_id;

	switch (f->want) {
	case STORE_WANT_DEBUGINFO:
		return api->find_debuginfo(c, id, 0, path);
	case STORE_WANT_EXECUTABLE:
		return api->find_executable(c, id, 0, path);
	default:
		return f->source_path ? api->find_source(c, id, 0, f->source_path, path)
				      : -EINVAL;
	}
}

int store_upstream_fetch(struct store_upstream *u, const struct store_upstream_query *f,
			 int *fd, char **path)
{
	const struct dbgd_api *api = &u->api;
	debuginfod_client *c;
	int ret = load(u);

	if (ret)
		return ret;
	c = api->begin();
	if (!c)
		return -ENOMEM;
	api->set_progressfn(c, on_progress);
	ret = add_headers(api, c, f);
	this_fetch = f;
	if (!ret)
		ret = find(api, c, f, path);
	this_fetch = NULL;
	api->end(c);
	if (ret < 0 && f->cancelled && f->cancelled(f->cancel_arg))
		return -ECANCELED;
	if (ret < 0)
		return ret;
	*fd = ret;
	return 0;
}
