/*
 * table_load.c - an unwind table into the three BPF maps, exactly as
 * docs/unwind-format.md section 4 says: verify it (unwind_table_new:
 * magic, version, checksum, every offset), take data_size bytes of
 * unwind_data at an even global offset and nrules slots of unwind_rules,
 * memcpy the data area and the rule table through the maps' mmap (of the
 * pages they go to only), then
 * one unwind_pages entry a page with data_off + base.  Unloading frees
 * the ranges and deletes the page entries.
 */
#include "agent_internal.h"
#include "unwind.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

_Static_assert(sizeof(struct agent_unwind_rule) == sizeof(struct unwind_rule),
	       "the rules array holds struct unwind_rule");

int agent_table_maps_init(struct agent_table_maps *t, int pages_fd, int data_fd,
			  size_t data_size, int rules_fd, size_t nrules)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->pages_fd = pages_fd;
	t->data_fd = data_fd;
	t->data_size = data_size;
	t->rules_fd = rules_fd;
	t->nrules = nrules;
	err = agent_ranges_init(&t->data_free, data_size);
	if (!err)
		err = agent_ranges_init(&t->rules_free, nrules);
	return err;
}

void agent_table_maps_release(struct agent_table_maps *t)
{
	agent_ranges_release(&t->data_free);
	agent_ranges_release(&t->rules_free);
}

static void delete_pages(struct agent_table_maps *t, uint64_t file_id, const uint32_t *pages,
			 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct agent_page_key k = { .file_id = file_id, .page = pages[i] };

		bpf_map_delete_elem(t->pages_fd, &k);
	}
}

/* One unwind_pages entry per page of the table; on failure none stays. */
static int insert_pages(struct agent_table_maps *t, const uint8_t *image,
			const struct unwind_table_header *h, struct agent_loaded *l)
{
	const uint8_t *pages = image + h->header_size + h->data_size +
			       (size_t)h->nrules * sizeof(struct unwind_rule);

	l->pages = calloc(h->npages ? h->npages : 1, sizeof(*l->pages));
	if (!l->pages)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->npages; i++) {
		struct unwind_page pg;
		struct agent_page_key k = { .file_id = l->file_id };
		struct agent_page_val v = { 0 };

		memcpy(&pg, pages + (size_t)i * sizeof(pg), sizeof(pg));
		k.page = pg.page;
		v.data_off = (uint32_t)(pg.data_off + l->data_base);
		v.nrows_m1 = pg.nrows_m1;
		v.npalette = pg.npalette;
		v.rule_base = (uint32_t)l->rule_base;
		if (bpf_map_update_elem(t->pages_fd, &k, &v, BPF_ANY)) {
			int err = errno == E2BIG ? -ENOSPC : -errno;

			delete_pages(t, l->file_id, l->pages, l->npages);
			return err;
		}
		l->pages[l->npages++] = pg.page;
	}
	t->pages_used += l->npages;
	return 0;
}

/*
 * size bytes to offset off of an mmapable array map, through a mapping of
 * just the pages they cover: the kernel maps an array's whole memory into
 * a mapping at once, so a mapping kept of the 64 MiB data array would be
 * 64 MiB of the agent's RSS.
 */
static int copy_in(int fd, uint64_t off, const void *src, size_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t start = off & ~(uint64_t)(pg - 1), len = off + size - start;
	void *p;

	if (!size)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)start);
	if (p == MAP_FAILED)
		return -errno;
	memcpy((uint8_t *)p + (off - start), src, size);
	munmap(p, len);
	return 0;
}

static int place(struct agent_table_maps *t, const uint8_t *image,
		 const struct unwind_table_header *h, struct agent_loaded *l)
{
	int err;

	l->data_len = h->data_size;
	l->rule_len = h->nrules;
	if (agent_ranges_alloc(&t->data_free, l->data_len ? l->data_len : 8, 8, &l->data_base))
		return -ENOSPC;
	if (agent_ranges_alloc(&t->rules_free, l->rule_len ? l->rule_len : 1, 1, &l->rule_base)) {
		agent_ranges_free(&t->data_free, l->data_base, l->data_len ? l->data_len : 8);
		return -ENOSPC;
	}
	err = copy_in(t->data_fd, l->data_base, image + h->header_size, h->data_size);
	if (!err)
		err = copy_in(t->rules_fd, l->rule_base * sizeof(struct unwind_rule),
			      image + h->header_size + h->data_size,
			      (size_t)h->nrules * sizeof(struct unwind_rule));
	if (!err)
		err = insert_pages(t, image, h, l);
	if (err) {
		agent_ranges_free(&t->data_free, l->data_base, l->data_len ? l->data_len : 8);
		agent_ranges_free(&t->rules_free, l->rule_base, l->rule_len ? l->rule_len : 1);
		free(l->pages);
		l->pages = NULL;
	}
	return err;
}

int agent_table_load(struct agent_table_maps *t, const void *image, size_t size,
		     uint64_t file_id, struct agent_loaded *out)
{
	struct agent_loaded l = { .file_id = file_id };
	struct unwind_table *b;
	int err;

	b = unwind_table_new(image, size, &err);
	if (!b)
		return err;
	err = place(t, image, unwind_table_header(b), &l);
	unwind_table_free(b);
	if (!err)
		*out = l;
	return err;
}

void agent_table_unload(struct agent_table_maps *t, struct agent_loaded *l)
{
	delete_pages(t, l->file_id, l->pages, l->npages);
	t->pages_used -= l->npages;
	agent_ranges_free(&t->data_free, l->data_base, l->data_len ? l->data_len : 8);
	agent_ranges_free(&t->rules_free, l->rule_base, l->rule_len ? l->rule_len : 1);
	free(l->pages);
	memset(l, 0, sizeof(*l));
}

/* ---- what tables take: the shares of the maps (tables.c, procs.c) ---- */

void agent_table_use_add(struct agent_table_use *u, const struct agent_loaded *l)
{
	u->data += l->data_len ? l->data_len : 8;
	u->rules += l->rule_len ? l->rule_len : 1;
	u->pages += l->npages;
}

void agent_table_use_drop(struct agent_table_use *u, const struct agent_loaded *l)
{
	struct agent_table_use l_use = { 0 };

	agent_table_use_add(&l_use, l);
	u->data -= l_use.data;
	u->rules -= l_use.rules;
	u->pages -= l_use.pages;
}

void agent_table_needs(const void *image, struct agent_table_use *out)
{
	struct unwind_table_header h;

	memcpy(&h, image, sizeof(h));
	out->data = h.data_size ? h.data_size : 8;
	out->rules = h.nrules ? h.nrules : 1;
	out->pages = h.npages;
}

bool agent_table_maps_room(const struct agent_table_maps *t, const struct agent_table_use *need)
{
	return t->data_free.size - t->data_free.used >= need->data &&
	       t->rules_free.size - t->rules_free.used >= need->rules &&
	       (!t->npages || t->npages - t->pages_used >= need->pages);
}

static double fraction(uint64_t have, uint64_t cap)
{
	return cap ? (double)have / (double)cap : 0;
}

double agent_table_maps_weight(const struct agent_table_maps *t, const struct agent_table_use *u)
{
	double d = fraction(u->data, t->data_size), r = fraction(u->rules, t->nrules),
	       p = fraction(u->pages, t->npages);

	return d > r ? (d > p ? d : p) : (r > p ? r : p);
}
