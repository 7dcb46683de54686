/*
 * test_wire.c - unit tests of wire/: pprof decoding (raw, gzip, zstd),
 * validation and its reasons, bombs and caps, lookups, the edit and
 * build helpers and encoding; the JSON request of POST /api/v1/symbolize
 * (values, defaults, JSON paths of errors, caps) and its answer (checked
 * by parsing it back with jansson).  The end-to-end checks against Go's
 * pprof are in tests/wire/test_pprof_go.py.
 */
#include "pprof.h"
#include "pyroscope.h"
#include "symbolize_json.h"
#include "unit.h"

#include <errno.h>
#include <jansson.h>
#include <zlib.h>
#include <zstd.h>

#define MIB ((size_t)1 << 20)

/* ---- helpers: a small valid profile --------------------------------------- */

/* samples/count + cpu/nanoseconds; mapping 1 at 0x400000; locations 1..3;
 * two samples; no functions. */
static struct pprof_profile *small_profile(void)
{
	struct pprof_mapping_desc md = { .start = 0x400000, .limit = 0x500000,
					 .filename = "/bin/app", .build_id = "abcd" };
	struct pprof_profile *p = pprof_profile_new();
	uint64_t mid, loc[3];
	int64_t v1[2] = { 1, 10000000 }, v2[2] = { 2, 20000000 };

	if (!p || pprof_add_sample_type(p, "samples", "count") ||
	    pprof_add_sample_type(p, "cpu", "nanoseconds") ||
	    pprof_set_period(p, "cpu", "nanoseconds", 10000000) ||
	    pprof_add_mapping(p, &md, &mid))
		goto fail;
	for (int i = 0; i < 3; i++)
		if (pprof_add_location(p, mid, 0x401000 + 0x1000 * (uint64_t)i, &loc[i]))
			goto fail;
	if (pprof_add_sample(p, loc, 2, v1, 2) || pprof_add_sample(p, &loc[2], 1, v2, 2))
		goto fail;
	return p;
fail:
	pprof_profile_free(p);
	return NULL;
}

/* The encoding of p (raw or gzip) in a fresh buffer; caller releases. */
static int encode(const struct pprof_profile *p, bool gzip, struct ember_buf *b)
{
	ember_buf_init(b, 64 * MIB);
	return pprof_encode(p, gzip, b);
}

/* Encode p raw, decode it back with lim; returns the decode result. */
static int reencode(const struct pprof_profile *p, const struct pprof_limits *lim,
		    struct pprof_profile **out, char *why, size_t why_size)
{
	struct ember_buf b;
	int err = encode(p, false, &b);

	if (!err)
		err = pprof_decode(b.data, b.len, lim, out, why, why_size);
	ember_buf_release(&b);
	return err;
}

/* Tests corrupt a built profile through its message, then decode it. */
static pprof_message_t *mut(struct pprof_profile *p)
{
	return (pprof_message_t *)pprof_message(p);
}

static int expect_reject(struct pprof_profile *p, int want, const char *reason)
{
	struct pprof_profile *q = NULL;
	char why[256];
	int err = reencode(p, NULL, &q, why, sizeof(why));

	pprof_profile_free(p);
	CHECK_INT(err, ==, want);
	CHECK(q == NULL);
	if (!strstr(why, reason)) {
		fprintf(stderr, "reason '%s' lacks '%s'\n", why, reason);
		return 1;
	}
	return 0;
}

/* ---- pprof: decoding and lookups ----------------------------------------- */

static int test_wire__pprof_build_encode_decode(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	const pprof_message_t *m;
	const pprof_mapping_t *mp;
	const pprof_location_t *l;
	char why[256] = "";

	CHECK(p);
	CHECK_INT(reencode(p, NULL, &q, why, sizeof(why)), ==, 0);
	m = pprof_message(q);
	CHECK_INT(m->n_sample, ==, 2);
	CHECK_INT(m->n_sample_type, ==, 2);
	CHECK_STR(pprof_string(q, m->sample_type[1]->type), "cpu");
	CHECK_STR(pprof_string(q, m->sample_type[1]->unit), "nanoseconds");
	CHECK_INT(m->period, ==, 10000000);
	CHECK_INT(m->sample[0]->n_location_id, ==, 2);
	CHECK_INT(m->sample[0]->location_id[1], ==, 2);
	CHECK_INT(m->sample[1]->value[1], ==, 20000000);
	mp = pprof_mapping_by_id(q, 1);
	CHECK(mp);
	CHECK_INT(mp->memory_limit, ==, 0x500000);
	CHECK_STR(pprof_string(q, mp->build_id), "abcd");
	CHECK_STR(pprof_string(q, mp->filename), "/bin/app");
	l = pprof_location_by_id(q, 3);
	CHECK(l);
	CHECK_INT(l->address, ==, 0x403000);
	CHECK_INT(l->mapping_id, ==, 1);
	CHECK(pprof_location_by_id(q, 0) == NULL);
	CHECK(pprof_location_by_id(q, 4) == NULL);
	CHECK(pprof_string(q, -1) == NULL);
	CHECK_STR(pprof_string(q, 0), "");
	pprof_profile_free(p);
	pprof_profile_free(q);
	return 0;
}

static int test_wire__pprof_decode_gzip_and_zstd(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL, *z = NULL;
	struct ember_buf raw, gz;
	size_t zcap;
	void *zbuf;
	char why[256];

	CHECK(p);
	CHECK_INT(encode(p, false, &raw), ==, 0);
	CHECK_INT(encode(p, true, &gz), ==, 0);
	CHECK_INT((uint8_t)gz.data[0], ==, 0x1f);
	CHECK_INT((uint8_t)gz.data[1], ==, 0x8b);
	CHECK_INT(pprof_decode(gz.data, gz.len, NULL, &q, why, sizeof(why)), ==, 0);
	CHECK_INT(pprof_message(q)->n_location, ==, 3);
	zcap = ZSTD_compressBound(raw.len);
	zbuf = malloc(zcap);
	CHECK(zbuf);
	zcap = ZSTD_compress(zbuf, zcap, raw.data, raw.len, 3);
	CHECK(!ZSTD_isError(zcap));
	CHECK_INT(pprof_decode(zbuf, zcap, NULL, &z, why, sizeof(why)), ==, 0);
	CHECK_INT(pprof_message(z)->n_sample, ==, 2);
	CHECK_INT(pprof_location_by_id(z, 2)->address, ==, 0x402000);
	free(zbuf);
	ember_buf_release(&raw);
	ember_buf_release(&gz);
	pprof_profile_free(p);
	pprof_profile_free(q);
	pprof_profile_free(z);
	return 0;
}

static int test_wire__pprof_lookup_sparse_ids(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	pprof_message_t *m;
	char why[256];

	CHECK(p);
	m = mut(p);
	/* ids 30, 10, 20 out of order; samples follow. */
	m->location[0]->id = 30;
	m->location[1]->id = 10;
	m->location[2]->id = 20;
	m->sample[0]->location_id[0] = 30;
	m->sample[0]->location_id[1] = 10;
	m->sample[1]->location_id[0] = 20;
	CHECK_INT(reencode(p, NULL, &q, why, sizeof(why)), ==, 0);
	CHECK_INT(pprof_location_by_id(q, 30)->address, ==, 0x401000);
	CHECK_INT(pprof_location_by_id(q, 10)->address, ==, 0x402000);
	CHECK_INT(pprof_location_by_id(q, 20)->address, ==, 0x403000);
	CHECK(pprof_location_by_id(q, 1) == NULL);
	CHECK(pprof_location_by_id(q, 15) == NULL);
	CHECK(pprof_location_by_id(q, 31) == NULL);
	pprof_profile_free(p);
	pprof_profile_free(q);
	return 0;
}

/* ---- pprof: filling in results --------------------------------------------- */

