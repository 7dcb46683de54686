/*
 * safe_files.c - the agent runs as root among other users' files: every
 * file it writes (the table cache, --output profiles) goes through
 * agent_dir_open() and agent_file_write(), every file of a process it
 * reads through agent_open_mapped() (STYLE.md, "Running as root among
 * other users' files").
 *
 * A directory written to is opened once (O_DIRECTORY | O_NOFOLLOW) and
 * refused unless owned by root or the agent's euid and not writable by
 * group or others, and so is each of its parents up to / (walked by
 * "..", so through the path's symlinks too), but for a sticky parent
 * (/tmp), where others cannot rename what they do not own; files are then made relative to that descriptor under
 * a random temporary name (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600) and
 * renamed into place, so no symlink, planted at the final or a temporary
 * name, redirects a write.  A mapped file is opened without blocking (a
 * FIFO answers at once) and refused unless fstat says it is a regular
 * file; through /proc/PID/root its path resolves inside that root
 * (openat2 RESOLVE_IN_ROOT), so a symlink there cannot lead to the
 * agent's own files.
 */
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TMP_TRIES 8

/* Why a directory (st) is unsafe to write in as root: NULL when it is
 * owned by root or the euid and no one else may write to it (with
 * sticky_ok, a directory others may write to but not rename or remove
 * entries they do not own in, like /tmp: a parent, whose checked child
 * is root's or the euid's). */
const char *agent_dir_unsafe(const struct stat *st, bool sticky_ok)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "owned by another user than root or the agent's";
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (sticky_ok && (st->st_mode & S_ISVTX)))
		return NULL;
	return st->st_mode & S_IWOTH ? "writable by others" : "writable by its group";
}

/* Each parent of the directory open on fd (st), up to /, is safe too: a
 * parent others may write to would let them rename the directory away
 * and put their own in its place.  0, or -EPERM with why. */
static int parents_check(int fd, const struct stat *st, const char *dir, char *why,
			 size_t why_size)
{
	struct stat child = *st, pst;
	int cur = fd, err = 0;

	for (int depth = 0; depth < 256 && !err; depth++) {
		int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		const char *bad;

		if (up < 0 || fstat(up, &pst)) {
			err = -errno;
			snprintf(why, why_size, "cannot check the parents of '%s': %s", dir,
				 strerror(errno));
		} else if (pst.st_dev == child.st_dev && pst.st_ino == child.st_ino) {
			close(up);
			break; /* the root */
		} else if ((bad = agent_dir_unsafe(&pst, true))) {
			char self[64], name[512] = "?";
			ssize_t n;

			snprintf(self, sizeof(self), "/proc/self/fd/%d", up);
			n = readlink(self, name, sizeof(name) - 1);
			name[n > 0 ? n : 1] = '\0';
			snprintf(why, why_size,
				 "refusing directory '%s': its parent '%s' is %s (uid %u, mode %04o), "
				 "so another user could replace it",
				 dir, name, bad, (unsigned)pst.st_uid, (unsigned)(pst.st_mode & 07777));
			err = -EPERM;
		}
		if (cur != fd)
			close(cur);
		cur = up;
		child = pst;
	}
	if (cur != fd && cur >= 0)
		close(cur);
	return err;
}

int agent_dir_open(const char *dir, char *why, size_t why_size)
{
	struct stat st;
	const char *bad = NULL;
	int fd, err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		err = -errno;
	else if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		err = -errno;
	else if (fstat(fd, &st))
		err = -errno, close(fd);
	else if ((bad = agent_dir_unsafe(&st, false)))
		err = -EPERM, close(fd);
	else if ((err = parents_check(fd, &st, dir, why, why_size)))
		return close(fd), err;
	else
		return fd;
	if (err != -EPERM)
		snprintf(why, why_size, "cannot open directory '%s': %s", dir, strerror(-err));
	else
		snprintf(why, why_size, "refusing directory '%s': %s (uid %u, mode %04o)%s", dir,
			 bad ? bad : "unsafe", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			 st.st_mode & (S_IWGRP | S_IWOTH) ? "; chmod go-w it" : "");
	return err;
}

/* A new file dfd/.name.XXXXXXXXXXXXXXXX (0600), its name in tmp. */
static int create_tmp(int dfd, const char *name, char *tmp, size_t tmp_size)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		uint64_t r = 0;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r ^= (uint64_t)ember_monotonic_ns() * 0x9e3779b97f4a7c15ULL + (uint64_t)i;
		snprintf(tmp, tmp_size, ".%s.%016" PRIx64, name, r);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

int agent_file_write(int dfd, const char *name, const void *data, size_t size)
{
	char tmp[512];
	int fd = create_tmp(dfd, name, tmp, sizeof(tmp)), err;

	if (fd < 0)
		return fd;
	err = ember_write_all(fd, data, size);
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dfd, tmp, dfd, name))
		err = -errno;
	if (err)
		unlinkat(dfd, tmp, 0);
	return err;
}

int agent_file_read(int dfd, const char *name, struct ember_buf *b)
{
	char chunk[65536];
	struct stat st;
	ssize_t n = 0;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	while (!err && (n = read(fd, chunk, sizeof(chunk))) > 0)
		err = ember_buf_append(b, chunk, (size_t)n);
	if (!err && n < 0)
		err = -errno;
	close(fd);
	return err;
}

/* /proc/PID/root/PATH: PATH resolved inside the process' root, no symlink
 * leading out of it, no magic link. */
static int open_in_root(const char *open_path, const char *rel)
{
	char root[64];
	struct open_how how = { .flags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int dfd, fd;

	snprintf(root, sizeof(root), "%.*s", (int)(rel - open_path), open_path);
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	fd = fd >= 0 ? fd : -errno;
	close(dfd);
	return fd;
}

int agent_open_mapped(const char *open_path, struct stat *st)
{
	int fd, err = 0, n = 0;

	sscanf(open_path, "/proc/%*u/root%n", &n);
	if (n > 0 && open_path[n] == '/')
		fd = open_in_root(open_path, open_path + n);
	else if ((fd = open(open_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		fd = -errno;
	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		err = -errno;
	else if (!S_ISREG(st->st_mode))
		err = -EINVAL; /* a FIFO, a device, a directory: never read */
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}
