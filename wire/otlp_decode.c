/*
 * otlp_decode.c - otlp_decode(): an untrusted ExportProfilesServiceRequest
 * (opentelemetry-proto v1.11.0) -> one pprof profile a (resource, scope,
 * profile).  Phases, each bounded:
 *   1. the nesting of submessages checked, then unpacked by protobuf-c
 *      under a memory budget (pb_unpack.c);
 *   2. the dictionary's tables and strings and the request's profile and
 *      sample counts checked against the limits; samples that carry
 *      neither values nor timestamps everywhere refused (a pre-1.10 sender);
 *   3. each profile built through pprof_build.c, dictionary entries added
 *      when first referenced (every index checked), its stacks leaf first,
 *      each sample counted by its shape: timestamps only, one per
 *      timestamp; values, their sum (as many as the timestamps when both).
 * Phase 1 has two forms, one an encoding: protobuf (unpack, here) and
 * OTLP's JSON (otlp_json_unpack, otlp_json.c); phases 2 and 3 are shared.
 * docs/formats.md, "OTLP profiles", gives the rules.
 */
#include "wire_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define TAG "otlp: "
#define MIB ((size_t)1 << 20)

typedef Opentelemetry__Proto__Profiles__V1development__Profile otlp_profile_msg_t;

static void limits_resolve(const struct otlp_limits *in, struct otlp_limits *out)
{
	struct otlp_limits l = {
		.sz = sizeof(l), .max_input_bytes = 64 * MIB, .max_memory_bytes = 512 * MIB,
		.max_table_entries = 4 * MIB, .max_profiles = 4096, .max_samples = 4 * MIB,
		.max_stack_depth = 4096, .max_attributes = 256, .max_string_bytes = 64 * 1024,
		.max_nesting = 32,
	};
#define TAKE(f) l.f = EMBER_OPTS_OR(in, f, l.f)
	TAKE(max_input_bytes);
	TAKE(max_memory_bytes);
	TAKE(max_table_entries);
	TAKE(max_profiles);
	TAKE(max_samples);
	TAKE(max_stack_depth);
	TAKE(max_attributes);
	TAKE(max_string_bytes);
	TAKE(max_nesting);
	TAKE(account);
#undef TAKE
	*out = l;
}

static int memory_error(const struct otlp_ctx *c, int err)
{
	return wire_memory_error(c->d, TAG, c->lim.account, err);
}

static void *alloc0(const struct otlp_ctx *c, size_t n, size_t size)
{
	void *p = ember_mem_alloc(c->lim.account, n && size ? n * size : 1);

	if (p)
		memset(p, 0, n * size);
	return p;
}

/* ---- phase 1 and 2 ------------------------------------------------------------------ */

static int unpack(const uint8_t *data, size_t size, struct otlp_ctx *c,
		  otlp_request_message_t **out)
{
	const ProtobufCMessageDescriptor *md =
		&opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor;
	struct wire_pb_budget b = { .cap = c->lim.max_memory_bytes, .acct = c->lim.account };
	ProtobufCAllocator a = wire_pb_allocator(&b);

	EMBER_FAIL_IF(size > c->lim.max_input_bytes, c->d, -E2BIG,
		      TAG "request of %zu bytes larger than %zu", size, c->lim.max_input_bytes);
	EMBER_FAIL_IF(wire_pb_check_nesting(md, data, size, (unsigned)c->lim.max_nesting), c->d,
		      -E2BIG, TAG "submessages nested deeper than %zu levels", c->lim.max_nesting);
	*out = (otlp_request_message_t *)protobuf_c_message_unpack(md, &a, size, data);
	if (!*out && c->lim.account && c->lim.account->err)
		return memory_error(c, c->lim.account->err);
	EMBER_FAIL_IF(!*out && b.exceeded, c->d, -E2BIG,
		      TAG "request needs more than %zu bytes of memory to unpack",
		      c->lim.max_memory_bytes);
	EMBER_FAIL_IF(!*out, c->d, -PPROF_ERR_PROTOBUF,
		      TAG "not an ExportProfilesServiceRequest: truncated or malformed protobuf "
			  "(%zu bytes)", size);
	return 0;
}

