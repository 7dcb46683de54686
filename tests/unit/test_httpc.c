/*
 * test_httpc.c - the HTTP client (http-client/httpc.h) against a real
 * loopback server started here: a listener thread that answers one
 * connection (echoing the request's method and body, or a body of a
 * given size) or accepts it and never answers.  Libcurl is the real one,
 * loaded with dlopen; a machine without it skips.
 */
#include "httpc.h"
#include "unit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

enum srv_mode {
	SRV_ECHO,	/* answer: 201, X-Method, the request's body or body_size 'x's */
	SRV_SILENT,	/* accept, read, never answer */
};

struct srv {
	int fd, port;
	enum srv_mode mode;
	size_t body_size;
	pthread_t thread;
};

/* The request's head and its Content-Length body into req (NUL-ended). */
static size_t read_request(int c, char *req, size_t cap)
{
	size_t n = 0, want = 0;
	char *end = NULL;

	while (n + 1 < cap) {
		ssize_t got = read(c, req + n, cap - 1 - n);

		if (got <= 0)
			break;
		n += (size_t)got;
		req[n] = '\0';
		if (!end && (end = strstr(req, "\r\n\r\n"))) {
			const char *cl = strcasestr(req, "Content-Length:");

			want = (size_t)(end + 4 - req) + (cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0);
		}
		if (end && n >= want)
			break;
	}
	req[n] = '\0';
	return n;
}

static void answer(struct srv *s, int c)
{
	static char req[1 << 16];
	char head[256], method[16] = "";
	size_t n = read_request(c, req, sizeof(req));
	char *body = strstr(req, "\r\n\r\n");
	size_t blen = body ? n - (size_t)(body + 4 - req) : 0;
	char *big = NULL;

	sscanf(req, "%15s", method);
	if (s->body_size) {
		big = malloc(s->body_size);
		memset(big, 'x', s->body_size);
		body = big;
		blen = s->body_size;
	} else if (body) {
		body += 4;
	}
	snprintf(head, sizeof(head),
		 "HTTP/1.1 201 Created\r\nContent-Length: %zu\r\nX-Method: %s\r\n"
		 "Connection: close\r\n\r\n", blen, method);
	if (write(c, head, strlen(head)) > 0 && blen)
		(void)!write(c, body, blen);
	free(big);
}

static void *serve(void *arg)
{
	struct srv *s = arg;
	int c = accept(s->fd, NULL, NULL);
	char buf[4096];

	if (c < 0)
		return NULL;
	if (s->mode == SRV_ECHO)
		answer(s, c);
	else
		while (read(c, buf, sizeof(buf)) > 0) /* until the client gives up */
			;
	close(c);
	return NULL;
}

static int srv_start(struct srv *s, enum srv_mode mode, size_t body_size)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	s->mode = mode;
	s->body_size = body_size;
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(s->fd, (struct sockaddr *)&a, &len) || listen(s->fd, 4))
		return -errno;
	s->port = ntohs(a.sin_port);
	return -pthread_create(&s->thread, NULL, serve, s);
}

static void srv_stop(struct srv *s)
{
	shutdown(s->fd, SHUT_RDWR); /* an accept() still waiting returns */
	pthread_join(s->thread, NULL);
	close(s->fd);
}

static void url_of(const struct srv *s, char *url, size_t size)
{
	snprintf(url, size, "http://127.0.0.1:%d/path?q=1", s->port);
}

/* A handle, or UNIT_SKIP where libcurl cannot be loaded. */
static int new_handle(struct httpc **h)
{
	int err = httpc_new(NULL, h);

	return err == -ENOSYS ? UNIT_SKIP : err ? 1 : 0;
}

static void on_header(void *ctx, const char *line, size_t n)
{
	char *method = ctx;
	const char *v;
	size_t vn;

	if (httpc_header_is(line, n, "X-Method", &v, &vn) && vn < 16)
		snprintf(method, 16, "%.*s", (int)vn, v);
}

