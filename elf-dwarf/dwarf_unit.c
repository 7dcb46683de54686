/*
 * dwarf_unit.c - the units of .debug_info: the sections the DWARF
 * readers use, a unit header (DWARF 5 §7.5.1; DWARF 2-4 put the
 * abbreviation offset before the address size and have no unit type),
 * and the bases a unit DIE gives its values: the base address of range
 * lists, DW_AT_addr_base, DW_AT_str_offsets_base, DW_AT_rnglists_base
 * (§3.1.1).  Which units exist is for the caller to say (the symbolizer
 * follows libdw's list): this reads the one at an offset.
 */
#include "elfdw_internal.h"

static const char *const info_names[] = { ".debug_info", ".zdebug_info", NULL };
static const char *const abbrev_names[] = { ".debug_abbrev", ".zdebug_abbrev", NULL };
static const char *const str_names[] = { ".debug_str", ".zdebug_str", NULL };
static const char *const line_str_names[] = { ".debug_line_str", ".zdebug_line_str", NULL };
static const char *const str_off_names[] = { ".debug_str_offsets", ".zdebug_str_offsets", NULL };
static const char *const addr_names[] = { ".debug_addr", ".zdebug_addr", NULL };
static const char *const ranges_names[] = { ".debug_ranges", ".zdebug_ranges", NULL };
static const char *const rnglists_names[] = { ".debug_rnglists", ".zdebug_rnglists", NULL };
static const char *const line_names[] = { ".debug_line", ".zdebug_line", NULL };

/* The sections in the order of all_names[]. */
static struct elfdw_sect *field(struct elfdw_sections *s, int i)
{
	struct elfdw_sect *f[] = { &s->info, &s->abbrev, &s->str, &s->line_str,
				   &s->str_offsets, &s->addr, &s->ranges,
				   &s->rnglists, &s->line };

	return f[i];
}

static const char *const *const all_names[] = {
	info_names, abbrev_names, str_names, line_str_names, str_off_names,
	addr_names, ranges_names, rnglists_names, line_names,
};

#define NSECTIONS (sizeof(all_names) / sizeof(all_names[0]))

void elfdw_sections_loaded(Elf *elf, struct elfdw_sections *s)
{
	for (size_t i = 0; i < NSECTIONS; i++)
		*field(s, (int)i) = elfdw_section_loaded(elf, all_names[i]);
}

int elfdw_sections_read(Elf *elf, uint64_t max_size, struct elfdw_sections *s,
			struct ember_diag *d)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < NSECTIONS; i++) {
		int err = elfdw_section_read(elf, all_names[i], max_size, field(s, (int)i), d);

		if (err && err != -ENOENT)
			return err;
	}
	return 0;
}

/* unit_length (§7.4): 32-bit, or 0xffffffff and 64-bit. */
static int read_length(const uint8_t **p, const uint8_t *end, uint64_t *len,
		       uint8_t *offset_size)
{
	int err = ember_cur_uint(p, end, 4, len);

	*offset_size = 4;
	if (err || *len < 0xfffffff0)
		return err;
	if (*len != 0xffffffff)
		return -EINVAL; /* reserved */
	*offset_size = 8;
	return ember_cur_uint(p, end, 8, len);
}

int elfdw_unit_version(const uint8_t *head, size_t len, uint64_t size,
		       uint8_t *version, struct ember_diag *d)
{
	const uint8_t *p = head, *end = head + len;
	uint8_t offset_size;
	uint64_t ulen, v;
	int err;

	/* libdw: no unit unless 4 bytes and one more are there */
	EMBER_FAIL_IF(size <= 4, d, -ENODATA, "first unit: .debug_info of %llu bytes",
		      (unsigned long long)size);
	if ((err = read_length(&p, end, &ulen, &offset_size)))
		return EMBER_FAIL(d, err, "first unit: %s",
				  err == -EINVAL ? "reserved unit length" : "truncated length");
	if ((err = ember_cur_uint(&p, end, 2, &v)))
		return EMBER_FAIL(d, err, "first unit: truncated header");
	EMBER_FAIL_IF(v < 2 || v > 5, d, -EOPNOTSUPP, "first unit: DWARF version %llu",
		      (unsigned long long)v);
	*version = (uint8_t)v;
	return 0;
}

static bool unit_type_known(uint64_t type)
{
	return type == DW_UT_compile || type == DW_UT_partial ||
	       type == DW_UT_skeleton || type == DW_UT_split_compile ||
	       type == DW_UT_type || type == DW_UT_split_type;
}

/* From the version on; p at the version, end the unit's end. */
static int header_fields(const uint8_t **p, const uint8_t *end,
			 struct elfdw_unit *u, struct ember_diag *d)
{
	uint64_t version, type = DW_UT_compile, asize = 0, abbrev;
	int err;

