/*
 * out_pprof.c - a result as a pprof profile (wire/pprof.h builds it,
 * profile.proto, gzip-compressed as Go writes it): one sample type (the
 * queried one), its period, the time span merged, and per stack with a
 * value a sample whose locations keep their mapping, address and lines
 * (and their frame type, Ember's Location field 1000: wire/pprof.h),
 * so `go tool pprof` reads it like any profile; the parts of a stack's
 * value that samples with attributes gave are samples of their own, the
 * attributes their string labels (-tags, -tagfocus).  A diff adds a second
 * dictionary's stacks, scaled, and marks them as pprof's diff base.
 *
 * An unsymbolized location gets a function named as the trees name it
 * ("MODULE+0xOFFSET", pmodel_loc_unresolved_name), and every mapping
 * has_functions (with has_filenames and has_line_numbers where a frame of
 * it has them): `go tool pprof` symbolizes only mappings without those
 * flags, locally from a binary it finds by the mapping's path, then by
 * posting their addresses to the URL's /symbolz, which Ember does not
 * answer (404), and gives up on the whole profile when that fails.
 */
#include "pmodel_internal.h"

#include <assert.h>
#include <math.h>

int pmodel_pprof_begin(const struct pmodel_result *r, struct pprof_profile **out)
{
	struct pprof_profile *p = pprof_profile_new();
	int err = p ? 0 : -ENOMEM;

	if (!err)
		err = pprof_add_sample_type(p, r->sample_type, r->sample_unit);
	if (!err && (*r->period_type || r->period))
		err = pprof_set_period(p, r->period_type, r->period_unit, r->period);
	if (err) {
		pprof_profile_free(p);
		return err;
	}
	if (r->profiles)
		pprof_set_time(p, r->min_time, r->max_time - r->min_time);
	*out = p;
	return 0;
}

struct emit {
	struct pprof_profile *p;
	const struct pmodel_dict *d;
	uint64_t *map, *loc; /* dict index -> pprof id, 0 unset */
	unsigned *map_flags; /* dict mapping index -> enum pprof_mapping_flags */
};

static int emit_mapping(struct emit *e, uint32_t m, uint64_t *id)
{
	const struct pmodel_map *dm = &e->d->maps.v[m];
	struct pprof_mapping_desc md = { .start = dm->start,
					.limit = dm->limit,
					.offset = dm->offset,
					.filename = pmodel_str(&e->d->str, dm->filename),
					.build_id = pmodel_str(&e->d->str, dm->build_id) };

	if (!e->map[m])
		EMBER_FORWARD_IF_ERROR(pprof_add_mapping(e->p, &md, &e->map[m]));
	*id = e->map[m];
	return 0;
}

/* The flags of l's mapping that its lines (functions) show. */
static void note_flags(struct emit *e, const struct pmodel_loc *l, unsigned flags)
{
	if (l->mapping)
		e->map_flags[l->mapping - 1] |= flags | PPROF_MAPPING_HAS_FUNCTIONS;
}

static int emit_lines(struct emit *e, const struct pmodel_loc *l, uint64_t id)
{
	struct pprof_line small[16], *lines = small;
	unsigned flags = 0;
	int err = 0;

	if (l->nlines > 16 && !(lines = calloc(l->nlines, sizeof(*lines))))
		return -ENOMEM;
	for (uint32_t k = 0; !err && k < l->nlines; k++) {
		const struct pmodel_line *ln = &e->d->lines.v[l->line_off + k];
		const struct pmodel_func *f = &e->d->funcs.v[ln->func];
		struct pprof_function_desc fd = {
			pmodel_str(&e->d->str, f->name), pmodel_str(&e->d->str, f->system_name),
			pmodel_str(&e->d->str, f->filename), f->start_line };

		lines[k].line = ln->line;
		lines[k].column = 0;
		flags |= (*fd.filename ? PPROF_MAPPING_HAS_FILENAMES : 0) |
			 (ln->line > 0 ? PPROF_MAPPING_HAS_LINE_NUMBERS : 0);
		err = pprof_add_function(e->p, &fd, &lines[k].function_id);
	}
	note_flags(e, l, flags);
	if (!err)
		err = pprof_location_set_lines(e->p, id, lines, l->nlines);
	if (lines != small)
		free(lines);
	return err;
}

/* Unsymbolized l named in the profile itself, as the trees name it. */
static int emit_unresolved(struct emit *e, const struct pmodel_loc *l, uint64_t id)
{
	char name[PMODEL_UNRESOLVED_NAME_MAX];
	struct pprof_function_desc fd = { name, name, "", 0 };
	struct pprof_line line = { 0 };

	pmodel_loc_unresolved_name(e->d, l, name, sizeof(name));
	EMBER_FORWARD_IF_ERROR(pprof_add_function(e->p, &fd, &line.function_id));
	note_flags(e, l, 0);
	return pprof_location_set_lines(e->p, id, &line, 1);
}

