/*
 * test_api.c - unit tests of api/'s pure parts: request routing with the
 * debuginfod server's error answers, and the upstream miss cache.
 */
#include "api_internal.h"
#include "miss_cache.h"
#include "unit.h"

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

#define CASE(n) { #n, n }
static const struct unit_case cases[] = {
	CASE(test_api__routes),
	CASE(test_api__long_build_id_is_not_found),
	CASE(test_api__source_path_canonicalized),
	CASE(test_api__miss_cache_expires),
};

int main(int argc, char **argv)
{
	return unit_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
