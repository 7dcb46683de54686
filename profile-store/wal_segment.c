/*
 * wal_segment.c - the write-ahead log: one append-only segment file per
 * head, DIR/wal/<seq as 16 hex digits>.wal, a 32-byte header (magic,
 * version, the writer's ID) and records (length, flags, a 64-bit hash of
 * the payload, the payload).  An append returns once its record is on
 * disk: appenders write under the segment's mutex and the first to find
 * its bytes unsynced runs fdatasync for everyone written so far while the
 * others wait (group commit), so N concurrent appends cost about one
 * sync.  A failed write is cut off again (ftruncate) so the segment
 * stays a sequence of whole records; a failed sync closes the segment to
 * further appends (after fsync fails the page cache is no longer to be
 * trusted; the store opens a new segment at the next rotation).  The
 * file is made at the first append, not when the segment is opened: a
 * start that takes no profile writes, and syncs, nothing (the server's
 * time to its first answer paid three fsyncs before).
 */
#include "pstore_bytes.h"
#include "pstore_wal.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

struct pstore_wal {
	int fd, dir_fd;			/* fd: -1 until the first append */
	uint64_t seq;
	bool no_fsync;
	uint8_t header[PS_WAL_HEADER];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t written, synced; /* file offsets */
	uint64_t records;	  /* appended so far: the next record's number */
	bool syncing;
	int err; /* sticky: the segment takes no more appends */
};

void pstore_wal_name(uint64_t seq, char out[32])
{
	snprintf(out, 32, "%016llx.wal", (unsigned long long)seq);
}

static int write_all(int fd, struct iovec *iov, int n)
{
	while (n) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		while (n && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int pstore_wal_open(int dir_fd, uint64_t seq, const uint8_t writer[16], bool no_fsync,
		    struct pstore_wal **out)
{
	struct pstore_wal *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	ember_memcpy(w->header, PS_WAL_MAGIC, 8);
	pstore_le32(w->header + 8, 1);
	ember_memcpy(w->header + 16, writer, 16);
	w->fd = -1;
	w->dir_fd = dir_fd;
	w->seq = seq;
	w->no_fsync = no_fsync;
	w->written = w->synced = PS_WAL_HEADER;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	*out = w;
	return 0;
}

/* The segment's file with its header, durable with its directory entry
 * (under mu, at the first append).  On failure nothing is left. */
static int create_file(struct pstore_wal *w)
{
	struct iovec iov = { w->header, sizeof(w->header) };
	char name[32];
	int fd, err = 0;

	pstore_wal_name(w->seq, name);
	fd = openat(w->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, &iov, 1);
	if (!err && !w->no_fsync && (fsync(fd) < 0 || fsync(w->dir_fd) < 0))
		err = -errno;
	if (err) {
		close(fd);
		unlinkat(w->dir_fd, name, 0);
		return err;
	}
	w->fd = fd;
	return 0;
}

/* Write one record at the end; on failure cut the file back. */
static int write_record(struct pstore_wal *w, const void *payload, size_t len)
{
	uint8_t hdr[PS_WAL_RECORD_HEADER];
	struct iovec iov[2] = { { hdr, sizeof(hdr) }, { (void *)payload, len } };
	int err;

	pstore_le32(hdr, (uint32_t)len);
	pstore_le32(hdr + 4, 0);
	pstore_le64(hdr + 8, ember_checksum64(payload, len, len));
	err = write_all(w->fd, iov, 2);
	if (err) {
		if (ftruncate(w->fd, (off_t)w->written) < 0)
			w->err = err; /* the tail may hold a partial record */
		return err;
	}
	w->written += sizeof(hdr) + len;
	return 0;
}

/* Wait until offset end is durable, syncing if nobody else is. */
static int wait_durable(struct pstore_wal *w, uint64_t end)
{
	while (w->synced < end && !w->err) {
		uint64_t target = w->written;
		int rc;

		if (w->syncing) {
			pthread_cond_wait(&w->cv, &w->mu);
			continue;
		}
		w->syncing = true;
		pthread_mutex_unlock(&w->mu);
		rc = w->no_fsync ? 0 : fdatasync(w->fd);
		if (rc < 0)
			rc = -errno;
		pthread_mutex_lock(&w->mu);
		w->syncing = false;
		if (rc)
			w->err = rc;
		else
			w->synced = target;
		pthread_cond_broadcast(&w->cv);
	}
	return w->synced >= end ? 0 : w->err;
}

int pstore_wal_append(struct pstore_wal *w, const void *payload, size_t len, uint64_t *recno)
{
	int err;

	if (len > PS_WAL_RECORD_MAX)
		return -E2BIG;
	pthread_mutex_lock(&w->mu);
	err = w->err ? -PSTORE_ERR_CLOSED : w->fd < 0 ? create_file(w) : 0;
	if (!err)
		err = write_record(w, payload, len);
	if (!err && recno)
		*recno = w->records;
	if (!err)
		w->records++;
	if (!err)
		err = wait_durable(w, w->written);
	pthread_mutex_unlock(&w->mu);
	return err;
}

uint64_t pstore_wal_bytes(const struct pstore_wal *w)
{
	return w && w->fd >= 0 ? w->written : 0;
}

uint64_t pstore_wal_seq(const struct pstore_wal *w)
{
	return w->seq;
}

void pstore_wal_close(struct pstore_wal *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}
