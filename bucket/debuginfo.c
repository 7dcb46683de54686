/*
 * debuginfo.c - the debuginfo store's backend on a bucket (store.h,
 * "a durable backend"; keys: docs/object-storage-layout.md).  Every write
 * is a create-only PUT of a content-addressed or uniquely named key, so
 * replicas never coordinate: a 412 is another replica's identical write.
 * Blobs stream from and to files (objstore_put_fd / _get_fd: multipart
 * above the client's threshold, checksums sent and checked); records and
 * names go through memory, capped.
 */
#include "bucket_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RECORD_CAP (STORE_SHA256_HEX + STORE_RECORD_MAX)
#define NAMES_CAP (64u << 20) /* a names object: far above any DWARF's */

struct bucket_di {
	struct objstore *os;
	char prefix[BUCKET_PREFIX_MAX];
	uint64_t max_blob; /* bytes a fetched blob may have */
};

static void warn_status(const char *what, const char *key, int err,
			const struct objstore_status *st)
{
	pr_warn("bucket: %s '%s': %s", what, key,
		st->msg[0] ? st->msg : objstore_strerror(err));
}

static int put_create_only(struct bucket_di *d, const char *key, const void *data,
			   size_t len, bool *existed)
{
	struct objstore_put_opts po = { .sz = sizeof(po), .flags = OBJSTORE_PUT_CREATE_ONLY };
	struct objstore_status st;
	int err = objstore_put_mem(d->os, key, data, len, &po, existed, &st);

	if (err)
		warn_status("cannot write", key, err, &st);
	return err;
}

static int get_small(struct bucket_di *d, const char *key, size_t cap, void **data,
		     size_t *len)
{
	struct objstore_status st;
	int err = objstore_get_mem(d->os, key, NULL, cap, data, len, &st);

	if (err && err != -ENOENT)
		warn_status("cannot read", key, err, &st);
	return err;
}

/* ---- blobs ------------------------------------------------------------------ */

static int put_blob(void *ctx, const char *sha256, int fd, uint64_t size)
{
	struct bucket_di *d = ctx;
	uint8_t digest[32];
	struct objstore_put_opts po = { .sz = sizeof(po), .flags = OBJSTORE_PUT_CREATE_ONLY,
					.sha256 = digest };
	struct objstore_status st;
	char key[BUCKET_KEY_MAX];
	bool existed;
	int err = ember_hex_decode(sha256, digest, sizeof(digest));

	if (!err)
		err = bucket_key(key, d->prefix, "blobs/%s", sha256);
	if (err)
		return err;
	err = objstore_put_fd(d->os, key, fd, 0, size, &po, &existed, &st);
	if (err)
		warn_status("cannot upload", key, err, &st);
	return err;
}

static int get_blob(void *ctx, const char *sha256, int fd, uint64_t *size)
{
	struct bucket_di *d = ctx;
	struct objstore_object_info info;
	struct objstore_status st;
	char key[BUCKET_KEY_MAX], got[STORE_SHA256_HEX];
	uint64_t written = 0;
	int err = bucket_key(key, d->prefix, "blobs/%s", sha256);

	if (err)
		return err;
	err = objstore_get_fd(d->os, key, NULL, fd, d->max_blob, &info, &written, &st);
	if (err) {
		if (err != -ENOENT)
			warn_status("cannot fetch", key, err, &st);
		return err;
	}
	if (info.has_sha256)
		ember_hex_encode(info.sha256, sizeof(info.sha256), got);
	if (!info.has_sha256 || strcmp(got, sha256) != 0) { /* the client checked
								the bytes against it */
		pr_warn("bucket: '%s' does not carry its sha256: not taken", key);
		return -EBADMSG;
	}
	*size = written;
	return 0;
}

/* ---- candidates ---------------------------------------------------------------- */

/* The names object: each name ended by a NUL.  *out is the caller's. */
static int names_bytes(const char *const *names, size_t n, struct ember_buf *out)
{
	int err = 0;

	ember_buf_init(out, NAMES_CAP);
	for (size_t i = 0; i < n && !err; i++)
		err = ember_buf_append_grow(out, names[i], strlen(names[i]) + 1);
	return err;
}

