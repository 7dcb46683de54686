/*
 * test_symsvc.c - unit tests of symbol-service/: the index cache replacing
 * an index in use, store failures that are never "unknown", the upstream
 * fetch of a build ID's two files, and the service used in-process as the
 * profile store will: batched lookups of (build ID, addresses), the JSON
 * answer read chunk by chunk, a pprof profile symbolized without HTTP.
 * Files go into a real store with the flags elf-inspect finds in them.
 */
#include "pprof.h"
#include "symsvc_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Run a shell command; 0 when it exited 0. */
static int run(const char *cmd)
{
	return system(cmd) == 0 ? 0 : -1;
}

static int rm_rf(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return run(cmd);
}

/* The source answering for the address, or -1. */
static int source_at(const struct symsvc_index *ix, uint64_t addr)
{
	struct sym_frame f[16];
	int n = sym_index_lookup(symsvc_index_sym(ix), addr, SYM_ADDR_VADDR, 0, f, 16);

	return n > 0 ? (int)f[n - 1].source : -1;
}

/*
 * A request holds the index of a build ID when a debug file arrives: the
 * next request gets a new index from it, the held one stays usable until
 * released, and then it is freed once (ASan checks).
 */
static int test_symsvc__replaces_index_in_use(void)
{
	char dir[] = "/tmp/ember-symsvc-XXXXXX", full[4096], nodebug[4200], cmd[9000];
	char id[STORE_BUILD_ID_HEX], id2[STORE_BUILD_ID_HEX];
	struct symsvc_index *old, *new;
	struct symsvc_stats st;
	struct sym_index_stats full_st, nodebug_st;
	struct symsvc_opts o = { .sz = sizeof(o) };
	struct symsvc *svc;
	struct store *s;
	struct sym_index *idx;
	uint64_t main_addr;
	int err;

	CHECK(mkdtemp(dir));
	snprintf(full, sizeof(full), "%s", unit_fixture("c_O2_pie"));
	snprintf(nodebug, sizeof(nodebug), "%s/nodebug", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-debug '%s' '%s'", full, nodebug);
	if (run(cmd)) {
		fprintf(stderr, "SKIP: objcopy failed (Debian package binutils)\n");
		return UNIT_SKIP;
	}
	idx = sym_index_open(full, NULL, &err);
	CHECK(idx);
	sym_index_get_stats(idx, &full_st);
	sym_index_free(idx);
	idx = sym_index_open(nodebug, NULL, &err);
	CHECK(idx);
	sym_index_get_stats(idx, &nodebug_st);
	sym_index_free(idx);
	/* A budget that holds either index but not both (the stored ones
	 * differ from these by a few bytes of strings): releasing the old
	 * one must evict it exactly once. */
	o.cache_bytes = full_st.bytes + nodebug_st.bytes / 2;
	main_addr = func_addr(full, "^main$");
	CHECK(main_addr);

	CHECK_INT(store_open(dir, &s), ==, 0);
	CHECK_INT(symsvc_new(s, &o, &svc), ==, 0);
	CHECK_INT(put_file(s, nodebug, STORE_KIND_EXECUTABLE, id), ==, 0);
	CHECK_INT(symsvc_index_get(svc, id, &old), ==, 0);
	CHECK_INT(source_at(old, main_addr), ==, SYM_SOURCE_SYMTAB);
	CHECK_INT(put_file(s, full, STORE_KIND_DEBUGINFO, id2), ==, 0);
	CHECK_STR(id2, id);
	CHECK_INT(symsvc_index_get(svc, id, &new), ==, 0);
	CHECK(new != old);
	CHECK_INT(source_at(new, main_addr), ==, SYM_SOURCE_DWARF);
	CHECK_INT(source_at(old, main_addr), ==, SYM_SOURCE_SYMTAB); /* still usable */
	symsvc_get_stats(svc, &st);
	CHECK(st.bytes > st.budget); /* the old one waits for its user */
	symsvc_index_put(svc, old);
	symsvc_get_stats(svc, &st);
	CHECK_INT(st.rebuilds, ==, 1);
	CHECK_INT(st.loaded, ==, 1);
	CHECK_INT(st.builds, ==, 2);
	symsvc_index_put(svc, new);
	CHECK_INT(symsvc_index_get(svc, id, &new), ==, 0); /* the same, cached */
	symsvc_get_stats(svc, &st);
	CHECK_INT(st.builds, ==, 2);
	symsvc_index_put(svc, new);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/* The store of dir opened under rocksdb_fault.c (test builds): every
 * record read fails once it is open. */
static int open_unreadable(const char *dir, struct store **s)
{
	int err;

	setenv("EMBER_TEST_STORE_FAULT", "+0", 1);
	err = store_open(dir, s);
	unsetenv("EMBER_TEST_STORE_FAULT");
	return err;
}

static int count_frames(void *arg, size_t i, const struct sym_frame *f, int n)
{
	(void)i, (void)f;
	*(int *)arg += n > 0;
	return 0;
}

/*
 * A store that cannot read its records: every way into the service says
 * so with the store's error (a store_unavailable reason), never "unknown
 * build ID"; the JSON answer fails before writing a byte.
 */
static int test_symsvc__store_failure_is_not_unknown(void)
{
	char dir[] = "/tmp/ember-symsvc-XXXXXX", id[STORE_BUILD_ID_HEX];
	struct symjson_address addr = { 0x1000, SYMJSON_VADDR };
	struct symsvc_json_answer *ans;
	struct symjson_request *rq;
	struct symsvc_index *ix;
	struct symsvc *svc;
	struct store *s;
	char body[300];
	int seen = 0;

#ifndef EMBER_STORE_FAULTS
	fprintf(stderr, "SKIP: a Release build: the store's fault injection "
		"(EMBER_TEST_STORE_FAULT) is in Debug builds only\n");
	return UNIT_SKIP;
#endif
	CHECK(mkdtemp(dir));
	CHECK_INT(store_open(dir, &s), ==, 0);
	CHECK_INT(put_file(s, unit_fixture("c_O2_pie"), STORE_KIND_EXECUTABLE, id), ==, 0);
	store_free(s);
	CHECK_INT(open_unreadable(dir, &s), ==, 0);
	CHECK_INT(symsvc_new(s, NULL, &svc), ==, 0);
	CHECK_INT(symsvc_index_get(svc, id, &ix), ==, -EIO);
	CHECK_INT(symsvc_error_reason(-EIO), ==, SYMJSON_ERR_STORE_UNAVAILABLE);
	CHECK_INT(symsvc_index_get(svc, "abcd", &ix), ==, -EIO); /* not -ENOENT either */
	CHECK_INT(symsvc_lookup(svc, id, &addr, 1, 0, count_frames, &seen), ==, -EIO);
	CHECK_INT(seen, ==, 0);
	snprintf(body, sizeof(body), "{\"modules\":[{\"build_id\":\"%s\",\"addresses\":[1]}]}", id);
	CHECK_INT(symjson_request_parse(body, strlen(body), NULL, &rq, NULL, 0), ==, 0);
	CHECK_INT(symsvc_json_answer_new(svc, rq, NULL, &ans), ==, -EIO);
	symsvc_free(svc);
	store_free(s);
	CHECK_INT(symsvc_error_reason(-ENOENT), ==, SYMJSON_ERR_UNKNOWN_BUILD_ID);
	CHECK_INT(symsvc_error_reason(-SYM_ERR_NO_SYMBOLS), ==, SYMJSON_ERR_NO_DEBUGINFO);
	CHECK_INT(symsvc_error_reason(-EHOSTUNREACH), ==, SYMJSON_ERR_UPSTREAM_UNAVAILABLE);
	return rm_rf(dir);
}

/* An upstream for the fetch test: what it answers for each file, and the
 * file it stores for the executable. */
struct fake_upstream {
	struct store *s;
	int debuginfo, executable;	/* 0: store `file`, else this error */
	const char *file;
	int asked;
};

static int fetch_from(void *arg, const char *build_id, enum store_want want,
		      const struct symsvc_request_opts *ro)
{
	struct fake_upstream *u = arg;
	int ret = want == STORE_WANT_DEBUGINFO ? u->debuginfo : u->executable;
	char id[STORE_BUILD_ID_HEX];

	(void)build_id;
	u->asked++;
	return ret ? ret : put_file(u->s, u->file, STORE_KIND_EXECUTABLE, id);
}

/*
 * A build ID the store does not know is asked of the owner's fetch, both
 * files: either is enough; a failure of upstream is upstream_unavailable
 * and a miss everywhere unknown_build_id, but a file that could not be
 * stored is the store's error, and the executable is then not asked.
 */
static int test_symsvc__fetch_asks_both_files(void)
{
	static const struct { int dbg, exe, want, asked; } cases[] = {
		{ -EHOSTUNREACH, 0, 0, 2 },		/* the executable is enough */
		{ -ENOENT, -ENOENT, -ENOENT, 2 },	/* nobody has it */
		{ -ENOSYS, -ENOSYS, -ENOENT, 2 },	/* no upstream at all */
		{ -ENOENT, -EHOSTUNREACH, -EHOSTUNREACH, 2 }, /* a failure says more */
		{ -ECANCELED, -ENOENT, -EHOSTUNREACH, 2 },
		{ -EIO, 0, -EIO, 1 },			/* our store failed */
		{ -ENOENT, -ENOSPC, -ENOSPC, 2 },
	};
	char dir[] = "/tmp/ember-symsvc-XXXXXX", id[STORE_BUILD_ID_HEX];
	const char *exe = unit_fixture("c_O2_pie");
	struct symsvc_index *ix;
	struct sym_index *idx;
	struct symsvc *svc;
	struct store *s;
	const uint8_t *raw;
	size_t len;
	int err;

	idx = sym_index_open(exe, NULL, &err);
	CHECK(idx);
	raw = sym_index_build_id(idx, &len);
	CHECK(raw && ember_build_id_to_hex(raw, len, id) == 0);
	sym_index_free(idx);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fake_upstream u = { .debuginfo = cases[i].dbg, .executable = cases[i].exe,
					   .file = exe };
		struct symsvc_opts o = { .sz = sizeof(o), .fetch = fetch_from, .fetch_arg = &u };

		strcpy(dir, "/tmp/ember-symsvc-XXXXXX");
		CHECK(mkdtemp(dir));
		CHECK_INT(store_open(dir, &s), ==, 0);
		u.s = s;
		CHECK_INT(symsvc_new(s, &o, &svc), ==, 0);
		err = symsvc_index_get(svc, id, &ix);
		if (err != cases[i].want || u.asked != cases[i].asked)
			fprintf(stderr, "case %zu: %d (asked %d)\n", i, err, u.asked);
		CHECK_INT(err, ==, cases[i].want);
		CHECK_INT(u.asked, ==, cases[i].asked);
		if (!err)
			symsvc_index_put(svc, ix);
		symsvc_free(svc);
		store_free(s);
		CHECK_INT(rm_rf(dir), ==, 0);
	}
	return 0;
}

struct collect {
	const struct sym_index *idx;
	const struct symjson_address *addrs;
	int mismatches, resolved;
};

/* Each answer as symsvc_lookup gives it against one sym_index_lookup. */
static int compare_one(void *arg, size_t i, const struct sym_frame *f, int n)
{
	struct collect *c = arg;
	struct sym_frame want[SYMSVC_FRAMES_MAX];
	int k = sym_index_lookup(c->idx, c->addrs[i].addr, SYM_ADDR_VADDR,
				 SYM_LOOKUP_SYMBOL_NAME, want, SYMSVC_FRAMES_MAX);

	k = k > SYMSVC_FRAMES_MAX ? SYMSVC_FRAMES_MAX : k;
	if (k != n || (n > 0 && (f[0].line != want[0].line ||
				 strcmp(f[n - 1].name ? f[n - 1].name : "",
					want[k - 1].name ? want[k - 1].name : ""))))
		c->mismatches++;
	c->resolved += n > 0;
	return 0;
}

/*
 * In-process batched lookups of (build ID, addresses): more than one
 * batch, in any order, repeats included, answered in request order as
 * one-by-one lookups answer.
 */
static int test_symsvc__lookup_in_request_order(void)
{
	char dir[] = "/tmp/ember-symsvc-XXXXXX", id[STORE_BUILD_ID_HEX];
	size_t n = SYMSVC_BATCH_MAX + 1000;
	struct symjson_address *addrs = calloc(n, sizeof(*addrs));
	struct symsvc_index *ix;
	struct symsvc *svc;
	struct store *s;
	uint64_t main_addr = func_addr(unit_fixture("cxx_O2"), "^main$");
	struct collect c = { 0 };

	CHECK(addrs && main_addr);
	CHECK_INT(service_with(dir, "cxx_O2", &s, &svc, id), ==, 0);
	for (size_t i = 0; i < n; i++) /* descending, each address twice, and strays */
		addrs[i].addr = i % 7 == 6 ? 0x10 : main_addr + 4 * ((n - i) / 2 % 64);
	CHECK_INT(symsvc_index_get(svc, id, &ix), ==, 0);
	c.idx = symsvc_index_sym(ix);
	c.addrs = addrs;
	CHECK_INT(symsvc_lookup(svc, id, addrs, n, SYM_LOOKUP_SYMBOL_NAME, compare_one, &c), ==, 0);
	CHECK_INT(c.mismatches, ==, 0);
	CHECK(c.resolved > (int)(n / 2));
	symsvc_index_put(svc, ix);
	CHECK_INT(symsvc_lookup(svc, "abcd", addrs, 1, 0, compare_one, &c), ==, -ENOENT);
	symsvc_free(svc);
	store_free(s);
	free(addrs);
	return rm_rf(dir);
}

/* The JSON answer read chunk by chunk is one document, with a result per
 * address in order and the unknown module reported, not dropped. */
static int test_symsvc__json_answer_in_chunks(void)
{
	char dir[] = "/tmp/ember-symsvc-XXXXXX", id[STORE_BUILD_ID_HEX];
	uint64_t main_addr = func_addr(unit_fixture("cxx_O2"), "^main$");
	struct symsvc_json_answer *ans;
	struct symjson_request *rq;
	struct ember_buf req, all;
	struct symsvc *svc;
	struct store *s;
	const char *data;
	json_t *root, *mods;
	size_t len, chunks = 0, n = 20000;

	CHECK(main_addr);
	CHECK_INT(service_with(dir, "cxx_O2", &s, &svc, id), ==, 0);
	ember_buf_init(&req, 1 << 24);
	ember_buf_init(&all, 1 << 28);
	CHECK_INT(ember_buf_appendf(&req, "{\"modules\":[{\"build_id\":\"%s\",\"addresses\":[", id),
		  ==, 0);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(ember_buf_appendf(&req, "%s%llu", i ? "," : "",
					    (unsigned long long)(main_addr + i % 32)), ==, 0);
	CHECK_INT(ember_buf_appendf(&req, "]},{\"build_id\":\"abcd\",\"addresses\":[1]}]}"), ==, 0);
	CHECK_INT(symjson_request_parse(req.data, req.len, NULL, &rq, NULL, 0), ==, 0);
	CHECK_INT(symsvc_json_answer_new(svc, rq, NULL, &ans), ==, 0);
	do {
		CHECK_INT(symsvc_json_answer_read(ans, &data, &len), ==, 0);
		CHECK_INT(ember_buf_append(&all, data, len), ==, 0);
		chunks += len > 0;
	} while (len);
	CHECK_INT(symsvc_json_answer_store_errors(ans), ==, 0);
	symsvc_json_answer_free(ans);
	CHECK(chunks > 1); /* streamed, not whole */
	root = json_loadb(all.data, all.len, 0, NULL);
	mods = json_object_get(root, "modules");
	CHECK(root && json_array_size(mods) == 2);
	CHECK_INT(json_array_size(json_object_get(json_array_get(mods, 0), "results")), ==, n);
	CHECK_INT(json_integer_value(json_object_get(json_array_get(mods, 0), "resolved")), ==, n);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(
			  json_array_get(mods, 1), "results"), 0), "error")),
		  "unknown_build_id");
	json_decref(root);
	ember_buf_release(&req);
	ember_buf_release(&all);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/*
 * A pprof profile symbolized in-process (the profile store's ingest): the
 * location of main gets its function and line, the one outside its
 * mapping and the one without a mapping stay as they are, counted by
 * reason, and the mapping says it has functions.
 */
