/*
 * web_assets.c - lookups in the embedded table of the web UI's files
 * (web_table.c, written by embed.cmake): a binary search by path, so an
 * unknown path costs a few comparisons and can name nothing else.
 */
#include "web_assets.h"

#include <string.h>

const struct web_asset *web_asset_find(const char *path)
{
	size_t lo = 0, hi = web_asset_count;

	if (strcmp(path, "/") == 0)
		path = "/index.html";
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, web_asset_table[mid].path);

		if (c == 0)
			return &web_asset_table[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
