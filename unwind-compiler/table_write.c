/*
 * table_write.c - the row sink and the table encoder (docs/unwind-format.md).
 *
 * Rows arrive from the interpreter in address order and are never
 * stored whole; the writer keeps the rows of one 64 KiB page of
 * addresses and encodes the page once a row lands past it:
 *
 *  - a row whose rule equals the previous row's is dropped;
 *  - a page whose first row does not start at its base gets a copy of
 *    the rule in effect there, so every page is searched on its own;
 *    pages where nothing but END holds are left out (a lookup miss means
 *    the same as END);
 *  - inside a page, a row followed 1..15 bytes later by a row that only
 *    moves the CFA offset by +-8 (a push or a pop) is stored once, with
 *    the change as a merge flag of its rule (OpenTelemetry's trick);
 *  - each page has a palette of the rule ids it uses, and each row
 *    stores a u8 index into it (u16 when a page uses more than 256);
 *  - rule ids number the rules in order of first use, so the table is a
 *    function of the rows alone: same input, same bytes.
 *
 * Page data goes straight into the caller's buffer, after a header
 * placeholder; the rule table and the page table follow it at the end
 * (docs/unwind-format.md), so the data is written once and never copied.
 */
#include "unwind_internal.h"

#include <stdlib.h>
#include <zlib.h>

#define PAGE_ROWS_MAX (1u << UNWIND_PAGE_BITS)
#define UNWIND_MAX_PAGES (1u << 18)	/* 16 GiB of code, a 4 MiB page table */

struct unwind_writer {
	struct unwind_build *b;
	struct unwind_rule_set rules;	/* the table's rule table */
	struct unwind_page *pages;
	size_t npages, pages_alloc;
	struct ember_buf *out;		/* the table: header, then page data */
	size_t start;			/* of the table in out */
	size_t nstored;
	/* the last row pushed */
	struct unwind_rule last;
	uint64_t last_pc;
	bool have_last;
	/* the page being collected: row offsets and rules, with room for
	 * cap rows (grown up to PAGE_ROWS_MAX; pages rarely pass 4,000) */
	uint64_t page;
	uint16_t *off;
	struct unwind_rule *rule;
	size_t m, cap;
	/* its palette and each row's index into it */
	uint16_t *palette, *idx;
	size_t npalette;
	/* slot of each table rule id in the palette, valid when pal_page[id]
	 * is the page's index + 1 */
	uint32_t *pal_page;
	uint16_t *pal_slot;
	size_t pal_alloc;
};

int unwind_writer_new(struct unwind_build *b, struct ember_buf *out)
{
	static const struct unwind_table_header zero;
	struct unwind_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->b = b;
	w->out = out;
	w->start = out->len;
	unwind_rules_init(&w->rules);
	b->writer = w;
	return ember_buf_append(out, &zero, sizeof(zero));
}

/* Bytes of page data written so far. */
static size_t data_len(const struct unwind_writer *w)
{
	return w->out->len - w->start - sizeof(struct unwind_table_header);
}

void unwind_writer_free(struct unwind_writer *w)
{
	if (!w)
		return;
	unwind_rules_release(&w->rules);
	free(w->pages);
	free(w->off);
	free(w->rule);
	free(w->palette);
	free(w->idx);
	free(w->pal_page);
	free(w->pal_slot);
	free(w);
}

/* Room for one more row in the page being collected. */
static int page_reserve(struct unwind_writer *w)
{
	size_t n = w->cap ? 2 * w->cap : 1024;

	if (w->m < w->cap)
		return 0;
	n = n < PAGE_ROWS_MAX ? n : PAGE_ROWS_MAX;
	if (w->m >= n)
		return -EINVAL; /* more rows than bytes in a page: impossible */
#define GROW(p)                                                              \
	do {                                                                 \
		void *q = realloc((p), n * sizeof(*(p)));                    \
		if (!q)                                                      \
			return -ENOMEM;                                      \
		(p) = q;                                                     \
	} while (0)
	GROW(w->off);
	GROW(w->rule);
	GROW(w->palette);
	GROW(w->idx);
#undef GROW
	w->cap = n;
	return 0;
}

/* ---- encoding one page ------------------------------------------------------ */

/* b only moves a's CFA offset by +-8, within 15 bytes of a: the flags
 * that fold b into a, else 0. */
static int merge_flags(const struct unwind_rule *a, uint16_t a_off,
		       const struct unwind_rule *b, uint16_t b_off)
{
	struct unwind_rule t = *b;
	int64_t delta = (int64_t)b->cfa_off - a->cfa_off;

	if (a->cfa_kind != UNWIND_CFA_REG || (a->flags & UNWIND_MERGE_AT_MASK) ||
	    b_off - a_off > UNWIND_MERGE_AT_MASK || (delta != 8 && delta != -8))
		return 0;
	t.cfa_off = a->cfa_off;
	if (memcmp(&t, a, sizeof(t)) != 0)
		return 0;
	return (b_off - a_off) | (delta < 0 ? UNWIND_MERGE_POP : 0);
}

