/*
 * block_encode.c - one partition's profiles written as a block
 * (docs/profile-store-format.md): the series sorted by their labels, the
 * profiles by series then time, the dictionary reduced to what these
 * profiles reach (interned afresh, so a merge of blocks stores each
 * function, location and stack once), the rows as per-series streams
 * (block_rows.c), every section zstd-compressed with a checksum, and the
 * file named by its content: "blocks/<partition>-<sha256>.pblk".  Blocks
 * are written as version 3 (row streams framed by PS_FRAME_PROFILES
 * profiles); one whose rows name links (spans) has a link stream a series
 * and the LINKS section.
 */
#include "pstore_block.h"
#include "pstore_bytes.h"
#include "pstore_series.h"

#include <stdio.h>
#include <zstd.h>

struct enc {
	const struct pstore_block_src *src;
	struct pstore_seriestab bt;	    /* the block's series table */
	uint32_t *series_map;	    /* source series -> block series */
	uint32_t *order;	    /* selected profiles, sorted */
	struct pmodel_dict bd;	    /* the block's dictionary */
	struct pmodel_import im;	    /* source dictionary -> bd */
	struct ember_buf sec[PS_SEC_KIND_MAX];
	ZSTD_CCtx *cctx;
	uint64_t rows;
	bool linked;		    /* link streams and LINKS */
	struct pstore_linktab links; /* the block's links */
	uint32_t *link_map;	    /* source link id -> block id, UINT32_MAX unset */
};

/* ---- series ------------------------------------------------------------------ */

static int cmp_series(const void *a, const void *b, void *ctx)
{
	const struct pstore_seriestab *t = ctx;
	const struct pstore_series *x = &t->series.v[*(const uint32_t *)a],
			       *y = &t->series.v[*(const uint32_t *)b];

	for (uint32_t i = 0; i < x->nlabels && i < y->nlabels; i++) {
		const struct pstore_lpair *p = &t->pairs.v[x->label_off + i],
				      *q = &t->pairs.v[y->label_off + i];
		int c = strcmp(pmodel_str(&t->str, p->name), pmodel_str(&t->str, q->name));

		if (!c)
			c = strcmp(pmodel_str(&t->str, p->value), pmodel_str(&t->str, q->value));
		if (c)
			return c;
	}
	if (x->nlabels != y->nlabels)
		return x->nlabels < y->nlabels ? -1 : 1;
	for (uint32_t i = 0; i < x->ntypes && i < y->ntypes; i++) { /* keys are random */
		int c = strcmp(pstore_type_str(t, t->type_ids.v[x->type_off + i]),
			       pstore_type_str(t, t->type_ids.v[y->type_off + i]));

		if (c)
			return c;
	}
	return x->ntypes < y->ntypes ? -1 : x->ntypes > y->ntypes;
}

static int copy_series(struct enc *e, uint32_t s)
{
	return pstore_seriestab_copy(&e->bt, e->src->series, s, &e->series_map[s]);
}

static int build_series(struct enc *e)
{
	const struct pstore_seriestab *t = e->src->series;
	uint8_t *used = calloc(t->series.n + 1, 1);
	uint32_t *list = malloc((t->series.n + 1) * sizeof(*list));
	size_t n = 0;
	int err = 0;

	e->series_map = malloc((t->series.n + 1) * sizeof(*e->series_map));
	if (!used || !list || !e->series_map) {
		free(used);
		free(list);
		return -ENOMEM;
	}
	for (size_t i = 0; i < e->src->nsel; i++)
		used[e->src->profs[e->src->sel[i]].series] = 1;
	for (uint32_t s = 0; s < t->series.n; s++)
		if (used[s])
			list[n++] = s;
	ember_qsort_r(list, n, sizeof(*list), cmp_series, (void *)t);
	for (size_t i = 0; !err && i < n; i++)
		err = copy_series(e, list[i]);
	free(used);
	free(list);
	return err;
}

