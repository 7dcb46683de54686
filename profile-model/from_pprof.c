/*
 * from_pprof.c - a decoded pprof profile (wire/pprof.h, profile.proto)
 * walked into a dictionary: its mappings, functions and locations
 * interned at their first use, each of its strings hashed once however
 * many functions and mappings share it, and a sample's location list
 * (leaf first) turned into a stack node (root first through the prefix
 * tree).  The store's ingest (profile-store/pprof_ingest.c) walks samples
 * through it frame by frame; pmodel_result_from_pprof sample by sample.
 */
#include "pmodel_internal.h"

/* ---- id -> index of a profile's locations --------------------------------- */

struct pmodel_pprof_walk_slot {
	uint64_t id;
	uint32_t idx;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct pmodel_pprof_walk_slot *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int index_build(struct pmodel_pprof_walk *w)
{
	pprof_location_t *const *locs = w->m->location;
	size_t n = w->m->n_location;

	w->dense = true;
	for (size_t i = 0; i < n && w->dense; i++)
		w->dense = locs[i]->id == i + 1;
	if (w->dense)
		return 0;
	w->slots = malloc((n ? n : 1) * sizeof(*w->slots));
	if (!w->slots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		w->slots[i] = (struct pmodel_pprof_walk_slot){ locs[i]->id, (uint32_t)i };
	ember_qsort(w->slots, n, sizeof(*w->slots), cmp_slot);
	return 0;
}

uint32_t pmodel_pprof_walk_index_sparse(const struct pmodel_pprof_walk *w, uint64_t id)
{
	struct pmodel_pprof_walk_slot key = { id, 0 }, *s;

	s = bsearch(&key, w->slots, w->m->n_location, sizeof(*w->slots), cmp_slot);
	return s ? s->idx : 0;
}

int pmodel_pprof_walk_init(struct pmodel_pprof_walk *w, struct pmodel_dict *dict,
			   const struct pprof_profile *p)
{
	size_t nloc;

	*w = (struct pmodel_pprof_walk){ .dict = dict, .p = p, .m = pprof_message(p) };
	nloc = w->m->n_location ? w->m->n_location : 1;
	w->str = malloc(w->m->n_string_table * sizeof(*w->str));
	w->loc = malloc(nloc * sizeof(*w->loc));
	if (!w->str || !w->loc)
		return -ENOMEM;
	memset(w->str, 0xff, w->m->n_string_table * sizeof(*w->str));
	memset(w->loc, 0xff, nloc * sizeof(*w->loc));
	return index_build(w);
}

void pmodel_pprof_walk_release(struct pmodel_pprof_walk *w)
{
	free(w->str);
	free(w->loc);
	free(w->slots);
	w->str = NULL;
	w->loc = NULL;
	w->slots = NULL;
}

/* ---- locations --------------------------------------------------------------- */

static int intern_str(struct pmodel_pprof_walk *w, int64_t idx, uint32_t *out)
{
	if (w->str[idx] == PMODEL_UNSET)
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&w->dict->str, pprof_string(w->p, idx),
							     &w->str[idx]));
	*out = w->str[idx];
	return 0;
}

static int intern_mapping(struct pmodel_pprof_walk *w, const pprof_mapping_t *pm, uint32_t *out)
{
	struct pmodel_map m = { .start = pm->memory_start, .limit = pm->memory_limit,
				.offset = pm->file_offset };

	EMBER_FORWARD_IF_ERROR(intern_str(w, pm->filename, &m.filename));
	EMBER_FORWARD_IF_ERROR(intern_str(w, pm->build_id, &m.build_id));
	return pmodel_dict_map(w->dict, &m, out);
}

static int intern_line(struct pmodel_pprof_walk *w, const Perftools__Profiles__Line *pl,
		       struct pmodel_line *out)
{
	const pprof_function_t *pf = pprof_function_by_id(w->p, pl->function_id);
	struct pmodel_func f = { .start_line = pf->start_line };

	EMBER_FORWARD_IF_ERROR(intern_str(w, pf->name, &f.name));
	EMBER_FORWARD_IF_ERROR(intern_str(w, pf->system_name, &f.system_name));
	EMBER_FORWARD_IF_ERROR(intern_str(w, pf->filename, &f.filename));
	out->line = pl->line;
	return pmodel_dict_func(w->dict, &f, &out->func);
}

int pmodel_pprof_walk_intern(struct pmodel_pprof_walk *w, uint32_t li)
{
	const pprof_location_t *pl = w->m->location[li];
	const pprof_mapping_t *pm = pl->mapping_id ? pprof_mapping_by_id(w->p, pl->mapping_id)
						   : NULL;
	const char *ft = pprof_location_frame_type(w->p, pl);
	struct pmodel_line small[16], *lines = small;
	uint32_t mapping = 0, type = 0;
	int err = 0;

	if (pl->n_line > 16 && !(lines = calloc(pl->n_line, sizeof(*lines))))
		return -ENOMEM;
	if (pm && !(err = intern_mapping(w, pm, &mapping)))
		mapping++;
	if (!err && ft)
		err = pmodel_strtab_intern0(&w->dict->str, ft, &type);
	for (size_t k = 0; !err && k < pl->n_line; k++)
		err = intern_line(w, pl->line[k], &lines[k]);
	if (!err)
		err = pmodel_dict_loc(w->dict, mapping, pl->address, type, lines,
				      (uint32_t)pl->n_line, &w->loc[li]);
	if (lines != small)
		free(lines);
	return err;
}

int pmodel_pprof_walk_stack(struct pmodel_pprof_walk *w, const Perftools__Profiles__Sample *s,
			    uint32_t *node)
{
	uint32_t n = 0;

	for (size_t k = s->n_location_id; k-- > 0;) {
		uint32_t li = pmodel_pprof_walk_index(w, s->location_id[k]);

		if (w->loc[li] == PMODEL_UNSET)
			EMBER_FORWARD_IF_ERROR(pmodel_pprof_walk_intern(w, li));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_node(w->dict, n, w->loc[li], &n));
	}
	*node = n;
	return 0;
}
