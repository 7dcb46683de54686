/*
 * cmd_unwind.c - `ember unwind compile|dump`: compile an ELF file's CFI
 * into an unwind table (unwind-compiler/unwind.h, docs/unwind-format.md),
 * and print a table's rows (or an ELF file's, compiled in memory) in the
 * normalized text form the tests diff against readelf.
 */
#include "cli.h"
#include "common.h"
#include "unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BLOB_CAP (UINT64_C(1) << 32)

struct unwind_args {
	const char *file;
	const char *out;	/* compile: -o */
	const char *debug_file;
	unsigned flags;
	bool stats;
};

static void unwind_usage(FILE *f)
{
	fputs("usage: ember unwind compile FILE [-o OUT] [options]\n"
	      "       ember unwind dump FILE|BLOB [options]\n"
	      "  compile   compile FILE's CFI (.eh_frame, .debug_frame) into an\n"
	      "            unwind table (docs/unwind-format.md); OUT defaults to\n"
	      "            stdout, which must not be a terminal\n"
	      "  dump      print the rows of a table, or of FILE compiled in memory:\n"
	      "            pc_start cfa_reg cfa_off ra_rule rbp_rule\n"
	      "options:\n"
	      "  --debug-file=FILE   separate debug file (its .debug_frame is used)\n"
	      "  --eh-frame-only     ignore .debug_frame\n"
	      "  --debug-frame-only  ignore .eh_frame\n"
	      "  --stats             print figures to stderr\n",
	      f);
}