static int cmp_prof(const void *a, const void *b, void *ctx)
{
	const struct enc *e = ctx;
	const struct pstore_prof *x = &e->src->profs[*(const uint32_t *)a],
			     *y = &e->src->profs[*(const uint32_t *)b];
	uint32_t sx = e->series_map[x->series], sy = e->series_map[y->series];

	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int sort_profiles(struct enc *e)
{
	e->order = malloc((e->src->nsel + 1) * sizeof(*e->order));
	if (!e->order)
		return -ENOMEM;
	ember_memcpy(e->order, e->src->sel, e->src->nsel * sizeof(*e->order));
	ember_qsort_r(e->order, e->src->nsel, sizeof(*e->order), cmp_prof, e);
	return 0;
}

/* ---- dictionary: what the selected profiles reach ------------------------------ */

static int build_dict(struct enc *e)
{
	const struct pmodel_dict *sd = e->src->dict;
	size_t nn = pmodel_dict_nodes(sd);
	uint8_t *used = calloc(nn, 1);
	int err = 0;

	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < e->src->nsel; i++) {
		const struct pstore_prof *p = &e->src->profs[e->src->sel[i]];

		for (uint32_t r = 0; r < p->nrows; r++)
			used[e->src->row_node[p->row_off + r]] = 1;
	}
	err = pmodel_dict_init(&e->bd);
	if (!err)
		err = pmodel_import_init(&e->im, sd, &e->bd);
	for (uint32_t n = 1; !err && n < nn; n++) {
		uint32_t to;

		if (used[n])
			err = pmodel_import_node(&e->im, n, &to);
	}
	free(used);
	return err;
}

/* ---- sections -------------------------------------------------------------------- */

static int put_strings(struct ember_buf *b, const struct pmodel_strtab *t)
{
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, pmodel_strtab_count(t) - 1));
	for (uint32_t i = 1; i < pmodel_strtab_count(t); i++) {
		const char *s = pmodel_str(t, i);

		EMBER_FORWARD_IF_ERROR(ember_buf_put_lenbytes(b, s, strlen(s)));
	}
	return 0;
}

static int sec_meta(struct enc *e, struct ember_buf *b)
{
	const struct pstore_block_src *s = e->src;

	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->nparents));
	for (size_t i = 0; i < s->nparents; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_lenbytes(b, s->parents[i], strlen(s->parents[i])));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->nwal));
	for (size_t i = 0; i < s->nwal; i++) {
		EMBER_FORWARD_IF_ERROR(ember_buf_append(b, s->wal[i].writer, 16));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->wal[i].lo));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->wal[i].hi));
	}
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->nsel));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, e->rows));
	return ember_buf_put_uleb(b, e->bt.series.n);
}

static int sec_series(struct enc *e, struct ember_buf *b)
{
	const struct pstore_seriestab *t = &e->bt;

	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->types.n));
	for (size_t i = 0; i < t->types.n; i++) {
		for (int k = 0; k < 5; k++)
			EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->types.v[i].f[k]));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->types.v[i].id));
	}
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->series.n));
	for (size_t i = 0; i < t->series.n; i++) {
		const struct pstore_series *s = &t->series.v[i];

		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->ntypes));
		for (uint32_t k = 0; k < s->ntypes; k++)
			EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->type_ids.v[s->type_off + k]));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->nlabels));
		for (uint32_t k = 0; k < s->nlabels; k++) {
			EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->pairs.v[s->label_off + k].name));
			EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->pairs.v[s->label_off + k].value));
		}
	}
	return 0;
}

static int sec_labels(struct enc *e, struct ember_buf *b)
{
	struct pstore_lindex ix;
	int err = pstore_lindex_build(&ix, &e->bt);

	if (err)
		return err;
	err = ember_buf_put_uleb(b, ix.names.n);
	for (size_t i = 0; !err && i < ix.names.n; i++) {
		const struct pstore_lname *n = &ix.names.v[i];

		err = ember_buf_put_uleb(b, n->name) ?: ember_buf_put_uleb(b, n->nvals);
		for (uint32_t k = 0; !err && k < n->nvals; k++) {
			const struct pstore_lval *v = &ix.vals.v[n->val_off + k];
			uint32_t prev = 0;

			err = ember_buf_put_uleb(b, v->value) ?: ember_buf_put_uleb(b, v->npost);
			for (uint32_t j = 0; !err && j < v->npost; j++) {
				err = ember_buf_put_uleb(b, ix.post.v[v->post_off + j] - prev);
				prev = ix.post.v[v->post_off + j];
			}
		}
	}
	pstore_lindex_release(&ix);
	return err;
}