static int test_wire__pprof_add_string_deduplicates(void)
{
	struct pprof_profile *p = small_profile();
	int64_t a, b, c, e;
	size_t n;

	CHECK(p);
	n = pprof_message(p)->n_string_table;
	CHECK_INT(pprof_add_string(p, "cpu", &a), ==, 0);
	CHECK_STR(pprof_string(p, a), "cpu");
	CHECK_INT(pprof_message(p)->n_string_table, ==, n);
	CHECK_INT(pprof_add_string(p, "fresh", &b), ==, 0);
	CHECK_INT(b, ==, (int64_t)n);
	CHECK_INT(pprof_add_string(p, "fresh", &c), ==, 0);
	CHECK_INT(c, ==, b);
	CHECK_INT(pprof_add_string(p, "", &e), ==, 0);
	CHECK_INT(e, ==, 0);
	CHECK_INT(pprof_message(p)->n_string_table, ==, n + 1);
	pprof_profile_free(p);
	return 0;
}

static int test_wire__pprof_add_function_deduplicates(void)
{
	struct pprof_profile *p = small_profile();
	struct pprof_function_desc f = { "ns::f()", "_ZN2ns1fEv", "/src/f.cc", 12 };
	uint64_t a, b, c;

	CHECK(p);
	CHECK_INT(pprof_add_function(p, &f, &a), ==, 0);
	CHECK_INT(a, ==, 1);
	CHECK_INT(pprof_add_function(p, &f, &b), ==, 0);
	CHECK_INT(b, ==, a);
	f.start_line = 13;
	CHECK_INT(pprof_add_function(p, &f, &c), ==, 0);
	CHECK_INT(c, ==, 2);
	CHECK_STR(pprof_string(p, pprof_function_by_id(p, a)->system_name), "_ZN2ns1fEv");
	CHECK_INT(pprof_function_by_id(p, c)->start_line, ==, 13);
	CHECK_INT(pprof_message(p)->n_function, ==, 2);
	pprof_profile_free(p);
	return 0;
}

static int test_wire__pprof_set_lines_replaces(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	struct pprof_function_desc inl = { "inlined", NULL, "/src/a.c", 3 };
	struct pprof_function_desc caller = { "caller", NULL, "/src/a.c", 20 };
	struct pprof_line lines[2] = { { 0, 5, 7 }, { 0, 25, 0 } };
	const pprof_location_t *l;
	char why[256];

	CHECK(p);
	CHECK_INT(pprof_add_function(p, &inl, &lines[0].function_id), ==, 0);
	CHECK_INT(pprof_add_function(p, &caller, &lines[1].function_id), ==, 0);
	CHECK_INT(pprof_location_set_lines(p, 2, lines, 1), ==, 0);
	CHECK_INT(pprof_location_set_lines(p, 2, lines, 2), ==, 0); /* replaces */
	CHECK_INT(pprof_location_set_lines(p, 9, lines, 2), ==, -ENOENT);
	lines[1].function_id = 77;
	CHECK_INT(pprof_location_set_lines(p, 2, lines, 2), ==, -ENOENT);
	CHECK_INT(pprof_mapping_set_flags(p, 1, PPROF_MAPPING_HAS_FUNCTIONS |
					  PPROF_MAPPING_HAS_INLINE_FRAMES), ==, 0);
	CHECK_INT(pprof_mapping_set_flags(p, 2, 0), ==, -ENOENT);
	CHECK_INT(reencode(p, NULL, &q, why, sizeof(why)), ==, 0);
	l = pprof_location_by_id(q, 2);
	CHECK_INT(l->n_line, ==, 2);
	CHECK_INT(l->line[0]->line, ==, 5);
	CHECK_STR(pprof_string(q, pprof_function_by_id(q, l->line[0]->function_id)->name), "inlined");
	CHECK_STR(pprof_string(q, pprof_function_by_id(q, l->line[1]->function_id)->name), "caller");
#if PPROF_LINE_HAS_COLUMN
	CHECK_INT(l->line[0]->column, ==, 7);
#endif
	CHECK(pprof_mapping_by_id(q, 1)->has_functions);
	CHECK(pprof_mapping_by_id(q, 1)->has_inline_frames);
	CHECK(!pprof_mapping_by_id(q, 1)->has_filenames);
	CHECK_INT(pprof_location_set_lines(q, 2, NULL, 0), ==, 0);
	CHECK_INT(pprof_location_by_id(q, 2)->n_line, ==, 0);
	pprof_profile_free(p);
	pprof_profile_free(q);
	return 0;
}

static int test_wire__pprof_build_rejects_bad_arguments(void)
{
	struct pprof_profile *p = small_profile();
	struct pprof_mapping_desc bad = { .start = 2, .limit = 1 };
	uint64_t id = 99, locs[1] = { 42 };
	int64_t vals[2] = { 1, 2 };

	CHECK(p);
	CHECK_INT(pprof_add_location(p, 5, 0x1000, &id), ==, -ENOENT);
	CHECK_INT(id, ==, 99);
	CHECK_INT(pprof_add_mapping(p, &bad, &id), ==, -EINVAL);
	CHECK_INT(pprof_add_sample(p, locs, 1, vals, 2), ==, -ENOENT);
	locs[0] = 1;
	CHECK_INT(pprof_add_sample(p, locs, 1, vals, 1), ==, -EINVAL);
	CHECK_INT(pprof_add_sample_type(p, "late", "count"), ==, -EBUSY);
	pprof_profile_free(p);
	return 0;
}

static int test_wire__pprof_sample_labels_and_time_roundtrip(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	struct pprof_sample_label labels[2] = {
		{ .key = "pprof::base", .str = "true" },
		{ .key = "bytes", .num = 512, .num_unit = "bytes" },
	};
	uint64_t locs[1] = { 1 };
	int64_t vals[2] = { -3, -30000000 };
	const Perftools__Profiles__Sample *s;

	CHECK(p);
	CHECK_INT(pprof_add_sample_labeled(p, locs, 1, vals, 2, labels, 2), ==, 0);
	pprof_set_time(p, 1700000000000000000, 10000000000);
	CHECK_INT(reencode(p, NULL, &q, NULL, 0), ==, 0);
	CHECK_INT(pprof_message(q)->n_sample, ==, 3);
	CHECK_INT(pprof_message(q)->time_nanos, ==, 1700000000000000000);
	CHECK_INT(pprof_message(q)->duration_nanos, ==, 10000000000);
	s = pprof_message(q)->sample[2];
	CHECK_INT(s->n_label, ==, 2);
	CHECK_STR(pprof_string(q, s->label[0]->key), "pprof::base");
	CHECK_STR(pprof_string(q, s->label[0]->str), "true");
	CHECK_STR(pprof_string(q, s->label[1]->key), "bytes");
	CHECK_INT(s->label[1]->num, ==, 512);
	CHECK_STR(pprof_string(q, s->label[1]->num_unit), "bytes");
	CHECK_INT(s->value[1], ==, -30000000);
	CHECK_INT(pprof_message(q)->sample[0]->n_label, ==, 0);
	pprof_profile_free(p);
	pprof_profile_free(q);
	return 0;
}

static int test_wire__pprof_encode_over_cap_leaves_buffer(void)
{
	struct pprof_profile *p = small_profile();
	struct ember_buf b;

	CHECK(p);
	ember_buf_init(&b, 40);
	CHECK_INT(ember_buf_append(&b, "keep", 4), ==, 0);
	CHECK_INT(pprof_encode(p, false, &b), ==, -E2BIG);
	CHECK_INT(b.len, ==, 4);
	CHECK_INT(pprof_encode(p, true, &b), ==, -E2BIG);
	CHECK_INT(b.len, ==, 4);
	CHECK_STR(b.data, "keep");
	ember_buf_release(&b);
	pprof_profile_free(p);
	return 0;
}

/* ---- pprof: rejections ---------------------------------------------------- */

static int test_wire__pprof_rejects_truncated_protobuf(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	struct ember_buf b;
	char why[256];
	int err;

	CHECK(p);
	CHECK_INT(encode(p, false, &b), ==, 0);
	err = pprof_decode(b.data, b.len - 3, NULL, &q, why, sizeof(why));
	CHECK_INT(err, ==, -PPROF_ERR_PROTOBUF);
	CHECK(q == NULL);
	CHECK(strstr(why, "truncated or malformed protobuf"));
	CHECK(strstr(pprof_strerror(err), "protobuf"));
	ember_buf_release(&b);
	pprof_profile_free(p);
	return 0;
}

