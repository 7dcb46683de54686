/*
 * cmd_serve.c - `ember serve`: the debuginfo store behind the HTTP server.
 *
 * Sets up what the server does not own: the data directory, the upload
 * token (and the ingest token), the profile store's place (DATA/profiles,
 * its retention and --scrape targets), and libdebuginfod's environment for
 * upstream servers
 * (DEBUGINFOD_URLS from --upstream, its cache inside the data directory,
 * its negative-cache time equal to ours), all before any thread starts.
 * Then it serves until SIGINT or SIGTERM.  docs/cli.md documents it.
 */
#include "api.h"
#include "bucket.h"
#include "cli.h"
#include "common.h"
#include "otlp_grpc.h"
#include "pstore.h"
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_UPSTREAMS 16
#define MAX_SCRAPES 64

struct serve_opts {
	const char *listen;
	const char *data;
	const char *token_file;
	const char *upstreams[MAX_UPSTREAMS];
	unsigned n_upstreams;
	unsigned long long max_upload_mb;
	unsigned miss_ttl;
	unsigned max_connections;
	unsigned max_per_client;
	unsigned header_timeout;
	unsigned request_timeout;
	int min_upload_rate;	/* KiB/s; 0: the default; -1: none (given 0) */
	unsigned max_fetches;
	unsigned long long upstream_max_mb;
	unsigned long long upstream_quota_mb;
	unsigned long long memory_limit_mb;
	unsigned long long symbol_cache_mb;
	/* the profile store (issue 15) */
	const char *ingest_token_file;
	const char *scrape[MAX_SCRAPES];
	unsigned n_scrape;
	long long retention_s, rollup_retention_s;
	unsigned long long max_profile_mb;
	unsigned long long max_series;
	long long head_age_s;
	long long max_age_s, max_future_s; /* 0: the default; -1: none (given 0) */
	/* tenants (issue 27) */
	bool multitenancy;
	unsigned long long max_tenants;
	long long tenant_idle_s;	/* 0: the default; -1: never (given 0) */
	const char *tokens_file;
	const char *limits_file;
	const char *rules_file;
	/* the bucket (issue 18) */
	const char *storage;
	const char *s3_endpoint;
	const char *s3_region;
	const char *s3_addressing;
	long long s3_abandon_s;
	unsigned long long cache_mb;
	long long profile_refresh_s;
	long long profile_lease_s;
	/* OTLP/gRPC (issue 24) */
	const char *otlp_grpc_listen;
	unsigned otlp_grpc_max_connections;
};