static int check_dictionary(const struct otlp_ctx *c)
{
	const otlp_dict_t *d = c->dict;
	size_t n[] = { d->n_mapping_table, d->n_location_table, d->n_function_table,
		       d->n_link_table, d->n_string_table, d->n_attribute_table,
		       d->n_stack_table };

	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++)
		EMBER_FAIL_IF(n[i] > c->lim.max_table_entries || n[i] > INT32_MAX, c->d, -E2BIG,
			      TAG "dictionary: a table of %zu entries, more than %zu", n[i],
			      c->lim.max_table_entries);
	for (size_t i = 0; i < d->n_string_table; i++)
		EMBER_FAIL_IF(strlen(d->string_table[i]) > c->lim.max_string_bytes, c->d, -E2BIG,
			      TAG "dictionary: string %zu longer than %zu bytes", i,
			      c->lim.max_string_bytes);
	return 0;
}

/* The profiles and samples of the request, within the limits; refused
 * when every sample is empty. */
static int check_counts(const struct otlp_ctx *c, const otlp_request_message_t *m,
			size_t *n_profiles)
{
	size_t np = 0, ns = 0, empty = 0;

	for (size_t r = 0; r < m->n_resource_profiles; r++)
		for (size_t s = 0; s < m->resource_profiles[r]->n_scope_profiles; s++) {
			const Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp =
				m->resource_profiles[r]->scope_profiles[s];

			for (size_t k = 0; k < sp->n_profiles; k++) {
				const otlp_profile_msg_t *p = sp->profiles[k];

				np++;
				ns += p->n_samples;
				for (size_t i = 0; i < p->n_samples; i++)
					empty += !p->samples[i]->n_values &&
						 !p->samples[i]->n_timestamps_unix_nano;
			}
			EMBER_FAIL_IF(np > c->lim.max_profiles, c->d, -E2BIG,
				      TAG "more than %zu profiles in one request",
				      c->lim.max_profiles);
			EMBER_FAIL_IF(ns > c->lim.max_samples, c->d, -E2BIG,
				      TAG "more than %zu samples in one request",
				      c->lim.max_samples);
		}
	EMBER_FAIL_IF(ns && empty == ns, c->d, -PPROF_ERR_INVALID,
		      TAG "all %zu samples have neither values nor timestamps: the sender likely "
			  "speaks an opentelemetry-proto release before 1.10, where Sample.values "
			  "was field 2 (field 4 since 1.10; Ember follows 1.11.0)", ns);
	*n_profiles = np;
	return 0;
}

/* ---- phase 3: dictionary entries -> pprof ids, per profile --------------------------- */

/* Table index -> pprof id in the profile being built (0: not yet), and
 * the indexes set, to clear them for the next profile. */
struct idmap {
	uint64_t *id;
	uint32_t *set;
	size_t n_set;
};

struct build {
	struct otlp_ctx *c;
	struct pprof_profile *p;
	struct otlp_profile *op;
	size_t mappings_cap;
	struct idmap locs, maps, funcs;
	uint64_t *stack;	  /* lim.max_stack_depth */
	struct pprof_line *lines; /* lim.max_stack_depth */
	struct otlp_sample_scratch s;
};

static int idmap_init(const struct otlp_ctx *c, struct idmap *m, size_t n)
{
	m->id = alloc0(c, n, sizeof(*m->id));
	m->set = alloc0(c, n, sizeof(*m->set));
	m->n_set = 0;
	return m->id && m->set ? 0 : -ENOMEM;
}

static void idmap_reset(struct idmap *m)
{
	while (m->n_set)
		m->id[m->set[--m->n_set]] = 0;
}

static void idmap_release(struct idmap *m)
{
	free(m->id);
	free(m->set);
}

static void idmap_put(struct idmap *m, int32_t idx, uint64_t id)
{
	m->id[idx] = id;
	m->set[m->n_set++] = (uint32_t)idx;
}

static int bad_index(const struct build *b, const char *what, int64_t idx, size_t n)
{
	return EMBER_FAIL(b->c->d, -PPROF_ERR_INVALID, TAG "%s index %lld not in the table of %zu",
			  what, (long long)idx, n);
}

static const char *str_or_fail(const struct build *b, int64_t idx, int *err)
{
	const char *s = otlp_string(b->c, idx);

	*err = s ? 0 : bad_index(b, "string", idx, b->c->dict->n_string_table);
	return s;
}