static int test_wire__pprof_rejects_garbage(void)
{
	static const char text[] = "this is not a profile at all, just text\n";
	struct pprof_profile *q = NULL;
	char why[256];

	CHECK_INT(pprof_decode(text, sizeof(text) - 1, NULL, &q, why, sizeof(why)), ==,
		  -PPROF_ERR_PROTOBUF);
	CHECK(q == NULL);
	/* Empty input is an empty message: no string table. */
	CHECK_INT(pprof_decode("", 0, NULL, &q, why, sizeof(why)), ==, -PPROF_ERR_INVALID);
	CHECK(strstr(why, "string_table is empty"));
	return 0;
}

static int test_wire__pprof_rejects_bad_string_index(void)
{
	struct pprof_profile *p = small_profile();
	struct pprof_function_desc f = { "f", NULL, NULL, 0 };
	uint64_t id;

	CHECK(p);
	CHECK_INT(pprof_add_function(p, &f, &id), ==, 0);
	mut(p)->function[0]->name = 99;
	return expect_reject(p, -PPROF_ERR_INVALID, "function 1: name string index 99 out of range");
}

static int test_wire__pprof_rejects_negative_string_index(void)
{
	struct pprof_profile *p = small_profile();

	CHECK(p);
	mut(p)->mapping[0]->build_id = -1;
	return expect_reject(p, -PPROF_ERR_INVALID, "mapping 1: build_id string index -1");
}

static int test_wire__pprof_rejects_nonempty_first_string(void)
{
	struct pprof_profile *p = small_profile();

	CHECK(p);
	mut(p)->string_table[0][0] = '\0';
	free(mut(p)->string_table[0]);
	mut(p)->string_table[0] = strdup("x");
	return expect_reject(p, -PPROF_ERR_INVALID, "string_table[0] is not the empty string");
}

static int test_wire__pprof_rejects_dangling_mapping(void)
{
	struct pprof_profile *p = small_profile();

	CHECK(p);
	mut(p)->location[1]->mapping_id = 7;
	return expect_reject(p, -PPROF_ERR_INVALID, "location 2: mapping_id 7 does not exist");
}

static int test_wire__pprof_rejects_dangling_function(void)
{
	struct pprof_profile *p = small_profile();
	struct pprof_function_desc f = { "f", NULL, NULL, 0 };
	struct pprof_line ln = { 0, 1, 0 };

	CHECK(p);
	CHECK_INT(pprof_add_function(p, &f, &ln.function_id), ==, 0);
	CHECK_INT(pprof_location_set_lines(p, 3, &ln, 1), ==, 0);
	mut(p)->location[2]->line[0]->function_id = 9;
	return expect_reject(p, -PPROF_ERR_INVALID,
			     "location 3: line[0]: function_id 9 does not exist");
}

static int test_wire__pprof_rejects_dangling_sample_location(void)
{
	struct pprof_profile *p = small_profile();

	CHECK(p);
	mut(p)->sample[1]->location_id[0] = 12;
	return expect_reject(p, -PPROF_ERR_INVALID, "sample[1]: location_id 12 does not exist");
}

static int test_wire__pprof_rejects_wrong_value_count(void)
{
	struct pprof_profile *p = small_profile();

	CHECK(p);
	mut(p)->sample[0]->n_value = 1;
	return expect_reject(p, -PPROF_ERR_INVALID, "sample[0]: 1 values for 2 sample types");
}

static int test_wire__pprof_rejects_duplicate_and_zero_ids(void)
{
	struct pprof_profile *p = small_profile();

	CHECK(p);
	mut(p)->location[2]->id = 1;
	mut(p)->sample[1]->location_id[0] = 1;
	if (expect_reject(p, -PPROF_ERR_INVALID, "location id 1 is used twice"))
		return 1;
	p = small_profile();
	CHECK(p);
	mut(p)->mapping[0]->id = 0;
	for (int i = 0; i < 3; i++)
		mut(p)->location[i]->mapping_id = 0;
	return expect_reject(p, -PPROF_ERR_INVALID, "mapping[0]: id is 0");
}

static int test_wire__pprof_rejects_mapping_start_above_limit(void)
{
	struct pprof_profile *p = small_profile();

	CHECK(p);
	mut(p)->mapping[0]->memory_start = 0x600000;
	return expect_reject(p, -PPROF_ERR_INVALID,
			     "mapping 1: memory_start 0x600000 is above memory_limit 0x500000");
}

static int test_wire__pprof_rejects_counts_over_limits(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	struct pprof_limits lim = { .sz = sizeof(lim), .max_samples = 1 };
	struct pprof_limits mem = { .sz = sizeof(mem), .max_memory_bytes = 256 };
	char why[256];

	CHECK(p);
	CHECK_INT(reencode(p, &lim, &q, why, sizeof(why)), ==, -E2BIG);
	CHECK(strstr(why, "2 samples, more than the limit of 1"));
	lim = (struct pprof_limits){ .sz = sizeof(lim), .max_locations = 2 };
	CHECK_INT(reencode(p, &lim, &q, why, sizeof(why)), ==, -E2BIG);
	CHECK(strstr(why, "3 locations"));
	CHECK_INT(reencode(p, &mem, &q, why, sizeof(why)), ==, -E2BIG);
	CHECK(strstr(why, "more than 256 bytes of memory"));
	/* sz smaller than the field: the field keeps its default. */
	lim = (struct pprof_limits){ .sz = offsetof(struct pprof_limits, max_samples),
				     .max_samples = 1 };
	CHECK_INT(reencode(p, &lim, &q, why, sizeof(why)), ==, 0);
	CHECK(q);
	pprof_profile_free(q);
	pprof_profile_free(p);
	return 0;
}

/* gzip of n zero bytes, streamed (the input is never held whole). */
static int gzip_zeros(size_t n, struct ember_buf *out)
{
	static uint8_t zeros[64 * 1024];
	uint8_t chunk[64 * 1024];
	z_stream z;
	int err = 0;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	while (!err && n) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		n -= k;
		z.next_in = zeros;
		z.avail_in = (uInt)k;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			deflate(&z, n ? Z_NO_FLUSH : Z_FINISH);
			err = ember_buf_append(out, chunk, sizeof(chunk) - z.avail_out);
		} while (!err && z.avail_out == 0);
	}
	deflateEnd(&z);
	return err;
}

static int test_wire__pprof_rejects_gzip_bomb(void)
{
	struct pprof_limits lim = { .sz = sizeof(lim), .max_input_bytes = 4 * MIB };
	struct pprof_profile *q = NULL;
	struct ember_buf bomb;
	char why[256];

	ember_buf_init(&bomb, 16 * MIB);
	CHECK_INT(gzip_zeros(256 * MIB, &bomb), ==, 0);
	CHECK(bomb.len < 512 * 1024); /* ~1000:1 */
	CHECK_INT(pprof_decode(bomb.data, bomb.len, &lim, &q, why, sizeof(why)), ==, -E2BIG);
	CHECK(q == NULL);
	CHECK(strstr(why, "gzip: decompressed profile larger than 4194304 bytes"));
	ember_buf_release(&bomb);
	return 0;
}

static int test_wire__pprof_rejects_zstd_bomb(void)
{
	struct pprof_limits lim = { .sz = sizeof(lim), .max_input_bytes = 4 * MIB };
	size_t n = 64 * MIB, zn = ZSTD_compressBound(n);
	struct pprof_profile *q = NULL;
	void *zeros = calloc(1, n), *z = malloc(zn);
	char why[256];

	CHECK(zeros && z);
	zn = ZSTD_compress(z, zn, zeros, n, 1);
	CHECK(!ZSTD_isError(zn));
	CHECK(zn < 64 * 1024);
	CHECK_INT(pprof_decode(z, zn, &lim, &q, why, sizeof(why)), ==, -E2BIG);
	CHECK(q == NULL);
	/* The frame's window (or its content) is over the cap: either way 413. */
	CHECK(strstr(why, "zstd: decompressed profile larger than 4194304 bytes") ||
	      strstr(why, "Frame requires too much memory"));
	free(zeros);
	free(z);
	return 0;
}

