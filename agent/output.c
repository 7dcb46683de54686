/*
 * output.c - --output DIR: each interval's profile as
 * DIR/ember-HOST-TIME.pb.gz (gzip-compressed profile.proto, what `go tool
 * pprof` reads), mode 0600, written under a temporary name and renamed,
 * so a reader never sees half a file; a DIR others can write is refused
 * (safe_files.c).
 */
#include "agent_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

int agent_output_write(const char *dir, const char *host, uint64_t start_ns,
		       const struct ember_buf *gz, char *path, size_t path_size)
{
	char why[1200], name[400];
	int dfd = agent_dir_open(dir, why, sizeof(why)), err;

	if (dfd < 0) {
		pr_err("agent: %s", why);
		return dfd;
	}
	snprintf(name, sizeof(name), "ember-%s-%" PRIu64 ".pb.gz", host, start_ns);
	snprintf(path, path_size, "%s/%s", dir, name);
	err = agent_file_write(dfd, name, gz->data, gz->len);
	close(dfd);
	return err;
}
