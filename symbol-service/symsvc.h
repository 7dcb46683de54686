/*
 * symsvc.h - the symbolization service: build IDs and addresses in,
 * frames out, for the HTTP routes (api/symbolize.c, api/symbolize_pprof.c)
 * and for in-process callers (the profile service's ingest and its
 * query-time resolver, profile-service/) alike.
 *
 * Pipeline position: between the stores and the transports.  The service
 * owns the symbol indexes of build IDs: it loads the index saved in the
 * debuginfo store for the build ID's best files, or builds it (symbolizer)
 * and saves it (docs/symbol-index-format.md); keeps loaded indexes in an
 * LRU under a memory budget; asks its owner's upstream fetch for build
 * IDs the store does not know; looks addresses up in address order; and
 * produces the answer of the JSON route (wire/symbolize_json.h) a chunk at
 * a time, or fills a decoded pprof profile's locations (wire/pprof.h).
 * Nothing here knows about HTTP: the caller parses requests and writes
 * answers.
 *
 * Errors: 0 or a negative errno; what an error means for an address is
 * symsvc_error_reason().  -ENOENT is only ever "no file of this build ID
 * anywhere"; a store that cannot be read is its own error (-EIO, ...),
 * which HTTP answers 503.
 *
 * Thread safety: a struct symsvc is used by any number of threads at
 * once; a batch, an answer and a profile belong to one thread at a time.
 * No global state.
 */
#ifndef EMBER_SYMSVC_H
#define EMBER_SYMSVC_H

#include "common.h"
#include "pprof.h"
#include "store.h"
#include "symbolize_json.h"
#include "symbolizer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symsvc;

/* ---- the service ---------------------------------------------------------- */

struct symsvc_request_opts;

/*
 * The owner's upstream fetch: bring the file of build_id that want names
 * (STORE_WANT_DEBUGINFO or STORE_WANT_EXECUTABLE) from upstream debuginfod
 * servers into the store, for the request ro (NULL: no limits): waiting
 * no longer than its deadline_ms, and polling its check while it waits.
 * Returns 0 when it is stored; -ENOENT when no upstream has it; -ENOSYS
 * when there is no upstream; -EHOSTUNREACH when upstream failed or
 * -ECANCELED when the owner is stopping; -ETIMEDOUT when the deadline
 * came first, or the check's error; any other negative errno when what
 * arrived could not be stored (the store's error).
 */
typedef int (*symsvc_fetch_fn)(void *arg, const char *build_id, enum store_want want,
			       const struct symsvc_request_opts *ro);

/* Options; NULL or zero fields take the defaults. */
struct symsvc_opts {
	size_t sz;			/* sizeof(struct symsvc_opts) */
	uint64_t cache_bytes;		/* loaded indexes' memory: 1 GiB */
	symsvc_fetch_fn fetch;		/* asked before "unknown": none */
	void *fetch_arg;
	/* An index build is bounded by build_bytes (passed to the symbolizer,
	 * sym_open_opts.max_bytes) and takes what it is expected to use of
	 * budget while it runs (twice its files and 8 MiB, at most
	 * build_bytes); one the budget cannot give fails with -EAGAIN
	 * (server_busy), not remembered.  budget is borrowed; NULL: builds
	 * take nothing. */
	struct ember_mem_budget *budget;
	uint64_t build_bytes;
};

/* A service over store s (borrowed: it must outlive the service).  *out is
 * the caller's, freed with symsvc_free() once no thread uses it. */
int symsvc_new(struct store *s, const struct symsvc_opts *o, struct symsvc **out);
void symsvc_free(struct symsvc *svc); /* NULL is fine */
/* The store the service reads (borrowed: symsvc_new's). */
struct store *symsvc_store(const struct symsvc *svc);

struct symsvc_stats {
	uint64_t bytes, budget;	/* loaded indexes' memory, and its budget */
	size_t loaded;		/* indexes in the LRU */
	size_t builds;		/* indexes built from DWARF and symbol tables */
	size_t evictions, refused;
	size_t disk_loads;	/* indexes mapped from their saved file */
	size_t pin_loads;	/* of which through a pin, the store still opening */
	size_t unsaved;		/* builds that could not be saved (kept in memory) */
	size_t rebuilds;	/* indexes superseded by better uploaded files */
	size_t build_failures;	/* builds that failed for what their files are */
	size_t failures_cached;	/* requests answered with such a failure, not built again */
};
void symsvc_get_stats(struct symsvc *svc, struct symsvc_stats *st);

