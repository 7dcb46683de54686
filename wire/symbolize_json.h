/*
 * symbolize_json.h - the JSON of POST /api/v1/symbolize: the request
 * (streamed through yajl, checked against the schema and the caps) and the
 * answer (written incrementally into a capped struct ember_buf by a small
 * escaping writer, with no JSON tree per frame).  Schema and examples:
 * docs/symbolize-api.md.
 *
 * Pipeline position: the server parses a request body here, hands the
 * plain C request to the symbolizer, and streams each address's frames
 * back through the writer; a client (`ember symbolize --server`) writes
 * the request and checks the reply here too.  Nothing here knows about
 * HTTP or DWARF: the frame struct below is this component's own, filled
 * in by the caller.
 *
 * Ownership: a struct symjson_request owns all its memory and is freed
 * with symjson_request_free(); the body it was parsed from is not
 * referenced afterwards.  So does a struct symjson_reply.  The writer borrows its ember_buf (caller-owned)
 * for as long as it writes; frame strings are read during the call only.
 * No global state: separate requests and writers may run on separate
 * threads.
 */
#ifndef EMBER_WIRE_SYMBOLIZE_JSON_H
#define EMBER_WIRE_SYMBOLIZE_JSON_H

#include "common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the request ------------------------------------------------------ */

/* What an address means inside its module. */
enum symjson_addr_kind {
	SYMJSON_VADDR = 0,	 /* ELF virtual address (as llvm-symbolizer takes) */
	SYMJSON_FILE_OFFSET = 1, /* offset in the ELF file */
};

struct symjson_address {
	uint64_t addr;
	enum symjson_addr_kind kind;
};

#define SYMJSON_BUILD_ID_HEX_MAX 128 /* hex digits (64 bytes) */

struct symjson_module {
	char build_id[SYMJSON_BUILD_ID_HEX_MAX + 1]; /* lowercase hex */
	struct symjson_address *addrs;		     /* points into the request */
	size_t naddrs;
};

/* Invariants: nmodules <= max_modules, the sum of naddrs <= max_addresses,
 * every build_id even-length lowercase hex of 2..128 digits. */
struct symjson_request {
	struct symjson_module *modules;
	size_t nmodules;
	struct symjson_address *addrs; /* all addresses, module after module */
	size_t naddrs;		/* over all modules */
	bool inlines;		/* options.inlines, default true */
	bool demangle;		/* options.demangle, default true */
};

/* Caps of one request; zero fields take the default shown, NULL all. */
struct symjson_limits {
	size_t sz;		/* sizeof(struct symjson_limits) */
	size_t max_body_bytes;	/* 32 MiB */
	size_t max_modules;	/* 4096 */
	size_t max_addresses;	/* 1 Mi, over all modules */
};

/*
 * Parse a request body (len bytes, need not be NUL-terminated).  0 and a
 * new *out (free with symjson_request_free), or: -E2BIG when the body or
 * the batch is over a cap (the server answers 413), -EINVAL when it is
 * not JSON or breaks the schema, -ENOMEM.  On failure *out is unchanged
 * and why (if non-NULL) says what, with the JSON path:
 * "modules[2].addresses[5]: not an address".
 */
int symjson_request_parse(const char *body, size_t len, const struct symjson_limits *lim,
			  struct symjson_request **out, char *why, size_t why_size);

/* Accepts NULL. */
void symjson_request_free(struct symjson_request *r);

/*
 * The same, streamed: a body fed as it arrives, never held whole.  The
 * parser, its buffers and the request are taken from acct (NULL: no
 * account) before they are allocated; past its share or budget a feed
 * fails with its error (-E2BIG, -EAGAIN).  Every failure sticks: later
 * feeds return it, and symjson_parser_why() says what (the JSON path, as
 * above).  finish hands the request over (*out, free with
 * symjson_request_free; its memory stays charged to acct).
 */
struct symjson_parser;

int symjson_parser_new(const struct symjson_limits *lim, struct ember_mem_account *acct,
		       struct symjson_parser **out);
int symjson_parser_feed(struct symjson_parser *p, const void *data, size_t len);
int symjson_parser_finish(struct symjson_parser *p, struct symjson_request **out);
const char *symjson_parser_why(const struct symjson_parser *p);
void symjson_parser_free(struct symjson_parser *p); /* NULL is fine */

/* ---- the answer ------------------------------------------------------- */

/* One frame; NULL strings and 0 numbers are left out of the JSON. */
struct symjson_frame {
	const char *function;	  /* demangled name */
	const char *linkage_name; /* raw (mangled) name */
	const char *file;
	uint32_t line;
	uint32_t column;
	bool inlined;		  /* inlined into the next frame */
};

