/*
 * cmd_symbolize.c - `ember symbolize`, a drop-in for llvm-symbolizer's
 * common use (docs/cli.md): the same flags, addresses as arguments or one
 * per line on stdin, and the same output shapes.  On stdin every line is
 * answered as soon as it is read and the answer is flushed before the
 * next read blocks, so a caller can keep it running as a coprocess (pprof
 * does, one process per mapping).
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

struct module {
	char *path;
	size_t path_len;
	struct sym_index *idx;
	int err;
	double open_s;		/* time sym_index_open took */
};

struct symbolizer_run {
	struct cli_symbolize_opts opts;
	size_t obj_len;			/* strlen(opts.obj) */
	struct cli_out out;		/* stdout */
	struct module mods[MAX_MODULES];
	size_t nmods;
	struct sym_frame frames[MAX_FRAMES];
};

static void symbolize_usage(FILE *f)
{
	fputs("usage: ember symbolize [options] [ADDRESS...]\n"
	      "  --obj=FILE, -e FILE        the ELF to symbolize in (else each input\n"
	      "                             line names it: [CODE|DATA] FILE ADDRESS)\n"
	      "  --inlines, -i              print inlined frames (default)\n"
	      "  --no-inlines               outermost function only\n"
	      "  --functions=linkage|short|none, -f\n"
	      "  --demangle, -C / --no-demangle\n"
	      "  --output-style=LLVM|GNU|JSON\n"
	      "  --print-address, -a        print the address first\n"
	      "  --pretty-print, -p         one line per frame\n"
	      "  --basenames, -s            file names without directories\n"
	      "  --debug-file-directory=DIR root of .build-id/ and debuglink lookups\n"
	      "  --file-offsets             input addresses are file offsets, not\n"
	      "                             ELF virtual addresses\n"
	      "  --stats                    print index figures to stderr at exit\n"
	      "Addresses: 0x-prefixed hex or decimal.  Without ADDRESS arguments,\n"
	      "one request per line on stdin.\n",
	      f);
}

