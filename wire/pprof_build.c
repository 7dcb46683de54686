/*
 * pprof_build.c - a profile from scratch (an agent's output, tests):
 * sample types, the period, the time, mappings, locations and samples
 * (with labels), each added
 * with the invariants of pprof.h already true, so pprof_encode() never
 * writes a profile pprof_decode() would reject.  Locations and samples
 * are charged to the profile's account before they are allocated, as
 * edits are (pprof_charge): a profile built from outside input (a folded
 * body) stays within its request's memory.
 */
#include "wire_internal.h"

#include <stdlib.h>
#include <string.h>

static int new_value_type(struct pprof_profile *p, const char *type, const char *unit,
			  Perftools__Profiles__ValueType **out)
{
	Perftools__Profiles__ValueType *vt;
	int64_t t, u;

	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, type, &t));
	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, unit, &u));
	vt = malloc(sizeof(*vt));
	if (!vt)
		return -ENOMEM;
	perftools__profiles__value_type__init(vt);
	vt->type = t;
	vt->unit = u;
	*out = vt;
	return 0;
}

int pprof_add_sample_type(struct pprof_profile *p, const char *type, const char *unit)
{
	pprof_message_t *m = p->msg;
	Perftools__Profiles__ValueType *vt;

	if (m->n_sample)
		return -EBUSY;
	EMBER_FORWARD_IF_ERROR(pprof_grow(&m->sample_type, m->n_sample_type,
					 &p->caps.sample_types, sizeof(*m->sample_type)));
	EMBER_FORWARD_IF_ERROR(new_value_type(p, type, unit, &vt));
	m->sample_type[m->n_sample_type++] = vt;
	return 0;
}

int pprof_set_period(struct pprof_profile *p, const char *type, const char *unit,
		     int64_t period)
{
	Perftools__Profiles__ValueType *vt;

	EMBER_FORWARD_IF_ERROR(new_value_type(p, type, unit, &vt));
	if (p->msg->period_type)
		perftools__profiles__value_type__free_unpacked(p->msg->period_type, NULL);
	p->msg->period_type = vt;
	p->msg->period = period;
	return 0;
}

int pprof_add_mapping(struct pprof_profile *p, const struct pprof_mapping_desc *md,
		      uint64_t *id)
{
	pprof_message_t *m = p->msg;
	pprof_mapping_t *mp;
	int64_t file, bid;

	if (md->start > md->limit)
		return -EINVAL;
	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, md->filename, &file));
	EMBER_FORWARD_IF_ERROR(pprof_add_string(p, md->build_id, &bid));
	EMBER_FORWARD_IF_ERROR(pprof_grow(&m->mapping, m->n_mapping, &p->caps.mappings,
					 sizeof(*m->mapping)));
	mp = malloc(sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	perftools__profiles__mapping__init(mp);
	mp->memory_start = md->start;
	mp->memory_limit = md->limit;
	mp->file_offset = md->offset;
	mp->filename = file;
	mp->build_id = bid;
	mp->id = pprof_index_append(&p->mappings, m->n_mapping);
	if (!mp->id) {
		free(mp);
		return -ENOMEM;
	}
	m->mapping[m->n_mapping++] = mp;
	*id = mp->id;
	return 0;
}

int pprof_add_location(struct pprof_profile *p, uint64_t mapping_id, uint64_t address,
		       uint64_t *id)
{
	pprof_message_t *m = p->msg;
	pprof_location_t *l;

	if (mapping_id && pprof_index_find(&p->mappings, mapping_id) == SIZE_MAX)
		return -ENOENT;
	EMBER_FORWARD_IF_ERROR(pprof_charge(p, PPROF_BLOCK_COST(sizeof(*l)) + 2 * sizeof(l) +
						       sizeof(struct pprof_id_slot)));
	EMBER_FORWARD_IF_ERROR(pprof_grow(&m->location, m->n_location, &p->caps.locations,
					 sizeof(*m->location)));
	l = malloc(sizeof(*l));
	if (!l)
		return -ENOMEM;
	perftools__profiles__location__init(l);
	l->mapping_id = mapping_id;
	l->address = address;
	l->id = pprof_index_append(&p->locations, m->n_location);
	if (!l->id) {
		free(l);
		return -ENOMEM;
	}
	m->location[m->n_location++] = l;
	*id = l->id;
	return 0;
}

