/*
 * test_otlp_decode_json.c - unit tests of otlp_decode_json (wire/otlp.h): OTLP's
 * JSON encoding read into the same message as protobuf (each value as the
 * mapping gives it, checked in the unpacked message), the request it
 * becomes the same as its protobuf's, refusals that name their JSON path,
 * and the limits of nesting, entries and memory.
 */
#include "otlp.h"
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef Opentelemetry__Proto__Profiles__V1development__Profile profile_t;
typedef Opentelemetry__Proto__Common__V1__AnyValue value_t;

static const char request[] =
	"{\"resourceProfiles\":[{\"resource\":{\"attributes\":["
	"{\"key\":\"service.name\",\"value\":{\"stringValue\":\"caf\\u00e9\"}},"
	"{\"key\":\"n\",\"value\":{\"intValue\":\"-9223372036854775808\"}},"
	"{\"key\":\"d\",\"value\":{\"doubleValue\":\"NaN\"}},"
	"{\"key\":\"b\",\"value\":{\"boolValue\":true,\"future\":[1]}},"
	"{\"key\":\"x\",\"value\":{\"bytesValue\":\"-_8\"}}]},"
	"\"scope_profiles\":[{\"profiles\":[{\"profileId\":\"AAECAwQFBgcICQoLDA0ODw==\","
	"\"timeUnixNano\":1700000000000000000,\"period\":\"-5\",\"sampleType\":null,"
	"\"samples\":[{\"stackIndex\":1,\"values\":[\"3\",4],\"linkIndex\":1},"
	"{\"stackIndex\":1,\"timestamps_unix_nano\":[\"1\",2,\"3\"]}]}]}]}],"
	"\"dictionary\":{\"stringTable\":[\"\",\"f\"],\"mappingTable\":[{},{\"memoryLimit\":18446744073709551615}],\"functionTable\":[{},{\"nameStrindex\":1}],"
	"\"locationTable\":[{},{\"lines\":[{\"functionIndex\":1,\"line\":\"7\"}]}],"
	"\"stackTable\":[{},{\"locationIndices\":[1]}],"
	"\"linkTable\":[{},{\"traceId\":\"5B8EFFF798038103D269B633813FC60C\","
	"\"spanId\":\"eee19b7ec3c1b174\"}]},\"unknown\":{\"a\":[[{}]]}}";

static int decode(const char *json, const struct otlp_limits *lim, struct otlp_request **r,
		  char *why)
{
	return otlp_decode_json(json, strlen(json), lim, r, why, 512);
}

static int test_otlp_decode_json__values_as_the_mapping_gives_them(void)
{
	struct otlp_request *r = NULL;
	char why[512];
	const value_t *const *a;
	const profile_t *p;
	const Opentelemetry__Proto__Profiles__V1development__Link *l;

	CHECK_INT(decode(request, NULL, &r, why), ==, 0);
	a = (const value_t *const *)r->msg->resource_profiles[0]->resource->attributes;
	CHECK_STR(r->msg->resource_profiles[0]->resource->attributes[0]->value->string_value,
		  "caf\xc3\xa9");
	CHECK(r->msg->resource_profiles[0]->resource->attributes[1]->value->int_value == INT64_MIN);
	CHECK(isnan(r->msg->resource_profiles[0]->resource->attributes[2]->value->double_value));
	CHECK(r->msg->resource_profiles[0]->resource->attributes[3]->value->bool_value);
	CHECK_INT(r->msg->resource_profiles[0]->resource->attributes[4]->value->bytes_value.len, ==, 2);
	CHECK_INT(r->msg->resource_profiles[0]->resource->attributes[4]->value->bytes_value.data[0],
		  ==, 0xfb);
	(void)a;
	p = r->msg->resource_profiles[0]->scope_profiles[0]->profiles[0];
	CHECK_INT(p->profile_id.len, ==, 16);
	CHECK_INT(p->profile_id.data[15], ==, 15);
	CHECK(p->time_unix_nano == 1700000000000000000u);
	CHECK(r->msg->dictionary->mapping_table[1]->memory_limit == UINT64_MAX);
	CHECK_INT(p->period, ==, -5);
	CHECK(p->sample_type == NULL);
	CHECK_INT(p->samples[0]->n_values, ==, 2);
	CHECK_INT(p->samples[0]->values[1], ==, 4);
	CHECK_INT(p->samples[1]->n_timestamps_unix_nano, ==, 3);
	CHECK_INT(p->samples[1]->timestamps_unix_nano[2], ==, 3);
	l = r->msg->dictionary->link_table[1];
	CHECK_INT(l->trace_id.len, ==, 16);
	CHECK_INT(l->trace_id.data[0], ==, 0x5b);
	CHECK_INT(l->span_id.len, ==, 8);
	CHECK_INT(l->span_id.data[7], ==, 0x74);
	/* and the profile it became: 7 + 3 on the one stack */
	CHECK_INT(r->n_profiles, ==, 1);
	CHECK_INT(pprof_message(r->profiles[0].p)->n_sample, ==, 2);
	otlp_request_free(r);
	return 0;
}