static int mapping_id(struct build *b, int32_t idx, uint64_t *out)
{
	const otlp_dict_t *d = b->c->dict;
	const otlp_mapping_t *m;
	struct pprof_mapping_desc md;
	struct otlp_mapping_ids *ids;
	int err = 0;

	*out = 0;
	if (idx == 0)
		return 0;
	if (idx < 0 || (size_t)idx >= d->n_mapping_table)
		return bad_index(b, "mapping", idx, d->n_mapping_table);
	if ((*out = b->maps.id[idx]))
		return 0;
	m = d->mapping_table[idx];
	EMBER_FAIL_IF(m->memory_start > m->memory_limit, b->c->d, -PPROF_ERR_INVALID,
		      TAG "mapping %d: memory_start above memory_limit", idx);
	if (b->op->n_mappings == b->mappings_cap) {
		size_t n = 2 * b->mappings_cap + 4;
		struct otlp_mapping_ids *v =
			ember_mem_realloc(b->c->lim.account, b->op->mappings, n * sizeof(*v));

		if (!v)
			return memory_error(b->c, -ENOMEM);
		b->op->mappings = v;
		b->mappings_cap = n;
	}
	ids = &b->op->mappings[b->op->n_mappings];
	memset(ids, 0, sizeof(*ids));
	EMBER_FORWARD_IF_ERROR(otlp_mapping_build_ids(b->c, m, ids));
	md = (struct pprof_mapping_desc){ .start = m->memory_start, .limit = m->memory_limit,
					  .offset = m->file_offset,
					  .filename = str_or_fail(b, m->filename_strindex, &err),
					  .build_id = *ids->gnu ? ids->gnu : ids->go };
	if (err)
		return err;
	if ((err = pprof_add_mapping(b->p, &md, out)))
		return memory_error(b->c, err);
	assert(*out == b->op->n_mappings + 1);
	b->op->n_mappings++;
	idmap_put(&b->maps, idx, *out);
	return 0;
}

static int function_id(struct build *b, int32_t idx, uint64_t *out)
{
	const otlp_dict_t *d = b->c->dict;
	static const Opentelemetry__Proto__Profiles__V1development__Function zero =
		OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT;
	const Opentelemetry__Proto__Profiles__V1development__Function *f = &zero;
	struct pprof_function_desc fd;
	int e1, e2, e3, err;

	if (idx < 0 || (idx > 0 && (size_t)idx >= d->n_function_table))
		return bad_index(b, "function", idx, d->n_function_table);
	if (idx && (*out = b->funcs.id[idx]))
		return 0;
	if (idx)
		f = d->function_table[idx];
	fd = (struct pprof_function_desc){ .name = str_or_fail(b, f->name_strindex, &e1),
					   .system_name = str_or_fail(b, f->system_name_strindex, &e2),
					   .filename = str_or_fail(b, f->filename_strindex, &e3),
					   .start_line = f->start_line };
	if (e1 || e2 || e3)
		return e1 ? e1 : e2 ? e2 : e3;
	if ((err = pprof_add_function(b->p, &fd, out)))
		return memory_error(b->c, err);
	if (idx)
		idmap_put(&b->funcs, idx, *out);
	return 0;
}

static int location_id(struct build *b, int32_t idx, uint64_t *out)
{
	const otlp_dict_t *d = b->c->dict;
	const otlp_location_t *l;
	const char *type;
	uint64_t mid;
	int err;

	if (idx < 0 || (idx > 0 && (size_t)idx >= d->n_location_table))
		return bad_index(b, "location", idx, d->n_location_table);
	if (idx && (*out = b->locs.id[idx]))
		return 0;
	if (!idx) /* the zero location: no mapping, address 0 */
		return memory_error(b->c, pprof_add_location(b->p, 0, 0, out));
	l = d->location_table[idx];
	EMBER_FAIL_IF(l->n_lines > b->c->lim.max_stack_depth, b->c->d, -E2BIG,
		      TAG "location %d: %zu lines, more than %zu", idx, l->n_lines,
		      b->c->lim.max_stack_depth);
	EMBER_FORWARD_IF_ERROR(mapping_id(b, l->mapping_index, &mid));
	EMBER_FORWARD_IF_ERROR(otlp_location_frame_type(b->c, l, &type));
	if ((err = pprof_add_location(b->p, mid, l->address, out)) ||
	    (type && (err = pprof_location_set_frame_type(b->p, *out, type))))
		return memory_error(b->c, err);
	for (size_t i = 0; i < l->n_lines; i++) {
		EMBER_FORWARD_IF_ERROR(function_id(b, l->lines[i]->function_index,
						   &b->lines[i].function_id));
		b->lines[i].line = l->lines[i]->line;
		b->lines[i].column = l->lines[i]->column;
	}
	if (l->n_lines && (err = pprof_location_set_lines(b->p, *out, b->lines, l->n_lines)))
		return memory_error(b->c, err);
	idmap_put(&b->locs, idx, *out);
	return 0;
}

/* ---- phase 3: samples -------------------------------------------------------------------- */

/* The count of smp by its shape; -PPROF_ERR_INVALID when values and
 * timestamps disagree or the sum overflows. */
