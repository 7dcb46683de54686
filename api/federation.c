/*
 * federation.c - misses fetched from upstream debuginfod servers.
 *
 * A request for something the store lacks is handed to a small pool of
 * fetch threads, and its connection's own thread (one per connection:
 * server.c) waits for the fetch, so a slow upstream stalls only the
 * connections that asked for it.  Requests for the same artifact while a
 * fetch is in flight join it: one upstream fetch however many clients
 * ask.  What arrives is validated and stored like an upload (artifact_ingest.c),
 * then every waiter is woken and served from the store.  A client that
 * goes away does not cancel the fetch: what arrives is stored.  Misses and failures are remembered for the
 * configured time (common.h's ember_errcache) so a missing build ID costs one upstream
 * round trip per TTL.  Requests that already crossed 8 proxies are not
 * forwarded again (the X-Forwarded-For limit of elfutils' server).
 */
#include "api_internal.h"
#include "api_profiles.h"
#include "store_upstream.h"
#include "symsvc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define XFF_HOP_LIMIT 8
#define MISS_KEY_MAX 4352     /* the longest job key (job_key) */
#define MISS_CACHE_MAX 65536  /* misses and failures remembered at once */

/* A connection thread waiting for a job (on its stack, under u->mu). */
struct waiter {
	bool done;
	int err;		/* the job's result (job_result()) */
	struct waiter *next;
};

struct fetch_job {
	char key[MISS_KEY_MAX];
	struct api_route route;
	char forwarded_for[512];
	struct api_server *srv;
	struct waiter *waiters;
	struct fetch_job *next;      /* in the queue, then in flight */
};

struct api_upstream {
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* a job was queued, or stopping */
	pthread_cond_t done_cv;      /* a waiter's job ended */
	struct fetch_job *queue;     /* waiting for a thread (FIFO) */
	struct fetch_job *running;   /* being fetched */
	bool stopping;
	pthread_t *threads;
	unsigned n_threads;
	struct ember_errcache *misses;
	struct store_upstream *lib;  /* libdebuginfod, loaded on first use */
	uint64_t max_size;           /* bytes a fetched file may have */
	uint64_t quota;              /* bytes of fetched files kept */
};

/* ---- fetching one job ------------------------------------------------------ */

static bool is_stopping(void *arg)
{
	struct api_upstream *u = arg;
	bool stop;

	pthread_mutex_lock(&u->mu);
	stop = u->stopping;
	pthread_mutex_unlock(&u->mu);
	return stop;
}

/* A file past --upstream-max-size-mb is upstream's failure (-EFBIG);
 * libdebuginfod refuses most before they arrive (DEBUGINFOD_MAXSIZE, set
 * by `ember serve`), this catches one sent without its size. */
static int check_size(const struct fetch_job *j, int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if ((uint64_t)st.st_size <= j->srv->upstream->max_size)
		return 0;
	pr_warn("api: upstream sent %llu bytes for '%s', more than the limit of %llu",
		(unsigned long long)st.st_size, j->route.build_id,
		(unsigned long long)j->srv->upstream->max_size);
	return -EFBIG;
}

/* What upstream sent past the quota, evicted oldest first (never the file
 * just stored, nor an upload); a failure is logged: the next fetch tries
 * again. */
static void keep_quota(struct api_server *srv)
{
	struct store_stats st;
	int n;

	store_get_stats(srv->store, &st);
	if (st.upstream_bytes <= srv->upstream->quota)
		return;
	n = store_evict_upstream(srv->store, srv->upstream->quota);
	if (n < 0)
		pr_warn("api: cannot evict what upstream sent past the quota: %s", strerror(-n));
}

/* Validate and store a fetched file: a failure to store it is ours
 * (*local), one of validation (-EINVAL) upstream's. */
