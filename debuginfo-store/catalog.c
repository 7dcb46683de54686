/*
 * catalog.c - candidates per build ID, and which one to serve.
 *
 * Every distinct file uploaded under a build ID is kept as a candidate
 * (key A id \0 sha).  A lookup scans the build ID's few candidates and
 * ranks them for what the caller wants; this is what keeps a symtab-only
 * executable from hiding a full DWARF file, whichever came first.
 */
#include "store_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int put_names(struct store_batch *wb, const char *id,
		     const char *const *names, size_t n)
{
	char key[STORE_KEY_MAX];

	for (size_t i = 0; i < n; i++) {
		int klen = store_key_make(key, STORE_TAG_NAMED, id, names[i]);

		if (klen < 0)
			continue; /* a path too long to serve is not recorded */
		store_batch_put(wb, key, (size_t)klen, "", 0);
	}
	return 0;
}

/* The record already stored under the key, merged with a's kinds. */
static int merge_existing(struct store *s, const char *key, size_t klen,
			  struct store_artifact *a, bool *is_new)
{
	struct store_artifact old;
	char *val;
	size_t vlen;
	int err = store_db_get(s, key, klen, &val, &vlen);

	*is_new = err == -ENOENT;
	if (err)
		return err == -ENOENT ? 0 : err;
	err = store_record_decode((const uint8_t *)val, vlen, &old);
	free(val);
	if (err)
		return 0; /* a damaged record is replaced */
	old.kinds |= a->kinds;
	if (a->origin == STORE_FROM_UPLOAD && old.origin == STORE_FROM_UPSTREAM) {
		old.origin = STORE_FROM_UPLOAD; /* uploaded now: never evicted */
		s->upstream_bytes -= old.size;
	}
	memcpy(old.build_id, a->build_id, sizeof(old.build_id));
	memcpy(old.sha256, a->sha256, sizeof(old.sha256));
	*a = old;
	return 0;
}

int store_record_candidate(struct store *s, struct store_artifact *a,
			   const char *const *source_names, size_t n_names,
			   const char *file_id, bool *is_new)
{
	char key[STORE_KEY_MAX];
	uint8_t val[64 + STORE_NAME_MAX];
	struct store_batch wb;
	int klen, err;

	klen = store_key_make(key, STORE_TAG_ARTIFACT, a->build_id, a->sha256);
	if (klen < 0)
		return klen;
	pthread_mutex_lock(&s->write_mu); /* one writer decides "new" */
	err = merge_existing(s, key, (size_t)klen, a, is_new);
	if (!err) /* before the record: no pin outlives better inputs */
		err = store_pins_clear(s, a->build_id);
	if (!err && !(err = store_batch_begin(s, &wb))) {
		put_names(&wb, a->build_id, source_names, n_names);
		if (file_id)
			store_file_id_put(&wb, a, file_id);
		store_batch_put(&wb, key, (size_t)klen, (const char *)val,
				store_record_encode(a, val, sizeof(val)));
		err = store_batch_commit(&wb);
	}
	if (!err && *is_new) {
		s->n_artifacts++;
		s->blob_bytes += a->size;
		if (a->origin == STORE_FROM_UPSTREAM)
			s->upstream_bytes += a->size;
	}
	if (!err)
		s->generation++;
	pthread_mutex_unlock(&s->write_mu);
	return err;
}

int store_add_artifact(struct store *s, struct store_blob *b,
		       const struct store_artifact *in,
		       const char *const *source_names, size_t n_names,
		       bool *is_new)
{
	struct store_artifact a = *in;
	char key[STORE_KEY_MAX], fid[STORE_FILE_ID_HEX];
	bool existed, has_fid = a.flags & STORE_HAS_TEXT;
	int err;

	err = store_key_make(key, STORE_TAG_ARTIFACT, a.build_id, a.sha256);
	if (err >= 0 && has_fid) /* what the eBPF profiler would call it */
		err = store_file_id_fd(store_blob_fd(b), a.size, fid);
	if (err >= 0) /* the backend first: acknowledged only once it holds both */
		err = store_backend_put_candidate(s, b, &a, source_names, n_names);
	if (err < 0) {
		store_blob_discard(b);
		return err;
	}
	err = store_blob_commit(s, b, s->blobs_fd, &existed);
	if (err)
		return err;
	return store_record_candidate(s, &a, source_names, n_names, has_fid ? fid : NULL,
				      is_new);
}

uint64_t store_generation(struct store *s)
{
	return s->generation;
}

/* Higher is better; negative: not a candidate for want. */
static int64_t rank(const struct store_artifact *a, enum store_want want)
{
	unsigned f = a->flags;

	switch (want) {
	case STORE_WANT_DEBUGINFO:
		if (!(f & STORE_HAS_DWARF))
			return -1;
		return (f & STORE_HAS_SYMTAB) ? 2 : 1;
	case STORE_WANT_EXECUTABLE:
		if (!(f & STORE_HAS_TEXT))
			return -1;
		return (a->kinds & STORE_KIND_EXECUTABLE) ? 2 : 1;
	case STORE_WANT_SYMBOLS:
		return (f & STORE_HAS_DWARF) ? 8 : (f & STORE_HAS_SYMTAB) ? 4 :
		       (f & STORE_HAS_GOPCLNTAB) ? 2 : (f & STORE_HAS_DYNSYM) ? 1 : -1;
	}
	return -1;
}

