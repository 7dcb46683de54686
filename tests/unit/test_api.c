/*
 * test_api.c - unit tests of api/'s parts below HTTP: request routing
 * with the debuginfod server's error answers, the upstream miss cache,
 * the upload token, and what storing a fetched file answers.
 */
#include "api_internal.h"
#include "api_profiles.h"
#include "inspect.h"
#include "symsvc.h"
#include "unwind.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
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
		{ "/api/v1/profiles", API_EP_PROFILE_INGEST, 0 },
		{ "/ingest", API_EP_PYROSCOPE_INGEST, 0 },
		{ "/v1development/profiles", API_EP_OTLP_PROFILES, 0 },
		{ "/api/v1/query", API_EP_PROFILE_QUERY, 0 },
		{ "/api/v1/diff", API_EP_PROFILE_DIFF, 0 },
		{ "/api/v1/labels", API_EP_PROFILE_LABELS, 0 },
		{ "/api/v1/labels/service_name/values", API_EP_PROFILE_LABELS, 0 },
		{ "/api/v1/labels/service_name", API_EP_OTHER, 404 },
		{ "/api/v1/labels//values", API_EP_OTHER, 404 },
		{ "/api/v1/profile-types", API_EP_PROFILE_TYPES, 0 },
		{ "/api/v1/series", API_EP_PROFILE_SERIES, 0 },
		{ "/api/v1/coverage", API_EP_PROFILE_COVERAGE, 0 },
		{ "/api/v1/nothing", API_EP_OTHER, 404 },
		{ "/nope", API_EP_OTHER, 404 },
		{ "/no/such/path", API_EP_OTHER, 404 },
		{ "/symbolz", API_EP_OTHER, 404 },
		{ "/api/v1/artifacts", API_EP_LIST_ALL, 0 },
		{ "/index.html", API_EP_WEB, 0 },
		{ "/js/main.js", API_EP_WEB, 0 },
		{ "/ember.css", API_EP_WEB, 0 },
		{ "/js/none.js", API_EP_OTHER, 404 },
		{ "/js/../index.html", API_EP_OTHER, 404 },
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

static int rm_rf(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return run(cmd);
}

/* A new token is the whole file, and no temporary file stays. */
static int test_api__token_written_whole(void)
{
	char dir[] = "/tmp/ember-token-XXXXXX", path[300], tok[128], again[128], buf[256];
	bool created;
	FILE *f;
	size_t n;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/token.tmp", dir); /* a crash's leftover */
	CHECK((f = fopen(path, "w")));
	fputs("0123", f);
	fclose(f);
	CHECK_INT(api_token_setup(dir, NULL, tok, sizeof(tok), &created), ==, 0);
	CHECK(created);
	CHECK_INT(strlen(tok), ==, 64);
	CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/token", dir);
	CHECK((f = fopen(path, "r")));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	CHECK_STR(buf, tok);
	CHECK_INT(api_token_setup(dir, NULL, again, sizeof(again), &created), ==, 0);
	CHECK(!created);
	CHECK_STR(again, tok);
	return rm_rf(dir);
}

/* A token that cannot be written (a file size limit: write fails with
 * EFBIG) is an error, and leaves neither a token nor a temporary file:
 * the next start makes a whole one. */
static int test_api__token_write_failure_leaves_nothing(void)
{
	char dir[] = "/tmp/ember-token-XXXXXX", path[300], tok[128];
	struct rlimit old, none = { 0, 0 };
	bool created = true;
	int err;

	CHECK(mkdtemp(dir));
	CHECK_INT(getrlimit(RLIMIT_FSIZE, &old), ==, 0);
	none.rlim_max = old.rlim_max;
	signal(SIGXFSZ, SIG_IGN);
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &none), ==, 0);
	err = api_token_setup(dir, NULL, tok, sizeof(tok), &created);
	CHECK_INT(setrlimit(RLIMIT_FSIZE, &old), ==, 0);
	CHECK_INT(err, ==, -EFBIG);
	CHECK(!created);
	snprintf(path, sizeof(path), "%s/token", dir);
	CHECK(access(path, F_OK) != 0);
	snprintf(path, sizeof(path), "%s/token.tmp", dir);
	CHECK(access(path, F_OK) != 0);
	CHECK_INT(api_token_setup(dir, NULL, tok, sizeof(tok), &created), ==, 0);
	CHECK(created);
	return rm_rf(dir);
}

