/*
 * deadline.c - a request's deadline and its client, as the check the
 * symbolization service polls between steps (symsvc_check_fn): past
 * --request-timeout the work stops with -ETIMEDOUT, and a client whose
 * socket has closed (POLLRDHUP: it shut its side or went away) stops it
 * with -ECANCELED, so nobody's abandoned request keeps a core busy.
 */
#include "api_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>

void api_deadline_init(struct api_deadline *d, struct api_server *srv,
		       const struct api_request *req)
{
	d->at_ms = req->deadline_ms;
	d->fd = req->conn_fd;
	d->metrics = &srv->metrics;
	d->stopped = 0;
}

static bool client_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

int api_deadline_check(void *arg)
{
	struct api_deadline *d = arg;

	if (d->stopped)
		return d->stopped; /* said once, counted once */
	if (ember_monotonic_ms() >= d->at_ms) {
		atomic_fetch_add_explicit(&d->metrics->requests_timed_out, 1,
					  memory_order_relaxed);
		d->stopped = -ETIMEDOUT;
	} else if (client_gone(d->fd)) {
		atomic_fetch_add_explicit(&d->metrics->requests_cancelled, 1,
					  memory_order_relaxed);
		d->stopped = -ECANCELED;
	}
	return d->stopped;
}

void api_deadline_request_opts(struct api_server *srv, struct api_deadline *d,
			       struct symsvc_request_opts *ro)
{
	*ro = (struct symsvc_request_opts){ .sz = sizeof(*ro), .check = api_deadline_check,
					    .check_arg = d,
					    .max_fetches = srv->max_fetches,
					    .deadline_ms = d->at_ms };
}

enum MHD_Result api_respond_stopped(struct api_server *srv, struct MHD_Connection *c,
				    const struct api_request *req, int err)
{
	char body[160];

	if (err == -ECANCELED)
		return MHD_NO; /* nobody to answer */
	snprintf(body, sizeof(body),
		 "the request did not finish within the server's request timeout of %llu s\n",
		 (unsigned long long)(srv->request_timeout_ms / 1000));
	return api_respond_text(srv, c, req, api_status_of_kind(EMBER_ERRK_TIMEOUT), NULL, body);
}