/* A sample message owning copies of the ids and values; NULL on -ENOMEM. */
static Perftools__Profiles__Sample *new_sample(const uint64_t *locs, size_t nlocs,
					       const int64_t *values, size_t nvalues)
{
	Perftools__Profiles__Sample *s = malloc(sizeof(*s));

	if (!s)
		return NULL;
	perftools__profiles__sample__init(s);
	s->location_id = nlocs ? malloc(nlocs * sizeof(*locs)) : NULL;
	s->value = nvalues ? malloc(nvalues * sizeof(*values)) : NULL;
	if ((nlocs && !s->location_id) || (nvalues && !s->value)) {
		perftools__profiles__sample__free_unpacked(s, NULL);
		return NULL;
	}
	if (nlocs)
		memcpy(s->location_id, locs, nlocs * sizeof(*locs));
	if (nvalues)
		memcpy(s->value, values, nvalues * sizeof(*values));
	s->n_location_id = nlocs;
	s->n_value = nvalues;
	return s;
}

/* What a sample of nlocs locations, nvalues values and nlabels labels
 * allocates (its pointer in the array counted twice: the array doubles). */
static size_t sample_cost(size_t nlocs, size_t nvalues, size_t nlabels)
{
	return PPROF_BLOCK_COST(sizeof(Perftools__Profiles__Sample)) +
	       PPROF_BLOCK_COST(nlocs * sizeof(uint64_t)) +
	       PPROF_BLOCK_COST(nvalues * sizeof(int64_t)) +
	       PPROF_BLOCK_COST(nlabels * sizeof(void *)) +
	       nlabels * PPROF_BLOCK_COST(sizeof(Perftools__Profiles__Label)) + 2 * sizeof(void *);
}

/* Label messages for s from labels[0..n); -ENOMEM leaves s for its owner
 * to free (free_unpacked releases what was attached). */
static int add_labels(struct pprof_profile *p, Perftools__Profiles__Sample *s,
		      const struct pprof_sample_label *labels, size_t n)
{
	if (!n)
		return 0;
	s->label = calloc(n, sizeof(*s->label));
	if (!s->label)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		Perftools__Profiles__Label *lb = malloc(sizeof(*lb));

		if (!lb)
			return -ENOMEM;
		perftools__profiles__label__init(lb);
		s->label[s->n_label++] = lb;
		EMBER_FORWARD_IF_ERROR(pprof_add_string(p, labels[i].key, &lb->key));
		if (labels[i].str)
			EMBER_FORWARD_IF_ERROR(pprof_add_string(p, labels[i].str, &lb->str));
		else
			lb->num = labels[i].num;
		if (!labels[i].str && labels[i].num_unit)
			EMBER_FORWARD_IF_ERROR(pprof_add_string(p, labels[i].num_unit,
							       &lb->num_unit));
	}
	return 0;
}

int pprof_add_sample_labeled(struct pprof_profile *p, const uint64_t *location_ids,
			     size_t nlocs, const int64_t *values, size_t nvalues,
			     const struct pprof_sample_label *labels, size_t nlabels)
{
	pprof_message_t *m = p->msg;
	Perftools__Profiles__Sample *s;
	int err;

	if (nvalues != m->n_sample_type)
		return -EINVAL;
	for (size_t i = 0; i < nlocs; i++)
		if (pprof_index_find(&p->locations, location_ids[i]) == SIZE_MAX)
			return -ENOENT;
	EMBER_FORWARD_IF_ERROR(pprof_charge(p, sample_cost(nlocs, nvalues, nlabels)));
	EMBER_FORWARD_IF_ERROR(pprof_grow(&m->sample, m->n_sample, &p->caps.samples,
					 sizeof(*m->sample)));
	s = new_sample(location_ids, nlocs, values, nvalues);
	if (!s)
		return -ENOMEM;
	err = add_labels(p, s, labels, nlabels);
	if (err) {
		perftools__profiles__sample__free_unpacked(s, NULL);
		return err;
	}
	m->sample[m->n_sample++] = s;
	return 0;
}

int pprof_add_sample(struct pprof_profile *p, const uint64_t *location_ids, size_t nlocs,
		     const int64_t *values, size_t nvalues)
{
	return pprof_add_sample_labeled(p, location_ids, nlocs, values, nvalues, NULL, 0);
}

void pprof_set_time(struct pprof_profile *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->msg->time_nanos = time_nanos;
	p->msg->duration_nanos = duration_nanos;
}
