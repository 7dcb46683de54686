/*
 * test_otlp.c - unit tests of wire/otlp.h: ExportProfilesServiceRequests
 * built with the generated protobuf-c structs, packed, and read back as
 * pprof profiles: the three sample shapes, stacks and dictionary tables,
 * build IDs, series and sample labels, refusals (indices, pre-1.10
 * senders, nesting, limits).
 */
#include "otlp.h"
#include "unit.h"

#include <errno.h>
#include <string.h>

typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary dict_t;
typedef Opentelemetry__Proto__Profiles__V1development__Sample sample_t;

/* One request: a dictionary with strings, two mappings, three locations,
 * one stack; a resource with service.name, host.name and process.pid;
 * one profile of the given samples. */
struct req {
	char *strings[12];
	Opentelemetry__Proto__Profiles__V1development__Mapping m0, m1, *mappings[2];
	Opentelemetry__Proto__Profiles__V1development__Location l0, l1, l2, *locations[3];
	Opentelemetry__Proto__Profiles__V1development__Function f0, f1, *functions[2];
	Opentelemetry__Proto__Profiles__V1development__Line line, *lines[1];
	Opentelemetry__Proto__Profiles__V1development__Stack s0, s1, *stacks[2];
	int32_t stack_locs[2];
	Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit a0, a1, a2, *attrs[3];
	Opentelemetry__Proto__Common__V1__AnyValue v1, v2, rv[3];
	int32_t map_attrs[1];
	Opentelemetry__Proto__Profiles__V1development__Link k0, k1, *links[2];
	uint8_t trace[16], span[8];
	dict_t dict;
	Opentelemetry__Proto__Common__V1__KeyValue kv[3], *kvs[3];
	Opentelemetry__Proto__Resource__V1__Resource res;
	Opentelemetry__Proto__Profiles__V1development__ValueType st;
	Opentelemetry__Proto__Profiles__V1development__Profile prof, *profs[1];
	Opentelemetry__Proto__Profiles__V1development__ScopeProfiles sp, *sps[1];
	Opentelemetry__Proto__Profiles__V1development__ResourceProfiles rp, *rps[1];
	otlp_request_message_t msg;
};

