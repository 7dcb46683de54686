/*
 * sigv4.c - AWS Signature Version 4 (AWS General Reference, "Signing AWS
 * API requests"; S3's variant in the S3 API Reference, "Authenticating
 * Requests"): the canonical request, the string to sign, the derived
 * signing key and the Authorization header, or the same as query
 * parameters for a presigned URL.
 *
 * S3's rules, which differ from the generic ones: the path is encoded
 * once and never normalized (no dot-segment removal, "//" kept).
 * Checked against the AWS SigV4 test suite (tests/objstore/sigv4/).
 */
#include "objstore_internal.h"

#include <errno.h>
#include <nettle/hmac.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIGV4_ALGORITHM "AWS4-HMAC-SHA256"

void sigv4_amz_date(time_t t, char out[17])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

static bool uri_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
}

int sigv4_uri_encode(struct ember_buf *b, const char *s, size_t n, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[3] = { '%', hex[c >> 4], hex[c & 15] };
		int err;

		if (uri_unreserved(c) || (keep_slash && c == '/'))
			err = ember_buf_putc(b, (char)c);
		else
			err = ember_buf_append(b, esc, 3);
		if (err)
			return err;
	}
	return 0;
}

/* ---- canonical query ------------------------------------------------------ */

struct enc_param {
	char *name, *value;
};

static int enc_param_cmp(const void *a, const void *b)
{
	const struct enc_param *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->value, y->value);
}

static char *encode_dup(const char *s, int *err)
{
	struct ember_buf b;

	ember_buf_init(&b, (size_t)1 << 20);
	*err = sigv4_uri_encode(&b, s, strlen(s), false);
	if (!*err)
		*err = ember_buf_reserve(&b, 0); /* an empty string still allocates */
	if (!*err)
		b.data[b.len] = '\0';
	if (*err) {
		ember_buf_release(&b);
		return NULL;
	}
	return b.data;
}

static int canonical_query(const struct sigv4_param *p, size_t n,
			   const struct sigv4_param *extra, size_t nextra,
			   struct ember_buf *out)
{
	size_t total = n + nextra;
	struct enc_param *e = calloc(total ? total : 1, sizeof(*e));
	int err = e ? 0 : -ENOMEM;

	for (size_t i = 0; i < total && !err; i++) {
		const struct sigv4_param *src = i < n ? &p[i] : &extra[i - n];

		e[i].name = encode_dup(src->name, &err);
		if (!err)
			e[i].value = encode_dup(src->value ? src->value : "", &err);
	}
	if (!err)
		qsort(e, total, sizeof(*e), enc_param_cmp);
	for (size_t i = 0; i < total && !err; i++)
		err = ember_buf_appendf(out, "%s%s=%s", i ? "&" : "", e[i].name,
					e[i].value);
	for (size_t i = 0; e && i < total; i++) {
		free(e[i].name);
		free(e[i].value);
	}
	free(e);
	return err;
}

/* ---- canonical headers ---------------------------------------------------- */

struct canon_header {
	char *name;  /* lowercase */
	char *value; /* trimmed, runs of whitespace as one space */
	size_t order;
};

static int canon_header_cmp(const void *a, const void *b)
{
	const struct canon_header *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static char *normalize_value(const char *v)
{
	size_t n = strlen(v), o = 0;
	char *out = malloc(n + 1);
	bool pending_space = false;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (is_space(v[i])) {
			pending_space = o > 0;
			continue;
		}
		if (pending_space)
			out[o++] = ' ';
		pending_space = false;
		out[o++] = v[i];
	}
	out[o] = '\0';
	return out;
}

