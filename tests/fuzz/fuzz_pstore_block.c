/*
 * fuzz_pstore_block.c - libFuzzer target for the profile store's block
 * decoder (profile-store/block_decode.c, block_catalog.c, block_rows.c): any
 * bytes as a block file behind an in-memory block storage, opened as the
 * store opens blocks (header, meta, series, label index), then loaded as
 * a query loads one (dictionary, profiles, stream directory, links) and
 * every row stream decoded and summed, with and without a link filter,
 * and of a framed block (version 3) its first and second frames alone,
 * as a query of a part of the time range reads them.  A damaged block must be reported as
 * corrupt (-PSTORE_ERR_CORRUPT), never crash, never read outside its
 * bytes, never allocate past what it holds.  Seeds in corpus/pstore_block/
 * (make_pstore_seeds.c).
 */
#include "pstore_block.h"
#include "pstore_catalog.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
	const uint8_t *data;
	size_t size;
};

static int mem_get(void *ctx, const char *name, uint64_t off, size_t len, struct ember_buf *out)
{
	const struct mem *m = ctx;

	(void)name;
	if (off > m->size)
		off = m->size;
	if (!len || len > m->size - off)
		len = (size_t)(m->size - off);
	return ember_buf_append(out, m->data + off, len);
}

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

/* Series s's link stream into in, for a sum with want (the attributed
 * parts into parts): -1 when the series has none (a version 1 block, or
 * no row with a link). */
static int with_links(struct pstore_block *b, struct pstore_bdata *bd, uint32_t s,
		      const uint8_t *want, struct ember_buf *lb, struct pstore_sum_in *in,
		      struct pstore_attr_parts *parts, struct ember_diag *d)
{
	const struct pstore_stream *ls = pstore_link_stream(bd, &b->series, s);

	if (!ls || !want || pstore_block_read_stream(b, bd, ls, lb, d))
		return -1;
	in->want = want;
	in->nlinks = (uint32_t)bd->links.v.n;
	in->links = (const uint8_t *)lb->data;
	in->links_end = in->links + lb->len;
	in->tab = &bd->links;
	in->parts = parts;
	return 0;
}

/* Stream st's (one of bd's) frames [f0, f0 + 1) of a framed block (f0
 * SIZE_MAX: all of them) into out: the first frame's read teaches bd's
 * frame table, by which the second is read. */
static int read_part(struct pstore_block *b, struct pstore_bdata *bd,
		     const struct pstore_stream *st, size_t f0, struct ember_buf *out,
		     struct ember_diag *d)
{
	if (f0 == SIZE_MAX)
		return pstore_block_read_stream(b, bd, st, out, d);
	return pstore_block_read_frames_z(b, bd, (size_t)(st - bd->streams.v), f0, f0 + 1, NULL,
					  out, d);
}

/* One pass over every series (want: with a link filter; f0: its frame
 * f0 alone, SIZE_MAX: all). */
static void sum_pass(struct pstore_block *b, struct pstore_bdata *bd, const uint8_t *want,
		     size_t f0, struct ember_buf *lb)
{
	size_t nn = pmodel_dict_nodes(&bd->dict);
	int64_t *self = calloc(nn, sizeof(*self));
	struct pmodel_result r = { .min_time = INT64_MAX, .max_time = INT64_MIN };
	struct pstore_attr_parts parts = { 0 };
	struct ember_buf sb, vb;
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err;

	ember_buf_init(&sb, 0);
	ember_buf_init(&vb, 0);
	for (uint32_t s = 0; self && s < b->series.series.n; s++) {
		uint32_t first = bd->series_stream.v[s];
		struct pstore_sum_in in = { .profs = bd->profs.v, .p_first = bd->series_prof.v[s],
					.p_end = bd->series_prof.v[s + 1], .from = INT64_MIN,
					.to = INT64_MAX, .nnodes = (uint32_t)nn, .r = &r };
		const struct pstore_stream *vs;

		if (in.p_first == in.p_end)
			continue;
		if (f0 != SIZE_MAX) {
			if (in.p_end - in.p_first <= f0 * PS_FRAME_PROFILES)
				continue;
			in.p_first += f0 * PS_FRAME_PROFILES;
			if (in.p_end - in.p_first > PS_FRAME_PROFILES)
				in.p_end = in.p_first + PS_FRAME_PROFILES;
		}
		vs = &bd->streams.v[first + 1];
		in.factor = vs->factor;
		if (vs->kind == PS_STREAM_DERIVED)
			vs = &bd->streams.v[first + 1 + vs->ref];
		if ((want && with_links(b, bd, s, want, lb, &in, &parts, &d)) ||
		    read_part(b, bd, &bd->streams.v[first], f0, &sb, &d) ||
		    read_part(b, bd, vs, f0, &vb, &d))
			continue;
		in.stacks = (const uint8_t *)sb.data;
		in.stacks_end = in.stacks + sb.len;
		in.vals = (const uint8_t *)vb.data;
		in.vals_end = in.vals + vb.len;
		err = pstore_rows_sum(&in, self, &d);
		if (err && err != -PSTORE_ERR_CORRUPT)
			abort();
	}
	ember_buf_release(&sb);
	ember_buf_release(&vb);
	EMBER_VEC_FREE(&parts);
	free(self);
}

/* Every series' rows, summed over all time (what a query does), again
 * for every link (what a query by span does), and of a framed block its
 * first and second frames (what a query of part of its time does). */
static void sum_all(struct pstore_block *b, struct pstore_bdata *bd)
{
	uint8_t *want = malloc(bd->links.v.n + 1);
	struct ember_buf lb;

	ember_buf_init(&lb, 0);
	if (want)
		memset(want, 1, bd->links.v.n + 1);
	for (int pass = 0; pass < 2; pass++)
		sum_pass(b, bd, pass ? want : NULL, SIZE_MAX, &lb);
	for (size_t f = 0; bd->framed && f < 2; f++)
		sum_pass(b, bd, NULL, f, &lb);
	ember_buf_release(&lb);
	free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	struct pstore_blockio io = { .sz = sizeof(io), .ctx = &m, .get = mem_get };
	struct pstore_block *b = NULL;
	struct pstore_bdata *bd = NULL;
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct ember_hash_key ident = { 1, 2 }; /* the series keys' (any will do) */
	int err;

	ember_log_set_handler(quiet, NULL);
	if (pstore_block_open(&io, "blocks/fuzz.pblk", size, &ident, &b, &d))
		abort(); /* memory reads cannot fail: corruption is b->corrupt */
	if (!b->corrupt) {
		err = pstore_block_load(b, &bd, &d);
		if (err && err != -PSTORE_ERR_CORRUPT && err != -ENOMEM)
			abort();
		if (!err)
			sum_all(b, bd);
	}
	pstore_bdata_unref(bd);
	pstore_block_unref(b);
	return 0;
}