	if ((err = ember_cur_uint(p, end, 2, &version)))
		return EMBER_FAIL(d, err, "unit at 0x%llx: truncated header",
				  (unsigned long long)u->off);
	EMBER_FAIL_IF(version < 2 || version > 5, d, -EOPNOTSUPP,
		      "unit at 0x%llx: DWARF version %llu",
		      (unsigned long long)u->off, (unsigned long long)version);
	if (version >= 5 && (err = ember_cur_uint(p, end, 1, &type)))
		return EMBER_FAIL(d, err, "unit at 0x%llx: truncated header",
				  (unsigned long long)u->off);
	EMBER_FAIL_IF(!unit_type_known(type), d, -EOPNOTSUPP,
		      "unit at 0x%llx: unit type 0x%llx",
		      (unsigned long long)u->off, (unsigned long long)type);
	err = version >= 5 ? ember_cur_uint(p, end, 1, &asize) : 0;
	if (!err)
		err = ember_cur_uint(p, end, u->offset_size, &abbrev);
	if (!err && version < 5)
		err = ember_cur_uint(p, end, 1, &asize);
	if (!err && (type == DW_UT_skeleton || type == DW_UT_split_compile ||
		     type == DW_UT_type || type == DW_UT_split_type))
		err = ember_cur_uint(p, end, 8, &u->unit_id);
	if (!err && (type == DW_UT_type || type == DW_UT_split_type))
		err = ember_cur_uint(p, end, u->offset_size, &u->type_off);
	if (err)
		return EMBER_FAIL(d, err, "unit at 0x%llx: truncated header",
				  (unsigned long long)u->off);
	u->version = (uint8_t)version;
	u->unit_type = (uint8_t)type;
	u->addr_size = (uint8_t)asize;
	u->abbrev_off = abbrev;
	return 0;
}

int elfdw_unit_header(const struct elfdw_sect *info, uint64_t off,
		      struct elfdw_unit *out, struct ember_diag *d)
{
	struct elfdw_unit u = { .off = off, .base = UINT64_MAX,
				.addr_base = UINT64_MAX, .str_off_base = UINT64_MAX,
				.rnglists_base = UINT64_MAX };
	const uint8_t *p, *end;
	uint64_t len;
	int err;

	EMBER_FAIL_IF(!info->data || off >= info->size, d, -ENODATA,
		      "unit at 0x%llx: outside .debug_info (%zu bytes)",
		      (unsigned long long)off, info->size);
	p = info->data + off;
	end = info->data + info->size;
	if ((err = read_length(&p, end, &len, &u.offset_size)))
		return EMBER_FAIL(d, err, "unit at 0x%llx: %s", (unsigned long long)off,
				  err == -EINVAL ? "reserved unit length" : "truncated length");
	EMBER_FAIL_IF(len > (uint64_t)(end - p), d, -ENODATA,
		      "unit at 0x%llx: length 0x%llx runs past .debug_info",
		      (unsigned long long)off, (unsigned long long)len);
	end = p + len;
	u.end = (uint64_t)(end - info->data);
	err = header_fields(&p, end, &u, d);
	if (err)
		return err;
	u.die_off = (uint64_t)(p - info->data);
	EMBER_FAIL_IF(u.die_off >= u.end, d, -ENODATA,
		      "unit at 0x%llx: no room for its DIE", (unsigned long long)off);
	*out = u;
	return 0;
}

/* A base attribute of the unit DIE: a section offset within sect
 * (UINT64_MAX when absent). */
static int unit_base(const struct elfdw_sections *s, const struct elfdw_die *d,
		     unsigned slot, const struct elfdw_sect *sect, uint64_t *out)
{
	int err = elfdw_val_secoff(s, d, slot, out);

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
static int unit_base_address(const struct elfdw_sections *s,
			     const struct elfdw_die *d, uint64_t *out)
{
	int err = elfdw_val_addr(s, d, ELFDW_SLOT_LOW_PC, out);

	if (err == -ENOENT)
		err = elfdw_val_addr(s, d, ELFDW_SLOT_ENTRY_PC, out);
	if (err == -ENOENT) {
		*out = 0;
		err = 0;
	}
	return err;
}

int elfdw_unit_open(const struct elfdw_sections *s, struct elfdw_unit *u,
		    const struct elfdw_abbrevs *t, struct elfdw_die *cu)
{
	const uint8_t *pos = s->info.data + u->die_off;
	struct elfdw_die mem, *d = cu ? cu : &mem;
	int err;

	if (u->offset_size != 4 || (u->addr_size != 4 && u->addr_size != 8))
		return -EOPNOTSUPP;
	u->addr_base = u->str_off_base = u->rnglists_base = UINT64_MAX;
	if (pos >= elfdw_unit_end(s, u) || *pos == 0)
		return -EINVAL;
	err = elfdw_die_read(s, u, t, &pos, ELFDW_ALL_KINDS, d);
	if (err)
		return err;
	u->die_tag = d->ab->tag;
	u->split = elfdw_die_has(d, ELFDW_SLOT_SPLIT);
	err = unit_base(s, d, ELFDW_SLOT_ADDR_BASE, &s->addr, &u->addr_base);
	if (!err)
		err = unit_base(s, d, ELFDW_SLOT_STR_OFFSETS_BASE, &s->str_offsets,
				&u->str_off_base);
	if (!err)
		err = unit_base(s, d, ELFDW_SLOT_RNGLISTS_BASE, &s->rnglists,
				&u->rnglists_base);
	if (!err)
		err = unit_base_address(s, d, &u->base);
	return err;
}
