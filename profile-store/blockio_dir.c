/*
 * blockio_dir.c - the block storage of one local directory (the other
 * struct pstore_blockio is a bucket's, bucket/profiles.c).  A put
 * writes "NAME.tmp.PID.N", fsyncs it, renames it to NAME and fsyncs the
 * directory, so a crash leaves either the whole object or a temporary
 * file, which the next pstore_blockio_dir() removes.  Names are relative,
 * made of [A-Za-z0-9._-] and '/' (no "..", no leading '/').
 */
#include "pstore.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct dirio {
	int root;
	atomic_uint seq;
};

static bool name_ok(const char *name)
{
	if (!*name || *name == '/' || strstr(name, "..") || strlen(name) > 200)
		return false;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_' || *p == '/'))
			return false;
	return true;
}

/* The directory part of name ("" when none) opened below the root,
 * created if mk. */
static int open_parent(struct dirio *io, const char *name, bool mk, int *out)
{
	const char *slash = strrchr(name, '/');
	char dir[256];
	int fd;

	if (!slash) {
		*out = dup(io->root);
		return *out < 0 ? -errno : 0;
	}
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
	for (char *p = dir; mk && (p = strchr(p, '/')); *p++ = '/') {
		*p = '\0'; /* the folders above it first (index/PART/SEQ) */
		if (mkdirat(io->root, dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	if (mk && mkdirat(io->root, dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(io->root, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*out = fd;
	return 0;
}

/* data as NAME in dfd: written to a temporary file, fsynced, then moved
 * to NAME (renamed; create_only: linked, -EEXIST when NAME is there), the
 * directory fsynced. */
static int write_named(struct dirio *io, int dfd, const char *base, const void *data,
		       size_t len, bool create_only)
{
	char tmp[300];
	int fd, err;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", base, (int)getpid(),
		 atomic_fetch_add(&io->seq, 1));
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	err = fd < 0 ? -errno : ember_write_all(fd, data, len);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (fd >= 0 && close(fd) < 0 && !err)
		err = -errno;
	if (!err && (create_only ? linkat(dfd, tmp, dfd, base, 0)
				 : renameat(dfd, tmp, dfd, base)) < 0)
		err = -errno;
	if (fd >= 0 && (err || create_only))
		unlinkat(dfd, tmp, 0);
	if (!err && fsync(dfd) < 0)
		err = -errno;
	return err;
}

enum dir_mode { DIR_CONTENT, DIR_CREATE_ONLY, DIR_REPLACE };

/* CONTENT: an existing NAME is taken as holding data; CREATE_ONLY: it
 * is -EEXIST; REPLACE: it is replaced. */
static int dir_write(void *ctx, const char *name, const void *data, size_t len,
		     enum dir_mode mode)
{
	struct dirio *io = ctx;
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	int dfd, err;

	if (!name_ok(name))
		return -EINVAL;
	EMBER_FORWARD_IF_ERROR(open_parent(io, name, true, &dfd));
	if (mode == DIR_CONTENT && faccessat(dfd, base, F_OK, 0) == 0)
		err = 0; /* named by content: already there */
	else
		err = write_named(io, dfd, base, data, len, mode == DIR_CREATE_ONLY);
	close(dfd);
	return err;
}

static int dir_put(void *ctx, const char *name, const void *data, size_t len)
{
	return dir_write(ctx, name, data, len, DIR_CONTENT);
}

/* Create-only (two stores on one directory, as the tests of a shared
 * store run them): -EEXIST when NAME is there. */
static int dir_claim(void *ctx, const char *name, const void *data, size_t len)
{
	return dir_write(ctx, name, data, len, DIR_CREATE_ONLY);
}

/* A writer's lease: replaced whatever is there. */
static int dir_renew(void *ctx, const char *name, const void *data, size_t len)
{
	return dir_write(ctx, name, data, len, DIR_REPLACE);
}

static int dir_mtime(void *ctx, const char *name, int64_t *sec)
{
	struct dirio *io = ctx;
	struct stat st;

	if (!name_ok(name))
		return -EINVAL;
	if (fstatat(io->root, name, &st, 0) < 0)
		return -errno;
	*sec = (int64_t)st.st_mtime;
	return 0;
}

static int read_range(int fd, uint64_t off, size_t len, struct ember_buf *out)
{
	EMBER_FORWARD_IF_ERROR(ember_buf_reserve(out, len));
	while (len) {
		ssize_t n = pread(fd, out->data + out->len, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		out->len += (size_t)n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	out->data[out->len] = '\0';
	return 0;
}

static int dir_get(void *ctx, const char *name, uint64_t off, size_t len, struct ember_buf *out)
{
	struct dirio *io = ctx;
	struct stat st;
	int fd, err;

	if (!name_ok(name))
		return -EINVAL;
	fd = openat(io->root, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fstat(fd, &st) < 0 ? -errno : 0;
	if (!err && off > (uint64_t)st.st_size)
		off = (uint64_t)st.st_size;
	if (!err && (!len || len > (uint64_t)st.st_size - off))
		len = (size_t)((uint64_t)st.st_size - off);
	if (!err)
		err = read_range(fd, off, len, out);
	close(fd);
	return err;
}

static bool is_tmp(const char *name)
{
	return strstr(name, ".tmp.") != NULL;
}

/* The files of directory dname (below the root) whose names start with
 * prefix, and those of its subdirectories (index/PART/SEQ). */
static int list_dir(struct dirio *io, const char *dname, const char *prefix,
		    int (*fn)(void *arg, const char *name, uint64_t size), void *arg, int depth)
{
	char full[512];
	struct dirent *e;
	DIR *d;
	int fd, err = 0;

	fd = openat(io->root, *dname ? dname : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (!err && (errno = 0, e = readdir(d))) {
		struct stat st;
		size_t n;

		snprintf(full, sizeof(full), "%s%s%s", dname, *dname ? "/" : "", e->d_name);
		n = strlen(full) < strlen(prefix) ? strlen(full) : strlen(prefix);
		if (e->d_name[0] == '.' || is_tmp(e->d_name) || strncmp(full, prefix, n) ||
		    fstatat(fd, e->d_name, &st, 0) < 0)
			continue;
		if (S_ISREG(st.st_mode) && strlen(full) >= strlen(prefix))
			err = fn(arg, full, (uint64_t)st.st_size);
		else if (S_ISDIR(st.st_mode) && depth < 4)
			err = list_dir(io, full, prefix, fn, arg, depth + 1);
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	return err;
}

static int dir_list(void *ctx, const char *prefix,
		    int (*fn)(void *arg, const char *name, uint64_t size), void *arg)
{
	const char *slash = strrchr(prefix, '/');
	char dname[256];

	snprintf(dname, sizeof(dname), "%.*s", slash ? (int)(slash - prefix) : 0, prefix);
	return list_dir(ctx, dname, prefix, fn, arg, 0);
}

static int dir_del(void *ctx, const char *name)
{
	struct dirio *io = ctx;
	int dfd, err = 0;

	if (!name_ok(name))
		return -EINVAL;
	if (unlinkat(io->root, name, 0) < 0)
		return -errno;
	if (open_parent(io, name, false, &dfd) == 0) {
		if (fsync(dfd) < 0)
			err = -errno;
		close(dfd);
	}
	return err;
}

static void dir_release(void *ctx)
{
	struct dirio *io = ctx;

	if (!io)
		return;
	close(io->root);
	free(io);
}

/* Temporary files a crash left in DIR/blocks. */
static void remove_tmp(int root)
{
	int fd = openat(root, "blocks", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (is_tmp(e->d_name))
			unlinkat(fd, e->d_name, 0);
	closedir(d);
}

int pstore_blockio_dir(const char *dir, struct pstore_blockio *out)
{
	struct dirio *io;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (io->root < 0) {
		int err = -errno;

		free(io);
		return err;
	}
	remove_tmp(io->root);
	*out = (struct pstore_blockio){ .sz = sizeof(*out), .ctx = io, .put = dir_put,
					.get = dir_get, .list = dir_list, .del = dir_del,
					.release = dir_release, .claim = dir_claim,
					.renew = dir_renew, .mtime = dir_mtime };
	return 0;
}