/* A file that is not one (rejected by the checks) is -EINVAL. */
static int test_api__rejected_fetch_is_einval(void)
{
	char dir[] = "/tmp/ember-ingest-XXXXXX", path[300];
	struct store *s;
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/not-elf", dir);
	CHECK((f = fopen(path, "w")));
	fputs("not an ELF file", f);
	fclose(f);
	CHECK_INT(store_open(dir, &s), ==, 0);
	CHECK_INT(ingest(s, path, "abcd", STORE_KIND_DEBUGINFO), ==, -EINVAL);
	store_free(s);
	return rm_rf(dir);
}

/* The one table: each kind its status (docs/http-api.md, "Error kinds"),
 * and no kind left without one. */
static int test_api__status_of_each_kind(void)
{
	static const unsigned want[EMBER_ERRK_COUNT] = {
		[EMBER_ERRK_UNAVAILABLE] = 503, [EMBER_ERRK_MALFORMED] = 400,
		[EMBER_ERRK_OVER_LIMIT] = 400,	[EMBER_ERRK_TOO_LARGE] = 413,
		[EMBER_ERRK_CAPACITY] = 429,	[EMBER_ERRK_UNSUPPORTED] = 415,
		[EMBER_ERRK_UNPROCESSABLE] = 422, [EMBER_ERRK_CONFLICT] = 409,
		[EMBER_ERRK_NOT_FOUND] = 404,	[EMBER_ERRK_CORRUPT] = 500,
		[EMBER_ERRK_NO_SPACE] = 507,	[EMBER_ERRK_BUSY] = 503,
		[EMBER_ERRK_INTERNAL] = 500,	[EMBER_ERRK_TIMEOUT] = 504,
	};

	for (int k = 0; k < EMBER_ERRK_COUNT; k++) {
		CHECK(want[k] != 0); /* a kind added without its row here */
		CHECK(strcmp(ember_errkind_name(k), "?") != 0);
		CHECK_INT(api_status_of_kind(k), ==, want[k]);
	}
	CHECK_INT(api_status_of_kind(ember_errkind_of_errno(-ENOSPC)), ==, 507);
	CHECK_INT(api_status_of_kind(ember_errkind_of_errno(-EIO)), ==, 503);
	CHECK_INT(api_status_of_kind(ember_errkind_of_errno(-EAGAIN)), ==, 503);
	CHECK_INT(api_status_of_kind(ember_errkind_of_errno(-ENOENT)), ==, 503); /* never 404 */
	return 0;
}

/* A profile store error's status comes from its code: the size limits
 * 413 and the other limits 400 whatever their messages say (it was
 * chosen by searching the message for "bytes, larger than" once). */
