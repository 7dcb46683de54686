/*
 * symbolize_remote.c - `ember symbolize --server URL --build-id ID`: the
 * llvm-symbolizer interface of cmd_symbolize.c, answered by an `ember
 * serve` through POST /api/v1/symbolize (docs/symbolize-api.md) instead
 * of a local file.  It runs in ember-client (with the HTTP client,
 * http-client/httpc.h); `ember` execs it (cmd_symbolize.c, exec_server.c).
 *
 * Input lines are queued and sent as one request whenever the next read
 * of stdin may block (so a coprocess gets each answer before it writes
 * its next line, and a pipe of many lines goes in few requests), or when
 * the queue is full; address arguments go in one request.  One HTTP
 * client handle is reused, so the connection is kept alive.  The answers are
 * printed by symbolize_output.c, as offline answers are.  A server that
 * cannot be reached, an HTTP error or a malformed answer stops the run
 * with a message and exit status 1.
 */
#include "symbolize_remote.h"

#include "httpc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REMOTE_BATCH 4096		/* addresses (lines) per request */
#define MAX_LINE (1u << 20)
#define QUEUE_CAP ((size_t)16 << 20)	/* queued line bytes */
#define BODY_CAP ((size_t)1 << 20)	/* 4096 addresses fit in 100 KB */
#define REPLY_CAP ((size_t)256 << 20)
#define MAX_REASONS 16

struct remote_http {
	struct httpc *c;
	char *url;			/* SERVER/api/v1/symbolize */
	struct ember_buf reply;		/* capped at REPLY_CAP */
};

struct remote_run {
	struct cli_symbolize_opts opts;
	struct cli_out out;
	struct remote_http http;
	struct ember_buf queue;		/* queued input lines, back to back */
	size_t line_end[REMOTE_BATCH];	/* end offset of each queued line */
	size_t nlines;
	uint64_t addrs[REMOTE_BATCH];	/* the valid lines' addresses */
	struct ember_buf body;
	struct remote_result result;
	const char *reasons[MAX_REASONS]; /* reported once each */
	size_t nreasons;
	size_t requests, addresses;
	double wait_s;
};

/* ---- HTTP --------------------------------------------------------------- */

static int http_init(struct remote_http *h, const char *server)
{
	size_t len = strlen(server);

	while (len && server[len - 1] == '/')
		len--;
	ember_buf_init(&h->reply, REPLY_CAP);
	if (asprintf(&h->url, "%.*s/api/v1/symbolize", (int)len, server) < 0)
		return h->url = NULL, -ENOMEM;
	return httpc_new(NULL, &h->c);
}

static void http_release(struct remote_http *h)
{
	httpc_free(h->c);
	free(h->url);
	ember_buf_release(&h->reply);
}

/* POST body; the answer's status in *status and its body in h->reply.
 * A transport failure is reported on stderr and gives -EIO. */
static int http_post(struct remote_http *h, const struct ember_buf *body, long *status)
{
	/* No "Expect: 100-continue" round trip before a larger batch. */
	static const char *const line[] = { "Expect:", "Content-Type: application/json" };
	struct httpc_req q = { .method = "POST", .url = h->url, .headers = line, .nheaders = 2,
			       .body = body->data ? body->data : "", .body_len = body->len,
			       .reply = &h->reply, .connect_timeout_ms = 10000,
			       .user_agent = "ember-symbolize" };
	struct httpc_answer a;
	int err;

	ember_buf_reset(&h->reply);
	err = httpc_do(h->c, &q, &a);
	if (err) {
		fprintf(stderr, "ember symbolize: cannot reach '%s': %s\n", h->url,
			err == -E2BIG ? "answer larger than 256 MB" : a.why);
		return -EIO;
	}
	*status = a.status;
	return 0;
}

/* ---- one batch ------------------------------------------------------------ */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The server's reason for an address it could not resolve, on stderr
 * once per reason and run. */
static void report_reason(struct remote_run *run, const char *reason)
{
	for (size_t i = 0; i < run->nreasons; i++)
		if (strcmp(run->reasons[i], reason) == 0)
			return;
	if (run->nreasons < MAX_REASONS &&
	    (run->reasons[run->nreasons] = strdup(reason)))
		run->nreasons++;
	fprintf(stderr, "ember symbolize: build ID '%s' on '%s': %s\n", run->opts.build_id,
		run->opts.server, reason);
}

static void print_result(struct remote_run *run, const struct symjson_reply *ans,
			 size_t k, uint64_t addr)
{
	struct remote_result *r = &run->result;
	struct cli_answer a = { .module = run->opts.build_id, .addr = addr };

	remote_result_get(ans, k, &run->opts, r);
	if (r->reason)
		report_reason(run, r->reason);
	a.frames = r->frames;
	a.names = r->names;
	a.n = r->n;
	/* The module-level reasons are what offline mode's unreadable
	 * module is; an address nothing covers is no error there. */
	if (r->reason && strcmp(r->reason, "no_symbols_at_address") != 0)
		a.error = r->reason;
	cli_print_answer(&run->out, &run->opts, &a);
	remote_result_release(r);
}