static char *lower_dup(const char *s)
{
	char *d = strdup(s);

	for (char *p = d; p && *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return d;
}

static int canonical_headers(const struct sigv4_header *h, size_t n,
			     struct ember_buf *out, struct ember_buf *signed_hdrs)
{
	struct canon_header *c = calloc(n ? n : 1, sizeof(*c));
	int err = c ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && !err; i++) {
		c[i].name = lower_dup(h[i].name);
		c[i].value = normalize_value(h[i].value ? h[i].value : "");
		c[i].order = i;
		if (!c[i].name || !c[i].value)
			err = -ENOMEM;
	}
	if (!err)
		qsort(c, n, sizeof(*c), canon_header_cmp);
	for (size_t i = 0; i < n && !err; i++) {
		bool same = i > 0 && strcmp(c[i].name, c[i - 1].name) == 0;

		if (same) /* a repeated header: values joined with ',' in order */
			err = ember_buf_appendf(out, ",%s", c[i].value);
		else
			err = ember_buf_appendf(out, "%s%s:%s", i ? "\n" : "",
						c[i].name, c[i].value);
		if (!err && !same)
			err = ember_buf_appendf(signed_hdrs, "%s%s",
						signed_hdrs->len ? ";" : "", c[i].name);
	}
	if (!err && n)
		err = ember_buf_putc(out, '\n');
	for (size_t i = 0; c && i < n; i++) {
		free(c[i].name);
		free(c[i].value);
	}
	free(c);
	return err;
}

int sigv4_canonical_request(const struct sigv4_request *r,
			    const struct sigv4_param *extra, size_t nextra,
			    struct ember_buf *out, struct ember_buf *signed_headers)
{
	const char *path = r->path && r->path[0] ? r->path : "/";
	int err;

	err = ember_buf_appendf(out, "%s\n", r->method);
	if (!err)
		err = sigv4_uri_encode(out, path, strlen(path), true);
	if (!err)
		err = ember_buf_putc(out, '\n');
	if (!err)
		err = canonical_query(r->params, r->nparams, extra, nextra, out);
	if (!err)
		err = ember_buf_putc(out, '\n');
	if (!err)
		err = canonical_headers(r->headers, r->nheaders, out, signed_headers);
	if (!err)
		err = ember_buf_appendf(out, "\n%s\n%s", signed_headers->data ?
					signed_headers->data : "", r->payload_hash);
	return err;
}

/* ---- string to sign, key, signature --------------------------------------- */

static void sha256_hex(const void *data, size_t len, char hex[65])
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, len, data);
	sha256_digest(&ctx, sizeof(d), d);
	ember_hex_encode(d, sizeof(d), hex);
}

static int scope_append(const struct sigv4_scope *sc, struct ember_buf *b)
{
	return ember_buf_appendf(b, "%.8s/%s/%s/aws4_request", sc->amz_date,
				 sc->region, sc->service);
}

int sigv4_string_to_sign(const struct sigv4_scope *sc, const char *canonical,
			 size_t len, struct ember_buf *out)
{
	char hash[65];
	int err;

	sha256_hex(canonical, len, hash);
	err = ember_buf_appendf(out, SIGV4_ALGORITHM "\n%s\n", sc->amz_date);
	if (!err)
		err = scope_append(sc, out);
	if (!err)
		err = ember_buf_appendf(out, "\n%s", hash);
	return err;
}

