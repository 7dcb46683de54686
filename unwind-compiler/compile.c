/*
 * compile.c - the public entry points of the compiler: open the binary
 * (and its debug file), find the CFI sections, parse them, run every
 * FDE into rows, encode the table.  Each phase is its own file (see
 * unwind_internal.h); this one only sequences them and owns cleanup.
 */
#include "unwind_internal.h"

#include <fcntl.h>
#include <unistd.h>

int unwind_arch_get(uint16_t machine, struct unwind_arch *out)
{
	if (machine == UNWIND_EM_X86_64)
		*out = (struct unwind_arch){ machine, 7, 6 };
	else if (machine == UNWIND_EM_AARCH64)
		*out = (struct unwind_arch){ machine, 31, 29 };
	else
		return -UNWIND_ERR_ARCH;
	return 0;
}

/* Tables are 0.29-0.42 of their CFI (docs/unwind-format.md): room for
 * 3/8 at once; only a hint, the buffer grows past it. */
static void reserve_table(const struct unwind_input *in, struct ember_buf *out)
{
	size_t cfi = in->sec[UNWIND_SEC_EH].size + in->sec[UNWIND_SEC_DEBUG].size;

	(void)ember_buf_reserve(out, cfi / 8 * 3); /* a hint: errors ignored */
}

int unwind_compile_input(const struct unwind_input *in, struct ember_diag *d,
			 struct unwind_compile_stats *stats,
			 struct ember_buf *out)
{
	struct unwind_build b;
	size_t start = out->len;
	int err;

	unwind_build_init(&b, in, d);
	err = unwind_arch_get(in->machine, &b.arch);
	if (!err) {
		reserve_table(in, out);
		err = unwind_writer_new(&b, out);
	}
	if (!err)
		err = unwind_cfi_parse(&b, UNWIND_SEC_EH);
	if (!err)
		err = unwind_cfi_parse(&b, UNWIND_SEC_DEBUG);
	if (!err)
		err = unwind_table_build(&b);
	if (!err)
		err = unwind_writer_finish(&b);
	if (!err && stats)
		*stats = b.stats;
	if (err && out->len > start) {	/* no partial table */
		out->len = start;
		out->data[start] = '\0';
	}
	unwind_build_release(&b);
	return err;
}

/* The caller's options, whatever struct size it was built with. */
static void opts_get(const struct unwind_compile_opts *opts,
		     struct unwind_compile_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (opts)
		memcpy(o, opts, opts->sz < sizeof(*o) ? opts->sz : sizeof(*o));
	if (o->err_msg && o->err_msg_size)
		o->err_msg[0] = '\0';
}

/* The pipeline on open images; frees them. */
static int compile_elves(struct unwind_elf *bin, struct unwind_elf *dbg,
			 const struct unwind_compile_opts *o,
			 struct ember_diag *d, struct ember_buf *out)
{
	struct unwind_compile_stats st;
	struct unwind_input in;
	uint64_t max = o->max_section_bytes ? o->max_section_bytes
					    : ELFDW_MAX_INFLATE_DEFAULT;
	int err = unwind_elf_input(bin, dbg, o->flags, max, d, &in);

	if (!err)
		err = unwind_compile_input(&in, d, &st, out);
	if (!err && o->stats)
		*o->stats = st;
	unwind_elf_free(bin);
	unwind_elf_free(dbg);
	return err;
}

int unwind_table_compile_mem(const void *elf, size_t elf_size,
			     const void *debug, size_t debug_size,
			     const struct unwind_compile_opts *opts,
			     struct ember_buf *out)
{
	struct unwind_compile_opts o;
	struct unwind_elf *bin = NULL, *dbg = NULL;
	struct ember_diag d;
	int err;

	opts_get(opts, &o);
	d = (struct ember_diag){ o.err_msg, o.err_msg_size, false };
	err = unwind_elf_open_mem(elf, elf_size, &d, &bin);
	if (!err && debug)
		err = unwind_elf_open_mem(debug, debug_size, &d, &dbg);
	if (err) {
		unwind_elf_free(bin);
		return err;
	}
	return compile_elves(bin, dbg, &o, &d, out);
}

int unwind_table_compile_fd(int fd, const struct unwind_compile_opts *opts,
			    struct ember_buf *out)
{
	struct unwind_compile_opts o;
	struct unwind_elf *bin = NULL;
	struct ember_diag d;
	int err;

	opts_get(opts, &o);
	d = (struct ember_diag){ o.err_msg, o.err_msg_size, false };
	err = unwind_elf_open_fd(fd, false, &d, &bin);
	return err ? err : compile_elves(bin, NULL, &o, &d, out);
}

static int open_file(const char *path, struct ember_diag *d, int *fd,
		     struct unwind_elf **out)
{
	int err;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		err = -errno;
		return EMBER_FAIL(d, err, "cannot open '%s': %s", path, strerror(-err));
	}
	return unwind_elf_open_fd(*fd, true, d, out);
}

int unwind_table_compile(const char *elf_path, const char *debug_path,
			 const struct unwind_compile_opts *opts,
			 struct ember_buf *out)
{
	struct unwind_compile_opts o;
	struct unwind_elf *bin = NULL, *dbg = NULL;
	struct ember_diag d;
	int fd = -1, dfd = -1, err;

	opts_get(opts, &o);
	d = (struct ember_diag){ o.err_msg, o.err_msg_size, false };
	err = open_file(elf_path, &d, &fd, &bin);
	if (!err && debug_path)
		err = open_file(debug_path, &d, &dfd, &dbg);
	if (err)
		unwind_elf_free(bin);
	else
		err = compile_elves(bin, dbg, &o, &d, out);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return err;
}
