/*
 * die_units.c - the units of .debug_info for the DIE reader: the list
 * of units as libdw iterates them (so that which units exist and what
 * type each is are libdw's answers, never a second opinion), each unit
 * header read again by the ELF/DWARF layer (elfdw_unit_header) and
 * checked against libdw's, the bases of its unit DIE (elfdw_unit_open),
 * a cache of parsed abbreviation tables, and reading a DIE of any unit
 * (a reference across units).
 *
 * A unit this reader cannot handle (DWARF 64, an unknown version or
 * address size, a header that disagrees with libdw's, split DWARF) is
 * marked BAD and left to libdw whole.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <stdlib.h>

/* The header of the unit at u->u.off, read again; the unit is BAD if it
 * does not parse here or libdw's unit DIE is not right after it. */
static void unit_header(struct sym_die_reader *r, struct sym_die_unit *du)
{
	struct elfdw_unit h;
	int err = elfdw_unit_header(&r->s->info, du->u.off, &h, &r->diag);

	du->state = SYM_DIE_UNIT_BAD;
	if (err)
		return;
	if (h.offset_size != 4) {
		(void)EMBER_FAIL(&r->diag, -EOPNOTSUPP, "unit at 0x%llx: DWARF 64",
			   (unsigned long long)du->u.off);
		return;
	}
	if (h.version != du->u.version || h.die_off != du->u.die_off) {
		(void)EMBER_FAIL(&r->diag, -EINVAL, "unit at 0x%llx: header differs from libdw's",
			   (unsigned long long)du->u.off);
		return;
	}
	du->u = h;
	du->state = SYM_DIE_UNIT_NEW;
}

static struct sym_die_unit *unit_get(const struct sym_die_reader *r, size_t i)
{
	return &r->chunks[i / SYM_DIE_CHUNK][i % SYM_DIE_CHUNK];
}

/* Room for unit r->nunits: a new chunk every SYM_DIE_CHUNK units. */
static int unit_room(struct sym_die_reader *r)
{
	size_t c = r->nunits / SYM_DIE_CHUNK;
	struct sym_die_unit **v;

	if (r->nunits % SYM_DIE_CHUNK)
		return 0;
	if (c >= r->nchunks) {
		v = realloc(r->chunks, (c + 1) * 2 * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + r->nchunks, 0, ((c + 1) * 2 - r->nchunks) * sizeof(*v));
		r->chunks = v;
		r->nchunks = (c + 1) * 2;
	}
	r->chunks[c] = malloc(SYM_DIE_CHUNK * sizeof(**r->chunks));
	return r->chunks[c] ? 0 : -ENOMEM;
}

/* Record the unit libdw handed out.  Units of DWARF 4's .debug_types
 * (which libdw lists after .debug_info's) are BAD: this reader reads
 * .debug_info only, the very bytes libdw reads (the unit DIE's address
 * proves it), whose units are the first ninfo, in offset order. */
static int unit_add(struct sym_die_reader *r, Dwarf_Die *cudie,
		    Dwarf_Half version, uint8_t unit_type)
{
	struct sym_die_unit u = { .u = { .version = (uint8_t)version,
					 .unit_type = unit_type },
				  .state = SYM_DIE_UNIT_BAD, .cudie = *cudie };
	uint64_t die_off = dwarf_dieoffset(cudie);
	bool in_info = r->ninfo == r->nunits && die_off < r->s->info.size &&
		       (const uint8_t *)cudie->addr == r->s->info.data + die_off &&
		       (!r->nunits ||
			die_off > unit_get(r, r->nunits - 1)->u.die_off);
	int err = unit_room(r);

	if (err)
		return err;
	if (in_info) {
		u.u.die_off = die_off;
		u.u.off = die_off - dwarf_cuoffset(cudie);
		unit_header(r, &u);
		/* libdw's type for a unit before DWARF 5, not the header's guess */
		u.u.unit_type = unit_type;
		r->ninfo++;
	}
	*unit_get(r, r->nunits++) = u;
	return 0;
}

/* List libdw's next unit; false when there is none (or on error). */
static bool list_next(struct sym_die_reader *r, int *err)
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

struct sym_die_unit *sym_die_unit(struct sym_die_reader *r, size_t i, int *err)
{
	while (i >= r->nunits)
		if (!list_next(r, err))
			return NULL;
	return unit_get(r, i);
}

int sym_die_open(struct sym_die_reader *r, Dwarf *dw, const struct elfdw_sections *s)
{
	Elf *elf = dwarf_getelf(dw);
	const char *ident = elf ? elf_getident(elf, NULL) : NULL;

	memset(r, 0, sizeof(*r));
	r->diag = ember_diag_make(r->why, sizeof(r->why));
	if (!ident || ident[EI_DATA] != ELFDATA2LSB)
		return -EOPNOTSUPP;
	if (!s->info.data || !s->abbrev.data)
		return -EOPNOTSUPP;
	r->s = s;
	r->dw = dw;
	return 0;
}