static void hmac(const uint8_t *key, size_t klen, const void *msg, size_t mlen,
		 uint8_t out[SHA256_DIGEST_SIZE])
{
	struct hmac_sha256_ctx ctx;

	hmac_sha256_set_key(&ctx, klen, key);
	hmac_sha256_update(&ctx, mlen, msg);
	hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

void sigv4_signature(const struct sigv4_scope *sc, const char *sts, size_t len,
		     char hex[65])
{
	uint8_t k[SHA256_DIGEST_SIZE], sig[SHA256_DIGEST_SIZE];
	char secret[256];
	int n = snprintf(secret, sizeof(secret), "AWS4%s", sc->secret_key);

	if (n < 0 || (size_t)n >= sizeof(secret))
		n = (int)sizeof(secret) - 1; /* objstore_new refuses such keys */
	hmac((const uint8_t *)secret, (size_t)n, sc->amz_date, 8, k);
	hmac(k, sizeof(k), sc->region, strlen(sc->region), k);
	hmac(k, sizeof(k), sc->service, strlen(sc->service), k);
	hmac(k, sizeof(k), "aws4_request", 12, k);
	hmac(k, sizeof(k), sts, len, sig);
	ember_hex_encode(sig, sizeof(sig), hex);
	explicit_bzero(secret, sizeof(secret));
	explicit_bzero(k, sizeof(k));
}

/* Canonical request -> string to sign -> signature, for either form. */
static int sign(const struct sigv4_scope *sc, const struct sigv4_request *r,
		const struct sigv4_param *extra, size_t nextra,
		struct ember_buf *signed_headers, char sig[65])
{
	struct ember_buf creq, sts;
	int err;

	ember_buf_init(&creq, (size_t)1 << 20);
	ember_buf_init(&sts, 4096);
	err = sigv4_canonical_request(r, extra, nextra, &creq, signed_headers);
	if (!err)
		err = sigv4_string_to_sign(sc, creq.data, creq.len, &sts);
	if (!err)
		sigv4_signature(sc, sts.data, sts.len, sig);
	ember_buf_release(&creq);
	ember_buf_release(&sts);
	return err;
}

int sigv4_authorization(const struct sigv4_scope *sc, const struct sigv4_request *r,
			struct ember_buf *out)
{
	struct ember_buf signed_headers;
	char sig[65];
	int err;

	ember_buf_init(&signed_headers, 4096);
	err = sign(sc, r, NULL, 0, &signed_headers, sig);
	if (!err)
		err = ember_buf_appendf(out, SIGV4_ALGORITHM " Credential=%s/",
					sc->access_key);
	if (!err)
		err = scope_append(sc, out);
	if (!err)
		err = ember_buf_appendf(out, ", SignedHeaders=%s, Signature=%s",
					signed_headers.data, sig);
	ember_buf_release(&signed_headers);
	return err;
}

/* The signed header list is part of what is signed: computed first from
 * the headers alone. */
static int signed_header_list(const struct sigv4_request *r, struct ember_buf *out)
{
	struct ember_buf scratch;
	int err;

	ember_buf_init(&scratch, (size_t)1 << 20);
	err = canonical_headers(r->headers, r->nheaders, &scratch, out);
	ember_buf_release(&scratch);
	return err;
}

int sigv4_presign_query(const struct sigv4_scope *sc, const struct sigv4_request *r,
			unsigned expires, struct ember_buf *out)
{
	struct ember_buf cred, hdrs, ignored;
	char exp[16], sig[65];
	struct sigv4_param extra[6];
	size_t n = 0;
	int err;

	ember_buf_init(&cred, 1024);
	ember_buf_init(&hdrs, 4096);
	ember_buf_init(&ignored, 4096);
	snprintf(exp, sizeof(exp), "%u", expires);
	err = ember_buf_appendf(&cred, "%s/", sc->access_key);
	if (!err)
		err = scope_append(sc, &cred);
	if (!err)
		err = signed_header_list(r, &hdrs);
	if (err)
		goto out;
	extra[n++] = (struct sigv4_param){ "X-Amz-Algorithm", SIGV4_ALGORITHM };
	extra[n++] = (struct sigv4_param){ "X-Amz-Credential", cred.data };
	extra[n++] = (struct sigv4_param){ "X-Amz-Date", sc->amz_date };
	extra[n++] = (struct sigv4_param){ "X-Amz-Expires", exp };
	extra[n++] = (struct sigv4_param){ "X-Amz-SignedHeaders", hdrs.data };
	if (sc->session_token)
		extra[n++] = (struct sigv4_param){ "X-Amz-Security-Token",
						   sc->session_token };
	err = sign(sc, r, extra, n, &ignored, sig);
	for (size_t i = 0; i < n && !err; i++) {
		err = ember_buf_appendf(out, "%s%s=", i ? "&" : "", extra[i].name);
		if (!err)
			err = sigv4_uri_encode(out, extra[i].value,
					       strlen(extra[i].value), false);
	}
	if (!err)
		err = ember_buf_appendf(out, "&X-Amz-Signature=%s", sig);
out:
	ember_buf_release(&cred);
	ember_buf_release(&hdrs);
	ember_buf_release(&ignored);
	return err;
}
