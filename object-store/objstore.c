/*
 * objstore.c - the handle: the endpoint and addressing style turned into
 * the URL prefix and Host header every request uses, the region, the
 * credentials, the retry and timeout policy, and the HTTP client's share
 * (httpc.h) that keeps connections alive across requests and threads.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PART_SIZE_DEFAULT ((size_t)8 << 20)
#define PART_SIZE_MIN ((size_t)5 << 20) /* S3: every part but the last */
#define MULTIPART_THRESHOLD_DEFAULT ((size_t)16 << 20)

static const char *env_region(void)
{
	const char *r = getenv("AWS_REGION");

	if (!r || !*r)
		r = getenv("AWS_DEFAULT_REGION");
	return r && *r ? r : "us-east-1";
}

/* Bucket names that are valid DNS labels can go in the host name. */
static bool bucket_name_ok(const char *b, bool virtual_host)
{
	size_t n = strlen(b);

	if (n < 3 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = b[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		      (c == '.' && !virtual_host) || (c == '_' && !virtual_host)))
			return false;
	}
	return true;
}

/* scheme_host, host and path_prefix from the endpoint and addressing. */
static int addressing_init(struct objstore *s, const struct objstore_opts *o,
			   char *msg, size_t msg_size)
{
	char aws[128];
	const char *ep = o->endpoint, *hs, *he;
	enum objstore_addressing a = o->addressing;
	size_t scheme_len;

	if (!ep) {
		snprintf(aws, sizeof(aws), "https://s3.%s.amazonaws.com", s->region);
		ep = aws;
		if (a == OBJSTORE_ADDRESSING_AUTO)
			a = OBJSTORE_ADDRESSING_VIRTUAL_HOST;
	}
	if (a == OBJSTORE_ADDRESSING_AUTO)
		a = OBJSTORE_ADDRESSING_PATH;
	if (strncmp(ep, "http://", 7) == 0)
		scheme_len = 7;
	else if (strncmp(ep, "https://", 8) == 0)
		scheme_len = 8;
	else
		goto bad;
	hs = ep + scheme_len;
	he = hs + strcspn(hs, "/?#");
	if (he == hs || (*he && strcmp(he, "/") != 0))
		goto bad; /* an endpoint is scheme://host[:port] */
	if (!bucket_name_ok(s->bucket, a == OBJSTORE_ADDRESSING_VIRTUAL_HOST)) {
		snprintf(msg, msg_size, "objstore: bucket '%s': not a valid %sbucket name",
			 s->bucket, a == OBJSTORE_ADDRESSING_VIRTUAL_HOST ?
			 "virtual-host " : "");
		return -EINVAL;
	}
	if (a == OBJSTORE_ADDRESSING_VIRTUAL_HOST) {
		if (asprintf(&s->host, "%s.%.*s", s->bucket, (int)(he - hs), hs) < 0 ||
		    asprintf(&s->scheme_host, "%.*s%s", (int)scheme_len, ep, s->host) < 0 ||
		    !(s->path_prefix = strdup("")))
			return -ENOMEM;
		return 0;
	}
	if (asprintf(&s->host, "%.*s", (int)(he - hs), hs) < 0 ||
	    asprintf(&s->scheme_host, "%.*s", (int)(he - ep), ep) < 0 ||
	    asprintf(&s->path_prefix, "/%s", s->bucket) < 0)
		return -ENOMEM;
	return 0;
bad:
	snprintf(msg, msg_size, "objstore: endpoint '%s': expected http[s]://host[:port]", ep);
	return -EINVAL;
}

static int creds_init(struct objstore *s, const struct objstore_opts *o, char *msg,
		      size_t msg_size)
{
	const struct objstore_creds *c = o->creds;
	int err;

	if (!c)
		err = objstore_creds_load(&s->creds, o->profile, msg, msg_size);
	else if (!c->access_key || !c->secret_key)
		err = -EINVAL;
	else {
		s->creds.access_key = strdup(c->access_key);
		s->creds.secret_key = strdup(c->secret_key);
		s->creds.session_token = c->session_token ? strdup(c->session_token) : NULL;
		err = !s->creds.access_key || !s->creds.secret_key ||
		      (c->session_token && !s->creds.session_token) ? -ENOMEM : 0;
	}
	if (!err && strlen(s->creds.secret_key) > 200) {
		snprintf(msg, msg_size, "objstore: secret key longer than 200 bytes");
		err = -EINVAL;
	}
	return err;
}

static void policy_init(struct objstore *s, const struct objstore_opts *o)
{
	s->max_attempts = o->max_attempts ? o->max_attempts : 5;
	s->retry_base_ms = o->retry_base_ms ? o->retry_base_ms : 100;
	s->retry_max_ms = o->retry_max_ms ? o->retry_max_ms : 5000;
	s->connect_timeout_ms = o->connect_timeout_ms ? o->connect_timeout_ms : 5000;
	s->stall_timeout_ms = o->stall_timeout_ms ? o->stall_timeout_ms : 30000;
	s->part_size = o->part_size ? o->part_size : PART_SIZE_DEFAULT;
	s->multipart_threshold = o->multipart_threshold ? o->multipart_threshold :
				 MULTIPART_THRESHOLD_DEFAULT;
	s->part_concurrency = o->part_concurrency ? o->part_concurrency : 2;
	s->max_list_pages = o->max_list_pages ? o->max_list_pages : 10000;
	s->max_list_keys = o->max_list_keys ? o->max_list_keys : 1000000;
	s->clock = o->clock;
	s->clock_ctx = o->clock_ctx;
}

struct objstore *objstore_new(const struct objstore_opts *o, int *err, char *msg,
			      size_t msg_size)
{
	char scratch[1];
	struct objstore *s;
	int e;

	if (!msg) {
		msg = scratch;
		msg_size = sizeof(scratch);
	}
	msg[0] = '\0';
	if (!o || o->sz < sizeof(*o) || !o->bucket || !*o->bucket) {
		snprintf(msg, msg_size, "objstore: no bucket given");
		*err = -EINVAL;
		return NULL;
	}
	if (o->part_size && o->part_size < PART_SIZE_MIN) {
		snprintf(msg, msg_size, "objstore: part size %zu below S3's 5 MiB",
			 o->part_size);
		*err = -EINVAL;
		return NULL;
	}
	if (httpc_load()) {
		snprintf(msg, msg_size, "objstore: cannot load libcurl (%s)",
			 HTTPC_SONAME ", Debian package libcurl3-gnutls");
		*err = -ENOSYS;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		*err = -ENOMEM;
		return NULL;
	}
	policy_init(s, o);
	s->bucket = strdup(o->bucket);
	s->region = strdup(o->region && *o->region ? o->region : env_region());
	e = !s->bucket || !s->region ? -ENOMEM : 0;
	if (!e)
		e = addressing_init(s, o, msg, msg_size);
	if (!e)
		e = creds_init(s, o, msg, msg_size);
	if (!e)
		e = httpc_share_new(&s->share);
	if (e) {
		objstore_free(s);
		*err = e;
		return NULL;
	}
	return s;
}

void objstore_free(struct objstore *s)
{
	if (!s)
		return;
	httpc_share_free(s->share);
	objstore_creds_release(&s->creds);
	free(s->scheme_host);
	free(s->host);
	free(s->path_prefix);
	free(s->bucket);
	free(s->region);
	free(s);
}
