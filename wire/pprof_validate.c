/*
 * pprof_validate.c - the invariants of pprof.h, checked once on a freshly
 * unpacked profile so that the symbolizer and the encoder can trust it
 * (profile.proto's comments state them; Go's profile.CheckValid checks a
 * subset).  Each rejection names the element and the broken rule for the
 * sender: "location 12: mapping_id 7 does not exist".  Elements with ids
 * are named by id, samples and sample types by position ("sample[5]").
 * The id indexes are built here, since uniqueness is one of the rules.
 *
 * Unknown fields are kept (a newer writer's fields, such as Line.column,
 * survive a round trip) except field number 0, which protobuf-c accepts
 * in a multi-byte tag but cannot write back, and which no writer may use.
 */
#include "wire_internal.h"

#include <inttypes.h>
#include <string.h>

static int check_counts(const pprof_message_t *m, const struct pprof_limits *l,
			struct ember_diag *d)
{
#define COUNT(n, max, what)                                                                    \
	EMBER_FAIL_IF((n) > (max), d, -E2BIG, "%zu %s, more than the limit of %zu",            \
		      (size_t)(n), what, (size_t)(max))
	COUNT(m->n_sample, l->max_samples, "samples");
	COUNT(m->n_location, l->max_locations, "locations");
	COUNT(m->n_mapping, l->max_mappings, "mappings");
	COUNT(m->n_function, l->max_functions, "functions");
	COUNT(m->n_string_table, l->max_strings, "strings");
	COUNT(m->n_sample_type, l->max_sample_types, "sample types");
#undef COUNT
	return 0;
}

/* No unknown field of m has field number 0. */
static int check_tags(const ProtobufCMessage *m, struct ember_diag *d, const char *kind,
		      uint64_t num)
{
	for (size_t i = 0; i < m->n_unknown_fields; i++) {
		if (m->unknown_fields[i].tag != 0)
			continue;
		if (num == UINT64_MAX)
			return EMBER_FAIL(d, -PPROF_ERR_PROTOBUF, "%s: field number 0", kind);
		return EMBER_FAIL(d, -PPROF_ERR_PROTOBUF, "%s %" PRIu64 ": field number 0",
				  kind, num);
	}
	return 0;
}

/* kind, num (UINT64_MAX: none) and field say where idx was found. */
static int check_str(const pprof_message_t *m, int64_t idx, struct ember_diag *d,
		     const char *kind, uint64_t num, const char *field)
{
	if (idx >= 0 && (uint64_t)idx < m->n_string_table)
		return 0;
	if (num == UINT64_MAX)
		return EMBER_FAIL(d, -PPROF_ERR_INVALID,
				  "%s: %s string index %" PRId64
				  " out of range (string_table has %zu)",
				  kind, field, idx, m->n_string_table);
	return EMBER_FAIL(d, -PPROF_ERR_INVALID,
			  "%s %" PRIu64 ": %s string index %" PRId64
			  " out of range (string_table has %zu)",
			  kind, num, field, idx, m->n_string_table);
}