static int test_httpc__get_status_headers_body(void)
{
	struct srv s;
	struct httpc *h;
	struct httpc_answer a;
	struct ember_buf b;
	char url[64], method[16] = "";
	struct httpc_req q = { .url = url, .reply = &b, .header = on_header,
			       .header_ctx = method, .timeout_ms = 10000 };
	int rc = new_handle(&h), err;

	if (rc)
		return rc;
	CHECK_INT(srv_start(&s, SRV_ECHO, 10), ==, 0);
	url_of(&s, url, sizeof(url));
	ember_buf_init(&b, 100);
	err = httpc_do(h, &q, &a);
	srv_stop(&s);
	CHECK_INT(err, ==, 0);
	CHECK_INT(a.status, ==, 201);
	CHECK_STR(method, "GET");
	CHECK_STR(b.data, "xxxxxxxxxx");
	ember_buf_release(&b);
	httpc_free(h);
	return 0;
}

static ssize_t read_from(void *ctx, uint64_t off, char *buf, size_t n)
{
	const char *src = ctx;
	size_t left = strlen(src) - (size_t)off;

	if (n > left)
		n = left;
	memcpy(buf, src + off, n);
	return (ssize_t)n;
}

/* One request of method with body (from memory, or through read) to an
 * echoing server: the method and body it saw into method and b. */
static int echo(struct httpc *h, const char *m, const char *body, bool stream,
		char method[16], struct ember_buf *b)
{
	struct srv s;
	struct httpc_answer a;
	char url[64];
	struct httpc_req q = { .method = m, .url = url, .reply = b, .header = on_header,
			       .header_ctx = method, .timeout_ms = 10000 };
	int err;

	if (body && stream) {
		q.read = read_from;
		q.read_ctx = (void *)body;
	} else {
		q.body = body;
	}
	q.body_len = body ? strlen(body) : 0;
	err = srv_start(&s, SRV_ECHO, 0);
	if (err)
		return err;
	url_of(&s, url, sizeof(url));
	ember_buf_reset(b);
	method[0] = '\0';
	err = httpc_do(h, &q, &a);
	srv_stop(&s);
	return err ? err : a.status == 201 ? 0 : -EPROTO;
}

static int test_httpc__bodies_from_memory_and_callback(void)
{
	struct httpc *h;
	struct ember_buf b;
	char method[16];
	int rc = new_handle(&h);

	if (rc)
		return rc;
	ember_buf_init(&b, 1000);
	CHECK_INT(echo(h, "POST", "from memory", false, method, &b), ==, 0);
	CHECK_STR(method, "POST");
	CHECK_STR(b.data, "from memory");
	CHECK_INT(echo(h, "PUT", "through the callback", true, method, &b), ==, 0);
	CHECK_STR(method, "PUT");
	CHECK_STR(b.data, "through the callback");
	CHECK_INT(echo(h, "POST", "posted through the callback", true, method, &b), ==, 0);
	CHECK_STR(method, "POST");
	CHECK_STR(b.data, "posted through the callback");
	CHECK_INT(echo(h, "PUT", "put from memory", false, method, &b), ==, 0);
	CHECK_STR(method, "PUT");
	CHECK_STR(b.data, "put from memory");
	CHECK_INT(echo(h, "DELETE", NULL, false, method, &b), ==, 0);
	CHECK_STR(method, "DELETE");
	CHECK_INT(b.len, ==, 0);
	ember_buf_release(&b);
	httpc_free(h);
	return 0;
}

static int test_httpc__body_over_cap_is_e2big(void)
{
	struct srv s;
	struct httpc *h;
	struct httpc_answer a;
	struct ember_buf b;
	char url[64];
	struct httpc_req q = { .url = url, .reply = &b, .timeout_ms = 10000 };
	int rc = new_handle(&h), err;

	if (rc)
		return rc;
	CHECK_INT(srv_start(&s, SRV_ECHO, 100000), ==, 0);
	url_of(&s, url, sizeof(url));
	ember_buf_init(&b, 1000);
	err = httpc_do(h, &q, &a);
	srv_stop(&s);
	CHECK_INT(err, ==, -E2BIG);
	CHECK_INT(a.status, ==, 0);
	CHECK(a.why[0] != '\0');
	CHECK(b.len <= 1000);
	ember_buf_release(&b);
	httpc_free(h);
	return 0;
}

static int refuse_write(void *ctx, const char *p, size_t n)
{
	(void)ctx, (void)p, (void)n;
	return -ENOSPC;
}