static int put_profile(struct enc *e, struct ember_buf *b, const struct pstore_prof *p,
		       uint32_t *prev_series, int64_t *prev_time)
{
	const struct pstore_block_src *s = e->src;
	uint32_t series = e->series_map[p->series];
	uint32_t ncols = e->bt.series.v[series].ntypes;

	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, series - *prev_series));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(b, (int64_t)((uint64_t)p->time - (uint64_t)*prev_time)));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(b, p->duration));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(b, p->period));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, p->nrows));
	for (uint32_t c = 0; c < ncols; c++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(b, s->totals[p->tot_off + c]));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, p->samples));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, p->resolved));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, p->ncov));
	for (uint32_t k = 0; k < p->ncov; k++) {
		const struct pstore_cov *c = &s->cov[p->cov_off + k];
		uint32_t bid, reason;

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&e->bt.str, pmodel_str(&s->series->str, c->build_id),
					     &bid));
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&e->bt.str, pmodel_str(&s->series->str, c->reason),
					     &reason));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, bid));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, reason));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, c->samples));
	}
	*prev_series = series;
	*prev_time = p->time;
	return 0;
}

static int sec_profiles(struct enc *e, struct ember_buf *b)
{
	uint32_t prev_series = 0;
	int64_t prev_time = 0;

	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, e->src->nsel));
	for (size_t i = 0; i < e->src->nsel; i++) {
		const struct pstore_prof *p = &e->src->profs[e->order[i]];

		EMBER_FORWARD_IF_ERROR(put_profile(e, b, p, &prev_series, &prev_time));
		e->rows += p->nrows;
	}
	return 0;
}

static int sec_functions(const struct pmodel_dict *d, struct ember_buf *b)
{
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->funcs.n));
	for (size_t i = 0; i < d->funcs.n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->funcs.v[i].name));
	for (size_t i = 0; i < d->funcs.n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->funcs.v[i].system_name));
	for (size_t i = 0; i < d->funcs.n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->funcs.v[i].filename));
	for (size_t i = 0; i < d->funcs.n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(b, d->funcs.v[i].start_line));
	return 0;
}

static int sec_mappings(const struct pmodel_dict *d, struct ember_buf *b)
{
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->maps.n));
	for (size_t i = 0; i < d->maps.n; i++) {
		const struct pmodel_map *m = &d->maps.v[i];

		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, m->start));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, m->limit - m->start));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, m->offset));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, m->filename));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, m->build_id));
	}
	return 0;
}

static int sec_locations(const struct pmodel_dict *d, struct ember_buf *b)
{
	uint64_t prev = 0;

	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->locs.n));
	for (size_t i = 0; i < d->locs.n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->locs.v[i].mapping));
	for (size_t i = 0; i < d->locs.n; i++) {
		EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(b, (int64_t)(d->locs.v[i].address - prev)));
		prev = d->locs.v[i].address;
	}
	for (size_t i = 0; i < d->locs.n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->locs.v[i].nlines));
	for (size_t i = 0; i < d->locs.n; i++)
		for (uint32_t k = 0; k < d->locs.v[i].nlines; k++) {
			const struct pmodel_line *l = &d->lines.v[d->locs.v[i].line_off + k];

			EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, l->func));
			EMBER_FORWARD_IF_ERROR(ember_buf_put_zigzag(b, l->line));
		}
	return 0;
}

/* LOCATION_TYPES, when a location has a frame type (else no section: a
 * block without types is the bytes it was before the section existed). */
static int sec_location_types(const struct pmodel_dict *d, struct ember_buf *b)
{
	size_t typed = 0;

	for (size_t i = 0; i < d->locs.n; i++)
		typed += d->locs.v[i].type != 0;
	if (!typed)
		return 0;
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->locs.n));
	for (size_t i = 0; i < d->locs.n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->locs.v[i].type));
	return 0;
}

static int sec_nodes(const struct pmodel_dict *d, struct ember_buf *b)
{
	size_t n = pmodel_dict_nodes(d);

	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, n - 1));
	for (size_t i = 1; i < n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, i - d->node_parent.v[i]));
	for (size_t i = 1; i < n; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, d->node_loc.v[i]));
	return 0;
}

