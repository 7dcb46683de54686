/*
 * auth.c - the upload token: where it comes from, and checking it.
 *
 * A fresh data directory gets a random 256-bit token in DATA/token (0600),
 * which `ember serve` prints at start; `--token-file` names another.  The
 * token is written whole or not at all (DATA/token.tmp, fsynced, renamed):
 * a crash never leaves a partial token for the next start to read.  The
 * comparison takes the same time wherever the tokens differ.
 */
#include "api_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static int read_token(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;
	int err;

	if (!f)
		return -errno;
	n = fread(out, 1, size - 1, f);
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err) {
		pr_warn("api: cannot read token file '%s'", path);
		return err;
	}
	while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
		n--;
	out[n] = '\0';
	if (n == 0) {
		pr_warn("api: token file '%s' is empty", path);
		return -EINVAL;
	}
	return 0;
}

/* write(2) all of data: 0 or the first failure's negative errno. */
static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* fsync the directory of path, so that a rename in it is durable. */
static int sync_parent(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	int fd, err = 0;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

/*
 * text as the whole content of path, never a part of it: written to
 * PATH.tmp (a leftover of a crash is truncated), fsynced, renamed over
 * path, and the directory fsynced.  0 or the first failure's negative
 * errno, with PATH.tmp removed.
 */
static int write_file_atomic(const char *path, const char *text)
{
	char tmp[4200];
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, text, strlen(text));
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
	return sync_parent(path);
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

static bool equal_const_time(const char *a, size_t alen, const char *b, size_t blen)
{
	unsigned diff = alen != blen;

	for (size_t i = 0; i < alen; i++)
		diff |= (unsigned)(a[i] ^ b[i % (blen ? blen : 1)]);
	return diff == 0;
}

bool api_auth_ok(const struct api_server *srv, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);

	if (!h || strncmp(h, "Bearer ", 7) != 0 || !srv->token[0])
		return false;
	h += 7;
	return equal_const_time(h, strlen(h), srv->token, strlen(srv->token));
}

bool api_token_matches(const char *given, size_t len, const char *token)
{
	return token[0] && equal_const_time(given, len, token, strlen(token));
}
