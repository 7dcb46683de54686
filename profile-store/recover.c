/*
 * recover.c - the log replayed at open.  Each segment in DIR/wal becomes
 * a sealed head again, record by record (wal_replay.c drops a torn
 * tail), except the profiles a block already holds: a block names the
 * segments it was written from (writer ID, sequence range) and holds
 * every profile of theirs in its partition (start and length from its
 * own header, whatever partition_ns the store is opened with), so a crash
 * between writing a block and deleting its segment never stores a
 * profile twice.  A segment whose header is not a segment's is moved
 * aside (NAME.corrupt) and reported, never deleted.  The next segment
 * number follows every one seen, in the log and in the blocks.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_head.h"
#include "pstore_wal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

struct replay {
	struct pstore *s;
	struct pstore_head *h;
	uint8_t writer[16];
	uint64_t seq, skipped, failed;
};

/* Whether t lies in the block's own partition: its start and length as
 * its header says, not the store's partition_ns now (which may differ
 * from the one the block was written with: a reopen with other options,
 * the kill -9 case's check). */
static bool in_partition(const struct pstore_block_meta *m, int64_t t)
{
	return m->partition_ns > 0 && t >= m->partition &&
	       (uint64_t)t - (uint64_t)m->partition < (uint64_t)m->partition_ns;
}

bool pstore_log_covered(const struct pstore *s, const uint8_t writer[16], uint64_t seq, int64_t t)
{
	for (size_t i = 0; i < s->blocks.n; i++) {
		const struct pstore_block_meta *m = &s->blocks.v[i]->meta;

		if (!in_partition(m, t))
			continue;
		for (size_t k = 0; k < m->wal.n; k++)
			if (!memcmp(m->wal.v[k].writer, writer, 16) && m->wal.v[k].lo <= seq &&
			    seq <= m->wal.v[k].hi)
				return true;
	}
	return false;
}

static int apply(struct pstore *s, struct pstore_head *h, uint64_t seq,
		 const struct pstore_record *r, uint64_t *failed)
{
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = r->labels.v,
					.n_labels = r->labels.n, .input_bytes = r->input_bytes,
					.unresolved = r->unresolved.v,
					.n_unresolved = r->unresolved.n };
	struct pprof_profile *p = NULL;
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	size_t first, count;
	int err = pprof_decode(r->pprof, r->pprof_len, NULL, &p, why, sizeof(why));

	if (!err)
		err = pstore_append_apply(s, h, p, &o, r->time, r->duration, true, &first, &count,
				      &d);
	pprof_profile_free(p);
	if (err == -ENOMEM)
		return err;
	if (err) {
		(*failed)++;
		pr_warn("pstore: log segment %llu: a record no longer ingests (%s): skipped",
			(unsigned long long)seq, why);
	}
	return 0;
}

int pstore_replay_record(struct pstore *s, struct pstore_head *h, const uint8_t *payload,
			 size_t len, uint64_t *skipped, uint64_t *failed)
{
	struct pstore_record r;
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err = pstore_record_decode(payload, len, &r, &d);

	if (err) {
		/* A whole record (its hash matched) that does not decode was
		 * written by something else: report it, keep the rest. */
		(*failed)++;
		pr_warn("pstore: log segment %llu: %s", (unsigned long long)h->seq, why);
		return 0;
	}
	if (pstore_log_covered(s, h->writer, h->seq, r.time))
		(*skipped)++;
	else
		err = apply(s, h, h->seq, &r, failed);
	pstore_record_release(&r);
	return err;
}

static int on_record(void *ctx, const uint8_t *payload, size_t len)
{
	struct replay *rp = ctx;

	ember_memcpy(rp->h->writer, rp->writer, 16); /* the header's, scanned first */
	return pstore_replay_record(rp->s, rp->h, payload, len, &rp->skipped, &rp->failed);
}

static int read_file(int dir, const char *name, struct ember_buf *out)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
	struct stat st;
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		err = -errno;
	if (!err)
		err = ember_buf_reserve(out, (size_t)st.st_size);
	while (!err && out->len < (size_t)st.st_size) {
		ssize_t n = pread(fd, out->data + out->len, (size_t)st.st_size - out->len,
				  (off_t)out->len);

		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		out->len += (size_t)n;
	}
	close(fd);
	return err;
}