static int test_wire__pprof_rejects_corrupt_compression(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	struct ember_buf gz;
	char why[256];

	CHECK(p);
	CHECK_INT(encode(p, true, &gz), ==, 0);
	/* truncated gzip */
	CHECK_INT(pprof_decode(gz.data, gz.len - 6, NULL, &q, why, sizeof(why)), ==,
		  -PPROF_ERR_COMPRESSION);
	CHECK(strstr(why, "gzip: truncated stream"));
	/* trailing garbage after the member */
	CHECK_INT(ember_buf_append(&gz, "junk", 4), ==, 0);
	CHECK_INT(pprof_decode(gz.data, gz.len, NULL, &q, why, sizeof(why)), ==,
		  -PPROF_ERR_COMPRESSION);
	CHECK(strstr(why, "4 bytes of garbage after the stream"));
	/* a corrupt deflate body */
	gz.len -= 4;
	memset(gz.data + 12, 0xff, 8);
	CHECK_INT(pprof_decode(gz.data, gz.len, NULL, &q, why, sizeof(why)), ==,
		  -PPROF_ERR_COMPRESSION);
	CHECK(strstr(why, "gzip: corrupt stream"));
	/* a zstd magic and nothing sensible after it */
	CHECK_INT(pprof_decode("\x28\xb5\x2f\xfd\x00\x01\x02", 7, NULL, &q, why, sizeof(why)), ==,
		  -PPROF_ERR_COMPRESSION);
	CHECK(strstr(why, "zstd:"));
	CHECK(q == NULL);
	ember_buf_release(&gz);
	pprof_profile_free(p);
	return 0;
}

static int test_wire__pprof_decode_two_gzip_members(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	struct ember_buf raw, two;
	char why[256];
	size_t half;

	CHECK(p);
	CHECK_INT(encode(p, false, &raw), ==, 0);
	half = raw.len / 2;
	ember_buf_init(&two, MIB);
	/* Each half gzipped on its own, one after the other (gzip -c a b). */
	for (int i = 0; i < 2; i++) {
		uLongf n = compressBound(raw.len) + 32;
		uint8_t *buf = malloc(n);
		z_stream z;

		CHECK(buf);
		memset(&z, 0, sizeof(z));
		CHECK_INT(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), ==, Z_OK);
		z.next_in = (Bytef *)raw.data + (i ? half : 0);
		z.avail_in = (uInt)(i ? raw.len - half : half);
		z.next_out = buf;
		z.avail_out = (uInt)n;
		CHECK_INT(deflate(&z, Z_FINISH), ==, Z_STREAM_END);
		CHECK_INT(ember_buf_append(&two, buf, n - z.avail_out), ==, 0);
		deflateEnd(&z);
		free(buf);
	}
	CHECK_INT(pprof_decode(two.data, two.len, NULL, &q, why, sizeof(why)), ==, 0);
	CHECK_INT(pprof_message(q)->n_sample, ==, 2);
	ember_buf_release(&raw);
	ember_buf_release(&two);
	pprof_profile_free(p);
	pprof_profile_free(q);
	return 0;
}

/* Unknown fields survive a round trip; field number 0 (which protobuf-c
 * reads in a two-byte tag but cannot write) is rejected. */
static int test_wire__pprof_unknown_fields(void)
{
	struct pprof_profile *p = small_profile(), *q = NULL;
	struct ember_buf b, again;
	char why[256];

	CHECK(p);
	CHECK_INT(encode(p, false, &b), ==, 0);
	CHECK_INT(ember_buf_append(&b, "\xa0\x06\x05", 3), ==, 0); /* field 100 = 5 */
	CHECK_INT(pprof_decode(b.data, b.len, NULL, &q, why, sizeof(why)), ==, 0);
	CHECK_INT(encode(q, false, &again), ==, 0);
	CHECK(memmem(again.data, again.len, "\xa0\x06\x05", 3) != NULL);
	pprof_profile_free(q);
	q = NULL;
	b.len -= 3;
	CHECK_INT(ember_buf_append(&b, "\x80\x00\x00", 3), ==, 0); /* field 0 = 0 */
	CHECK_INT(pprof_decode(b.data, b.len, NULL, &q, why, sizeof(why)), ==, -PPROF_ERR_PROTOBUF);
	CHECK(strstr(why, "profile: field number 0"));
	CHECK(q == NULL);
	ember_buf_release(&b);
	ember_buf_release(&again);
	pprof_profile_free(p);
	return 0;
}

/* ---- JSON request ----------------------------------------------------------- */

static int parse(const char *body, struct symjson_request **r, char *why, size_t n)
{
	return symjson_request_parse(body, strlen(body), NULL, r, why, n);
}

