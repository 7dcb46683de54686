/*
 * symbolize_remote.h - the pieces of `ember symbolize --server` (run in
 * ember-server, symbolize_remote.c): the JSON of POST /api/v1/symbolize
 * seen from the client side (symbolize_remote_json.c; the schema is in
 * docs/symbolize-api.md), turned into the struct sym_frame the shared
 * printer takes.
 */
#ifndef EMBER_CLI_SYMBOLIZE_REMOTE_H
#define EMBER_CLI_SYMBOLIZE_REMOTE_H

#include "cli.h"
#include "common.h"

#include <jansson.h>

#define REMOTE_MAX_FRAMES 256

/*
 * The request for one batch of one module: addrs[0..n) as hex strings,
 * inlined frames and demangled names always asked for (the options are
 * applied when printing, as offline mode applies them).  Appends to body;
 * -E2BIG past its cap.
 */
int remote_request_write(struct ember_buf *body, const char *build_id,
			 bool file_offsets, const uint64_t *addrs, size_t n);

/* A checked answer: results has exactly the number of addresses asked. */
struct remote_answer {
	json_t *root;		/* owns everything below */
	json_t *results;	/* modules[0].results */
};

/*
 * Parse and check the answer to a request for addrs[0..naddrs) (each
 * result must name its address, in order).  0 and *out
 * (release with remote_answer_release), or -EPROTO with why saying which
 * part of the answer is wrong ("results[3].frames[0].line: not an
 * integer"), or -ENOMEM.
 */
int remote_answer_parse(const char *body, size_t len, const uint64_t *addrs,
			size_t naddrs, struct remote_answer *out, char *why,
			size_t why_size);
void remote_answer_release(struct remote_answer *a);

/* One address of an answer, ready for cli_print_answer. */
struct remote_result {
	struct sym_frame frames[REMOTE_MAX_FRAMES];
	const char *names[REMOTE_MAX_FRAMES];	/* display names */
	char *owned[REMOTE_MAX_FRAMES];		/* derived names (short mode) */
	int n;
	const char *reason;	/* "error" of the answer, or NULL */
};

/*
 * Result i of a checked answer as frames and display names for options o.
 * Strings point into a (valid until remote_answer_release) or into r
 * (until remote_result_release).
 */
void remote_result_get(const struct remote_answer *a, size_t i,
		       const struct cli_symbolize_opts *o, struct remote_result *r);
void remote_result_release(struct remote_result *r);

#endif /* EMBER_CLI_SYMBOLIZE_REMOTE_H */
