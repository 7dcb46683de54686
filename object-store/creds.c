/*
 * creds.c - where the credentials come from, as the AWS CLI and SDKs look
 * for them ("Configuration and credential file settings" in the AWS CLI
 * User Guide): the environment first, then a profile of the shared
 * credentials file, an INI file of [profile] sections with
 * aws_access_key_id, aws_secret_access_key and aws_session_token.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CREDS_FILE_CAP ((size_t)1 << 20)

void objstore_creds_release(struct objstore_creds *c)
{
	if (!c)
		return;
	if (c->secret_key)
		explicit_bzero(c->secret_key, strlen(c->secret_key));
	free(c->access_key);
	free(c->secret_key);
	free(c->session_token);
	memset(c, 0, sizeof(*c));
}

/* [s, e) without surrounding blanks. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

static bool span_is(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - s) == n && memcmp(s, word, n) == 0;
}

static int set_span(char **dst, const char *s, const char *e)
{
	char *v = strndup(s, (size_t)(e - s));

	if (!v)
		return -ENOMEM;
	free(*dst);
	*dst = v;
	return 0;
}

/* One "key = value" line of the wanted section. */
static int creds_line(struct objstore_creds *c, const char *s, const char *e)
{
	const char *eq = memchr(s, '=', (size_t)(e - s)), *ke, *vs;

	if (!eq)
		return 0; /* the CLI ignores such lines too */
	ke = eq;
	vs = eq + 1;
	trim(&s, &ke);
	trim(&vs, &e);
	if (span_is(s, ke, "aws_access_key_id"))
		return set_span(&c->access_key, vs, e);
	if (span_is(s, ke, "aws_secret_access_key"))
		return set_span(&c->secret_key, vs, e);
	if (span_is(s, ke, "aws_session_token"))
		return set_span(&c->session_token, vs, e);
	return 0;
}

/* "[name]" (or "[profile name]", as config files write it) is profile. */
static bool section_is(const char *s, const char *e, const char *profile)
{
	if (e - s < 2 || *s != '[' || e[-1] != ']')
		return false;
	s++, e--;
	trim(&s, &e);
	if (e - s > 8 && memcmp(s, "profile ", 8) == 0) {
		s += 8;
		trim(&s, &e);
	}
	return span_is(s, e, profile);
}

int objstore_creds_parse(struct objstore_creds *c, const char *text, size_t len,
			 const char *profile)
{
	const char *p = text, *end = text + len;
	bool in = false, found = false;
	int err = 0;

	memset(c, 0, sizeof(*c));
	while (p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *ls = p;

		p = nl ? nl + 1 : end;
		trim(&ls, &le);
		if (ls == le || *ls == '#' || *ls == ';')
			continue;
		if (*ls == '[') {
			in = section_is(ls, le, profile);
			found |= in;
			continue;
		}
		if (in)
			err = creds_line(c, ls, le);
	}
	if (!err && !found)
		err = -ENOENT;
	if (!err && (!c->access_key || !c->secret_key || !*c->access_key ||
		     !*c->secret_key))
		err = -EINVAL;
	if (err)
		objstore_creds_release(c);
	return err;
}

static int creds_from_env(struct objstore_creds *c)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID");
	const char *sk = getenv("AWS_SECRET_ACCESS_KEY");
	const char *tok = getenv("AWS_SESSION_TOKEN");

	if (!ak || !sk || !*ak || !*sk)
		return -ENOENT;
	memset(c, 0, sizeof(*c));
	c->access_key = strdup(ak);
	c->secret_key = strdup(sk);
	c->session_token = tok && *tok ? strdup(tok) : NULL;
	if (!c->access_key || !c->secret_key || (tok && *tok && !c->session_token)) {
		objstore_creds_release(c);
		return -ENOMEM;
	}
	return 0;
}

static int read_small_file(const char *path, struct ember_buf *b)
{
	char chunk[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0 && !err) {
		if (n < 0 && errno == EINTR)
			continue;
		err = n < 0 ? -errno : ember_buf_append(b, chunk, (size_t)n);
	}
	close(fd);
	return err;
}

static int creds_file_path(char *out, size_t size)
{
	const char *f = getenv("AWS_SHARED_CREDENTIALS_FILE"), *home = getenv("HOME");
	int n;

	if (f && *f)
		n = snprintf(out, size, "%s", f);
	else if (home && *home)
		n = snprintf(out, size, "%s/.aws/credentials", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int objstore_creds_load(struct objstore_creds *c, const char *profile,
			char *msg, size_t msg_size)
{
	struct ember_buf text;
	char path[4096];
	bool read_ok;
	int err;

	if (!profile || !*profile)
		profile = getenv("AWS_PROFILE");
	if (!profile || !*profile)
		profile = "default";
	if (creds_from_env(c) == 0)
		return 0;
	err = creds_file_path(path, sizeof(path));
	if (err) {
		if (msg)
			snprintf(msg, msg_size, "objstore: no credentials: "
				 "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not "
				 "set, and neither is HOME");
		return -ENOENT;
	}
	ember_buf_init(&text, CREDS_FILE_CAP);
	err = read_small_file(path, &text);
	read_ok = err == 0;
	if (read_ok)
		err = objstore_creds_parse(c, text.data ? text.data : "", text.len, profile);
	if (err && msg)
		snprintf(msg, msg_size, "objstore: no credentials: AWS_ACCESS_KEY_ID and "
			 "AWS_SECRET_ACCESS_KEY are not set, and '%s' %s profile '%s'%s%s",
			 path, !read_ok ? "cannot be read for" :
			 err == -EINVAL ? "lacks a key in" : "has no", profile,
			 read_ok ? "" : ": ", read_ok ? "" : strerror(-err));
	if (text.data)
		explicit_bzero(text.data, text.len);
	ember_buf_release(&text);
	return err; /* a file that exists but cannot be read is its own error */
}
