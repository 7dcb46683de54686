/*
 * block_catalog.c - the blocks a store holds, as the block storage lists them:
 * each opened by reading its header and the small sections a store needs
 * at once (meta: parents and log ranges; the series and their label
 * index), through range reads, so opening never reads rows or
 * dictionaries.  A block that fails its checks stays listed as corrupt:
 * the queries that need it fail with its reason, never skip it.  A block
 * is referenced by the store's list and by each query's snapshot; one
 * taken out of the list (compacted away, expired) is deleted from the
 * storage when its last reference goes.
 */
#include "pstore_block.h"
#include "pstore_catalog.h"
#include "pstore_index.h"
#include "pstore_series.h"

#include <stdio.h>
#include <zstd.h>

#define PREFIX_BYTES (64 * 1024)

struct pstore_block *pstore_block_ref(struct pstore_block *b)
{
	atomic_fetch_add(&b->refs, 1);
	return b;
}

static void block_free(struct pstore_block *b)
{
	if (b->doomed) {
		int err = b->io->del(b->io->ctx, b->name);

		if (err && err != -ENOENT)
			pr_warn("pstore: cannot delete '%s': %s", b->name, pstore_strerror(err));
	}
	pstore_bdata_unref(b->data);
	pstore_bdata_unref(b->profiles);
	pstore_block_meta_release(&b->meta);
	pstore_seriestab_release(&b->series);
	pstore_lindex_release(&b->lindex);
	pthread_mutex_destroy(&b->mu);
	free(b->name);
	free(b);
}

void pstore_block_unref(struct pstore_block *b)
{
	if (b && atomic_fetch_sub(&b->refs, 1) == 1)
		block_free(b);
}

void pstore_blocks_release(struct pstore_blocks *v)
{
	for (size_t i = 0; i < v->n; i++)
		pstore_block_unref(v->v[i]);
	EMBER_VEC_FREE(v);
}

/* Reads of one block: its first bytes once, the rest by range. */
struct reader {
	const struct pstore_blockio *io;
	const char *name;
	uint64_t size;
	struct ember_buf prefix;
};

static int read_range(struct reader *r, uint64_t off, uint64_t len, struct ember_buf *out,
		      struct ember_diag *d)
{
	int err;

	ember_buf_reset(out);
	if (off + len <= r->prefix.len) {
		out->cap = (size_t)len + 1;
		return ember_buf_append(out, r->prefix.data + off, (size_t)len);
	}
	out->cap = (size_t)len + 1;
	err = len ? r->io->get(r->io->ctx, r->name, off, (size_t)len, out) : 0;
	if (err)
		return EMBER_FAIL(d, err, "block '%s': cannot read: %s", r->name,
				  pstore_strerror(err));
	EMBER_FAIL_IF(out->len != len, d, -PSTORE_ERR_CORRUPT,
		      "block '%s': shorter than its section table says", r->name);
	return 0;
}

static int read_section(struct reader *r, const struct pstore_block_meta *m,
			enum pstore_section_kind k, struct ember_buf *out, struct ember_diag *d)
{
	struct ember_buf stored;
	int err;

	ember_buf_init(&stored, 0);
	err = read_range(r, m->sec[k].off, m->sec[k].stored, &stored, d);
	if (!err)
		err = pstore_block_section(m, k, (const uint8_t *)stored.data, stored.len, out, d);
	ember_buf_release(&stored);
	return err;
}

static int read_header(struct reader *r, struct pstore_block_meta *m, struct ember_diag *d)
{
	size_t need;
	int err;

	ember_buf_init(&r->prefix, PREFIX_BYTES + 1);
	err = r->io->get(r->io->ctx, r->name, 0, PREFIX_BYTES, &r->prefix);
	if (err)
		return EMBER_FAIL(d, err, "block '%s': cannot read: %s", r->name,
				  pstore_strerror(err));
	EMBER_FORWARD_IF_ERROR(pstore_block_header_len((const uint8_t *)r->prefix.data, r->prefix.len, &need, d));
	EMBER_FAIL_IF(need > r->prefix.len, d, -PSTORE_ERR_CORRUPT,
		      "block '%s': truncated header", r->name);
	return pstore_block_header((const uint8_t *)r->prefix.data, r->prefix.len, r->size, m, d);
}