/* "true"/"false" values of llvm-style boolean options ("-demangle=false"). */
static int parse_bool(const char *v, bool *out)
{
	if (!v || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int parse_style(const char *v, enum cli_style *s)
{
	if (v && strcmp(v, "LLVM") == 0)
		*s = CLI_STYLE_LLVM;
	else if (v && strcmp(v, "GNU") == 0)
		*s = CLI_STYLE_GNU;
	else if (v && strcmp(v, "JSON") == 0)
		*s = CLI_STYLE_JSON;
	else
		return -EINVAL;
	return 0;
}

static int parse_functions(const char *v, enum cli_functions *f)
{
	if (!v || strcmp(v, "linkage") == 0)
		*f = CLI_FN_LINKAGE;
	else if (strcmp(v, "short") == 0)
		*f = CLI_FN_SHORT;
	else if (strcmp(v, "none") == 0)
		*f = CLI_FN_NONE;
	else
		return -EINVAL;
	return 0;
}

/* A long option NAME or NAME=VALUE: returns 1 if it took the next arg. */
static int parse_long(struct cli_symbolize_opts *o, const char *name,
		      const char *val, const char *next)
{
	size_t n = strcspn(name, "=");
	char key[64];

	if (n >= sizeof(key))
		return -EINVAL;
	memcpy(key, name, n);
	key[n] = '\0';
	if (!strcmp(key, "obj") || !strcmp(key, "exe") || !strcmp(key, "e")) {
		o->obj = val ? val : next;
		return o->obj ? (val ? 0 : 1) : -EINVAL;
	}
	if (!strcmp(key, "debug-file-directory")) {
		o->debug_dir = val ? val : next;
		return o->debug_dir ? (val ? 0 : 1) : -EINVAL;
	}
	if (!strcmp(key, "inlines") || !strcmp(key, "inlining") || !strcmp(key, "i"))
		return parse_bool(val, &o->inlines);
	if (!strcmp(key, "no-inlines"))
		return o->inlines = false, 0;
	if (!strcmp(key, "demangle") || !strcmp(key, "C"))
		return parse_bool(val, &o->demangle);
	if (!strcmp(key, "no-demangle"))
		return o->demangle = false, 0;
	if (!strcmp(key, "functions") || !strcmp(key, "f"))
		return parse_functions(val, &o->functions);
	if (!strcmp(key, "output-style"))
		return parse_style(val, &o->style);
	if (!strcmp(key, "print-address") || !strcmp(key, "addresses") || !strcmp(key, "a"))
		return parse_bool(val, &o->print_address);
	if (!strcmp(key, "pretty-print") || !strcmp(key, "p"))
		return parse_bool(val, &o->pretty);
	if (!strcmp(key, "basenames") || !strcmp(key, "s"))
		return o->basenames = true, 0;
	if (!strcmp(key, "file-offsets"))
		return o->addr_kind = SYM_ADDR_FILE_OFFSET, 0;
	if (!strcmp(key, "stats"))
		return o->stats = true, 0;
	return -EINVAL;
}

/* Parses options; returns the index of the first address argument, -1 on
 * error, or -2 for --help. */
static int parse_opts(struct cli_symbolize_opts *o, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq;
		int r;

		if (strcmp(a, "--") == 0)
			return i + 1;
		if (a[0] != '-' || a[1] == '\0' || (a[1] >= '0' && a[1] <= '9'))
			break;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return -2;
		name = a + (a[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		r = parse_long(o, name, eq ? eq + 1 : NULL,
			       i + 1 < argc ? argv[i + 1] : NULL);
		if (r < 0) {
			fprintf(stderr, "ember symbolize: '%s': unknown option or bad value\n", a);
			return -1;
		}
		i += r;
	}
	return i;
}

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
	if (!m->idx)
		fprintf(stderr, "ember symbolize: '%s': %s\n", m->path,
			sym_strerror(m->err));
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
	int n = 0, err = m ? m->err : -ENOMEM;

	if (m && m->idx) {
		n = sym_index_lookup(m->idx, addr, run->opts.addr_kind,
				     run->opts.functions == CLI_FN_LINKAGE
					     ? SYM_LOOKUP_SYMBOL_NAME : 0,
				     run->frames, MAX_FRAMES);
		if (n < 0)
			err = n, n = 0;
		else if (n > MAX_FRAMES)
			n = MAX_FRAMES;
	}
	cli_print_answer(&run->out, &run->opts, m ? m->path : "",
			 m ? m->idx : NULL, addr, run->frames, n, err);
}

static void handle_line(struct symbolizer_run *run, const char *line,
			size_t len)
{
	struct cli_request req;
	const char *obj = run->opts.obj;

	cli_parse_request(line, len, &req);
	if (!req.valid || (!req.module && !obj)) {
		cli_print_invalid(&run->out, &run->opts, obj ? obj : "", line,
				  len);
		return;
	}
	if (req.module)
		answer(run, req.module, req.module_len, req.addr);
	else
		answer(run, obj, run->obj_len, req.addr);
}

/* Answer stdin line by line, flushing whenever the next read may block. */
static int run_stdin(struct symbolizer_run *run)
{
	struct ember_buf in;
	char chunk[16384];
	int err = 0;

	ember_buf_init(&in, MAX_LINE);
	for (;;) {
		ssize_t got;
		size_t start = 0;
		char *nl;

		while (in.len > start &&
		       (nl = memchr(in.data + start, '\n', in.len - start))) {
			handle_line(run, in.data + start,
				    (size_t)(nl - (in.data + start)));
			start = (size_t)(nl - in.data) + 1;
		}
		if (start) {
			memmove(in.data, in.data + start, in.len - start);
			in.len -= start;
		}
		if (cli_out_flush(&run->out)) {
			err = run->out.err;
			break;
		}
		got = read(STDIN_FILENO, chunk, sizeof(chunk));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = got < 0 ? -errno : 0;
			break;
		}
		if (ember_buf_append(&in, chunk, (size_t)got)) {
			fprintf(stderr, "ember symbolize: input line longer than %u bytes\n",
				MAX_LINE);
			err = -E2BIG;
			break;
		}
	}
	if (!err && in.len)
		handle_line(run, in.data, in.len);
	ember_buf_release(&in);
	return err;
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

int cmd_symbolize(int argc, char **argv)
{
	struct symbolizer_run *run = calloc(1, sizeof(*run));
	int first, err = 0;

	if (!run)
		return 1;
	run->opts = (struct cli_symbolize_opts){ .inlines = true, .demangle = true };
	first = parse_opts(&run->opts, argc, argv);
	if (first < 0) {
		symbolize_usage(first == -2 ? stdout : stderr);
		free(run);
		return first == -2 ? 0 : 2;
	}
	cli_out_init(&run->out, STDOUT_FILENO);
	run->obj_len = run->opts.obj ? strlen(run->opts.obj) : 0;
	if (first < argc) {
		for (int i = first; i < argc; i++)
			handle_line(run, argv[i], strlen(argv[i]));
	} else {
		err = run_stdin(run);
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
