/*
 * fuzz_elfdw.c - libFuzzer target for the ELF/DWARF layer's readers
 * (elf-dwarf/elfdw.h) over fuzzed section bytes: the cursors over the
 * whole input (their one semantic checked: a success moves forward
 * within the bytes, a failure moves nothing), then the DWARF sections
 * the input holds: every unit header of .debug_info, its abbreviation
 * table, its unit DIE and bases, every DIE of the unit (read whole,
 * stepped over by sibling and by skip programs, each kept value read by
 * every value reader), each DIE's range list, and the line-program
 * header its DW_AT_stmt_list names plus every header .debug_line holds.
 * Nothing may crash, leak or read out of bounds: each section is copied
 * to a buffer of its exact size for ASan to watch.
 *
 * Input: nine little-endian u32 lengths (.debug_info, .debug_abbrev,
 * .debug_str, .debug_line_str, .debug_str_offsets, .debug_addr,
 * .debug_ranges, .debug_rnglists, .debug_line), then those sections'
 * bytes in that order (each cut at the input's end).  The seeds in
 * corpus/elfdw/ are real sections of GCC and clang DWARF 2, 4 and 5,
 * 32- and 64-bit, packed by make_elfdw_seeds.py.
 *
 * Built with -fsanitize=fuzzer under EMBER_FUZZ=ON; the plain build links
 * it with replay.c.
 */
#include "elfdw.h"
#include "common.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NSECT 9
#define MAX_DEPTH 8
#define MAX_DIES 20000

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

static void broken(const char *what)
{
	fprintf(stderr, "fuzz_elfdw: %s\n", what);
	abort();
}

/* ---- the cursors ----------------------------------------------------- */

/* One read chosen by op at *p: a success must move forward, not past
 * end; a failure must not move. */
static void cursor_step(const uint8_t **p, const uint8_t *end, uint8_t op)
{
	const uint8_t *before = *p, *blk;
	const char *s;
	uint64_t v;
	int64_t sv;
	uint8_t b;
	int err;

	switch (op % 8) {
	case 0: err = ember_cur_uleb(p, end, &v); break;
	case 1: err = ember_cur_sleb(p, end, &sv); break;
	case 2: err = ember_cur_uint(p, end, 1 + (op >> 3) % 8, &v); break;
	case 3: err = ember_cur_cstr(p, end, &s); break;
	case 4: err = ember_cur_skip_leb(p, end); break;
	case 5: err = ember_cur_bytes(p, end, op >> 3, &blk); break;
	case 6: err = ember_cur_u8(p, end, &b); break;
	default: err = ember_cur_skip(p, end, op >> 2); break;
	}
	if (err ? *p != before : (*p < before || *p > end))
		broken("a cursor moved wrongly");
	if (err && err != -ENODATA && err != -ERANGE)
		broken("a cursor failed with another error");
}

static void cursors(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;

	for (size_t n = 0; p < end && n < size; n++) {
		const uint8_t *at = p;

		cursor_step(&p, end, *at);
		if (p == at)
			p++; /* a failure: go on from the next byte */
	}
	/* at a position past the end of a shorter range */
	if (size >= 2) {
		p = data + size - 1;
		cursor_step(&p, data + size / 2, data[0]);
	}
}

/* ---- DWARF ----------------------------------------------------------- */

enum { S_NAME = ELFDW_SLOT_USER, S_LINKAGE, S_COMP_DIR, S_STMT_LIST,
       S_DECL_FILE, S_DECL_LINE, S_CALL_FILE, S_CALL_LINE, S_ORIGIN,
       S_SPEC, S_TYPE };
enum { K_OTHER = ELFDW_KIND_OTHER, K_UNIT, K_FUNC, K_INLINED, K_BLOCK,
       K_SCOPE, K_VAR };

