/*
 * pprof_symbolize.c - a decoded pprof profile's locations given functions
 * and lines (symsvc_symbolize_pprof() in symsvc.h), for POST
 * /api/v1/symbolize/pprof and the profile store's ingest alike.
 *
 * For each location whose mapping carries a build ID: the address is
 * normalized through the mapping (file offset = address - memory_start +
 * file_offset) and the ELF's program headers (offset -> virtual address),
 * looked up, and its frames written as Location.line, inlined callees
 * first as profile.proto specifies.  Mappings get has_functions /
 * has_filenames / has_line_numbers / has_inline_frames from what answered.
 * Locations that already have lines are left alone; the others that stay
 * without lines are counted by reason, never dropped.  The profile's
 * invariants and edits are wire/'s (wire/pprof.h).
 */
#include "symsvc_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const why_names[SYMSVC_PPROF_WHY_INDEX] = {
	[SYMSVC_PPROF_NO_MAPPING] = "no_mapping",
	[SYMSVC_PPROF_NO_BUILD_ID] = "no_build_id",
	[SYMSVC_PPROF_OUTSIDE_MAPPING] = "outside_mapping",
	[SYMSVC_PPROF_NOT_IN_ELF] = "offset_not_in_elf",
	[SYMSVC_PPROF_NO_SYMBOLS] = "no_symbols_at_address",
};

/* Field f of o when the caller's struct has it (o->sz), else 0. */
#define PPROF_OPT(o, f)                                                            \
	((o) && (o)->sz >= offsetof(struct symsvc_pprof_opts, f) + sizeof((o)->f) ? (o)->f : 0)

struct pprof_run {
	struct symsvc *svc;
	struct pprof_profile *p;
	bool linkage_names;
	void (*on_unresolved)(void *arg, uint64_t mapping_id, unsigned why);
	void *on_unresolved_arg;
	struct symsvc_pprof_stats *st;
	struct symsvc_req req;		/* the request's check and fetch cap */
	struct sym_frame frames[SYMSVC_FRAMES_MAX];
	struct pprof_line lines[SYMSVC_FRAMES_MAX];
};

const char *symsvc_pprof_why_name(unsigned why)
{
	if (why < SYMSVC_PPROF_WHY_INDEX)
		return why_names[why];
	return why < SYMSVC_PPROF_WHY_COUNT
		       ? symjson_error_name((enum symjson_error)(why - SYMSVC_PPROF_WHY_INDEX))
		       : NULL;
}

void symsvc_pprof_why_list(const struct symsvc_pprof_stats *st, char *out, size_t size)
{
	size_t at = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < SYMSVC_PPROF_WHY_COUNT && at < size; i++) {
		const char *name = symsvc_pprof_why_name(i);

		if (st->why[i] && name)
			at += (size_t)snprintf(out + at, size - at, "%s%s=%zu", at ? ", " : "",
					       name, st->why[i]);
	}
}

/*
 * The locations without lines grouped by mapping, built once in one pass
 * (a counting sort on the mapping's position), so the work is linear in
 * the profile whatever its counts of mappings and locations: group k
 * (0 <= k < n_mapping) is loc[first[k], first[k + 1]), indexes into the
 * message's location array, and group n_mapping the locations of no
 * mapping.  Edits never move the location array itself.
 */
struct loc_groups {
	uint32_t *loc;
	size_t *first;
	size_t n_groups;
};

static void groups_release(struct loc_groups *g)
{
	free(g->loc);
	free(g->first);
}

/* The group of location l: its mapping's position, or n_mapping. */
static size_t group_of(const struct pprof_profile *p, const pprof_location_t *l)
{
	size_t n = pprof_message(p)->n_mapping, k;

	if (!l->mapping_id)
		return n;
	k = pprof_mapping_index(p, l->mapping_id);
	return k < n ? k : n; /* validated: every mapping_id names a mapping */
}

