/*
 * symbolize_remote.h - the pieces of `ember symbolize --server` (run in
 * ember-client, symbolize_remote.c): a reply of POST /api/v1/symbolize,
 * written and checked by wire/ (symbolize_json.h), turned into the struct
 * sym_frame the shared printer takes (symbolize_remote_names.c).
 */
#ifndef EMBER_CLI_SYMBOLIZE_REMOTE_H
#define EMBER_CLI_SYMBOLIZE_REMOTE_H

#include "cli.h"
#include "common.h"
#include "symbolize_json.h"

#define REMOTE_MAX_FRAMES 256

/* One address of a reply, ready for cli_print_answer. */
struct remote_result {
	struct sym_frame frames[REMOTE_MAX_FRAMES];
	const char *names[REMOTE_MAX_FRAMES];	/* display names */
	char *owned[REMOTE_MAX_FRAMES];		/* derived names (short mode) */
	int n;
	const char *reason;	/* "error" of the answer, or NULL */
};

/*
 * Result i of a checked reply as frames and display names for options o.
 * Strings point into a (valid until symjson_reply_free) or into r (until
 * remote_result_release).
 */
void remote_result_get(const struct symjson_reply *a, size_t i,
		       const struct cli_symbolize_opts *o, struct remote_result *r);
void remote_result_release(struct remote_result *r);

#endif /* EMBER_CLI_SYMBOLIZE_REMOTE_H */
