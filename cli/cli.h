/*
 * cli.h - the `ember` command line: subcommands and the pieces of
 * `ember symbolize` (an llvm-symbolizer drop-in, docs/cli.md).
 */
#ifndef EMBER_CLI_H
#define EMBER_CLI_H

#include "common.h"
#include "symbolizer.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum cli_style { CLI_STYLE_LLVM, CLI_STYLE_GNU, CLI_STYLE_JSON };
enum cli_functions { CLI_FN_LINKAGE, CLI_FN_SHORT, CLI_FN_NONE };

struct cli_symbolize_opts {
	const char *obj;	/* --obj / -e, or NULL: module named per line */
	const char *debug_dir;	/* --debug-file-directory */
	const char *server;	/* --server URL: ask it (symbolize_remote.c) */
	const char *build_id;	/* --build-id: the module, with --server */
	bool inlines;
	bool demangle;
	bool print_address;
	bool pretty;
	bool basenames;
	bool stats;		/* --stats: index figures to stderr */
	enum cli_functions functions;
	enum cli_style style;
	enum sym_addr_kind addr_kind;
};

/* Buffered output to a file descriptor (symbolize_out.c). */
struct cli_out {
	int fd;
	int err;		/* first write error, sticky */
	size_t len;
	char buf[1 << 15];
};

void cli_out_init(struct cli_out *o, int fd);
void cli_out_write(struct cli_out *o, const char *s, size_t n);
void cli_out_u64(struct cli_out *o, uint64_t v);
void cli_out_hex(struct cli_out *o, uint64_t v);	/* "0x..." */
int cli_out_flush(struct cli_out *o);
static inline void cli_out_str(struct cli_out *o, const char *s)
{
	cli_out_write(o, s, strlen(s));
}
static inline void cli_out_char(struct cli_out *o, char c)
{
	if (o->len == sizeof(o->buf))
		cli_out_flush(o);
	o->buf[o->len++] = c;
}

/* One parsed input line. */
struct cli_request {
	const char *module;	/* NULL: the --obj module */
	size_t module_len;
	uint64_t addr;
	bool valid;		/* false: echo the line, like llvm-symbolizer */
};

/* Parse "[CODE|DATA] [MODULE] ADDR" in place (line need not be NUL-ended). */
void cli_parse_request(const char *line, size_t len, struct cli_request *req);
/* Parse "0x..." hex or decimal; false on anything else. */
bool cli_parse_addr(const char *s, size_t len, uint64_t *out);

/*
 * Read fd line by line, for coprocess use: calls line() for each complete
 * line (without its '\n'; the last line need not end in one), and idle()
 * whenever the next read may block and once at the end, so that answers
 * can be flushed before the caller writes its next line.  A nonzero
 * return of either stops the loop and is returned.  Lines longer than
 * max_line fail with -E2BIG (and a message); a read error gives -errno.
 */
struct cli_line_reader {
	int (*line)(void *ctx, const char *line, size_t len);
	int (*idle)(void *ctx);
	void *ctx;
};
int cli_read_lines(int fd, size_t max_line, const struct cli_line_reader *r);

/* The options of `ember symbolize` (symbolize_opts.c).  Returns the index
 * of the first address argument, -1 on a bad option or combination (the
 * reason is on stderr), -2 for --help. */
int cli_symbolize_parse_opts(struct cli_symbolize_opts *o, int argc, char **argv);
void cli_symbolize_usage(FILE *f);

/*
 * One address's answer, as the printer takes it.  Frame names come from
 * idx (raw names, demangled through the index as the options say) or,
 * for answers that have no index (a server's), from names: one display
 * name per frame, already chosen for o->functions and o->demangle.  All
 * pointers are borrowed for the call.
 */
struct cli_answer {
	const char *module;		/* "ModuleName" of JSON */
	uint64_t addr;			/* as the user gave it */
	const struct sym_frame *frames;	/* innermost first */
	int n;				/* 0: nothing covers addr */
	const struct sym_index *idx;	/* or NULL: */
	const char *const *names;	/* n names (NULL entries: unknown), or NULL */
	const char *error;		/* why the module gave nothing (JSON
					   "Error"), or NULL */
};

/* Write the answer for one address. */
void cli_print_answer(struct cli_out *out, const struct cli_symbolize_opts *o,
		      const struct cli_answer *a);
/* Write the answer for an unparsable line. */
void cli_print_invalid(struct cli_out *out, const struct cli_symbolize_opts *o,
		       const char *module, const char *line, size_t len);

/*
 * Set the log level from --log-level (taken out of argv, *argc updated)
 * or EMBER_LOG_LEVEL, else dflt.  0, or -1 after a message for a bad
 * value (exit 2).
 */
int cli_log_setup(const char *prog, int *argc, char **argv, enum ember_log_level dflt);

int cmd_symbolize(int argc, char **argv);
/* `ember symbolize --server`, run in ember-client (symbolize_remote.c). */
int cmd_symbolize_remote(int argc, char **argv);
int cmd_unwind(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_upload(int argc, char **argv);
/* `ember query --server`, `ember diff` (server or two pprof files), run in
 * ember-client (cmd_query.c). */
int cmd_query(int argc, char **argv);
int cmd_diff(int argc, char **argv);
/* Run argv ("ember serve ...", NULL-terminated) in the helper binary next
 * to this one ("ember-server", "ember-client"); returns only on failure
 * (127). */
int cli_exec_helper(const char *helper, char **argv);

#endif /* EMBER_CLI_H */