static int check_header_strings(const pprof_message_t *m, struct ember_diag *d)
{
	EMBER_FORWARD_IF_ERROR(check_tags(&m->base, d, "profile", UINT64_MAX));
	EMBER_FAIL_IF(m->n_string_table == 0, d, -PPROF_ERR_INVALID, "string_table is empty");
	EMBER_FAIL_IF(m->string_table[0][0] != '\0', d, -PPROF_ERR_INVALID,
		      "string_table[0] is not the empty string");
	EMBER_FORWARD_IF_ERROR(check_str(m, m->drop_frames, d, "profile", UINT64_MAX, "drop_frames"));
	EMBER_FORWARD_IF_ERROR(check_str(m, m->keep_frames, d, "profile", UINT64_MAX, "keep_frames"));
	EMBER_FORWARD_IF_ERROR(check_str(m, m->default_sample_type, d, "profile", UINT64_MAX,
					"default_sample_type"));
	for (size_t i = 0; i < m->n_comment; i++)
		EMBER_FORWARD_IF_ERROR(check_str(m, m->comment[i], d, "comment", i, "text"));
	for (size_t i = 0; i < m->n_sample_type; i++) {
		EMBER_FORWARD_IF_ERROR(check_tags(&m->sample_type[i]->base, d, "sample_type", i));
		EMBER_FORWARD_IF_ERROR(check_str(m, m->sample_type[i]->type, d, "sample_type", i, "type"));
		EMBER_FORWARD_IF_ERROR(check_str(m, m->sample_type[i]->unit, d, "sample_type", i, "unit"));
	}
	if (m->period_type) {
		EMBER_FORWARD_IF_ERROR(check_tags(&m->period_type->base, d, "period_type", UINT64_MAX));
		EMBER_FORWARD_IF_ERROR(check_str(m, m->period_type->type, d, "period_type", UINT64_MAX, "type"));
		EMBER_FORWARD_IF_ERROR(check_str(m, m->period_type->unit, d, "period_type", UINT64_MAX, "unit"));
	}
	return 0;
}

static int check_functions(const pprof_message_t *m, struct ember_diag *d)
{
	for (size_t i = 0; i < m->n_function; i++) {
		const pprof_function_t *f = m->function[i];

		EMBER_FAIL_IF(f->id == 0, d, -PPROF_ERR_INVALID, "function[%zu]: id is 0", i);
		EMBER_FORWARD_IF_ERROR(check_tags(&f->base, d, "function", f->id));
		EMBER_FORWARD_IF_ERROR(check_str(m, f->name, d, "function", f->id, "name"));
		EMBER_FORWARD_IF_ERROR(check_str(m, f->system_name, d, "function", f->id, "system_name"));
		EMBER_FORWARD_IF_ERROR(check_str(m, f->filename, d, "function", f->id, "filename"));
	}
	return 0;
}

static int check_mappings(const pprof_message_t *m, struct ember_diag *d)
{
	for (size_t i = 0; i < m->n_mapping; i++) {
		const pprof_mapping_t *mp = m->mapping[i];

		EMBER_FAIL_IF(mp->id == 0, d, -PPROF_ERR_INVALID, "mapping[%zu]: id is 0", i);
		EMBER_FORWARD_IF_ERROR(check_tags(&mp->base, d, "mapping", mp->id));
		EMBER_FAIL_IF(mp->memory_start > mp->memory_limit, d, -PPROF_ERR_INVALID,
			      "mapping %" PRIu64 ": memory_start 0x%" PRIx64
			      " is above memory_limit 0x%" PRIx64,
			      mp->id, mp->memory_start, mp->memory_limit);
		EMBER_FORWARD_IF_ERROR(check_str(m, mp->filename, d, "mapping", mp->id, "filename"));
		EMBER_FORWARD_IF_ERROR(check_str(m, mp->build_id, d, "mapping", mp->id, "build_id"));
	}
	return 0;
}

static uint64_t mapping_id(const void *e) { return ((const pprof_mapping_t *)e)->id; }
static uint64_t location_id(const void *e) { return ((const pprof_location_t *)e)->id; }
static uint64_t function_id(const void *e) { return ((const pprof_function_t *)e)->id; }

static int index_one(struct pprof_id_index *ix, void *const *elems, size_t n,
		     pprof_id_of_fn id_of, const char *kind, struct ember_diag *d)
{
	uint64_t dup = 0;
	int err = pprof_index_build(ix, elems, n, id_of, &dup);

	EMBER_FAIL_IF(err == -EEXIST, d, -PPROF_ERR_INVALID, "%s id %" PRIu64 " is used twice",
		      kind, dup);
	EMBER_FAIL_IF(err, d, err, "out of memory indexing %ss", kind);
	return 0;
}