static int put_candidate(void *ctx, const struct store_artifact *a,
			 const char *const *names, size_t n)
{
	struct bucket_di *d = ctx;
	uint8_t rec[STORE_RECORD_MAX];
	char key[BUCKET_KEY_MAX];
	struct ember_buf nb;
	size_t rlen = store_artifact_encode(a, rec, sizeof(rec));
	bool existed;
	int err = names_bytes(names, n, &nb);

	/* names first: a listed candidate always has its names */
	if (!err)
		err = bucket_key(key, d->prefix, "buildid/%s/names/%s", a->build_id, a->sha256);
	if (!err)
		err = put_create_only(d, key, nb.data, nb.len, &existed);
	ember_buf_release(&nb);
	if (!err)
		err = bucket_key(key, d->prefix, "buildid/%s/cand/%s/%u-%u", a->build_id,
				 a->sha256, a->kinds & 0xff, a->origin ? 1u : 0u);
	if (!err)
		err = put_create_only(d, key, rec, rlen, &existed);
	return err;
}

/* The listing of one build ID's cand/ prefix, merged per sha256: keys
 * come in order, so one candidate's objects are adjacent. */
struct cand_walk {
	size_t skip; /* the prefix's length */
	struct store_backend_cand *v;
	char (*refs)[BUCKET_KEY_MAX];
	size_t n, alloc;
	int err;
};

static int merge_listed(struct cand_walk *w, const struct bucket_cand_name *c, const char *key)
{
	struct store_backend_cand *last = w->n ? &w->v[w->n - 1] : NULL;

	if (last && strcmp(last->sha256, c->sha256) == 0) {
		last->kinds |= c->kinds;
		if (c->origin == STORE_FROM_UPLOAD)
			last->origin = STORE_FROM_UPLOAD;
		return 0;
	}
	if (ember_vec_grow((void **)&w->v, &w->alloc, w->n, sizeof(*w->v)))
		return -ENOMEM;
	if (!(w->refs = realloc(w->refs, w->alloc * sizeof(*w->refs))))
		return -ENOMEM;
	memcpy(w->v[w->n].sha256, c->sha256, STORE_SHA256_HEX);
	w->v[w->n].kinds = c->kinds;
	w->v[w->n].origin = c->origin ? STORE_FROM_UPSTREAM : STORE_FROM_UPLOAD;
	snprintf(w->refs[w->n], BUCKET_KEY_MAX, "%s", key);
	w->n++;
	return 0;
}

static int listed(void *ctx, const struct objstore_list_entry *e)
{
	struct cand_walk *w = ctx;
	struct bucket_cand_name c;
	size_t len = strlen(e->key);

	if (len <= w->skip ||
	    bucket_cand_name_parse(e->key + w->skip, len - w->skip, &c)) {
		pr_warn("bucket: '%s' is not a candidate's name: skipped", e->key);
		return 0;
	}
	return merge_listed(w, &c, e->key);
}

static int list_candidates(void *ctx, const char *build_id,
			   int (*cb)(void *arg, const struct store_backend_cand *c),
			   void *arg)
{
	struct bucket_di *d = ctx;
	struct cand_walk w = { 0 };
	struct objstore_status st;
	char prefix[BUCKET_KEY_MAX];
	int err = bucket_key(prefix, d->prefix, "buildid/%s/cand/", build_id);

	if (err)
		return err;
	w.skip = strlen(prefix);
	err = objstore_list(d->os, prefix, 0, listed, &w, NULL, &st);
	if (err && err != -ENOMEM)
		warn_status("cannot list", prefix, err, &st);
	for (size_t i = 0; i < w.n && !err; i++) {
		w.v[i].ref = w.refs[i];
		err = cb(arg, &w.v[i]);
	}
	free(w.v);
	free(w.refs);
	return err;
}

static int get_candidate(void *ctx, const char *build_id, const char *ref,
			 struct store_artifact *out)
{
	struct bucket_di *d = ctx;
	void *data;
	size_t len;
	int err = get_small(d, ref, RECORD_CAP, &data, &len);

	(void)build_id;
	if (err)
		return err == -ENOENT ? -EIO : err; /* listed a moment ago */
	err = store_artifact_decode(data, len, out);
	free(data);
	if (err)
		pr_warn("bucket: '%s' is not an artifact record", ref);
	return err ? -EIO : 0;
}

static int get_names(void *ctx, const char *build_id, const char *sha256,
		     int (*cb)(void *arg, const char *path), void *arg)
{
	struct bucket_di *d = ctx;
	char key[BUCKET_KEY_MAX];
	void *data;
	size_t len;
	bool bad;
	int err = bucket_key(key, d->prefix, "buildid/%s/names/%s", build_id, sha256);

	if (!err)
		err = get_small(d, key, NAMES_CAP, &data, &len);
	if (err == -ENOENT) {
		pr_warn("bucket: '%s' is missing: the candidate names no sources", key);
		return 0;
	}
	if (err)
		return err;
	err = bucket_names_parse(data, len, cb, arg, &bad);
	free(data);
	if (bad)
		pr_warn("bucket: '%s' has a damaged name: skipped", key);
	return err;
}

