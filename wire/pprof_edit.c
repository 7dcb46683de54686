/*
 * pprof_edit.c - what the symbolizer writes into a decoded profile:
 * functions (deduplicated on all four fields), the lines of a location
 * (innermost first, as profile.proto orders inlined frames) and the
 * has_* flags of a mapping.  Every edit keeps the invariants of pprof.h:
 * new ids are max + 1, strings go through the deduplicated table, a
 * location's lines may only name existing functions, and a failed edit
 * leaves the profile as it was.
 */
#include "wire_internal.h"

#include <stdlib.h>
#include <string.h>

struct fn_key {
	int64_t name, system_name, filename, start_line;
};

static struct fn_key key_of(const pprof_function_t *f)
{
	return (struct fn_key){ f->name, f->system_name, f->filename, f->start_line };
}

static bool fn_equal(const void *ctx, size_t idx, const void *key)
{
	struct fn_key k = key_of(((const pprof_message_t *)ctx)->function[idx]);

	return memcmp(&k, key, sizeof(k)) == 0;
}

static uint64_t fn_hash(const struct pprof_profile *p, const struct fn_key *k)
{
	return ember_hash(&p->funcs.key, k, sizeof(*k));
}

static int build_fn_set(struct pprof_profile *p)
{
	const pprof_message_t *m = p->msg;

	EMBER_FORWARD_IF_ERROR(ember_hset_init(&p->funcs));
	for (size_t i = 0; i < m->n_function; i++) {
		struct fn_key k = key_of(m->function[i]);
		uint64_t h = fn_hash(p, &k);

		if (ember_hset_find(&p->funcs, h, fn_equal, m, &k) != SIZE_MAX)
			continue;
		EMBER_FORWARD_IF_ERROR(ember_hset_insert(&p->funcs, h, i));
	}
	return 0;
}

static int new_function(struct pprof_profile *p, const struct fn_key *k, uint64_t *id)
{
	pprof_message_t *m = p->msg;
	pprof_function_t *f;

	EMBER_FORWARD_IF_ERROR(pprof_charge(p, PPROF_BLOCK_COST(sizeof(*f)) + 2 * sizeof(f) +
						       2 * sizeof(struct ember_hset_slot) +
						       sizeof(struct pprof_id_slot)));
	EMBER_FORWARD_IF_ERROR(pprof_grow(&m->function, m->n_function, &p->caps.functions,
					 sizeof(*m->function)));
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	perftools__profiles__function__init(f);
	f->name = k->name;
	f->system_name = k->system_name;
	f->filename = k->filename;
	f->start_line = k->start_line;
	f->id = pprof_index_append(&p->functions, m->n_function);
	if (!f->id) {
		free(f);
		return -ENOMEM;
	}
	m->function[m->n_function++] = f;
	/* The set only saves duplicates: a failed insert costs nothing else. */
	ember_hset_insert(&p->funcs, fn_hash(p, k), m->n_function - 1);
	*id = f->id;
	return 0;
}

int pprof_add_function(struct pprof_profile *p, const struct pprof_function_desc *fd,
		       uint64_t *id)
{
	struct fn_key k = { .start_line = fd->start_line };
	size_t found;

	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, fd->name, &k.name));
	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, fd->system_name, &k.system_name));
	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, fd->filename, &k.filename));
	if (!p->funcs.mask)
		EMBER_FORWARD_IF_ERROR(build_fn_set(p));
	found = ember_hset_find(&p->funcs, fn_hash(p, &k), fn_equal, p->msg, &k);
	if (found != SIZE_MAX) {
		*id = p->msg->function[found]->id;
		return 0;
	}
	return new_function(p, &k, id);
}

/* Line messages of a decoded profile may carry unknown fields: free them
 * the protobuf-c way, never with a bare free(). */
static void free_lines(Perftools__Profiles__Line **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		perftools__profiles__line__free_unpacked(lines[i], NULL);
	free(lines);
}

/* New line messages for lines[0..n); NULL on -ENOMEM. */
static Perftools__Profiles__Line **make_lines(const struct pprof_line *lines, size_t n)
{
	Perftools__Profiles__Line **out = calloc(n ? n : 1, sizeof(*out));

	for (size_t i = 0; out && i < n; i++) {
		out[i] = malloc(sizeof(*out[i]));
		if (!out[i]) {
			free_lines(out, i);
			return NULL;
		}
		perftools__profiles__line__init(out[i]);
		out[i]->function_id = lines[i].function_id;
		out[i]->line = lines[i].line;
#if PPROF_LINE_HAS_COLUMN
		out[i]->column = lines[i].column;
#endif
	}
	return out;
}

int pprof_location_set_lines(struct pprof_profile *p, uint64_t location_id,
			     const struct pprof_line *lines, size_t n)
{
	size_t li = pprof_index_find(&p->locations, location_id);
	pprof_location_t *loc;
	Perftools__Profiles__Line **nl;

	if (li == SIZE_MAX)
		return -ENOENT;
	for (size_t i = 0; i < n; i++)
		if (pprof_index_find(&p->functions, lines[i].function_id) == SIZE_MAX)
			return -ENOENT;
	EMBER_FORWARD_IF_ERROR(pprof_charge(p, PPROF_BLOCK_COST(n * sizeof(*nl)) +
						       n * PPROF_BLOCK_COST(sizeof(**nl))));
	nl = make_lines(lines, n);
	if (!nl)
		return -ENOMEM;
	loc = p->msg->location[li];
	free_lines(loc->line, loc->n_line);
	loc->line = n ? nl : NULL;
	loc->n_line = n;
	if (!n)
		free(nl);
	return 0;
}

int pprof_mapping_set_flags(struct pprof_profile *p, uint64_t mapping_id, unsigned flags)
{
	size_t mi = pprof_index_find(&p->mappings, mapping_id);
	pprof_mapping_t *mp;

	if (mi == SIZE_MAX)
		return -ENOENT;
	mp = p->msg->mapping[mi];
	mp->has_functions = !!(flags & PPROF_MAPPING_HAS_FUNCTIONS);
	mp->has_filenames = !!(flags & PPROF_MAPPING_HAS_FILENAMES);
	mp->has_line_numbers = !!(flags & PPROF_MAPPING_HAS_LINE_NUMBERS);
	mp->has_inline_frames = !!(flags & PPROF_MAPPING_HAS_INLINE_FRAMES);
	return 0;
}

int pprof_mapping_set_build_id(struct pprof_profile *p, uint64_t mapping_id,
			       const char *build_id)
{
	size_t mi = pprof_index_find(&p->mappings, mapping_id);
	int64_t idx;

	if (mi == SIZE_MAX)
		return -ENOENT;
	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, build_id, &idx));
	p->msg->mapping[mi]->build_id = idx;
	return 0;
}