/* ROWS and STREAMS: each series' streams in series order. */
static int sec_rows(struct enc *e, struct ember_buf *rows, struct ember_buf *dir)
{
	const struct pstore_prof **profs = malloc((e->src->nsel + 1) * sizeof(*profs));
	struct pstore_streams streams = { 0 };
	size_t i = 0;
	int err = profs ? 0 : -ENOMEM;

	while (!err && i < e->src->nsel) {
		uint32_t series = e->series_map[e->src->profs[e->order[i]].series];
		struct pstore_rows_in in = { .profs = profs, .row_node = e->src->row_node,
					 .row_val = e->src->row_val, .node_map = e->im.node,
					 .ncols = e->bt.series.v[series].ntypes, .cctx = e->cctx };

		if (e->linked) {
			in.row_link = e->src->row_link;
			in.src_links = e->src->links;
			in.links = &e->links;
			in.link_map = e->link_map;
		}

		for (; i < e->src->nsel &&
		       e->series_map[e->src->profs[e->order[i]].series] == series; i++)
			profs[in.nprofs++] = &e->src->profs[e->order[i]];
		err = pstore_rows_encode(&in, rows, &streams);
	}
	if (!err)
		err = ember_buf_put_uleb(dir, streams.n);
	for (size_t k = 0; !err && k < streams.n; k++) {
		const struct pstore_stream *st = &streams.v[k];

		err = ember_buf_put_uleb(dir, st->kind) ?: ember_buf_put_uleb(dir, st->ref) ?:
		      ember_buf_put_zigzag(dir, st->factor) ?: ember_buf_put_uleb(dir, st->stored) ?:
		      ember_buf_put_uleb(dir, st->raw);
	}
	EMBER_VEC_FREE(&streams);
	free(profs);
	return err;
}

/* Whether a selected profile's rows name links: then the block has link
 * streams and LINKS, and link_map is made. */
static int find_links(struct enc *e)
{
	const struct pstore_block_src *src = e->src;
	size_t n = src->links ? src->links->v.n : 0;

	for (size_t i = 0; src->row_link && i < src->nsel && !e->linked; i++)
		e->linked = src->profs[src->sel[i]].link_off != PS_NO_LINKS;
	if (!e->linked)
		return 0;
	if (!(e->link_map = malloc((n + 1) * sizeof(*e->link_map))))
		return -ENOMEM;
	memset(e->link_map, 0xff, (n + 1) * sizeof(*e->link_map));
	return 0;
}

/* LINKS: varint m, m attribute sets (varint length, the text; ids 1..m);
 * varint n, n x (16 bytes trace ID, 8 bytes span ID, varint set id). */
static int sec_links(const struct pstore_linktab *t, struct ember_buf *b)
{
	size_t m = t->ready ? pmodel_strtab_count(&t->attrs) - 1 : 0;

	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, m));
	for (uint32_t i = 1; i <= m; i++) {
		const char *s = pmodel_str(&t->attrs, i);
		size_t len = strlen(s);

		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, len));
		EMBER_FORWARD_IF_ERROR(ember_buf_append(b, s, len));
	}
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->v.n));
	for (size_t i = 0; i < t->v.n; i++) {
		EMBER_FORWARD_IF_ERROR(ember_buf_append(b, t->v.v[i].trace, 16));
		EMBER_FORWARD_IF_ERROR(ember_buf_append(b, t->v.v[i].span, 8));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, t->v.v[i].attrs));
	}
	return 0;
}

/* ROLLUP (a rollup's only): varint step; varint profiles summed (the sum
 * of the counts below); varint n, n x str source block; varint p (the
 * profile count), per profile in PROFILES order: varint profiles it sums
 * (>= 1), varint time of the last minus its time. */