static void serve_usage(FILE *f)
{
	fputs("usage: ember serve [options]\n"
	      "  --listen ADDR:PORT      address to serve on (default 127.0.0.1:8002;\n"
	      "                          port 0 picks a free one; [::1]:PORT for IPv6)\n"
	      "  --data DIR              data directory (default ./ember-data)\n"
	      "  --token-file FILE       upload token (default DIR/token, made at first start)\n"
	      "  --max-upload-mb N       largest accepted upload (default 4096)\n"
	      "  --upstream URL          debuginfod server to ask on a miss (repeatable;\n"
	      "                          default: $DEBUGINFOD_URLS)\n"
	      "  --upstream-miss-ttl S   seconds an upstream miss is remembered (default 600)\n"
	      "  --upstream-max-size-mb N\n"
	      "                          largest file fetched from upstream (default:\n"
	      "                          --max-upload-mb)\n"
	      "  --upstream-quota-mb N   disk kept for what upstream sent, the oldest\n"
	      "                          evicted past it (default 10240; uploads never)\n"
	      "  --upstream-fetches-per-request N\n"
	      "                          build IDs one symbolization request, profile\n"
	      "                          query or profile write's ingest may have\n"
	      "                          fetched from upstream (default 16)\n"
	      "  --max-connections N     open connections, a thread each (default 1024,\n"
	      "                          fewer when the file descriptor limit is lower)\n"
	      "  --max-connections-per-client N\n"
	      "                          open connections of one client address (default 64)\n"
	      "  --header-timeout S      seconds a request head may take to arrive, from\n"
	      "                          the connection's start or previous answer (default 20)\n"
	      "  --request-timeout S     seconds from a request's head to its answer, a\n"
	      "                          symbolization or profile body included (default 60)\n"
	      "  --min-upload-rate-kb N  KiB a second an upload's body must average from\n"
	      "                          10 s after its head on (default 16; 0: no minimum)\n"
	      "  --memory-limit-mb N     memory the server stays under, whatever clients\n"
	      "                          send (default 1024; docs/security.md)\n"
	      "  --symbol-cache-mb N     of it, for loaded symbol indexes (default: half)\n"
	      "  --retention DURATION    profiles kept (default 14d; 36h, 90m, seconds)\n"
	      "  --rollup-retention DURATION  their per-minute, hour, 6-hour and day sums\n"
	      "                          kept (default 90d)\n"
	      "  --ingest-token-file F   a second token that may write profiles only\n"
	      "  --max-profile-mb N      largest profile accepted as sent (default 16)\n"
	      "  --max-series N          distinct series the profile store takes (100000)\n"
	      "  --max-profile-age D     profiles dated older are refused (default 1h;\n"
	      "                          0: no limit)\n"
	      "  --max-profile-future D  profiles dated further ahead are refused\n"
	      "                          (default 10m; 0: no limit)\n"
	      "  --profile-head-age D    profiles kept in the log before they are written\n"
	      "                          as blocks (default 60s)\n"
	      "  --multitenancy          every profile request names its tenant with\n"
	      "                          X-Scope-OrgID; a store each (default: off, all\n"
	      "                          the tenant anonymous)\n"
	      "  --max-tenants N         tenants besides anonymous open at once (64)\n"
	      "  --tenant-idle D         a tenant's store closed after D without a\n"
	      "                          request (default 15m; 0: never)\n"
	      "  --tokens FILE           with --multitenancy: 'TOKEN TENANT' lines, each\n"
	      "                          token writing its tenant's profiles only; read\n"
	      "                          again on SIGHUP\n"
	      "  --limits FILE           per-tenant limits, 'TENANT key=value ...' lines\n"
	      "                          ('default' for the rest); read again on SIGHUP\n"
	      "  --rules FILE            per-tenant ingest rules, 'TENANT relabel\n"
	      "                          key=value ...' lines; read again on SIGHUP\n"
	      "  --otlp-grpc-listen ADDR:PORT\n"
	      "                          serve OTLP/gRPC profiles (ProfilesService/Export,\n"
	      "                          cleartext HTTP/2) there too (default: off)\n"
	      "  --otlp-grpc-max-connections N\n"
	      "                          open OTLP/gRPC connections (default 256)\n"
	      "  --scrape URL[,interval=D][,NAME=VALUE...]\n"
	      "                          pull a Go net/http/pprof target (repeatable)\n"
	      "  --storage s3://BUCKET[/PREFIX]\n"
	      "                          keep records and files in an S3 bucket, DIR\n"
	      "                          only as their index and cache (default: DIR);\n"
	      "                          credentials: $AWS_ACCESS_KEY_ID and\n"
	      "                          $AWS_SECRET_ACCESS_KEY, else ~/.aws/credentials\n"
	      "                          ($AWS_SHARED_CREDENTIALS_FILE, $AWS_PROFILE)\n"
	      "  --s3-endpoint URL       the S3 service (default: AWS, by region)\n"
	      "  --s3-region R           (default $AWS_REGION, else us-east-1)\n"
	      "  --s3-addressing A       path or virtual-host (default: path for\n"
	      "                          --s3-endpoint, virtual-host for AWS)\n"
	      "  --cache-mb N            with --storage: disk for files fetched or\n"
	      "                          uploaded and profile blocks, together; least\n"
	      "                          recently used dropped (default: no bound)\n"
	      "  --s3-abandoned-after D  unfinished uploads older than this are aborted\n"
	      "                          at start (default 1h)\n"
	      "  --profile-refresh D     with --storage: how old the list of profile\n"
	      "                          blocks other replicas wrote may be (default 2s)\n"
	      "  --profile-lease-expiry D with --storage: a replica whose lease is this\n"
	      "                          old has its log of pushes taken over (default\n"
	      "                          3 times --profile-head-age)\n"
	      "  --log-level LEVEL       error, warn, info (default) or debug; also\n"
	      "                          $EMBER_LOG_LEVEL\n",
	      f);
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s ? s : "", &end, 10);
	if (!s || !*s || *end || errno || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "14d", "36h", "90m", "45s" or seconds: at least min seconds. */
static int parse_seconds(const char *s, long long *out, unsigned long long min)
{
	unsigned long long v, mult = 1;
	size_t n = s ? strlen(s) : 0;
	char num[32];

	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n + 1);
	switch (num[n - 1]) {
	case 'd':
		mult = 86400;
		break;
	case 'h':
		mult = 3600;
		break;
	case 'm':
		mult = 60;
		break;
	case 's':
		break;
	default:
		n++; /* a plain number */
	}
	num[n - 1] = '\0';
	if (parse_uint(num, (1ull << 40) / mult, &v) || v * mult < min)
		return -EINVAL;
	*out = (long long)(v * mult);
	return 0;
}