/* A rollup's ROLLUP section: its step and sources (bd NULL), or its
 * profiles' counts. */
static int read_rollup(struct reader *r, struct pstore_block_meta *m, struct pstore_bdata *bd,
		       struct ember_diag *d)
{
	struct ember_buf buf;
	int err;

	ember_buf_init(&buf, 0);
	err = read_section(r, m, PS_SEC_ROLLUP, &buf, d);
	if (!err)
		err = pstore_block_decode_rollup((const uint8_t *)buf.data, buf.len, m, bd, d);
	ember_buf_release(&buf);
	return err;
}

static int read_small_sections(struct reader *r, struct pstore_block *b, struct ember_diag *d)
{
	struct ember_buf meta, strs, ser, lab;
	int err;

	ember_buf_init(&meta, 0);
	ember_buf_init(&strs, 0);
	ember_buf_init(&ser, 0);
	ember_buf_init(&lab, 0);
	err = read_section(r, &b->meta, PS_SEC_META, &meta, d);
	if (!err)
		err = pstore_block_decode_meta((const uint8_t *)meta.data, meta.len, &b->meta, d);
	if (!err)
		err = read_section(r, &b->meta, PS_SEC_SERIES_STRINGS, &strs, d);
	if (!err)
		err = read_section(r, &b->meta, PS_SEC_SERIES, &ser, d);
	if (!err)
		err = pstore_block_decode_series((const uint8_t *)strs.data, strs.len,
					     (const uint8_t *)ser.data, ser.len, &b->series, d);
	if (!err)
		err = read_section(r, &b->meta, PS_SEC_LABELS, &lab, d);
	if (!err)
		err = pstore_block_decode_labels((const uint8_t *)lab.data, lab.len, &b->series,
					     &b->lindex, d);
	if (!err && b->meta.has[PS_SEC_ROLLUP])
		err = read_rollup(r, &b->meta, NULL, d);
	ember_buf_release(&meta);
	ember_buf_release(&strs);
	ember_buf_release(&ser);
	ember_buf_release(&lab);
	return err;
}

static struct pstore_block *block_new(const struct pstore_blockio *io, const char *name,
				      uint64_t size, const struct ember_hash_key *ident)
{
	struct pstore_block *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	atomic_init(&b->refs, 1);
	b->io = io;
	b->size = size;
	b->name = strdup(name);
	pthread_mutex_init(&b->mu, NULL);
	if (!b->name || pstore_seriestab_init(&b->series, ident)) {
		block_free(b);
		return NULL;
	}
	return b;
}

int pstore_block_open(const struct pstore_blockio *io, const char *name, uint64_t size,
		      const struct ember_hash_key *ident, struct pstore_block **out,
		      struct ember_diag *d)
{
	struct pstore_block *b = block_new(io, name, size, ident);
	struct reader r = { .io = io, .name = name, .size = size };
	char why[256];
	struct ember_diag bd = ember_diag_make(why, sizeof(why));
	int err;

	if (!b)
		return -ENOMEM;
	err = read_header(&r, &b->meta, &bd);
	if (!err)
		err = read_small_sections(&r, b, &bd);
	ember_buf_release(&r.prefix);
	if (err == -PSTORE_ERR_CORRUPT) {
		b->corrupt = true;
		snprintf(b->why, sizeof(b->why), "%s", why);
		err = 0;
	}
	if (err) {
		block_free(b);
		return EMBER_FAIL(d, err, "%s", why);
	}
	*out = b;
	return 0;
}

int pstore_block_missing(const struct pstore_blockio *io, const char *name, uint64_t size,
			 const struct ember_hash_key *ident, struct pstore_block **out)
{
	struct pstore_block *b = block_new(io, name, size, ident);

	if (!b)
		return -ENOMEM;
	b->corrupt = true;
	snprintf(b->why, sizeof(b->why), "the block index names it, the storage does not have it");
	*out = b;
	return 0;
}

/* ---- the data a query needs ------------------------------------------------------ */

struct pstore_bdata *pstore_bdata_ref(struct pstore_bdata *b)
{
	atomic_fetch_add(&b->refs, 1);
	return b;
}

