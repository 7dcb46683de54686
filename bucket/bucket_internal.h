/*
 * bucket_internal.h - shared between the files of bucket/ only.
 */
#ifndef EMBER_BUCKET_INTERNAL_H
#define EMBER_BUCKET_INTERNAL_H

#include "bucket.h"

/* Longest key this component makes: prefix, a build ID, a source path's
 * hash or a derived name (STORE_NAME_MAX), and the fixed parts. */
#define BUCKET_KEY_MAX (BUCKET_PREFIX_MAX + STORE_BUILD_ID_HEX + STORE_NAME_MAX + 160)

/* The layout version every key starts with (docs/object-storage-layout.md). */
#define BUCKET_LAYOUT "v1/"

/* printf into key[BUCKET_KEY_MAX] after the prefix and the layout
 * version: 0, or -ENAMETOOLONG. */
int bucket_key(char key[BUCKET_KEY_MAX], const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Hex of the sha256 of s (source paths' keys). */
void bucket_sha256_hex(const char *s, char out[STORE_SHA256_HEX]);

#endif /* EMBER_BUCKET_INTERNAL_H */