/*
 * What an error of symsvc_index_get() (or of any call below) means for the
 * addresses it leaves without frames: -ENOENT unknown_build_id, -E2BIG
 * index_over_budget, -EHOSTUNREACH upstream_unavailable, the symbolizer's
 * -SYM_ERR_* no_debuginfo, -ETIMEDOUT deadline_exceeded, -ENOBUFS
 * upstream_fetch_limit (the request's max_fetches reached), -EAGAIN
 * server_busy, any other errno store_unavailable (the store or its files
 * could not be read: ask again).
 */
enum symjson_error symsvc_error_reason(int err);
/*
 * What such an error means to whoever asked, from its reason alone:
 * unknown_build_id EMBER_ERRK_NOT_FOUND, no_debuginfo
 * EMBER_ERRK_UNPROCESSABLE, index_over_budget (and -E2BIG of editing a
 * profile) EMBER_ERRK_TOO_LARGE, upstream_unavailable
 * EMBER_ERRK_UNAVAILABLE, deadline_exceeded EMBER_ERRK_TIMEOUT,
 * upstream_fetch_limit EMBER_ERRK_OVER_LIMIT, server_busy
 * EMBER_ERRK_BUSY; of store_unavailable, -ENOMEM EMBER_ERRK_INTERNAL (the
 * request's own allocation failed) and any other errno
 * ember_errkind_of_errno().
 */
enum ember_errkind symsvc_error_kind(int err);

/* ---- what one request may spend -------------------------------------------- */

/*
 * Polled between the steps of a request's work (before each module or
 * mapping, every few hundred addresses, and while it waits for another
 * request's build of an index): 0 to go on, or a negative errno that
 * stops the work: -ETIMEDOUT (the request's deadline passed), -ECANCELED
 * (its client went away), or any other.
 */
typedef int (*symsvc_check_fn)(void *arg);

/* One request's limits; NULL or zero fields: none. */
struct symsvc_request_opts {
	size_t sz;			/* sizeof(struct symsvc_request_opts) */
	symsvc_check_fn check;		/* NULL: never stopped */
	void *check_arg;
	unsigned max_fetches;		/* build IDs it may ask upstream for; 0: no cap */
	uint64_t deadline_ms;		/* ember_monotonic_ms() an upstream fetch is
					   waited for until; 0: none */
	struct ember_mem_account *account; /* the answer's buffers grow through it
					      (borrowed); NULL: none */
};

/*
 * One request's limits as they are spent, across calls: its fetches left
 * and its check's first error, for a caller that gets indexes one at a
 * time on a request's behalf (the profile service's query-time resolver,
 * called once per mapping).  One thread at a time.  o is copied (NULL: no
 * limits); *out to symsvc_req_free().  0 or -ENOMEM.
 */
struct symsvc_req;
int symsvc_req_new(const struct symsvc_request_opts *o, struct symsvc_req **out);
void symsvc_req_free(struct symsvc_req *r); /* NULL is fine */
/* The error its check stopped the request with (kept), 0 while it runs
 * (and for a NULL r). */
int symsvc_req_stopped(const struct symsvc_req *r);

/* ---- indexes ---------------------------------------------------------------- */

struct symsvc_index;

/*
 * A reference to the index of build_id in *out, kept alive until
 * symsvc_index_put(): the index saved for the store's current best files,
 * else one built from them and saved; an index made before better files
 * were uploaded is replaced (a loaded one is kept while the store cannot
 * say).  Requests that arrive while it is built wait for that one build.
 * Returns 0, or an error as symsvc_error_reason() reads it.  A build that
 * fails for what its files are (the symbolizer rejects them, the index is
 * over the budget) is remembered by its inputs' content (their sha256s):
 * later calls get the same error at once, until better files are stored.
 * Other failures (the store, the request's limits) are not remembered.
 */
int symsvc_index_get(struct symsvc *svc, const char *build_id, struct symsvc_index **out);
/* symsvc_index_get() for request r (NULL: no limits): a build ID asked
 * upstream counts against its cap (-ENOBUFS past it), and its check is
 * polled first and while waiting for another request's build (its error
 * returned). */