static uint8_t slot_of(uint64_t at)
{
	switch (at) {
	case DW_AT_name: return S_NAME;
	case DW_AT_linkage_name: return S_LINKAGE;
	case DW_AT_comp_dir: return S_COMP_DIR;
	case DW_AT_stmt_list: return S_STMT_LIST;
	case DW_AT_decl_file: return S_DECL_FILE;
	case DW_AT_decl_line: return S_DECL_LINE;
	case DW_AT_call_file: return S_CALL_FILE;
	case DW_AT_call_line: return S_CALL_LINE;
	case DW_AT_abstract_origin: return S_ORIGIN;
	case DW_AT_specification: return S_SPEC;
	case DW_AT_type: return S_TYPE;
	default: return 0;
	}
}

static uint8_t kind_of(uint64_t tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_partial_unit: return K_UNIT;
	case DW_TAG_subprogram: return K_FUNC;
	case DW_TAG_inlined_subroutine: return K_INLINED;
	case DW_TAG_lexical_block: return K_BLOCK;
	case DW_TAG_namespace: case DW_TAG_structure_type: return K_SCOPE;
	case DW_TAG_variable: case DW_TAG_formal_parameter: return K_VAR;
	default: return K_OTHER;
	}
}

static const struct elfdw_schema schema = {
	.attr_slot = slot_of, .tag_kind = kind_of,
	.capture_kinds = (1u << K_FUNC) | (1u << K_INLINED),
	.first_mask = (1u << S_ORIGIN) | (1u << S_SPEC),
};

struct walk {
	const struct elfdw_sections *s;
	const struct elfdw_unit *u;
	const struct elfdw_abbrevs *t;
	unsigned want, full;
	size_t dies;
};

static int count_range(void *arg, uint64_t lo, uint64_t hi)
{
	size_t *n = arg;

	(void)lo, (void)hi;
	return ++*n > 10000 ? -E2BIG : 0;
}

/* Every kept value by every reader, and the DIE's ranges. */
static void values(const struct walk *w, const struct elfdw_die *d)
{
	size_t n = 0;

	for (unsigned slot = 1; slot < ELFDW_MAX_SLOTS; slot++) {
		const char *str;
		uint64_t v;

		if (!elfdw_die_has(d, slot))
			continue;
		/* strlen: ASan sees a string that runs past its section */
		if (!elfdw_val_str(w->s, d, slot, &str) && strlen(str) == SIZE_MAX)
			broken("a string without its NUL");
		elfdw_val_const(w->s, d, slot, &v);
		elfdw_val_addr(w->s, d, slot, &v);
		/* unit-relative references stay in the unit (ref_addr is any
		 * offset: its target is checked where it is read) */
		if (!elfdw_val_ref(w->s, d, slot, &v) && d->v[slot].form != DW_FORM_ref_addr &&
		    (v < w->u->die_off || v >= w->u->end))
			broken("a reference outside its unit");
		elfdw_val_secoff(w->s, d, slot, &v);
	}
	elfdw_die_ranges(w->s, d, count_range, &n);
}

/* The children of the DIE whose values end at p, each read, its
 * children walked, then stepped over by elfdw_die_after. */
static void walk_children(struct walk *w, const uint8_t *p, unsigned depth)
{
	struct elfdw_die c;

	const uint8_t *unit = elfdw_unit_start(w->s, w->u), *end = elfdw_unit_end(w->s, w->u);

	while (w->dies < MAX_DIES &&
	       elfdw_next_child(w->s, w->u, w->t, &p, w->want, w->full, &c) == 0) {
		const uint8_t *die = w->s->info.data + c.off, *next;

		w->dies++;
		if (die < unit || c.end <= die || c.end > end || p != c.end)
			broken("a DIE ends outside its unit");
		values(w, &c);
		if (c.ab->children && depth < MAX_DEPTH)
			walk_children(w, c.end, depth + 1);
		if (elfdw_die_after(w->s, w->t, &c, &next))
			return;
		if (next <= die || next > end)
			broken("a sibling outside its unit");
		p = next;
	}
}

