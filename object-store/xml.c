/*
 * xml.c - the S3 answers this client reads (S3 API Reference: Error
 * responses, ListObjectsV2, CreateMultipartUpload, CompleteMultipartUpload,
 * ListMultipartUploads), parsed with expat.
 *
 * These documents come from the network: expat parses them without ever
 * building a tree, a document type declaration (and so any entity) is
 * refused, elements nest at most XML_MAX_DEPTH deep and each text is at
 * most XML_MAX_TEXT bytes; the whole answer is already bounded by the
 * request's capped buffer.  Each parser checks the root element and says
 * what it found instead.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XML_MAX_DEPTH 8
#define XML_MAX_NAME 64
#define XML_MAX_TEXT 4096

/* Called when an element closes: its parent's and its own name, its text
 * (the characters directly inside it), its depth (root: 1).  A negative
 * return stops the parse with that error. */
typedef int (*xml_end_fn)(void *ctx, const char *parent, const char *name,
			  const char *text, unsigned depth);

struct xml_walk {
	XML_Parser p;
	const char *root, *alt_root; /* the accepted root names */
	char stack[XML_MAX_DEPTH][XML_MAX_NAME];
	unsigned depth;
	struct ember_buf text;
	xml_end_fn end;
	void *ctx;
	int err;
	struct ember_diag *d;
	char found_root[XML_MAX_NAME];
};

static void walk_fail(struct xml_walk *w, int err, const char *why, const char *what)
{
	if (!w->err)
		w->err = ember_diag_fail(w->d, err, NULL, "objstore: S3 answer: %s '%.64s'",
					 why, what);
	XML_StopParser(w->p, XML_FALSE);
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	struct xml_walk *w = ud;

	(void)attrs;
	if (w->err)
		return;
	if (w->depth == XML_MAX_DEPTH || strlen(name) >= XML_MAX_NAME)
		return walk_fail(w, -EPROTO, "element nested too deep or named too long",
				 name);
	if (w->depth == 0) {
		snprintf(w->found_root, sizeof(w->found_root), "%s", name);
		if (strcmp(name, w->root) != 0 &&
		    !(w->alt_root && strcmp(name, w->alt_root) == 0))
			return walk_fail(w, -EPROTO, "unexpected root element", name);
	}
	strcpy(w->stack[w->depth++], name);
	ember_buf_reset(&w->text);
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
	struct xml_walk *w = ud;
	const char *parent;
	int rc;

	if (w->err || w->depth == 0)
		return;
	parent = w->depth > 1 ? w->stack[w->depth - 2] : "";
	rc = w->end(w->ctx, parent, name, w->text.data ? w->text.data : "", w->depth);
	w->depth--;
	ember_buf_reset(&w->text);
	if (rc < 0)
		walk_fail(w, rc, "bad value in element", name);
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
	struct xml_walk *w = ud;

	if (w->err || len <= 0)
		return;
	if (ember_buf_append(&w->text, s, (size_t)len) != 0)
		walk_fail(w, -EPROTO, "text too long in element",
			  w->depth ? w->stack[w->depth - 1] : "");
}

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
			       const XML_Char *pubid, int has_internal_subset)
{
	(void)sysid, (void)pubid, (void)has_internal_subset;
	walk_fail(ud, -EPROTO, "document type declarations are refused", name);
}

static int xml_walk_run(const char *xml, size_t len, const char *root,
			const char *alt_root, xml_end_fn end, void *ctx,
			struct ember_diag *d)
{
	struct xml_walk w = { .root = root, .alt_root = alt_root, .end = end,
			      .ctx = ctx, .d = d };
	enum XML_Status st;

	if (len > (size_t)INT32_MAX)
		return EMBER_FAIL(d, -EPROTO, "objstore: S3 answer too large");
	w.p = XML_ParserCreate("UTF-8");
	if (!w.p)
		return -ENOMEM;
	ember_buf_init(&w.text, XML_MAX_TEXT);
	XML_SetUserData(w.p, &w);
	XML_SetElementHandler(w.p, on_start, on_end);
	XML_SetCharacterDataHandler(w.p, on_text);
	XML_SetStartDoctypeDeclHandler(w.p, on_doctype);
	st = XML_Parse(w.p, xml, (int)len, XML_TRUE);
	if (st != XML_STATUS_OK && !w.err)
		w.err = EMBER_FAIL(d, -EPROTO, "objstore: S3 answer is not XML: %s at line %lu",
				   XML_ErrorString(XML_GetErrorCode(w.p)),
				   (unsigned long)XML_GetCurrentLineNumber(w.p));
	if (!w.err && !w.found_root[0])
		w.err = EMBER_FAIL(d, -EPROTO, "objstore: S3 answer has no element");
	XML_ParserFree(w.p);
	ember_buf_release(&w.text);
	return w.err;
}