void pstore_bdata_unref(struct pstore_bdata *b)
{
	if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
		return;
	pmodel_dict_release(&b->dict);
	EMBER_VEC_FREE(&b->profs);
	EMBER_VEC_FREE(&b->totals);
	EMBER_VEC_FREE(&b->cov);
	EMBER_VEC_FREE(&b->streams);
	EMBER_VEC_FREE(&b->series_stream);
	EMBER_VEC_FREE(&b->series_prof);
	EMBER_VEC_FREE(&b->rollup);
	pstore_linktab_release(&b->links);
	pstore_frames_release(&b->frames);
	free(b->decoded.data);
	free(b->decoded.off);
	free(b->keys);
	free(b);
}

static int load_dict(struct reader *r, struct pstore_block *b, struct pstore_bdata *bd,
		     struct ember_diag *d)
{
	static const enum pstore_section_kind kinds[] = { PS_SEC_STRINGS, PS_SEC_FUNCTIONS,
						      PS_SEC_MAPPINGS, PS_SEC_LOCATIONS,
						      PS_SEC_NODES, PS_SEC_LOCATION_TYPES };
	struct ember_buf buf[6];
	const uint8_t *sec[PS_SEC_KIND_MAX] = { 0 };
	size_t len[PS_SEC_KIND_MAX] = { 0 };
	int err = 0;

	for (int i = 0; i < 6; i++)
		ember_buf_init(&buf[i], 0);
	for (int i = 0; !err && i < 6; i++) {
		if (!b->meta.has[kinds[i]])
			continue; /* an optional section this block has not */
		err = read_section(r, &b->meta, kinds[i], &buf[i], d);
		sec[kinds[i]] = (const uint8_t *)buf[i].data;
		len[kinds[i]] = buf[i].len;
	}
	if (!err)
		err = pstore_block_decode_dict(sec, len, &bd->dict, d);
	for (int i = 0; i < 6; i++)
		ember_buf_release(&buf[i]);
	return err;
}

static int load_rows_index(struct reader *r, struct pstore_block *b, struct pstore_bdata *bd,
			   struct ember_diag *d)
{
	struct ember_buf prof, str;
	int err;

	ember_buf_init(&prof, 0);
	ember_buf_init(&str, 0);
	err = read_section(r, &b->meta, PS_SEC_PROFILES, &prof, d);
	if (!err)
		err = pstore_block_decode_profiles((const uint8_t *)prof.data, prof.len, &b->series,
					       &b->meta, bd, d);
	if (!err)
		err = read_section(r, &b->meta, PS_SEC_STREAMS, &str, d);
	if (!err)
		err = pstore_block_decode_streams((const uint8_t *)str.data, str.len, &b->series,
					      &b->meta, bd, d);
	if (!err && pstore_meta_linked(&b->meta))
		err = read_section(r, &b->meta, PS_SEC_LINKS, &str, d);
	if (!err && pstore_meta_linked(&b->meta))
		err = pstore_block_decode_links((const uint8_t *)str.data, str.len, bd, d);
	if (!err && b->meta.rollup_step)
		err = read_rollup(r, &b->meta, bd, d);
	ember_buf_release(&prof);
	ember_buf_release(&str);
	return err;
}

/* A rollup's rows decoded at load take at most this, and at most
 * ROWS_DECODED_RATIO times their stored bytes (what the streams claim is
 * checked as they are decoded). */
#define ROWS_DECODED_MAX (32u << 20)
#define ROWS_DECODED_RATIO 16

/* The bytes bd's row streams decode to, as their directory says. */
static uint64_t rows_raw(const struct pstore_bdata *bd)
{
	uint64_t raw = 0;

	for (size_t i = 0; i < bd->streams.n; i++)
		raw += bd->streams.v[i].kind == PS_STREAM_DERIVED ? 0 : bd->streams.v[i].raw;
	return raw;
}

/* Whether bd's rows are a rollup's of few profiles a series (at most a
 * frame's), small decoded: the coarse tiers, whose rows every long range
 * reads. */