void sym_die_release(struct sym_die_reader *r)
{
	if (!r)
		return;
	for (size_t c = 0; c < r->nchunks; c++)
		free(r->chunks[c]);
	free(r->chunks);
	for (unsigned i = 0; i < SYM_DIE_CACHE; i++)
		elfdw_abbrevs_release(&r->cache[i]);
	memset(r, 0, sizeof(*r));
}

struct sym_die_unit *sym_die_unit_at(struct sym_die_reader *r, uint64_t off)
{
	size_t lo = 0, hi;
	int err = 0;

	/* list on until a .debug_info unit ends past off */
	while (r->ninfo == r->nunits &&
	       (!r->ninfo || unit_get(r, r->ninfo - 1)->u.end <= off) &&
	       list_next(r, &err))
		;
	hi = r->ninfo;
	while (lo < hi) { /* the first unit starting after off */
		size_t mid = lo + (hi - lo) / 2;

		if (unit_get(r, mid)->u.off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || off >= unit_get(r, lo - 1)->u.end)
		return NULL;
	return unit_get(r, lo - 1);
}

/* Read the unit DIE's bases (once); split DWARF is libdw's business. */
static int unit_open(struct sym_die_reader *r, struct sym_die_unit *u,
		     const struct elfdw_abbrevs *t)
{
	int err;

	if (u->state == SYM_DIE_UNIT_OPEN)
		return 0;
	if (u->state == SYM_DIE_UNIT_BAD)
		return -EOPNOTSUPP;
	err = elfdw_unit_open(r->s, &u->u, t, NULL);
	if (!err && u->u.split)
		err = EMBER_FAIL(&r->diag, -EOPNOTSUPP, "unit at 0x%llx: split DWARF",
				 (unsigned long long)u->u.off);
	else if (err)
		(void)EMBER_FAIL(&r->diag, err, "unit at 0x%llx: unit DIE unreadable: %s",
			   (unsigned long long)u->u.off, strerror(-err));
	u->state = err ? SYM_DIE_UNIT_BAD : SYM_DIE_UNIT_OPEN;
	return err;
}

/* The slot to parse a new table into: the last walked unit's (units are
 * walked in order, and its arrays are the right size), else round robin,
 * past the pinned one (the walked unit's, which must outlive reads in
 * other units). */
static struct elfdw_abbrevs *cache_victim(struct sym_die_reader *r)
{
	struct elfdw_abbrevs *t = &r->cache[r->cache_next];

	if (r->last_walked && r->last_walked != r->pinned) {
		t = (struct elfdw_abbrevs *)r->last_walked;
		r->last_walked = NULL;
		return t;
	}

	r->cache_next = (r->cache_next + 1) % SYM_DIE_CACHE;
	if (t == r->pinned) {
		t = &r->cache[r->cache_next];
		r->cache_next = (r->cache_next + 1) % SYM_DIE_CACHE;
	}
	return t;
}

int sym_die_unit_abbrevs(struct sym_die_reader *r, struct sym_die_unit *u,
			 const struct elfdw_abbrevs **out)
{
	struct elfdw_abbrevs *t;
	int err;

	if (u->state == SYM_DIE_UNIT_BAD)
		return -EOPNOTSUPP;
	for (unsigned i = 0; i < SYM_DIE_CACHE; i++) {
		t = &r->cache[i];
		/* addr_size 0: an empty slot (units have 4 or 8) */
		if (t->addr_size == u->u.addr_size && t->off == u->u.abbrev_off &&
		    t->version == u->u.version) {
			*out = t;
			return unit_open(r, u, t);
		}
	}
	t = cache_victim(r);
	err = elfdw_abbrevs_read(t, &sym_die_schema, &r->s->abbrev, u->u.abbrev_off,
				 u->u.addr_size, u->u.version, &r->diag);
	if (err) {
		u->state = SYM_DIE_UNIT_BAD;
		return err;
	}
	*out = t;
	return unit_open(r, u, t);
}

int sym_die_at(struct sym_die_reader *r, uint64_t off, struct elfdw_die *d)
{
	struct sym_die_unit *u = sym_die_unit_at(r, off);
	const struct elfdw_abbrevs *t;
	const uint8_t *p;
	int err;

	if (!u || off < u->u.die_off)
		return -EINVAL;
	if (u->u.unit_type != DW_UT_compile && u->u.unit_type != DW_UT_partial &&
	    u->u.unit_type != DW_UT_type)
		return -EOPNOTSUPP;
	err = sym_die_unit_abbrevs(r, u, &t);
	if (err)
		return err;
	p = r->s->info.data + off;
	if (*p == 0) { /* a null entry: a DIE without attributes for libdw */
		*d = (struct elfdw_die){ .unit = &u->u, .off = off, .end = p + 1 };
		return 0;
	}
	return elfdw_die_read(r->s, &u->u, t, &p, ELFDW_ALL_KINDS, d);
}
