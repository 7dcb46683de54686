/*
 * dwarf_unit.c - the units of .debug_info for the DIE reader: the list
 * of units as libdw iterates them (so that which units exist and what
 * type each is are libdw's answers, never a second opinion), each unit
 * header read again here (DWARF 5 §7.5.1), and the bases a unit DIE
 * gives its attributes: the base address of range lists, DW_AT_addr_base,
 * DW_AT_str_offsets_base and DW_AT_rnglists_base.
 *
 * A unit this reader cannot handle (DWARF 64, an unknown version or
 * address size, a header that disagrees with libdw's) is marked BAD and
 * left to libdw whole.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <stdlib.h>

/* The 32-bit header of the unit at off; the unit is BAD if it does not
 * parse or libdw's unit DIE is not right after it. */
static void unit_header(const struct elfdw_sect *info, struct sym_dw_unit *u)
{
	const uint8_t *p = info->data + u->off, *end = info->data + info->size;
	uint64_t len, version, type = DW_UT_compile, asize, abbrev;

	u->state = SYM_DW_UNIT_BAD;
	if (elfdw_read_un(&p, end, 4, &len) || len >= 0xfffffff0 ||
	    len > (uint64_t)(end - p) || elfdw_read_un(&p, end, 2, &version) ||
	    version < 2 || version > 5)
		return;
	u->end = u->off + 4 + len;
	end = info->data + u->end;
	if (version >= 5 && elfdw_read_un(&p, end, 1, &type))
		return;
	if (version >= 5 ? elfdw_read_un(&p, end, 1, &asize) ||
				   elfdw_read_un(&p, end, 4, &abbrev)
			 : elfdw_read_un(&p, end, 4, &abbrev) ||
				   elfdw_read_un(&p, end, 1, &asize))
		return;
	if (((type == DW_UT_skeleton || type == DW_UT_split_compile) &&
	     elfdw_skip(&p, end, 8)) || /* dwo_id */
	    ((type == DW_UT_type || type == DW_UT_split_type) &&
	     elfdw_skip(&p, end, 12))) /* type signature and offset */
		return;
	if ((asize != 4 && asize != 8) || version != u->version ||
	    (uint64_t)(p - info->data) != u->die_off || u->die_off >= u->end)
		return;
	u->abbrev_off = abbrev;
	u->addr_size = (uint8_t)asize;
	u->state = SYM_DW_UNIT_NEW;
}

static struct sym_dw_unit *unit_get(const struct sym_dw *r, size_t i)
{
	return &r->chunks[i / SYM_DW_CHUNK][i % SYM_DW_CHUNK];
}

/* Room for unit r->nunits: a new chunk every SYM_DW_CHUNK units. */
static int unit_room(struct sym_dw *r)
{
	size_t c = r->nunits / SYM_DW_CHUNK;
	struct sym_dw_unit **v;

	if (r->nunits % SYM_DW_CHUNK)
		return 0;
	if (c >= r->nchunks) {
		v = realloc(r->chunks, (c + 1) * 2 * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + r->nchunks, 0, ((c + 1) * 2 - r->nchunks) * sizeof(*v));
		r->chunks = v;
		r->nchunks = (c + 1) * 2;
	}
	r->chunks[c] = malloc(SYM_DW_CHUNK * sizeof(**r->chunks));
	return r->chunks[c] ? 0 : -ENOMEM;
}

/* Record the unit libdw handed out.  Units of DWARF 4's .debug_types
 * (which libdw lists after .debug_info's) are BAD: this reader reads
 * .debug_info only, the very bytes libdw reads (the unit DIE's address
 * proves it), whose units are the first ninfo, in offset order. */
static int unit_add(struct sym_dw *r, Dwarf_Die *cudie, Dwarf_Half version,
		    uint8_t unit_type)
{
	struct sym_dw_unit u = { .version = (uint8_t)version,
				 .unit_type = unit_type,
				 .state = SYM_DW_UNIT_BAD, .cudie = *cudie };
	uint64_t die_off = dwarf_dieoffset(cudie);
	bool in_info = r->ninfo == r->nunits && die_off < r->s.info.size &&
		       (const uint8_t *)cudie->addr == r->s.info.data + die_off &&
		       (!r->nunits ||
			die_off > unit_get(r, r->nunits - 1)->die_off);
	int err = unit_room(r);

	if (err)
		return err;
	if (in_info) {
		u.die_off = die_off;
		u.off = die_off - dwarf_cuoffset(cudie);
		unit_header(&r->s.info, &u);
		r->ninfo++;
	}
	*unit_get(r, r->nunits++) = u;
	return 0;
}

