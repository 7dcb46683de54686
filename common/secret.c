/*
 * secret.c - token files and tokens: what the upload token's file
 * (api/auth.c) and the tenants' tokens file (profile-service/
 * tenant_tokens.c) are held to, and comparing a token without telling
 * by the time taken how much of it was right.
 */
#include "common.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ember_secret_check(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		pr_err("token file '%s' is not a regular file", path);
		return -EINVAL;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		pr_err("token file '%s' belongs to uid %u, not to this user (%u)", path,
		       (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & 077) {
		pr_err("token file '%s' is open to other users (mode %04o): chmod 600 it", path,
		       (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int ember_token_check(const char *path, const char *tok, size_t n, size_t size)
{
	if (n >= size) {
		pr_err("token in '%s' is longer than %zu bytes", path, size - 1);
		return -EINVAL;
	}
	if (n < EMBER_TOKEN_MIN) {
		pr_err("token in '%s' is %s (fewer than %d bytes)", path, n ? "too short" : "empty",
		       EMBER_TOKEN_MIN);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (tok[i] <= ' ' || tok[i] > '~') {
			pr_err("token in '%s' holds a byte that is not printable ASCII (at %zu)",
			       path, i);
			return -EINVAL;
		}
	return 0;
}

bool ember_token_equal(const char *given, size_t len, const char *token)
{
	size_t tlen = strlen(token);
	unsigned diff = len != tlen;

	for (size_t i = 0; i < len; i++)
		diff |= (unsigned)(given[i] ^ token[i % (tlen ? tlen : 1)]);
	return tlen && diff == 0;
}