/* The message JSON gives, packed as protobuf, decodes to the same request. */
static int test_otlp_decode_json__same_request_as_its_protobuf(void)
{
	struct otlp_request *j = NULL, *b = NULL;
	char why[512];
	uint8_t *buf;
	size_t n;

	CHECK_INT(decode(request, NULL, &j, why), ==, 0);
	n = protobuf_c_message_get_packed_size(&j->msg->base);
	CHECK((buf = malloc(n)) != NULL);
	protobuf_c_message_pack(&j->msg->base, buf);
	CHECK_INT(otlp_decode(buf, n, NULL, &b, why, sizeof(why)), ==, 0);
	free(buf);
	CHECK_INT(b->n_profiles, ==, j->n_profiles);
	CHECK_INT(b->profiles[0].n_labels, ==, j->profiles[0].n_labels);
	CHECK_INT(pprof_message(b->profiles[0].p)->n_sample, ==,
		  pprof_message(j->profiles[0].p)->n_sample);
	for (size_t i = 0; i < pprof_message(b->profiles[0].p)->n_sample; i++)
		CHECK_INT(pprof_message(b->profiles[0].p)->sample[i]->value[0], ==,
			  pprof_message(j->profiles[0].p)->sample[i]->value[0]);
	otlp_request_free(j);
	otlp_request_free(b);
	return 0;
}

static int test_otlp_decode_json__refusals_name_the_path(void)
{
	static const struct {
		const char *json;
		int err;
		const char *says;
	} bad[] = {
		{ "", -PPROF_ERR_PROTOBUF, "not JSON" },
		{ "{\"resourceProfiles\":[}", -PPROF_ERR_PROTOBUF, "not JSON" },
		{ "[]", -PPROF_ERR_INVALID, "not a JSON object" },
		{ "{\"dictionary\":{\"stringTable\":\"x\"}}", -PPROF_ERR_INVALID,
		  "dictionary.stringTable: not an array" },
		{ "{\"dictionary\":{\"stringTable\":[1]}}", -PPROF_ERR_INVALID,
		  "dictionary.stringTable[0]: not a string" },
		{ "{\"dictionary\":{\"stackTable\":[{},{\"locationIndices\":[\"2147483648\"]}]}}",
		  -PPROF_ERR_INVALID, "dictionary.stackTable[1].locationIndices[0]: 2147483648 out of" },
		{ "{\"dictionary\":{\"mappingTable\":[{\"memoryStart\":-1}]}}", -PPROF_ERR_INVALID,
		  "memoryStart: -1 out of" },
		{ "{\"dictionary\":{\"mappingTable\":[{\"memoryStart\":1.5}]}}", -PPROF_ERR_INVALID,
		  "not an integer" },
		{ "{\"dictionary\":{\"linkTable\":[{\"traceId\":\"AAECAwQFBgcICQoLDA0ODw==\"}]}}",
		  -PPROF_ERR_INVALID, "dictionary.linkTable[0].traceId: 24 hex digits" },
		{ "{\"dictionary\":{\"linkTable\":[{\"spanId\":\"zzzzzzzzzzzzzzzz\"}]}}",
		  -PPROF_ERR_INVALID, "spanId: 'zzzzzzzzzzzzzzzz' is not hex" },
		{ "{\"resourceProfiles\":[{\"resource\":{\"attributes\":[{\"value\":"
		  "{\"stringValue\":\"a\",\"intValue\":1}}]}}]}",
		  -PPROF_ERR_INVALID, "value.intValue: a second member of a oneof" },
		{ "{\"dictionary\":{},\"dictionary\":{}}", -PPROF_ERR_INVALID,
		  "dictionary: given twice" },
		{ "{\"resourceProfiles\":[{\"resource\":{\"attributes\":[{\"value\":"
		  "{\"boolValue\":1}}]}}]}", -PPROF_ERR_INVALID, "boolValue: not true or false" },
		{ "{\"resourceProfiles\":[{\"resource\":{\"attributes\":[{\"value\":"
		  "{\"bytesValue\":\"a\"}}]}}]}", -PPROF_ERR_INVALID, "bytesValue: not base64" },
		{ "{\"resourceProfiles\":[null]}", -PPROF_ERR_INVALID, "resourceProfiles[0]: not an object" },
	};
	struct otlp_request *r = NULL;
	char why[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = decode(bad[i].json, NULL, &r, why);

		if (err != bad[i].err || !strstr(why, bad[i].says)) {
			fprintf(stderr, "%s: %d '%s'\n", bad[i].json, err, why);
			return 1;
		}
	}
	return 0;
}