/* Fold push/pop pairs in place. */
static void page_merge(struct unwind_writer *w)
{
	size_t n = 0;

	for (size_t t = 0; t < w->m; t++) {
		int f = t + 1 < w->m ? merge_flags(&w->rule[t], w->off[t],
						   &w->rule[t + 1], w->off[t + 1])
				     : 0;

		w->off[n] = w->off[t];
		w->rule[n] = w->rule[t];
		if (f) {
			w->rule[n].flags |= (uint8_t)f;
			t++;
		}
		n++;
	}
	w->m = n;
}

static int palette_grow(struct unwind_writer *w, size_t id)
{
	size_t n = w->pal_alloc ? 2 * w->pal_alloc : 1024;
	uint32_t *pp;
	uint16_t *ps;

	while (n <= id)
		n *= 2;
	pp = realloc(w->pal_page, n * sizeof(*pp));
	if (!pp)
		return -ENOMEM;
	w->pal_page = pp;
	ps = realloc(w->pal_slot, n * sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	w->pal_slot = ps;
	memset(pp + w->pal_alloc, 0, (n - w->pal_alloc) * sizeof(*pp));
	w->pal_alloc = n;
	return 0;
}

/* Palette slot of rule r in the page being written (added if new). */
static int palette_slot(struct unwind_writer *w, const struct unwind_rule *r,
			uint16_t *slot)
{
	int64_t id = unwind_rules_intern(&w->rules, r);

	if (id < 0)
		return (int)id;
	EMBER_FAIL_IF(id >= UNWIND_MAX_RULES, w->b->diag, -UNWIND_ERR_LIMIT,
		      "more than %d distinct rules", UNWIND_MAX_RULES);
	if ((size_t)id >= w->pal_alloc && palette_grow(w, (size_t)id))
		return -ENOMEM;
	if (w->pal_page[id] != w->npages + 1) { /* first use in this page */
		w->pal_page[id] = (uint32_t)w->npages + 1;
		w->pal_slot[id] = (uint16_t)w->npalette;
		w->palette[w->npalette++] = (uint16_t)id;
	}
	*slot = w->pal_slot[id];
	return 0;
}

/* Append palette, pc_low[], indexes and padding of the page to data. */
static int page_encode(struct unwind_writer *w)
{
	static const uint8_t zero;
	uint8_t *idx8 = (uint8_t *)w->rule; /* rules are no longer needed */
	size_t isz = w->npalette > 256 ? 2 : 1;
	int err;

	for (size_t i = 0; i < w->m; i++)
		idx8[i] = (uint8_t)w->idx[i];
	err = ember_buf_append(w->out, w->palette, 2 * w->npalette);
	if (!err)
		err = ember_buf_append(w->out, w->off, 2 * w->m);
	if (!err)
		err = ember_buf_append(w->out, isz == 2 ? (void *)w->idx : idx8,
				       isz * w->m);
	if (!err && (data_len(w) & 1))
		err = ember_buf_append(w->out, &zero, 1);
	if (err == -E2BIG || (!err && data_len(w) > UINT32_MAX - 8))
		return EMBER_FAIL(w->b->diag, -UNWIND_ERR_LIMIT,
				  "table beyond its buffer's cap or 4 GiB of page data");
	return err;
}

/* Encode the collected page, unless only END holds in it. */
static int page_flush(struct unwind_writer *w)
{
	struct unwind_page p = { .page = (uint32_t)w->page,
				 .data_off = (uint32_t)data_len(w) };
	bool all_end = true;
	int err = 0;

	for (size_t i = 0; i < w->m && all_end; i++)
		all_end = w->rule[i].cfa_kind == UNWIND_CFA_END;
	if (all_end)
		return 0;
	EMBER_FAIL_IF(w->npages >= UNWIND_MAX_PAGES, w->b->diag, -UNWIND_ERR_LIMIT,
		      "more than %u pages of 64 KiB", UNWIND_MAX_PAGES);
	page_merge(w);
	w->npalette = 0;
	for (size_t i = 0; i < w->m && !err; i++)
		err = palette_slot(w, &w->rule[i], &w->idx[i]);
	if (!err)
		err = page_encode(w);
	if (err)
		return err;
	p.nrows_m1 = (uint16_t)(w->m - 1);
	p.npalette = (uint16_t)w->npalette;
	w->nstored += w->m;
	return EMBER_VEC_PUSH(w->pages, w->npages, w->pages_alloc, p);
}

/* Start collecting page pg; `in` is the rule in effect at its base. */
static int page_start(struct unwind_writer *w, uint64_t pg,
		      const struct unwind_rule *in)
{
	int err;

	w->m = 0;
	err = page_reserve(w);
	if (err)
		return err;
	w->page = pg;
	w->off[0] = 0;
	w->rule[0] = *in;
	w->m = 1;
	return 0;
}

/* Move on to page pg: flush the current one and every page in between
 * that the last rule covers. */
static int page_advance(struct unwind_writer *w, uint64_t pg)
{
	static const struct unwind_rule end = { .cfa_kind = UNWIND_CFA_END };
	int err;

	if (!w->have_last)
		return page_start(w, pg, &end);
	err = page_flush(w);
	while (!err && w->page + 1 < pg && w->last.cfa_kind != UNWIND_CFA_END) {
		err = page_start(w, w->page + 1, &w->last);
		if (!err)
			err = page_flush(w);
	}
	return err ? err : page_start(w, pg, &w->last);
}

int unwind_rows_push(struct unwind_build *b, uint64_t pc,
		     const struct unwind_rule *r)
{
	struct unwind_writer *w = b->writer;
	uint64_t pg = pc >> UNWIND_PAGE_BITS;
	int err;

	if (w->have_last && memcmp(&w->last, r, sizeof(*r)) == 0)
		return 0;
	EMBER_FAIL_IF(w->have_last && pc <= w->last_pc, b->diag, -EINVAL,
		      "internal: row at 0x%llx after one at 0x%llx", (unsigned long long)pc,
		      (unsigned long long)w->last_pc);
	EMBER_FAIL_IF(pg > UINT32_MAX, b->diag, -UNWIND_ERR_LIMIT,
		      "address 0x%llx beyond the 48-bit page space", (unsigned long long)pc);
	if (!w->have_last || pg != w->page) {
		err = page_advance(w, pg);
		if (err)
			return err;
	}
	if ((pc & (PAGE_ROWS_MAX - 1)) == 0)
		w->m = 0; /* the row itself starts the page */
	err = page_reserve(w);
	if (err)
		return err;
	w->off[w->m] = (uint16_t)pc;
	w->rule[w->m++] = *r;
	w->last = *r;
	w->last_pc = pc;
	w->have_last = true;
	b->stats.rows++;
	b->stats.rows_end += r->cfa_kind == UNWIND_CFA_END;
	b->stats.rows_invalid += r->cfa_kind == UNWIND_CFA_INVALID;
	return 0;
}

/* ---- the table ------------------------------------------------------------------ */

static void header_fill(const struct unwind_writer *w, size_t data_size,
			struct unwind_table_header *h)
{
	const struct unwind_build *b = w->b;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, UNWIND_TABLE_MAGIC, sizeof(h->magic));
	h->version = UNWIND_TABLE_VERSION;
	h->machine = b->in->machine;
	h->header_size = sizeof(*h);
	h->nrules = (uint32_t)w->rules.n;
	h->npages = (uint32_t)w->npages;
	h->data_size = (uint32_t)data_size;
	h->size = w->out->len - w->start;
	h->nrows = (uint32_t)b->stats.rows;
	h->nstored = (uint32_t)w->nstored;
	h->ninvalid = (uint32_t)b->stats.rows_invalid;
	h->nfdes = (uint32_t)b->stats.fdes;
	if (b->stats.fdes > b->stats.fdes_debug_frame)
		h->flags |= UNWIND_TABLE_EH_FRAME;
	if (b->stats.fdes_debug_frame)
		h->flags |= UNWIND_TABLE_DEBUG_FRAME;
	h->build_id_len = (uint8_t)b->in->build_id_len;
	memcpy(h->build_id, b->in->build_id, b->in->build_id_len);
}