static int sample_value(const struct build *b, const otlp_sample_t *smp, size_t i, int64_t *v)
{
	size_t nv = smp->n_values, nt = smp->n_timestamps_unix_nano;

	EMBER_FAIL_IF(nv && nt && nv != nt, b->c->d, -PPROF_ERR_INVALID,
		      TAG "sample %zu: %zu values but %zu timestamps", i, nv, nt);
	if (!nv) {
		*v = (int64_t)nt;
		return 0;
	}
	*v = 0;
	for (size_t k = 0; k < nv; k++)
		EMBER_FAIL_IF(__builtin_add_overflow(*v, smp->values[k], v), b->c->d,
			      -PPROF_ERR_INVALID, TAG "sample %zu: its values overflow 64 bits", i);
	return 0;
}

static int add_sample(struct build *b, const otlp_sample_t *smp, size_t i)
{
	const otlp_dict_t *d = b->c->dict;
	const Opentelemetry__Proto__Profiles__V1development__Stack *st = NULL;
	size_t depth = 0, nl;
	int64_t v;
	int err;

	b->op->n_samples++;
	if (!smp->n_values && !smp->n_timestamps_unix_nano) {
		b->op->n_empty++;
		return 0;
	}
	EMBER_FORWARD_IF_ERROR(sample_value(b, smp, i, &v));
	if (smp->stack_index < 0 || (smp->stack_index > 0 &&
				     (size_t)smp->stack_index >= d->n_stack_table))
		return bad_index(b, "stack", smp->stack_index, d->n_stack_table);
	if (smp->stack_index)
		st = d->stack_table[smp->stack_index];
	depth = st ? st->n_location_indices : 0;
	EMBER_FAIL_IF(depth > b->c->lim.max_stack_depth, b->c->d, -E2BIG,
		      TAG "stack %d: %zu locations, more than %zu", smp->stack_index, depth,
		      b->c->lim.max_stack_depth);
	for (size_t k = 0; k < depth; k++)
		EMBER_FORWARD_IF_ERROR(location_id(b, st->location_indices[k], &b->stack[k]));
	EMBER_FORWARD_IF_ERROR(otlp_sample_labels(b->c, smp, &b->s, &nl));
	err = pprof_add_sample_labeled(b->p, b->stack, depth, &v, 1, b->s.labels, nl);
	return err ? memory_error(b->c, err) : 0;
}

/* ---- phase 3: profiles ------------------------------------------------------------------- */

static int profile_header(struct build *b, const otlp_profile_msg_t *pm)
{
	const Opentelemetry__Proto__Profiles__V1development__ValueType *st = pm->sample_type,
								      *pt = pm->period_type;
	int e1 = 0, e2 = 0, err;
	const char *type = st ? str_or_fail(b, st->type_strindex, &e1) : "";
	const char *unit = st ? str_or_fail(b, st->unit_strindex, &e2) : "";

	if (e1 || e2)
		return e1 ? e1 : e2;
	EMBER_FAIL_IF(pm->time_unix_nano > INT64_MAX || pm->duration_nano > INT64_MAX, b->c->d,
		      -PPROF_ERR_INVALID, TAG "profile: a time or duration past 2^63 ns");
	pprof_set_time(b->p, (int64_t)pm->time_unix_nano, (int64_t)pm->duration_nano);
	if ((err = pprof_add_sample_type(b->p, type, unit)))
		return memory_error(b->c, err);
	if (!pt)
		return 0;
	type = str_or_fail(b, pt->type_strindex, &e1);
	unit = str_or_fail(b, pt->unit_strindex, &e2);
	if (e1 || e2)
		return e1 ? e1 : e2;
	err = pprof_set_period(b->p, type, unit, pm->period);
	return err ? memory_error(b->c, err) : 0;
}

static int build_profile(struct build *b, const otlp_resource_t *res,
			 const otlp_profile_msg_t *pm, struct otlp_profile *op)
{
	int err;

	b->op = op;
	b->mappings_cap = 0;
	b->p = op->p = pprof_profile_new();
	if (!op->p)
		return memory_error(b->c, -ENOMEM);
	op->p->acct = b->c->lim.account;
	EMBER_FORWARD_IF_ERROR(otlp_resource_labels(b->c, res, op));
	EMBER_FORWARD_IF_ERROR(profile_header(b, pm));
	for (size_t i = 0; i < pm->n_samples; i++)
		if ((err = add_sample(b, pm->samples[i], i)))
			return err;
	idmap_reset(&b->locs);
	idmap_reset(&b->maps);
	idmap_reset(&b->funcs);
	return 0;
}