static int test_api__profile_status_from_the_code_alone(void)
{
	static const struct {
		int err;
		unsigned status;
	} want[] = {
		{ -PSTORE_ERR_TOO_LARGE, 413 }, { -PSTORE_ERR_LIMIT, 400 },
		{ -PSTORE_ERR_LABEL, 400 },	{ -PSTORE_ERR_SELECTOR, 400 },
		{ -PSTORE_ERR_TYPE, 400 },	{ -EINVAL, 400 },
		{ -PSTORE_ERR_SERIES_LIMIT, 429 }, { -PSTORE_ERR_CORRUPT, 500 },
		{ -PSTORE_ERR_CLOSED, 503 },	{ -EIO, 503 },
		{ -ENOMEM, 503 },		{ -ENOSPC, 507 },
		{ -EDQUOT, 507 },		{ -EFBIG, 507 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_INT(api_profile_error_status(want[i].err), ==, want[i].status);
	return 0;
}

/* Each route's error mapping takes a code and nothing else (no message
 * can take part), and answers the statuses docs/http-api.md lists. */
static int test_api__route_status_from_the_code_alone(void)
{
	static const struct {
		enum ember_errkind (*kind)(int err);
		int err;
		unsigned status;
	} want[] = {
		{ api_unwind_error_kind, -UNWIND_ERR_NO_CFI, 404 },
		{ api_unwind_error_kind, -UNWIND_ERR_BAD_CFI, 422 },
		{ api_unwind_error_kind, -UNWIND_ERR_LIMIT, 422 },
		{ api_unwind_error_kind, -E2BIG, 422 },
		{ api_unwind_error_kind, -EAGAIN, 503 },
		{ api_unwind_error_kind, -EIO, 503 },
		{ api_unwind_error_kind, -ENOENT, 503 },
		{ api_unwind_error_kind, -ENOSPC, 503 }, /* a GET: never 507 */
		{ api_symbolize_pprof_error_kind, -E2BIG, 413 },
		{ api_symbolize_pprof_error_kind, -EAGAIN, 503 },
		{ api_symbolize_pprof_error_kind, -ETIMEDOUT, 504 },
		{ api_symbolize_pprof_error_kind, -ENOMEM, 500 },
		{ api_symbolize_pprof_error_kind, -EINVAL, 500 },
		{ api_symbolize_pprof_store_kind, -EAGAIN, 503 },
		{ api_symbolize_pprof_store_kind, -EIO, 503 },
		{ api_symbolize_pprof_store_kind, -ENOMEM, 503 },
		{ symsvc_error_kind, -ENOMEM, 500 },
		{ symsvc_error_kind, -EIO, 503 },
		{ symsvc_error_kind, -ETIMEDOUT, 504 },
		{ api_upstream_error_kind, 0, 404 },
		{ api_upstream_error_kind, -ENOENT, 404 },
		{ api_upstream_error_kind, -ETIMEDOUT, 504 },
		{ api_upstream_error_kind, -EHOSTUNREACH, 503 },
		{ api_upstream_error_kind, -ECANCELED, 503 },
		{ api_upstream_error_kind, -EIO, 503 },
		{ api_upstream_error_kind, -ENOSPC, 503 },
		{ api_body_error_kind, -EAGAIN, 503 },
		{ api_body_error_kind, -ENOMEM, 500 },
		{ api_body_error_kind, -E2BIG, 413 },
		{ api_body_error_kind, -EINVAL, 400 },
		{ api_sources_error_kind, -E2BIG, 413 },
		{ api_sources_error_kind, -EINVAL, 422 },
		{ api_sources_error_kind, -ENOSPC, 507 },
		{ api_sources_error_kind, -EIO, 503 },
		{ inspect_error_kind, -INSPECT_ERR_NOT_ELF, 415 },
		{ inspect_error_kind, -INSPECT_ERR_NO_BUILD_ID, 422 },
		{ inspect_error_kind, -EIO, 503 },
		{ store_error_kind, -ENOENT, 404 },
		{ store_error_kind, -EIO, 503 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_INT(api_status_of_kind(want[i].kind(want[i].err)), ==, want[i].status);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_api__route_status_from_the_code_alone),
	UNIT_CASE(test_api__routes),
	UNIT_CASE(test_api__long_build_id_is_not_found),
	UNIT_CASE(test_api__source_path_canonicalized),
	UNIT_CASE(test_api__token_written_whole),
	UNIT_CASE(test_api__token_write_failure_leaves_nothing),
	UNIT_CASE(test_api__rejected_fetch_is_einval),
	UNIT_CASE(test_api__status_of_each_kind),
	UNIT_CASE(test_api__profile_status_from_the_code_alone),
};

int main(int argc, char **argv)
{
	return unit_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