static int ingest(struct fetch_job *j, enum store_want want, const char *src, int fd,
		  bool *local)
{
	struct api_server *srv = j->srv;
	bool exe = want == STORE_WANT_EXECUTABLE;
	int err;

	if (api_validation_begin(srv, ember_monotonic_ms() + srv->request_timeout_ms)) {
		*local = true; /* no memory for validating it: busy */
		return -EAGAIN;
	}
	err = src ? api_ingest_source_fd(srv->store, fd, j->route.build_id, src)
		  : api_ingest_fd(srv->store, fd, j->route.build_id,
				  exe ? STORE_KIND_EXECUTABLE : STORE_KIND_DEBUGINFO,
				  exe ? "executable" : "debuginfo");
	api_validation_end(srv);
	if (!err)
		keep_quota(srv);
	if (err && (src || err != -EINVAL))
		*local = true;
	return err;
}

/*
 * Fetch one file and store it.  A failure on our side (the store, the
 * disk) sets *local: it says nothing about upstream, so it is neither
 * counted nor remembered as an upstream failure.  A file upstream sends
 * that fails validation (-EINVAL) is upstream's.
 */
static int fetch_file(struct fetch_job *j, enum store_want want, const char *src,
		      bool *local)
{
	struct store_upstream_query f = { .build_id = j->route.build_id, .want = want,
				 .source_path = src,
				 .forwarded_for = j->forwarded_for[0] ? j->forwarded_for : NULL,
				 .cancelled = is_stopping, .cancel_arg = j->srv->upstream };
	char *path = NULL;
	int fd, err = store_upstream_fetch(j->srv->upstream->lib, &f, &fd, &path);

	if (err)
		return err;
	err = check_size(j, fd);
	if (!err)
		err = ingest(j, want, src, fd, local);
	close(fd);
	if (!err && !src)
		api_profiles_symbols_arrived(j->srv, j->route.build_id);
	unlink(path); /* stored now: libdebuginfod's copy would double the disk use */
	free(path);
	return err;
}

/* A store error met on the way is ours (*local). */
static int local_failure(int err, bool *local)
{
	if (err && err != -ENOENT)
		*local = true;
	return err;
}

static int fetch_source(struct fetch_job *j, bool *local)
{
	struct store *s = j->srv->store;
	struct store_artifact a;
	int err = local_failure(store_find_best(s, j->route.build_id, STORE_WANT_DEBUGINFO, &a),
				local);

	if (err == -ENOENT)
		err = fetch_file(j, STORE_WANT_DEBUGINFO, NULL, local);
	if (!err) /* -ENOENT: the DWARF does not name it, never fetched */
		err = local_failure(store_source_named(s, j->route.build_id, j->route.path),
				    local);
	return err ? err : fetch_file(j, STORE_WANT_SYMBOLS, j->route.path, local);
}

static int run_job(struct fetch_job *j, bool *local)
{
	int err;

	switch (j->route.ep) {
	case API_EP_DEBUGINFO:
		return fetch_file(j, STORE_WANT_DEBUGINFO, NULL, local);
	case API_EP_EXECUTABLE:
		return fetch_file(j, STORE_WANT_EXECUTABLE, NULL, local);
	case API_EP_SECTION:
		err = fetch_file(j, STORE_WANT_DEBUGINFO, NULL, local);
		return err && !*local ? fetch_file(j, STORE_WANT_EXECUTABLE, NULL, local) : err;
	default:
		return fetch_source(j, local);
	}
}

/*
 * What a fetch's waiters are told (api_upstream_wait()): 0, -ENOENT when
 * no upstream has it (-ENOSYS, none configured, is the same), -ECANCELED
 * when the server stops, -EHOSTUNREACH when upstream failed (the reason
 * logged here), or a local failure's own error.
 */
static int job_result(const struct fetch_job *j, int err, bool local)
{
	const char *id = j->route.build_id, *what = api_endpoint_name(j->route.ep);

	if (local && err)
		pr_warn("api: cannot store what upstream sent for '%s' (%s): %s", id, what,
			strerror(-err));
	else if (!err)
		pr_info("api: upstream fetch of '%s' (%s): stored", id, what);
	else if (err == -ENOENT || err == -ENOSYS)
		pr_info("api: upstream fetch of '%s' (%s): no upstream has it", id, what);
	if (local || !err || err == -ENOENT || err == -ECANCELED)
		return err;
	if (err == -ENOSYS)
		return -ENOENT;
	pr_warn("api: upstream fetch of '%s' (%s) failed: %s", id, what,
		err == -EINVAL ? "the file it sent was rejected" : strerror(-err));
	return -EHOSTUNREACH;
}