/* Ask the server for addrs[0..n): a checked reply in *ans. */
static int ask(struct remote_run *run, size_t n, struct symjson_reply **ans)
{
	char why[512];
	long status = 0;
	double t0 = now_s();
	int err;

	ember_buf_reset(&run->body);
	err = symjson_request_write(&run->body, run->opts.build_id,
				    run->opts.addr_kind == SYM_ADDR_FILE_OFFSET ? SYMJSON_FILE_OFFSET
										: SYMJSON_VADDR,
				    run->addrs, n);
	if (err)
		fprintf(stderr, "ember symbolize: cannot write the request: %s\n", strerror(-err));
	else
		err = http_post(&run->http, &run->body, &status);
	run->wait_s += now_s() - t0;
	run->requests++;
	run->addresses += n;
	if (err)
		return err;
	if (status != 200) {
		const char *b = run->http.reply.data ? run->http.reply.data : "";

		fprintf(stderr, "ember symbolize: '%s' answered HTTP %ld: %.*s\n",
			run->http.url, status, (int)strcspn(b, "\n"), b);
		return -EIO;
	}
	err = symjson_reply_parse(run->http.reply.data, run->http.reply.len, run->addrs, n,
				  ans, why, sizeof(why));
	if (err)
		fprintf(stderr, "ember symbolize: '%s': bad answer: %s\n", run->http.url,
			err == -ENOMEM ? "out of memory" : why);
	return err;
}

static const char *queued_line(const struct remote_run *run, size_t i, size_t *len)
{
	size_t start = i ? run->line_end[i - 1] : 0;

	*len = run->line_end[i] - start;
	return run->queue.data + start;
}

/* Send the queued lines' addresses in one request and print every
 * queued line's answer, in order. */
static int send_queue(struct remote_run *run)
{
	struct symjson_reply *ans = NULL;
	struct cli_request req;
	size_t n = 0, len, k = 0;
	const char *line;
	int err = 0;

	for (size_t i = 0; i < run->nlines; i++) {
		line = queued_line(run, i, &len);
		cli_parse_request(line, len, &req);
		if (req.valid && !req.module)
			run->addrs[n++] = req.addr;
	}
	if (n)
		err = ask(run, n, &ans);
	for (size_t i = 0; !err && i < run->nlines; i++) {
		line = queued_line(run, i, &len);
		cli_parse_request(line, len, &req);
		if (req.valid && !req.module) {
			print_result(run, ans, k, run->addrs[k]);
			k++;
		} else { /* a MODULE is the --build-id's to name, not the line's */
			cli_print_invalid(&run->out, &run->opts, run->opts.build_id, line, len);
		}
	}
	symjson_reply_free(ans);
	run->nlines = 0;
	ember_buf_reset(&run->queue);
	return err;
}

/* ---- input ------------------------------------------------------------------ */

static int queue_line(void *ctx, const char *line, size_t len)
{
	struct remote_run *run = ctx;
	int err = 0;

	if (run->nlines == REMOTE_BATCH || run->queue.len + len > QUEUE_CAP)
		err = send_queue(run);
	if (!err)
		err = ember_buf_append(&run->queue, line, len);
	if (err == -E2BIG)
		fprintf(stderr, "ember symbolize: input line longer than %zu bytes\n", QUEUE_CAP);
	if (!err)
		run->line_end[run->nlines++] = run->queue.len;
	return err;
}

/* Before a read may block: ask, answer, flush. */
static int answer_queue(void *ctx)
{
	struct remote_run *run = ctx;
	int err = run->nlines ? send_queue(run) : 0;

	if (cli_out_flush(&run->out) && !err) {
		fprintf(stderr, "ember symbolize: cannot write output: %s\n",
			strerror(-run->out.err));
		err = run->out.err;
	}
	return err;
}

static int run_remote(struct remote_run *run, int first, int argc, char **argv)
{
	struct cli_line_reader reader = { queue_line, answer_queue, run };
	int err = 0;

	if (first == argc)
		return cli_read_lines(STDIN_FILENO, MAX_LINE, &reader);
	for (int i = first; !err && i < argc; i++)
		err = queue_line(run, argv[i], strlen(argv[i]));
	return err ? err : answer_queue(run);
}

static void run_release(struct remote_run *run)
{
	http_release(&run->http);
	ember_buf_release(&run->queue);
	ember_buf_release(&run->body);
	for (size_t i = 0; i < run->nreasons; i++)
		free((char *)run->reasons[i]);
}

int cmd_symbolize_remote(int argc, char **argv)
{
	struct remote_run *run = calloc(1, sizeof(*run));
	int first, err;

	if (!run)
		return 1;
	run->opts = (struct cli_symbolize_opts){ .inlines = true, .demangle = true };
	first = cli_symbolize_parse_opts(&run->opts, argc, argv);
	if (first >= 0 && !run->opts.server) {
		fputs("ember symbolize: this binary symbolizes through a server only; "
		      "use `ember symbolize` without --server for local files\n", stderr);
		first = -1;
	}
	if (first < 0) {
		cli_symbolize_usage(first == -2 ? stdout : stderr);
		free(run);
		return first == -2 ? 0 : 2;
	}
	cli_out_init(&run->out, STDOUT_FILENO);
	ember_buf_init(&run->queue, QUEUE_CAP);
	ember_buf_init(&run->body, BODY_CAP);
	err = http_init(&run->http, run->opts.server);
	if (err)
		fprintf(stderr, "ember symbolize: cannot start an HTTP client: %s\n",
			strerror(-err));
	if (!err)
		err = run_remote(run, first, argc, argv);
	if (cli_out_flush(&run->out) && !err)
		err = run->out.err;
	if (run->opts.stats)
		fprintf(stderr, "stats: %zu requests for %zu addresses to '%s', %.3f s waiting\n",
			run->requests, run->addresses, run->opts.server, run->wait_s);
	run_release(run);
	free(run);
	return err ? 1 : 0;
}
