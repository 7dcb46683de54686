/*
 * table_read.c - open a table (docs/unwind-format.md): check everything
 * once, then look rows up the way the eBPF unwinder does (page, then a
 * binary search of at most 16 steps in the page) and iterate the rows
 * with merges expanded, which is what `ember unwind dump` prints.
 *
 * Tables come from outside (the server's store, the network), so the
 * checks are complete: after unwind_table_new() succeeds every offset,
 * count and index is known to be in bounds and lookups check nothing.
 * The bytes may sit at any alignment: fields are read with memcpy.
 */
#include "unwind_internal.h"

#include <stdlib.h>
#include <zlib.h>

struct unwind_table {
	struct unwind_table_header hdr;	/* a copy */
	const uint8_t *rules, *pages, *data;
};

/* One page's arrays. */
struct page_view {
	uint64_t base;
	const uint8_t *palette, *pcs, *idx;
	size_t nrows, npalette;
	unsigned idx_size;
};

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static void page_get(const struct unwind_table *b, size_t i, struct unwind_page *p)
{
	memcpy(p, b->pages + i * sizeof(*p), sizeof(*p));
}

static void rule_get(const struct unwind_table *b, size_t id, struct unwind_rule *r)
{
	memcpy(r, b->rules + id * sizeof(*r), sizeof(*r));
}

static void view_of(const struct unwind_table *b, const struct unwind_page *p,
		    struct page_view *v)
{
	v->base = (uint64_t)p->page << UNWIND_PAGE_BITS;
	v->npalette = p->npalette;
	v->nrows = (size_t)p->nrows_m1 + 1;
	v->idx_size = p->npalette > 256 ? 2 : 1;
	v->palette = b->data + p->data_off;
	v->pcs = v->palette + 2 * v->npalette;
	v->idx = v->pcs + 2 * v->nrows;
}

static size_t view_idx(const struct page_view *v, size_t i)
{
	return v->idx_size == 2 ? rd16(v->idx + 2 * i) : v->idx[i];
}

static void view_rule(const struct unwind_table *b, const struct page_view *v,
		      size_t i, struct unwind_rule *r)
{
	rule_get(b, rd16(v->palette + 2 * view_idx(v, i)), r);
}

/* ---- checks ------------------------------------------------------------------ */

static int check_header(const struct unwind_table_header *h, size_t size,
			const uint8_t *data)
{
	struct unwind_table_header z = *h;
	uint32_t crc;

	if (memcmp(h->magic, UNWIND_TABLE_MAGIC, sizeof(h->magic)) != 0)
		return -UNWIND_ERR_BAD_TABLE;
	if (h->version != UNWIND_TABLE_VERSION)
		return -UNWIND_ERR_VERSION;
	if (h->header_size != sizeof(*h) || h->size != size ||
	    h->build_id_len > sizeof(h->build_id) || h->data_size % 8 ||
	    (uint64_t)sizeof(*h) + (uint64_t)h->nrules * sizeof(struct unwind_rule) +
			    (uint64_t)h->npages * sizeof(struct unwind_page) +
			    h->data_size != size)
		return -UNWIND_ERR_BAD_TABLE;
	if (h->machine != UNWIND_EM_X86_64 && h->machine != UNWIND_EM_AARCH64)
		return -UNWIND_ERR_ARCH;
	z.crc32 = 0;
	crc = crc32_z(0, (const Bytef *)&z, sizeof(z));
	crc = crc32_z(crc, data + sizeof(z), size - sizeof(z));
	return crc == h->crc32 ? 0 : -UNWIND_ERR_CHECKSUM;
}

static bool rule_ok(const struct unwind_rule *r)
{
	return r->cfa_kind < UNWIND_CFA_KIND_COUNT &&
	       (r->reg_kinds & 0x0f) < UNWIND_REG_KIND_COUNT &&
	       (r->reg_kinds >> 4) < UNWIND_REG_KIND_COUNT &&
	       !(r->flags & 0xc0) &&
	       (r->cfa_kind == UNWIND_CFA_REG || !(r->flags & UNWIND_MERGE_AT_MASK));
}