/* ember_buf_append without the memcpy from NULL an empty table has. */
static int append(struct ember_buf *out, const void *p, size_t n)
{
	return n ? ember_buf_append(out, p, n) : 0;
}

/* Pad the data to 8 bytes, append the rule and page tables, then the
 * header and the checksum over all of it. */
static int write_tables(struct unwind_writer *w)
{
	static const uint8_t zero[8];
	struct unwind_table_header h;
	size_t data_size;
	char *table;
	uint32_t crc;
	int err;

	EMBER_FAIL_IF(w->b->stats.rows > UINT32_MAX, w->b->diag, -UNWIND_ERR_LIMIT,
		      "%zu rows, more than 2^32", w->b->stats.rows);
	err = append(w->out, zero, (8 - data_len(w) % 8) % 8);
	data_size = data_len(w);
	if (!err)
		err = append(w->out, w->rules.rules, w->rules.n * sizeof(struct unwind_rule));
	if (!err)
		err = append(w->out, w->pages, w->npages * sizeof(*w->pages));
	if (err)
		return err == -E2BIG ? EMBER_FAIL(w->b->diag, -UNWIND_ERR_LIMIT,
						   "table beyond its buffer's cap") : err;
	header_fill(w, data_size, &h);
	table = w->out->data + w->start;
	memcpy(table, &h, sizeof(h));
	crc = crc32_z(0, (const Bytef *)table, h.size);
	memcpy(table + offsetof(struct unwind_table_header, crc32), &crc, sizeof(crc));
	w->b->stats.table_size = h.size;
	return 0;
}

int unwind_writer_finish(struct unwind_build *b)
{
	struct unwind_writer *w = b->writer;
	int err = w->have_last ? page_flush(w) : 0;

	if (!err)
		err = write_tables(w);
	if (!err) {
		b->stats.rows_stored = w->nstored;
		b->stats.rules = w->rules.n;
		b->stats.pages = w->npages;
	}
	return err;
}