static void set_aside(struct pstore *s, const char *name, const char *why)
{
	char aside[64];

	snprintf(aside, sizeof(aside), "%s.corrupt", name);
	pr_warn("pstore: log segment '%s/wal/%s' is not a segment (%s): moved to '%s'", s->dir,
		name, why, aside);
	renameat(s->wal_fd, name, s->wal_fd, aside);
}

/* The segment is not needed any more. */
static void drop_segment(struct pstore *s, uint64_t seq)
{
	char name[32];

	pstore_wal_name(seq, name);
	unlinkat(s->wal_fd, name, 0);
	fsync(s->wal_fd);
}

static int replay_segment(struct pstore *s, uint64_t seq, struct ember_diag *d)
{
	struct replay rp = { .s = s, .seq = seq };
	struct ember_buf data;
	char name[32], why[256];
	struct ember_diag sd = ember_diag_make(why, sizeof(why));
	uint64_t torn = 0;
	int err;

	pstore_wal_name(seq, name);
	ember_buf_init(&data, PS_SECTION_MAX_RAW);
	err = read_file(s->wal_fd, name, &data);
	EMBER_FAIL_IF(err, d, err, "store: cannot read log segment '%s': %s", name,
		      strerror(-err));
	rp.h = pstore_head_new(seq, pstore_now(s), &s->ident);
	err = rp.h ? pstore_wal_scan((const uint8_t *)data.data, data.len, rp.writer, on_record,
				     &rp, &torn, &sd)
		   : -ENOMEM;
	ember_buf_release(&data);
	if (err == -PSTORE_ERR_CORRUPT) {
		set_aside(s, name, why);
		err = 0;
	}
	if (err) {
		pstore_head_unref(rp.h);
		return EMBER_FAIL(d, err, "store: replaying '%s': %s", name,
				  pstore_strerror(err));
	}
	if (torn)
		pr_warn("pstore: log segment '%s': %llu bytes of a torn tail dropped", name,
			(unsigned long long)torn);
	atomic_fetch_add(&s->wal_torn_bytes, torn);
	rp.h->sealed = true;
	if (!rp.h->visible) {
		pstore_head_unref(rp.h);
		drop_segment(s, seq);
		return 0;
	}
	return EMBER_VEC_APPEND(&s->sealed, rp.h);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int list_segments(struct pstore *s, struct pstore_u64s *seqs)
{
	int fd = dup(s->wal_fd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int err = 0;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(dir);
	while (!err && (e = readdir(dir))) {
		size_t n = strlen(e->d_name);
		char *end;
		uint64_t seq = strtoull(e->d_name, &end, 16);

		if (n == 20 && end == e->d_name + 16 && strcmp(end, ".wal") == 0)
			err = EMBER_VEC_APPEND(seqs, seq);
	}
	closedir(dir);
	ember_qsort(seqs->v, seqs->n, sizeof(*seqs->v), cmp_u64);
	return err;
}

static uint64_t max_covered(const struct pstore *s)
{
	uint64_t m = 0;

	for (size_t i = 0; i < s->blocks.n; i++)
		for (size_t k = 0; k < s->blocks.v[i]->meta.wal.n; k++)
			if (!memcmp(s->blocks.v[i]->meta.wal.v[k].writer, s->writer, 16) &&
			    s->blocks.v[i]->meta.wal.v[k].hi > m)
				m = s->blocks.v[i]->meta.wal.v[k].hi;
	return m;
}

int pstore_recover(struct pstore *s, struct ember_diag *d)
{
	struct pstore_u64s seqs = { 0 };
	int err = list_segments(s, &seqs);

	if (err)
		return EMBER_FAIL(d, err, "store: cannot list '%s/wal': %s", s->dir,
				  strerror(-err));
	s->next_seq = max_covered(s) + 1;
	for (size_t i = 0; !err && i < seqs.n; i++) {
		err = replay_segment(s, seqs.v[i], d);
		if (seqs.v[i] >= s->next_seq)
			s->next_seq = seqs.v[i] + 1;
	}
	EMBER_VEC_FREE(&seqs);
	return err;
}
