/*
 * cmd_symbolize.c - `ember symbolize`, a drop-in for llvm-symbolizer's
 * common use (docs/cli.md): the same flags, addresses as arguments or one
 * per line on stdin, and the same output shapes.  On stdin every line is
 * answered, in order, before the next read blocks (up to AHEAD lines late
 * on a big index: "Lookahead" below), and the answers flushed then, so a
 * caller can keep it running as a coprocess (pprof does, one process per
 * mapping).  With --server the same command is run
 * by ember-server against a server's API (symbolize_remote.c).
 */
#include "cli.h"
#include "common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#define MAX_FRAMES 256
#define MAX_MODULES 64
#define MAX_LINE (1u << 20)
/* Addresses of the --obj module waiting for their answer while the lines
 * after them are read (see "Lookahead" below): a power of two. */
#define AHEAD 16
#define AHEAD_STEP (AHEAD / 4)
/* Only indexes whose segment arrays (24 bytes a segment) outgrow the
 * caches: on a small one the prefetches cost more than the misses they
 * hide (c_O2_pie, 334 segments: +26% CPU). */
#define AHEAD_MIN_SEGS (1u << 16)

struct module {
	char *path;
	size_t path_len;
	struct sym_index *idx;
	int err;
	double open_s;		/* time sym_index_open took */
	bool lookahead;		/* big enough for the lookahead */
};

struct symbolizer_run {
	struct cli_symbolize_opts opts;
	size_t obj_len;			/* strlen(opts.obj) */
	struct cli_out out;		/* stdout */
	struct module mods[MAX_MODULES];
	size_t nmods;
	struct sym_frame frames[MAX_FRAMES];
	uint64_t ahead[AHEAD];		/* ring of addresses not answered yet */
	size_t ahead_first, ahead_n;
	struct module *ahead_mod;	/* the module they are for */
	bool ahead_off;			/* --obj's index is small: none wait */
};

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Open path into m: the index, or the error reported once on stderr. */
static int module_open(const struct symbolizer_run *run, struct module *m,
		       const char *path, size_t len)
{
	struct sym_open_opts oo = { .sz = sizeof(oo),
				    .debug_root = run->opts.debug_dir };
	struct timespec t0;

	m->path = strndup(path, len);
	if (!m->path)
		return -ENOMEM;
	m->path_len = len;
	m->err = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	m->idx = sym_index_open(m->path, &oo, &m->err);
	m->open_s = seconds_since(&t0);
	m->lookahead = false;
	if (!m->idx) {
		fprintf(stderr, "ember symbolize: '%s': %s\n", m->path,
			sym_strerror(m->err));
	} else {
		struct sym_index_stats st;

		sym_index_get_stats(m->idx, &st);
		m->lookahead = st.segments >= AHEAD_MIN_SEGS;
	}
	return 0;
}

/* Drop the oldest module; pprof uses one process per mapping anyway. */
static void module_evict_oldest(struct symbolizer_run *run)
{
	sym_index_free(run->mods[0].idx);
	free(run->mods[0].path);
	memmove(&run->mods[0], &run->mods[1],
		(MAX_MODULES - 1) * sizeof(run->mods[0]));
	run->nmods--;
}

static struct module *module_get(struct symbolizer_run *run, const char *path,
				 size_t len)
{
	for (size_t i = 0; i < run->nmods; i++)
		if (run->mods[i].path_len == len &&
		    memcmp(run->mods[i].path, path, len) == 0)
			return &run->mods[i];
	if (run->nmods == MAX_MODULES)
		module_evict_oldest(run);
	if (module_open(run, &run->mods[run->nmods], path, len))
		return NULL;
	return &run->mods[run->nmods++];
}

static void answer(struct symbolizer_run *run, const char *module,
		   size_t module_len, uint64_t addr)
{
	struct module *m = module_get(run, module, module_len);
	struct cli_answer a = { .module = m ? m->path : "", .addr = addr,
				.frames = run->frames, .idx = m ? m->idx : NULL };
	int err = m ? m->err : -ENOMEM;

	if (m && m->idx) {
		a.n = sym_index_lookup(m->idx, addr, run->opts.addr_kind,
				       run->opts.functions == CLI_FN_LINKAGE
					       ? SYM_LOOKUP_SYMBOL_NAME : 0,
				       run->frames, MAX_FRAMES);
		if (a.n < 0)
			err = a.n, a.n = 0;
		else if (a.n > MAX_FRAMES)
			a.n = MAX_FRAMES;
	}
	a.error = err ? sym_strerror(err) : NULL;
	cli_print_answer(&run->out, &run->opts, &a);
}

/*
 * Lookahead.  In a big index each lookup waits on a few cache misses in a
 * row (lookup.c, sym_index_prefetch).  Plain addresses for the --obj
 * module, when its index has AHEAD_MIN_SEGS segments or more, are
 * therefore answered AHEAD lines late: each new one starts its
 * prefetch, and the ones already waiting move a stage on, so the misses
 * of 16 addresses overlap.  Answers keep the input order: any other line
 * (a module named on the line, an invalid one) answers the waiting
 * addresses first, and so does every point where the input may block or
 * end (flush_answers), so a coprocess still gets each answer before it
 * sends the next address.  docs/performance-notes.md has the measurement.
 */
static void ahead_answer_oldest(struct symbolizer_run *run)
{
	uint64_t addr = run->ahead[run->ahead_first];

	run->ahead_first = (run->ahead_first + 1) % AHEAD;
	run->ahead_n--;
	answer(run, run->opts.obj, run->obj_len, addr);
}