static void req_init(struct req *r, sample_t **samples, size_t n)
{
	static const char *strs[] = { "", "/usr/bin/app", "main", "app.c", "samples", "count",
				      "process.executable.build_id.gnu", "thread.name", "worker",
				      "process.executable.build_id.htlhash" };

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < 10; i++)
		r->strings[i] = (char *)strs[i];
	r->m0 = r->m1 = (__typeof__(r->m0))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT;
	r->m1.memory_start = 0x400000;
	r->m1.memory_limit = 0x500000;
	r->m1.filename_strindex = 1;
	r->map_attrs[0] = 1;
	r->m1.n_attribute_indices = 1;
	r->m1.attribute_indices = r->map_attrs;
	r->mappings[0] = &r->m0;
	r->mappings[1] = &r->m1;
	r->l0 = r->l1 = r->l2 =
		(__typeof__(r->l0))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT;
	r->l1.mapping_index = 1;
	r->l1.address = 0x401234; /* native: no lines */
	r->f0 = r->f1 = (__typeof__(r->f0))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT;
	r->f1.name_strindex = 2;
	r->f1.filename_strindex = 3;
	r->functions[0] = &r->f0;
	r->functions[1] = &r->f1;
	r->line = (__typeof__(r->line))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINE__INIT;
	r->line.function_index = 1;
	r->line.line = 42;
	r->lines[0] = &r->line;
	r->l2.n_lines = 1;
	r->l2.lines = r->lines;
	r->locations[0] = &r->l0;
	r->locations[1] = &r->l1;
	r->locations[2] = &r->l2;
	r->s0 = r->s1 = (__typeof__(r->s0))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT;
	r->stack_locs[0] = 1; /* leaf first */
	r->stack_locs[1] = 2;
	r->s1.n_location_indices = 2;
	r->s1.location_indices = r->stack_locs;
	r->stacks[0] = &r->s0;
	r->stacks[1] = &r->s1;
	r->a0 = r->a1 = r->a2 =
		(__typeof__(r->a0))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT;
	r->v1 = r->v2 = (__typeof__(r->v1))OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
	r->a1.key_strindex = 6;
	r->v1.value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
	r->v1.string_value = "abcdef0123456789";
	r->a1.value = &r->v1;
	r->a2.key_strindex = 7;
	r->v2.value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX;
	r->v2.string_value_strindex = 8;
	r->a2.value = &r->v2;
	r->attrs[0] = &r->a0;
	r->attrs[1] = &r->a1;
	r->attrs[2] = &r->a2;
	r->k0 = r->k1 = (__typeof__(r->k0))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT;
	memset(r->trace, 0xab, sizeof(r->trace));
	memset(r->span, 0xcd, sizeof(r->span));
	r->k1.trace_id = (ProtobufCBinaryData){ 16, r->trace };
	r->k1.span_id = (ProtobufCBinaryData){ 8, r->span };
	r->links[0] = &r->k0;
	r->links[1] = &r->k1;
	r->dict = (dict_t)OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	r->dict.n_mapping_table = 2;
	r->dict.mapping_table = r->mappings;
	r->dict.n_location_table = 3;
	r->dict.location_table = r->locations;
	r->dict.n_function_table = 2;
	r->dict.function_table = r->functions;
	r->dict.n_link_table = 2;
	r->dict.link_table = r->links;
	r->dict.n_string_table = 10;
	r->dict.string_table = r->strings;
	r->dict.n_attribute_table = 3;
	r->dict.attribute_table = r->attrs;
	r->dict.n_stack_table = 2;
	r->dict.stack_table = r->stacks;
	{
		static const char *keys[3] = { "service.name", "host.name", "process.pid" };

		for (int i = 0; i < 3; i++) {
			r->kv[i] = (__typeof__(r->kv[i]))OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT;
			r->kv[i].key = (char *)keys[i];
			r->rv[i] = (__typeof__(r->rv[i]))OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
			r->kv[i].value = &r->rv[i];
			r->kvs[i] = &r->kv[i];
		}
		r->rv[0].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		r->rv[0].string_value = "checkout";
		r->rv[1].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		r->rv[1].string_value = "node-1";
		r->rv[2].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		r->rv[2].int_value = 4242;
	}
	r->res = (__typeof__(r->res))OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT;
	r->res.n_attributes = 3;
	r->res.attributes = r->kvs;
	r->st = (__typeof__(r->st))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__VALUE_TYPE__INIT;
	r->st.type_strindex = 4;
	r->st.unit_strindex = 5;
	r->prof = (__typeof__(r->prof))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT;
	r->prof.sample_type = &r->st;
	r->prof.n_samples = n;
	r->prof.samples = samples;
	r->profs[0] = &r->prof;
	r->sp = (__typeof__(r->sp))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT;
	r->sp.n_profiles = 1;
	r->sp.profiles = r->profs;
	r->sps[0] = &r->sp;
	r->rp = (__typeof__(r->rp))OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT;
	r->rp.resource = &r->res;
	r->rp.n_scope_profiles = 1;
	r->rp.scope_profiles = r->sps;
	r->rps[0] = &r->rp;
	r->msg = (otlp_request_message_t)
		OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	r->msg.n_resource_profiles = 1;
	r->msg.resource_profiles = r->rps;
	r->msg.dictionary = &r->dict;
}

/* Pack r and decode it. */
static int decode(struct req *r, const struct otlp_limits *lim, struct otlp_request **out,
		  char *why, size_t size)
{
	size_t n = protobuf_c_message_get_packed_size(&r->msg.base);
	uint8_t *buf = malloc(n + 1);
	int err;

	protobuf_c_message_pack(&r->msg.base, buf);
	err = otlp_decode(buf, n, lim, out, why, size);
	free(buf);
	return err;
}