static bool rows_kept_decoded(const struct pstore_block *b, const struct pstore_bdata *bd)
{
	uint64_t raw, stored = b->meta.sec[PS_SEC_ROWS].stored;

	if (!b->meta.rollup_step)
		return false;
	for (size_t s = 0; s + 1 < bd->series_prof.n; s++)
		if (bd->series_prof.v[s + 1] - bd->series_prof.v[s] > PS_FRAME_PROFILES)
			return false;
	raw = rows_raw(bd);
	return raw <= ROWS_DECODED_MAX && raw <= ROWS_DECODED_RATIO * stored;
}

/* Every row stream of bd decompressed into bd->decoded, from one read of
 * the ROWS section (rows_kept_decoded). */
static int decode_rows(struct reader *r, struct pstore_block *b, struct pstore_bdata *bd,
		       struct ember_diag *d)
{
	struct pstore_rows_decoded *dec = &bd->decoded;
	const struct pstore_section *sec = &b->meta.sec[PS_SEC_ROWS];
	struct ember_buf rows, one;
	struct ZSTD_DCtx_s *z = ZSTD_createDCtx();
	size_t total = (size_t)rows_raw(bd); /* at most ROWS_DECODED_MAX */
	int err = z ? 0 : -ENOMEM;

	ember_buf_init(&rows, 0);
	ember_buf_init(&one, 0);
	if (!err && (!(dec->data = malloc(total + 1)) ||
		     !(dec->off = calloc(bd->streams.n + 1, sizeof(*dec->off)))))
		err = -ENOMEM;
	if (!err)
		err = read_range(r, sec->off, sec->stored, &rows, d);
	for (size_t i = 0; !err && i < bd->streams.n; i++) {
		const struct pstore_stream *st = &bd->streams.v[i];

		ember_buf_reset(&one);
		if (st->kind != PS_STREAM_DERIVED && st->stored) /* else no bytes */
			err = pstore_stream_load(st, (const uint8_t *)rows.data + st->off,
						 (size_t)st->stored, z, &one, d);
		if (!err && one.len)
			memcpy(dec->data + dec->off[i], one.data, one.len);
		dec->off[i + 1] = dec->off[i] + one.len;
	}
	ember_buf_release(&rows);
	ember_buf_release(&one);
	ZSTD_freeDCtx(z);
	return err;
}

/* Read and decode what a query needs (block_query.c, cache.c); without
 * the dictionary when !with_dict (scans of totals: it stays empty). */
static int block_load(struct pstore_block *b, bool with_dict, struct pstore_bdata **out,
		      struct ember_diag *d)
{
	struct reader r = { .io = b->io, .name = b->name, .size = b->size };
	struct pstore_bdata *bd = calloc(1, sizeof(*bd));
	int err;

	ember_buf_init(&r.prefix, 0);
	if (!bd)
		return -ENOMEM;
	if (b->io->fetch && (err = b->io->fetch(b->io->ctx, b->name)))
		pr_debug("pstore: cannot bring '%s' whole: %s", b->name, pstore_strerror(err));
	atomic_init(&bd->refs, 1);
	char why[200] = "";
	struct ember_diag sd = ember_diag_make(why, sizeof(why));

	err = pmodel_dict_init(&bd->dict);
	if (!err)
		err = load_rows_index(&r, b, bd, &sd);
	if (!err && with_dict)
		err = load_dict(&r, b, bd, &sd);
	if (!err && with_dict && rows_kept_decoded(b, bd))
		err = decode_rows(&r, b, bd, &sd);
	else if (!err && with_dict) /* a query's: it reads the rows */
		err = pstore_frames_init(&bd->frames, bd);
	if (err) {
		pstore_bdata_unref(bd);
		if (err == -PSTORE_ERR_CORRUPT)
			return EMBER_FAIL(d, err, "block '%s' is corrupt: %s", b->name, why);
		return EMBER_FAIL(d, err, "%s", why[0] ? why : pstore_strerror(err));
	}
	bd->bytes = pmodel_dict_bytes(&bd->dict) + bd->profs.alloc * sizeof(struct pstore_prof) +
		    bd->totals.alloc * 8 + bd->cov.alloc * sizeof(struct pstore_cov) +
		    bd->streams.alloc * sizeof(struct pstore_stream) +
		    bd->rollup.alloc * sizeof(struct pstore_rollup_prof) +
		    pstore_linktab_bytes(&bd->links) + pstore_frames_bytes(&bd->frames) +
		    (bd->decoded.off ? bd->decoded.off[bd->streams.n] +
					       (bd->streams.n + 1) * sizeof(size_t)
				     : 0);
	*out = bd;
	return 0;
}