static int build_init(struct build *b, struct otlp_ctx *c)
{
	const otlp_dict_t *d = c->dict;
	size_t n = c->lim.max_attributes + 2;

	*b = (struct build){ .c = c };
	ember_buf_init_account(&b->s.names, (size_t)1 << 20, c->lim.account);
	if (idmap_init(c, &b->locs, d->n_location_table) ||
	    idmap_init(c, &b->maps, d->n_mapping_table) ||
	    idmap_init(c, &b->funcs, d->n_function_table) ||
	    !(b->stack = alloc0(c, c->lim.max_stack_depth, sizeof(*b->stack))) ||
	    !(b->lines = alloc0(c, c->lim.max_stack_depth, sizeof(*b->lines))) ||
	    !(b->s.labels = alloc0(c, n, sizeof(*b->s.labels))) ||
	    !(b->s.text = alloc0(c, n, sizeof(*b->s.text))) ||
	    !(b->s.name_off = alloc0(c, n, sizeof(*b->s.name_off))))
		return memory_error(c, -ENOMEM);
	return 0;
}

static void build_release(struct build *b)
{
	idmap_release(&b->locs);
	idmap_release(&b->maps);
	idmap_release(&b->funcs);
	free(b->stack);
	free(b->lines);
	free(b->s.labels);
	free(b->s.text);
	free(b->s.name_off);
	ember_buf_release(&b->s.names);
}

static int build_all(struct otlp_ctx *c, struct otlp_request *r)
{
	const otlp_request_message_t *m = r->msg;
	struct build b;
	size_t k = 0;
	int err = build_init(&b, c);

	for (size_t i = 0; !err && i < m->n_resource_profiles; i++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
			m->resource_profiles[i];

		for (size_t s = 0; !err && s < rp->n_scope_profiles; s++)
			for (size_t p = 0; !err && p < rp->scope_profiles[s]->n_profiles; p++)
				err = build_profile(&b, rp->resource,
						    rp->scope_profiles[s]->profiles[p],
						    &r->profiles[k++]);
	}
	build_release(&b);
	return err;
}

/* ---- the request --------------------------------------------------------------------------- */

/* A request of one encoding: unpacked by unpack_with, then every later
 * phase, whichever the encoding. */
static int decode(otlp_unpack_fn unpack_with, const void *data, size_t size,
		  const struct otlp_limits *lim, struct otlp_request **out, char *why,
		  size_t why_size)
{
	static const otlp_dict_t empty = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	struct ember_diag d = ember_diag_make(why, why_size);
	struct otlp_ctx c = { .d = &d };
	struct otlp_request *r;
	size_t np = 0;
	int err;

	limits_resolve(lim, &c.lim);
	r = calloc(1, sizeof(*r));
	if (!r)
		return EMBER_FAIL(&d, -ENOMEM, TAG "out of memory");
	r->acct = c.lim.account;
	err = unpack_with(size ? data : (const void *)"", size, &c, &r->msg);
	if (err)
		goto out;
	c.dict = r->msg->dictionary ? r->msg->dictionary : &empty;
	if ((err = check_dictionary(&c)) || (err = check_counts(&c, r->msg, &np)))
		goto out;
	r->profiles = alloc0(&c, np, sizeof(*r->profiles));
	if (!r->profiles) {
		err = memory_error(&c, -ENOMEM);
		goto out;
	}
	r->n_profiles = np;
	err = build_all(&c, r);
out:
	if (err) {
		otlp_request_free(r);
		return err;
	}
	*out = r;
	return 0;
}

int otlp_decode(const void *data, size_t size, const struct otlp_limits *lim,
		struct otlp_request **out, char *why, size_t why_size)
{
	return decode(unpack, data, size, lim, out, why, why_size);
}

int otlp_decode_json(const void *data, size_t size, const struct otlp_limits *lim,
		     struct otlp_request **out, char *why, size_t why_size)
{
	return decode(otlp_json_unpack, data, size, lim, out, why, why_size);
}

int otlp_memory_error(const struct otlp_ctx *c, int err)
{
	return memory_error(c, err);
}

struct pprof_profile *otlp_profile_take(struct otlp_request *r, size_t i)
{
	struct pprof_profile *p;

	if (!r || i >= r->n_profiles)
		return NULL;
	p = r->profiles[i].p;
	r->profiles[i].p = NULL;
	return p;
}

void otlp_request_free(struct otlp_request *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_profiles; i++) {
		pprof_profile_free(r->profiles[i].p);
		free(r->profiles[i].labels);
		free(r->profiles[i].mappings);
	}
	free(r->profiles);
	if (r->msg)
		protobuf_c_message_free_unpacked(&r->msg->base, NULL);
	free(r);
}