static int groups_build(const struct pprof_profile *p, struct loc_groups *g)
{
	const pprof_message_t *msg = pprof_message(p);
	size_t n = msg->n_mapping;

	g->n_groups = n + 1;
	g->first = calloc(n + 2, sizeof(*g->first));
	g->loc = malloc((msg->n_location ? msg->n_location : 1) * sizeof(*g->loc));
	if (!g->first || !g->loc || msg->n_location > UINT32_MAX)
		return -ENOMEM;
	for (size_t i = 0; i < msg->n_location; i++)
		if (!msg->location[i]->n_line)
			g->first[group_of(p, msg->location[i]) + 1]++;
	for (size_t k = 0; k < g->n_groups; k++)
		g->first[k + 1] += g->first[k];
	for (size_t i = 0; i < msg->n_location; i++) /* first[k] runs up to first[k + 1] */
		if (!msg->location[i]->n_line)
			g->loc[g->first[group_of(p, msg->location[i])]++] = (uint32_t)i;
	for (size_t k = g->n_groups; k > 0; k--) /* and back to the group's start */
		g->first[k] = g->first[k - 1];
	g->first[0] = 0;
	return 0;
}

/* One location of mapping mid (0: of none) left without lines, for why. */
static void note_unresolved(struct pprof_run *r, uint64_t mid, unsigned why)
{
	r->st->unresolved++;
	r->st->why[why]++;
	if (r->on_unresolved)
		r->on_unresolved(r->on_unresolved_arg, mid, why);
}

/* Every location of group k counted as unresolved for why. */
static void count_unresolved(struct pprof_run *r, const struct loc_groups *g, size_t k,
			     unsigned why)
{
	const pprof_message_t *msg = pprof_message(r->p);
	uint64_t mid = k < msg->n_mapping ? msg->mapping[k]->id : 0;

	for (size_t i = g->first[k]; i < g->first[k + 1]; i++)
		note_unresolved(r, mid, why);
}

/* The mapping's build ID as lowercase hex, or false when it has none. */
static bool mapping_build_id(const struct pprof_profile *p, const pprof_mapping_t *m,
			     char *out, size_t size)
{
	const char *s = pprof_string(p, m->build_id);
	size_t n = s ? strlen(s) : 0;

	if (n < 2 || n % 2 || n >= size)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		out[i] = (char)tolower((unsigned char)s[i]);
	}
	out[n] = '\0';
	return true;
}

static unsigned flags_of(const struct sym_frame *f, int n)
{
	unsigned flags = PPROF_MAPPING_HAS_FUNCTIONS;

	if (f[n - 1].source == SYM_SOURCE_DWARF || f[n - 1].source == SYM_SOURCE_GOPCLNTAB)
		flags |= PPROF_MAPPING_HAS_FILENAMES | PPROF_MAPPING_HAS_LINE_NUMBERS |
			 PPROF_MAPPING_HAS_INLINE_FRAMES;
	return flags;
}

/* Frames [0, n) of r->frames as loc's lines: 0 or wire's error. */
static int set_lines(struct pprof_run *r, const struct sym_index *idx,
		     const pprof_location_t *loc, int n)
{
	for (int i = 0; i < n; i++) {
		const struct sym_frame *f = &r->frames[i];
		struct symsvc_frame_name fn;
		struct pprof_function_desc d;
		int err;

		symsvc_frame_name(idx, f, !r->linkage_names, &fn);
		d = (struct pprof_function_desc){ .name = fn.function,
						  .system_name = fn.system_name,
						  .filename = fn.filename,
						  .start_line = fn.start_line };
		err = pprof_add_function(r->p, &d, &r->lines[i].function_id);
		if (err)
			return err;
		r->lines[i].line = fn.line;
		r->lines[i].column = f->column;
	}
	return pprof_location_set_lines(r->p, loc->id, r->lines, (size_t)n);
}

/* One location's frames as its lines: the mapping flags they give in
 * *flags, or 0 with *why set; a negative errno when editing fails. */