/* ---- values --------------------------------------------------------------- */

static int copy_text(char *dst, size_t size, const char *text)
{
	size_t n = strlen(text);

	if (n >= size)
		return -EPROTO;
	memcpy(dst, text, n + 1);
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EPROTO;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -EPROTO;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
		*out = s[0] == 't';
		return 0;
	}
	return -EPROTO;
}

static int replace_str(char **dst, const char *text)
{
	char *n = strdup(text);

	if (!n)
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

int objstore_parse_iso8601(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);

	if (!end)
		return -EINVAL;
	if (*end == '.') /* fractional seconds */
		for (end++; *end >= '0' && *end <= '9'; end++)
			;
	if (strcmp(end, "Z") != 0 && strcmp(end, "+00:00") != 0)
		return -EINVAL;
	*out = timegm(&tm);
	return 0;
}

/* ---- Error ---------------------------------------------------------------- */

static int error_end(void *ctx, const char *parent, const char *name, const char *text,
		     unsigned depth)
{
	struct objstore_xml_error *e = ctx;

	if (depth != 2)
		return 0;
	/* Values too long for the struct are cut: they are only reported. */
	if (strcmp(name, "Code") == 0)
		snprintf(e->code, sizeof(e->code), "%s", text);
	else if (strcmp(name, "Message") == 0)
		snprintf(e->message, sizeof(e->message), "%s", text);
	else if (strcmp(name, "RequestId") == 0)
		snprintf(e->request_id, sizeof(e->request_id), "%s", text);
	(void)parent;
	return 0;
}

int objstore_xml_parse_error(const char *xml, size_t len, struct objstore_xml_error *e,
			     struct ember_diag *d)
{
	memset(e, 0, sizeof(*e));
	return xml_walk_run(xml, len, "Error", NULL, error_end, e, d);
}

/* After a page's walk: a truncated page must say where the next starts;
 * then the callback's stop value, if any. */
static int page_finish(int err, bool truncated, const void *marker, int stop,
		       const char *what, struct ember_diag *d)
{
	if (!err && truncated && !marker)
		err = EMBER_FAIL(d, -EPROTO, "objstore: S3 answer: a truncated %s without "
				 "a marker", what);
	return err ? err : stop;
}

/* ---- ListBucketResult ----------------------------------------------------- */

struct list_ctx {
	objstore_list_fn fn;
	void *fn_ctx;
	struct objstore_xml_list *out;
	char key[1025];
	char etag[80];
	uint64_t size;
	bool have_key;
	int stop; /* the callback's nonzero return */
};

static int list_entry_end(struct list_ctx *c, const char *name, const char *text)
{
	if (strcmp(name, "Key") == 0) {
		c->have_key = true;
		return copy_text(c->key, sizeof(c->key), text);
	}
	if (strcmp(name, "Size") == 0)
		return parse_u64(text, &c->size);
	if (strcmp(name, "ETag") == 0)
		snprintf(c->etag, sizeof(c->etag), "%s", text);
	return 0;
}

static int list_contents_done(struct list_ctx *c)
{
	struct objstore_list_entry e = { .key = c->key, .size = c->size, .etag = c->etag };
	int rc = 0;

	if (!c->have_key)
		return -EPROTO;
	c->out->nkeys++;
	if (!c->stop)
		rc = c->fn ? c->fn(c->fn_ctx, &e) : 0;
	if (rc)
		c->stop = rc;
	c->have_key = false;
	c->size = 0;
	c->etag[0] = '\0';
	return 0;
}

static int list_end(void *ctx, const char *parent, const char *name, const char *text,
		    unsigned depth)
{
	struct list_ctx *c = ctx;

	if (depth == 3 && strcmp(parent, "Contents") == 0)
		return list_entry_end(c, name, text);
	if (depth != 2)
		return 0;
	if (strcmp(name, "Contents") == 0)
		return list_contents_done(c);
	if (strcmp(name, "IsTruncated") == 0)
		return parse_bool(text, &c->out->truncated);
	if (strcmp(name, "NextContinuationToken") == 0)
		return replace_str(&c->out->next_token, text);
	return 0;
}

int objstore_xml_parse_list(const char *xml, size_t len, objstore_list_fn fn, void *ctx,
			    struct objstore_xml_list *out, struct ember_diag *d)
{
	struct list_ctx c = { .fn = fn, .fn_ctx = ctx, .out = out };
	int err;

