/*
 * curl_dl.c - libcurl through dlopen (curl_dl.h says why), as the api's
 * scraper and the debuginfo store's upstream fetch load theirs.  The
 * library is loaded once per process, under pthread_once, into a table
 * that never changes afterwards; every function below calls through it.
 * Before a successful os_curl_load() (objstore_new() calls it first) the
 * functions fail as libcurl's do when it cannot work: NULL or
 * CURLE_FAILED_INIT.
 *
 * curl_easy_setopt and curl_share_setopt are variadic with one argument,
 * whose type the option's number range says (curl.h's CURLOPTTYPE_*): a
 * long, an object or function pointer, or a curl_off_t.
 */
#include "objstore_internal.h"
#include "curl_dl.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>

#define CURL_SONAME "libcurl-gnutls.so.4"

#undef curl_global_init
#undef curl_easy_init
#undef curl_easy_setopt
#undef curl_easy_perform
#undef curl_easy_cleanup
#undef curl_getdate
#undef curl_share_init
#undef curl_share_setopt
#undef curl_share_cleanup
#undef curl_slist_append
#undef curl_slist_free_all

#define CURL_FUNCS(X)                                                                  \
	X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_perform)      \
	X(curl_easy_cleanup) X(curl_getdate) X(curl_share_init) X(curl_share_setopt)        \
	X(curl_share_cleanup) X(curl_slist_append) X(curl_slist_free_all)

static struct {
#define CURL_FIELD(name) __typeof__(name) *name;
	CURL_FUNCS(CURL_FIELD)
#undef CURL_FIELD
	void *handle;
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void load_once(void)
{
#define CURL_SLOT(name) { #name, (void **)&lib.name },
	const struct ember_dl_fn fns[] = { CURL_FUNCS(CURL_SLOT) };
#undef CURL_SLOT

	lib.handle = ember_dl_load(CURL_SONAME, "objstore", fns, sizeof(fns) / sizeof(fns[0]));
}

int os_curl_load(void)
{
	pthread_once(&lib_once, load_once);
	return lib.handle ? 0 : -ENOSYS;
}

CURLcode os_curl_global_init(long flags)
{
	return os_curl_load() ? CURLE_FAILED_INIT : lib.curl_global_init(flags);
}

CURL *os_curl_easy_init(void)
{
	return lib.handle ? lib.curl_easy_init() : NULL;
}

CURLcode os_curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
	CURLcode rc;
	va_list ap;

	if (!lib.handle)
		return CURLE_FAILED_INIT;
	va_start(ap, opt);
	if (opt < CURLOPTTYPE_OBJECTPOINT)
		rc = lib.curl_easy_setopt(c, opt, va_arg(ap, long));
	else if (opt < CURLOPTTYPE_OFF_T)
		rc = lib.curl_easy_setopt(c, opt, va_arg(ap, void *)); /* object or function */
	else if (opt < CURLOPTTYPE_BLOB)
		rc = lib.curl_easy_setopt(c, opt, va_arg(ap, curl_off_t));
	else
		rc = lib.curl_easy_setopt(c, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLcode os_curl_easy_perform(CURL *c)
{
	return lib.handle ? lib.curl_easy_perform(c) : CURLE_FAILED_INIT;
}

void os_curl_easy_cleanup(CURL *c)
{
	if (lib.handle)
		lib.curl_easy_cleanup(c);
}

time_t os_curl_getdate(const char *p, const time_t *unused)
{
	return lib.handle ? lib.curl_getdate(p, unused) : -1;
}

CURLSH *os_curl_share_init(void)
{
	return lib.handle ? lib.curl_share_init() : NULL;
}

/* CURLSHOPT_SHARE/UNSHARE take a long, LOCKFUNC/UNLOCKFUNC a function,
 * USERDATA a pointer. */
CURLSHcode os_curl_share_setopt(CURLSH *sh, CURLSHoption opt, ...)
{
	CURLSHcode rc;
	va_list ap;

	if (!lib.handle)
		return CURLSHE_NOT_BUILT_IN;
	va_start(ap, opt);
	if (opt == CURLSHOPT_SHARE || opt == CURLSHOPT_UNSHARE)
		rc = lib.curl_share_setopt(sh, opt, va_arg(ap, long));
	else
		rc = lib.curl_share_setopt(sh, opt, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

CURLSHcode os_curl_share_cleanup(CURLSH *sh)
{
	return lib.handle ? lib.curl_share_cleanup(sh) : CURLSHE_NOT_BUILT_IN;
}

struct curl_slist *os_curl_slist_append(struct curl_slist *l, const char *s)
{
	return lib.handle ? lib.curl_slist_append(l, s) : NULL;
}

void os_curl_slist_free_all(struct curl_slist *l)
{
	if (lib.handle)
		lib.curl_slist_free_all(l);
}