static int parse_listen(const char *s, char *addr, size_t size, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	unsigned long long p;
	size_t alen;

	if (!colon || parse_uint(colon + 1, 65535, &p))
		return -EINVAL;
	alen = (size_t)(colon - s);
	if (alen >= 2 && s[0] == '[' && s[alen - 1] == ']') {
		s++;
		alen -= 2;
	}
	if (alen == 0 || alen >= size)
		return -EINVAL;
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	*port = (uint16_t)p;
	return 0;
}

static int parse_one(struct serve_opts *o, const char *opt, const char *val)
{
	unsigned long long v;
	long long t;

	if (!val)
		return -EINVAL;
	if (strcmp(opt, "--listen") == 0)
		o->listen = val;
	else if (strcmp(opt, "--data") == 0)
		o->data = val;
	else if (strcmp(opt, "--token-file") == 0)
		o->token_file = val;
	else if (strcmp(opt, "--upstream") == 0 && o->n_upstreams < MAX_UPSTREAMS)
		o->upstreams[o->n_upstreams++] = val;
	else if (strcmp(opt, "--max-upload-mb") == 0 && !parse_uint(val, 1ull << 30, &v) && v)
		o->max_upload_mb = v;
	else if (strcmp(opt, "--upstream-miss-ttl") == 0 && !parse_uint(val, 1u << 30, &v))
		o->miss_ttl = (unsigned)v;
	else if (strcmp(opt, "--max-connections") == 0 && !parse_uint(val, 65536, &v) && v)
		o->max_connections = (unsigned)v;
	else if (strcmp(opt, "--upstream-max-size-mb") == 0 && !parse_uint(val, 1ull << 30, &v) &&
		 v)
		o->upstream_max_mb = v;
	else if (strcmp(opt, "--upstream-quota-mb") == 0 && !parse_uint(val, 1ull << 40, &v) &&
		 v)
		o->upstream_quota_mb = v;
	else if (strcmp(opt, "--upstream-fetches-per-request") == 0 &&
		 !parse_uint(val, 1u << 20, &v) && v)
		o->max_fetches = (unsigned)v;
	else if (strcmp(opt, "--max-connections-per-client") == 0 && !parse_uint(val, 65536, &v) &&
		 v)
		o->max_per_client = (unsigned)v;
	else if (strcmp(opt, "--header-timeout") == 0 && !parse_uint(val, 86400, &v) && v)
		o->header_timeout = (unsigned)v;
	else if (strcmp(opt, "--request-timeout") == 0 && !parse_uint(val, 86400, &v) && v)
		o->request_timeout = (unsigned)v;
	else if (strcmp(opt, "--min-upload-rate-kb") == 0 && !parse_uint(val, 1u << 20, &v))
		o->min_upload_rate = v ? (int)v : -1;
	else if (strcmp(opt, "--memory-limit-mb") == 0 && !parse_uint(val, 1ull << 30, &v) &&
		 v >= 64)
		o->memory_limit_mb = v;
	else if (strcmp(opt, "--symbol-cache-mb") == 0 && !parse_uint(val, 1ull << 30, &v) && v)
		o->symbol_cache_mb = v;
	else if (strcmp(opt, "--retention") == 0 && !parse_seconds(val, &o->retention_s, 60))
		;
	else if (strcmp(opt, "--rollup-retention") == 0 &&
		 !parse_seconds(val, &o->rollup_retention_s, 60))
		;
	else if (strcmp(opt, "--ingest-token-file") == 0)
		o->ingest_token_file = val;
	else if (strcmp(opt, "--max-profile-mb") == 0 && !parse_uint(val, 4096, &v) && v)
		o->max_profile_mb = v;
	else if (strcmp(opt, "--max-series") == 0 && !parse_uint(val, 1ull << 31, &v) && v)
		o->max_series = v;
	else if (strcmp(opt, "--max-tenants") == 0 && !parse_uint(val, 65536, &v) && v)
		o->max_tenants = v;
	else if (strcmp(opt, "--tenant-idle") == 0 && !parse_seconds(val, &t, 0))
		o->tenant_idle_s = t ? t : -1;
	else if (strcmp(opt, "--tokens") == 0)
		o->tokens_file = val;
	else if (strcmp(opt, "--limits") == 0)
		o->limits_file = val;
	else if (strcmp(opt, "--rules") == 0)
		o->rules_file = val;
	else if (strcmp(opt, "--profile-head-age") == 0 && !parse_seconds(val, &o->head_age_s, 1))
		;
	else if (strcmp(opt, "--max-profile-age") == 0 && !parse_seconds(val, &t, 0))
		o->max_age_s = t ? t : -1;
	else if (strcmp(opt, "--max-profile-future") == 0 && !parse_seconds(val, &t, 0))
		o->max_future_s = t ? t : -1;
	else if (strcmp(opt, "--profile-refresh") == 0 &&
		 !parse_seconds(val, &o->profile_refresh_s, 1))
		;
	else if (strcmp(opt, "--profile-lease-expiry") == 0 &&
		 !parse_seconds(val, &o->profile_lease_s, 1))
		;
	else if (strcmp(opt, "--storage") == 0)
		o->storage = val;
	else if (strcmp(opt, "--s3-endpoint") == 0)
		o->s3_endpoint = val;
	else if (strcmp(opt, "--s3-region") == 0)
		o->s3_region = val;
	else if (strcmp(opt, "--s3-addressing") == 0 &&
		 (strcmp(val, "path") == 0 || strcmp(val, "virtual-host") == 0))
		o->s3_addressing = val;
	else if (strcmp(opt, "--cache-mb") == 0 && !parse_uint(val, 1ull << 40, &v) && v)
		o->cache_mb = v;
	else if (strcmp(opt, "--s3-abandoned-after") == 0 &&
		 !parse_seconds(val, &o->s3_abandon_s, 1))
		;
	else if (strcmp(opt, "--otlp-grpc-listen") == 0)
		o->otlp_grpc_listen = val;
	else if (strcmp(opt, "--otlp-grpc-max-connections") == 0 &&
		 !parse_uint(val, 65536, &v) && v)
		o->otlp_grpc_max_connections = (unsigned)v;
	else if (strcmp(opt, "--scrape") == 0 && o->n_scrape < MAX_SCRAPES)
		o->scrape[o->n_scrape++] = val;
	else
		return -EINVAL;
	return 0;
}