static int emit_location(struct emit *e, uint32_t loc, uint64_t *id)
{
	const struct pmodel_loc *l = &e->d->locs.v[loc];
	uint64_t mid = 0;

	if (e->loc[loc]) {
		*id = e->loc[loc];
		return 0;
	}
	if (l->mapping)
		EMBER_FORWARD_IF_ERROR(emit_mapping(e, l->mapping - 1, &mid));
	EMBER_FORWARD_IF_ERROR(pprof_add_location(e->p, mid, l->address, &e->loc[loc]));
	if (l->type)
		EMBER_FORWARD_IF_ERROR(pprof_location_set_frame_type(
			e->p, e->loc[loc], pmodel_str(&e->d->str, l->type)));
	EMBER_FORWARD_IF_ERROR(l->nlines ? emit_lines(e, l, e->loc[loc])
					 : emit_unresolved(e, l, e->loc[loc]));
	*id = e->loc[loc];
	return 0;
}

/* The locations of node's stack, leaf first, into stack. */
static int emit_stack(struct emit *e, uint32_t node, struct pmodel_u64s *stack)
{
	stack->n = 0;
	for (uint32_t n = node; n; n = e->d->node_parent.v[n]) {
		uint64_t id;

		EMBER_FORWARD_IF_ERROR(emit_location(e, e->d->node_loc.v[n], &id));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(stack, id));
	}
	return 0;
}

static int emit_sample(struct emit *e, const struct pmodel_pprof_add *a, uint32_t node,
		       struct pmodel_u64s *stack)
{
	static const struct pprof_sample_label base = { .key = "pprof::base", .str = "true" };
	int64_t v = (int64_t)llround((double)a->self[node] * a->scale);

	EMBER_FORWARD_IF_ERROR(emit_stack(e, node, stack));
	return pprof_add_sample_labeled(e->p, stack->v, stack->n, &v, 1, &base, a->base ? 1 : 0);
}

#define MAX_ATTR_LABELS 64

/* An attributed row as a sample labelled with its set's pairs. */
static int emit_attr_row(struct emit *e, const struct pmodel_result *r,
			 const struct pmodel_attr_row *row, struct pmodel_u64s *stack)
{
	struct pprof_sample_label l[MAX_ATTR_LABELS];
	char *text = strdup(pmodel_str(&r->attr_str, row->attrs)), *save = NULL;
	size_t n = 0;
	int err;

	if (!text)
		return -ENOMEM;
	for (char *kv = strtok_r(text, "\n", &save); kv && n < MAX_ATTR_LABELS;
	     kv = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq)
			continue;
		*eq = '\0';
		l[n++] = (struct pprof_sample_label){ .key = kv, .str = eq + 1 };
	}
	err = emit_stack(e, row->node, stack);
	if (!err)
		err = pprof_add_sample_labeled(e->p, stack->v, stack->n, &row->value, 1, l, n);
	free(text);
	return err;
}

int pmodel_pprof_add(struct pprof_profile *p, const struct pmodel_pprof_add *a)
{
	struct emit e = { .p = p, .d = a->dict };
	struct pmodel_u64s stack = { 0 };
	int err = 0;

	e.map = calloc(a->dict->maps.n + 1, sizeof(*e.map));
	e.map_flags = calloc(a->dict->maps.n + 1, sizeof(*e.map_flags));
	e.loc = calloc(a->dict->locs.n + 1, sizeof(*e.loc));
	if (!e.map || !e.map_flags || !e.loc)
		err = -ENOMEM;
	for (uint32_t n = 1; !err && n < pmodel_dict_nodes(a->dict); n++)
		if (a->self[n])
			err = emit_sample(&e, a, n, &stack);
	for (size_t i = 0; !err && a->attrs && i < a->attrs->attr_rows.n; i++)
		err = emit_attr_row(&e, a->attrs, &a->attrs->attr_rows.v[i], &stack);
	for (size_t m = 0; !err && m < a->dict->maps.n; m++)
		if (e.map[m])
			err = pprof_mapping_set_flags(p, e.map[m], e.map_flags[m]);
	EMBER_VEC_FREE(&stack);
	free(e.map);
	free(e.map_flags);
	free(e.loc);
	return err;
}

int pmodel_write_pprof(const struct pmodel_result *r, struct ember_buf *out)
{
	struct pprof_profile *p = NULL;
	struct pmodel_pprof_add a = { &r->dict, r->self.v, 1.0, false, NULL };
	int64_t *rest = NULL;
	int err = pmodel_pprof_begin(r, &p);

	assert(r->self.n == pmodel_dict_nodes(&r->dict));
	if (!err && r->attr_rows.n) { /* the unattributed rest of each node */
		if (!(rest = malloc(r->self.n * sizeof(*rest))))
			err = -ENOMEM;
		else
			ember_memcpy(rest, r->self.v, r->self.n * sizeof(*rest));
		for (size_t i = 0; rest && i < r->attr_rows.n; i++)
			rest[r->attr_rows.v[i].node] -= r->attr_rows.v[i].value;
		a.self = rest;
		a.attrs = r;
	}
	if (!err)
		err = pmodel_pprof_add(p, &a);
	free(rest);
	if (!err)
		err = pprof_encode(p, true, out);
	pprof_profile_free(p);
	return err;
}
