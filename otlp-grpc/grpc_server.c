/*
 * grpc_server.c - the OTLP/gRPC listener (`ember serve --otlp-grpc-listen`):
 * one thread polls the listening socket and every connection, feeding
 * each connection's HTTP/2 session (grpc_session.c) what arrives and
 * writing what it has to send; calls whose message is whole go to a
 * queue that worker threads take them from (grpc_export.c: they hand them
 * to the sink, so decoding, symbolization and the store's fsync happen
 * there), and come back through a done list and an eventfd, so a slow
 * ingest or a slow client never holds another connection up.
 *
 * Limits (docs/security.md): at most max_connections connections (one
 * past it is closed at once); a connection with no call for idle_s
 * seconds (`ember serve`'s --header-timeout), or that cannot be written to for as long,
 * is closed (GOAWAY first); a call's head must be whole by its deadline
 * (or the connection is closed) and its message too (or it is answered
 * DEADLINE_EXCEEDED); a full queue answers UNAVAILABLE with RetryInfo.
 */
#include "otlp_grpc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define OTLP_GRPC_WORKERS 4
#define OTLP_GRPC_QUEUE 64		/* calls waiting for a worker */
#define OTLP_GRPC_MAX_STREAMS 8
#define OTLP_GRPC_MAX_HEADER_LIST 16384
#define OTLP_GRPC_OUT_CAP ((size_t)4 << 20) /* bytes waiting for a slow reader */
#define OTLP_GRPC_TICK_MS 100

struct gconn {
	struct otlp_grpc_conn c;
	int fd;
	struct ember_buf out;	/* bytes the session gave, not yet written */
	size_t out_off;
	uint64_t stalled_since; /* output waiting since (0: none) */
};

struct otlp_grpc_server {
	struct otlp_grpc_sink sink;
	struct otlp_grpc_limits lim;
	int listen_fd, wake_fd;
	unsigned max_conns;
	uint64_t idle_ms;
	struct gconn **conns;
	unsigned n_conns;
	pthread_t loop, workers[OTLP_GRPC_WORKERS];
	unsigned n_workers;
	bool loop_running;
	pthread_mutex_t mu;		  /* the queue, done list and stopping */
	pthread_cond_t cv;
	struct otlp_grpc_call *todo, *todo_tail, *done;
	unsigned n_todo;
	bool stopping;
	_Atomic uint64_t answered[OTLP_GRPC_CODES]; /* calls, by grpc-status code */
};

/* ---- workers ---------------------------------------------------------------------- */

static void wake(struct otlp_grpc_server *g)
{
	uint64_t one = 1;

	if (write(g->wake_fd, &one, sizeof(one)) < 0)
		pr_debug("otlp-grpc: eventfd write: %s", strerror(errno));
}

static void *worker(void *arg)
{
	struct otlp_grpc_server *g = arg;
	struct otlp_grpc_call *call;

	for (;;) {
		pthread_mutex_lock(&g->mu);
		while (!g->todo && !g->stopping)
			pthread_cond_wait(&g->cv, &g->mu);
		call = g->stopping ? NULL : g->todo;
		if (call) {
			g->todo = call->qnext;
			g->n_todo--;
		}
		pthread_mutex_unlock(&g->mu);
		if (!call)
			return NULL;
		otlp_grpc_export(&g->sink, call);
		pthread_mutex_lock(&g->mu);
		call->qnext = g->done;
		g->done = call;
		pthread_mutex_unlock(&g->mu);
		wake(g);
	}
}