/* List libdw's next unit; false when there is none (or on error). */
static bool list_next(struct sym_dw *r, int *err)
{
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie;
	int rc;

	if (r->listed)
		return false;
	rc = dwarf_get_units(r->dw, r->cu, &r->cu, &version, &unit_type,
			     &cudie, NULL);
	if (rc == 0) {
		*err = unit_add(r, &cudie, version, unit_type);
		return !*err;
	}
	r->listed = true; /* the end, or a unit libdw cannot read */
	r->truncated = rc < 0;
	return false;
}

struct sym_dw_unit *sym_dw_unit(struct sym_dw *r, size_t i, int *err)
{
	while (i >= r->nunits)
		if (!list_next(r, err))
			return NULL;
	return unit_get(r, i);
}

int sym_dw_open(struct sym_dw *r, Dwarf *dw)
{
	static const char *const info[] = { ".debug_info", ".zdebug_info", NULL };
	static const char *const abbrev[] = { ".debug_abbrev", ".zdebug_abbrev", NULL };
	static const char *const str[] = { ".debug_str", ".zdebug_str", NULL };
	static const char *const line_str[] = { ".debug_line_str", NULL };
	static const char *const str_off[] = { ".debug_str_offsets", NULL };
	static const char *const addr[] = { ".debug_addr", NULL };
	static const char *const ranges[] = { ".debug_ranges", ".zdebug_ranges", NULL };
	static const char *const rnglists[] = { ".debug_rnglists", NULL };
	Elf *elf = dwarf_getelf(dw);
	const char *ident = elf ? elf_getident(elf, NULL) : NULL;

	memset(r, 0, sizeof(*r));
	if (!ident || ident[EI_DATA] != ELFDATA2LSB)
		return -EOPNOTSUPP;
	r->s.info = elfdw_section_loaded(elf, info);
	r->s.abbrev = elfdw_section_loaded(elf, abbrev);
	r->s.str = elfdw_section_loaded(elf, str);
	r->s.line_str = elfdw_section_loaded(elf, line_str);
	r->s.str_offsets = elfdw_section_loaded(elf, str_off);
	r->s.addr = elfdw_section_loaded(elf, addr);
	r->s.ranges = elfdw_section_loaded(elf, ranges);
	r->s.rnglists = elfdw_section_loaded(elf, rnglists);
	if (!r->s.info.data || !r->s.abbrev.data)
		return -EOPNOTSUPP;
	r->dw = dw;
	return 0;
}

void sym_dw_release(struct sym_dw *r)
{
	if (!r)
		return;
	for (size_t c = 0; c < r->nchunks; c++)
		free(r->chunks[c]);
	free(r->chunks);
	for (unsigned i = 0; i < SYM_DW_CACHE; i++)
		sym_dw_abbrevs_release(&r->cache[i]);
	memset(r, 0, sizeof(*r));
}

struct sym_dw_unit *sym_dw_unit_at(struct sym_dw *r, uint64_t off)
{
	size_t lo = 0, hi;
	int err = 0;

