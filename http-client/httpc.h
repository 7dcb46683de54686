/*
 * httpc.h - Ember's one HTTP client: libcurl, loaded with dlopen once per
 * process (common.h's ember_dl_load) behind one function table, so that a
 * program maps libcurl and its TLS, Kerberos and LDAP libraries only when
 * it first makes a request: ember-server with --storage or --scrape,
 * ember-agent with --server, ember-client.  The S3 client (object-store/),
 * the scraper (profile-service/scrape_http.c), the agent (agent/http.c),
 * the client commands (cli/upload_http.c, cli/symbolize_remote.c,
 * cli/cmd_query.c) and bench/symbolize-api go through it; nothing else
 * includes curl.h.
 *
 * A handle (struct httpc) is one libcurl easy handle, reused request after
 * request so that its connections stay alive; one thread at a time uses
 * it.  Handles made on one struct httpc_share share connections and DNS
 * across threads.  A request (struct httpc_req) says the method, URL,
 * header lines, the body (from memory or a read callback), where the
 * answer goes (a capped buffer or a write callback) and the timeouts.
 *
 * Errors: every int function returns 0 or a negative errno:
 *   -ENOSYS        libcurl cannot be loaded (the reason is logged)
 *   -ECONNREFUSED  the connection was refused
 *   -EHOSTUNREACH  the host name cannot be resolved
 *   -ETIMEDOUT     the connect, the whole transfer or a stall timed out
 *   -ECONNRESET    the connection broke (send, receive, nothing or part
 *                  of an answer)
 *   -E2BIG         the answer passed the reply buffer's cap
 *   -ECANCELED     the progress callback asked to stop
 *   -ENOMEM        out of memory
 *   -EIO           any other failure (TLS, protocol, a bad URL)
 * and a callback's own negative errno when a callback stopped the transfer.
 */
#ifndef EMBER_HTTPC_H
#define EMBER_HTTPC_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The shared object loaded: for messages ("cannot load ..."). */
#define HTTPC_SONAME "libcurl-gnutls.so.4"

struct httpc;
struct httpc_share;

/* Load and initialize libcurl, once per process (later calls return the
 * first result): 0, or -ENOSYS with the reason logged. */
int httpc_load(void);

/* A share of connections and DNS for handles used from several threads
 * (its own locks): 0 and *out, or -ENOSYS, -ENOMEM. */
int httpc_share_new(struct httpc_share **out);
/* After every handle made on it is freed.  NULL is fine. */
void httpc_share_free(struct httpc_share *s);

/* A handle (loads libcurl first), on share (NULL: none): 0 and *out, or
 * -ENOSYS, -ENOMEM. */
int httpc_new(struct httpc_share *share, struct httpc **out);
void httpc_free(struct httpc *h);

/* The body's bytes at off (up to n): how many (> 0), or a negative errno;
 * 0 is taken for -EIO (the source shrank).  A request may be re-sent
 * (a redirect, an authentication round): off then starts again at 0. */
typedef ssize_t (*httpc_read_fn)(void *ctx, uint64_t off, char *buf, size_t n);
/* n bytes of the answer's body: 0, or a negative errno that stops the
 * transfer and is what httpc_do returns. */
typedef int (*httpc_write_fn)(void *ctx, const char *p, size_t n);
/* One header line of an answer, status lines ("HTTP/1.1 100 Continue")
 * and the closing empty line included, with its CRLF; not NUL-terminated. */
typedef void (*httpc_header_fn)(void *ctx, const char *line, size_t n);
/* Called about once a second and as bytes move: nonzero stops the
 * transfer (-ECANCELED). */
typedef int (*httpc_progress_fn)(void *ctx, uint64_t up_now, uint64_t up_total);

struct httpc_req {
	const char *method;	/* NULL: GET; HEAD, POST, PUT, DELETE, ... */
	const char *url;
	const char *const *headers; /* nheaders "Name: value" lines; "Name:"
				     * removes one libcurl would add ("Expect:") */
	size_t nheaders;
	/* The body: body_len bytes from body, or from read when it is set
	 * (PUT then streams it as an upload, POST as a post). */
	const void *body;
	uint64_t body_len;
	httpc_read_fn read;
	void *read_ctx;
	/* The answer's body: appended to reply (capped when it was
	 * initialized: -E2BIG past it), or given to write, or dropped. */
	struct ember_buf *reply;
	httpc_write_fn write;
	void *write_ctx;
	httpc_header_fn header;	/* NULL: headers not read */
	void *header_ctx;
	httpc_progress_fn progress;
	void *progress_ctx;
	unsigned connect_timeout_ms; /* 0: libcurl's (300 s) */
	unsigned timeout_ms;	     /* the whole transfer; 0: none */
	unsigned stall_ms;	     /* fail after this long without a byte; 0: never */
	const char *user_agent;	     /* NULL: none */
};

struct httpc_answer {
	long status;	   /* the last answer's HTTP status; 0 when none came */
	double connect_s;  /* how long the connect took (0 on a reused one) */
	char why[256];	   /* libcurl's reason when httpc_do failed */
};

/* Send q on h and wait for the whole answer (http and https only): 0 when
 * an answer came (whatever its status), else a negative errno (the list
 * above) with a->why saying what happened. */
int httpc_do(struct httpc *h, const struct httpc_req *q, struct httpc_answer *a);

/* Append s, percent-encoded as a URL's query value (every byte but
 * A-Z a-z 0-9 - . _ ~), to out: 0, -ENOSYS, -ENOMEM, -E2BIG. */
int httpc_escape(struct ember_buf *out, const char *s);

/* Whether line (n bytes, as httpc_header_fn gets it) is the header name
 * (any case): then *value and *vlen are its value, blanks and the line
 * end trimmed (pointing into line). */
bool httpc_header_is(const char *line, size_t n, const char *name, const char **value,
		     size_t *vlen);

/* An HTTP date (Last-Modified) as a time, or -1 (libcurl's parser). */
time_t httpc_date(const char *s);

#endif /* EMBER_HTTPC_H */