enum ember_errkind api_upstream_error_kind(int err)
{
	switch (err) {
	case 0:
	case -ENOENT:
		return EMBER_ERRK_NOT_FOUND;
	case -ETIMEDOUT:
		return EMBER_ERRK_TIMEOUT;
	case -EHOSTUNREACH:
	case -ECANCELED:
		return EMBER_ERRK_BUSY;
	default:
		return EMBER_ERRK_UNAVAILABLE;
	}
}

/* ---- the pool -------------------------------------------------------------------- */

static void unlink_running(struct api_upstream *u, struct fetch_job *j)
{
	for (struct fetch_job **p = &u->running; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			return;
		}
}

/* Wake the connections waiting for a fetch (under u->mu) with its
 * result: on 0 they answer from the store. */
static void wake_waiters_locked(struct api_upstream *u, struct waiter *w, int err)
{
	for (; w; w = w->next) {
		w->err = err;
		w->done = true;
	}
	pthread_cond_broadcast(&u->done_cv);
}

/* Count a fetch's result (a job_result()), and remember a miss or an
 * upstream failure (under u->mu) so the same key is not asked for again
 * within the miss TTL.  Local failures are neither: the next request
 * tries again. */
static void count_result(struct api_metrics *m, int err, bool local)
{
	if (local)
		return;
	if (!err)
		m->upstream_hits++;
	else if (err == -ENOENT)
		m->upstream_misses++;
	else if (err != -ECANCELED)
		m->upstream_errors++;
}

static void remember_failure_locked(struct api_upstream *u, const char *key, int err,
				    bool local)
{
	if (err && err != -ECANCELED && !local)
		ember_errcache_put(u->misses, key, err);
}

static void finish_job(struct api_upstream *u, struct fetch_job *j, int err, bool local)
{
	err = job_result(j, err, local);
	count_result(&j->srv->metrics, err, local);
	pthread_mutex_lock(&u->mu);
	remember_failure_locked(u, j->key, err, local);
	unlink_running(u, j);
	wake_waiters_locked(u, j->waiters, err);
	pthread_mutex_unlock(&u->mu);
	free(j);
}

static void *fetch_thread(void *arg)
{
	struct api_upstream *u = arg;

	pthread_mutex_lock(&u->mu);
	for (;;) {
		struct fetch_job *j;
		bool local = false;
		int err;

		while (!u->queue && !u->stopping)
			pthread_cond_wait(&u->cv, &u->mu);
		if (!u->queue)
			break;
		j = u->queue;
		u->queue = j->next;
		j->next = u->running;
		u->running = j;
		pthread_mutex_unlock(&u->mu);
		err = run_job(j, &local);
		finish_job(u, j, err, local);
		pthread_mutex_lock(&u->mu);
	}
	pthread_mutex_unlock(&u->mu);
	return NULL;
}

int api_upstream_new(unsigned workers, unsigned miss_ttl_s, uint64_t max_size,
		     uint64_t quota, struct api_upstream **out)
{
	struct api_upstream *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->max_size = max_size < quota ? max_size : quota; /* one file fits the quota */
	u->quota = quota;
	pthread_mutex_init(&u->mu, NULL);
	pthread_cond_init(&u->cv, NULL);
	pthread_cond_init(&u->done_cv, NULL);
	u->misses = ember_errcache_new(miss_ttl_s, MISS_CACHE_MAX);
	u->threads = calloc(workers, sizeof(*u->threads));
	if (!u->misses || !u->threads || store_upstream_new(&u->lib)) {
		api_upstream_free(u);
		return -ENOMEM;
	}
	for (; u->n_threads < workers; u->n_threads++)
		if (pthread_create(&u->threads[u->n_threads], NULL, fetch_thread, u)) {
			api_upstream_free(u);
			return -EAGAIN;
		}
	*out = u;
	return 0;
}

