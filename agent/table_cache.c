/*
 * table_cache.c - unwind tables kept on disk under --cache-dir across
 * restarts: DIR/BUILDID.unwind (the table, as the server sent it or the
 * agent compiled it) and DIR/BUILDID.etag (the server's ETag, empty for
 * a table compiled here).  Written to a temporary name and renamed, so a
 * crash never leaves half a table; a corrupt one fails unwind_table_new()
 * when loaded and is fetched again.
 */
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAX ((size_t)256 << 20)

static int read_all(const char *path, struct ember_buf *b)
{
	char chunk[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	while (!err && (n = read(fd, chunk, sizeof(chunk))) > 0)
		err = ember_buf_append(b, chunk, (size_t)n);
	if (!err && n < 0)
		err = -errno;
	close(fd);
	return err;
}

int agent_cache_read(const char *dir, const char *build_id, struct ember_buf *image,
		     char *etag, size_t etag_size)
{
	char path[1024];
	struct ember_buf e;
	int err;

	snprintf(path, sizeof(path), "%s/%s.unwind", dir, build_id);
	ember_buf_init(image, CACHE_MAX);
	err = read_all(path, image);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%s.etag", dir, build_id);
	ember_buf_init(&e, 256);
	etag[0] = '\0';
	if (!read_all(path, &e) && e.len < etag_size)
		snprintf(etag, etag_size, "%s", e.data ? e.data : "");
	ember_buf_release(&e);
	return 0;
}

int agent_cache_write(const char *dir, const char *build_id, const void *image, size_t size,
		      const char *etag)
{
	char path[1024];
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s.etag", dir, build_id);
	err = agent_write_atomic(path, etag ? etag : "", etag ? strlen(etag) : 0);
	snprintf(path, sizeof(path), "%s/%s.unwind", dir, build_id);
	return err ? err : agent_write_atomic(path, image, size);
}
