/*
 * table_cache.c - unwind tables kept on disk under --cache-dir across
 * restarts: DIR/BUILDID.unwind (the table, as the server sent it or the
 * agent compiled it) and DIR/BUILDID.etag (the server's ETag, empty for
 * a table compiled here).  Written to a temporary name and renamed, so a
 * crash never leaves half a table (mode 0600, in a directory others
 * cannot write: safe_files.c); a corrupt one fails unwind_table_new()
 * when loaded and is fetched again.
 */
#include "agent_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CACHE_MAX ((size_t)256 << 20)

int agent_cache_read(const char *dir, const char *build_id, struct ember_buf *image,
		     char *etag, size_t etag_size)
{
	char name[256], why[1200];
	struct ember_buf e;
	int dfd = agent_dir_open(dir, why, sizeof(why)), err;

	ember_buf_init(image, CACHE_MAX);
	if (dfd < 0)
		return dfd;
	snprintf(name, sizeof(name), "%s.unwind", build_id);
	err = agent_file_read(dfd, name, image);
	snprintf(name, sizeof(name), "%s.etag", build_id);
	ember_buf_init(&e, 256);
	etag[0] = '\0';
	if (!err && !agent_file_read(dfd, name, &e) && e.len < etag_size)
		snprintf(etag, etag_size, "%.*s", (int)e.len, e.data ? e.data : "");
	ember_buf_release(&e);
	close(dfd);
	return err;
}

int agent_cache_write(const char *dir, const char *build_id, const void *image, size_t size,
		      const char *etag)
{
	char name[256], why[1200];
	int dfd = agent_dir_open(dir, why, sizeof(why)), err;

	if (dfd < 0) {
		pr_warn("agent: %s", why);
		return dfd;
	}
	snprintf(name, sizeof(name), "%s.etag", build_id);
	err = agent_file_write(dfd, name, etag ? etag : "", etag ? strlen(etag) : 0);
	snprintf(name, sizeof(name), "%s.unwind", build_id);
	if (!err)
		err = agent_file_write(dfd, name, image, size);
	close(dfd);
	return err;
}