static int parse_args(int argc, char **argv, bool compile, struct unwind_args *a)
{
	memset(a, 0, sizeof(*a));
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i];

		if (compile && strcmp(s, "-o") == 0 && i + 1 < argc)
			a->out = argv[++i];
		else if (strncmp(s, "--debug-file=", 13) == 0)
			a->debug_file = s + 13;
		else if (strcmp(s, "--eh-frame-only") == 0)
			a->flags |= UNWIND_COMPILE_EH_FRAME_ONLY;
		else if (strcmp(s, "--debug-frame-only") == 0)
			a->flags |= UNWIND_COMPILE_DEBUG_FRAME_ONLY;
		else if (strcmp(s, "--stats") == 0)
			a->stats = true;
		else if (s[0] == '-' || a->file) {
			fprintf(stderr, "ember unwind: unexpected argument '%s'\n", s);
			return -EINVAL;
		} else
			a->file = s;
	}
	if (!a->file || a->flags == (UNWIND_COMPILE_EH_FRAME_ONLY |
				     UNWIND_COMPILE_DEBUG_FRAME_ONLY)) {
		unwind_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

static void print_stats(const struct unwind_compile_stats *st, double secs)
{
	fprintf(stderr,
		"fdes %zu\nfdes_debug_frame %zu\nfdes_dropped %zu\n"
		"fdes_unsupported %zu\nrows %zu\nrows_stored %zu\nrows_invalid %zu\n"
		"rows_end %zu\ngaps_bridged %zu\nrules %zu\npages %zu\nbytes %zu\n"
		"bytes_per_row %.3f\nseconds %.6f\n",
		st->fdes, st->fdes_debug_frame, st->fdes_dropped, st->fdes_unsupported,
		st->rows, st->rows_stored, st->rows_invalid, st->rows_end,
		st->gaps_bridged, st->rules, st->pages, st->table_size,
		st->rows ? (double)st->table_size / (double)st->rows : 0.0, secs);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Compile a->file into table; prints the error. */
static int compile_to(const struct unwind_args *a, struct ember_buf *table)
{
	char msg[512];
	struct unwind_compile_stats st;
	struct unwind_compile_opts o = { .sz = sizeof(o), .flags = a->flags,
					 .err_msg = msg, .err_msg_size = sizeof(msg),
					 .stats = &st };
	double t0 = now();
	int err = unwind_table_compile(a->file, a->debug_file, &o, table);

	if (err) {
		fprintf(stderr, "ember unwind: '%s': %s%s%s\n", a->file,
			unwind_strerror(err), msg[0] ? ": " : "", msg);
		return err;
	}
	if (a->stats)
		print_stats(&st, now() - t0);
	return 0;
}

static int cmd_compile(const struct unwind_args *a)
{
	struct ember_buf table;
	int fd = STDOUT_FILENO, err;

	if (!a->out && isatty(STDOUT_FILENO)) {
		fputs("ember unwind: refusing to write a binary table to a terminal (use -o)\n",
		      stderr);
		return 2;
	}
	ember_buf_init(&table, BLOB_CAP);
	err = compile_to(a, &table);
	if (!err && a->out) {
		fd = open(a->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			err = -errno;
	}
	if (!err)
		err = ember_write_all(fd, table.data, table.len);
	if (a->out && fd >= 0 && close(fd) < 0 && !err)
		err = -errno;
	if (err && table.len)
		fprintf(stderr, "ember unwind: cannot write '%s': %s\n",
			a->out ? a->out : "stdout", strerror(-err));
	ember_buf_release(&table);
	return err ? 1 : 0;
}

struct dump_ctx {
	struct cli_out out;
	uint16_t machine;
};

static int dump_row(const struct unwind_row *row, void *ctx)
{
	struct dump_ctx *d = ctx;
	char line[128];
	int n = unwind_row_format(row, d->machine, line, sizeof(line));

	if (n < 0)
		return n;
	cli_out_write(&d->out, line, (size_t)n);
	cli_out_char(&d->out, '\n');
	return d->out.err;
}

static int dump_table(const char *name, const void *data, size_t size)
{
	struct dump_ctx d;
	struct unwind_table *b;
	int err;

	b = unwind_table_new(data, size, &err);
	if (!b) {
		fprintf(stderr, "ember unwind: '%s': %s\n", name, unwind_strerror(err));
		return 1;
	}
	cli_out_init(&d.out, STDOUT_FILENO);
	d.machine = unwind_table_header(b)->machine;
	cli_out_str(&d.out, d.machine == 62 ? "# pc_start cfa_reg cfa_off ra_rule rbp_rule\n"
					    : "# pc_start cfa_reg cfa_off ra_rule fp_rule\n");
	err = unwind_table_foreach_row(b, dump_row, &d);
	if (!err)
		err = cli_out_flush(&d.out);
	unwind_table_free(b);
	if (err)
		fprintf(stderr, "ember unwind: cannot write rows: %s\n", strerror(-err));
	return err ? 1 : 0;
}

/* Map the whole file read-only; *size 0 maps nothing. */
static int map_file(const char *path, void **data, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	*data = NULL;
	*size = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		err = -errno;
	*size = err ? 0 : (size_t)st.st_size;
	if (!err && *size) {
		*data = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (*data == MAP_FAILED)
			err = -errno;
	}
	close(fd);
	return err;
}

static int cmd_dump(const struct unwind_args *a)
{
	struct ember_buf table;
	void *data;
	size_t size;
	int rc, err = map_file(a->file, &data, &size);

	if (err) {
		fprintf(stderr, "ember unwind: cannot read '%s': %s\n", a->file, strerror(-err));
		return 1;
	}
	if (size >= 8 && memcmp(data, UNWIND_TABLE_MAGIC, 8) == 0) {
		rc = dump_table(a->file, data, size);
		munmap(data, size);
		return rc;
	}
	if (size)
		munmap(data, size);
	ember_buf_init(&table, BLOB_CAP);
	rc = compile_to(a, &table) ? 1 : dump_table(a->file, table.data, table.len);
	ember_buf_release(&table);
	return rc;
}

int cmd_unwind(int argc, char **argv)
{
	struct unwind_args a;
	bool compile;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		unwind_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	compile = strcmp(argv[1], "compile") == 0;
	if (!compile && strcmp(argv[1], "dump") != 0) {
		fprintf(stderr, "ember unwind: '%s' is not an unwind command\n", argv[1]);
		unwind_usage(stderr);
		return 2;
	}
	if (parse_args(argc, argv, compile, &a))
		return 2;
	return compile ? cmd_compile(&a) : cmd_dump(&a);
}