static int test_symsvc__pprof_in_process(void)
{
	char dir[] = "/tmp/ember-symsvc-XXXXXX", id[STORE_BUILD_ID_HEX], why[256];
	const uint64_t base = 0x555555554000;
	uint64_t main_addr = func_addr(unit_fixture("c_O2_pie"), "^main$");
	struct pprof_mapping_desc md = { .start = base, .limit = base + 0x100000 };
	struct symsvc_pprof_stats st;
	const pprof_location_t *loc;
	const pprof_function_t *fn;
	struct pprof_profile *p = pprof_profile_new();
	uint64_t mid, l1, l2, l3;
	struct symsvc *svc;
	struct store *s;

	CHECK(p && main_addr);
	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	md.build_id = id;
	CHECK_INT(pprof_add_mapping(p, &md, &mid), ==, 0);
	CHECK_INT(pprof_add_location(p, mid, base + main_addr, &l1), ==, 0);
	CHECK_INT(pprof_add_location(p, mid, base + 0x200000, &l2), ==, 0);
	CHECK_INT(pprof_add_location(p, 0, 0x1234, &l3), ==, 0);
	CHECK_INT(symsvc_symbolize_pprof(svc, p, NULL, &st), ==, 0);
	CHECK_INT(st.store_err, ==, 0);
	CHECK_INT(st.resolved, ==, 1);
	CHECK_INT(st.unresolved, ==, 2);
	symsvc_pprof_why_list(&st, why, sizeof(why));
	CHECK_STR(why, "no_mapping=1, outside_mapping=1");
	loc = pprof_location_by_id(p, l1);
	CHECK(loc && loc->n_line >= 1);
	fn = pprof_function_by_id(p, loc->line[loc->n_line - 1]->function_id);
	CHECK(fn);
	CHECK_STR(pprof_string(p, fn->name), "main");
	CHECK(loc->line[loc->n_line - 1]->line > 0);
	CHECK(pprof_mapping_by_id(p, mid)->has_functions);
	CHECK_INT(pprof_location_by_id(p, l2)->n_line, ==, 0);
	pprof_profile_free(p);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/*
 * The work of a profile is linear in its size: 65,536 mappings and
 * 262,144 locations (a location-per-mapping walk would make that 17
 * billion steps, past the test's timeout), each location counted once,
 * under its own mapping's reason.
 */
static int test_symsvc__pprof_linear_in_mappings(void)
{
	char dir[] = "/tmp/ember-symsvc-XXXXXX", id[STORE_BUILD_ID_HEX];
	const uint64_t base = 0x555555554000;
	uint64_t main_addr = func_addr(unit_fixture("c_O2_pie"), "^main$");
	const size_t n_maps = 65536, n_locs = 262144;
	struct symsvc_pprof_stats st;
	struct pprof_profile *p = pprof_profile_new();
	uint64_t *mids = calloc(n_maps, sizeof(*mids)), lid;
	struct symsvc *svc;
	struct store *s;

	CHECK(p && mids && main_addr);
	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	for (size_t i = 0; i < n_maps; i++) {
		struct pprof_mapping_desc md = { .start = base + (i << 24),
						 .limit = base + (i << 24) + 0x100000,
						 .build_id = i == n_maps / 2 ? id : NULL };

		CHECK_INT(pprof_add_mapping(p, &md, &mids[i]), ==, 0);
	}
	for (size_t i = 0; i < n_locs; i++) { /* interleaved: mapping i % n_maps */
		size_t m = (i * 7) % n_maps;

		CHECK_INT(pprof_add_location(p, mids[m], base + (m << 24) + main_addr, &lid),
			  ==, 0);
	}
	CHECK_INT(pprof_add_location(p, 0, 0x1234, &lid), ==, 0);
	CHECK_INT(symsvc_symbolize_pprof(svc, p, NULL, &st), ==, 0);
	CHECK_INT(st.resolved, ==, n_locs / n_maps);
	CHECK_INT(st.unresolved, ==, n_locs - n_locs / n_maps + 1);
	CHECK_INT(st.why[SYMSVC_PPROF_NO_BUILD_ID], ==, n_locs - n_locs / n_maps);
	CHECK_INT(st.why[SYMSVC_PPROF_NO_MAPPING], ==, 1);
	CHECK(pprof_mapping_by_id(p, mids[n_maps / 2])->has_functions);
	CHECK(!pprof_mapping_by_id(p, mids[0])->has_functions);
	pprof_profile_free(p);
	free(mids);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/*
 * The service bounds a build as the server asks (issue 13): build_bytes
 * reaches the symbolizer (an index over it fails -E2BIG, index_over_budget,
 * and is remembered: not built again), and a build takes its expected
 * share of the budget first (budget held by others: -EAGAIN, server_busy,
 * not remembered: built once the memory is back).
 */
static int test_symsvc__build_bounded_by_the_server(void)
{
	char dir[] = "/tmp/ember-symsvc-XXXXXX", dir2[] = "/tmp/ember-symsvc-XXXXXX";
	char id[STORE_BUILD_ID_HEX];
	struct symsvc_opts o = { .sz = sizeof(o), .build_bytes = 4096 };
	struct ember_mem_budget budget;
	struct symsvc *svc, *unused;
	struct symsvc_index *ix;
	struct symsvc_stats st;
	struct store *s;

	CHECK_INT(service_with(dir, "c_O2_pie", &s, &unused, id), ==, 0);
	symsvc_free(unused);
	CHECK_INT(symsvc_new(s, &o, &svc), ==, 0);
	for (int i = 0; i < 2; i++) {
		int err = symsvc_index_get(svc, id, &ix);

		CHECK_INT(err, ==, -E2BIG);
		CHECK_INT(symsvc_error_reason(err), ==, SYMJSON_ERR_OVER_BUDGET);
	}
	symsvc_get_stats(svc, &st);
	CHECK_INT(st.builds, ==, 0);
	CHECK_INT(st.build_failures, ==, 1);
	CHECK_INT(st.failures_cached, ==, 1);
	symsvc_free(svc);
	store_free(s);
	CHECK_INT(rm_rf(dir), ==, 0);

	CHECK_INT(service_with(dir2, "c_O2_pie", &s, &unused, id), ==, 0);
	symsvc_free(unused);
	ember_mem_budget_init(&budget, 64 << 20);
	o = (struct symsvc_opts){ .sz = sizeof(o), .budget = &budget, .build_bytes = 32 << 20 };
	CHECK_INT(symsvc_new(s, &o, &svc), ==, 0);
	CHECK_INT(ember_mem_budget_take(&budget, 60 << 20), ==, 0); /* other work */
	for (int i = 0; i < 2; i++) {
		int err = symsvc_index_get(svc, id, &ix);

		CHECK_INT(err, ==, -EAGAIN);
		CHECK_INT(symsvc_error_reason(err), ==, SYMJSON_ERR_BUSY);
	}
	ember_mem_budget_give(&budget, 60 << 20);
	CHECK_INT(symsvc_index_get(svc, id, &ix), ==, 0);
	symsvc_index_put(svc, ix);
	CHECK_INT(ember_mem_budget_used(&budget), ==, 0); /* the build gave its share back */
	symsvc_get_stats(svc, &st);
	CHECK_INT(st.builds, ==, 1);
	CHECK_INT(st.build_failures, ==, 0);
	CHECK_INT(st.failures_cached, ==, 0);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir2);
}

/* Take every descriptor still free below the limit (at most n): one the
 * store's background threads close meanwhile would let an open succeed. */
static size_t hold_free_descriptors(int *held, size_t n)
{
	size_t k = 0;

	while (k < n && (held[k] = dup(0)) >= 0)
		k++;
	return k;
}

/*
 * A saved index that cannot be opened or mapped for a reason of ours (no
 * file descriptor left, not a file) is not damaged: the request fails as
 * the store's failure, and the saved index is kept, to be mapped once it
 * can be.
 */
static int test_symsvc__saved_index_kept_on_emfile(void)
{
	char dir[] = "/tmp/ember-symsvc-XXXXXX", id[STORE_BUILD_ID_HEX];
	struct symsvc *svc, *svc2;
	struct symsvc_index *ix;
	struct symsvc_stats st;
	char path[4096], aside[4200];
	struct store_pin pin;
	struct rlimit rl, low;
	struct store *s;
	int err, fd, held[64];
	size_t n_held;

	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	CHECK_INT(symsvc_index_get(svc, id, &ix), ==, 0); /* built and saved */
	symsvc_index_put(svc, ix);
	symsvc_free(svc);
	CHECK_INT(symsvc_new(s, NULL, &svc2), ==, 0);
	CHECK_INT(getrlimit(RLIMIT_NOFILE, &rl), ==, 0);
	fd = dup(0); /* the lowest free descriptor: every open fails from it on */
	CHECK(fd >= 0);
	close(fd);
	low = (struct rlimit){ (rlim_t)fd, rl.rlim_max };
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &low), ==, 0);
	n_held = hold_free_descriptors(held, sizeof(held) / sizeof(held[0]));
	err = symsvc_index_get(svc2, id, &ix);
	while (n_held)
		close(held[--n_held]);
	CHECK_INT(setrlimit(RLIMIT_NOFILE, &rl), ==, 0);
	CHECK_INT(err, ==, -EMFILE);
	CHECK_INT(symsvc_error_reason(err), ==, SYMJSON_ERR_STORE_UNAVAILABLE);
	/* Nor a file that cannot be mapped (here a folder in its place). */
	CHECK_INT(store_find_pin(s, id, "symidx", &pin), ==, 0);
	CHECK_INT(store_derived_path(s, pin.sha256, path, sizeof(path)), ==, 0);
	snprintf(aside, sizeof(aside), "%s.aside", path);
	CHECK_INT(rename(path, aside), ==, 0);
	CHECK_INT(mkdir(path, 0700), ==, 0);
	err = symsvc_index_get(svc2, id, &ix);
	CHECK_INT(rmdir(path), ==, 0);
	CHECK_INT(rename(aside, path), ==, 0);
	CHECK(err < 0);
	CHECK_INT(symsvc_error_reason(err), ==, SYMJSON_ERR_STORE_UNAVAILABLE);
	CHECK_INT(symsvc_index_get(svc2, id, &ix), ==, 0);
	symsvc_index_put(svc2, ix);
	symsvc_get_stats(svc2, &st);
	CHECK_INT(st.disk_loads, ==, 1); /* mapped as saved, */
	CHECK_INT(st.builds, ==, 0);     /* not built again */
	symsvc_free(svc2);
	store_free(s);
	return rm_rf(dir);
}

