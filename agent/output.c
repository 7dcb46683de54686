/*
 * output.c - --output DIR: each interval's profile as
 * DIR/ember-HOST-TIME.pb.gz (gzip-compressed profile.proto, what `go tool
 * pprof` reads), written under a temporary name and renamed, so a reader
 * never sees half a file (agent_write_atomic, which the table cache
 * uses too).
 */
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int agent_write_atomic(const char *path, const void *data, size_t size)
{
	char tmp[1100];
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = ember_write_all(fd, data, size);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int agent_output_write(const char *dir, const char *host, uint64_t start_ns,
		       const struct ember_buf *gz, char *path, size_t path_size)
{
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, path_size, "%s/ember-%s-%" PRIu64 ".pb.gz", dir, host, start_ns);
	return agent_write_atomic(path, gz->data, gz->len);
}