static int test_wire__json_request_values(void)
{
	const char *body =
		"{\"modules\": [{\"build_id\": \"2598ABcd\", \"addresses\": [\"0x1139\", 4416,"
		" {\"addr\": \"0XfFfFfFfFfFfFfFfF\", \"kind\": \"file_offset\"}, {\"addr\": 0}]},"
		" {\"build_id\": \"00ff\", \"kind\": \"file_offset\", \"addresses\": ["
		"  \"0x0000000000000000000000001\", {\"addr\": 7, \"kind\": \"vaddr\"}]},"
		" {\"build_id\": \"aa\", \"addresses\": []}],"
		" \"options\": {\"inlines\": false}}";
	struct symjson_request *r = NULL;
	char why[256] = "";

	CHECK_INT(parse(body, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(r->nmodules, ==, 3);
	CHECK_INT(r->naddrs, ==, 6);
	CHECK(!r->inlines);
	CHECK(r->demangle);
	CHECK_STR(r->modules[0].build_id, "2598abcd");
	CHECK_INT(r->modules[0].naddrs, ==, 4);
	CHECK_INT(r->modules[0].addrs[0].addr, ==, 0x1139);
	CHECK_INT(r->modules[0].addrs[0].kind, ==, SYMJSON_VADDR);
	CHECK_INT(r->modules[0].addrs[1].addr, ==, 4416);
	CHECK(r->modules[0].addrs[2].addr == UINT64_MAX);
	CHECK_INT(r->modules[0].addrs[2].kind, ==, SYMJSON_FILE_OFFSET);
	CHECK_INT(r->modules[0].addrs[3].addr, ==, 0);
	CHECK_STR(r->modules[1].build_id, "00ff");
	CHECK_INT(r->modules[1].addrs[0].addr, ==, 1);
	CHECK_INT(r->modules[1].addrs[0].kind, ==, SYMJSON_FILE_OFFSET);
	CHECK_INT(r->modules[1].addrs[1].kind, ==, SYMJSON_VADDR);
	CHECK_INT(r->modules[2].naddrs, ==, 0);
	CHECK(r->modules[1].addrs == r->addrs + 4);
	symjson_request_free(r);
	/* Integers up to 2^64 - 1; a module's kind may follow its addresses. */
	CHECK_INT(parse("{\"modules\": [{\"addresses\": [18446744073709551615, {\"addr\": 1,"
			" \"kind\": \"vaddr\"}], \"kind\": \"file_offset\", \"build_id\": \"ab\"}]}",
			&r, why, sizeof(why)), ==, 0);
	CHECK(r->addrs[0].addr == UINT64_MAX);
	CHECK_INT(r->addrs[0].kind, ==, SYMJSON_FILE_OFFSET);
	CHECK_INT(r->addrs[1].kind, ==, SYMJSON_VADDR);
	symjson_request_free(r);
	return 0;
}

/* A body fed in pieces as it arrives, split anywhere (inside tokens
 * too), parses as it does whole; every allocation is taken from the
 * request's account, and a request past its share fails with -E2BIG
 * before its memory is used. */
static int test_wire__json_request_streamed_under_a_share(void)
{
	struct ember_mem_budget budget;
	struct ember_mem_account acct;
	struct symjson_parser *p;
	struct symjson_request *r = NULL;
	struct ember_buf body;
	uint64_t addrs[3000];

	for (size_t i = 0; i < 3000; i++)
		addrs[i] = 0x1000 + 7 * i;
	ember_buf_init(&body, 1 << 20);
	CHECK_INT(symjson_request_write(&body, "00ffab", SYMJSON_VADDR, addrs, 3000), ==, 0);
	ember_mem_budget_init(&budget, 1 << 20);
	ember_mem_account_init(&acct, &budget, 1 << 20);
	CHECK_INT(symjson_parser_new(NULL, &acct, &p), ==, 0);
	for (size_t at = 0; at < body.len; at += 7)
		CHECK_INT(symjson_parser_feed(p, body.data + at, body.len - at < 7 ? body.len - at
										      : 7), ==, 0);
	CHECK_INT(symjson_parser_finish(p, &r), ==, 0);
	symjson_parser_free(p);
	CHECK_INT(r->naddrs, ==, 3000);
	CHECK(r->modules[0].addrs[2999].addr == addrs[2999]);
	CHECK(acct.used >= 3000 * sizeof(struct symjson_address));
	CHECK_INT(ember_mem_budget_used(&budget), ==, acct.used);
	symjson_request_free(r);
	ember_mem_account_release(&acct);
	/* The same under a share of 16 KiB: refused, with the reason. */
	ember_mem_account_init(&acct, &budget, 16 << 10);
	CHECK_INT(symjson_parser_new(NULL, &acct, &p), ==, 0);
	CHECK_INT(symjson_parser_feed(p, body.data, body.len), ==, -E2BIG);
	CHECK(strstr(symjson_parser_why(p), "memory"));
	CHECK_INT(symjson_parser_finish(p, &r), ==, -E2BIG);
	symjson_parser_free(p);
	ember_mem_account_release(&acct);
	CHECK_INT(ember_mem_budget_used(&budget), ==, 0);
	ember_buf_release(&body);
	return 0;
}

static int test_wire__json_request_rejects_with_path(void)
{
	static const struct {
		const char *body, *reason;
	} cases[] = {
		{ "{\"modules\": [", "request: not JSON: line 1" },
		{ "[1]", "request: not a JSON object" },
		{ "{}", "modules: missing" },
		{ "{\"modules\": {}}", "modules: not an array" },
		{ "{\"modules\": [], \"extra\": 1}", "request: unknown key 'extra'" },
		{ "{\"modules\": [], \"modules\": []}", "duplicate object key" },
		{ "{\"modules\": [7]}", "modules[0]: not an object" },
		{ "{\"modules\": [{\"addresses\": []}]}", "modules[0].build_id: missing" },
		{ "{\"modules\": [{\"build_id\": \"abc\", \"addresses\": []}]}",
		  "modules[0].build_id: not a build ID" },
		{ "{\"modules\": [{\"build_id\": \"zz\", \"addresses\": []}]}",
		  "modules[0].build_id: not a build ID" },
		{ "{\"modules\": [{\"build_id\": 12, \"addresses\": []}]}",
		  "modules[0].build_id: not a build ID" },
		{ "{\"modules\": [{\"build_id\": \"ab\"}]}", "modules[0].addresses: missing" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": 1}]}",
		  "modules[0].addresses: not an array" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [], \"kind\": \"x\"}]}",
		  "modules[0].kind: not \"vaddr\" or \"file_offset\"" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"adresses\": []}]}",
		  "modules[0]: unknown key 'adresses'" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [1]},"
		  " {\"build_id\": \"ab\", \"addresses\": []},"
		  " {\"build_id\": \"ab\", \"addresses\": [1, 2, 3, 4, 5, true]}]}",
		  "modules[2].addresses[5]: not an address" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [-1]}]}",
		  "modules[0].addresses[0]: negative address" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [1.5]}]}",
		  "modules[0].addresses[0]: address is not an integer" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [\"0x10000000000000000\"]}]}",
		  "modules[0].addresses[0]: address larger than 64 bits" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [\"0x\"]}]}",
		  "modules[0].addresses[0]: not an address" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [\"1139\"]}]}",
		  "modules[0].addresses[0]: not an address" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [\"0x1g\"]}]}",
		  "modules[0].addresses[0]: not an address" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [18446744073709551616]}]}",
		  "modules[0].addresses[0]: address larger than 64 bits" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [1]}], \"modules\": []}",
		  "request: duplicate object key 'modules'" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [[1]]}]}",
		  "modules[0].addresses[0]: not an address" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [null]}]}",
		  "modules[0].addresses[0]: not an address" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [1]}]} x",
		  "request: not JSON: line 1, column" },
		{ "{\"modules\": [{\"build_id\": \"ab\",\n \"addresses\": [1,]}]}",
		  "request: not JSON: line 2" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [{\"kind\": \"vaddr\"}]}]}",
		  "modules[0].addresses[0].addr: missing" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [{\"addr\": 1, \"kind\": 2}]}]}",
		  "modules[0].addresses[0].kind: not \"vaddr\"" },
		{ "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [{\"addr\": 1, \"x\": 2}]}]}",
		  "modules[0].addresses[0]: unknown key 'x'" },
		{ "{\"modules\": [], \"options\": {\"inlines\": 1}}", "options.inlines: not a boolean" },
		{ "{\"modules\": [], \"options\": {\"demangle\": \"yes\"}}",
		  "options.demangle: not a boolean" },
		{ "{\"modules\": [], \"options\": {\"inline\": true}}", "options: unknown key 'inline'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct symjson_request *r = NULL;
		char why[256] = "";
		int err = parse(cases[i].body, &r, why, sizeof(why));

		if (err != -EINVAL || r || !strstr(why, cases[i].reason)) {
			fprintf(stderr, "case %zu: %s\n  err %d, why '%s', want '%s'\n", i,
				cases[i].body, err, why, cases[i].reason);
			return 1;
		}
	}
	return 0;
}

static int test_wire__json_request_build_id_lengths(void)
{
	char body[512], hex[140];
	struct symjson_request *r = NULL;
	char why[256];

	memset(hex, 'A', 128);
	hex[128] = '\0';
	snprintf(body, sizeof(body), "{\"modules\": [{\"build_id\": \"%s\", \"addresses\": [1]}]}", hex);
	CHECK_INT(parse(body, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(strlen(r->modules[0].build_id), ==, 128);
	CHECK_INT(r->modules[0].build_id[127], ==, 'a');
	symjson_request_free(r);
	r = NULL;
	memset(hex, 'a', 130);
	hex[130] = '\0';
	snprintf(body, sizeof(body), "{\"modules\": [{\"build_id\": \"%s\", \"addresses\": [1]}]}", hex);
	CHECK_INT(parse(body, &r, why, sizeof(why)), ==, -EINVAL);
	CHECK(strstr(why, "modules[0].build_id: not a build ID"));
	/* An embedded NUL is not hex, not the end of the string. */
	CHECK_INT(parse("{\"modules\": [{\"build_id\": \"ab\\u0000cd\", \"addresses\": [1]}]}",
			&r, why, sizeof(why)), ==, -EINVAL);
	CHECK(r == NULL);
	return 0;
}

static int test_wire__json_request_caps(void)
{
	struct symjson_limits mods = { .sz = sizeof(mods), .max_modules = 2 };
	struct symjson_limits addrs = { .sz = sizeof(addrs), .max_addresses = 3 };
	struct symjson_limits body = { .sz = sizeof(body), .max_body_bytes = 16 };
	const char *three = "{\"modules\": [{\"build_id\": \"ab\", \"addresses\": [1, 2]},"
			    " {\"build_id\": \"ab\", \"addresses\": [3]},"
			    " {\"build_id\": \"ab\", \"addresses\": [4]}]}";
	struct symjson_request *r = NULL;
	char why[256];

	CHECK_INT(symjson_request_parse(three, strlen(three), &mods, &r, why, sizeof(why)), ==, -E2BIG);
	CHECK(strstr(why, "modules: 3 modules, more than the limit of 2"));
	CHECK_INT(symjson_request_parse(three, strlen(three), &addrs, &r, why, sizeof(why)), ==, -E2BIG);
	CHECK(strstr(why, "modules: 4 addresses in all, more than the limit of 3"));
	CHECK_INT(symjson_request_parse(three, strlen(three), &body, &r, why, sizeof(why)), ==, -E2BIG);
	CHECK(strstr(why, "more than the limit of 16"));
	CHECK(r == NULL);
	addrs.max_addresses = 4;
	CHECK_INT(symjson_request_parse(three, strlen(three), &addrs, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(r->naddrs, ==, 4);
	symjson_request_free(r);
	return 0;
}

/* ---- JSON answer ------------------------------------------------------------- */

static const char tricky[] = "say \"hi\" \\ back\x01\x1f\t\n é ✓ 😀 end";

static int write_answer(struct ember_buf *b)
{
	struct symjson_frame frames[2] = {
		{ .function = tricky, .linkage_name = "_Z1fv", .file = "/src/a \"b\".c",
		  .line = 12, .column = 3, .inlined = true },
		{ .function = "main", .file = "/src/m.c", .line = 40 },
	};
	struct symjson_result res[3] = {
		{ .address = 0x1139, .frames = frames, .nframes = 2,
		  .source = SYMJSON_SOURCE_DWARF },
		{ .address = UINT64_MAX, .kind = SYMJSON_FILE_OFFSET,
		  .error = SYMJSON_ERR_NO_SYMBOLS_AT_ADDRESS },
		{ .address = 0, .frames = &frames[1], .nframes = 1,
		  .source = SYMJSON_SOURCE_SYMTAB },
	};
	struct symjson_writer w;

	symjson_writer_init(&w, b);
	symjson_answer_begin(&w);
	symjson_module_begin(&w, "2598abcd");
	for (int i = 0; i < 3; i++)
		symjson_write_result(&w, &res[i]);
	symjson_module_end(&w);
	symjson_module_begin(&w, "ffff");
	symjson_module_end(&w);
	return symjson_answer_end(&w);
}

static int test_wire__json_answer_parses_back(void)
{
	struct ember_buf b;
	json_error_t jerr;
	json_t *root, *m0, *r0, *f0, *r1;

	ember_buf_init(&b, MIB);
	CHECK_INT(write_answer(&b), ==, 0);
	root = json_loadb(b.data, b.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		fprintf(stderr, "%s\n%s\n", jerr.text, b.data);
	CHECK(root);
	CHECK_INT(json_array_size(json_object_get(root, "modules")), ==, 2);
	m0 = json_array_get(json_object_get(root, "modules"), 0);
	CHECK_STR(json_string_value(json_object_get(m0, "build_id")), "2598abcd");
	CHECK_INT(json_integer_value(json_object_get(m0, "resolved")), ==, 2);
	CHECK_INT(json_integer_value(json_object_get(m0, "unresolved")), ==, 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(m0, "by_source"), "dwarf")), ==, 1);
	CHECK_INT(json_integer_value(json_object_get(json_object_get(m0, "by_source"), "symtab")), ==, 1);
	CHECK_INT(json_object_size(json_object_get(m0, "by_source")), ==, 2);
	r0 = json_array_get(json_object_get(m0, "results"), 0);
	CHECK_STR(json_string_value(json_object_get(r0, "address")), "0x1139");
	CHECK_STR(json_string_value(json_object_get(r0, "source")), "dwarf");
	CHECK(json_is_null(json_object_get(r0, "error")));
	f0 = json_array_get(json_object_get(r0, "frames"), 0);
	CHECK_STR(json_string_value(json_object_get(f0, "function")), tricky);
	CHECK_STR(json_string_value(json_object_get(f0, "linkage_name")), "_Z1fv");
	CHECK_STR(json_string_value(json_object_get(f0, "file")), "/src/a \"b\".c");
	CHECK_INT(json_integer_value(json_object_get(f0, "line")), ==, 12);
	CHECK_INT(json_integer_value(json_object_get(f0, "column")), ==, 3);
	CHECK(json_is_true(json_object_get(f0, "inlined")));
	CHECK(json_object_get(json_array_get(json_object_get(r0, "frames"), 1), "column") == NULL);
	r1 = json_array_get(json_object_get(m0, "results"), 1);
	CHECK_STR(json_string_value(json_object_get(r1, "address")), "0xffffffffffffffff");
	CHECK_STR(json_string_value(json_object_get(r1, "kind")), "file_offset");
	CHECK_STR(json_string_value(json_object_get(r1, "error")), "no_symbols_at_address");
	CHECK(json_is_null(json_object_get(r1, "source")));
	CHECK_INT(json_array_size(json_object_get(r1, "frames")), ==, 0);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(m0, "results"), 2),
						    "address")), "0x0");
	json_decref(root);
	ember_buf_release(&b);
	return 0;
}

static int test_wire__json_answer_invalid_utf8_replaced(void)
{
	/* lone continuation, overlong '/', surrogate, truncated 3-byte, > U+10FFFF */
	static const char bad[] = "a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe2\x9c" "e\xf4\x90\x80\x80" "f";
	struct symjson_frame f = { .function = bad };
	struct symjson_result r = { .address = 1, .frames = &f, .nframes = 1 };
	struct symjson_writer w;
	struct ember_buf b;
	json_error_t jerr;
	json_t *root;
	const char *got;

	ember_buf_init(&b, 4096);
	symjson_writer_init(&w, &b);
	symjson_answer_begin(&w);
	symjson_module_begin(&w, "ab");
	symjson_write_result(&w, &r);
	symjson_module_end(&w);
	CHECK_INT(symjson_answer_end(&w), ==, 0);
	root = json_loadb(b.data, b.len, 0, &jerr);
	CHECK(root);
	got = json_string_value(json_object_get(json_array_get(json_object_get(json_array_get(
		json_object_get(json_array_get(json_object_get(root, "modules"), 0), "results"), 0),
		"frames"), 0), "function"));
	CHECK(got);
	CHECK(got[0] == 'a' && strstr(got, "\xef\xbf\xbd" "b"));
	CHECK(strstr(got, "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" "d"));
	CHECK(got[strlen(got) - 1] == 'f');
	json_decref(root);
	ember_buf_release(&b);
	return 0;
}

static int test_wire__json_answer_errors_are_sticky(void)
{
	struct symjson_result r = { .address = 1, .error = SYMJSON_ERR_NO_DEBUGINFO };
	struct symjson_writer w;
	struct ember_buf b;
	int i, err = 0;

	ember_buf_init(&b, 256);
	symjson_writer_init(&w, &b);
	CHECK_INT(symjson_module_begin(&w, "ab"), ==, -EINVAL); /* out of order */
	CHECK_INT(symjson_answer_begin(&w), ==, -EINVAL);
	CHECK_INT(b.len, ==, 0);
	symjson_writer_init(&w, &b);
	symjson_answer_begin(&w);
	symjson_module_begin(&w, "ab");
	for (i = 0; i < 100 && !err; i++)
		err = symjson_write_result(&w, &r);
	CHECK_INT(err, ==, -E2BIG);
	CHECK(b.len <= 256);
	CHECK_INT(symjson_module_end(&w), ==, -E2BIG);
	CHECK_INT(symjson_answer_end(&w), ==, -E2BIG);
	r.source = SYMJSON_SOURCE_COUNT;
	ember_buf_reset(&b);
	symjson_writer_init(&w, &b);
	symjson_answer_begin(&w);
	symjson_module_begin(&w, "ab");
	CHECK_INT(symjson_write_result(&w, &r), ==, -EINVAL);
	ember_buf_release(&b);
	return 0;
}

/* The client's request, parsed by the server's parser: the same module,
 * addresses and kind, inlines and demangling asked for; a build ID with
 * quotes cannot break out of its string. */
static int test_wire__json_request_write_parses_back(void)
{
	static const uint64_t addrs[] = { 0x1000, 0, 0xffffffffffffffffull };
	struct symjson_request *rq;
	struct ember_buf b;
	json_t *doc;

	ember_buf_init(&b, 1 << 16);
	CHECK_INT(symjson_request_write(&b, "00ffab", SYMJSON_FILE_OFFSET, addrs, 3), ==, 0);
	CHECK_INT(symjson_request_parse(b.data, b.len, NULL, &rq, NULL, 0), ==, 0);
	CHECK_INT(rq->nmodules, ==, 1);
	CHECK_STR(rq->modules[0].build_id, "00ffab");
	CHECK_INT(rq->modules[0].naddrs, ==, 3);
	for (size_t i = 0; i < 3; i++) {
		CHECK(rq->modules[0].addrs[i].addr == addrs[i]);
		CHECK_INT(rq->modules[0].addrs[i].kind, ==, SYMJSON_FILE_OFFSET);
	}
	CHECK(rq->inlines && rq->demangle);
	symjson_request_free(rq);
	ember_buf_reset(&b);
	CHECK_INT(symjson_request_write(&b, "ab\",\"x", SYMJSON_VADDR, addrs, 1), ==, 0);
	doc = json_loadb(b.data, b.len, 0, NULL); /* valid JSON, the ID one string */
	CHECK(doc);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(doc, "modules"),
								   0), "build_id")),
		  "ab\",\"x");
	json_decref(doc);
	CHECK_INT(symjson_request_parse(b.data, b.len, NULL, &rq, NULL, 0), ==, -EINVAL);
	ember_buf_release(&b);
	b = (struct ember_buf){ 0 };
	ember_buf_init(&b, 8);
	CHECK_INT(symjson_request_write(&b, "ab", SYMJSON_VADDR, addrs, 3), ==, -E2BIG);
	ember_buf_release(&b);
	return 0;
}