/*
 * Stop fetching: fetches in flight are aborted (libdebuginfod polls
 * is_stopping), queued ones dropped, and every waiting connection woken
 * so that it answers and MHD can close it.  Call before stopping the
 * daemon.
 */
void api_upstream_shutdown(struct api_upstream *u)
{
	struct fetch_job *queued;

	if (!u)
		return;
	pthread_mutex_lock(&u->mu);
	u->stopping = true;
	pthread_cond_broadcast(&u->cv);
	queued = u->queue;
	u->queue = NULL;
	for (struct fetch_job *j = u->running; j; j = j->next) {
		wake_waiters_locked(u, j->waiters, -ECANCELED);
		j->waiters = NULL;
	}
	for (struct fetch_job *j = queued; j; j = j->next)
		wake_waiters_locked(u, j->waiters, -ECANCELED);
	pthread_mutex_unlock(&u->mu);
	while (queued) {
		struct fetch_job *next = queued->next;

		free(queued);
		queued = next;
	}
}

/* Called after MHD stopped: no connection waits any more. */
void api_upstream_free(struct api_upstream *u)
{
	if (!u)
		return;
	api_upstream_shutdown(u);
	for (unsigned i = 0; i < u->n_threads; i++)
		pthread_join(u->threads[i], NULL);
	free(u->threads);
	ember_errcache_free(u->misses);
	store_upstream_free(u->lib);
	pthread_cond_destroy(&u->done_cv);
	pthread_cond_destroy(&u->cv);
	pthread_mutex_destroy(&u->mu);
	free(u);
}

/* ---- joining a fetch from a connection thread ------------------------------------ */

static void job_key(const struct api_route *r, char *key)
{
	/* MISS_KEY_MAX holds the longest id and path: never truncated. */
	_Static_assert(MISS_KEY_MAX > 16 + sizeof(r->build_id) + sizeof(r->path), "key size");
	snprintf(key, MISS_KEY_MAX, "%d/%.*s/%.*s", (int)r->ep, (int)sizeof(r->build_id),
		 r->build_id, (int)sizeof(r->path), r->path);
}

static struct fetch_job *find_job(struct fetch_job *list, const char *key)
{
	for (; list; list = list->next)
		if (strcmp(list->key, key) == 0)
			return list;
	return NULL;
}

/* X-Forwarded-For for the upstream request: the incoming one plus the
 * client.  Returns false when the hop limit is reached. */
static bool forwarded_for(struct MHD_Connection *c, char *out, size_t size)
{
	const char *xff = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Forwarded-For");
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	char ip[INET6_ADDRSTRLEN] = "unknown";
	int hops = xff && *xff ? 1 : 0;

	for (const char *p = xff; p && *p; p++)
		hops += *p == ',';
	if (hops >= XFF_HOP_LIMIT)
		return false;
	if (ci && ci->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)ci->client_addr)->sin_addr, ip, sizeof(ip));
	else if (ci && ci->client_addr->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ci->client_addr)->sin6_addr, ip, sizeof(ip));
	snprintf(out, size, "%s%s%s", xff && *xff ? xff : "", xff && *xff ? ", " : "", ip);
	return true;
}

static struct fetch_job *new_job(struct api_server *srv, const struct api_route *route,
				 const char *key, const char *xff)
{
	struct fetch_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	snprintf(j->key, sizeof(j->key), "%s", key);
	snprintf(j->forwarded_for, sizeof(j->forwarded_for), "%s", xff);
	j->route = *route;
	j->srv = srv;
	return j;
}

static void enqueue(struct api_upstream *u, struct fetch_job *j)
{
	struct fetch_job **p = &u->queue;

	while (*p)
		p = &(*p)->next;
	*p = j;
	pthread_cond_signal(&u->cv);
}

/* Whether key's fetch is to be answered without asking (under u->mu):
 * the server stops, or a miss or failure is remembered; *err says how. */