int symsvc_index_get_for(struct symsvc *svc, const char *build_id, struct symsvc_req *r,
			 struct symsvc_index **out);
/* The symbolizer's index (valid until symsvc_index_put()). */
const struct sym_index *symsvc_index_sym(const struct symsvc_index *ix);
void symsvc_index_put(struct symsvc *svc, struct symsvc_index *ix);

/* ---- batched lookups ------------------------------------------------------- */

/*
 * Lookups of many addresses of one index in address order: sorted,
 * neighbours share their pages of a large index, and an address repeated
 * (hot code in a profile) is looked up once; answers are read back in
 * request order.  A batch holds at most SYMSVC_BATCH_MAX addresses and
 * SYMSVC_FRAMES_MAX frames an address.
 */
#define SYMSVC_BATCH_MAX 4096
#define SYMSVC_FRAMES_MAX 64

struct symsvc_batch;

int symsvc_batch_new(struct symsvc_batch **out);
void symsvc_batch_free(struct symsvc_batch *b); /* NULL is fine */
/* Look up addrs[0, n) (n <= SYMSVC_BATCH_MAX) in idx with the symbolizer's
 * SYM_LOOKUP_* flags: 0 or -ENOMEM. */
int symsvc_batch_run(struct symsvc_batch *b, const struct sym_index *idx,
		     const struct symjson_address *addrs, size_t n, unsigned flags);
/* The frames of position i of the last run (valid until the next run) and
 * their count in *n: > 0, 0 when nothing covers the address, or the
 * symbolizer's negative error (a file offset in no PT_LOAD). */
const struct sym_frame *symsvc_batch_frames(const struct symsvc_batch *b, size_t i, int *n);

/*
 * The frames of addrs[0, n) of build_id (any n), looked up in batches:
 * fn(arg, i, frames, nframes) for each i in order, frames innermost first
 * and valid during the call (nframes as symsvc_batch_frames() gives it).
 * Returns 0; the index's error before any call (symsvc_error_reason());
 * -ENOMEM; or fn's first non-zero return, which stops the walk.
 */
typedef int (*symsvc_frames_fn)(void *arg, size_t i, const struct sym_frame *frames,
				int nframes);
int symsvc_lookup(struct symsvc *svc, const char *build_id,
		  const struct symjson_address *addrs, size_t n, unsigned flags,
		  symsvc_frames_fn fn, void *arg);

/* ---- the JSON answer (POST /api/v1/symbolize) ------------------------------ */

/*
 * The answer to a parsed request (wire/symbolize_json.h), written module
 * by module as it is read, so that however large the batch it never sits
 * whole in memory.  symsvc_json_answer_new() gets the first module's index
 * before anything is written: its store error is returned (the caller
 * answers 503 before any byte); a later module's store failure gives its
 * addresses store_unavailable.
 */
struct symsvc_json_answer;

/* Takes rq (freed with the answer, or here on failure); ro (may be NULL)
 * is copied.  0 and *out; a store error of the first module, or the
 * error of ro's check (-ETIMEDOUT, ...) met before anything is written;
 * -ENOMEM. */
int symsvc_json_answer_new(struct symsvc *svc, struct symjson_request *rq,
			   const struct symsvc_request_opts *ro,
			   struct symsvc_json_answer **out);
/*
 * The next bytes of the answer (about 64 KiB, more when one address's
 * frames cross that) in *data and *len, valid until the next call; *len 0
 * when the answer is complete.  Once the request's check says -ETIMEDOUT
 * every address left gets deadline_exceeded, unlooked-up, so the answer
 * still ends whole.  0, or a negative errno (-ENOMEM, -E2BIG, or another
 * error of the check, such as -ECANCELED): the answer is then incomplete
 * and cannot go on.
 */
int symsvc_json_answer_read(struct symsvc_json_answer *a, const char **data, size_t *len);
/* Modules so far whose addresses got store_unavailable. */
size_t symsvc_json_answer_store_errors(const struct symsvc_json_answer *a);
void symsvc_json_answer_free(struct symsvc_json_answer *a); /* NULL is fine */

