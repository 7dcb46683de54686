/*
 * url_shown.c - a URL as Ember shows it (log lines, /metrics labels,
 * stored labels, error messages): the credentials it may carry removed,
 * so that only the request itself uses them (docs/security.md).
 *
 * RFC 3986 section 3.2.1 puts "user:password@" in the authority; a query
 * parameter whose name says it is a secret (token, key, secret, passw,
 * pwd, auth, sig, credential, session, in any case, anywhere in the
 * name: "access_token", "X-Amz-Signature", "apikey") keeps its name and
 * gets the value REDACTED.  Everything else is kept as it is.
 */
#include "common.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Does the query parameter name s[0..n) say that its value is a secret? */
static bool secret_name(const char *s, size_t n)
{
	static const char *const words[] = { "token", "key", "secret", "passw", "pwd",
					     "auth", "sig", "credential", "session" };

	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		size_t wl = strlen(words[w]);

		for (size_t i = 0; i + wl <= n; i++)
			if (strncasecmp(s + i, words[w], wl) == 0)
				return true;
	}
	return false;
}

/* One "name[=value]" of a query, s[0..n), appended shown to b. */
static int append_param(struct ember_buf *b, const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);

	if (!eq || !secret_name(s, (size_t)(eq - s)))
		return ember_buf_append(b, s, n);
	return ember_buf_appendf(b, "%.*s=REDACTED", (int)(eq - s), s);
}

/* The query s (after its '?', up to a '#' or the end), shown, into b. */
static int append_query(struct ember_buf *b, const char *s, size_t n)
{
	int err = 0;

	while (!err) {
		const char *amp = memchr(s, '&', n);
		size_t len = amp ? (size_t)(amp - s) : n;

		err = append_param(b, s, len);
		if (!amp)
			break;
		err = err ? err : ember_buf_append(b, "&", 1);
		s += len + 1;
		n -= len + 1;
	}
	return err;
}

int ember_url_shown(const char *url, char *out, size_t size)
{
	const char *auth = strstr(url, "://"), *host, *at, *q, *frag;
	struct ember_buf b;
	size_t alen, len;
	int err;

	ember_buf_init(&b, size ? size - 1 : 0); /* room for the NUL */
	auth = auth ? auth + 3 : url;
	alen = strcspn(auth, "/?#");
	at = auth;
	for (const char *p = auth; p < auth + alen; p++) /* the last '@': all of a password */
		if (*p == '@')
			at = p + 1;
	host = at;
	q = strchr(host, '?');
	frag = strchr(host, '#');
	if (q && frag && frag < q)
		q = NULL;
	err = ember_buf_append(&b, url, (size_t)(auth - url));
	err = err ? err : ember_buf_append(&b, host, (size_t)((q ? q + 1 : frag ? frag : host +
							       strlen(host)) - host));
	if (!err && q)
		err = append_query(&b, q + 1, frag ? (size_t)(frag - q - 1) : strlen(q + 1));
	if (!err && frag)
		err = ember_buf_append(&b, frag, strlen(frag));
	len = err ? 0 : b.len;
	if (size)
		memcpy(out, len ? b.data : "", len + 1);
	ember_buf_release(&b);
	return err ? -ENAMETOOLONG : (int)len;
}