static int check_rules(const struct unwind_table *b)
{
	struct unwind_rule r;

	if (b->hdr.nrules > UNWIND_MAX_RULES)
		return -UNWIND_ERR_BAD_TABLE;
	for (size_t i = 0; i < b->hdr.nrules; i++) {
		rule_get(b, i, &r);
		if (!rule_ok(&r))
			return -UNWIND_ERR_BAD_TABLE;
	}
	return 0;
}

/* Rows strictly increasing from 0, indexes in the palette, a merge
 * point before the next row. */
static int check_rows(const struct unwind_table *b, const struct page_view *v)
{
	struct unwind_rule r;
	uint32_t prev = 0;

	for (size_t i = 0; i < v->nrows; i++) {
		uint32_t pc = rd16(v->pcs + 2 * i);
		uint32_t next = i + 1 < v->nrows ? rd16(v->pcs + 2 * i + 2) : 1u << 16;

		if ((i == 0 && pc != 0) || (i > 0 && pc <= prev) ||
		    view_idx(v, i) >= v->npalette)
			return -UNWIND_ERR_BAD_TABLE;
		view_rule(b, v, i, &r);
		if (pc + (r.flags & UNWIND_MERGE_AT_MASK) >= next)
			return -UNWIND_ERR_BAD_TABLE;
		prev = pc;
	}
	return 0;
}

static int check_page(const struct unwind_table *b, const struct unwind_page *p)
{
	struct page_view v;
	uint64_t need;

	if ((p->data_off & 1) || p->npalette == 0 || p->data_off > b->hdr.data_size)
		return -UNWIND_ERR_BAD_TABLE;
	view_of(b, p, &v);
	need = 2 * (uint64_t)v.npalette + (2 + v.idx_size) * (uint64_t)v.nrows;
	if (need > b->hdr.data_size - p->data_off)
		return -UNWIND_ERR_BAD_TABLE;
	for (size_t i = 0; i < v.npalette; i++)
		if (rd16(v.palette + 2 * i) >= b->hdr.nrules)
			return -UNWIND_ERR_BAD_TABLE;
	return check_rows(b, &v);
}

static int check_pages(const struct unwind_table *b)
{
	struct unwind_page p;
	uint32_t prev = 0;
	int err;

	for (size_t i = 0; i < b->hdr.npages; i++) {
		page_get(b, i, &p);
		if (i > 0 && p.page <= prev)
			return -UNWIND_ERR_BAD_TABLE;
		err = check_page(b, &p);
		if (err)
			return err;
		prev = p.page;
	}
	return 0;
}

struct unwind_table *unwind_table_new(const void *data, size_t size, int *err)
{
	struct unwind_table *b;
	int e;