/* A reply the server would write passes and gives its items; every check
 * that fails names itself by its JSON path. */
static int test_wire__json_reply_checked(void)
{
	static const uint64_t addrs[] = { 0x1000, 0x2000 };
	static const struct { const char *body; const char *why; } bad[] = {
		{ "{\"modules\":[", "not JSON" },
		{ "{\"modules\":[{\"results\":{}}]}", "modules[0].results: not an array" },
		{ "{\"modules\":[{\"results\":[]}]}", "0 results for 2 addresses" },
		{ "{\"modules\":[{\"results\":[{\"address\":\"0x1000\",\"frames\":[]},"
		  "{\"address\":\"0x2001\",\"frames\":[]}]}]}", "results[1].address: 0x2001" },
		{ "{\"modules\":[{\"results\":[{\"address\":\"0x1000\",\"frames\":[{\"line\":-1}]},"
		  "{\"address\":\"0x2000\",\"frames\":[]}]}]}",
		  "results[0].frames[0].line: not a line number" },
		{ "{\"modules\":[{\"results\":[{\"address\":\"0x1000\",\"frames\":[],\"error\":1},"
		  "{\"address\":\"0x2000\",\"frames\":[]}]}]}", "results[0].error: not a string" },
	};
	const char *good = "{\"modules\":[{\"build_id\":\"ab\",\"results\":["
			   "{\"address\":\"0x1000\",\"frames\":[{\"inlined\":true,\"function\":\"f\","
			   "\"linkage_name\":\"_Z1fv\",\"file\":\"/a.c\",\"line\":3,\"column\":7},"
			   "{\"inlined\":false,\"function\":\"main\"}],\"error\":null,"
			   "\"source\":\"dwarf\"},{\"address\":\"0x2000\",\"frames\":[],"
			   "\"error\":\"a_reason_of_tomorrow\",\"source\":null}]}]}";
	const struct symjson_reply_item *it;
	struct symjson_reply *r;
	char why[256];

	CHECK_INT(symjson_reply_parse(good, strlen(good), addrs, 2, &r, why, sizeof(why)), ==, 0);
	it = symjson_reply_item(r, 0);
	CHECK(it->address == 0x1000);
	CHECK_INT(it->nframes, ==, 2);
	CHECK_STR(it->frames[0].linkage_name, "_Z1fv");
	CHECK_INT(it->frames[0].line, ==, 3);
	CHECK_INT(it->frames[0].column, ==, 7);
	CHECK(it->frames[0].inlined && !it->frames[1].inlined);
	CHECK(it->frames[1].file == NULL);
	CHECK_STR(it->source, "dwarf");
	CHECK(it->error == NULL);
	it = symjson_reply_item(r, 1);
	CHECK_STR(it->error, "a_reason_of_tomorrow"); /* passed on, not rejected */
	CHECK(it->source == NULL && it->nframes == 0);
	symjson_reply_free(r);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = (struct symjson_reply *)1;
		CHECK_INT(symjson_reply_parse(bad[i].body, strlen(bad[i].body), addrs, 2, &r, why,
					      sizeof(why)), ==, -EPROTO);
		CHECK(r == (struct symjson_reply *)1);
		if (!strstr(why, bad[i].why))
			fprintf(stderr, "bad[%zu]: '%s'\n", i, why);
		CHECK(strstr(why, bad[i].why) != NULL);
	}
	return 0;
}