/* Ties go to the bigger file (more debug info), then the older upload. */
static bool better(const struct store_artifact *a, int64_t ra,
		   const struct store_artifact *b, int64_t rb)
{
	if (ra != rb)
		return ra > rb;
	if (a->size != b->size)
		return a->size > b->size;
	return a->mtime < b->mtime;
}

static int decode_candidate(const char *key, size_t klen, const char *val,
			    size_t vlen, struct store_artifact *a)
{
	size_t idlen = strlen(key + 1);
	size_t shalen = klen - 2 - idlen;

	if (shalen != STORE_SHA256_HEX - 1 || idlen >= STORE_BUILD_ID_HEX ||
	    store_record_decode((const uint8_t *)val, vlen, a))
		return -EINVAL;
	memcpy(a->build_id, key + 1, idlen + 1);
	memcpy(a->sha256, key + 2 + idlen, shalen);
	a->sha256[shalen] = '\0';
	return 0;
}

struct best_walk {
	enum store_want want;
	struct store_artifact *best;
	int64_t best_rank;
};

static int consider(const char *key, size_t klen, const char *val, size_t vlen,
		    void *arg)
{
	struct best_walk *w = arg;
	struct store_artifact a;
	int64_t r;

	if (decode_candidate(key, klen, val, vlen, &a))
		return 0;
	r = rank(&a, w->want);
	if (r >= 0 && (w->best_rank < 0 || better(&a, r, w->best, w->best_rank))) {
		*w->best = a;
		w->best_rank = r;
	}
	return 0;
}

static int find_best_local(struct store *s, const char *build_id,
			   enum store_want want, struct store_artifact *out)
{
	char prefix[STORE_KEY_MAX];
	struct store_artifact best;
	struct best_walk w = { want, &best, -1 };
	int plen = store_key_make(prefix, STORE_TAG_ARTIFACT, build_id, NULL);
	int err;

	if (plen < 0)
		return -ENOENT; /* an ID too long to be stored is not */
	err = store_db_scan(s, prefix, (size_t)plen, consider, &w);
	if (err)
		return err; /* a walk cut short ranks nothing */
	if (w.best_rank < 0)
		return -ENOENT;
	*out = best;
	return 0;
}

int store_find_best(struct store *s, const char *build_id,
		    enum store_want want, struct store_artifact *out)
{
	bool listed;
	int err = store_backend_refresh(s, build_id, false, &listed);

	if (!err)
		err = find_best_local(s, build_id, want, out);
	if (err == -ENOENT && !listed && s->has_backend) { /* never a stale "none" */
		err = store_backend_refresh(s, build_id, true, &listed);
		if (!err)
			err = find_best_local(s, build_id, want, out);
	}
	return err;
}

struct list_walk {
	int (*cb)(const struct store_artifact *a, void *arg);
	void *arg;
};

static int list_one(const char *key, size_t klen, const char *val, size_t vlen,
		    void *arg)
{
	struct list_walk *w = arg;
	struct store_artifact a;

	if (decode_candidate(key, klen, val, vlen, &a))
		return 0;
	return w->cb(&a, w->arg);
}

int store_list(struct store *s, const char *build_id,
	       int (*cb)(const struct store_artifact *a, void *arg), void *arg)
{
	char prefix[STORE_KEY_MAX];
	struct list_walk w = { cb, arg };
	int plen = store_key_make(prefix, STORE_TAG_ARTIFACT, build_id, NULL);
	bool listed;
	int err;

	if (plen < 0)
		return 0;
	err = store_backend_refresh(s, build_id, false, &listed);
	return err ? err : store_db_scan(s, prefix, (size_t)plen, list_one, &w);
}

/* The best candidate for want into *a: true when found, false when there
 * is none (-ENOENT), or the error in *err. */
static bool find_one(struct store *s, const char *build_id, enum store_want want,
		     struct store_artifact *a, int *err)
{
	int ret = store_find_best(s, build_id, want, a);

	if (ret && ret != -ENOENT)
		*err = ret;
	return ret == 0;
}

int store_find_pair(struct store *s, const char *build_id, struct store_pair *out)
{
	struct store_pair p = { 0 };
	int err = 0;

	p.has_exe = find_one(s, build_id, STORE_WANT_EXECUTABLE, &p.exe, &err);
	if (!err)
		p.has_dbg = find_one(s, build_id, STORE_WANT_DEBUGINFO, &p.dbg, &err);
	if (err)
		return err;
	if (p.has_exe && p.has_dbg && strcmp(p.exe.sha256, p.dbg.sha256) == 0)
		p.has_dbg = false; /* one unstripped file */
	*out = p;
	return 0;
}

int store_list_all(struct store *s, const char *after,
		   int (*cb)(const struct store_artifact *a, void *arg), void *arg)
{
	char start[STORE_KEY_MAX];
	struct list_walk w = { cb, arg };
	const char prefix[1] = { STORE_TAG_ARTIFACT };
	int slen = 1;

	start[0] = STORE_TAG_ARTIFACT;
	if (after && *after) { /* past every key of `after`: A after \1 */
		slen = store_key_make(start, STORE_TAG_ARTIFACT, after, NULL);
		if (slen < 0)
			return -EINVAL;
		start[slen - 1] = '\1';
	}
	return store_db_scan_from(s, prefix, 1, start, (size_t)slen, list_one, &w);
}