	if (!data || size < sizeof(struct unwind_table_header)) {
		*err = -UNWIND_ERR_BAD_TABLE;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(&b->hdr, data, sizeof(b->hdr));
	e = check_header(&b->hdr, size, data);
	b->data = (const uint8_t *)data + sizeof(b->hdr);
	b->rules = b->data + (e ? 0 : b->hdr.data_size);
	b->pages = b->rules + (e ? 0 : (size_t)b->hdr.nrules * sizeof(struct unwind_rule));
	if (!e)
		e = check_rules(b);
	if (!e)
		e = check_pages(b);
	if (e) {
		free(b);
		*err = e;
		return NULL;
	}
	return b;
}

void unwind_table_free(struct unwind_table *b)
{
	free(b);
}

const struct unwind_table_header *unwind_table_header(const struct unwind_table *b)
{
	return &b->hdr;
}

/* ---- lookup and iteration ------------------------------------------------ */

/* Index of the last row at or before off (rows[0] is at 0). */
static size_t row_search(const struct page_view *v, uint32_t off)
{
	size_t lo = 0, n = v->nrows;

	while (n > 1) {	/* at most 16 halvings for 65536 rows */
		size_t half = n / 2;

		if (rd16(v->pcs + 2 * (lo + half)) <= off)
			lo += half;
		n -= half;
	}
	return lo;
}

static bool page_search(const struct unwind_table *b, uint64_t page,
			struct unwind_page *out)
{
	size_t lo = 0, hi = b->hdr.npages;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		page_get(b, mid, out);
		if (out->page == page)
			return true;
		if (out->page < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The second half of a merged row: CFA offset moved by the push/pop. */
static void merge_apply(struct unwind_rule *r)
{
	r->cfa_off += (r->flags & UNWIND_MERGE_POP) ? -8 : 8;
	r->flags &= (uint8_t)~(UNWIND_MERGE_AT_MASK | UNWIND_MERGE_POP);
}

int unwind_table_lookup(const struct unwind_table *b, uint64_t pc,
		       struct unwind_row *out)
{
	struct unwind_page p;
	struct page_view v;
	uint32_t off = (uint32_t)(pc & ((1u << UNWIND_PAGE_BITS) - 1)), at, row;
	size_t i;

	if (!page_search(b, pc >> UNWIND_PAGE_BITS, &p))
		return -ENOENT;
	view_of(b, &p, &v);
	i = row_search(&v, off);
	row = rd16(v.pcs + 2 * i);
	view_rule(b, &v, i, &out->rule);
	out->pc = v.base + row;
	at = out->rule.flags & UNWIND_MERGE_AT_MASK;
	if (at && off - row >= at) {
		out->pc += at;
		merge_apply(&out->rule);
	}
	out->rule.flags &= (uint8_t)~(UNWIND_MERGE_AT_MASK | UNWIND_MERGE_POP);
	return out->rule.cfa_kind == UNWIND_CFA_END ? -ENOENT : 0;
}

struct iter {
	unwind_row_fn fn;
	void *ctx;
	struct unwind_row last;
	bool have;
};

static int iter_emit(struct iter *it, uint64_t pc, const struct unwind_rule *r)
{
	if (it->have ? memcmp(&it->last.rule, r, sizeof(*r)) == 0
		     : r->cfa_kind == UNWIND_CFA_END)
		return 0; /* a repeat, or the first page's lead-in */
	it->last.pc = pc;
	it->last.rule = *r;
	it->have = true;
	return it->fn(&it->last, it->ctx);
}

/* A page's rows, each merged row as its two rows. */
static int iter_page(const struct unwind_table *b, const struct page_view *v,
		     struct iter *it)
{
	int r = 0;

	for (size_t i = 0; i < v->nrows && !r; i++) {
		struct unwind_rule rule;
		uint64_t pc = v->base + rd16(v->pcs + 2 * i);
		unsigned at;

		view_rule(b, v, i, &rule);
		at = rule.flags & UNWIND_MERGE_AT_MASK;
		rule.flags &= (uint8_t)~(UNWIND_MERGE_AT_MASK | UNWIND_MERGE_POP);
		r = iter_emit(it, pc, &rule);
		if (at && !r) {
			view_rule(b, v, i, &rule);
			merge_apply(&rule);
			r = iter_emit(it, pc + at, &rule);
		}
	}
	return r;
}

int unwind_table_foreach_row(const struct unwind_table *b, unwind_row_fn fn,
			    void *ctx)
{
	static const struct unwind_rule end = { .cfa_kind = UNWIND_CFA_END };
	struct iter it = { .fn = fn, .ctx = ctx };
	struct unwind_page p, next;
	struct page_view v;
	int r = 0;

	for (size_t pi = 0; pi < b->hdr.npages && !r; pi++) {
		page_get(b, pi, &p);
		view_of(b, &p, &v);
		r = iter_page(b, &v, &it);
		/* A page left out holds only END from its base on (table_write.c):
		 * the END row that started there. */
		if (pi + 1 < b->hdr.npages)
			page_get(b, pi + 1, &next);
		if (!r && (pi + 1 == b->hdr.npages || next.page != p.page + 1))
			r = iter_emit(&it, v.base + (UINT64_C(1) << UNWIND_PAGE_BITS), &end);
	}
	return r;
}