static int sec_rollup(const struct enc *e, struct ember_buf *b)
{
	const struct pstore_block_src *s = e->src;
	uint64_t total = 0;

	for (size_t i = 0; i < s->nsel; i++)
		total += s->rollup[s->sel[i]].count;
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, (uint64_t)s->rollup_step));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, total));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->nsources));
	for (size_t i = 0; i < s->nsources; i++)
		EMBER_FORWARD_IF_ERROR(ember_buf_put_lenbytes(b, s->sources[i], strlen(s->sources[i])));
	EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, s->nsel));
	for (size_t i = 0; i < s->nsel; i++) {
		const struct pstore_rollup_prof *r = &s->rollup[e->order[i]];

		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, r->count));
		EMBER_FORWARD_IF_ERROR(ember_buf_put_uleb(b, (uint64_t)(r->last -
								s->profs[e->order[i]].time)));
	}
	return 0;
}

static int build_sections(struct enc *e)
{
	struct ember_buf *s = e->sec;

	EMBER_FORWARD_IF_ERROR(find_links(e));

	EMBER_FORWARD_IF_ERROR(build_series(e));
	EMBER_FORWARD_IF_ERROR(sort_profiles(e));
	EMBER_FORWARD_IF_ERROR(build_dict(e));
	EMBER_FORWARD_IF_ERROR(sec_profiles(e, &s[PS_SEC_PROFILES])); /* interns coverage strings */
	EMBER_FORWARD_IF_ERROR(sec_meta(e, &s[PS_SEC_META]));
	EMBER_FORWARD_IF_ERROR(put_strings(&s[PS_SEC_SERIES_STRINGS], &e->bt.str));
	EMBER_FORWARD_IF_ERROR(sec_series(e, &s[PS_SEC_SERIES]));
	EMBER_FORWARD_IF_ERROR(sec_labels(e, &s[PS_SEC_LABELS]));
	EMBER_FORWARD_IF_ERROR(put_strings(&s[PS_SEC_STRINGS], &e->bd.str));
	EMBER_FORWARD_IF_ERROR(sec_functions(&e->bd, &s[PS_SEC_FUNCTIONS]));
	EMBER_FORWARD_IF_ERROR(sec_mappings(&e->bd, &s[PS_SEC_MAPPINGS]));
	EMBER_FORWARD_IF_ERROR(sec_locations(&e->bd, &s[PS_SEC_LOCATIONS]));
	EMBER_FORWARD_IF_ERROR(sec_location_types(&e->bd, &s[PS_SEC_LOCATION_TYPES]));
	EMBER_FORWARD_IF_ERROR(sec_nodes(&e->bd, &s[PS_SEC_NODES]));
	EMBER_FORWARD_IF_ERROR(sec_rows(e, &s[PS_SEC_ROWS], &s[PS_SEC_STREAMS]));
	if (e->src->rollup_step)
		EMBER_FORWARD_IF_ERROR(sec_rollup(e, &s[PS_SEC_ROLLUP]));
	return e->linked ? sec_links(&e->links, &s[PS_SEC_LINKS]) : 0;
}

/* ---- the file ------------------------------------------------------------------- */

static int put_section(struct enc *e, struct ember_buf *out, uint32_t kind, uint8_t *entry)
{
	const struct ember_buf *raw = &e->sec[kind];
	uint32_t codec = kind == PS_SEC_ROWS ? 0 : 1;
	size_t off = out->len, n = raw->len;

	if (codec) {
		size_t bound = ZSTD_compressBound(raw->len);

		EMBER_FORWARD_IF_ERROR(ember_buf_reserve(out, bound));
		n = ZSTD_compress2(e->cctx, out->data + off, bound, raw->data ? raw->data : "",
				   raw->len);
		if (ZSTD_isError(n))
			return -ENOMEM;
		out->len += n;
	} else {
		EMBER_FORWARD_IF_ERROR(ember_buf_append(out, raw->data ? raw->data : "", raw->len));
	}
	pstore_le32(entry, kind);
	pstore_le32(entry + 4, codec);
	pstore_le64(entry + 8, off);
	pstore_le64(entry + 16, n);
	pstore_le64(entry + 24, raw->len);
	pstore_le64(entry + 32, kind == PS_SEC_ROWS ? 0 : ember_checksum64(out->data + off, n, kind));
	return 0;
}