/* A session's dispatch: call queued for a worker, or refused when full. */
static void dispatch(void *arg, struct otlp_grpc_call *call)
{
	struct otlp_grpc_server *g = arg;
	bool full;

	pthread_mutex_lock(&g->mu);
	full = g->n_todo >= OTLP_GRPC_QUEUE;
	if (!full) {
		call->qnext = NULL;
		if (g->todo)
			g->todo_tail->qnext = call;
		else
			g->todo = call;
		g->todo_tail = call;
		g->n_todo++;
		pthread_cond_signal(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
	if (full) {
		call->code = OTLP_GRPC_UNAVAILABLE;
		call->retry = true;
		strcpy(call->message, "the server has too many calls waiting: ask again");
		otlp_grpc_call_done(call);
	}
}

/* A session's auth: the sink's. */
static bool auth(void *arg, const char *authorization, char *tenant, size_t tenant_size)
{
	struct otlp_grpc_server *g = arg;

	return g->sink.auth(g->sink.ctx, authorization, tenant, tenant_size);
}

/* Calls the workers finished, answered on their streams. */
static void take_done(struct otlp_grpc_server *g)
{
	struct otlp_grpc_call *call, *next;
	uint64_t n;

	if (read(g->wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		pr_debug("otlp-grpc: eventfd read: %s", strerror(errno));
	pthread_mutex_lock(&g->mu);
	call = g->done;
	g->done = NULL;
	pthread_mutex_unlock(&g->mu);
	for (; call; call = next) {
		next = call->qnext;
		otlp_grpc_call_done(call);
	}
}

/* ---- connections ------------------------------------------------------------------ */

static void conn_free(struct gconn *k)
{
	otlp_grpc_conn_release(&k->c);
	ember_buf_release(&k->out);
	close(k->fd);
	free(k);
}

static void drop_conn(struct otlp_grpc_server *g, unsigned i)
{
	conn_free(g->conns[i]);
	g->conns[i] = g->conns[--g->n_conns];
}

static void accept_conns(struct otlp_grpc_server *g)
{
	struct gconn *k;
	int fd;

	while ((fd = accept4(g->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		k = g->n_conns < g->max_conns ? calloc(1, sizeof(*k)) : NULL;
		if (!k) { /* past the cap: closed at once */
			close(fd);
			continue;
		}
		k->fd = fd;
		k->c = (struct otlp_grpc_conn){ .lim = &g->lim, .budget = g->sink.budget,
						.share = g->sink.share, .auth = auth,
						.dispatch = dispatch, .arg = g,
						.answered = g->answered };
		ember_buf_init(&k->out, OTLP_GRPC_OUT_CAP);
		if (otlp_grpc_conn_init(&k->c)) {
			ember_buf_release(&k->out);
			close(fd);
			free(k);
			continue;
		}
		g->conns[g->n_conns++] = k;
	}
}

/* What arrived fed to the session: 0, or a negative errno (close). */
static int conn_read(struct gconn *k)
{
	char buf[16384];

	for (int turns = 0; turns < 16; turns++) { /* then the others' turn */
		ssize_t n = read(k->fd, buf, sizeof(buf));

		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (otlp_grpc_conn_recv(&k->c, buf, (size_t)n))
			return -EPROTO;
	}
	return 0;
}

/* What the session has to send, written as far as the socket takes it. */
static int conn_write(struct gconn *k, uint64_t now)
{
	int err = otlp_grpc_conn_send(&k->c, &k->out);

	while (!err && k->out_off < k->out.len) {
		ssize_t n = send(k->fd, k->out.data + k->out_off, k->out.len - k->out_off,
				 MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = errno == EAGAIN ? 1 : -errno;
		else
			k->out_off += (size_t)n;
	}
	if (k->out_off == k->out.len) {
		ember_buf_reset(&k->out);
		k->out_off = 0;
		k->stalled_since = 0;
	} else if (!k->stalled_since) {
		k->stalled_since = now;
	}
	return err < 0 ? err : 0;
}

/* Whether connection k is past one of its timeouts (calls past theirs
 * answered). */
static bool conn_late(struct otlp_grpc_server *g, struct gconn *k, uint64_t now)
{
	if (otlp_grpc_conn_expire(&k->c, now))
		return true;
	/* (now was read before this turn's reads: a time set since is later) */
	if (k->stalled_since && now >= k->stalled_since + g->idle_ms)
		return true;
	if (k->c.quiet_since_ms && !k->c.working && now >= k->c.quiet_since_ms + g->idle_ms) {
		nghttp2_session_terminate_session(k->c.session, NGHTTP2_NO_ERROR);
		conn_write(k, now); /* the GOAWAY, if the socket takes it */
		return true;
	}
	return false;
}

/* ---- the loop --------------------------------------------------------------------- */

static void serve_conns(struct otlp_grpc_server *g, struct pollfd *p, bool tick)
{
	uint64_t now = ember_monotonic_ms();

	for (unsigned i = g->n_conns; i-- > 0;) {
		struct gconn *k = g->conns[i];
		int err = 0;

		if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
			err = conn_read(k);
		if (!err)
			err = conn_write(k, now);
		if (err || otlp_grpc_conn_over(&k->c) || (tick && conn_late(g, k, now))) {
			pr_debug("otlp-grpc: connection %d closed: %s", k->fd,
				 err ? strerror(-err)
				 : otlp_grpc_conn_over(&k->c) ? "its session ended"
							     : "past a timeout");
			drop_conn(g, i);
		}
	}
}

static unsigned fill_poll(struct otlp_grpc_server *g, struct pollfd *p)
{
	for (unsigned i = 0; i < g->n_conns; i++) {
		struct gconn *k = g->conns[i];

		p[i] = (struct pollfd){ .fd = k->fd, .events = POLLIN };
		if (k->out_off < k->out.len)
			p[i].events = POLLOUT; /* no more read until the client reads */
	}
	p[g->n_conns] = (struct pollfd){ .fd = g->wake_fd, .events = POLLIN };
	p[g->n_conns + 1] = (struct pollfd){ .fd = g->listen_fd, .events = POLLIN };
	return g->n_conns + 2;
}

static void *loop(void *arg)
{
	struct otlp_grpc_server *g = arg;
	struct pollfd *p = calloc(g->max_conns + 2, sizeof(*p));
	uint64_t next_tick = 0;

	while (p) {
		unsigned n = fill_poll(g, p), nc = g->n_conns;
		uint64_t now;
		bool stop;

		if (poll(p, n, OTLP_GRPC_TICK_MS) < 0 && errno != EINTR)
			break;
		pthread_mutex_lock(&g->mu);
		stop = g->stopping;
		pthread_mutex_unlock(&g->mu);
		if (stop)
			break;
		if (p[nc].revents)
			take_done(g);
		now = ember_monotonic_ms();
		serve_conns(g, p, now >= next_tick);
		if (now >= next_tick)
			next_tick = now + OTLP_GRPC_TICK_MS;
		if (p[nc + 1].revents)
			accept_conns(g);
	}
	free(p);
	while (g->n_conns)
		drop_conn(g, g->n_conns - 1);
	return NULL;
}

/* ---- start and stop ------------------------------------------------------------------ */

static int start_threads(struct otlp_grpc_server *g)
{
	int err = pthread_create(&g->loop, NULL, loop, g);

	if (err)
		return -err;
	g->loop_running = true;
	for (; g->n_workers < OTLP_GRPC_WORKERS; g->n_workers++) {
		err = pthread_create(&g->workers[g->n_workers], NULL, worker, g);
		if (err)
			return -err;
	}
	return 0;
}

int otlp_grpc_start(const struct otlp_grpc_opts *o, const struct otlp_grpc_sink *sink,
		    struct otlp_grpc_server **out)
{
	struct otlp_grpc_server *g = calloc(1, sizeof(*g));
	int err;

	if (!g) {
		close(o->listen_fd);
		return -ENOMEM;
	}
	g->sink = *sink;
	g->wake_fd = -1;
	g->listen_fd = o->listen_fd;
	g->max_conns = EMBER_OPTS_OR(o, max_connections, OTLP_GRPC_MAX_CONNECTIONS);
	g->idle_ms = (uint64_t)EMBER_OPTS_GET(o, idle_s, 0) * 1000;
	g->lim = (struct otlp_grpc_limits){ .max_message = sink->max_message,
					    .max_streams = OTLP_GRPC_MAX_STREAMS,
					    .max_header_list = OTLP_GRPC_MAX_HEADER_LIST,
					    .request_ms = sink->request_ms };
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->conns = calloc(g->max_conns, sizeof(*g->conns));
	g->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	err = !g->conns ? -ENOMEM : g->wake_fd < 0 ? -errno : 0;
	if (!err && fcntl(g->listen_fd, F_SETFL, fcntl(g->listen_fd, F_GETFL) | O_NONBLOCK))
		err = -errno;
	if (!err)
		err = start_threads(g);
	if (err) {
		otlp_grpc_stop(g);
		return err;
	}
	*out = g;
	return 0;
}

static void free_list(struct otlp_grpc_call *call)
{
	for (struct otlp_grpc_call *next; call; call = next) {
		next = call->qnext;
		otlp_grpc_call_free(call);
	}
}

void otlp_grpc_stop(struct otlp_grpc_server *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	g->stopping = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	if (g->wake_fd >= 0 && g->loop_running) {
		wake(g);
		pthread_join(g->loop, NULL); /* its connections closed */
	}
	for (unsigned i = 0; i < g->n_workers; i++)
		pthread_join(g->workers[i], NULL);
	free_list(g->todo); /* their connections are gone: conn NULL */
	free_list(g->done);
	if (g->wake_fd >= 0)
		close(g->wake_fd);
	close(g->listen_fd);
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	free(g->conns);
	free(g);
}

uint64_t otlp_grpc_answered(const struct otlp_grpc_server *g, unsigned code)
{
	return g && code < OTLP_GRPC_CODES
		       ? atomic_load_explicit(&g->answered[code], memory_order_relaxed)
		       : 0;
}

const char *otlp_grpc_code_name(unsigned code)
{
	static const char *const names[OTLP_GRPC_CODES] = {
		"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
		"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
		"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
		"UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
	};

	return code < OTLP_GRPC_CODES ? names[code] : "UNKNOWN";
}