static bool known_locked(struct api_server *srv, const char *key, int *err)
{
	struct api_upstream *u = srv->upstream;

	if (u->stopping) {
		*err = -ECANCELED;
		return true;
	}
	if (!ember_errcache_get(u->misses, key, err))
		return false;
	srv->metrics.upstream_negative_cached++;
	return true;
}

/* Take w off j's waiters (under u->mu; j is alive while w is not done). */
static void leave_job_locked(struct fetch_job *j, struct waiter *w)
{
	for (struct waiter **p = &j->waiters; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			return;
		}
}

/*
 * Wait (under u->mu) until j wakes w with its result; or until
 * deadline_ms (ember_monotonic_ms()), or until check (when given, polled
 * every WAIT_POLL_MS) says stop: then w leaves j, which goes on and
 * stores what it fetches for later requests, and the answer is
 * -ETIMEDOUT or the check's error.
 */
#define WAIT_POLL_MS 100

static int wait_done_locked(struct api_upstream *u, struct fetch_job *j, struct waiter *w,
			    uint64_t deadline_ms, symsvc_check_fn check, void *check_arg)
{
	while (!w->done) { /* j is freed once it wakes its waiters */
		uint64_t now = ember_monotonic_ms(), left;
		int err = check ? check(check_arg) : 0; /* which sees the deadline too */
		struct timespec ts;

		if (!err && now >= deadline_ms)
			err = -ETIMEDOUT;
		if (err) {
			leave_job_locked(j, w);
			return err;
		}
		left = deadline_ms - now;
		if (check && left > WAIT_POLL_MS)
			left = WAIT_POLL_MS;
		clock_gettime(CLOCK_REALTIME, &ts); /* done_cv's clock */
		ts.tv_sec += (time_t)(left / 1000);
		ts.tv_nsec += (long)(left % 1000) * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&u->done_cv, &u->mu, &ts);
	}
	return w->err;
}

/* Start (or join) the fetch of route and wait for it (wait_done_locked). */
static int join_and_wait(struct api_server *srv, const struct api_route *route,
			 const char *xff, uint64_t deadline_ms, symsvc_check_fn check,
			 void *check_arg)
{
	struct api_upstream *u = srv->upstream;
	char key[MISS_KEY_MAX];
	struct waiter w = { 0 };
	struct fetch_job *j;
	int err;

	job_key(route, key);
	pthread_mutex_lock(&u->mu);
	if (known_locked(srv, key, &err)) {
		pthread_mutex_unlock(&u->mu);
		return err;
	}
	j = find_job(u->running, key);
	if (!j)
		j = find_job(u->queue, key);
	if (!j && (j = new_job(srv, route, key, xff)))
		enqueue(u, j);
	err = j ? 0 : -ENOMEM;
	if (j) {
		w.next = j->waiters;
		j->waiters = &w;
		err = wait_done_locked(u, j, &w, deadline_ms, check, check_arg);
	}
	pthread_mutex_unlock(&u->mu);
	return err;
}

int api_upstream_wait(struct api_server *srv, struct MHD_Connection *c,
		      const struct api_request *req)
{
	struct api_deadline dl;
	char xff[512];

	if (!forwarded_for(c, xff, sizeof(xff)))
		return -ENOENT; /* not ours to forward: as if nobody had it */
	api_deadline_init(&dl, srv, req);
	return join_and_wait(srv, &req->route, xff, req->deadline_ms, api_deadline_check, &dl);
}

/* ---- fetching for the symbolization service -------------------------------------- */

int api_upstream_fetch(void *arg, const char *id, enum store_want want,
		       const struct symsvc_request_opts *ro)
{
	struct api_server *srv = arg;
	struct api_route route = { .ep = want == STORE_WANT_EXECUTABLE ? API_EP_EXECUTABLE
								       : API_EP_DEBUGINFO };

	if (!srv->upstream)
		return -ENOSYS;
	snprintf(route.build_id, sizeof(route.build_id), "%s", id);
	return join_and_wait(srv, &route, "",
			     ro && ro->deadline_ms ? ro->deadline_ms : UINT64_MAX,
			     ro ? ro->check : NULL, ro ? ro->check_arg : NULL);
}
