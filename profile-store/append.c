/*
 * append.c - pstore_append: a decoded profile stored durably.
 *   1. check the limits and the caller's labels; give the profile its
 *      time (time_nanos, else the caller's arrival time);
 *   2. encode its log record (outside any lock);
 *   3. under the store's rotation lock (shared: a segment and its head
 *      change together, never under an append), intern it into the
 *      active head as pending profiles, one per sample-label set, its
 *      new series admitted all at once against max_series first, or the
 *      profile refused with none of them counted;
 *   4. append the record to the segment and wait for the sync; a shared
 *      store also writes it as a log object (wal_bucket.c), and a failure
 *      of either fails the append (the record may still be replayed from
 *      the local segment at the next open, as after a failed sync);
 *   5. mark the profiles visible (or dead when the log failed).
 * A replay at open runs steps 1 and 3 on the recovered records
 * (pstore_append_apply), visible at once.
 * pstore_append_check runs step 1 alone: it is how a client (ember-agent
 * at start) asks whether its labels would be taken.
 */
#include "pstore_compact.h"
#include "pstore_head.h"
#include "pstore_index.h"
#include "pstore_series.h"
#include "pstore_wal.h"

struct labelsets {
	struct pstore_labels caller;     /* sorted, checked, __name__ included */
	struct pstore_labels *groups;    /* per ingest group */
	size_t n;
};

static void labelsets_release(struct labelsets *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		EMBER_VEC_FREE(&ls->groups[i]);
	free(ls->groups);
	EMBER_VEC_FREE(&ls->caller);
}

/* The caller's labels with empty values dropped, plus __name__. */
static int caller_labels(const struct pstore_append_opts *o, const struct pprof_profile *p,
			 const struct pstore_limits *lim, struct labelsets *ls,
			 struct ember_diag *d)
{
	const struct pstore_label *l = EMBER_OPTS_GET(o, labels, NULL);
	size_t n = l ? EMBER_OPTS_GET(o, n_labels, 0) : 0;
	bool named = false;

	for (size_t i = 0; i < n; i++) {
		EMBER_FAIL_IF(!l[i].name || !l[i].value, d, -PSTORE_ERR_LABEL,
			      "label %zu: NULL", i);
		if (!*l[i].value)
			continue;
		named |= strcmp(l[i].name, "__name__") == 0;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ls->caller, l[i]));
	}
	if (!named)
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ls->caller, ((struct pstore_label){ "__name__",
									pmodel_profile_name(p) })));
	return pstore_labels_check(ls->caller.v, ls->caller.n, lim, d);
}

static bool has_name(const struct pstore_labels *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return true;
	return false;
}

/* Group g's labels: the caller's, and the sample labels it does not set. */
static int group_labels(struct labelsets *ls, const struct pstore_group *g,
			const struct pstore_limits *lim, struct pstore_labels *out,
			struct ember_diag *d)
{
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(out, ls->caller.n + g->labels.n));
	ember_memcpy(out->v, ls->caller.v, ls->caller.n * sizeof(*out->v));
	out->n = ls->caller.n;
	for (size_t i = 0; i < g->labels.n; i++)
		if (!has_name(&ls->caller, g->labels.v[i].name))
			out->v[out->n++] = g->labels.v[i];
	return pstore_labels_check(out->v, out->n, lim, d);
}

static int column_types(const struct pprof_profile *p, const char *name,
			const char *(**out)[5])
{
	const pprof_message_t *m = pprof_message(p);
	const char *(*t)[5] = calloc(m->n_sample_type + 1, sizeof(*t));
	const char *pt = m->period_type ? pprof_string(p, m->period_type->type) : "";
	const char *pu = m->period_type ? pprof_string(p, m->period_type->unit) : "";

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_sample_type; i++) {
		t[i][0] = name;
		t[i][1] = pprof_string(p, m->sample_type[i]->type);
		t[i][2] = pprof_string(p, m->sample_type[i]->unit);
		t[i][3] = pt;
		t[i][4] = pu;
	}
	*out = t;
	return 0;
}

static const char *name_label(const struct pstore_labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, "__name__") == 0)
			return l->v[i].value;
	return "profile";
}

