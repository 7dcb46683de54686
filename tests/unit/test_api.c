/*
 * test_api.c - unit tests of api/'s parts below HTTP: request routing
 * with the debuginfod server's error answers, the upstream miss cache,
 * and the symbol cache's replacement of an index while it is in use.
 */
#include "api_internal.h"
#include "miss_cache.h"
#include "symcache.h"
#include "unit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static int test_api__routes(void)
{
	static const struct { const char *url; enum api_endpoint ep; int status; } want[] = {
		{ "/", API_EP_ROOT, 0 },
		{ "/healthz", API_EP_HEALTH, 0 },
		{ "/metrics", API_EP_METRICS, 0 },
		{ "/buildid/abcd/debuginfo", API_EP_DEBUGINFO, 0 },
		{ "/buildid/abcd/debuginfo/", API_EP_DEBUGINFO, 0 },
		{ "/buildid/abcd/executable", API_EP_EXECUTABLE, 0 },
		{ "/buildid/abcd/source/usr/src/a.c", API_EP_SOURCE, 0 },
		{ "/buildid/abcd/section/.debug_info", API_EP_SECTION, 0 },
		{ "/buildid/ABCD/debuginfo", API_EP_OTHER, 503 },
		{ "/buildid/abc/debuginfo", API_EP_OTHER, 503 },
		{ "/buildid//debuginfo", API_EP_OTHER, 503 },
		{ "/buildid/abcd", API_EP_OTHER, 503 },
		{ "/buildid/abcd/", API_EP_OTHER, 503 },
		{ "/buildid/abcd/debuginfox", API_EP_OTHER, 503 },
		{ "/buildid/abcd/source", API_EP_OTHER, 503 },
		{ "/buildid/abcd/source/", API_EP_OTHER, 503 },
		{ "/buildid/abcd/section/a/b", API_EP_OTHER, 503 },
		{ "/api/v1/artifacts/abcd", API_EP_LIST, 0 },
		{ "/api/v1/artifacts/abcd/debuginfo", API_EP_UPLOAD, 0 },
		{ "/api/v1/artifacts/abcd/sources", API_EP_UPLOAD, 0 },
		{ "/api/v1/artifacts/abcd/other", API_EP_UPLOAD, 404 },
		{ "/api/v1/unwind/abcd", API_EP_UNWIND, 0 },
		{ "/api/v1/unwind/abcd/x", API_EP_OTHER, 404 },
		{ "/api/v1/unwind/ABCD", API_EP_OTHER, 503 },
		{ "/nope", API_EP_OTHER, 503 },
	};
	struct api_route r;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		api_route_parse(want[i].url, &r);
		if (r.ep != want[i].ep || r.status != want[i].status)
			fprintf(stderr, "route '%s': ep %d status %d\n", want[i].url, r.ep, r.status);
		CHECK_INT(r.ep, ==, want[i].ep);
		CHECK_INT(r.status, ==, want[i].status);
	}
	return 0;
}

static int test_api__long_build_id_is_not_found(void)
{
	char url[600] = "/buildid/";
	struct api_route r;

	for (int i = 0; i < 260; i++)
		strcat(url, "ab");
	strcat(url, "/debuginfo");
	api_route_parse(url, &r);
	CHECK_INT(r.status, ==, 404);
	return 0;
}

static int test_api__source_path_canonicalized(void)
{
	struct api_route r;

	api_route_parse("/buildid/00ff/source/a/./b//../../../etc/passwd", &r);
	CHECK_INT(r.ep, ==, API_EP_SOURCE);
	CHECK_STR(r.path, "/etc/passwd");
	CHECK_STR(r.build_id, "00ff");
	return 0;
}

static int test_api__miss_cache_expires(void)
{
	struct miss_cache *mc = miss_cache_new(0);

	CHECK(mc);
	miss_cache_put(mc, "k");
	CHECK(!miss_cache_has(mc, "k")); /* ttl 0: gone at once */
	miss_cache_free(mc);
	mc = miss_cache_new(600);
	miss_cache_put(mc, "k");
	CHECK(miss_cache_has(mc, "k"));
	CHECK(!miss_cache_has(mc, "other"));
	miss_cache_free(mc);
	return 0;
}

/* Run a shell command; 0 when it exited 0. */
static int run(const char *cmd)
{
	return system(cmd) == 0 ? 0 : -1;
}

