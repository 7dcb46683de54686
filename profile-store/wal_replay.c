/*
 * wal_replay.c - a log segment read back at open: its header checked,
 * then its records in order until the end or the first record that is
 * not whole (a length past the end, a hash mismatch: the tail a crash
 * tore, which no append ever acknowledged, since an append returns only
 * after its record and everything before it are synced).  What follows
 * the first bad record is dropped, and counted.  The fuzz target feeds
 * this any bytes.
 */
#include "pstore_bytes.h"
#include "pstore_wal.h"

int pstore_wal_scan(const uint8_t *data, size_t len, uint8_t writer[16],
		int (*fn)(void *ctx, const uint8_t *payload, size_t len), void *ctx,
		uint64_t *torn, struct ember_diag *d)
{
	const uint8_t *p = data + PS_WAL_HEADER, *end = data + len;

	*torn = 0;
	if (len < PS_WAL_HEADER) {
		*torn = len; /* created, header never completed */
		return 0;
	}
	EMBER_FAIL_IF(memcmp(data, PS_WAL_MAGIC, 8) != 0 || pstore_rd32(data + 8) != 1, d,
		      -PSTORE_ERR_CORRUPT, "log segment: bad magic or version");
	ember_memcpy(writer, data + 16, 16);
	while (p < end) {
		uint32_t n;

		if ((size_t)(end - p) < PS_WAL_RECORD_HEADER)
			break;
		n = pstore_rd32(p);
		if (n > PS_WAL_RECORD_MAX || (size_t)(end - p) - PS_WAL_RECORD_HEADER < n ||
		    pstore_rd32(p + 4) != 0 ||
		    pstore_rd64(p + 8) != ember_checksum64(p + PS_WAL_RECORD_HEADER, n, n))
			break;
		EMBER_FORWARD_IF_ERROR(fn(ctx, p + PS_WAL_RECORD_HEADER, n));
		p += PS_WAL_RECORD_HEADER + n;
	}
	*torn = (uint64_t)(end - p);
	return 0;
}