/* The store's series limit (a replay admits everything it logged). */
struct gate_ctx {
	struct pstore *s;
	bool replay;
};

static int admit(void *ctx, const uint64_t *keys, size_t n, struct ember_diag *d)
{
	struct gate_ctx *g = ctx;
	struct pstore *s = g->s;
	size_t max = g->replay ? SIZE_MAX : __atomic_load_n(&s->lim.max_series, __ATOMIC_RELAXED), held, fresh;
	int err;

	pthread_mutex_lock(&s->mu);
	held = pstore_keys_count(s->keys);
	err = pstore_keys_add_all(&s->keys, keys, n, max, &fresh);
	pthread_mutex_unlock(&s->mu);
	EMBER_FAIL_IF(err == -PSTORE_ERR_SERIES_LIMIT, d, err,
		      "the store holds %zu series, its limit %zu: no room for the profile's "
		      "%zu new series", held, max, fresh);
	return err;
}

static void give_back(void *ctx, const uint64_t *keys, size_t n)
{
	struct pstore *s = ((struct gate_ctx *)ctx)->s;

	pthread_mutex_lock(&s->mu);
	pstore_keys_remove_all(s->keys, keys, n);
	pthread_mutex_unlock(&s->mu);
}

static int into_head(struct pstore *s, struct pstore_head *h, const struct pprof_profile *p,
		     struct labelsets *ls, const struct pstore_append_opts *o, int64_t time,
		     int64_t duration, bool replay, size_t *first, size_t *count,
		     struct ember_diag *d)
{
	struct pstore_ingest in;
	struct gate_ctx gc = { s, replay };
	struct pstore_series_gate gate = { admit, give_back, &gc };
	struct pstore_head_add a = { .time = time,
				     .duration = duration,
				     .period = pprof_message(p)->period,
				     .ncols = pprof_message(p)->n_sample_type,
				     .unresolved = EMBER_OPTS_GET(o, unresolved, NULL),
				     .n_unresolved = EMBER_OPTS_GET(o, unresolved, NULL)
							     ? EMBER_OPTS_GET(o, n_unresolved, 0)
							     : 0 };
	int err = column_types(p, name_label(&ls->caller), &a.types);

	if (err)
		return err;
	err = pstore_ingest_profile(&h->dict, p, &s->lim, true, &in, d);
	if (err) {
		free(a.types);
		return err;
	}
	if (!(ls->groups = calloc(in.groups.n, sizeof(*ls->groups))))
		err = -ENOMEM;
	for (size_t g = 0; !err && g < in.groups.n; g++, ls->n++)
		err = group_labels(ls, &in.groups.v[g], &s->lim, &ls->groups[g], d);
	if (!err)
		err = pstore_head_add(h, &in, ls->groups, &a, &gate, first, count, d);
	if (!err && EMBER_OPTS_GET(o, info, NULL)) {
		struct pstore_append_info *info = EMBER_OPTS_GET(o, info, NULL);

		*info = (struct pstore_append_info){ .profiles = in.groups.n, .time_ns = time };
		for (size_t g = 0; g < in.groups.n; g++) {
			info->samples += in.groups.v[g].samples;
			info->resolved += in.groups.v[g].resolved;
		}
	}
	if (!err)
		for (size_t g = 0; g < ls->n; g++)
			pstore_unbounded_observe(s->unbounded, ls->groups[g].v, ls->groups[g].n);
	pstore_ingest_release(&in);
	free(a.types);
	return err;
}

int pstore_append_apply(struct pstore *s, struct pstore_head *h, const struct pprof_profile *p,
		    const struct pstore_append_opts *o, int64_t time, int64_t duration,
		    bool replay, size_t *first, size_t *count, struct ember_diag *d)
{
	struct labelsets ls = { 0 };
	int err = caller_labels(o, p, &s->lim, &ls, d);

	EMBER_FAIL_IF(!err && !pprof_message(p)->n_sample_type, d, -EINVAL,
		      "profile has no sample types");
	if (!err) {
		pthread_rwlock_wrlock(&h->lock);
		err = into_head(s, h, p, &ls, o, time, duration, replay, first, count, d);
		if (!err && replay)
			pstore_head_settle(h, *first, *count, true);
		pthread_rwlock_unlock(&h->lock);
	}
	labelsets_release(&ls);
	return err;
}