static int ingest(struct store *s, const char *path, const char *id, unsigned kind)
{
	int fd = open(path, O_RDONLY), err;

	if (fd < 0)
		return -1;
	err = api_ingest_fd(s, fd, id, kind, "f");
	close(fd);
	return err;
}

/* The source answering for the main symbol's address, or -1. */
static int source_at(const struct symcache_entry *e, uint64_t addr)
{
	struct sym_frame f[16];
	int n = sym_index_lookup(symcache_index(e), addr, SYM_ADDR_VADDR, 0, f, 16);

	return n > 0 ? (int)f[n - 1].source : -1;
}

/*
 * A request holds the index of a build ID when a debug file arrives: the
 * next request gets a new index from it, the held one stays usable until
 * released, and then it is freed once (ASan checks).
 */
static int test_api__symcache_replaces_index_in_use(void)
{
	char dir[] = "/tmp/ember-symcache-XXXXXX", full[4096], nodebug[4200], cmd[9000];
	char id[2 * EMBER_BUILD_ID_MAX + 1], line[256];
	struct symcache_entry *old, *new;
	struct symcache_stats st;
	struct sym_index_stats full_st, nodebug_st;
	struct symcache *c;
	struct store *s;
	struct sym_index *idx;
	uint64_t budget;
	const uint8_t *raw;
	unsigned long long main_addr = 0;
	size_t len;
	int err;
	FILE *p;

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
	raw = sym_index_build_id(idx, &len);
	CHECK(raw && ember_build_id_to_hex(raw, len, id) == 0);
	sym_index_get_stats(idx, &full_st);
	sym_index_free(idx);
	idx = sym_index_open(nodebug, NULL, &err);
	CHECK(idx);
	sym_index_get_stats(idx, &nodebug_st);
	sym_index_free(idx);
	/* A budget that holds either index but not both (the stored ones
	 * differ from these by a few bytes of strings): releasing the old
	 * one must evict it exactly once. */
	budget = full_st.bytes + nodebug_st.bytes / 2;
	snprintf(cmd, sizeof(cmd), "readelf -sW '%s' | awk '$4 == \"FUNC\" && $8 == \"main\" { print $2 }'",
		 full);
	p = popen(cmd, "r");
	CHECK(p && fgets(line, sizeof(line), p));
	pclose(p);
	main_addr = strtoull(line, NULL, 16);
	CHECK(main_addr);

	CHECK_INT(store_open(dir, &s), ==, 0);
	CHECK_INT(symcache_new(s, budget, &c), ==, 0);
	CHECK_INT(ingest(s, nodebug, id, STORE_KIND_EXECUTABLE), ==, 0);
	CHECK_INT(symcache_get(c, id, &old), ==, 0);
	CHECK_INT(source_at(old, main_addr), ==, SYM_SOURCE_SYMTAB);
	CHECK_INT(ingest(s, full, id, STORE_KIND_DEBUGINFO), ==, 0);
	CHECK_INT(symcache_get(c, id, &new), ==, 0);
	CHECK(new != old);
	CHECK_INT(source_at(new, main_addr), ==, SYM_SOURCE_DWARF);
	CHECK_INT(source_at(old, main_addr), ==, SYM_SOURCE_SYMTAB); /* still usable */
	symcache_get_stats(c, &st);
	CHECK(st.bytes > st.budget); /* the old one waits for its user */
	symcache_put(c, old);
	symcache_get_stats(c, &st);
	CHECK_INT(st.rebuilds, ==, 1);
	CHECK_INT(st.loaded, ==, 1);
	CHECK_INT(st.builds, ==, 2);
	symcache_put(c, new);
	CHECK_INT(symcache_get(c, id, &new), ==, 0); /* the same, cached */
	symcache_get_stats(c, &st);
	CHECK_INT(st.builds, ==, 2);
	symcache_put(c, new);
	symcache_free(c);
	store_free(s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return run(cmd);
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_api__routes),
	UNIT_CASE(test_api__long_build_id_is_not_found),
	UNIT_CASE(test_api__source_path_canonicalized),
	UNIT_CASE(test_api__miss_cache_expires),
	UNIT_CASE(test_api__symcache_replaces_index_in_use),
};

int main(int argc, char **argv)
{
	return unit_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
