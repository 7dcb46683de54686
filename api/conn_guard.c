/*
 * conn_guard.c - deadlines for what a client sends: a connection must
 * deliver a whole request head within the header timeout of being opened
 * (or of its previous answer, which also bounds a keep-alive connection's
 * idle time), a symbolization or profile body within the request's
 * deadline, and an upload's body at a minimum average rate (after a
 * grace: api_guard_rate_due).  libmicrohttpd's own timeout is an idle
 * timeout only: a client sending a byte every few seconds would keep a
 * connection, and its thread, for ever.
 *
 * Each connection is registered from MHD's connection notice (its
 * socket context is our struct api_conn) and carries one deadline, or
 * none while the server itself works on a request or sends the answer.
 * A thread of its own wakes at the earliest deadline and shuts the
 * socket of every connection past its own down (shutdown(2)); the
 * connection's thread then sees the end of the stream and MHD closes it.
 * MHD gives the closing notice before it closes the socket, and both the
 * notice and the shutdown run under the guard's mutex, so a shutdown
 * never reaches a socket number MHD has closed and reused.
 */
#include "api_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

struct api_conn {
	int fd;
	uint64_t deadline_ms;		/* 0: none */
	struct api_conn *prev, *next;
};

/* The earliest deadline of the list (under mu); 0 when there is none. */
static uint64_t earliest_locked(const struct api_guard *g)
{
	uint64_t t = 0;

	for (const struct api_conn *c = g->conns; c; c = c->next)
		if (c->deadline_ms && (!t || c->deadline_ms < t))
			t = c->deadline_ms;
	return t;
}

/* Shut down every connection past its deadline (under mu). */
static void expire_locked(struct api_guard *g, uint64_t now)
{
	for (struct api_conn *c = g->conns; c; c = c->next) {
		if (!c->deadline_ms || c->deadline_ms > now)
			continue;
		c->deadline_ms = 0;
		shutdown(c->fd, SHUT_RDWR);
		atomic_fetch_add_explicit(g->timed_out, 1, memory_order_relaxed);
	}
}

/* Sleep until t (ms of ember_monotonic_ms; 0: until signalled).  The
 * time left is taken once and is 0 when t has passed meanwhile: computed
 * unsigned from a later clock reading, it wrapped to centuries, and the
 * thread slept through every later deadline (a half-sent head held its
 * connection for ever; seen under load with ASan). */
static void wait_until_locked(struct api_guard *g, uint64_t t)
{
	struct timespec ts;
	uint64_t now, left;

	if (!t) {
		pthread_cond_wait(&g->cv, &g->mu);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ember_monotonic_ms();
	left = t > now ? t - now : 0;
	ts.tv_sec += (time_t)(left / 1000);
	ts.tv_nsec += (long)(left % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&g->cv, &g->mu, &ts);
}

/* Wake the thread for a deadline at only when it comes before the time
 * the thread wakes at anyway (under mu): a deadline moved later or
 * cleared is seen then, so the common case (a request answered, the
 * next head due in header_ms) wakes nobody. */
static void wake_for_locked(struct api_guard *g, uint64_t at)
{
	if (!at || (g->wake_ms && g->wake_ms <= at))
		return;
	g->wake_ms = at;
	pthread_cond_signal(&g->cv);
}

static void *guard_thread(void *arg)
{
	struct api_guard *g = arg;

	pthread_mutex_lock(&g->mu);
	while (!g->stopping) {
		uint64_t now = ember_monotonic_ms(), t;

		expire_locked(g, now);
		t = earliest_locked(g);
		g->wake_ms = t && t > now ? t : 0;
		wait_until_locked(g, g->wake_ms);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int api_guard_start(struct api_guard *g, unsigned header_timeout_s, unsigned min_rate_kib,
		    _Atomic uint64_t *timed_out)
{
	pthread_condattr_t ca;
	int err;

	g->conns = NULL;
	g->wake_ms = 0;
	g->stopping = false;
	g->header_ms = (uint64_t)header_timeout_s * 1000;
	g->min_rate = (uint64_t)min_rate_kib * 1024;
	g->timed_out = timed_out;
	pthread_mutex_init(&g->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	err = -pthread_create(&g->thread, NULL, guard_thread, g);
	g->running = err == 0;
	return err;
}

void api_guard_stop(struct api_guard *g)
{
	if (!g->running)
		return;
	pthread_mutex_lock(&g->mu);
	g->stopping = true;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->thread, NULL);
	g->running = false;
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
}

/* A new connection: its head is due within the header timeout. */
static void conn_open(struct api_guard *g, struct MHD_Connection *mc, void **ctx)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct api_conn *c = calloc(1, sizeof(*c));

	*ctx = c;
	if (!c || !ci) {
		free(c);
		*ctx = NULL;
		return; /* unguarded: MHD's idle timeout still applies */
	}
	c->fd = ci->connect_fd;
	pthread_mutex_lock(&g->mu);
	c->deadline_ms = ember_monotonic_ms() + g->header_ms;
	c->next = g->conns;
	if (g->conns)
		g->conns->prev = c;
	g->conns = c;
	wake_for_locked(g, c->deadline_ms);
	pthread_mutex_unlock(&g->mu);
}

static void conn_close(struct api_guard *g, struct api_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&g->mu);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&g->mu);
	free(c);
}

void api_guard_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
		      enum MHD_ConnectionNotificationCode code)
{
	struct api_server *srv = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		conn_open(&srv->guard, mc, socket_context);
	else
		conn_close(&srv->guard, *socket_context);
}

static void set_deadline(struct api_guard *g, struct MHD_Connection *mc, uint64_t at)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct api_conn *c = ci ? ci->socket_context : NULL;

	if (!c)
		return;
	pthread_mutex_lock(&g->mu);
	c->deadline_ms = at;
	wake_for_locked(g, at);
	pthread_mutex_unlock(&g->mu);
}

void api_guard_body_due(struct api_guard *g, struct MHD_Connection *mc, uint64_t at_ms)
{
	set_deadline(g, mc, at_ms);
}

void api_guard_working(struct api_guard *g, struct MHD_Connection *mc)
{
	set_deadline(g, mc, 0);
}

void api_guard_next_head(struct api_guard *g, struct MHD_Connection *mc)
{
	set_deadline(g, mc, ember_monotonic_ms() + g->header_ms);
}

uint64_t api_guard_rate_due(const struct api_guard *g, uint64_t start_ms, uint64_t received)
{
	uint64_t due;

	if (!g->min_rate)
		return 0;
	due = received / g->min_rate * 1000 + received % g->min_rate * 1000 / g->min_rate;
	return start_ms + (due > API_GUARD_RATE_GRACE_MS ? due : API_GUARD_RATE_GRACE_MS);
}
