/*
 * decompress.c - the compressions a pprof body may carry, detected by
 * magic number (gzip: RFC 1952, 1f 8b; zstd: RFC 8878, 28 b5 2f fd) and
 * decompressed through zlib or libzstd into a caller's struct ember_buf.
 * The buffer's cap is the only bound on the output: a decompression bomb
 * fails with -E2BIG when the next chunk would pass it.  Like Go's readers,
 * several gzip members or zstd frames in a row are one stream; anything
 * else after the end is an error.
 */
#include "wire_internal.h"

#include <string.h>
#include <zlib.h>
#include <zstd.h>

#define CHUNK (64 * 1024)
/* zstd's own default window limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT, which
 * zstd.h exposes only under ZSTD_STATIC_LINKING_ONLY). */
#define ZSTD_WINDOW_LOG_DEFAULT_MAX 27

enum wire_compression wire_detect_compression(const void *data, size_t size)
{
	static const uint8_t gz[2] = { 0x1f, 0x8b }, zs[4] = { 0x28, 0xb5, 0x2f, 0xfd };

	if (size >= sizeof(gz) && memcmp(data, gz, sizeof(gz)) == 0)
		return WIRE_COMP_GZIP;
	if (size >= sizeof(zs) && memcmp(data, zs, sizeof(zs)) == 0)
		return WIRE_COMP_ZSTD;
	return WIRE_COMP_RAW;
}

static int append_chunk(struct ember_buf *out, const uint8_t *chunk, size_t n,
			struct ember_diag *d, const char *what)
{
	int err = ember_buf_append(out, chunk, n);

	EMBER_FAIL_IF(err == -E2BIG && out->acct && out->acct->err, d, -E2BIG,
		      "%s: decompressed profile needs more memory than the server gives one "
		      "request", what);
	EMBER_FAIL_IF(err == -E2BIG, d, -E2BIG,
		      "%s: decompressed profile larger than %zu bytes", what, out->cap);
	EMBER_FAIL_IF(err == -EAGAIN, d, -EAGAIN,
		      "%s: the server has no memory free for the profile now", what);
	EMBER_FAIL_IF(err, d, err, "%s: out of memory", what);
	return 0;
}

/* Inflate one gzip member from *pos; advance *pos past it on success. */
static int gunzip_member(z_stream *zs, const uint8_t **pos, const uint8_t *end,
			 struct ember_buf *out, struct ember_diag *d)
{
	uint8_t chunk[CHUNK];
	int zr;

	zs->next_in = (Bytef *)*pos;
	zs->avail_in = (uInt)(end - *pos > UINT32_MAX ? UINT32_MAX : end - *pos);
	do {
		zs->next_out = chunk;
		zs->avail_out = sizeof(chunk);
		zr = inflate(zs, Z_NO_FLUSH);
		EMBER_FAIL_IF(zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR, d,
			      -PPROF_ERR_COMPRESSION,
			      "gzip: corrupt stream at input byte %zu (%s)",
			      (size_t)((const uint8_t *)zs->next_in - *pos),
			      zs->msg ? zs->msg : "zlib error");
		EMBER_FORWARD_IF_ERROR(append_chunk(out, chunk, sizeof(chunk) - zs->avail_out,
						   d, "gzip"));
		EMBER_FAIL_IF(zr == Z_BUF_ERROR && zs->avail_out != 0, d,
			      -PPROF_ERR_COMPRESSION, "gzip: truncated stream");
	} while (zr != Z_STREAM_END);
	*pos = zs->next_in;
	return 0;
}

int wire_gunzip(const void *data, size_t size, struct ember_buf *out, struct ember_diag *d)
{
	const uint8_t *pos = data, *end = pos + size;
	z_stream zs;
	int err = 0;

	EMBER_FAIL_IF(size > UINT32_MAX, d, -E2BIG, "gzip: input larger than 4 GiB");
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return EMBER_FAIL(d, -ENOMEM, "gzip: cannot start zlib");
	while (!err && pos < end) {
		if (wire_detect_compression(pos, (size_t)(end - pos)) != WIRE_COMP_GZIP) {
			err = EMBER_FAIL(d, -PPROF_ERR_COMPRESSION,
					"gzip: %zu bytes of garbage after the stream",
					(size_t)(end - pos));
			break;
		}
		err = gunzip_member(&zs, &pos, end, out, d);
		if (!err)
			inflateReset(&zs);
	}
	inflateEnd(&zs);
	return err;
}

/* The decompression window may not exceed the output cap (nor zstd's
 * default limit): a frame asking for more is a bomb. */
static int zstd_window_log(size_t cap)
{
	int log = 10;

	while (log < ZSTD_WINDOW_LOG_DEFAULT_MAX && ((size_t)1 << log) < cap)
		log++;
	return log;
}

static int unzstd_loop(ZSTD_DStream *ds, const void *data, size_t size,
		       struct ember_buf *out, struct ember_diag *d)
{
	ZSTD_inBuffer in = { data, size, 0 };
	uint8_t chunk[CHUNK];
	size_t zr = 0;

	while (in.pos < in.size || zr != 0) {
		ZSTD_outBuffer ob = { chunk, sizeof(chunk), 0 };
		size_t before = in.pos;

		zr = ZSTD_decompressStream(ds, &ob, &in);
		EMBER_FAIL_IF(ZSTD_isError(zr), d, -PPROF_ERR_COMPRESSION,
			      "zstd: corrupt stream near input byte %zu (%s)", in.pos,
			      ZSTD_getErrorName(zr));
		EMBER_FORWARD_IF_ERROR(append_chunk(out, chunk, ob.pos, d, "zstd"));
		EMBER_FAIL_IF(zr != 0 && in.pos == in.size && before == in.pos && ob.pos == 0,
			      d, -PPROF_ERR_COMPRESSION, "zstd: truncated stream");
	}
	return 0;
}

int wire_unzstd(const void *data, size_t size, struct ember_buf *out, struct ember_diag *d)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	int err;

	if (!ds)
		return EMBER_FAIL(d, -ENOMEM, "zstd: cannot start libzstd");
	ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, zstd_window_log(out->cap));
	err = unzstd_loop(ds, data, size, out, d);
	ZSTD_freeDStream(ds);
	return err;
}
