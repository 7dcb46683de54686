/*
 * source_archive.c - PUT /api/v1/artifacts/ID/sources: a tar of sources.
 *
 * `ember upload --sources` sends the files a build's DWARF names as a tar
 * (optionally gzip or zstd compressed), each member at its absolute path
 * without the leading '/'.  libarchive reads it from the sealed upload
 * blob.  A member is stored only if the DWARF of a stored candidate names
 * its canonical path; others are skipped and listed in the answer.  The
 * total unpacked size is capped like the upload itself.
 */
#include "api_internal.h"
#include "inspect.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SKIPPED_LISTED 20

struct unpack {
	struct store *s;
	const char *build_id;
	uint64_t budget;          /* unpacked bytes still allowed */
	size_t stored, duplicates, skipped;
	json_t *skipped_names;
	char error[256];
};

static int member_path(const char *name, char *out, size_t size)
{
	while (name[0] == '.' && name[1] == '/')
		name += 2;
	while (name[0] == '/')
		name++;
	if (!name[0] || snprintf(out, size, "/%s", name) >= (int)size)
		return -EINVAL;
	return inspect_path_canonical(out);
}

static int copy_member(struct unpack *u, struct archive *ar, struct store_blob *b)
{
	char buf[1 << 16];

	for (;;) {
		la_ssize_t n = archive_read_data(ar, buf, sizeof(buf));

		if (n == 0)
			return 0;
		if (n < 0) {
			snprintf(u->error, sizeof(u->error), "bad archive: %s",
				 archive_error_string(ar));
			return -EINVAL;
		}
		if ((uint64_t)n > u->budget) {
			snprintf(u->error, sizeof(u->error), "sources larger than the upload limit");
			return -E2BIG;
		}
		u->budget -= (uint64_t)n;
		int err = store_blob_write(b, buf, (size_t)n);

		if (err) {
			snprintf(u->error, sizeof(u->error), "cannot store a source file: %s",
				 strerror(-err));
			return err;
		}
	}
}

static int store_member(struct unpack *u, struct archive *ar, const char *path)
{
	char sha[STORE_SHA256_HEX];
	struct store_blob *b;
	uint64_t size;
	bool is_new;
	int err = store_blob_begin(u->s, &b);

	if (err)
		return err;
	err = copy_member(u, ar, b);
	if (!err)
		err = store_blob_seal(b, sha, &size);
	if (err) {
		store_blob_discard(b);
		return err;
	}
	err = store_add_source(u->s, b, u->build_id, path, sha, size, STORE_FROM_UPLOAD, &is_new);
	if (!err && is_new)
		u->stored++;
	else if (!err)
		u->duplicates++;
	return err;
}

static void skip_member(struct unpack *u, const char *path)
{
	if (u->skipped++ < SKIPPED_LISTED)
		json_array_append_new(u->skipped_names, json_string(path));
}

/* One regular member: stored when the DWARF names its path, else skipped. */
static int unpack_member(struct unpack *u, struct archive *ar, struct archive_entry *e)
{
	char path[4096];
	int err = member_path(archive_entry_pathname(e), path, sizeof(path))
			  ? -ENOENT : store_source_named(u->s, u->build_id, path);

	if (!err)
		return store_member(u, ar, path);
	if (err == -ENOENT) {
		skip_member(u, archive_entry_pathname(e));
		return 0;
	}
	snprintf(u->error, sizeof(u->error), "cannot read the store: %s", strerror(-err));
	return err;
}

static int unpack_all(struct unpack *u, struct archive *ar)
{
	struct archive_entry *e;
	int r, err = 0;

	while (!err && (r = archive_read_next_header(ar, &e)) == ARCHIVE_OK)
		if (archive_entry_filetype(e) == AE_IFREG)
			err = unpack_member(u, ar, e);
	if (!err && r != ARCHIVE_EOF) {
		snprintf(u->error, sizeof(u->error), "bad archive: %s",
			 archive_error_string(ar));
		err = -EINVAL;
	}
	return err;
}