/* ---- sources and derived artifacts -------------------------------------------- */

static int keyed_key(struct bucket_di *d, enum store_keyed_class cls, const char *build_id,
		     const char *rest, char key[BUCKET_KEY_MAX])
{
	char h[STORE_SHA256_HEX];

	if (cls == STORE_KEYED_DERIVED)
		return bucket_key(key, d->prefix, "buildid/%s/derived/%s", build_id, rest);
	bucket_sha256_hex(rest, h);
	return bucket_key(key, d->prefix, "buildid/%s/src/%s", build_id, h);
}

static int decode_keyed(const char *key, const uint8_t *p, size_t len,
			struct store_artifact *out)
{
	const size_t sha = STORE_SHA256_HEX - 1;
	struct store_artifact a = { 0 };

	if (len < sha || store_artifact_decode(p + sha, len - sha, &a)) {
		pr_warn("bucket: '%s' is not a keyed record", key);
		return -EIO;
	}
	memcpy(a.sha256, p, sha);
	a.sha256[sha] = '\0';
	if (ember_hex_decode(a.sha256, (uint8_t[32]){ 0 }, 32)) {
		pr_warn("bucket: '%s' names no blob", key);
		return -EIO;
	}
	*out = a;
	return 0;
}

static int get_keyed_at(struct bucket_di *d, const char *key, struct store_artifact *out)
{
	void *data;
	size_t len;
	int err = get_small(d, key, RECORD_CAP, &data, &len);

	if (err)
		return err;
	err = decode_keyed(key, data, len, out);
	free(data);
	return err;
}

static int put_keyed(void *ctx, enum store_keyed_class cls, const char *build_id,
		     const char *rest, struct store_artifact *a)
{
	struct bucket_di *d = ctx;
	uint8_t val[RECORD_CAP];
	char key[BUCKET_KEY_MAX];
	size_t vlen;
	bool existed;
	int err = keyed_key(d, cls, build_id, rest, key);

	if (err)
		return err;
	memcpy(val, a->sha256, STORE_SHA256_HEX - 1);
	vlen = STORE_SHA256_HEX - 1 + store_artifact_encode(a, val + STORE_SHA256_HEX - 1,
							   sizeof(val) - STORE_SHA256_HEX + 1);
	err = put_create_only(d, key, val, vlen, &existed);
	if (!err && existed) /* written once: the first writer's record stands */
		err = get_keyed_at(d, key, a);
	return err;
}

static int get_keyed(void *ctx, enum store_keyed_class cls, const char *build_id,
		     const char *rest, struct store_artifact *out)
{
	struct bucket_di *d = ctx;
	char key[BUCKET_KEY_MAX];
	int err = keyed_key(d, cls, build_id, rest, key);

	return err ? err : get_keyed_at(d, key, out);
}

static void release(void *ctx)
{
	free(ctx);
}

int bucket_store_backend(const struct bucket_opts *opts, struct store_backend *out)
{
	struct bucket_di *d;

	if (!opts || opts->sz < sizeof(*opts) || !opts->os || !opts->prefix ||
	    strlen(opts->prefix) >= BUCKET_PREFIX_MAX)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->os = opts->os;
	d->max_blob = opts->max_blob ? opts->max_blob : (uint64_t)4 << 30;
	snprintf(d->prefix, sizeof(d->prefix), "%s", opts->prefix);
	*out = (struct store_backend){
		.sz = sizeof(*out),
		.ctx = d,
		.refresh_ms = opts->refresh_ms ? opts->refresh_ms : 1000,
		.put_blob = put_blob,
		.get_blob = get_blob,
		.put_candidate = put_candidate,
		.list_candidates = list_candidates,
		.get_candidate = get_candidate,
		.get_names = get_names,
		.put_keyed = put_keyed,
		.get_keyed = get_keyed,
		.release = release,
	};
	return 0;
}

int bucket_cleanup_uploads(struct objstore *os, const char *prefix,
			   unsigned older_than_s, unsigned *aborted)
{
	struct objstore_status st;
	int err = objstore_upload_cleanup(os, prefix, time(NULL) - (time_t)older_than_s,
					  aborted, &st);

	if (err)
		pr_warn("bucket: cannot clean up the uploads under '%s': %s", prefix,
			st.msg[0] ? st.msg : objstore_strerror(err));
	return err;
}