int pstore_block_load(struct pstore_block *b, struct pstore_bdata **out, struct ember_diag *d)
{
	return block_load(b, true, out, d);
}

int pstore_block_load_profiles(struct pstore_block *b, struct pstore_bdata **out,
			       struct ember_diag *d)
{
	return block_load(b, false, out, d);
}

/* Say err (of reading or decoding b's rows, said in why) in d. */
static int rows_error(const struct pstore_block *b, int err, const char *why,
		      struct ember_diag *d)
{
	if (err == -PSTORE_ERR_CORRUPT)
		return EMBER_FAIL(d, err, "block '%s' is corrupt: %s", b->name, why);
	return EMBER_FAIL(d, err, "%s", why[0] ? why : pstore_strerror(err));
}

int pstore_block_read_rows(struct pstore_block *b, uint64_t off, uint64_t len,
			   struct pstore_rows_reader *rd, struct ember_diag *d)
{
	struct reader r = { .io = b->io, .name = b->name, .size = b->size };
	char why[200] = "";
	struct ember_diag sd = ember_diag_make(why, sizeof(why));
	int err;

	ember_buf_init(&r.prefix, 0);
	rd->off = off;
	err = read_range(&r, b->meta.sec[PS_SEC_ROWS].off + off, len, &rd->win, &sd);
	if (err)
		ember_buf_reset(&rd->win);
	else
		rd->bytes += len;
	return err ? rows_error(b, err, why, d) : 0;
}

/* Whether rd's window holds bytes [off, off + len) of the ROWS section. */
static bool in_window(const struct pstore_rows_reader *rd, uint64_t off, uint64_t len)
{
	return rd && rd->win.len && off >= rd->off && len <= rd->win.len &&
	       off - rd->off <= rd->win.len - len;
}

/* Bytes [off, off + len) of b's ROWS section: in rd's window (*at into
 * it) or read into buf (*at into buf, counted in rd). */
static int rows_at(struct pstore_block *b, uint64_t off, uint64_t len,
		   struct pstore_rows_reader *rd, struct ember_buf *buf, const uint8_t **at,
		   struct ember_diag *d)
{
	struct reader r = { .io = b->io, .name = b->name, .size = b->size };

	if (in_window(rd, off, len)) {
		*at = (const uint8_t *)rd->win.data + (off - rd->off);
		return 0;
	}
	ember_buf_init(&r.prefix, 0);
	EMBER_FORWARD_IF_ERROR(read_range(&r, b->meta.sec[PS_SEC_ROWS].off + off, len, buf, d));
	*at = (const uint8_t *)buf->data;
	if (rd)
		rd->bytes += len;
	return 0;
}

bool pstore_rows_decoded_get(const struct pstore_bdata *bd, size_t si, const uint8_t **p,
			     size_t *len)
{
	if (!bd->decoded.off)
		return false;
	*p = bd->decoded.data + bd->decoded.off[si];
	*len = bd->decoded.off[si + 1] - bd->decoded.off[si];
	return true;
}

/* p[0..len) (a stream decoded when its data was loaded) into out, for a
 * caller that reads into a buffer of its own (a merge). */
static int copy_decoded(const uint8_t *p, size_t len, struct ember_buf *out)
{
	ember_buf_reset(out);
	out->cap = len + 1;
	return ember_buf_append(out, p, len);
}

/* Frames [f0, f1) of stream st (stream si of bd, whose frame table is
 * taught where its frames lie when the whole stream is read; bd NULL:
 * none) into out. */
static int read_frames(struct pstore_block *b, const struct pstore_stream *st,
		       struct pstore_bdata *bd, size_t si, size_t f0, size_t f1,
		       struct pstore_rows_reader *rd, struct ember_buf *out, struct ember_diag *d)
{
	struct ZSTD_DCtx_s *z = rd ? rd->z : NULL;
	uint64_t a, e;
	struct ember_buf stored;
	const uint8_t *p;
	size_t len;
	int err;

