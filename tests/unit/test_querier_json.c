/*
 * test_querier_json.c - unit tests of the JSON codec of Pyroscope's query
 * API (wire/querier.h: querier_decode with QUERIER_JSON, querier_encode),
 * that is of wire/'s proto3 JSON mapping (pb_json_read.c, pb_json_write.c):
 * the exact JSON written for messages with 64-bit integers, enums,
 * repeated messages, bytes, doubles and fields at their default; requests
 * read from lowerCamel and proto names, int64 from strings and numbers,
 * enums from names and numbers, unknown keys skipped; malformed bodies
 * refused with the reason.
 */
#include "otlp.h"
#include "querier.h"
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* m written as JSON into out (NUL-ended), or "" on failure. */
static const char *to_json(const ProtobufCMessage *m, struct ember_buf *out)
{
	ember_buf_init(out, 1 << 20);
	if (querier_encode(m, QUERIER_JSON, out) || !out->data)
		return "";
	return out->data;
}

/* json read as method's request: querier_decode's error, *m set on 0. */
static int from_json(const char *method, const char *json, ProtobufCMessage **m, char *why)
{
	struct ember_buf plain;
	int err;

	ember_buf_init(&plain, 1 << 20);
	err = querier_decode(method, QUERIER_JSON, false, json, strlen(json), &plain, m, why, 512);
	ember_buf_release(&plain);
	return err;
}

static int test_querier_json__writes_the_mapping_exactly(void)
{
	int64_t v0[] = { 0, 7, -3, 9007199254740993 }, v1[] = { INT64_MIN };
	Querier__V1__Level l0 = QUERIER__V1__LEVEL__INIT, l1 = QUERIER__V1__LEVEL__INIT,
			   l2 = QUERIER__V1__LEVEL__INIT;
	Querier__V1__Level *levels[] = { &l0, &l1, &l2 };
	char *names[] = { "total", "caf\xc3\xa9 \"q\"" };
	Querier__V1__FlameGraph fg = QUERIER__V1__FLAME_GRAPH__INIT;
	Querier__V1__SelectMergeStacktracesRequest rq =
		QUERIER__V1__SELECT_MERGE_STACKTRACES_REQUEST__INIT;
	Types__V1__Point pt = TYPES__V1__POINT__INIT;
	Opentelemetry__Proto__Common__V1__AnyValue av =
		OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
	uint8_t raw[] = { 0, 1, 2, 0xff };
	struct ember_buf b;

	l0.values = v0;
	l0.n_values = 4;
	l2.values = v1;
	l2.n_values = 1;
	fg.names = names;
	fg.n_names = 2;
	fg.levels = levels;
	fg.n_levels = 3;
	fg.total = 12;
	CHECK_STR(to_json(&fg.base, &b),
		  "{\"names\":[\"total\",\"caf\xc3\xa9 \\\"q\\\"\"],\"levels\":[{\"values\":"
		  "[\"0\",\"7\",\"-3\",\"9007199254740993\"]},{},{\"values\":"
		  "[\"-9223372036854775808\"]}],\"total\":\"12\"}");
	ember_buf_release(&b);
	CHECK_STR(to_json(&rq.base, &b), "{}"); /* every field at its default */
	ember_buf_release(&b);
	rq.profile_typeid = "a:b:c:d:e";
	rq.label_selector = "";
	rq.max_nodes = 5;
	rq.format = QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_FLAMEGRAPH;
	CHECK_STR(to_json(&rq.base, &b), "{\"profileTypeID\":\"a:b:c:d:e\",\"maxNodes\":\"5\","
					 "\"format\":\"PROFILE_FORMAT_FLAMEGRAPH\"}");
	ember_buf_release(&b);
	rq.format = 99; /* no name: its number */
	CHECK(strstr(to_json(&rq.base, &b), "\"format\":99}") != NULL);
	ember_buf_release(&b);
	pt.value = 1.5;
	CHECK_STR(to_json(&pt.base, &b), "{\"value\":1.5}");
	ember_buf_release(&b);
	pt.value = NAN;
	pt.timestamp = -1;
	CHECK_STR(to_json(&pt.base, &b), "{\"value\":\"NaN\",\"timestamp\":\"-1\"}");
	ember_buf_release(&b);
	pt.value = -INFINITY;
	CHECK_STR(to_json(&pt.base, &b), "{\"value\":\"-Infinity\",\"timestamp\":\"-1\"}");
	ember_buf_release(&b);
	av.value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BYTES_VALUE;
	av.bytes_value = (ProtobufCBinaryData){ sizeof(raw), raw };
	CHECK_STR(to_json(&av.base, &b), "{\"bytesValue\":\"AAEC/w==\"}");
	ember_buf_release(&b);
	av.value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE;
	av.bool_value = 0; /* a oneof member set is written, even at its default */
	CHECK_STR(to_json(&av.base, &b), "{\"boolValue\":false}");
	ember_buf_release(&b);
	return 0;
}

