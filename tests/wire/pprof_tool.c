/*
 * pprof_tool.c - drives wire/pprof.h from test_pprof_go.py, which checks
 * what it writes with Go's pprof:
 *   pprof_tool reencode IN OUT raw|gzip   decode IN, encode it again
 *   pprof_tool symbolize IN OUT           give every location of IN two
 *                                         frames (an inlined one and its
 *                                         caller) named after its address
 *   pprof_tool build OUT                  a profile from scratch, with
 *                                         functions, inlined lines, samples
 *   pprof_tool check IN                   decode; print the reason if rejected
 * Exit status: 0 done, 1 rejected or failed, 2 usage.
 */
#include "pprof.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_file(const char *path, struct ember_buf *b)
{
	FILE *f = fopen(path, "rb");
	char chunk[65536];
	size_t n;
	int err = 0;

	if (!f)
		return -1;
	ember_buf_init(b, (size_t)1 << 30);
	while (!err && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		err = ember_buf_append(b, chunk, n);
	fclose(f);
	return err;
}

static int write_profile(const struct pprof_profile *p, const char *path, bool gzip)
{
	struct ember_buf b;
	FILE *f;
	int err;

	ember_buf_init(&b, (size_t)1 << 30);
	err = pprof_encode(p, gzip, &b);
	if (!err && (!(f = fopen(path, "wb")) || fwrite(b.data, 1, b.len, f) != b.len ||
		     fclose(f) != 0))
		err = -1;
	ember_buf_release(&b);
	return err;
}

static struct pprof_profile *load(const char *path)
{
	struct pprof_profile *p = NULL;
	struct ember_buf b;
	char why[512];
	int err;

	if (read_file(path, &b)) {
		fprintf(stderr, "pprof_tool: cannot read '%s'\n", path);
		return NULL;
	}
	err = pprof_decode(b.data, b.len, NULL, &p, why, sizeof(why));
	ember_buf_release(&b);
	if (err)
		fprintf(stderr, "pprof_tool: '%s': %s: %s\n", path, pprof_strerror(err), why);
	return p;
}

/* Two frames per location: "inl_<addr>" inlined into "fn_<addr>". */
static int symbolize(struct pprof_profile *p)
{
	const pprof_message_t *m = pprof_message(p);

	for (size_t i = 0; i < m->n_location; i++) {
		const pprof_location_t *l = m->location[i];
		char inl[64], fn[64];
		struct pprof_function_desc fi = { inl, inl, "/src/ember/inl.h", 1 };
		struct pprof_function_desc ff = { fn, fn, "/src/ember/fn.c", 100 };
		struct pprof_line lines[2] = { { 0, (int64_t)(l->address & 0xfff) + 1, 0 },
					       { 0, 200, 0 } };

		snprintf(inl, sizeof(inl), "inl_%" PRIx64, l->address);
		snprintf(fn, sizeof(fn), "fn_%" PRIx64, l->address);
		if (pprof_add_function(p, &fi, &lines[0].function_id) ||
		    pprof_add_function(p, &ff, &lines[1].function_id) ||
		    pprof_location_set_lines(p, l->id, lines, 2))
			return -1;
	}
	for (size_t i = 0; i < m->n_mapping; i++)
		if (pprof_mapping_set_flags(p, m->mapping[i]->id, PPROF_MAPPING_HAS_FUNCTIONS |
					    PPROF_MAPPING_HAS_FILENAMES |
					    PPROF_MAPPING_HAS_LINE_NUMBERS |
					    PPROF_MAPPING_HAS_INLINE_FRAMES))
			return -1;
	return 0;
}

/* main -> ember_parse (inlined: ember_next_token) and main -> ember_emit. */
static int build_lines(struct pprof_profile *p, uint64_t loc[3])
{
	struct pprof_function_desc fm = { "main", "main", "/src/app/main.c", 10 };
	struct pprof_function_desc fp = { "app::parse(char const*)", "_ZN3app5parseEPKc",
					  "/src/app/parse.cc", 40 };
	struct pprof_function_desc ft = { "app::next_token()", "_ZN3app10next_tokenEv",
					  "/src/app/lex.h", 5 };
	struct pprof_function_desc fe = { "ember_emit", "ember_emit", "/src/app/emit.c", 70 };
	struct pprof_line l0[2] = { { 0, 7, 0 }, { 0, 44, 0 } }, l1 = { 0, 12, 0 },
			  l2 = { 0, 71, 0 };

	if (pprof_add_function(p, &ft, &l0[0].function_id) ||
	    pprof_add_function(p, &fp, &l0[1].function_id) ||
	    pprof_add_function(p, &fm, &l1.function_id) ||
	    pprof_add_function(p, &fe, &l2.function_id))
		return -1;
	return pprof_location_set_lines(p, loc[0], l0, 2) ||
	       pprof_location_set_lines(p, loc[1], &l1, 1) ||
	       pprof_location_set_lines(p, loc[2], &l2, 1);
}

static struct pprof_profile *build(void)
{
	struct pprof_mapping_desc md = { 0x555555554000, 0x555555600000, 0x1000,
					 "/usr/bin/app", "0123456789abcdef" };
	struct pprof_profile *p = pprof_profile_new();
	uint64_t mid, loc[3], stack1[2], stack2[2];
	int64_t v1[2] = { 30, 300000000 }, v2[2] = { 12, 120000000 };

	if (!p || pprof_add_sample_type(p, "samples", "count") ||
	    pprof_add_sample_type(p, "cpu", "nanoseconds") ||
	    pprof_set_period(p, "cpu", "nanoseconds", 10000000) ||
	    pprof_add_mapping(p, &md, &mid))
		goto fail;
	for (int i = 0; i < 3; i++)
		if (pprof_add_location(p, mid, 0x555555555100 + 0x100 * (uint64_t)i, &loc[i]))
			goto fail;
	stack1[0] = loc[0], stack1[1] = loc[1];
	stack2[0] = loc[2], stack2[1] = loc[1];
	if (build_lines(p, loc) || pprof_add_sample(p, stack1, 2, v1, 2) ||
	    pprof_add_sample(p, stack2, 2, v2, 2) ||
	    pprof_mapping_set_flags(p, mid, PPROF_MAPPING_HAS_FUNCTIONS |
				    PPROF_MAPPING_HAS_FILENAMES |
				    PPROF_MAPPING_HAS_LINE_NUMBERS |
				    PPROF_MAPPING_HAS_INLINE_FRAMES))
		goto fail;
	return p;
fail:
	pprof_profile_free(p);
	return NULL;
}

static int run(int argc, char **argv)
{
	struct pprof_profile *p = NULL;
	int err = -1;

	if (argc == 5 && strcmp(argv[1], "reencode") == 0 && (p = load(argv[2])))
		err = write_profile(p, argv[3], strcmp(argv[4], "gzip") == 0);
	else if (argc == 4 && strcmp(argv[1], "symbolize") == 0 && (p = load(argv[2])))
		err = symbolize(p) || write_profile(p, argv[3], true);
	else if (argc == 3 && strcmp(argv[1], "build") == 0 && (p = build()))
		err = write_profile(p, argv[2], true);
	else if (argc == 3 && strcmp(argv[1], "check") == 0 && (p = load(argv[2])))
		err = 0;
	pprof_profile_free(p);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: pprof_tool reencode|symbolize|build|check ...\n");
		return 2;
	}
	return run(argc, argv);
}
