/*
 * tenant_tokens.c - `ember serve --tokens FILE` (issue 27): write tokens
 * of one tenant each.  FILE holds one "TOKEN TENANT" a line (blank lines
 * and lines starting with '#' skipped); it is a secret as the upload
 * token's file is (this user's, nobody else may read or write it) and
 * each token follows the same rule (16 to 127 printable bytes), each
 * tenant the tenant ID rule (ember_tenant_valid).  A token of the file
 * may write profiles (never upload debug info) of its tenant only: a
 * write naming another tenant in X-Scope-OrgID is refused 403, a write
 * naming none is its tenant's (api/profile_tenant.c).  Tokens are compared
 * with every entry in constant time, so a refusal says nothing of how
 * much of a token was right.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOKENS_MAX_BYTES (1 << 20)	/* the file */
#define TOKENS_MAX 10000		/* its entries */

struct profsvc_token {
	char token[EMBER_TOKEN_MAX];
	char tenant[PROFSVC_TENANT_MAX + 1];
};

struct profsvc_tokens {
	size_t n;
	struct profsvc_token v[];
};

/* The file's bytes (NUL-terminated, caller frees) once checked a secret. */
static int read_secret(const char *path, char **out)
{
	char *buf = malloc(TOKENS_MAX_BYTES + 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	size_t n = 0;
	ssize_t r = 1;

	if (fd < 0 || !buf)
		err = fd < 0 ? -errno : -ENOMEM;
	err = err ? err : ember_secret_check(fd, path);
	while (!err && r > 0 && n <= TOKENS_MAX_BYTES) {
		r = read(fd, buf + n, TOKENS_MAX_BYTES + 1 - n);
		err = r < 0 ? -errno : 0;
		n += r > 0 ? (size_t)r : 0;
		if (n > TOKENS_MAX_BYTES)
			err = -EFBIG;
	}
	if (fd >= 0)
		close(fd);
	if (err) {
		pr_err("profiles: cannot read the tokens file '%s': %s", path, strerror(-err));
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

/* What parse_line fills. */
struct tokens_parse {
	const char *path;
	struct profsvc_tokens *t;	/* room for a line each */
};

/* Line no of the file ("TOKEN TENANT", cut at blanks) into the next
 * entry: 0, -E2BIG or -EINVAL, said. */
static int parse_line(void *arg, unsigned no, char *line)
{
	struct tokens_parse *p = arg;
	struct profsvc_token *e = &p->t->v[p->t->n];
	char *save, *tok = strtok_r(line, " \t\r", &save);
	char *tenant = strtok_r(NULL, " \t\r", &save), *rest = strtok_r(NULL, " \t\r", &save);

	if (p->t->n == TOKENS_MAX) {
		pr_err("profiles: tokens file '%s': more than %d tokens", p->path, TOKENS_MAX);
		return -E2BIG;
	}
	if (!tok || !tenant || rest) {
		pr_err("profiles: tokens file '%s', line %u: want 'TOKEN TENANT'", p->path, no);
		return -EINVAL;
	}
	if (!ember_tenant_valid(tenant)) {
		pr_err("profiles: tokens file '%s', line %u: '%.160s' is not a tenant ID (at most %d "
		       "characters of a-z A-Z 0-9 !-_.*'(), not . or ..)",
		       p->path, no, tenant, PROFSVC_TENANT_MAX);
		return -EINVAL;
	}
	EMBER_FORWARD_IF_ERROR(ember_token_check(p->path, tok, strlen(tok), sizeof(e->token)));
	memcpy(e->token, tok, strlen(tok) + 1);
	memcpy(e->tenant, tenant, strlen(tenant) + 1);
	p->t->n++;
	return 0;
}

int profsvc_tokens_parse(const char *text, size_t len, const char *path,
			struct profsvc_tokens **out)
{
	struct tokens_parse p = { .path = path };
	size_t lines = ember_config_line_count(text, len);
	char *copy;
	int err;

	if (len > TOKENS_MAX_BYTES || memchr(text, '\0', len)) {
		pr_err("profiles: tokens file '%s': %s", path,
		       len > TOKENS_MAX_BYTES ? "larger than 1 MiB" : "a NUL byte: not text");
		return -EINVAL;
	}
	lines = lines < TOKENS_MAX ? lines : TOKENS_MAX;
	copy = strndup(text, len);
	p.t = calloc(1, sizeof(*p.t) + lines * sizeof(p.t->v[0]));
	err = p.t && copy ? ember_config_lines(copy, parse_line, &p) : -ENOMEM;
	if (copy)
		explicit_bzero(copy, len);
	free(copy);
	if (err) {
		profsvc_tokens_free(p.t);
		return err;
	}
	*out = p.t;
	return 0;
}

int profsvc_tokens_read(const char *path, struct profsvc_tokens **out)
{
	char *text;
	int err = read_secret(path, &text);
	size_t n;

	if (err)
		return err;
	n = strlen(text);
	err = profsvc_tokens_parse(text, n, path, out);
	explicit_bzero(text, n);
	free(text);
	return err;
}

void profsvc_tokens_free(struct profsvc_tokens *t)
{
	if (t)
		explicit_bzero(t->v, t->n * sizeof(t->v[0]));
	free(t);
}

const char *profsvc_tokens_find(const struct profsvc_tokens *t, const char *given,
				   size_t len)
{
	const char *found = NULL;

	for (size_t i = 0; t && i < t->n; i++) /* every entry compared */
		if (ember_token_equal(given, len, t->v[i].token) && !found)
			found = t->v[i].tenant;
	return found;
}