static int parse_args(int argc, char **argv, struct serve_opts *o)
{
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		char opt[64];

		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
		if (strcmp(argv[i], "--multitenancy") == 0) { /* the one option without a value */
			o->multitenancy = true;
			continue;
		}
		if (eq && (size_t)(eq - argv[i]) < sizeof(opt)) {
			snprintf(opt, sizeof(opt), "%.*s", (int)(eq - argv[i]), argv[i]);
			if (parse_one(o, opt, eq + 1) == 0)
				continue;
		} else if (parse_one(o, argv[i], i + 1 < argc ? argv[i + 1] : NULL) == 0) {
			i++;
			continue;
		}
		fprintf(stderr, "ember serve: bad option or value '%s'\n", argv[i]);
		return -EINVAL;
	}
	return 0;
}

/* The largest blob this server stores, so the largest one it takes from
 * the bucket: --max-upload-mb or --upstream-max-size-mb, the larger. */
static uint64_t blob_max_bytes(const struct serve_opts *o)
{
	unsigned long long max = o->upstream_max_mb > o->max_upload_mb ? o->upstream_max_mb
									: o->max_upload_mb;

	return (uint64_t)max << 20;
}

/* The largest file fetched: --upstream-max-size-mb (else --max-upload-mb),
 * at most the quota. */
static unsigned long long upstream_max_bytes(const struct serve_opts *o)
{
	unsigned long long max = o->upstream_max_mb ? o->upstream_max_mb : o->max_upload_mb;
	unsigned long long quota = o->upstream_quota_mb ? o->upstream_quota_mb
						       : API_UPSTREAM_QUOTA >> 20;

	return (max < quota ? max : quota) << 20;
}

/* libdebuginfod reads its configuration from the environment only. */
static int setup_upstream(const struct serve_opts *o, bool *enabled)
{
	char path[4096], urls[8192] = "";
	size_t len = 0;
	FILE *f;

	for (unsigned i = 0; i < o->n_upstreams; i++)
		len += (size_t)snprintf(urls + len, len < sizeof(urls) ? sizeof(urls) - len : 0,
					"%s%s", i ? " " : "", o->upstreams[i]);
	if (len >= sizeof(urls))
		return -E2BIG;
	if (o->n_upstreams && setenv("DEBUGINFOD_URLS", urls, 1))
		return -errno;
	*enabled = getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS");
	if (!*enabled)
		return 0; /* libdebuginfod is never loaded: nothing to set up */
	snprintf(path, sizeof(path), "%s/upstream-cache", o->data);
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (setenv("DEBUGINFOD_CACHE_PATH", path, 1))
		return -errno;
	/* A file larger than we keep is refused before it is downloaded; a
	 * fetch never holds a fetch thread for more than 10 minutes (unless
	 * the environment says otherwise). */
	snprintf(path, sizeof(path), "%llu", upstream_max_bytes(o));
	if (setenv("DEBUGINFOD_MAXSIZE", path, 1) || setenv("DEBUGINFOD_MAXTIME", "600", 0))
		return -errno;
	snprintf(path, sizeof(path), "%s/upstream-cache/cache_miss_s", o->data);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "%u\n", o->miss_ttl);
	return fclose(f) ? -errno : 0;
}