	memset(out, 0, sizeof(*out));
	err = xml_walk_run(xml, len, "ListBucketResult", NULL, list_end, &c, d);
	err = page_finish(err, out->truncated, out->next_token, c.stop, "list", d);
	if (err)
		objstore_xml_list_release(out);
	return err;
}

void objstore_xml_list_release(struct objstore_xml_list *l)
{
	if (!l)
		return;
	free(l->next_token);
	l->next_token = NULL;
}

/* ---- InitiateMultipartUploadResult ---------------------------------------- */

static int initiate_end(void *ctx, const char *parent, const char *name,
			const char *text, unsigned depth)
{
	(void)parent;
	if (depth == 2 && strcmp(name, "UploadId") == 0)
		return *text ? replace_str(ctx, text) : -EPROTO;
	return 0;
}

int objstore_xml_parse_initiate(const char *xml, size_t len, char **upload_id,
				struct ember_diag *d)
{
	char *id = NULL;
	int err = xml_walk_run(xml, len, "InitiateMultipartUploadResult", NULL,
			       initiate_end, &id, d);

	if (!err && !id)
		err = EMBER_FAIL(d, -EPROTO, "objstore: S3 answer: no UploadId");
	if (err) {
		free(id);
		return err;
	}
	*upload_id = id;
	return 0;
}

/* ---- CompleteMultipartUploadResult ---------------------------------------- */

int objstore_xml_parse_complete(const char *xml, size_t len, bool *is_error,
				struct objstore_xml_error *e, struct ember_diag *d)
{
	int err;

	memset(e, 0, sizeof(*e));
	err = xml_walk_run(xml, len, "CompleteMultipartUploadResult", "Error", error_end,
			   e, d);
	if (err)
		return err;
	/* error_end fills Code only under an Error root: a result has none. */
	*is_error = e->code[0] != '\0';
	return 0;
}

/* ---- ListMultipartUploadsResult ------------------------------------------- */

struct uploads_ctx {
	objstore_xml_upload_fn fn;
	void *fn_ctx;
	struct objstore_xml_uploads *out;
	char key[1025];
	char id[512];
	time_t initiated;
	int stop;
};

static int upload_done(struct uploads_ctx *c)
{
	int rc = 0;

	if (!c->key[0] || !c->id[0])
		return -EPROTO;
	if (!c->stop && c->fn)
		rc = c->fn(c->fn_ctx, c->key, c->id, c->initiated);
	if (rc)
		c->stop = rc;
	c->key[0] = c->id[0] = '\0';
	c->initiated = 0;
	return 0;
}

static int uploads_end(void *ctx, const char *parent, const char *name,
		       const char *text, unsigned depth)
{
	struct uploads_ctx *c = ctx;

	if (depth == 3 && strcmp(parent, "Upload") == 0) {
		if (strcmp(name, "Key") == 0)
			return copy_text(c->key, sizeof(c->key), text);
		if (strcmp(name, "UploadId") == 0)
			return copy_text(c->id, sizeof(c->id), text);
		if (strcmp(name, "Initiated") == 0 &&
		    objstore_parse_iso8601(text, &c->initiated) != 0)
			c->initiated = 0; /* unknown: such an upload is kept */
		return 0;
	}
	if (depth != 2)
		return 0;
	if (strcmp(name, "Upload") == 0)
		return upload_done(c);
	if (strcmp(name, "IsTruncated") == 0)
		return parse_bool(text, &c->out->truncated);
	if (strcmp(name, "NextKeyMarker") == 0)
		return replace_str(&c->out->next_key, text);
	if (strcmp(name, "NextUploadIdMarker") == 0)
		return replace_str(&c->out->next_id, text);
	return 0;
}

int objstore_xml_parse_uploads(const char *xml, size_t len, objstore_xml_upload_fn fn,
			       void *ctx, struct objstore_xml_uploads *out,
			       struct ember_diag *d)
{
	struct uploads_ctx c = { .fn = fn, .fn_ctx = ctx, .out = out };
	int err;

	memset(out, 0, sizeof(*out));
	err = xml_walk_run(xml, len, "ListMultipartUploadsResult", NULL, uploads_end, &c, d);
	err = page_finish(err, out->truncated, out->next_key, c.stop, "upload list", d);
	if (err)
		objstore_xml_uploads_release(out);
	return err;
}

void objstore_xml_uploads_release(struct objstore_xml_uploads *u)
{
	if (!u)
		return;
	free(u->next_key);
	free(u->next_id);
	u->next_key = u->next_id = NULL;
}