static int test_querier_json__reads_both_names_strings_numbers_unknown(void)
{
	ProtobufCMessage *m = NULL;
	const Querier__V1__SelectMergeStacktracesRequest *rq;
	const Types__V1__LabelValuesRequest *lv;
	char why[512];

	CHECK_INT(from_json("SelectMergeStacktraces",
			    "{\"profileTypeID\":\"a:b:c:d:e\",\"label_selector\":\"{x=\\\"\\u00e9\\\"}\","
			    "\"start\":\"-9223372036854775808\",\"end\":1700000000000,"
			    "\"max_nodes\":null,\"format\":\"PROFILE_FORMAT_FLAMEGRAPH\","
			    "\"future\":{\"a\":[1,[{}],\"x\"]},\"stackTraceSelector\":"
			    "{\"callSite\":[{\"name\":\"main\"},{\"name\":\"f\",\"n\":1}]}}",
			    &m, why), ==, 0);
	rq = (const void *)m;
	CHECK_STR(rq->profile_typeid, "a:b:c:d:e");
	CHECK_STR(rq->label_selector, "{x=\"\xc3\xa9\"}");
	CHECK(rq->start == INT64_MIN && rq->end == 1700000000000 && rq->max_nodes == 0);
	CHECK_INT(rq->format, ==, QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_FLAMEGRAPH);
	CHECK_INT(rq->stack_trace_selector->n_call_site, ==, 2);
	CHECK_STR(rq->stack_trace_selector->call_site[1]->name, "f");
	protobuf_c_message_free_unpacked(m, NULL);
	CHECK_INT(from_json("SelectMergeStacktraces", "{\"format\":2,\"max_nodes\":\"7\"}", &m,
			    why), ==, 0);
	rq = (const void *)m;
	CHECK(rq->format == 2 && rq->max_nodes == 7);
	protobuf_c_message_free_unpacked(m, NULL);
	CHECK_INT(from_json("LabelValues", "{\"name\":\"v\",\"matchers\":[\"{}\",\"{a=\\\"b\\\"}\"]}",
			    &m, why), ==, 0);
	lv = (const void *)m;
	CHECK(lv->n_matchers == 2 && !strcmp(lv->matchers[1], "{a=\"b\"}"));
	protobuf_c_message_free_unpacked(m, NULL);
	return 0;
}

/* Each written answer reads back as the same message (packed alike). */
static int test_querier_json__written_reads_back(void)
{
	Querier__V1__SelectMergeStacktracesRequest rq =
		QUERIER__V1__SELECT_MERGE_STACKTRACES_REQUEST__INIT;
	ProtobufCMessage *m = NULL;
	struct ember_buf b;
	uint8_t a[64], c[64];
	char why[512];

	rq.profile_typeid = "t";
	rq.start = -5;
	rq.end = INT64_MAX;
	rq.format = 3;
	CHECK_INT(from_json("SelectMergeStacktraces", to_json(&rq.base, &b), &m, why), ==, 0);
	ember_buf_release(&b);
	CHECK_INT(protobuf_c_message_get_packed_size(m), ==,
		  protobuf_c_message_get_packed_size(&rq.base));
	CHECK(protobuf_c_message_pack(m, a) == protobuf_c_message_pack(&rq.base, c));
	CHECK(memcmp(a, c, protobuf_c_message_get_packed_size(m)) == 0);
	protobuf_c_message_free_unpacked(m, NULL);
	return 0;
}

static int test_querier_json__malformed_refused_with_reason(void)
{
	ProtobufCMessage *m = NULL;
	char why[512], deep[400];
	size_t n = 0;

	CHECK_INT(from_json("LabelNames", "{\"matchers\":[\"a\",}", &m, why), ==, -EINVAL);
	CHECK(m == NULL && strstr(why, "not JSON: byte") != NULL);
	CHECK_INT(from_json("LabelValues", "{\"start\":\"soon\"}", &m, why), ==, -EINVAL);
	CHECK(strstr(why, "start: 'soon' is not an integer") != NULL);
	CHECK_INT(from_json("LabelValues", "[]", &m, why), ==, -EINVAL);
	CHECK(strstr(why, "not a JSON object (a LabelValuesRequest)") != NULL);
	CHECK_INT(from_json("SelectMergeStacktraces", "{\"format\":\"PNG\"}", &m, why), ==, -EINVAL);
	CHECK(strstr(why, "format: 'PNG' is not a value of the enum") != NULL);
	CHECK_INT(from_json("LabelValues", "{\"matchers\":\"{}\"}", &m, why), ==, -EINVAL);
	CHECK(strstr(why, "matchers: not an array") != NULL);
	CHECK_INT(from_json("Series", "{\"start\":1,\"start\":2}", &m, why), ==, -EINVAL);
	CHECK(strstr(why, "given twice") != NULL);
	n += (size_t)sprintf(deep, "{\"x\":");
	for (int i = 0; i < 70; i++)
		deep[n++] = '[';
	deep[n] = '\0';
	CHECK_INT(from_json("LabelNames", deep, &m, why), ==, -E2BIG);
	CHECK(strstr(why, "JSON nested deeper than 65 levels") != NULL);
	CHECK_INT(from_json("NoSuchMethod", "{}", &m, why), ==, -ENOENT);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_querier_json__writes_the_mapping_exactly),
	UNIT_CASE(test_querier_json__reads_both_names_strings_numbers_unknown),
	UNIT_CASE(test_querier_json__written_reads_back),
	UNIT_CASE(test_querier_json__malformed_refused_with_reason),
};

UNIT_MAIN_QUIET(cases)