	if (bd && f0 == 0 && pstore_rows_decoded_get(bd, si, &p, &len)) /* one frame */
		return copy_decoded(p, len, out);
	ember_buf_init(&stored, 0);
	if (bd && pstore_frames_span(&bd->frames, si, f0, f1, &a, &e)) {
		err = rows_at(b, st->off + a, e - a, rd, &stored, &p, d);
		if (!err)
			err = pstore_stream_load_part(st, p, (size_t)(e - a), z, out, d);
	} else {
		err = rows_at(b, st->off, st->stored, rd, &stored, &p, d);
		if (!err && bd)
			pstore_frames_learn(&bd->frames, si, p, (size_t)st->stored);
		if (!err)
			err = pstore_stream_load_frames(st, p, (size_t)st->stored, f0, f1, z, out,
							d);
	}
	ember_buf_release(&stored);
	return err;
}

int pstore_block_read_frames_z(struct pstore_block *b, struct pstore_bdata *bd, size_t si,
			       size_t f0, size_t f1, struct pstore_rows_reader *rd,
			       struct ember_buf *out, struct ember_diag *d)
{
	char why[200] = "";
	struct ember_diag sd = ember_diag_make(why, sizeof(why));
	int err = read_frames(b, &bd->streams.v[si], bd, si, f0, f1, rd, out, &sd);

	return err ? rows_error(b, err, why, d) : 0;
}

int pstore_block_read_stream(struct pstore_block *b, const struct pstore_bdata *bd,
			     const struct pstore_stream *st, struct ember_buf *out,
			     struct ember_diag *d)
{
	char why[200] = "";
	struct ember_diag sd = ember_diag_make(why, sizeof(why));
	const uint8_t *p;
	size_t len;
	int err;

	if (bd && pstore_rows_decoded_get(bd, (size_t)(st - bd->streams.v), &p, &len))
		return copy_decoded(p, len, out);
	err = read_frames(b, st, NULL, 0, 0, SIZE_MAX, NULL, out, &sd);
	return err ? rows_error(b, err, why, d) : 0;
}

/* ---- the store's list ------------------------------------------------------------- */

/* Whether b has data within the series window: its series count
 * against max_series (issue 23: old data must not hold the limit). */
static bool recent(const struct pstore *s, const struct pstore_block *b)
{
	int64_t lo, hi;

	pstore_block_span(s, b, &lo, &hi);
	return hi >= pstore_now(s) - s->lim.series_window_ns;
}

static void uncount(struct pstore *s, struct pstore_block *b)
{
	for (size_t k = 0; b->counted && k < b->series.series.n; k++)
		pstore_keys_remove(s->keys, b->series.series.v[k].key);
	b->counted = false;
}

int pstore_catalog_add(struct pstore *s, struct pstore_block *b)
{
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&s->blocks, b));
	if (!recent(s, b))
		return 0;
	b->counted = true;
	for (size_t i = 0; i < b->series.series.n; i++)
		if (pstore_keys_add(&s->keys, b->series.series.v[i].key)) {
			for (size_t k = 0; k < i; k++) /* b counts wholly or not at all */
				pstore_keys_remove(s->keys, b->series.series.v[k].key);
			b->counted = false;
			return -ENOMEM;
		}
	return 0;
}

void pstore_catalog_age(struct pstore *s)
{
	for (size_t i = 0; i < s->blocks.n; i++)
		if (s->blocks.v[i]->counted && !recent(s, s->blocks.v[i]))
			uncount(s, s->blocks.v[i]);
}

void pstore_catalog_remove(struct pstore *s, size_t i)
{
	struct pstore_block *b = s->blocks.v[i];

	uncount(s, b);
	memmove(s->blocks.v + i, s->blocks.v + i + 1, (s->blocks.n - i - 1) * sizeof(*s->blocks.v));
	s->blocks.n--;
	b->doomed = !s->index; /* shared: another replica may read it */
	pstore_cache_drop(&s->cache, b);
	pstore_block_unref(b);
}

struct listing {
	EMBER_VEC(char *) names;
	EMBER_VEC(uint64_t) sizes;
};

