/*
 * httpc_internal.h - the loaded libcurl (curl_lib.c) for the files of
 * http-client/: one table of its functions, filled once per process by
 * httpc_load() and never changed afterwards.  Only this folder includes
 * curl.h.
 */
#ifndef EMBER_HTTPC_INTERNAL_H
#define EMBER_HTTPC_INTERNAL_H

#include "httpc.h"

#define CURL_DISABLE_TYPECHECK /* the calls go through the table, not its macros */
#include <curl/curl.h>

#define HTTPC_CURL_FUNCS(X)                                                             \
	X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_perform)   \
	X(curl_easy_getinfo) X(curl_easy_reset) X(curl_easy_cleanup) X(curl_easy_strerror) \
	X(curl_easy_escape) X(curl_free) X(curl_getdate) X(curl_share_init)              \
	X(curl_share_setopt) X(curl_share_cleanup) X(curl_slist_append)                 \
	X(curl_slist_free_all)

struct httpc_lib {
#define HTTPC_FIELD(name) __typeof__(name) *name;
	HTTPC_CURL_FUNCS(HTTPC_FIELD)
#undef HTTPC_FIELD
};

/* The table, after a successful httpc_load() (NULL before or without). */
const struct httpc_lib *httpc_lib(void);
/* The CURLSH of a share (NULL for none). */
CURLSH *httpc_share_curl(const struct httpc_share *s);

#endif /* EMBER_HTTPC_INTERNAL_H */
