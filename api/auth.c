/*
 * auth.c - the upload token: where it comes from, and checking it.
 *
 * A fresh data directory gets a random 256-bit token in DATA/token (0600),
 * which `ember serve` prints at start; `--token-file` names another.  The
 * token is written whole or not at all (DATA/token.tmp, fsynced, renamed):
 * a crash never leaves a partial token for the next start to read.  An
 * existing token file is trusted only if it is this user's (or root's),
 * nobody else may read or write it (mode 0600 or narrower), and it holds
 * 16 to 127 printable bytes: a start is refused otherwise, with the
 * reason.  The comparison takes the same time wherever the tokens differ.
 */
#include "api_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_token(const char *path, char *out, size_t size)
{
	char buf[256];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = ember_secret_check(fd, path);
	n = err ? 0 : read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		err = -errno;
	close(fd);
	if (err) {
		if (err != -EPERM && err != -EINVAL)
			pr_err("api: cannot read token file '%s': %s", path, strerror(-err));
		return err;
	}
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		n--;
	err = ember_token_check(path, buf, (size_t)n, size < sizeof(buf) ? size : sizeof(buf));
	if (err)
		return err;
	memcpy(out, buf, (size_t)n);
	out[n] = '\0';
	return 0;
}

/*
 * text as the whole content of path, never a part of it: written to
 * PATH.tmp (a leftover of a crash is removed first), fsynced, renamed over
 * path, and the directory fsynced.  0 or the first failure's negative
 * errno, with PATH.tmp removed.
 */
static int write_file_atomic(const char *path, const char *text)
{
	char tmp[4200];
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/* a crash's leftover may have any mode: made anew, never reused */
	if (unlink(tmp) && errno != ENOENT)
		return -errno;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	err = ember_write_all(fd, text, strlen(text));
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	return ember_sync_parent(path);
}

static int write_new_token(const char *path, char *out, size_t size)
{
	uint8_t rnd[32];

	if (size < 2 * sizeof(rnd) + 1 || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	ember_build_id_to_hex(rnd, sizeof(rnd), out);
	return write_file_atomic(path, out);
}

int api_token_setup(const char *data_dir, const char *token_file, char *out,
		    size_t size, bool *created)
{
	char path[4096];
	int err;

	*created = false;
	if (token_file)
		return read_token(token_file, out, size);
	if (snprintf(path, sizeof(path), "%s/token", data_dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	err = read_token(path, out, size);
	if (err != -ENOENT)
		return err;
	err = write_new_token(path, out, size);
	if (!err)
		*created = true;
	else
		pr_warn("api: cannot write '%s': %s", path, strerror(-err));
	return err;
}

bool api_auth_ok(const struct api_server *srv, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);

	if (!h || strncmp(h, "Bearer ", 7) != 0 || !srv->token[0])
		return false;
	h += 7;
	return ember_token_equal(h, strlen(h), srv->token);
}

