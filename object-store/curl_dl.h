/*
 * curl_dl.h - libcurl, loaded with dlopen at the first objstore_new()
 * (curl_dl.c), for the files of object-store/ that call it: include it
 * instead of <curl/curl.h>.  The curl_* names those files use are renamed
 * here to functions of curl_dl.c that call through the loaded library, so
 * a program linking the S3 client (ember-server) maps libcurl and its
 * TLS, Kerberos and LDAP libraries only when it uses a bucket: a server
 * without --storage starts with the libraries it had before.
 */
#ifndef EMBER_CURL_DL_H
#define EMBER_CURL_DL_H

#define CURL_DISABLE_TYPECHECK /* the calls go through functions of ours */
#include <curl/curl.h>

/* Load libcurl (once per process; later calls return the first result):
 * 0, or -ENOSYS with the reason logged. */
int os_curl_load(void);

/* curl.h makes the two setopts macros of three arguments: ours instead */
#undef curl_easy_setopt
#undef curl_share_setopt
#define curl_global_init os_curl_global_init
#define curl_easy_init os_curl_easy_init
#define curl_easy_setopt os_curl_easy_setopt
#define curl_easy_perform os_curl_easy_perform
#define curl_easy_cleanup os_curl_easy_cleanup
#define curl_getdate os_curl_getdate
#define curl_share_init os_curl_share_init
#define curl_share_setopt os_curl_share_setopt
#define curl_share_cleanup os_curl_share_cleanup
#define curl_slist_append os_curl_slist_append
#define curl_slist_free_all os_curl_slist_free_all

CURLcode os_curl_global_init(long flags);
CURL *os_curl_easy_init(void);
CURLcode os_curl_easy_setopt(CURL *c, CURLoption opt, ...);
CURLcode os_curl_easy_perform(CURL *c);
void os_curl_easy_cleanup(CURL *c);
time_t os_curl_getdate(const char *p, const time_t *unused);
CURLSH *os_curl_share_init(void);
CURLSHcode os_curl_share_setopt(CURLSH *sh, CURLSHoption opt, ...);
CURLSHcode os_curl_share_cleanup(CURLSH *sh);
struct curl_slist *os_curl_slist_append(struct curl_slist *l, const char *s);
void os_curl_slist_free_all(struct curl_slist *l);

#endif /* EMBER_CURL_DL_H */
