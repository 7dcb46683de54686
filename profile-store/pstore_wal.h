/*
 * pstore_wal.h - the log (docs/profile-store-format.md "Log segment").
 *
 *   wal_record.c   one append as a log record
 *   wal_segment.c  the log segment writer (group commit)
 *   wal_replay.c   reading a segment back, dropping a torn tail
 *   wal_bucket.c   the per-push log objects of a shared store
 *   recover.c      the log replayed at open
 *
 * Invariants: an append is acknowledged only once its record is durable
 * (and, in a shared store, its per-push object written); after a failed
 * write a segment takes no more records; replay stops at the first bad
 * record and drops the rest as a torn tail.
 */
#ifndef EMBER_PSTORE_WAL_H
#define EMBER_PSTORE_WAL_H

#include "pstore_internal.h"

struct pstore_head;

/* ---- the log (wal_*.c) ------------------------------------------------------ */

#define PS_WAL_MAGIC "EMBPSWL1"
#define PS_WAL_HEADER 32
#define PS_WAL_RECORD_HEADER 16
#define PS_WAL_RECORD_MAX ((size_t)256 << 20)

/* An append's record (wal_record.c). */
struct pstore_record {
	int64_t time, duration;
	EMBER_VEC(struct pstore_label) labels;
	EMBER_VEC(struct pstore_unresolved) unresolved;
	const uint8_t *pprof;
	size_t pprof_len;
	size_t input_bytes;
};

/* body NULL: p encoded raw. */
int pstore_record_encode(const struct pstore_append_opts *o, int64_t time, int64_t duration,
		     const void *body, size_t body_len, const struct pprof_profile *p,
		     struct ember_buf *out);
/* Decode a record payload (borrowed: strings point into data, which is
 * NUL-terminated per string by the encoder). */
int pstore_record_decode(const uint8_t *data, size_t len, struct pstore_record *r,
		     struct ember_diag *d);
void pstore_record_release(struct pstore_record *r);

/* Segment writer (wal_segment.c); its file is made at the first append. */
int pstore_wal_open(int dir_fd, uint64_t seq, const uint8_t writer[16], bool no_fsync,
		struct pstore_wal **out);
/* Append one record and wait until it is durable; *recno (may be NULL)
 * gets its number in the segment (0, 1, ...).  -EIO etc.: the record is
 * not acknowledged; later appends fail with -PSTORE_ERR_CLOSED until the
 * next segment. */
int pstore_wal_append(struct pstore_wal *w, const void *payload, size_t len, uint64_t *recno);
uint64_t pstore_wal_bytes(const struct pstore_wal *w);
uint64_t pstore_wal_seq(const struct pstore_wal *w);
void pstore_wal_close(struct pstore_wal *w);
void pstore_wal_name(uint64_t seq, char out[32]);

/* The per-push log in a shared block storage (wal_bucket.c,
 * docs/object-storage-layout.md "The per-push log"): each record of
 * this writer's segment SEG also as the create-only object
 * log/WRITER/SEG-REC (WRITER 32 hex digits, SEG 16 hex digits, REC 10
 * decimal digits), written before the append is acknowledged. */
#define PS_LOGOBJ_NAME_MAX 80
void pstore_logobj_name(const uint8_t writer[16], uint64_t seg, uint64_t rec,
			char out[PS_LOGOBJ_NAME_MAX]);
/* log/WRITER/LEAF ("lease", "claim"); WRITER as 32 hex digits. */
void pstore_log_leaf_name(const uint8_t writer[16], const char *leaf,
			  char out[PS_LOGOBJ_NAME_MAX]);
void pstore_writer_hex(const uint8_t id[16], char out[33]);
int pstore_logobj_put(struct pstore *s, uint64_t seg, uint64_t rec, const void *data,
		      size_t len, struct ember_diag *d);
/* Delete writer's objects of segment seg (its records are in live
 * blocks); failures are warned about and left. */
void pstore_logobj_drop(struct pstore *s, const uint8_t writer[16], uint64_t seg);

/* The log replayed (recover.c): whether a live block holds writer's
 * segment seq's profiles of time t; one record of h's segment (h->writer,
 * h->seq) into h, visible at once, unless a block holds it (*skipped) or
 * it no longer ingests (*failed, warned). */
bool pstore_log_covered(const struct pstore *s, const uint8_t writer[16], uint64_t seq,
			int64_t t);
int pstore_replay_record(struct pstore *s, struct pstore_head *h, const uint8_t *payload,
			 size_t len, uint64_t *skipped, uint64_t *failed);

/* Replay (wal_replay.c): fn for each record of a segment's bytes, in
 * order, until the end or the first bad record (*torn: bytes dropped);
 * writer gets the segment's writer ID.  -PSTORE_ERR_CORRUPT for a bad
 * header; fn's error stops the scan. */
int pstore_wal_scan(const uint8_t *data, size_t len, uint8_t writer[16],
		int (*fn)(void *ctx, const uint8_t *payload, size_t len), void *ctx,
		uint64_t *torn, struct ember_diag *d);

/* Replay the log at open (recover.c). */
int pstore_recover(struct pstore *s, struct ember_diag *d);

#endif /* EMBER_PSTORE_WAL_H */