static void ahead_drain(struct symbolizer_run *run)
{
	while (run->ahead_n)
		ahead_answer_oldest(run);
}

static void ahead_push(struct symbolizer_run *run, struct module *m,
		       uint64_t addr)
{
	if (run->ahead_n == AHEAD)
		ahead_answer_oldest(run);
	run->ahead[(run->ahead_first + run->ahead_n++) % AHEAD] = addr;
	run->ahead_mod = m;
	/* stage s for the address s steps of AHEAD_STEP behind the newest */
	for (unsigned s = 0; s < 4 && (size_t)s * AHEAD_STEP < run->ahead_n; s++)
		sym_index_prefetch(m->idx,
				   run->ahead[(run->ahead_first + run->ahead_n - 1 -
					       s * AHEAD_STEP) % AHEAD], s);
}

/* Whether an address for the --obj module can wait for its answer: only
 * virtual addresses in a big index that opened (errors answer at once). */
static struct module *ahead_module(struct symbolizer_run *run)
{
	struct module *m;

	if (run->opts.addr_kind != SYM_ADDR_VADDR || run->ahead_off)
		return NULL;
	if (run->ahead_n)
		return run->ahead_mod;
	m = module_get(run, run->opts.obj, run->obj_len);
	if (m && m->idx && m->lookahead)
		return m;
	run->ahead_off = m && m->idx; /* the same file next time */
	return NULL;
}

static int handle_line(void *ctx, const char *line, size_t len)
{
	struct symbolizer_run *run = ctx;
	struct cli_request req;
	const char *obj = run->opts.obj;
	struct module *m;

	cli_parse_request(line, len, &req);
	if (req.valid && !req.module && obj && (m = ahead_module(run))) {
		ahead_push(run, m, req.addr);
		return 0;
	}
	ahead_drain(run);
	if (!req.valid || (!req.module && !obj)) {
		cli_print_invalid(&run->out, &run->opts, obj ? obj : "", line,
				  len);
		return 0;
	}
	if (req.module)
		answer(run, req.module, req.module_len, req.addr);
	else
		answer(run, obj, run->obj_len, req.addr);
	return 0;
}

/* Before a read may block: what is answered goes out. */
static int flush_answers(void *ctx)
{
	struct symbolizer_run *run = ctx;

	ahead_drain(run);
	return cli_out_flush(&run->out) ? run->out.err : 0;
}

/* --stats: what each index cost, for benchmarks and curious users. */
static void print_stats(const struct symbolizer_run *run)
{
	struct rusage ru;

	for (size_t i = 0; i < run->nmods; i++) {
		struct sym_index_stats st;

		if (!run->mods[i].idx)
			continue;
		sym_index_get_stats(run->mods[i].idx, &st);
		fprintf(stderr,
			"stats: '%s': index built in %.3f s: %zu functions, %zu inlined, "
			"%zu segments, %zu symtab + %zu dynsym symbols, %.1f MB\n",
			run->mods[i].path, run->mods[i].open_s, st.functions,
			st.inlined, st.segments, st.symtab_symbols,
			st.dynsym_symbols, (double)st.bytes / 1e6);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(stderr, "stats: peak RSS %.1f MB\n", (double)ru.ru_maxrss / 1024);
}

static void run_free(struct symbolizer_run *run)
{
	for (size_t i = 0; i < run->nmods; i++) {
		sym_index_free(run->mods[i].idx);
		free(run->mods[i].path);
	}
}

/* --server: the remote client runs in ember-client, with the HTTP client
 * (exec_server.c); `ember` itself stays light.  argv[0] may be
 * "symbolize" or "llvm-symbolizer". */
static int exec_remote(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 2, sizeof(*args));

	if (!args)
		return 1;
	args[0] = "ember";
	args[1] = "symbolize";
	/* --log-level was taken out of argv (log_level.c): hand it on */
	setenv("EMBER_LOG_LEVEL", ember_log_level_name(ember_log_get_level()), 1);
	memcpy(&args[2], &argv[1], (size_t)(argc - 1) * sizeof(*args));
	cli_exec_helper("ember-client", args);
	free(args);
	return 1;
}

int cmd_symbolize(int argc, char **argv)
{
	struct symbolizer_run *run = calloc(1, sizeof(*run));
	struct cli_line_reader reader = { handle_line, flush_answers, run };
	int first, err = 0;

	if (!run)
		return 1;
	run->opts = (struct cli_symbolize_opts){ .inlines = true, .demangle = true };
	first = cli_symbolize_parse_opts(&run->opts, argc, argv);
	if (first < 0) {
		cli_symbolize_usage(first == -2 ? stdout : stderr);
		free(run);
		return first == -2 ? 0 : 2;
	}
	if (run->opts.server) {
		free(run);
		return exec_remote(argc, argv);
	}
	cli_out_init(&run->out, STDOUT_FILENO);
	run->obj_len = run->opts.obj ? strlen(run->opts.obj) : 0;
	if (first < argc) {
		for (int i = first; i < argc; i++)
			handle_line(run, argv[i], strlen(argv[i]));
		ahead_drain(run);
	} else {
		err = cli_read_lines(STDIN_FILENO, MAX_LINE, &reader);
	}
	if (cli_out_flush(&run->out) && !err) {
		fprintf(stderr, "ember symbolize: cannot write output: %s\n",
			strerror(-run->out.err));
		err = run->out.err;
	}
	if (run->opts.stats)
		print_stats(run);
	run_free(run);
	free(run);
	return err ? 1 : 0;
}