static int symbolize_location(struct pprof_run *r, const struct sym_index *idx,
			      const pprof_mapping_t *m, const pprof_location_t *loc,
			      unsigned *flags, unsigned *why)
{
	uint64_t vaddr, off = loc->address - m->memory_start + m->file_offset;
	int n, err;

	*flags = 0;
	*why = SYMSVC_PPROF_OUTSIDE_MAPPING;
	if (loc->address < m->memory_start || (m->memory_limit && loc->address >= m->memory_limit))
		return 0;
	*why = SYMSVC_PPROF_NOT_IN_ELF;
	if (sym_index_offset_to_vaddr(idx, off, &vaddr))
		return 0;
	*why = SYMSVC_PPROF_NO_SYMBOLS;
	n = sym_index_lookup(idx, vaddr, SYM_ADDR_VADDR, SYM_LOOKUP_SYMBOL_NAME, r->frames,
			     SYMSVC_FRAMES_MAX);
	if (n <= 0)
		return 0;
	n = n > SYMSVC_FRAMES_MAX ? SYMSVC_FRAMES_MAX : n;
	err = set_lines(r, idx, loc, n);
	if (!err)
		*flags = flags_of(r->frames, n);
	return err;
}

/* The locations of group k (mapping mid), through index idx. */
static int symbolize_locations(struct pprof_run *r, const struct sym_index *idx,
			       const struct loc_groups *g, size_t k, uint64_t mid)
{
	unsigned all = 0, flags, why;
	int err = 0;

	for (size_t i = g->first[k]; !err && i < g->first[k + 1]; i++) {
		/* edits may move the mapping array: look both up each time */
		const pprof_location_t *loc = pprof_message(r->p)->location[g->loc[i]];

		err = symsvc_req_poll(&r->req);
		if (err)
			break;
		err = symbolize_location(r, idx, pprof_mapping_by_id(r->p, mid), loc, &flags, &why);
		all |= flags;
		if (flags) {
			r->st->resolved++;
		} else if (!err) {
			note_unresolved(r, mid, why);
		}
	}
	return !err && all ? pprof_mapping_set_flags(r->p, mid, all) : err;
}

/* Group k, the locations of mapping m. */
static int symbolize_mapping(struct pprof_run *r, const struct loc_groups *g, size_t k,
			     const pprof_mapping_t *m)
{
	struct symsvc_index *ix;
	char id[STORE_BUILD_ID_HEX];
	uint64_t mid = m->id;
	int err;

	if (g->first[k] == g->first[k + 1])
		return 0; /* nothing to symbolize: no index asked for */
	if (!mapping_build_id(r->p, m, id, sizeof(id))) {
		count_unresolved(r, g, k, SYMSVC_PPROF_NO_BUILD_ID);
		return 0;
	}
	err = symsvc_index_get_for(r->svc, id, &r->req, &ix);
	if (err && r->req.stopped)
		return err; /* the request stops: past its deadline, or its client gone */
	if (err) {
		enum symjson_error reason = symsvc_error_reason(err);

		/* a profile with mappings left for these would pass for complete */
		if ((reason == SYMJSON_ERR_STORE_UNAVAILABLE || reason == SYMJSON_ERR_BUSY) &&
		    !r->st->store_err)
			r->st->store_err = err;
		count_unresolved(r, g, k, SYMSVC_PPROF_WHY_INDEX + (unsigned)reason);
		return 0;
	}
	err = symbolize_locations(r, symsvc_index_sym(ix), g, k, mid);
	symsvc_index_put(r->svc, ix);
	return err;
}

int symsvc_symbolize_pprof(struct symsvc *svc, struct pprof_profile *p,
			   const struct symsvc_pprof_opts *opts, struct symsvc_pprof_stats *st)
{
	struct pprof_run *r = calloc(1, sizeof(*r));
	struct loc_groups g = { 0 };
	size_t n = pprof_message(p)->n_mapping;
	int err = r ? groups_build(p, &g) : -ENOMEM;

	*st = (struct symsvc_pprof_stats){ 0 };
	if (err)
		goto out;
	*r = (struct pprof_run){ .svc = svc, .p = p, .st = st };
	r->linkage_names = PPROF_OPT(opts, linkage_names);
	r->on_unresolved = PPROF_OPT(opts, on_unresolved);
	r->on_unresolved_arg = PPROF_OPT(opts, on_unresolved_arg);
	symsvc_req_init(&r->req, PPROF_OPT(opts, request));
	for (size_t k = 0; !err && k < n; k++)
		err = symbolize_mapping(r, &g, k, pprof_message(p)->mapping[k]);
	if (!err)
		count_unresolved(r, &g, n, SYMSVC_PPROF_NO_MAPPING);
out:
	groups_release(&g);
	free(r);
	return err;
}
