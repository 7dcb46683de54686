/*
 * frame_table.c - where a framed block's zstd frames lie in its row
 * streams, learnt from the first read of each whole stream, so that a
 * later query reads only the bytes of the frames it decodes (a bucket
 * less the profiles at an edge of the range wants one or two frames of
 * every series of an hour's block: docs/performance-notes.md, "Edges read
 * their frames; coarse rollups kept decoded").  The format keeps no such
 * table: frames are found by their headers, which needs the stream's
 * bytes before them.  A rollup whose rows are kept decoded has none.
 *
 * The table is the one part of a block's cached data written after it is
 * built, and only once a stream: a stream's entries are written by the
 * one reader that moves its state from FT_UNKNOWN to FT_FILLING, and read
 * by others only once they see FT_KNOWN (release, acquire).  Its size is
 * fixed when the data is loaded (a series' profiles, PS_FRAME_PROFILES a
 * frame), so it is counted in the cache's budget then.
 */
#include "pstore_block.h"

#include <zstd.h>

enum { FT_UNKNOWN, FT_FILLING, FT_KNOWN, FT_BAD };

/* The frames series s's streams hold. */
static size_t series_frames(const struct pstore_bdata *bd, size_t s)
{
	size_t n = bd->series_prof.v[s + 1] - bd->series_prof.v[s];

	return (n + PS_FRAME_PROFILES - 1) / PS_FRAME_PROFILES;
}

/* Each stream's entries (its frames and one more) counted into
 * first[], then first[] made their starts in off (first[n]: the total). */
static size_t place(uint32_t *first, const struct pstore_bdata *bd)
{
	size_t next = bd->streams.n, total = 0;

	memset(first, 0, (bd->streams.n + 1) * sizeof(*first));
	for (size_t s = bd->series_stream.n; s-- > 0;) { /* a series' streams end at the next's */
		if (bd->series_stream.v[s] == UINT32_MAX)
			continue;
		for (size_t i = bd->series_stream.v[s]; i < next; i++)
			first[i] = (uint32_t)(series_frames(bd, s) + 1);
		next = bd->series_stream.v[s];
	}
	for (size_t i = 0; i <= bd->streams.n; i++) {
		size_t k = first[i];

		first[i] = (uint32_t)total;
		total += k;
	}
	return total;
}

int pstore_frames_init(struct pstore_frames *ft, const struct pstore_bdata *bd)
{
	size_t n = bd->streams.n, total;

	memset(ft, 0, sizeof(*ft));
	if (!bd->framed || !n)
		return 0;
	ft->first = malloc((n + 1) * sizeof(*ft->first));
	ft->state = calloc(n, sizeof(*ft->state));
	if (!ft->first || !ft->state)
		goto fail;
	total = place(ft->first, bd);
	if (total > UINT32_MAX) { /* no table: frames found by their headers */
		pstore_frames_release(ft);
		return 0;
	}
	ft->off = malloc((total ? total : 1) * sizeof(*ft->off));
	if (!ft->off)
		goto fail;
	ft->n = n;
	return 0;
fail:
	pstore_frames_release(ft);
	return -ENOMEM;
}

void pstore_frames_release(struct pstore_frames *ft)
{
	free(ft->first);
	free(ft->off);
	free((void *)ft->state);
	memset(ft, 0, sizeof(*ft));
}

size_t pstore_frames_bytes(const struct pstore_frames *ft)
{
	if (!ft->n)
		return 0;
	return (ft->n + 1) * sizeof(*ft->first) + ft->n * sizeof(*ft->state) +
	       ft->first[ft->n] * sizeof(*ft->off);
}

/* Walk stored[0..len) frame by frame into off[0..nf] (the starts and the
 * end); false when it holds another number of frames or one is bad. */
static bool walk(const uint8_t *stored, size_t len, uint32_t *off, size_t nf)
{
	size_t pos = 0, i = 0;

	if (len > UINT32_MAX)
		return false;
	for (; i < nf && pos < len; i++) {
		size_t n = ZSTD_findFrameCompressedSize(stored + pos, len - pos);

		if (ZSTD_isError(n))
			return false;
		off[i] = (uint32_t)pos;
		pos += n;
	}
	off[i] = (uint32_t)pos;
	return i == nf && pos == len;
}

void pstore_frames_learn(struct pstore_frames *ft, size_t si, const uint8_t *stored, size_t len)
{
	unsigned char expect = FT_UNKNOWN;
	size_t nf;
	bool ok;

	if (si >= ft->n || atomic_load_explicit(&ft->state[si], memory_order_relaxed) != FT_UNKNOWN)
		return;
	nf = ft->first[si + 1] - ft->first[si] - 1;
	if (!atomic_compare_exchange_strong(&ft->state[si], &expect, FT_FILLING))
		return; /* another reader fills it */
	ok = nf && walk(stored, len, ft->off + ft->first[si], nf);
	atomic_store_explicit(&ft->state[si], ok ? FT_KNOWN : FT_BAD, memory_order_release);
}

bool pstore_frames_span(const struct pstore_frames *ft, size_t si, size_t f0, size_t f1,
			uint64_t *a, uint64_t *z)
{
	const uint32_t *off;
	size_t nf;

	if (si >= ft->n ||
	    atomic_load_explicit(&ft->state[si], memory_order_acquire) != FT_KNOWN)
		return false;
	off = ft->off + ft->first[si];
	nf = ft->first[si + 1] - ft->first[si] - 1;
	f1 = f1 > nf ? nf : f1;
	if (f0 >= f1 || (f0 == 0 && f1 == nf))
		return false; /* none, or all: the whole stream, read as such */
	*a = off[f0];
	*z = off[f1];
	return true;
}