/* Each reason's kind, from the code alone (symsvc_error_reason()). */
static int test_symsvc__error_kind(void)
{
	CHECK_INT(symsvc_error_kind(-ENOENT), ==, EMBER_ERRK_NOT_FOUND);
	for (int e = SYM_ERR_NOT_ELF; e <= SYM_ERR_INDEX_VERSION; e++)
		CHECK_INT(symsvc_error_kind(-e), ==, EMBER_ERRK_UNPROCESSABLE);
	CHECK_INT(symsvc_error_kind(-E2BIG), ==, EMBER_ERRK_TOO_LARGE);
	CHECK_INT(symsvc_error_kind(-EHOSTUNREACH), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(symsvc_error_kind(-ETIMEDOUT), ==, EMBER_ERRK_TIMEOUT);
	CHECK_INT(symsvc_error_kind(-ENOBUFS), ==, EMBER_ERRK_OVER_LIMIT);
	CHECK_INT(symsvc_error_kind(-EAGAIN), ==, EMBER_ERRK_BUSY);
	CHECK_INT(symsvc_error_kind(-ENOMEM), ==, EMBER_ERRK_INTERNAL);
	CHECK_INT(symsvc_error_kind(-EIO), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(symsvc_error_kind(-ENOSPC), ==, EMBER_ERRK_NO_SPACE);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_symsvc__error_kind),
	UNIT_CASE(test_symsvc__replaces_index_in_use),
	UNIT_CASE(test_symsvc__store_failure_is_not_unknown),
	UNIT_CASE(test_symsvc__fetch_asks_both_files),
	UNIT_CASE(test_symsvc__lookup_in_request_order),
	UNIT_CASE(test_symsvc__json_answer_in_chunks),
	UNIT_CASE(test_symsvc__pprof_in_process),
	UNIT_CASE(test_symsvc__pprof_linear_in_mappings),
	UNIT_CASE(test_symsvc__build_bounded_by_the_server),
	UNIT_CASE(test_symsvc__saved_index_kept_on_emfile),
};

UNIT_MAIN_QUIET(cases)