/* The profile routes' times and durations (docs/http-api.md, Conventions;
 * moved with the parsers from api/). */
static int test_wire__pyroscope_times_and_durations(void)
{
	const int64_t S = 1000000000, now = (int64_t)1800000000 * S;
	int64_t t;

	CHECK_INT(pyro_parse_time("now", now, &t), ==, 0);
	CHECK(t == now);
	CHECK_INT(pyro_parse_time("now-15m", now, &t), ==, 0);
	CHECK(t == now - 900 * S);
	CHECK_INT(pyro_parse_time("now-1h30m", now, &t), ==, 0);
	CHECK(t == now - 5400 * S);
	/* an epoch count's unit read from its size */
	CHECK_INT(pyro_parse_time("1700000000", now, &t), ==, 0);
	CHECK(t == (int64_t)1700000000 * S);
	CHECK_INT(pyro_parse_time("1700000000123", now, &t), ==, 0);
	CHECK(t == (int64_t)1700000000123 * 1000000);
	CHECK_INT(pyro_parse_time("1700000000123456", now, &t), ==, 0);
	CHECK(t == (int64_t)1700000000123456 * 1000);
	CHECK_INT(pyro_parse_time("1700000000123456789", now, &t), ==, 0);
	CHECK(t == (int64_t)1700000000123456789);
	/* RFC 3339, with a fraction and an offset */
	CHECK_INT(pyro_parse_time("2023-11-14T22:13:20Z", now, &t), ==, 0);
	CHECK(t == (int64_t)1700000000 * S);
	CHECK_INT(pyro_parse_time("2023-11-14T23:13:20.5+01:00", now, &t), ==, 0);
	CHECK(t == (int64_t)1700000000 * S + S / 2);
	CHECK_INT(pyro_parse_time("yesterday", now, &t), ==, -EINVAL);
	/* times nanoseconds cannot count (the fuzz target's findings) */
	CHECK_INT(pyro_parse_time("17000000021", now, &t), ==, -EINVAL);
	CHECK_INT(pyro_parse_time("-61413-01-01T00:00:00Z", now, &t), ==, -EINVAL);
	CHECK_INT(pyro_parse_time("99999-01-01T00:00:00Z", now, &t), ==, -EINVAL);
	CHECK_INT(pyro_parse_time("now-", now, &t), ==, -EINVAL);
	CHECK_INT(pyro_parse_time("2023-11-14T22:13:20", now, &t), ==, -EINVAL); /* no zone */
	CHECK_INT(pyro_parse_time("", now, &t), ==, -EINVAL);
	CHECK_INT(pyro_parse_duration("10s", &t), ==, 0);
	CHECK(t == 10 * S);
	CHECK_INT(pyro_parse_duration("2d", &t), ==, 0);
	CHECK(t == 2 * 86400 * S);
	CHECK_INT(pyro_parse_duration("1w", &t), ==, 0);
	CHECK(t == 7 * 86400 * S);
	CHECK_INT(pyro_parse_duration("250ms", &t), ==, 0);
	CHECK(t == S / 4);
	CHECK_INT(pyro_parse_duration("90", &t), ==, 0);
	CHECK(t == 90 * S);
	CHECK_INT(pyro_parse_duration("0", &t), ==, -EINVAL);
	CHECK_INT(pyro_parse_duration("5x", &t), ==, -EINVAL);
	CHECK_INT(pyro_parse_duration("-5s", &t), ==, -EINVAL);
	return 0;
}

