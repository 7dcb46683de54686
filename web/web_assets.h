/*
 * web_assets.h - the browser UI's files (web/), embedded into the server
 * at build time (web/embed.cmake): looked up by request path.
 *
 * Invariants: paths begin with '/', are unique and sorted; every asset's
 * etag is a quoted prefix of its content's sha256, so it changes exactly
 * when the bytes do.  Everything is static data: nothing to free.
 */
#ifndef EMBER_WEB_ASSETS_H
#define EMBER_WEB_ASSETS_H

#include <stddef.h>

struct web_asset {
	const char *path;          /* "/index.html", "/js/flame.js" */
	const char *type;          /* Content-Type */
	const unsigned char *data; /* len bytes (NUL after them) */
	size_t len;
	const char *etag;          /* "\"<32 hex digits>\"" */
};

/* The generated table (web_table.c). */
extern const struct web_asset web_asset_table[];
extern const size_t web_asset_count;

/*
 * The asset served at path ("/" is "/index.html"), or NULL.  The path
 * is compared as it is: no "..", no percent-decoding, no query string.
 */
const struct web_asset *web_asset_find(const char *path);

#endif /* EMBER_WEB_ASSETS_H */