static int check_size(struct pstore *s, const struct pstore_append_opts *o, struct ember_diag *d)
{
	size_t bytes = EMBER_OPTS_OR(o, input_bytes, EMBER_OPTS_GET(o, body_len, 0));

	EMBER_FAIL_IF(bytes > s->lim.max_profile_bytes, d, -PSTORE_ERR_TOO_LARGE,
		      "profile of %zu bytes, larger than the limit of %zu", bytes,
		      s->lim.max_profile_bytes);
	return 0;
}

static int logged_append(struct pstore *s, const struct pprof_profile *p,
			 const struct pstore_append_opts *o, int64_t time, int64_t duration,
			 const struct ember_buf *rec, bool *full, struct ember_diag *d)
{
	struct pstore_head *h;
	size_t first = 0, count = 0;
	int err;

	pthread_rwlock_rdlock(&s->rot);
	h = s->head;
	err = atomic_load(&s->fenced)
		      ? EMBER_FAIL(d, -PSTORE_ERR_CLOSED, "this writer's log was taken over by "
							  "another replica: it takes no pushes")
	      : s->wal ? pstore_append_apply(s, h, p, o, time, duration, false, &first, &count, d)
		     : EMBER_FAIL(d, -PSTORE_ERR_CLOSED, "the store has no log segment open");
	if (!err) {
		uint64_t recno = 0;

		err = pstore_wal_append(s->wal, rec->data, rec->len, &recno);
		if (err)
			err = EMBER_FAIL(d, err, "log segment: %s", pstore_strerror(err));
		else if (s->index)
			err = pstore_logobj_put(s, pstore_wal_seq(s->wal), recno, rec->data,
						rec->len, d);
		if (!err && s->index)
			err = pstore_lease_check(s, d);
		pthread_rwlock_wrlock(&h->lock);
		pstore_head_settle(h, first, count, !err);
		*full = pstore_head_bytes(h) > s->opts.head_max_bytes;
		pthread_rwlock_unlock(&h->lock);
	}
	pthread_rwlock_unlock(&s->rot);
	return err;
}

int pstore_append(struct pstore *s, const struct pprof_profile *p,
		  const struct pstore_append_opts *o, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	const pprof_message_t *m = pprof_message(p);
	int64_t time = m->time_nanos ? m->time_nanos : EMBER_OPTS_GET(o, time_ns, 0);
	int64_t duration = m->duration_nanos ? m->duration_nanos : EMBER_OPTS_GET(o, duration_ns, 0);
	struct ember_buf rec;
	bool full = false;
	int err = check_size(s, o, &d);

	if (!time)
		time = pstore_now(s);
	ember_buf_init(&rec, PS_WAL_RECORD_MAX);
	if (!err && pstore_record_encode(o, time, duration, EMBER_OPTS_GET(o, body, NULL),
					 EMBER_OPTS_GET(o, body_len, 0), p, &rec))
		err = EMBER_FAIL(&d, -PSTORE_ERR_TOO_LARGE, "profile larger than a log record (%zu MiB)",
			      PS_WAL_RECORD_MAX >> 20);
	if (!err)
		err = logged_append(s, p, o, time, duration, &rec, &full, &d);
	ember_buf_release(&rec);
	atomic_fetch_add(err ? &s->rejected : &s->appends, 1);
	if (full)
		pstore_background_kick(s);
	return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
}

int pstore_append_check(struct pstore *s, const struct pprof_profile *p,
			const struct pstore_append_opts *o, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct labelsets ls = { 0 };
	int err = caller_labels(o, p, &s->lim, &ls, &d);

	labelsets_release(&ls);
	EMBER_FAIL_IF(!err && !pprof_message(p)->n_sample_type, &d, -EINVAL,
		      "profile has no sample types");
	if (!err && EMBER_OPTS_GET(o, info, NULL))
		*EMBER_OPTS_GET(o, info, NULL) = (struct pstore_append_info){ 0 };
	return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
}