	/* list on until a .debug_info unit ends past off */
	while (r->ninfo == r->nunits &&
	       (!r->ninfo || unit_get(r, r->ninfo - 1)->end <= off) &&
	       list_next(r, &err))
		;
	hi = r->ninfo;
	while (lo < hi) { /* the first unit starting after off */
		size_t mid = lo + (hi - lo) / 2;

		if (unit_get(r, mid)->off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || off >= unit_get(r, lo - 1)->end)
		return NULL;
	return unit_get(r, lo - 1);
}

/* A base attribute of the unit DIE: a section offset within sect. */
static int unit_base(const struct sym_dw *r, const struct sym_dw_die *d,
		     enum sym_dw_slot s, const struct elfdw_sect *sect,
		     uint64_t *out)
{
	int err = sym_dw_val_secoff(r, d, s, out);

	if (err == -ENOENT) {
		*out = UINT64_MAX;
		return 0;
	}
	if (!err && *out > sect->size)
		return -EINVAL;
	return err;
}

/* libdw's base address of a unit: DW_AT_low_pc, else DW_AT_entry_pc,
 * else 0. */
static int unit_base_address(const struct sym_dw *r, const struct sym_dw_die *d,
			     uint64_t *out)
{
	int err = sym_dw_val_addr(r, d, SYM_DW_LOW_PC, out);

	if (err == -ENOENT)
		err = sym_dw_val_addr(r, d, SYM_DW_ENTRY_PC, out);
	if (err == -ENOENT) {
		*out = 0;
		err = 0;
	}
	return err;
}

static int unit_read_bases(struct sym_dw *r, struct sym_dw_unit *u,
			   const struct sym_dw_abbrevs *t)
{
	const uint8_t *pos = r->s.info.data + u->die_off;
	struct sym_dw_die d;
	int err;

	u->addr_base = u->str_off_base = u->rnglists_base = UINT64_MAX;
	if (pos >= sym_dw_unit_end(r, u) || *pos == 0)
		return -EINVAL;
	err = sym_dw_die_read(r, u, t, &pos, SYM_DW_ALL_KINDS, &d);
	if (err)
		return err;
	u->die_tag = d.ab->tag;
	u->split = sym_dw_has(&d, SYM_DW_SPLIT);
	err = unit_base(r, &d, SYM_DW_ADDR_BASE, &r->s.addr, &u->addr_base);
	if (!err)
		err = unit_base(r, &d, SYM_DW_STR_OFFSETS_BASE, &r->s.str_offsets,
				&u->str_off_base);
	if (!err)
		err = unit_base(r, &d, SYM_DW_RNGLISTS_BASE, &r->s.rnglists,
				&u->rnglists_base);
	if (!err)
		err = unit_base_address(r, &d, &u->base);
	return err;
}

int sym_dw_unit_open(struct sym_dw *r, struct sym_dw_unit *u,
		     const struct sym_dw_abbrevs *t)
{
	int err;

	if (u->state == SYM_DW_UNIT_OPEN)
		return 0;
	if (u->state == SYM_DW_UNIT_BAD)
		return -EOPNOTSUPP;
	err = unit_read_bases(r, u, t);
	if (!err && u->split)
		err = -EOPNOTSUPP; /* split DWARF: libdw's business */
	u->state = err ? SYM_DW_UNIT_BAD : SYM_DW_UNIT_OPEN;
	return err;
}

/* The slot to parse a new table into: the last walked unit's (units are
 * walked in order, and its arrays are the right size), else round robin,
 * past the pinned one (the walked unit's, which must outlive reads in
 * other units). */
static struct sym_dw_abbrevs *cache_victim(struct sym_dw *r)
{
	struct sym_dw_abbrevs *t = &r->cache[r->cache_next];

	if (r->last_walked && r->last_walked != r->pinned) {
		t = (struct sym_dw_abbrevs *)r->last_walked;
		r->last_walked = NULL;
		return t;
	}

	r->cache_next = (r->cache_next + 1) % SYM_DW_CACHE;
	if (t == r->pinned) {
		t = &r->cache[r->cache_next];
		r->cache_next = (r->cache_next + 1) % SYM_DW_CACHE;
	}
	return t;
}

int sym_dw_unit_abbrevs(struct sym_dw *r, struct sym_dw_unit *u,
			const struct sym_dw_abbrevs **out)
{
	struct sym_dw_abbrevs *t;
	int err;

	if (u->state == SYM_DW_UNIT_BAD)
		return -EOPNOTSUPP;
	for (unsigned i = 0; i < SYM_DW_CACHE; i++) {
		t = &r->cache[i];
		/* addr_size 0: an empty slot (units have 4 or 8) */
		if (t->addr_size == u->addr_size && t->off == u->abbrev_off &&
		    t->version == u->version) {
			*out = t;
			return sym_dw_unit_open(r, u, t);
		}
	}
	t = cache_victim(r);
	err = sym_dw_abbrevs_read(t, &r->s.abbrev, u->abbrev_off, u->addr_size,
				  u->version);
	if (err) {
		t->addr_size = 0;
		u->state = SYM_DW_UNIT_BAD;
		return err;
	}
	*out = t;
	return sym_dw_unit_open(r, u, t);
}