static int on_name(void *arg, const char *name, uint64_t size)
{
	struct listing *l = arg;
	size_t n = strlen(name);
	char *copy;

	if (n < 5 || strcmp(name + n - 5, ".pblk") != 0)
		return 0;
	copy = strdup(name);
	if (!copy || EMBER_VEC_APPEND(&l->names, copy) || EMBER_VEC_APPEND(&l->sizes, size)) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

static bool is_parent(const struct pstore *s, const char *name)
{
	for (size_t i = 0; i < s->blocks.n; i++)
		for (size_t k = 0; k < s->blocks.v[i]->meta.parents.n; k++)
			if (strcmp(s->blocks.v[i]->meta.parents.v[k], name) == 0)
				return true;
	return false;
}

/* A corrupt block's partition, from its name "blocks/<hex>-...". */
static void partition_from_name(struct pstore_block *b)
{
	const char *p = strrchr(b->name, '/');

	b->meta.partition = (int64_t)strtoull(p ? p + 1 : b->name, NULL, 16);
}

void pstore_catalog_seed(struct pstore *s, const struct pstore_block *b)
{
	const struct pstore_lindex *ix = &b->lindex;

	for (size_t i = 0; i < ix->names.n; i++)
		for (uint32_t k = 0; k < ix->names.v[i].nvals; k++)
			pstore_unbounded_seed(
				s->unbounded, pmodel_str(&b->series.str, ix->names.v[i].name),
				pmodel_str(&b->series.str,
					   ix->vals.v[ix->names.v[i].val_off + k].value));
}

/* Drop the blocks a compaction replaced before a crash let it delete them. */
static void drop_superseded(struct pstore *s)
{
	for (size_t i = s->blocks.n; i-- > 0;)
		if (is_parent(s, s->blocks.v[i]->name)) {
			pr_info("pstore: '%s' was compacted into another block: deleting it",
				s->blocks.v[i]->name);
			pstore_catalog_remove(s, i);
		}
}

static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->names.n; i++)
		free(l->names.v[i]);
	EMBER_VEC_FREE(&l->names);
	EMBER_VEC_FREE(&l->sizes);
}

/* A local store's rollups (rollups/): one without its ROLLUP section is
 * listed as corrupt, never read as a block of full resolution. */
static int load_rollups(struct pstore *s, struct ember_diag *d)
{
	struct listing l = { 0 };
	int err = s->io.list(s->io.ctx, "rollups/", on_name, &l);

	if (err)
		err = EMBER_FAIL(d, err, "store: cannot list the rollups: %s", pstore_strerror(err));
	for (size_t i = 0; !err && i < l.names.n; i++) {
		struct pstore_block *b;

		err = pstore_block_open(&s->io, l.names.v[i], l.sizes.v[i], &s->ident, &b, d);
		if (err)
			break;
		if (!b->corrupt && !b->meta.rollup_step) {
			b->corrupt = true;
			snprintf(b->why, sizeof(b->why), "not a rollup: no ROLLUP section");
		}
		if (b->corrupt) {
			partition_from_name(b);
			pr_warn("pstore: rollup '%s' is corrupt: %s", b->name, b->why);
		}
		if ((err = EMBER_VEC_APPEND(&s->rollups, b)))
			pstore_block_unref(b);
	}
	listing_free(&l);
	if (!err)
		pstore_rollups_tidy(s);
	return err;
}

int pstore_catalog_load(struct pstore *s, struct ember_diag *d)
{
	struct listing l = { 0 };
	int err;

	if (s->index)
		return pstore_index_refresh(s, NULL, d);
	err = s->io.list(s->io.ctx, "blocks/", on_name, &l);

	if (err)
		err = EMBER_FAIL(d, err, "store: cannot list the blocks: %s", pstore_strerror(err));
	for (size_t i = 0; !err && i < l.names.n; i++) {
		struct pstore_block *b;

		err = pstore_block_open(&s->io, l.names.v[i], l.sizes.v[i], &s->ident, &b, d);
		if (err)
			break;
		if (b->corrupt) {
			partition_from_name(b);
			pr_warn("pstore: block '%s' is corrupt: %s", b->name, b->why);
		} else {
			pstore_catalog_seed(s, b);
		}
		err = pstore_catalog_add(s, b);
	}
	if (!err)
		drop_superseded(s);
	listing_free(&l);
	return err ? err : load_rollups(s, d);
}