static int test_httpc__write_callback_error_is_returned(void)
{
	struct srv s;
	struct httpc *h;
	struct httpc_answer a;
	char url[64];
	struct httpc_req q = { .url = url, .write = refuse_write, .timeout_ms = 10000 };
	int rc = new_handle(&h), err;

	if (rc)
		return rc;
	CHECK_INT(srv_start(&s, SRV_ECHO, 10), ==, 0);
	url_of(&s, url, sizeof(url));
	err = httpc_do(h, &q, &a);
	srv_stop(&s);
	CHECK_INT(err, ==, -ENOSPC);
	httpc_free(h);
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int test_httpc__timeout_against_a_silent_server(void)
{
	struct srv s;
	struct httpc *h;
	struct httpc_answer a;
	char url[64];
	struct httpc_req q = { .url = url, .timeout_ms = 300 };
	double t0;
	int rc = new_handle(&h), err;

	if (rc)
		return rc;
	CHECK_INT(srv_start(&s, SRV_SILENT, 0), ==, 0);
	url_of(&s, url, sizeof(url));
	t0 = now_s();
	err = httpc_do(h, &q, &a);
	t0 = now_s() - t0;
	httpc_free(h); /* closes the connection: the server's thread ends */
	srv_stop(&s);
	CHECK_INT(err, ==, -ETIMEDOUT);
	CHECK(t0 >= 0.25 && t0 < 5);
	return 0;
}

static int stop_now(void *ctx, uint64_t now, uint64_t total)
{
	(void)ctx, (void)now, (void)total;
	return 1;
}

static int test_httpc__progress_callback_cancels(void)
{
	struct srv s;
	struct httpc *h;
	struct httpc_answer a;
	char url[64];
	struct httpc_req q = { .url = url, .progress = stop_now, .timeout_ms = 10000 };
	int rc = new_handle(&h), err;

	if (rc)
		return rc;
	CHECK_INT(srv_start(&s, SRV_SILENT, 0), ==, 0);
	url_of(&s, url, sizeof(url));
	err = httpc_do(h, &q, &a);
	httpc_free(h);
	srv_stop(&s);
	CHECK_INT(err, ==, -ECANCELED);
	return 0;
}

static int test_httpc__connection_refused(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	struct httpc *h;
	struct httpc_answer a;
	char url[64];
	struct httpc_req q = { .url = url, .timeout_ms = 10000 };
	int rc = new_handle(&h), fd, err;

	if (rc)
		return rc;
	/* a port that was just free: bound, not listening, closed */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", ntohs(sa.sin_port));
	err = httpc_do(h, &q, &a);
	CHECK_INT(err, ==, -ECONNREFUSED);
	CHECK_INT(a.status, ==, 0);
	CHECK(a.why[0] != '\0');
	httpc_free(h);
	return 0;
}

static int test_httpc__escape_and_header_reader(void)
{
	struct ember_buf b;
	const char *v;
	size_t vn;
	int err;

	ember_buf_init(&b, 100);
	err = httpc_escape(&b, "a b/c~-._&=\xc3\xa9");
	if (err == -ENOSYS)
		return UNIT_SKIP;
	CHECK_INT(err, ==, 0);
	CHECK_STR(b.data, "a%20b%2Fc~-._%26%3D%C3%A9");
	ember_buf_release(&b);
	CHECK(httpc_header_is("etag:  \"abc\" \r\n", 15, "ETag", &v, &vn));
	CHECK_INT(vn, ==, 5);
	CHECK(memcmp(v, "\"abc\"", 5) == 0);
	CHECK(!httpc_header_is("ETagx: 1\r\n", 10, "ETag", &v, &vn));
	CHECK(!httpc_header_is("ETag\r\n", 6, "ETag", &v, &vn));
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_httpc__get_status_headers_body),
	UNIT_CASE(test_httpc__bodies_from_memory_and_callback),
	UNIT_CASE(test_httpc__body_over_cap_is_e2big),
	UNIT_CASE(test_httpc__write_callback_error_is_returned),
	UNIT_CASE(test_httpc__timeout_against_a_silent_server),
	UNIT_CASE(test_httpc__progress_callback_cancels),
	UNIT_CASE(test_httpc__connection_refused),
	UNIT_CASE(test_httpc__escape_and_header_reader),
};

UNIT_MAIN_QUIET(cases)
