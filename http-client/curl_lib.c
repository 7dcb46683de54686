/*
 * curl_lib.c - libcurl loaded with dlopen, once per process, under
 * pthread_once, into the one table every file of http-client/ calls
 * through (httpc.h says why it is loaded late); and the share of
 * connections and DNS between handles of several threads, with its locks.
 * libcurl stays loaded until the process exits: its global state is never
 * cleaned up while other libraries of the process (libdebuginfod) may
 * share it.
 */
#include "httpc_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static struct httpc_lib lib;
static const struct httpc_lib *loaded; /* &lib once loaded and initialized */
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void load_once(void)
{
#define HTTPC_SLOT(name) { #name, (void **)&lib.name },
	const struct ember_dl_fn fns[] = { HTTPC_CURL_FUNCS(HTTPC_SLOT) };
#undef HTTPC_SLOT

	if (!ember_dl_load(HTTPC_SONAME, "httpc", fns, sizeof(fns) / sizeof(fns[0])))
		return;
	if (lib.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		pr_warn("httpc: cannot initialize %s", HTTPC_SONAME);
		return;
	}
	loaded = &lib;
}

int httpc_load(void)
{
	pthread_once(&lib_once, load_once);
	return loaded ? 0 : -ENOSYS;
}

const struct httpc_lib *httpc_lib(void)
{
	return loaded;
}

/* ---- the share ------------------------------------------------------------ */

#define SHARE_LOCKS 8 /* > CURL_LOCK_DATA_CONNECT */

struct httpc_share {
	CURLSH *sh;
	pthread_mutex_t lock[SHARE_LOCKS]; /* by curl_lock_data */
};

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
	struct httpc_share *s = ud;

	(void)h, (void)access;
	pthread_mutex_lock(&s->lock[(unsigned)data % SHARE_LOCKS]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
	struct httpc_share *s = ud;

	(void)h;
	pthread_mutex_unlock(&s->lock[(unsigned)data % SHARE_LOCKS]);
}

int httpc_share_new(struct httpc_share **out)
{
	struct httpc_share *s;
	int err = httpc_load();

	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->sh = lib.curl_share_init();
	if (!s->sh) {
		free(s);
		return -ENOMEM;
	}
	for (int i = 0; i < SHARE_LOCKS; i++)
		pthread_mutex_init(&s->lock[i], NULL);
	lib.curl_share_setopt(s->sh, CURLSHOPT_LOCKFUNC, share_lock);
	lib.curl_share_setopt(s->sh, CURLSHOPT_UNLOCKFUNC, share_unlock);
	lib.curl_share_setopt(s->sh, CURLSHOPT_USERDATA, s);
	lib.curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	lib.curl_share_setopt(s->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	*out = s;
	return 0;
}

void httpc_share_free(struct httpc_share *s)
{
	if (!s)
		return;
	lib.curl_share_cleanup(s->sh);
	for (int i = 0; i < SHARE_LOCKS; i++)
		pthread_mutex_destroy(&s->lock[i]);
	free(s);
}

CURLSH *httpc_share_curl(const struct httpc_share *s)
{
	return s ? s->sh : NULL;
}
