/*
 * tcp_proxy.c - see tcp_proxy.h.  A thread accepts; a thread per
 * connection pumps both directions with poll() and applies the fault.
 */
#include "tcp_proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct tcp_proxy {
	int listen_fd, upstream_port;
	enum tcp_proxy_fault fault;
	uint64_t arg;
	pthread_t acceptor;
	pthread_mutex_t lock;
	unsigned faults, conns, active;
	_Atomic bool stopping;
};

struct conn {
	struct tcp_proxy *p;
	int client, server;
	unsigned index;
};

static const char slowdown_body[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
	"<Message>Please reduce your request rate.</Message></Error>";

/* Claim the proxy's one fault: true for the first caller only. */
static bool fault_claim(struct tcp_proxy *p)
{
	bool first;

	pthread_mutex_lock(&p->lock);
	first = p->faults == 0;
	p->faults += first;
	pthread_mutex_unlock(&p->lock);
	return first;
}

static int write_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read the first request's head and answer it with 503 SlowDown. */
static void answer_slowdown(struct conn *c)
{
	char buf[8192];
	size_t have = 0;

	while (have < sizeof(buf) - 1) {
		ssize_t n = read(c->client, buf + have, sizeof(buf) - 1 - have);

		if (n <= 0)
			return;
		have += (size_t)n;
		buf[have] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	snprintf(buf, sizeof(buf), "HTTP/1.1 503 Slow Down\r\nContent-Type: "
		 "application/xml\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s",
		 sizeof(slowdown_body) - 1, slowdown_body);
	write_all(c->client, buf, strlen(buf));
}

/* Pump both ways until either side closes; false when a fault cut it. */
static void pump(struct conn *c)
{
	struct tcp_proxy *p = c->p;
	uint64_t up = 0, down = 0;
	char buf[65536];

	for (;;) {
		struct pollfd fds[2] = { { c->client, POLLIN, 0 }, { c->server, POLLIN, 0 } };
		ssize_t n;

		if (poll(fds, 2, 1000) < 0 && errno != EINTR)
			return;
		if (p->stopping)
			return;
		for (int i = 0; i < 2; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(fds[i].fd, buf, sizeof(buf));
			if (n <= 0)
				return;
			if (i == 0) {
				up += (uint64_t)n;
				if (p->fault == TCP_PROXY_CUT && up > p->arg && fault_claim(p))
					return; /* cut mid-request */
			} else {
				if (p->fault == TCP_PROXY_FLIP && c->index == 0 &&
				    down <= p->arg && p->arg < down + (uint64_t)n &&
				    fault_claim(p))
					buf[p->arg - down] ^= 0x01;
				down += (uint64_t)n;
			}
			if (write_all(fds[1 - i].fd, buf, (size_t)n) != 0)
				return;
		}
	}
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct tcp_proxy *p = c->p;
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)p->upstream_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char sink[4096];

	if (p->fault == TCP_PROXY_STALL) {
		struct pollfd pf = { c->client, POLLIN, 0 };

		while (!p->stopping) {
			if (poll(&pf, 1, 200) <= 0)
				continue;
			if (read(c->client, sink, sizeof(sink)) <= 0)
				break;
			fault_claim(p);
		}
	} else if (p->fault == TCP_PROXY_SLOWDOWN && fault_claim(p)) {
		answer_slowdown(c);
	} else {
		c->server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c->server >= 0 && connect(c->server, (void *)&a, sizeof(a)) == 0)
			pump(c);
		if (c->server >= 0)
			close(c->server);
	}
	close(c->client);
	pthread_mutex_lock(&p->lock);
	p->active--;
	pthread_mutex_unlock(&p->lock);
	free(c);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct tcp_proxy *p = arg;

	for (;;) {
		int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		struct conn *c;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL; /* the listener was shut down */
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->p = p;
		c->client = fd;
		c->server = -1;
		pthread_mutex_lock(&p->lock);
		c->index = p->conns++;
		p->active++;
		pthread_mutex_unlock(&p->lock);
		if (pthread_create(&t, NULL, conn_main, c) != 0) {
			close(fd);
			free(c);
			pthread_mutex_lock(&p->lock);
			p->active--;
			pthread_mutex_unlock(&p->lock);
			continue;
		}
		pthread_detach(t);
	}
}

struct tcp_proxy *tcp_proxy_start(int upstream_port, enum tcp_proxy_fault fault,
				  uint64_t arg, int *port)
{
	struct tcp_proxy *p = calloc(1, sizeof(*p));
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	if (!p)
		return NULL;
	p->upstream_port = upstream_port;
	p->fault = fault;
	p->arg = arg;
	pthread_mutex_init(&p->lock, NULL);
	p->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p->listen_fd < 0 || bind(p->listen_fd, (void *)&a, sizeof(a)) != 0 ||
	    listen(p->listen_fd, 64) != 0 ||
	    getsockname(p->listen_fd, (void *)&a, &len) != 0 ||
	    pthread_create(&p->acceptor, NULL, accept_main, p) != 0) {
		if (p->listen_fd >= 0)
			close(p->listen_fd);
		free(p);
		return NULL;
	}
	*port = ntohs(a.sin_port);
	return p;
}

unsigned tcp_proxy_faults(struct tcp_proxy *p)
{
	unsigned n;

	pthread_mutex_lock(&p->lock);
	n = p->faults;
	pthread_mutex_unlock(&p->lock);
	return n;
}

unsigned tcp_proxy_connections(struct tcp_proxy *p)
{
	unsigned n;

	pthread_mutex_lock(&p->lock);
	n = p->conns;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void tcp_proxy_stop(struct tcp_proxy *p)
{
	if (!p)
		return;
	p->stopping = true;
	shutdown(p->listen_fd, SHUT_RDWR);
	pthread_join(p->acceptor, NULL);
	close(p->listen_fd);
	/* connection threads see stopping within a poll period */
	for (int i = 0; i < 300; i++) {
		unsigned active;

		pthread_mutex_lock(&p->lock);
		active = p->active;
		pthread_mutex_unlock(&p->lock);
		if (!active)
			break;
		usleep(10000);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}