static int test_otlp_decode_json__nesting_entries_and_memory_bounded(void)
{
	struct otlp_limits lim = { .sz = sizeof(lim), .max_nesting = 8 };
	struct otlp_request *r = NULL;
	char why[512], *deep = malloc(1 << 20);
	size_t n = 0;

	CHECK(deep != NULL);
	n += (size_t)sprintf(deep, "{\"x\":");
	for (int i = 0; i < 100000; i++)
		deep[n++] = '[';
	deep[n] = '\0';
	CHECK_INT(decode(deep, &lim, &r, why), ==, -E2BIG);
	CHECK(strstr(why, "JSON nested deeper than 17 levels") != NULL);
	n = (size_t)sprintf(deep, "{\"resourceProfiles\":[{\"resource\":{\"attributes\":[{\"value\":");
	for (int i = 0; i < 10; i++)
		n += (size_t)sprintf(deep + n, "{\"kvlistValue\":{\"values\":[{\"value\":");
	CHECK_INT(decode(deep, &lim, &r, why), ==, -E2BIG);
	CHECK(strstr(why, "submessages nested deeper than 8 levels") != NULL);
	lim = (struct otlp_limits){ .sz = sizeof(lim), .max_table_entries = 10, .max_samples = 10 };
	CHECK_INT(decode("{\"dictionary\":{\"stringTable\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
			 "\"\",\"\",\"\"]}}", &lim, &r, why), ==, -E2BIG);
	CHECK(strstr(why, "dictionary.stringTable[10]: more than 10 entries") != NULL);
	lim = (struct otlp_limits){ .sz = sizeof(lim), .max_memory_bytes = 4096 };
	n = (size_t)sprintf(deep, "{\"dictionary\":{\"stringTable\":[\"\"");
	for (int i = 0; i < 1000; i++)
		n += (size_t)sprintf(deep + n, ",\"s\"");
	sprintf(deep + n, "]}}");
	CHECK_INT(decode(deep, &lim, &r, why), ==, -E2BIG);
	CHECK(strstr(why, "more than 4096 bytes of memory") != NULL);
	lim = (struct otlp_limits){ .sz = sizeof(lim), .max_input_bytes = 8 };
	CHECK_INT(decode("{\"dictionary\":{}}", &lim, &r, why), ==, -E2BIG);
	free(deep);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_otlp_decode_json__values_as_the_mapping_gives_them),
	UNIT_CASE(test_otlp_decode_json__same_request_as_its_protobuf),
	UNIT_CASE(test_otlp_decode_json__refusals_name_the_path),
	UNIT_CASE(test_otlp_decode_json__nesting_entries_and_memory_bounded),
};

UNIT_MAIN_QUIET(cases)
