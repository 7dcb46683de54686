/*
 * sync_dir.c - making a directory entry durable: a rename or a create is
 * on disk only once the directory holding it is fsynced (the crash-safety
 * order of docs/store-format.md, the token file).
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int ember_sync_dir(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

int ember_sync_parent(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');

	if (!slash)
		return ember_sync_dir(AT_FDCWD, ".");
	if (slash == path)
		return ember_sync_dir(AT_FDCWD, "/");
	if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	return ember_sync_dir(AT_FDCWD, dir);
}