/* The archive is rejected (-E2BIG: over the cap, -EINVAL: not a tar we
 * can read), or we could not keep it (another error: 507 or 503). */
enum ember_errkind api_sources_error_kind(int err)
{
	switch (err) {
	case -E2BIG:
		return EMBER_ERRK_TOO_LARGE;
	case -EINVAL:
		return EMBER_ERRK_UNPROCESSABLE;
	default:
		return ember_errkind_of_errno(err);
	}
}

static void fail(const struct unpack *u, int err, struct api_ingest_result *res)
{
	enum ember_errkind kind = api_sources_error_kind(err);
	bool ours = kind != EMBER_ERRK_TOO_LARGE && kind != EMBER_ERRK_UNPROCESSABLE;

	res->status = api_status_of_kind(kind);
	res->reject = kind == EMBER_ERRK_TOO_LARGE ? API_REJECT_TOO_LARGE
		      : !ours ? API_REJECT_OTHER
		      : kind == EMBER_ERRK_NO_SPACE ? API_REJECT_NO_SPACE
						    : API_REJECT_STORE;
	res->err = ours ? err : -EINVAL;
	snprintf(res->message, sizeof(res->message), "%s: %s\n", ours ? "not stored" : "rejected",
		 u->error[0] ? u->error : strerror(-err));
}

static void answer(struct unpack *u, int err, struct api_ingest_result *res)
{
	json_t *o;
	char *s;

	if (err) {
		fail(u, err, res);
		return;
	}
	o = json_pack("{s:s, s:I, s:I, s:I, s:O}", "build_id", u->build_id,
		      "stored", (json_int_t)u->stored,
		      "duplicates", (json_int_t)u->duplicates,
		      "skipped", (json_int_t)u->skipped, "skipped_names", u->skipped_names);
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	res->status = u->stored ? MHD_HTTP_CREATED : MHD_HTTP_OK;
	res->is_new = u->stored > 0;
	snprintf(res->message, sizeof(res->message), "%s\n", s ? s : "{}");
	free(s);
	json_decref(o);
}

void api_ingest_sources(struct store *s, struct store_blob *b, const char *build_id,
			uint64_t max_bytes, struct api_ingest_result *res)
{
	struct unpack u = { .s = s, .build_id = build_id, .budget = max_bytes,
			    .skipped_names = json_array() };
	struct archive *ar = archive_read_new();
	char sha[STORE_SHA256_HEX];
	struct store_artifact dbg;
	uint64_t size;
	int err = store_find_best(s, build_id, STORE_WANT_DEBUGINFO, &dbg);

	if (err == -ENOENT) {
		res->status = api_status_of_kind(EMBER_ERRK_CONFLICT);
		res->reject = API_REJECT_OTHER;
		res->err = -EINVAL;
		snprintf(res->message, sizeof(res->message),
			 "rejected: no debuginfo stored for %s: upload it before its sources\n",
			 build_id);
		goto out;
	}
	if (!err)
		err = ar && u.skipped_names ? store_blob_seal(b, sha, &size) : -ENOMEM;
	if (!err) {
		archive_read_support_format_tar(ar);
		archive_read_support_filter_gzip(ar);
		archive_read_support_filter_zstd(ar);
		lseek(store_blob_fd(b), 0, SEEK_SET);
		err = archive_read_open_fd(ar, store_blob_fd(b), 1 << 16) == ARCHIVE_OK
			      ? unpack_all(&u, ar) : -EINVAL;
		if (err == -EINVAL && !u.error[0])
			snprintf(u.error, sizeof(u.error), "not a tar archive: %s",
				 archive_error_string(ar));
	}
	answer(&u, err, res);
out:
	archive_read_free(ar);
	json_decref(u.skipped_names);
	store_blob_discard(b);
}
