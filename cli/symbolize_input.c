/*
 * symbolize_input.c - reading llvm-symbolizer input lines:
 *   [CODE|DATA] [MODULE] ADDRESS
 * MODULE may be double-quoted.  ADDRESS is 0x-prefixed hex or decimal.
 * And the stdin loop both modes share (cli_read_lines): every line read
 * is answered, and the answers flushed, before the next read can block.
 */
#include "cli.h"
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool cli_parse_addr(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (len - 2 > 16)
			return false;
		for (i = 2; i < len; i++) {
			int d = ember_hex_digit(s[i]);

			if (d < 0)
				return false;
			v = v << 4 | (uint64_t)d;
		}
	} else {
		if (len == 0)
			return false;
		for (i = 0; i < len; i++) {
			if (s[i] < '0' || s[i] > '9')
				return false;
			if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
				return false;
			v = v * 10 + (uint64_t)(s[i] - '0');
		}
	}
	*out = v;
	return true;
}

/* Next token of [*p, end): quoted or space-delimited. */
static bool next_token(const char **p, const char *end, const char **tok,
		       size_t *len)
{
	const char *s = *p;

	while (s < end && is_space(*s))
		s++;
	if (s == end)
		return false;
	if (*s == '"') {
		const char *q = memchr(s + 1, '"', (size_t)(end - s - 1));

		if (!q)
			return false;
		*tok = s + 1;
		*len = (size_t)(q - s - 1);
		*p = q + 1;
		return true;
	}
	*tok = s;
	while (s < end && !is_space(*s))
		s++;
	*len = (size_t)(s - *tok);
	*p = s;
	return true;
}

void cli_parse_request(const char *line, size_t len, struct cli_request *req)
{
	const char *p = line, *end = line + len, *tok[4];
	size_t tlen[4], n = 0, first = 0;

	memset(req, 0, sizeof(*req));
	while (n < 4 && next_token(&p, end, &tok[n], &tlen[n]))
		n++;
	if (n > 0 && tlen[0] == 4 &&
	    (memcmp(tok[0], "CODE", 4) == 0 || memcmp(tok[0], "DATA", 4) == 0))
		first = 1;
	if (n - first == 2) {
		req->module = tok[first];
		req->module_len = tlen[first];
	} else if (n - first != 1) {
		return; /* nothing, or trailing junk */
	}
	req->valid = cli_parse_addr(tok[n - 1], tlen[n - 1], &req->addr);
}

/* Hand every complete line of in to r->line; keep the unfinished rest. */
static int drain_lines(struct ember_buf *in, const struct cli_line_reader *r)
{
	size_t start = 0;
	char *nl;
	int err = 0;

	while (!err && in->len > start &&
	       (nl = memchr(in->data + start, '\n', in->len - start))) {
		err = r->line(r->ctx, in->data + start, (size_t)(nl - (in->data + start)));
		start = (size_t)(nl - in->data) + 1;
	}
	if (start) {
		memmove(in->data, in->data + start, in->len - start);
		in->len -= start;
	}
	return err;
}

int cli_read_lines(int fd, size_t max_line, const struct cli_line_reader *r)
{
	struct ember_buf in;
	char chunk[16384];
	int err = 0;

	ember_buf_init(&in, max_line);
	for (;;) {
		ssize_t got;

		err = drain_lines(&in, r);
		if (!err)
			err = r->idle(r->ctx);
		if (err)
			break;
		got = read(fd, chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = got < 0 ? -errno : 0;
			break;
		}
		if (ember_buf_append(&in, chunk, (size_t)got)) {
			fprintf(stderr, "ember symbolize: input line longer than %zu bytes\n",
				max_line);
			err = -E2BIG;
			break;
		}
	}
	if (!err && in.len)
		err = r->line(r->ctx, in.data, in.len);
	if (!err)
		err = r->idle(r->ctx);
	ember_buf_release(&in);
	return err;
}