#define SAMPLE_INIT OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT

static int64_t total(const struct pprof_profile *p)
{
	const pprof_message_t *m = pprof_message(p);
	int64_t t = 0;

	for (size_t i = 0; i < m->n_sample; i++)
		t += m->sample[i]->value[0];
	return t;
}

static int test_otlp__three_sample_shapes_count(void)
{
	uint64_t ts[4] = { 1, 2, 3, 4 };
	int64_t vals[4] = { 2, 2, 3, 3 }, one[1] = { 10 };
	sample_t a = SAMPLE_INIT, b = SAMPLE_INIT, c = SAMPLE_INIT, *s[3] = { &a, &b, &c };
	struct otlp_request *r = NULL;
	struct req q;
	char why[256] = "";

	a.stack_index = b.stack_index = c.stack_index = 1;
	a.n_timestamps_unix_nano = 3; /* timestamps only: 3 */
	a.timestamps_unix_nano = ts;
	b.n_values = 1; /* one aggregated value: 10 */
	b.values = one;
	c.n_values = c.n_timestamps_unix_nano = 4; /* both: 2+2+3+3 */
	c.values = vals;
	c.timestamps_unix_nano = ts;
	req_init(&q, s, 3);
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(r->n_profiles, ==, 1);
	CHECK_INT(total(r->profiles[0].p), ==, 3 + 10 + 10);
	CHECK_STR(pprof_string(r->profiles[0].p, pprof_message(r->profiles[0].p)->sample_type[0]->type),
		  "samples");
	otlp_request_free(r);
	return 0;
}

static int test_otlp__stacks_mappings_and_build_ids(void)
{
	uint64_t ts[1] = { 1 };
	sample_t a = SAMPLE_INIT, *s[1] = { &a };
	struct otlp_request *r = NULL;
	const pprof_message_t *m;
	const pprof_location_t *leaf, *caller;
	struct req q;
	char why[256] = "";

	a.stack_index = 1;
	a.n_timestamps_unix_nano = 1;
	a.timestamps_unix_nano = ts;
	req_init(&q, s, 1);
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, 0);
	m = pprof_message(r->profiles[0].p);
	CHECK_INT(m->n_sample, ==, 1);
	CHECK_INT(m->sample[0]->n_location_id, ==, 2);
	leaf = pprof_location_by_id(r->profiles[0].p, m->sample[0]->location_id[0]);
	caller = pprof_location_by_id(r->profiles[0].p, m->sample[0]->location_id[1]);
	CHECK_INT(leaf->address, ==, 0x401234);
	CHECK(leaf->mapping_id != 0);
	CHECK_INT(leaf->n_line, ==, 0);
	CHECK_INT(caller->n_line, ==, 1);
	CHECK_INT(caller->line[0]->line, ==, 42);
	CHECK_STR(pprof_string(r->profiles[0].p,
			       pprof_function_by_id(r->profiles[0].p,
						    caller->line[0]->function_id)->name),
		  "main");
	CHECK_STR(pprof_string(r->profiles[0].p,
			       pprof_mapping_by_id(r->profiles[0].p, leaf->mapping_id)->build_id),
		  "abcdef0123456789");
	CHECK_INT(r->profiles[0].n_mappings, ==, 1);
	CHECK_INT(r->profiles[0].mappings[0].kinds, ==, OTLP_BUILD_ID_GNU);
	otlp_request_free(r);

	/* Only the profiler's file ID: kept aside, never a pprof build ID. */
	q.a1.key_strindex = 9;
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, 0);
	m = pprof_message(r->profiles[0].p);
	CHECK_INT(r->profiles[0].mappings[0].kinds, ==, OTLP_BUILD_ID_HTLHASH);
	CHECK_STR(r->profiles[0].mappings[0].htlhash, "abcdef0123456789");
	CHECK_STR(pprof_string(r->profiles[0].p, m->mapping[0]->build_id), "");
	otlp_request_free(r);
	return 0;
}