/* Why an address has no frames ("error" in the answer). */
enum symjson_error {
	SYMJSON_OK = 0,			/* "error": null */
	SYMJSON_ERR_UNKNOWN_BUILD_ID,	/* "unknown_build_id" */
	SYMJSON_ERR_NO_DEBUGINFO,	/* "no_debuginfo" */
	SYMJSON_ERR_NO_SYMBOLS_AT_ADDRESS, /* "no_symbols_at_address" */
	SYMJSON_ERR_UPSTREAM_UNAVAILABLE,  /* "upstream_unavailable" */
	SYMJSON_ERR_OVER_BUDGET,	/* "index_over_budget": larger than --symbol-cache-mb */
	SYMJSON_ERR_STORE_UNAVAILABLE,	/* "store_unavailable": the store could not be
					   read: ask again later */
	SYMJSON_ERR_DEADLINE,		/* "deadline_exceeded": the request reached the
					   server's --request-timeout before this address */
	SYMJSON_ERR_FETCH_LIMIT,	/* "upstream_fetch_limit": the request asked
					   upstream for as many build IDs as one may */
	SYMJSON_ERR_BUSY,		/* "server_busy": the server's memory is taken by
					   other work: ask again later */
	SYMJSON_ERR_COUNT
};

/* What answered ("source" in the answer; counted in "by_source"). */
enum symjson_source {
	SYMJSON_SOURCE_NONE = 0,	/* "source": null */
	SYMJSON_SOURCE_DWARF,		/* "dwarf" */
	SYMJSON_SOURCE_SYMTAB,		/* "symtab" */
	SYMJSON_SOURCE_DYNSYM,		/* "dynsym" */
	SYMJSON_SOURCE_GOPCLNTAB,	/* "gopclntab" */
	SYMJSON_SOURCE_COUNT
};

/* The answer of one address: frames innermost first. */
struct symjson_result {
	uint64_t address;
	enum symjson_addr_kind kind;
	const struct symjson_frame *frames;
	size_t nframes;
	enum symjson_error error;
	enum symjson_source source;
};

/*
 * The answer writer.  Calls nest as
 *   symjson_answer_begin
 *     (symjson_module_begin  symjson_write_result*  symjson_module_end)*
 *   symjson_answer_end
 * and produce {"modules":[{"build_id":..,"results":[..],"resolved":N,
 * "unresolved":N,"by_source":{..}},..]}.  An address counts as resolved
 * when its error is SYMJSON_OK.  Errors are sticky: after a failure
 * (-E2BIG past the buffer's cap, -ENOMEM, -EINVAL on a call out of
 * order) every call returns it and writes nothing more; the buffer then
 * holds an incomplete document to discard.
 */
struct symjson_writer {
	struct ember_buf *out;
	int err;
	int depth;		/* 0 outside, 1 in the answer, 2 in a module */
	size_t nmodules, nresults;
	size_t resolved, unresolved;
	size_t by_source[SYMJSON_SOURCE_COUNT];
};

void symjson_writer_init(struct symjson_writer *w, struct ember_buf *out);
int symjson_answer_begin(struct symjson_writer *w);
int symjson_module_begin(struct symjson_writer *w, const char *build_id);
int symjson_write_result(struct symjson_writer *w, const struct symjson_result *r);
int symjson_module_end(struct symjson_writer *w);
int symjson_answer_end(struct symjson_writer *w);

const char *symjson_error_name(enum symjson_error e);	 /* NULL for SYMJSON_OK */
const char *symjson_source_name(enum symjson_source s); /* NULL for NONE */

/* ---- the client side: a request out, its reply in -------------------- */

/*
 * The request of one module's batch: addrs[0, n) of build_id as "0x" hex
 * strings of kind, with inlined frames and demangled names asked for (a
 * client applies its own options when printing).  Appended to body: 0, or
 * -E2BIG past its cap, -ENOMEM.
 */
int symjson_request_write(struct ember_buf *body, const char *build_id,
			  enum symjson_addr_kind kind, const uint64_t *addrs, size_t n);

/* One result of a checked reply.  Strings point into the reply: valid
 * until symjson_reply_free(). */
struct symjson_reply_item {
	uint64_t address;
	const struct symjson_frame *frames;	/* innermost first */
	size_t nframes;
	const char *error;	/* the server's reason ("unknown_build_id"), NULL if none */
	const char *source;	/* "dwarf", "symtab", ...; NULL if none */
};

struct symjson_reply;

/*
 * Parse and check the reply to a request for addrs[0, naddrs) of one
 * module: modules[0].results must hold exactly naddrs results, each naming
 * its address in order, each field of the type the schema says.  0 and
 * *out (free with symjson_reply_free), or -EPROTO with why (if non-NULL)
 * naming the check that failed by its JSON path, or -ENOMEM.  Reasons and
 * sources are passed on as sent: a newer server's are not rejected.
 */
int symjson_reply_parse(const char *body, size_t len, const uint64_t *addrs, size_t naddrs,
			struct symjson_reply **out, char *why, size_t why_size);
/* Result i (< naddrs) of a checked reply. */
const struct symjson_reply_item *symjson_reply_item(const struct symjson_reply *r, size_t i);
void symjson_reply_free(struct symjson_reply *r); /* NULL is fine */

#endif /* EMBER_WIRE_SYMBOLIZE_JSON_H */