/* ---- pprof profiles (POST /api/v1/symbolize/pprof, the profile store) ------ */

/* Why a location stays without lines: the service's own reasons, then
 * (SYMSVC_PPROF_WHY_INDEX + enum symjson_error) its mapping's index's. */
enum symsvc_pprof_why {
	SYMSVC_PPROF_NO_MAPPING,	/* "no_mapping": mapping_id 0 */
	SYMSVC_PPROF_NO_BUILD_ID,	/* "no_build_id": its mapping has none (in hex) */
	SYMSVC_PPROF_OUTSIDE_MAPPING,	/* "outside_mapping": not in [memory_start, limit) */
	SYMSVC_PPROF_NOT_IN_ELF,	/* "offset_not_in_elf": in no PT_LOAD of the ELF */
	SYMSVC_PPROF_NO_SYMBOLS,	/* "no_symbols_at_address": nothing covers it */
	SYMSVC_PPROF_WHY_INDEX,
	SYMSVC_PPROF_WHY_COUNT = SYMSVC_PPROF_WHY_INDEX + SYMJSON_ERR_COUNT
};

struct symsvc_pprof_opts {
	size_t sz;		/* sizeof(struct symsvc_pprof_opts) */
	bool linkage_names;	/* Function.name raw, not demangled */
	const struct symsvc_request_opts *request; /* NULL: no limits */
	/* Called for each location left without lines: its mapping's id (0:
	 * none) and why (enum symsvc_pprof_why), so that a caller can say
	 * which build IDs need an upload (the profile store's coverage).
	 * NULL: not called. */
	void (*on_unresolved)(void *arg, uint64_t mapping_id, unsigned why);
	void *on_unresolved_arg;
};

struct symsvc_pprof_stats {
	size_t resolved, unresolved;		/* locations given lines / left alone */
	size_t why[SYMSVC_PPROF_WHY_COUNT];	/* the unresolved ones by reason */
	int store_err;		/* a mapping's index failed for the store, or the
				   server was busy (-EAGAIN): its error */
};

/*
 * Give each location of p whose mapping carries a build ID, and that has
 * no lines yet, the frames of its address as Location.line (inlined
 * callees first, as profile.proto specifies): the address is normalized
 * through its mapping (address - memory_start + file_offset, then the
 * ELF's program headers), functions are added once each, and the
 * mappings' has_* flags are set from what answered.  Other locations are
 * left as they are and counted in *st by reason; none is dropped.
 * opts may be NULL.  Returns 0 (st->store_err says whether a store
 * failure left mappings unsymbolized, which a caller should not pass off
 * as a complete answer), or a negative errno of editing p (-ENOMEM,
 * -E2BIG) or of the request's check (-ETIMEDOUT, -ECANCELED, ...): p is
 * then partly symbolized.
 */
int symsvc_symbolize_pprof(struct symsvc *svc, struct pprof_profile *p,
			   const struct symsvc_pprof_opts *opts, struct symsvc_pprof_stats *st);
/* The name of a reason ("no_mapping", ..., "unknown_build_id"), NULL for
 * none (SYMSVC_PPROF_WHY_INDEX + SYMJSON_OK). */
const char *symsvc_pprof_why_name(unsigned why);
/*
 * How a frame of the symbolizer is named in a profile, the one rule for
 * ingest (symsvc_symbolize_pprof) and for the profile store's query-time
 * resolver (profile-service/resolver.c), so that a function resolved late
 * and one resolved at ingest are one function: the function is the
 * demangled name (demangle false: the linkage name), else the linkage
 * name, else "??"; the system name is the linkage name, else "??"; the
 * file is "" when unknown; line and start line (the declaration's) are 0
 * when unknown.  The strings point into idx (or are static): valid while
 * idx is held.
 */
struct symsvc_frame_name {
	const char *function, *system_name, *filename;
	int64_t line, start_line;
};
void symsvc_frame_name(const struct sym_index *idx, const struct sym_frame *f, bool demangle,
		       struct symsvc_frame_name *out);

/* "reason=count, ..." of st's unresolved locations into out ("" for none). */
void symsvc_pprof_why_list(const struct symsvc_pprof_stats *st, char *out, size_t size);

#endif /* EMBER_SYMSVC_H */