static int test_otlp__resource_labels_not_the_pid_sample_attributes_per_sample(void)
{
	uint64_t ts[1] = { 1 };
	int32_t attrs[1] = { 2 };
	sample_t a = SAMPLE_INIT, *s[1] = { &a };
	struct otlp_request *r = NULL;
	const Perftools__Profiles__Sample *ps;
	struct req q;
	char why[256] = "";
	bool thread = false, span = false, trace = false;

	a.stack_index = 1;
	a.n_timestamps_unix_nano = 1;
	a.timestamps_unix_nano = ts;
	a.n_attribute_indices = 1;
	a.attribute_indices = attrs;
	a.link_index = 1;
	req_init(&q, s, 1);
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(r->profiles[0].n_labels, ==, 2);
	CHECK_STR(r->profiles[0].labels[0].name, "service_name");
	CHECK_STR(r->profiles[0].labels[0].value, "checkout");
	CHECK_STR(r->profiles[0].labels[1].name, "host.name");
	ps = pprof_message(r->profiles[0].p)->sample[0];
	for (size_t i = 0; i < ps->n_label; i++) {
		const char *k = pprof_string(r->profiles[0].p, ps->label[i]->key);
		const char *v = pprof_string(r->profiles[0].p, ps->label[i]->str);

		thread |= !strcmp(k, "@thread.name") && !strcmp(v, "worker");
		span |= !strcmp(k, "span_id") && !strcmp(v, "cdcdcdcdcdcdcdcd");
		trace |= !strcmp(k, "trace_id");
	}
	/* the link and the attributes ('@' KEY) are the sample's (formats.md) */
	CHECK(thread);
	CHECK(span);
	CHECK(trace);
	CHECK_INT(ps->n_label, ==, 3);
	otlp_request_free(r);
	return 0;
}

static int test_otlp__pre_1_10_sender_refused_with_cause(void)
{
	int32_t old_values[2] = { 5, 7 }; /* a 1.9 sender's values land here */
	sample_t a = SAMPLE_INIT, *s[1] = { &a };
	struct otlp_request *r = NULL;
	struct req q;
	char why[512] = "";

	a.stack_index = 1;
	a.n_attribute_indices = 0;
	a.attribute_indices = old_values;
	req_init(&q, s, 1);
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, -PPROF_ERR_INVALID);
	CHECK(strstr(why, "neither values nor timestamps") != NULL);
	CHECK(strstr(why, "1.10") != NULL);
	CHECK(r == NULL);
	return 0;
}

static int test_otlp__indices_out_of_range_refused(void)
{
	uint64_t ts[1] = { 1 };
	sample_t a = SAMPLE_INIT, *s[1] = { &a };
	struct otlp_request *r = NULL;
	struct req q;
	char why[256] = "";

	a.n_timestamps_unix_nano = 1;
	a.timestamps_unix_nano = ts;
	a.stack_index = 2;
	req_init(&q, s, 1);
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, -PPROF_ERR_INVALID);
	CHECK(strstr(why, "stack index 2") != NULL);
	a.stack_index = 1;
	q.stack_locs[0] = 3;
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, -PPROF_ERR_INVALID);
	CHECK(strstr(why, "location index 3") != NULL);
	q.stack_locs[0] = 1;
	q.l1.mapping_index = -1;
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, -PPROF_ERR_INVALID);
	q.l1.mapping_index = 1;
	q.line.function_index = 7;
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, -PPROF_ERR_INVALID);
	q.line.function_index = 1;
	q.f1.name_strindex = 10;
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, -PPROF_ERR_INVALID);
	CHECK(strstr(why, "string index 10") != NULL);
	q.f1.name_strindex = 2;
	a.link_index = 2;
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, -PPROF_ERR_INVALID);
	a.link_index = 0;
	CHECK_INT(decode(&q, NULL, &r, why, sizeof(why)), ==, 0);
	otlp_request_free(r);
	return 0;
}