static void put_header(struct enc *e, uint8_t *h, uint32_t nsec, int64_t min, int64_t max)
{
	ember_memcpy(h, PS_BLOCK_MAGIC, 8);
	pstore_le32(h + 8, PS_BLOCK_VERSION_FRAMES);
	pstore_le32(h + 12, nsec);
	pstore_le64(h + 16, (uint64_t)min);
	pstore_le64(h + 24, (uint64_t)max);
	pstore_le64(h + 32, (uint64_t)e->src->partition);
	pstore_le64(h + 40, (uint64_t)e->src->partition_ns);
}

static void time_range(const struct enc *e, int64_t *min, int64_t *max)
{
	*min = INT64_MAX;
	*max = INT64_MIN;
	for (size_t i = 0; i < e->src->nsel; i++) {
		uint32_t k = e->src->sel[i];
		int64_t t = e->src->profs[k].time,
			last = e->src->rollup ? e->src->rollup[k].last : t;

		*min = t < *min ? t : *min;
		*max = last > *max ? last : *max;
	}
}

/* Whether the block has section kind k: every required one, and those
 * of what it holds (frame types, links). */
static bool written(const struct enc *e, uint32_t k)
{
	return k <= PS_SEC_REQUIRED_MAX ||
	       (k == PS_SEC_LOCATION_TYPES && e->sec[PS_SEC_LOCATION_TYPES].len) ||
	       (k == PS_SEC_LINKS && e->linked) || (k == PS_SEC_ROLLUP && e->src->rollup_step);
}

static int assemble(struct enc *e, struct ember_buf *out, char name[PS_BLOCK_NAME_MAX])
{
	uint32_t nsec = 0;
	size_t hlen;
	uint8_t table[PS_BLOCK_HEADER + PS_SEC_KIND_MAX * PS_SECTION_ENTRY] = { 0 };
	int64_t min, max;

	for (uint32_t k = 1; k < PS_SEC_KIND_MAX; k++)
		nsec += written(e, k);
	hlen = PS_BLOCK_HEADER + (size_t)nsec * PS_SECTION_ENTRY;
	time_range(e, &min, &max);
	EMBER_FORWARD_IF_ERROR(ember_buf_append(out, table, hlen));
	for (uint32_t k = 1, i = 0; k < PS_SEC_KIND_MAX; k++)
		if (written(e, k))
			EMBER_FORWARD_IF_ERROR(put_section(e, out, k, table + PS_BLOCK_HEADER +
							   (size_t)i++ * PS_SECTION_ENTRY));
	put_header(e, table, nsec, min, max);
	pstore_le64(table + 48, ember_checksum64(table + PS_BLOCK_HEADER, hlen - PS_BLOCK_HEADER,
				    ember_checksum64(table, 48, 0)));
	ember_memcpy(out->data, table, hlen);
	if (e->src->rollup_step)
		return pstore_rollup_name(e->src->partition, out->data, out->len, name);
	return pstore_block_name(e->src->partition, out->data, out->len, name);
}

static void enc_release(struct enc *e)
{
	pstore_seriestab_release(&e->bt);
	free(e->series_map);
	free(e->order);
	free(e->link_map);
	pstore_linktab_release(&e->links);
	pmodel_import_release(&e->im);
	pmodel_dict_release(&e->bd);
	for (int k = 0; k < PS_SEC_KIND_MAX; k++)
		ember_buf_release(&e->sec[k]);
	ZSTD_freeCCtx(e->cctx);
}

int pstore_block_encode(const struct pstore_block_src *src, struct ember_buf *out,
		    char name[PS_BLOCK_NAME_MAX])
{
	struct enc e = { .src = src };
	int err;

	for (int k = 0; k < PS_SEC_KIND_MAX; k++)
		ember_buf_init(&e.sec[k], (size_t)PS_SECTION_MAX_RAW);
	err = pstore_seriestab_init(&e.bt, &src->series->ident);
	e.cctx = ZSTD_createCCtx();
	if (!err && !e.cctx)
		err = -ENOMEM;
	if (!err) {
		ZSTD_CCtx_setParameter(e.cctx, ZSTD_c_compressionLevel, src->zstd_level);
		ZSTD_CCtx_setParameter(e.cctx, ZSTD_c_checksumFlag, 1);
		err = build_sections(&e);
	}
	if (!err)
		err = assemble(&e, out, name);
	enc_release(&e);
	return err;
}