/*
 * Raise the soft file descriptor limit to the hard one (each connection
 * holds a socket, and a file while it is sent: 1,024 connections would
 * meet the usual soft limit of 1,024 and make blob opens fail with
 * EMFILE), then size --max-connections by it.  An explicit value that
 * does not fit is refused.
 */
static int size_connections(struct serve_opts *o)
{
	struct rlimit rl;
	unsigned long long fit;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return -errno;
	}
	fit = rl.rlim_cur > API_FDS_RESERVED
		      ? (rl.rlim_cur - API_FDS_RESERVED) / API_FDS_PER_CONNECTION : 0;
	if (!o->max_connections) {
		o->max_connections = fit < API_MAX_CONNECTIONS ? (unsigned)fit : API_MAX_CONNECTIONS;
	} else if (o->max_connections > fit) {
		fprintf(stderr, "ember serve: --max-connections %u needs %u file descriptors; "
				"the limit (RLIMIT_NOFILE) is %llu\n",
			o->max_connections,
			o->max_connections * API_FDS_PER_CONNECTION + API_FDS_RESERVED,
			(unsigned long long)rl.rlim_cur);
		return -EMFILE;
	}
	if (!o->max_connections) {
		fprintf(stderr, "ember serve: the file descriptor limit (RLIMIT_NOFILE) of %llu "
				"leaves room for no connection\n",
			(unsigned long long)rl.rlim_cur);
		return -EMFILE;
	}
	pr_info("ember serve: at most %u connections, %u per client address "
		"(file descriptor limit %llu)",
		o->max_connections, o->max_per_client ? o->max_per_client : API_MAX_PER_CLIENT,
		(unsigned long long)rl.rlim_cur);
	return 0;
}

/* The signals the main thread waits for: SIGINT, SIGTERM, and with
 * --limits, --rules or --tokens SIGHUP (else its default, the end, as
 * before). */
static void serve_signals(const struct serve_opts *o, sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	if (o->limits_file || o->rules_file || o->tokens_file)
		sigaddset(set, SIGHUP);
}

/* Until SIGINT or SIGTERM; each SIGHUP reads --limits, --rules and
 * --tokens again. */
static void wait_for_signal(const struct serve_opts *o, struct api_server *srv)
{
	sigset_t set;
	int sig;

	serve_signals(o, &set);
	while (!sigwait(&set, &sig) && sig == SIGHUP) {
		api_server_reload(srv); /* logged either way */
	}
}

static void block_signals(const struct serve_opts *o)
{
	sigset_t set;

	serve_signals(o, &set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN); /* a file size limit is a failed write, not death */
}

/*
 * RocksDB is loaded (dlopen) with the dynamic loader's lock held for
 * 10-15 ms, and pthread_create() waits for that lock: every connection
 * accepted meanwhile (a thread each) would wait too.  So the store opens
 * a moment after the start, once the first requests are answered from
 * pinned indexes, or at once when a request needs a record (store_wait()
 * begins it).
 */
#define STORE_OPEN_GRACE_MS 50