static int test_otlp__limits_and_nesting(void)
{
	uint64_t ts[1] = { 1 };
	sample_t a = SAMPLE_INIT, *s[1] = { &a };
	struct otlp_request *r = NULL;
	struct otlp_limits lim = { .sz = sizeof(lim), .max_stack_depth = 1 };
	struct req q;
	char why[256] = "";
	uint8_t deep[4096];
	size_t n = 0;

	a.stack_index = 1;
	a.n_timestamps_unix_nano = 1;
	a.timestamps_unix_nano = ts;
	req_init(&q, s, 1);
	CHECK_INT(decode(&q, &lim, &r, why, sizeof(why)), ==, -E2BIG);
	lim = (struct otlp_limits){ .sz = sizeof(lim), .max_table_entries = 2 };
	CHECK_INT(decode(&q, &lim, &r, why, sizeof(why)), ==, -E2BIG);
	/* resource_profiles { resource { attributes { value { kvlist { values
	 * { value { kvlist ... } } } } } } }: each level a few bytes. */
	{
		/* Build inside out: v = AnyValue{kvlist{values{value: v}}}. */
		uint8_t a1[4096], a2[4096];
		size_t len = 0;

		for (int lvl = 0; lvl < 200; lvl++) {
			size_t k = 0;

			a2[k++] = 0x12; /* KeyValue.value */
			a2[k++] = (uint8_t)len; /* < 128 checked below */
			memcpy(a2 + k, a1, len);
			k += len;
			/* KeyValueList.values = KeyValue */
			memmove(a2 + 2, a2, k);
			a2[0] = 0x0a;
			a2[1] = (uint8_t)k;
			k += 2;
			/* AnyValue.kvlist_value */
			memmove(a2 + 2, a2, k);
			a2[0] = 0x32;
			a2[1] = (uint8_t)k;
			k += 2;
			if (k >= 120)
				break;
			memcpy(a1, a2, k);
			len = k;
		}
		/* Resource{attributes{value: a1}} in ResourceProfiles.resource */
		deep[n++] = 0x0a;
		deep[n++] = (uint8_t)(len + 6);
		deep[n++] = 0x0a;
		deep[n++] = (uint8_t)(len + 4);
		deep[n++] = 0x0a;
		deep[n++] = (uint8_t)(len + 2);
		deep[n++] = 0x12;
		deep[n++] = (uint8_t)len;
		memcpy(deep + n, a1, len);
		n += len;
	}
	lim = (struct otlp_limits){ .sz = sizeof(lim), .max_nesting = 8 };
	CHECK_INT(otlp_decode(deep, n, &lim, &r, why, sizeof(why)), ==, -E2BIG);
	CHECK(strstr(why, "nested deeper") != NULL);
	CHECK_INT(otlp_decode(deep, n, NULL, &r, why, sizeof(why)), ==, -E2BIG); /* 32 */
	lim.max_nesting = 200;
	CHECK_INT(otlp_decode(deep, n, &lim, &r, why, sizeof(why)), ==, 0);
	otlp_request_free(r);
	CHECK_INT(otlp_decode("\xff\xff", 2, NULL, &r, why, sizeof(why)), ==, -PPROF_ERR_PROTOBUF);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_otlp__three_sample_shapes_count),
	UNIT_CASE(test_otlp__stacks_mappings_and_build_ids),
	UNIT_CASE(test_otlp__resource_labels_not_the_pid_sample_attributes_per_sample),
	UNIT_CASE(test_otlp__pre_1_10_sender_refused_with_cause),
	UNIT_CASE(test_otlp__indices_out_of_range_refused),
	UNIT_CASE(test_otlp__limits_and_nesting),
};

UNIT_MAIN_QUIET(cases)