static int build_indexes(struct pprof_profile *p, struct ember_diag *d)
{
	pprof_message_t *m = p->msg;

	for (size_t i = 0; i < m->n_location; i++)
		EMBER_FAIL_IF(m->location[i]->id == 0, d, -PPROF_ERR_INVALID,
			      "location[%zu]: id is 0", i);
	EMBER_FORWARD_IF_ERROR(index_one(&p->mappings, (void *const *)m->mapping, m->n_mapping,
					mapping_id, "mapping", d));
	EMBER_FORWARD_IF_ERROR(index_one(&p->locations, (void *const *)m->location, m->n_location,
					location_id, "location", d));
	return index_one(&p->functions, (void *const *)m->function, m->n_function,
			 function_id, "function", d);
}

static int check_locations(const struct pprof_profile *p, struct ember_diag *d)
{
	const pprof_message_t *m = p->msg;

	for (size_t i = 0; i < m->n_location; i++) {
		const pprof_location_t *l = m->location[i];

		EMBER_FAIL_IF(l->mapping_id &&
				      pprof_index_find(&p->mappings, l->mapping_id) == SIZE_MAX,
			      d, -PPROF_ERR_INVALID,
			      "location %" PRIu64 ": mapping_id %" PRIu64 " does not exist",
			      l->id, l->mapping_id);
		EMBER_FORWARD_IF_ERROR(check_tags(&l->base, d, "location", l->id));
		for (size_t k = 0; k < l->n_line; k++) {
			EMBER_FORWARD_IF_ERROR(check_tags(&l->line[k]->base, d, "location", l->id));
			EMBER_FAIL_IF(pprof_index_find(&p->functions,
						       l->line[k]->function_id) == SIZE_MAX,
				      d, -PPROF_ERR_INVALID,
				      "location %" PRIu64 ": line[%zu]: function_id %" PRIu64
				      " does not exist",
				      l->id, k, l->line[k]->function_id);
		}
	}
	return 0;
}

static int check_sample(const struct pprof_profile *p, size_t i, struct ember_diag *d)
{
	const pprof_message_t *m = p->msg;
	const Perftools__Profiles__Sample *s = m->sample[i];

	EMBER_FORWARD_IF_ERROR(check_tags(&s->base, d, "sample", i));
	EMBER_FAIL_IF(s->n_value != m->n_sample_type, d, -PPROF_ERR_INVALID,
		      "sample[%zu]: %zu values for %zu sample types", i, s->n_value,
		      m->n_sample_type);
	for (size_t k = 0; k < s->n_location_id; k++)
		EMBER_FAIL_IF(pprof_index_find(&p->locations, s->location_id[k]) == SIZE_MAX, d,
			      -PPROF_ERR_INVALID,
			      "sample[%zu]: location_id %" PRIu64 " does not exist", i,
			      s->location_id[k]);
	for (size_t k = 0; k < s->n_label; k++) {
		const Perftools__Profiles__Label *lb = s->label[k];

		EMBER_FORWARD_IF_ERROR(check_tags(&lb->base, d, "sample", i));
		EMBER_FORWARD_IF_ERROR(check_str(m, lb->key, d, "sample", i, "label key"));
		EMBER_FORWARD_IF_ERROR(check_str(m, lb->str, d, "sample", i, "label str"));
		EMBER_FORWARD_IF_ERROR(check_str(m, lb->num_unit, d, "sample", i, "label num_unit"));
	}
	return 0;
}

int pprof_validate(struct pprof_profile *p, const struct pprof_limits *lim,
		   struct ember_diag *d)
{
	const pprof_message_t *m = p->msg;

	EMBER_FORWARD_IF_ERROR(check_counts(m, lim, d));
	EMBER_FORWARD_IF_ERROR(check_header_strings(m, d));
	EMBER_FORWARD_IF_ERROR(check_functions(m, d));
	EMBER_FORWARD_IF_ERROR(check_mappings(m, d));
	EMBER_FORWARD_IF_ERROR(build_indexes(p, d));
	EMBER_FORWARD_IF_ERROR(check_locations(p, d));
	for (size_t i = 0; i < m->n_sample; i++)
		EMBER_FORWARD_IF_ERROR(check_sample(p, i, d));
	return 0;
}