static void line_headers(const struct elfdw_sections *s, uint64_t stmt_list)
{
	struct elfdw_line_header h;
	uint64_t off = 0;

	if (!elfdw_line_header_read(s, stmt_list, ELFDW_LINE_TABLES, &h, NULL))
		elfdw_line_header_release(&h);
	for (int n = 0; n < 64 && off < s->line.size; n++) {
		if (elfdw_line_header_read(s, off, n & 1 ? 0 : ELFDW_LINE_TABLES, &h, NULL))
			break;
		if (h.end <= off || h.program > h.program_end)
			broken("a line program outside its unit");
		off = h.end;
		elfdw_line_header_release(&h);
	}
}

/* Every unit of .debug_info: header, abbreviations, unit DIE, DIEs. */
static void units(const struct elfdw_sections *s, uint8_t mode)
{
	struct elfdw_abbrevs t = { 0 };
	uint64_t off = 0;
	uint8_t version;
	char why[160];
	struct ember_diag d;

	if (s->info.size)
		elfdw_unit_version(s->info.data, s->info.size < 16 ? s->info.size : 16,
				   s->info.size, &version, NULL);
	for (int n = 0; n < 256 && off < s->info.size; n++) {
		struct elfdw_unit u;
		struct elfdw_die cu;
		uint64_t stmt = 0;

		d = ember_diag_make(why, sizeof(why));
		if (elfdw_unit_header(&s->info, off, &u, &d)) {
			if (!d.set)
				broken("a unit header refused without a reason");
			break;
		}
		if (u.end <= off || u.end > s->info.size || u.die_off >= u.end)
			broken("a unit outside .debug_info");
		off = u.end;
		if ((t.addr_size != u.addr_size || t.off != u.abbrev_off ||
		     t.version != u.version) &&
		    elfdw_abbrevs_read(&t, &schema, &s->abbrev, u.abbrev_off, u.addr_size,
				       u.version, NULL))
			continue;
		if (elfdw_unit_open(s, &u, &t, &cu))
			continue;
		values(&(struct walk){ .s = s, .u = &u, .t = &t }, &cu);
		struct walk w = { s, &u, &t, mode & 1 ? ELFDW_ALL_KINDS : 1u << K_FUNC,
				  mode & 2 ? ELFDW_ALL_KINDS : 0, 0 };
		walk_children(&w, cu.end, 0);
		if (!elfdw_val_secoff(s, &cu, S_STMT_LIST, &stmt))
			line_headers(s, stmt);
	}
	elfdw_abbrevs_release(&t);
	line_headers(s, 0);
}

/* The input cut into sections, each in a buffer of its own size. */
static void split(const uint8_t *data, size_t size, struct elfdw_sections *s,
		  uint8_t **own)
{
	struct elfdw_sect *f[NSECT] = { &s->info, &s->abbrev, &s->str, &s->line_str,
					&s->str_offsets, &s->addr, &s->ranges,
					&s->rnglists, &s->line };
	size_t at = 4 * NSECT;

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < NSECT; i++) {
		uint32_t len;
		size_t n;

		memcpy(&len, data + 4 * i, 4);
		n = at < size ? (len < size - at ? len : size - at) : 0;
		own[i] = malloc(n ? n : 1);
		if (own[i] && n)
			memcpy(own[i], data + at, n);
		*f[i] = (struct elfdw_sect){ own[i], own[i] ? n : 0 };
		at += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfdw_sections s;
	uint8_t *own[NSECT];

	ember_log_set_handler(quiet, NULL);
	cursors(data, size);
	if (size < 4 * NSECT)
		return 0;
	split(data, size, &s, own);
	units(&s, data[size - 1]);
	for (int i = 0; i < NSECT; i++)
		free(own[i]);
	return 0;
}