static void wait_before_store_open(void)
{
	struct timespec ts = { 0, STORE_OPEN_GRACE_MS * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * What a start set up, at info level: the data directory, where the
 * token came from (the token itself only when it was just made: logs end
 * up in journald and CI output), the upstream servers and whether they
 * came from --upstream or an inherited DEBUGINFOD_URLS (elfutils'
 * debuginfod federates the same way, so a server can start federating
 * without anyone asking for it).
 */
static void log_start(const struct serve_opts *o, const char *token, bool created,
		      bool upstream)
{
	char token_path[4096];

	snprintf(token_path, sizeof(token_path), "%s/token", o->data);
	pr_info("ember serve: data directory '%s'", o->data);
	if (created)
		printf("ember: new upload token %s (kept in '%s/token')\n", token, o->data);
	else
		pr_info("ember serve: upload token from '%s'",
			o->token_file ? o->token_file : token_path);
	if (upstream)
		pr_info("ember serve: upstream servers %s (from %s)", getenv("DEBUGINFOD_URLS"),
			o->n_upstreams ? "--upstream" : "the environment's DEBUGINFOD_URLS");
	else
		pr_info("ember serve: no upstream servers (neither --upstream nor "
			"DEBUGINFOD_URLS)");
}

/* The web UI's address (docs/web-ui.md): the one to open on this machine
 * when the server listens on every address. */
static void print_ui_url(const char *addr, uint16_t port)
{
	bool v6 = strchr(addr, ':') != NULL;

	if (strcmp(addr, "0.0.0.0") == 0)
		addr = "127.0.0.1";
	else if (strcmp(addr, "::") == 0)
		addr = "::1";
	printf("ember: web UI: http://%s%s%s:%u/\n", v6 ? "[" : "", addr, v6 ? "]" : "", port);
}

/* The profile store under DATA/profiles, its ingest token read. */
static int profile_opts(const struct serve_opts *o, struct api_profile_opts *po, char *dir,
			size_t dir_size, char *token, size_t token_size)
{
	bool created;
	int err;

	*po = (struct api_profile_opts){
		.sz = sizeof(*po), .multitenancy = o->multitenancy,
		.service = { .sz = sizeof(po->service), .dir = dir,
			     .tokens_file = o->tokens_file, .limits_file = o->limits_file,
			     .rules_file = o->rules_file,
			     .retention_ns = o->retention_s * 1000000000LL,
			     .rollup_retention_ns = o->rollup_retention_s * 1000000000LL,
			     .max_profile_bytes = o->max_profile_mb << 20,
			     .max_series = o->max_series, .max_tenants = o->max_tenants,
			     .tenant_idle_ns = o->tenant_idle_s * 1000000000LL,
			     .head_age_ns = o->head_age_s * 1000000000LL,
			     .max_age_ns = o->max_age_s * 1000000000LL,
			     .max_future_ns = o->max_future_s * 1000000000LL,
			     .scrape = o->scrape, .n_scrape = o->n_scrape },
	};
	if (snprintf(dir, dir_size, "%s/profiles", o->data) >= (int)dir_size)
		return -ENAMETOOLONG;
	if (!o->ingest_token_file)
		return 0;
	err = api_token_setup(o->data, o->ingest_token_file, token, token_size, &created);
	if (!err)
		po->ingest_token = token;
	return err;
}

/* With --storage, the profile store's blocks in the bucket, DATA/profiles/cache
 * their cache (counted in fc, the --cache-mb shared with the debuginfo
 * store's files). */
static int profile_blocks(const struct serve_opts *o, struct objstore *os,
			  struct ember_fcache *fc, const char *pdir, struct pstore_blockio *io)
{
	char bucket[BUCKET_NAME_MAX], prefix[BUCKET_PREFIX_MAX], cache[4300];
	struct bucket_profile_opts bo = { .sz = sizeof(bo), .os = os, .prefix = prefix,
					  .cache_dir = cache, .cache = fc };
	int err = bucket_url_parse(o->storage, bucket, prefix, NULL, 0);

	snprintf(cache, sizeof(cache), "%s/cache", pdir);
	if (!err && mkdir(pdir, 0755) < 0 && errno != EEXIST)
		err = -errno;
	if (!err)
		err = bucket_profile_blockio(&bo, io);
	if (err)
		fprintf(stderr, "ember serve: cannot keep profiles in '%s' (cache '%s'): %s\n",
			o->storage, cache, strerror(-err));
	return err;
}

/* What a tenant's blocks need on the bucket (tenant_blocks). */
struct tenant_bucket {
	struct objstore *os;
	struct ember_fcache *fc;
	char prefix[BUCKET_PREFIX_MAX];	/* --storage's */
};

/* A profsvc_opts.tenant_blocks: tenant's blocks under PREFIXtenants/TENANT/
 * (its own v1/profiles/...), cached in DIR (the tenant's directory)/cache. */
static int tenant_blocks(void *ctx, const char *tenant, const char *dir,
			 struct pstore_blockio *io)
{
	const struct tenant_bucket *tb = ctx;
	char prefix[BUCKET_PREFIX_MAX + 200], cache[4400];
	struct bucket_profile_opts bo = { .sz = sizeof(bo), .os = tb->os, .prefix = prefix,
					  .cache_dir = cache, .cache = tb->fc };

	snprintf(prefix, sizeof(prefix), "%stenants/%s/", tb->prefix, tenant);
	if (snprintf(cache, sizeof(cache), "%s/cache", dir) >= (int)sizeof(cache))
		return -ENAMETOOLONG;
	return bucket_profile_blockio(&bo, io);
}

/* The OTLP/gRPC socket of --otlp-grpc-listen into *fd (-1 without it),
 * bound as the server's (ao); said on stdout.  0, or 1 / 2 (the exit
 * status) with the reason said. */
static int listen_grpc(const struct serve_opts *o, const struct api_server_opts *ao, int *fd)
{
	struct api_server_opts go = *ao;
	char addr[256];
	uint16_t port;
	int err;

	*fd = -1;
	if (!o->otlp_grpc_listen)
		return 0;
	if (parse_listen(o->otlp_grpc_listen, addr, sizeof(addr), &go.port)) {
		fprintf(stderr, "ember serve: bad --otlp-grpc-listen '%s': want ADDR:PORT\n",
			o->otlp_grpc_listen);
		return 2;
	}
	go.listen_addr = addr;
	err = api_server_listen(&go, fd, &port);
	if (err) {
		fprintf(stderr, "ember serve: cannot listen on '%s': %s\n", o->otlp_grpc_listen,
			strerror(-err));
		return 1;
	}
	printf("ember: OTLP/gRPC on %s%s%s:%u\n", strchr(addr, ':') ? "[" : "", addr,
	       strchr(addr, ':') ? "]" : "", port);
	return 0;
}

/* OTLP/gRPC served on fd (taken; -1: none) into srv's profile routes
 * (api_server_otlp_sink), its connections idle as long as an HTTP
 * request's head may take.  *out NULL without it. */
static int start_grpc(const struct serve_opts *o, struct api_server *srv, int fd,
		      struct otlp_grpc_server **out)
{
	struct otlp_grpc_opts go = {
		.sz = sizeof(go), .listen_fd = fd,
		.max_connections = o->otlp_grpc_max_connections,
		.idle_s = o->header_timeout ? o->header_timeout : API_HEADER_TIMEOUT
	};
	struct otlp_grpc_sink sink;
	int err;

	*out = NULL;
	if (fd < 0)
		return 0;
	err = api_server_otlp_sink(srv, &sink);
	if (err) {
		close(fd);
		return err;
	}
	err = otlp_grpc_start(&go, &sink, out);
	if (!err)
		api_server_set_otlp_grpc(srv, *out); /* its calls in /metrics */
	return err;
}

static int run(struct serve_opts *o, struct store *s, struct objstore *os,
	       struct ember_fcache *fc)
{
	struct pstore_blockio blocks;
	struct tenant_bucket tb = { .os = os, .fc = fc };
	struct api_server_opts ao = { .sz = sizeof(ao) };
	struct api_profile_opts po;
	char addr[256], token[128], ingest_token[128], pdir[4200], bucket[BUCKET_NAME_MAX];
	bool created, upstream;
	struct otlp_grpc_server *grpc;
	struct api_server *srv;
	uint16_t port;
	int err, fd, grpc_fd;

	if (parse_listen(o->listen, addr, sizeof(addr), &ao.port)) {
		fprintf(stderr, "ember serve: bad --listen '%s': want ADDR:PORT\n", o->listen);
		return 2;
	}
	if (o->tokens_file && !o->multitenancy) {
		fprintf(stderr, "ember serve: --tokens names tenants: it needs --multitenancy\n");
		return 2;
	}
	if (size_connections(o))
		return 1;
	err = api_token_setup(o->data, o->token_file, token, sizeof(token), &created);
	if (!err)
		err = setup_upstream(o, &upstream);
	if (!err)
		err = profile_opts(o, &po, pdir, sizeof(pdir), ingest_token, sizeof(ingest_token));
	if (err) {
		fprintf(stderr, "ember serve: cannot set up '%s': %s\n", o->data, strerror(-err));
		return 1;
	}
	if (os && profile_blocks(o, os, fc, pdir, &blocks))
		return 1;
	if (os) {
		po.service.blocks = &blocks;
		po.service.refresh_ns = o->profile_refresh_s * 1000000000LL;
		po.service.lease_expiry_ns = o->profile_lease_s * 1000000000LL;
		po.service.tenant_blocks = tenant_blocks;
		po.service.tenant_blocks_ctx = &tb;
		bucket_url_parse(o->storage, bucket, tb.prefix, NULL, 0); /* parsed before */
	}
	ao.listen_addr = addr;
	ao.token = token;
	ao.max_upload = o->max_upload_mb << 20;
	ao.max_connections = o->max_connections;
	ao.max_per_client = o->max_per_client;
	ao.header_timeout = o->header_timeout;
	ao.request_timeout = o->request_timeout;
	ao.min_upload_rate = o->min_upload_rate;
	ao.max_fetches = o->max_fetches;
	ao.upstream_max_size = o->upstream_max_mb << 20;
	ao.upstream_quota = o->upstream_quota_mb << 20;
	ao.upstream = upstream;
	ao.upstream_miss_ttl = o->miss_ttl;
	ao.symbol_cache_bytes = o->symbol_cache_mb << 20;
	ao.memory_limit = o->memory_limit_mb << 20;
	ao.profiles = &po;
	err = api_server_listen(&ao, &fd, &port);
	if (err) {
		if (po.service.blocks)
			blocks.release(blocks.ctx);
		fprintf(stderr, "ember serve: cannot listen on '%s': %s\n", o->listen, strerror(-err));
		return 1;
	}
	err = listen_grpc(o, &ao, &grpc_fd);
	if (err) {
		if (po.service.blocks)
			blocks.release(blocks.ctx);
		close(fd);
		return err;
	}
	err = api_server_start(s, &ao, fd, &srv);
	if (err) {
		if (grpc_fd >= 0)
			close(grpc_fd);
	} else if ((err = start_grpc(o, srv, grpc_fd, &grpc))) {
		api_server_stop(srv);
	}
	if (err) {
		fprintf(stderr, "ember serve: cannot start the server: %s\n", strerror(-err));
		return 1;
	}
	log_start(o, token, created, upstream);
	printf("ember: listening on http://%s%s%s:%u\n", strchr(addr, ':') ? "[" : "", addr,
	       strchr(addr, ':') ? "]" : "", port);
	fflush(stdout);
	wait_before_store_open();
	err = store_wait(s); /* begins the open, unless a request did */
	if (err) {
		fprintf(stderr, "ember serve: cannot open the store in '%s': %s\n", o->data,
			strerror(-err));
	} else {
		pr_info("ember serve: store opened in '%s'", o->data);
		/* last, once the page can be used: what `make run` ends with */
		print_ui_url(addr, port);
		fflush(stdout);
		wait_for_signal(o, srv);
	}
	api_server_quiesce(srv);
	otlp_grpc_stop(grpc); /* its workers store through srv: between the two */
	api_server_stop(srv);
	return err ? 1 : 0;
}

/* The bucket of --storage as the store's backend, DIR its cache under
 * --cache-mb (*fc, shared with the profile blocks); *os and *fc are the
 * caller's, freed after the store.  Failures are explained on stderr. */
static int setup_bucket(const struct serve_opts *o, struct store *s, struct objstore **os,
			struct ember_fcache **fc)
{
	char bucket[BUCKET_NAME_MAX], prefix[BUCKET_PREFIX_MAX], msg[512] = "";
	struct objstore_opts oo = { .sz = sizeof(oo) };
	struct bucket_opts bo = { .sz = sizeof(bo), .prefix = prefix,
				  .max_blob = blob_max_bytes(o) };
	struct store_backend be;
	unsigned aborted = 0;
	int err = bucket_url_parse(o->storage, bucket, prefix, msg, sizeof(msg));

	if (err) {
		fprintf(stderr, "ember serve: bad --storage: %s\n", msg);
		return err;
	}
	oo.endpoint = o->s3_endpoint;
	oo.region = o->s3_region;
	oo.bucket = bucket;
	if (o->s3_addressing)
		oo.addressing = strcmp(o->s3_addressing, "path") == 0
					? OBJSTORE_ADDRESSING_PATH : OBJSTORE_ADDRESSING_VIRTUAL_HOST;
	*os = objstore_new(&oo, &err, msg, sizeof(msg));
	if (!*os) {
		fprintf(stderr, "ember serve: cannot use '%s': %s\n", o->storage, msg);
		return err;
	}
	/* before anything else: a bucket that cannot be read fails the start */
	err = bucket_cleanup_uploads(*os, prefix, (unsigned)o->s3_abandon_s, &aborted);
	if (err) {
		fprintf(stderr, "ember serve: cannot use '%s': %s\n", o->storage,
			objstore_strerror(err));
		return err;
	}
	if (aborted)
		pr_info("ember serve: aborted %u unfinished uploads in '%s'", aborted, o->storage);
	bo.os = *os;
	err = bucket_store_backend(&bo, &be);
	if (!err)
		err = store_set_backend(s, &be);
	if (!err) {
		*fc = ember_fcache_new(o->cache_mb << 20, EMBER_FCACHE_GRACE_MS);
		err = *fc ? 0 : -ENOMEM;
	}
	if (!err && o->cache_mb) /* without a bound the blob files go uncounted */
		err = store_set_cache(s, *fc);
	if (err)
		fprintf(stderr, "ember serve: cannot use '%s': %s\n", o->storage, strerror(-err));
	else
		pr_info("ember serve: storage '%s', '%s' its cache", o->storage, o->data);
	return err;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = { .listen = "127.0.0.1:8002", .data = "ember-data",
				.max_upload_mb = 4096, .miss_ttl = 600, .s3_abandon_s = 3600 };
	struct objstore *os = NULL;
	struct ember_fcache *fc = NULL;
	struct store *s;
	int ret = parse_args(argc, argv, &o);

	if (!ret && o.cache_mb && !o.storage) {
		fprintf(stderr, "ember serve: --cache-mb bounds the cache of --storage\n");
		ret = -EINVAL;
	}
	if (ret) {
		serve_usage(ret > 0 ? stdout : stderr);
		return ret > 0 ? 0 : 2;
	}
	block_signals(&o);
	ret = store_new(o.data, &s); /* opened once the server listens (run()) */
	if (ret) {
		fprintf(stderr, "ember serve: cannot open the store in '%s': %s\n", o.data,
			strerror(-ret));
		return 1;
	}
	ret = o.storage && setup_bucket(&o, s, &os, &fc) ? 1 : run(&o, s, os, fc);
	store_free(s);
	ember_fcache_free(fc);
	objstore_free(os);
	return ret;
}