/* Pyroscope's name=APP{k=v,...}: the tags, APP, and the kind its suffix names. */
static int test_wire__pyroscope_name_and_kind(void)
{
	struct pyro_tags *t = calloc(1, sizeof(*t));
	const struct pyro_kind *k;
	char why[256] = "";

	CHECK(t);
	CHECK_INT(pyro_name_parse("shop.alloc_space{env=prod,k8s.pod=a-1}", t, why, sizeof(why)),
		  ==, 0);
	CHECK_INT(t->n, ==, 2);
	CHECK_STR(t->v[0].name, "env");
	CHECK_STR(t->v[0].value, "prod");
	CHECK_STR(t->v[1].name, "k8s.pod"); /* dotted names allowed */
	CHECK_STR(t->v[1].value, "a-1");
	CHECK(pyro_tags_has(t, "env") && !pyro_tags_has(t, "service_name"));
	k = pyro_kind_of(t, NULL);
	CHECK_STR(k->type, "alloc_space");
	CHECK_STR(k->unit, "bytes");
	CHECK_STR(t->app, "shop"); /* the suffix cut */
	memset(t, 0, sizeof(*t));
	CHECK_INT(pyro_name_parse("api", t, why, sizeof(why)), ==, 0);
	CHECK_INT(t->n, ==, 0);
	k = pyro_kind_of(t, "objects"); /* no suffix: the units parameter */
	CHECK_STR(k->type, "inuse_objects");
	CHECK_STR(pyro_kind_of(t, NULL)->type, "cpu"); /* neither: CPU */
	memset(t, 0, sizeof(*t));
	CHECK_INT(pyro_name_parse("app{novalue}", t, why, sizeof(why)), ==, -EINVAL);
	CHECK(strstr(why, "'novalue' is not k=v"));
	CHECK_INT(pyro_name_parse("", t, why, sizeof(why)), ==, -EINVAL);
	CHECK_INT(pyro_name_parse(NULL, t, why, sizeof(why)), ==, -EINVAL);
	free(t);
	return 0;
}

/* The value of the sample whose leaf function is leaf, or -1. */
static int64_t folded_value(const struct pprof_profile *p, const char *leaf, size_t depth)
{
	const pprof_message_t *m = pprof_message(p);

	for (size_t i = 0; i < m->n_sample; i++) {
		const pprof_location_t *l = pprof_location_by_id(p, m->sample[i]->location_id[0]);
		const pprof_function_t *f = pprof_function_by_id(p, l->line[0]->function_id);

		if (strcmp(pprof_string(p, f->name), leaf) == 0 && m->sample[i]->n_location_id == depth)
			return m->sample[i]->value[0];
	}
	return -1;
}

/* Folded and lines bodies as a pprof: one function a frame name, the leaf
 * first, CPU counts scaled by the period; bad lines rejected. */
static int test_wire__pyroscope_folded_bodies(void)
{
	static const struct pyro_kind cpu = { "cpu", "process_cpu", "cpu", "nanoseconds", true };
	static const struct pyro_kind heap = { "inuse_space", "memory", "inuse_space", "bytes",
					       false };
	static const char body[] = "main;work;leaf 3\r\nmain;work 2\n\nmain;other;tip 1\n";
	struct pprof_profile *p = NULL;
	const pprof_message_t *m;
	char why[256] = "";

	CHECK_INT(pyro_folded_parse(body, strlen(body), true, &cpu, 100, NULL, &p, why, sizeof(why)),
		  ==, 0);
	m = pprof_message(p);
	CHECK_INT(m->n_sample, ==, 3);
	CHECK_INT(m->n_function, ==, 5); /* main, work, leaf, other, tip: once each */
	CHECK_INT(m->period, ==, 10000000); /* 1e9 / 100 Hz */
	CHECK(folded_value(p, "leaf", 3) == 3 * 10000000);
	CHECK(folded_value(p, "work", 2) == 2 * 10000000);
	CHECK(folded_value(p, "tip", 3) == 10000000);
	pprof_profile_free(p);
	p = NULL;
	CHECK_INT(pyro_folded_parse("a;b\na\n", 6, false, &heap, 100, NULL, &p, why, sizeof(why)), ==,
		  0); /* lines: each counts once, unscaled */
	CHECK(folded_value(p, "b", 2) == 1 && folded_value(p, "a", 1) == 1);
	pprof_profile_free(p);
	p = NULL;
	CHECK_INT(pyro_folded_parse("a;b x\n", 6, true, &cpu, 100, NULL, &p, why, sizeof(why)), ==,
		  -EINVAL);
	CHECK(strstr(why, "not a count") && !p);
	CHECK_INT(pyro_folded_parse("a;b\n", 4, true, &cpu, 100, NULL, &p, why, sizeof(why)), ==,
		  -EINVAL);
	CHECK(strstr(why, "does not end in a count"));
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_wire__pprof_build_encode_decode),
	UNIT_CASE(test_wire__pprof_decode_gzip_and_zstd),
	UNIT_CASE(test_wire__pprof_lookup_sparse_ids),
	UNIT_CASE(test_wire__pprof_add_string_deduplicates),
	UNIT_CASE(test_wire__pprof_add_function_deduplicates),
	UNIT_CASE(test_wire__pprof_set_lines_replaces),
	UNIT_CASE(test_wire__pprof_build_rejects_bad_arguments),
	UNIT_CASE(test_wire__pprof_sample_labels_and_time_roundtrip),
	UNIT_CASE(test_wire__pprof_encode_over_cap_leaves_buffer),
	UNIT_CASE(test_wire__pprof_rejects_truncated_protobuf),
	UNIT_CASE(test_wire__pprof_rejects_garbage),
	UNIT_CASE(test_wire__pprof_rejects_bad_string_index),
	UNIT_CASE(test_wire__pprof_rejects_negative_string_index),
	UNIT_CASE(test_wire__pprof_rejects_nonempty_first_string),
	UNIT_CASE(test_wire__pprof_rejects_dangling_mapping),
	UNIT_CASE(test_wire__pprof_rejects_dangling_function),
	UNIT_CASE(test_wire__pprof_rejects_dangling_sample_location),
	UNIT_CASE(test_wire__pprof_rejects_wrong_value_count),
	UNIT_CASE(test_wire__pprof_rejects_duplicate_and_zero_ids),
	UNIT_CASE(test_wire__pprof_rejects_mapping_start_above_limit),
	UNIT_CASE(test_wire__pprof_rejects_counts_over_limits),
	UNIT_CASE(test_wire__pprof_rejects_gzip_bomb),
	UNIT_CASE(test_wire__pprof_rejects_zstd_bomb),
	UNIT_CASE(test_wire__pprof_rejects_corrupt_compression),
	UNIT_CASE(test_wire__pprof_decode_two_gzip_members),
	UNIT_CASE(test_wire__pprof_unknown_fields),
	UNIT_CASE(test_wire__json_request_values),
	UNIT_CASE(test_wire__json_request_streamed_under_a_share),
	UNIT_CASE(test_wire__json_request_rejects_with_path),
	UNIT_CASE(test_wire__json_request_build_id_lengths),
	UNIT_CASE(test_wire__json_request_caps),
	UNIT_CASE(test_wire__json_answer_parses_back),
	UNIT_CASE(test_wire__json_answer_invalid_utf8_replaced),
	UNIT_CASE(test_wire__json_answer_errors_are_sticky),
	UNIT_CASE(test_wire__json_request_write_parses_back),
	UNIT_CASE(test_wire__json_reply_checked),
	UNIT_CASE(test_wire__pyroscope_times_and_durations),
	UNIT_CASE(test_wire__pyroscope_name_and_kind),
	UNIT_CASE(test_wire__pyroscope_folded_bodies),
};

UNIT_MAIN_QUIET(cases)
