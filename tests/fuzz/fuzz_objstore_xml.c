/*
 * fuzz_objstore_xml.c - libFuzzer target for the S3 answers the object
 * store client parses (object-store/xml.c): error documents,
 * ListObjectsV2 pages, CreateMultipartUpload, CompleteMultipartUpload and
 * ListMultipartUploads results, and the credentials file
 * (object-store/creds.c).  Every input goes to every parser; each must
 * accept or reject it with -EPROTO (or, for the credentials file,
 * -ENOENT/-EINVAL), never crash, and what it accepts must hold together:
 * a truncated list has a continuation token, an upload has an id.  Seeds
 * in corpus/objstore_xml/ (answers of a real radosgw).
 *
 * Built with -fsanitize=fuzzer under EMBER_FUZZ=ON; the plain build links
 * it with replay.c.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_entry(void *ctx, const struct objstore_list_entry *e)
{
	(void)ctx;
	if (!e->key || !e->etag || strlen(e->key) > 1024)
		abort();
	return 0;
}

static int check_upload(void *ctx, const char *key, const char *id, time_t t)
{
	(void)ctx, (void)t;
	if (!*key || !*id)
		abort();
	return 0;
}

static void expect_rejection(int err)
{
	if (err != 0 && err != -EPROTO && err != -ENOMEM)
		abort();
}

static void fuzz_xml(const char *text, size_t size)
{
	struct objstore_xml_error e;
	struct objstore_xml_list l;
	struct objstore_xml_uploads u;
	char msg[256], *id = NULL;
	struct ember_diag d = ember_diag_make(msg, sizeof(msg));
	bool is_error;
	int err;

	expect_rejection(objstore_xml_parse_error(text, size, &e, &d));
	err = objstore_xml_parse_list(text, size, check_entry, NULL, &l, &d);
	expect_rejection(err);
	if (!err && l.truncated && !l.next_token)
		abort();
	objstore_xml_list_release(&l);
	err = objstore_xml_parse_initiate(text, size, &id, &d);
	expect_rejection(err);
	if (!err && (!id || !*id))
		abort();
	free(id);
	expect_rejection(objstore_xml_parse_complete(text, size, &is_error, &e, &d));
	err = objstore_xml_parse_uploads(text, size, check_upload, NULL, &u, &d);
	expect_rejection(err);
	if (!err && u.truncated && !u.next_key)
		abort();
	objstore_xml_uploads_release(&u);
}

static void fuzz_creds(const char *text, size_t size)
{
	struct objstore_creds c;
	int err = objstore_creds_parse(&c, text, size, "default");

	if (err == 0 && (!c.access_key || !*c.access_key || !c.secret_key || !*c.secret_key))
		abort();
	if (err != 0 && err != -ENOENT && err != -EINVAL && err != -ENOMEM)
		abort();
	objstore_creds_release(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	fuzz_xml(text, size);
	fuzz_creds(text, size);
	free(text);
	return 0;
}
