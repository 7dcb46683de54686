/*
 * auth.c - the upload token: where it comes from, and checking it.
 *
 * A fresh data directory gets a random 256-bit token in DATA/token (0600),
 * which `ember serve` prints at start; `--token-file` names another.  The
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

	if (!f)
		return -errno;
	n = fread(out, 1, size - 1, f);
	fclose(f);
	while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
		n--;
	out[n] = '\0';
	if (n == 0) {
		pr_warn("api: token file '%s' is empty", path);
		return -EINVAL;
	}
	return 0;
}

static int write_new_token(const char *path, char *out, size_t size)
{
	uint8_t rnd[32];
	int fd, err = 0;

	if (size < 2 * sizeof(rnd) + 1 || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	ember_build_id_to_hex(rnd, sizeof(rnd), out);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, out, strlen(out)) != (ssize_t)strlen(out) || fsync(fd))
		err = -EIO;
	close(fd);
	return err;
}

int api_token_setup(const char *data_dir, const char *token_file, char *out,
		    size_t size, bool *created)
{
	char path[4096];
	int err;

	*created = false;
	if (token_file)
		return read_token(token_file, out, size);
	snprintf(path, sizeof(path), "%s/token", data_dir);
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
