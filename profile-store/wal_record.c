/*
 * wal_record.c - one pstore_append as a log record: the time and
 * duration the store gave the profile, the caller's labels and
 * unresolved build IDs, the size of the body as received, and the
 * profile itself: the body as the caller received it (raw, gzip or zstd)
 * when it gives it, else raw profile.proto from wire's encoder; a replay
 * decodes it and runs exactly the ingest the append ran.  Layout (varints, strings
 * length-prefixed): version 1, time, duration, input_bytes, labels,
 * unresolved, pprof.
 */
#include "pstore_bytes.h"
#include "pstore_wal.h"

#define RECORD_VERSION 1
#define STR_MAX 65536
#define LIST_MAX 4096

int pstore_record_encode(const struct pstore_append_opts *o, int64_t time, int64_t duration,
		     const void *body, size_t body_len, const struct pprof_profile *p,
		     struct ember_buf *out)
{
	struct ember_buf pb;
	int err;

	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(out, RECORD_VERSION));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(out, time));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(out, duration));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(out, o ? o->input_bytes : 0)); /* the caller's, for the limit */
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(out, o ? o->n_labels : 0));
	for (size_t i = 0; o && i < o->n_labels; i++) {
		EMBER_FORWARD_IF_ERROR(ember_buf_put_lenbytes(out, o->labels[i].name, strlen(o->labels[i].name)));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_lenbytes(out, o->labels[i].value, strlen(o->labels[i].value)));
	}
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(out, o ? o->n_unresolved : 0));
	for (size_t i = 0; o && i < o->n_unresolved; i++) {
		const char *b = o->unresolved[i].build_id ? o->unresolved[i].build_id : "";
		const char *r = o->unresolved[i].reason ? o->unresolved[i].reason : "";

		EMBER_FORWARD_IF_ERROR(ember_buf_put_lenbytes(out, b, strlen(b)));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_lenbytes(out, r, strlen(r)));
	}
	if (body)
		return ember_buf_put_lenbytes(out, body, body_len);
	ember_buf_init(&pb, PS_WAL_RECORD_MAX);
	err = pprof_encode(p, false, &pb);
	if (!err)
		err = ember_buf_put_lenbytes(out, pb.data ? pb.data : "", pb.len);
	ember_buf_release(&pb);
	return err;
}

static int get_cstr(const uint8_t **p, const uint8_t *end, char **out, struct ember_diag *d)
{
	const char *s;
	size_t len;

	EMBER_FAIL_IF(pstore_get_str(p, end, STR_MAX, &s, &len) || memchr(s, '\0', len), d,
		      -PSTORE_ERR_CORRUPT, "log record: bad string");
	*out = strndup(s, len);
	return *out ? 0 : -ENOMEM;
}

static int get_pairs(const uint8_t **p, const uint8_t *end, struct pstore_record *r, bool labels,
		     struct ember_diag *d)
{
	uint32_t n;

	EMBER_FAIL_IF(pstore_get_u32max(p, end, LIST_MAX, &n), d, -PSTORE_ERR_CORRUPT,
		      "log record: bad count");
	for (uint32_t i = 0; i < n; i++) {
		char *a = NULL, *b = NULL;
		int err = get_cstr(p, end, &a, d);

		if (!err)
			err = get_cstr(p, end, &b, d);
		if (!err && labels)
			err = EMBER_VEC_APPEND(&r->labels, ((struct pstore_label){ a, b }));
		else if (!err)
			err = EMBER_VEC_APPEND(&r->unresolved, ((struct pstore_unresolved){ a, b }));
		if (err) {
			free(a);
			free(b);
			return err;
		}
	}
	return 0;
}

int pstore_record_decode(const uint8_t *data, size_t len, struct pstore_record *r,
			 struct ember_diag *d)
{
	const uint8_t *p = data, *end = data + len;
	uint64_t version, input;
	const char *pb;
	int err;

	memset(r, 0, sizeof(*r));
	EMBER_FAIL_IF(ember_cur_uleb(&p, end, &version) || version != RECORD_VERSION, d,
		      -PSTORE_ERR_CORRUPT, "log record: unknown version");
	EMBER_FAIL_IF(ember_cur_zigzag(&p, end, &r->time) ||
			      ember_cur_zigzag(&p, end, &r->duration) ||
			      ember_cur_uleb(&p, end, &input),
		      d, -PSTORE_ERR_CORRUPT, "log record: truncated");
	r->input_bytes = (size_t)input;
	err = get_pairs(&p, end, r, true, d);
	if (!err)
		err = get_pairs(&p, end, r, false, d);
	if (!err && pstore_get_str(&p, end, PS_WAL_RECORD_MAX, &pb, &r->pprof_len))
		err = EMBER_FAIL(d, -PSTORE_ERR_CORRUPT, "log record: truncated profile");
	if (!err && p != end)
		err = EMBER_FAIL(d, -PSTORE_ERR_CORRUPT, "log record: %zu bytes after the profile",
			      (size_t)(end - p));
	if (err) {
		pstore_record_release(r);
		return err;
	}
	r->pprof = (const uint8_t *)pb;
	return 0;
}

void pstore_record_release(struct pstore_record *r)
{
	for (size_t i = 0; i < r->labels.n; i++) {
		free((char *)r->labels.v[i].name);
		free((char *)r->labels.v[i].value);
	}
	for (size_t i = 0; i < r->unresolved.n; i++) {
		free((char *)r->unresolved.v[i].build_id);
		free((char *)r->unresolved.v[i].reason);
	}
	EMBER_VEC_FREE(&r->labels);
	EMBER_VEC_FREE(&r->unresolved);
}
