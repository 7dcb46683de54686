/*
 * test_symbolizer.c - unit tests of symbolizer/ on the ELF fixtures
 * (fixtures/elf, built into $EMBER_FIXTURES_DIR).  Expected values come
 * from the fixtures' sources and from libelf directly, never from the
 * code under test.  The cross-check against llvm-symbolizer on thousands
 * of addresses is tests/oracle/compare_llvm.py.
 */
#include "symbolizer.h"
#include "sym_internal.h" /* line_program.c's reader, tested directly */
#include "common.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXF 64

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

static const char *fixture(const char *name)
{
	static char path[4096];
	const char *dir = getenv("EMBER_FIXTURES_DIR");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "build/fixtures", name);
	return path;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

/*
 * Address and size of a symbol, read with libelf (not the code under
 * test).  A name ending in '*' matches the first function with that
 * prefix and a non-zero size.
 */
static int elf_symbol(const char *path, const char *name, uint64_t *addr,
		      uint64_t *size)
{
	size_t plen = strlen(name);
	bool prefix = plen && name[plen - 1] == '*';

	int fd = open(path, O_RDONLY), found = -ENOENT;
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < d->d_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && s.st_value &&
			    (prefix ? strncmp(n, name, plen - 1) == 0 &&
					      s.st_size &&
					      GELF_ST_TYPE(s.st_info) == STT_FUNC
				    : strcmp(n, name) == 0)) {
				*addr = s.st_value;
				*size = s.st_size;
				found = 0;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* File offset of vaddr through PT_LOAD, read with libelf. */
static int elf_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *off)
{
	int fd = open(path, O_RDONLY), err = -ENOENT;
	size_t n = 0;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_getphdrnum(elf, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
				*off = vaddr - ph.p_vaddr + ph.p_offset;
				err = 0;
				break;
			}
		}
	elf_end(elf);
	close(fd);
	return err;
}

static struct sym_index *open_ok(const char *path,
				 const struct sym_open_opts *o)
{
	int err = 0;
	struct sym_index *idx = sym_index_open(path, o, &err);

	if (!idx)
		fprintf(stderr, "open '%s': %s\n", path, sym_strerror(err));
	return idx;
}

static int copy_file(const char *from, const char *to, size_t limit)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[8192];
	size_t n, total = 0;

	if (!in || !out)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0 && total < limit) {
		if (n > limit - total)
			n = limit - total;
		fwrite(buf, 1, n, out);
		total += n;
	}
	fclose(in);
	fclose(out);
	return 0;
}

static int test_symbolizer__open_missing_file(void)
{
	int err = 0;

	CHECK(sym_index_open("/nonexistent/ember-test", NULL, &err) == NULL);
	CHECK_INT(err, ==, -ENOENT);
	return 0;
}

static int test_symbolizer__open_not_elf(void)
{
	char path[] = "/tmp/ember-notelf-XXXXXX";
	int fd = mkstemp(path), err = 0;

	CHECK(fd >= 0);
	CHECK(write(fd, "#!/bin/sh\necho hello\n", 21) == 21);
	close(fd);
	CHECK(sym_index_open(path, NULL, &err) == NULL);
	unlink(path);
	CHECK_INT(err, ==, -SYM_ERR_NOT_ELF);
	CHECK(strstr(sym_strerror(err), "not an ELF") != NULL);
	return 0;
}

static int test_symbolizer__open_truncated_elf(void)
{
	char path[] = "/tmp/ember-trunc-XXXXXX";
	int fd = mkstemp(path), err = 0;

	CHECK(fd >= 0);
	close(fd);
	CHECK(copy_file(fixture("c_O2_pie"), path, 6000) == 0);
	CHECK(sym_index_open(path, NULL, &err) == NULL);
	unlink(path);
	CHECK_INT(err, ==, -SYM_ERR_TRUNCATED);
	return 0;
}

/* .debug_info overwritten with junk: no crash, symtab still answers. */
static int test_symbolizer__corrupt_dwarf_falls_back(void)
{
	char path[] = "/tmp/ember-corrupt-XXXXXX";
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int fd = mkstemp(path), n;
	struct sym_index *idx;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstr;

	CHECK(fd >= 0);
	close(fd);
	CHECK(copy_file(fixture("c_O2_pie"), path, SIZE_MAX) == 0);
	fd = open(path, O_RDWR);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	CHECK(elf && elf_getshdrstrndx(elf, &shstr) == 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(elf, shstr, sh.sh_name), ".debug_info") == 0) {
			char *junk = malloc(sh.sh_size);

			memset(junk, 0xff, sh.sh_size);
			CHECK(pwrite(fd, junk, sh.sh_size, (off_t)sh.sh_offset) ==
			      (ssize_t)sh.sh_size);
			free(junk);
		}
	}
	elf_end(elf);
	close(fd);
	idx = open_ok(path, NULL);
	unlink(path);
	CHECK(idx);
	CHECK(elf_symbol(fixture("c_O2_pie"), "main", &addr, &size) == 0);
	n = sym_index_lookup(idx, addr + 1, SYM_ADDR_VADDR, 0, f, MAXF);
	CHECK_INT(n, >=, 1);
	CHECK_STR(f[n - 1].name, "main");
	sym_index_free(idx);
	return 0;
}

/* helper.c's exported functions inline mix.h helpers: frames from two files. */
static int test_symbolizer__inline_chain_across_header(void)
{
	struct sym_index *idx = open_ok(fixture("c_O2_pie"), NULL);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int best = 0;

	CHECK(idx);
	CHECK(elf_symbol(fixture("c_O2_pie"), "helper_digest_points", &addr, &size) == 0);
	for (uint64_t a = addr; a < addr + size; a++) {
		int n = sym_index_lookup(idx, a, SYM_ADDR_VADDR, 0, f, MAXF);

		CHECK_INT(n, >=, 1);
		CHECK_STR(f[n - 1].name, "helper_digest_points");
		CHECK(f[n - 1].source == SYM_SOURCE_DWARF);
		CHECK(!f[n - 1].inlined);
		if (n >= 2 && ends_with(f[0].decl_file, "/mix.h") &&
		    ends_with(f[n - 1].file, "/helper.c")) {
			CHECK(f[0].inlined);
			CHECK(strncmp(f[0].name, "mix_", 4) == 0);
			CHECK_INT(f[n - 1].line, >, 0);
			if (n > best)
				best = n;
		}
	}
	CHECK_INT(best, >=, 2);
	sym_index_free(idx);
	return 0;
}

/* Every function symbol: file-offset lookup == vaddr lookup. */
static int check_offsets_agree(const char *name, const char *sym)
{
	struct sym_index *idx = open_ok(fixture(name), NULL);
	struct sym_frame a[MAXF], b[MAXF];
	uint64_t addr, size, off;
	int na, nb;

	CHECK(idx);
	CHECK(elf_symbol(fixture(name), sym, &addr, &size) == 0);
	CHECK(elf_vaddr_to_offset(fixture(name), addr + 2, &off) == 0);
	na = sym_index_lookup(idx, addr + 2, SYM_ADDR_VADDR, 0, a, MAXF);
	nb = sym_index_lookup(idx, off, SYM_ADDR_FILE_OFFSET, 0, b, MAXF);
	CHECK_INT(na, >=, 1);
	CHECK_INT(na, ==, nb);
	for (int i = 0; i < na; i++) {
		CHECK_STR(a[i].name, b[i].name);
		CHECK_INT(a[i].line, ==, b[i].line);
	}
	CHECK_STR(a[na - 1].name, sym);
	CHECK_INT(sym_index_lookup(idx, UINT64_C(1) << 40, SYM_ADDR_FILE_OFFSET, 0,
				   a, MAXF), ==, -SYM_ERR_OFFSET_UNMAPPED);
	sym_index_free(idx);
	return 0;
}

static int test_symbolizer__file_offsets_pie(void)
{
	return check_offsets_agree("c_O2_pie", "grid_weight");
}

static int test_symbolizer__file_offsets_nopie(void)
{
	return check_offsets_agree("c_O2_nopie", "grid_weight");
}

static int test_symbolizer__file_offsets_shared_library(void)
{
	return check_offsets_agree("libfixture.so", "fixture_lib_hash");
}

static int check_separate_debug(const char *bin, const struct sym_open_opts *o,
				const char *want_path_part)
{
	struct sym_index *idx = open_ok(fixture(bin), o);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int n;

	CHECK(idx);
	CHECK(sym_index_debug_path(idx) != NULL);
	CHECK(strstr(sym_index_debug_path(idx), want_path_part) != NULL);
	CHECK(elf_symbol(fixture("c_stripped.debug"), "table_check.constprop.0",
			 &addr, &size) == 0);
	n = sym_index_lookup(idx, addr, SYM_ADDR_VADDR, 0, f, MAXF);
	CHECK_INT(n, >=, 1);
	CHECK(f[n - 1].source == SYM_SOURCE_DWARF);
	CHECK_STR(f[n - 1].name, "table_check");
	CHECK(ends_with(f[n - 1].file, "/prog.c"));
	sym_index_free(idx);
	return 0;
}

static int test_symbolizer__debuglink_next_to_binary(void)
{
	return check_separate_debug("c_stripped", NULL, "/c_stripped.debug");
}

static int test_symbolizer__debuglink_in_debug_dir(void)
{
	return check_separate_debug("c_debuglink_subdir", NULL,
				    "/.debug/c_debuglink_subdir.debug");
}

static int test_symbolizer__build_id_directory(void)
{
	char root[4096];
	struct sym_open_opts o = { .sz = sizeof(o), .debug_root = root };

	snprintf(root, sizeof(root), "%s", fixture("debug-root"));
	return check_separate_debug("c_stripped_buildid_only", &o,
				    "/debug-root/.build-id/");
}

static int test_symbolizer__explicit_debug_file(void)
{
	char dbg[4096];
	struct sym_open_opts o = { .sz = sizeof(o), .debug_file = dbg };

	snprintf(dbg, sizeof(dbg), "%s", fixture("c_stripped.debug"));
	return check_separate_debug("c_stripped_buildid_only", &o,
				    "c_stripped.debug");
}

/*
 * A debuglink target with another build ID is ignored, not trusted: the
 * stripped binary alone has no function symbols, so opening it fails.
 */
static int test_symbolizer__stale_debug_file_rejected(void)
{
	char dir[] = "/tmp/ember-stale-XXXXXX", bin[4200], dbg[4200];
	struct sym_index *idx;
	int err = 0;

	CHECK(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/c_stripped", dir);
	snprintf(dbg, sizeof(dbg), "%s/c_stripped.debug", dir);
	CHECK(copy_file(fixture("c_stripped"), bin, SIZE_MAX) == 0);
	CHECK(copy_file(fixture("c_O2_pie"), dbg, SIZE_MAX) == 0);
	idx = sym_index_open(bin, NULL, &err);
	unlink(bin);
	unlink(dbg);
	rmdir(dir);
	CHECK(idx == NULL);
	CHECK_INT(err, ==, -SYM_ERR_NO_SYMBOLS);
	return 0;
}

static int check_fallback(const char *bin, const char *sym, enum sym_source src,
			  const char *file)
{
	struct sym_index *idx = open_ok(fixture(bin), NULL);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int n;

	CHECK(idx);
	CHECK(elf_symbol(fixture(bin), sym, &addr, &size) == 0);
	n = sym_index_lookup(idx, addr + size / 2, SYM_ADDR_VADDR,
			     SYM_LOOKUP_SYMBOL_NAME, f, MAXF);
	CHECK_INT(n, ==, 1);
	CHECK_STR(f[0].name, sym);
	CHECK(f[0].source == src);
	if (file)
		CHECK_STR(f[0].file, file);
	else
		CHECK(f[0].file == NULL);
	CHECK_INT(f[0].func_start, ==, addr);
	/* The ELF header is code of nobody. */
	CHECK_INT(sym_index_lookup(idx, 0x10, SYM_ADDR_VADDR, 0, f, MAXF), ==, 0);
	sym_index_free(idx);
	return 0;
}

static int test_symbolizer__symtab_fallback(void)
{
	/* a local symbol: its STT_FILE names the source file */
	return check_fallback("c_nodwarf", "grid_weight", SYM_SOURCE_SYMTAB,
			      "prog.c");
}

static int test_symbolizer__dynsym_fallback(void)
{
	return check_fallback("c_dynsym_only", "helper_digest_points",
			      SYM_SOURCE_DYNSYM, NULL);
}

/* Same code, other DWARF encodings: every byte of a function agrees. */
static int check_same_answers(const char *a_name, const char *b_name)
{
	struct sym_index *a = open_ok(fixture(a_name), NULL);
	struct sym_index *b = open_ok(fixture(b_name), NULL);
	struct sym_frame fa[MAXF], fb[MAXF];
	uint64_t addr, size;

	CHECK(a && b);
	CHECK(elf_symbol(fixture(a_name), "helper_collect_stats", &addr, &size) == 0);
	for (uint64_t x = addr; x < addr + size; x++) {
		int na = sym_index_lookup(a, x, SYM_ADDR_VADDR, 0, fa, MAXF);
		int nb = sym_index_lookup(b, x, SYM_ADDR_VADDR, 0, fb, MAXF);

		CHECK_INT(na, ==, nb);
		CHECK_INT(na, >=, 1);
		for (int i = 0; i < na; i++) {
			CHECK_STR(fa[i].name, fb[i].name);
			CHECK_STR(fa[i].file, fb[i].file);
			CHECK_INT(fa[i].line, ==, fb[i].line);
			CHECK_INT(fa[i].column, ==, fb[i].column);
		}
	}
	sym_index_free(a);
	sym_index_free(b);
	return 0;
}

static int test_symbolizer__compressed_debug_sections(void)
{
	return check_same_answers("c_O2_pie", "c_gz");
}

static int test_symbolizer__dwarf4_matches_dwarf5(void)
{
	return check_same_answers("c_O2_pie", "c_dwarf4");
}

/* The first function whose symbol has prefix: demangle its frame name. */
static int check_demangles(const char *bin, const char *prefix)
{
	char sym[64];
	struct sym_index *idx = open_ok(fixture(bin), NULL);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int seen = 0;

	CHECK(idx);
	snprintf(sym, sizeof(sym), "%s*", prefix);
	CHECK(elf_symbol(fixture(bin), sym, &addr, &size) == 0);
	for (uint64_t x = addr; x < addr + size && !seen; x++) {
		int n = sym_index_lookup(idx, x, SYM_ADDR_VADDR,
					 SYM_LOOKUP_SYMBOL_NAME, f, MAXF);

		for (int i = 0; i < n && i < MAXF; i++) {
			const char *full, *bare;

			if (!f[i].name || strncmp(f[i].name, prefix, strlen(prefix)))
				continue;
			full = sym_frame_demangled(idx, &f[i], true);
			bare = sym_frame_demangled(idx, &f[i], false);
			CHECK(full && bare && full != f[i].name);
			CHECK(strstr(full, "::") != NULL);
			CHECK(full[0] != '_' || full[1] != prefix[1]);
			/* cached: the same pointer the second time */
			CHECK(sym_frame_demangled(idx, &f[i], true) == full);
			seen++;
			break;
		}
	}
	CHECK_INT(seen, ==, 1);
	sym_index_free(idx);
	return 0;
}

static int test_symbolizer__demangle_cxx(void)
{
	return check_demangles("cxx_O2", "_ZN5ember");
}

static int test_symbolizer__demangle_rust_legacy(void)
{
	return check_demangles("rust_O2", "_ZN");
}

static int test_symbolizer__demangle_rust_v0(void)
{
	return check_demangles("rust_v0", "_RNv");
}

static int test_symbolizer__go_names(void)
{
	struct sym_index *idx = open_ok(fixture("go_prog"), NULL);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int n;

	CHECK(idx);
	CHECK(elf_symbol(fixture("go_prog"), "main.main", &addr, &size) == 0);
	n = sym_index_lookup(idx, addr, SYM_ADDR_VADDR, 0, f, MAXF);
	CHECK_INT(n, >=, 1);
	CHECK_STR(f[n - 1].name, "main.main");
	CHECK(ends_with(f[n - 1].file, "prog.go"));
	CHECK(sym_frame_demangled(idx, &f[n - 1], true) == f[n - 1].name);
	sym_index_free(idx);
	return 0;
}

struct race {
	struct sym_index *idx;
	uint64_t lo, hi;
	unsigned long sum;
};

static void *race_run(void *arg)
{
	struct race *r = arg;
	struct sym_frame f[MAXF];

	for (int rep = 0; rep < 4; rep++)
		for (uint64_t x = r->lo; x < r->hi; x++) {
			int n = sym_index_lookup(r->idx, x, SYM_ADDR_VADDR, 0, f, MAXF);

			for (int i = 0; i < n && i < MAXF; i++) {
				const char *d = sym_frame_demangled(r->idx, &f[i], true);

				r->sum += d ? strlen(d) : 0;
			}
		}
	return NULL;
}

/* Two threads look up and demangle the same addresses: same answers. */
static int test_symbolizer__concurrent_lookups(void)
{
	struct sym_index *idx = open_ok(fixture("cxx_O2"), NULL);
	struct race r[2];
	pthread_t t[2];
	uint64_t addr, size;

	CHECK(idx);
	CHECK(elf_symbol(fixture("cxx_O2"), "main", &addr, &size) == 0);
	for (int i = 0; i < 2; i++) {
		r[i] = (struct race){ idx, addr, addr + size, 0 };
		CHECK(pthread_create(&t[i], NULL, race_run, &r[i]) == 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(r[0].sum > 0);
	CHECK_INT(r[0].sum, ==, r[1].sum);
	sym_index_free(idx);
	return 0;
}

/*
 * A DWARF 4 line program written by hand: include dir "inc", files a.c
 * (dir 0) and b.h (dir 1); rows at 0x1000 (a.c:1), 0x1004 (a.c:3, by a
 * special opcode), 0x100c (b.h:8, fixed_advance_pc), end at 0x1010.
 */
static const uint8_t line_v4[] = {
	0, 0, 0, 0,		/* unit_length, patched below */
	4, 0,			/* version 4 */
	0, 0, 0, 0,		/* header_length, patched below */
	1, 1, 1,		/* min_inst 1, max_ops 1, default_is_stmt */
	(uint8_t)-5, 14, 13,	/* line_base -5, line_range 14, opcode_base 13 */
	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, /* standard_opcode_lengths */
	'i', 'n', 'c', 0, 0,	/* include_directories */
	'a', '.', 'c', 0, 0, 0, 0,
	'b', '.', 'h', 0, 1, 0, 0,
	0,			/* end of file_names */
	/* program */
	0, 9, 2, 0x00, 0x10, 0, 0, 0, 0, 0, 0, /* set_address 0x1000 */
	1,			/* copy: a.c:1 @0x1000 */
	13 + (2 - (-5)) + 14 * 4, /* special: addr += 4, line += 2 */
	4, 2,			/* set_file 2 */
	3, 5,			/* advance_line 5 -> 8 */
	9, 8, 0,		/* fixed_advance_pc 8 -> 0x100c */
	1,			/* copy: b.h:8 @0x100c */
	2, 4,			/* advance_pc 4 -> 0x1010 */
	0, 1, 1,		/* end_sequence */
};

struct rows {
	struct sym_line_row r[8];
	uint64_t end[8];
	int n;
};

static int collect_row(void *arg, const struct sym_line_row *row, uint64_t end)
{
	struct rows *rs = arg;

	if (rs->n < 8) {
		rs->r[rs->n] = *row;
		rs->end[rs->n++] = end;
	}
	return 0;
}

static void line_v4_bytes(uint8_t *buf, size_t *len)
{
	size_t hdr_end = 48; /* offset of the first program byte */

	memcpy(buf, line_v4, sizeof(line_v4));
	*len = sizeof(line_v4);
	buf[0] = (uint8_t)(*len - 4);
	buf[6] = (uint8_t)(hdr_end - 10);
}

static int test_symbolizer__line_program_v4(void)
{
	struct sym_index *idx = calloc(1, sizeof(*idx));
	struct sym_unit_files files;
	struct rows rs = { 0 };
	uint8_t buf[sizeof(line_v4)];
	size_t len;
	int err;

	CHECK(idx && sym_strtab_init(&idx->strtab) == 0);
	line_v4_bytes(buf, &len);
	struct sym_line_ctx ctx = { .line = { buf, len } };
	err = sym_line_program_read(idx, &ctx, 0, "/cd", &files, collect_row, &rs);
	CHECK_INT(err, ==, 0);
	CHECK_INT(files.n, ==, 3); /* DWARF 4: file numbers start at 1 */
	CHECK_STR(sym_strtab_get(&idx->strtab, files.off[1]), "/cd/a.c");
	CHECK_STR(sym_strtab_get(&idx->strtab, files.off[2]), "/cd/inc/b.h");
	CHECK_INT(rs.n, ==, 3);
	CHECK_INT(rs.r[0].addr, ==, 0x1000);
	CHECK_INT(rs.end[0], ==, 0x1004);
	CHECK_INT(rs.r[0].line, ==, 1);
	CHECK_INT(rs.r[1].addr, ==, 0x1004);
	CHECK_INT(rs.r[1].line, ==, 3);
	CHECK_INT(rs.end[1], ==, 0x100c);
	CHECK_INT(rs.r[2].file, ==, 2);
	CHECK_INT(rs.r[2].line, ==, 8);
	CHECK_INT(rs.end[2], ==, 0x1010);
	free(files.off);
	sym_index_free(idx);
	return 0;
}

/* Every truncation of the program: -EINVAL or fewer rows, never a crash
 * or a read past the end (ASan watches the copy, exactly sized). */
static int test_symbolizer__line_program_truncated(void)
{
	struct sym_index *idx = calloc(1, sizeof(*idx));
	uint8_t full[sizeof(line_v4)];
	size_t len;

	CHECK(idx && sym_strtab_init(&idx->strtab) == 0);
	line_v4_bytes(full, &len);
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		struct sym_unit_files files = { 0 };
		struct rows rs = { 0 };
		int err;

		memcpy(copy, full, cut);
		struct sym_line_ctx ctx = { .line = { copy, cut } };
		err = sym_line_program_read(idx, &ctx, 0, "/cd", &files,
					    collect_row, &rs);
		CHECK(err == -EINVAL || err == 0);
		CHECK_INT(rs.n, <=, 3);
		free(files.off);
		free(copy);
	}
	sym_index_free(idx);
	return 0;
}

#define CASE(n) { #n, n }
static const struct unit_case cases[] = {
	CASE(test_symbolizer__open_missing_file),
	CASE(test_symbolizer__open_not_elf),
	CASE(test_symbolizer__open_truncated_elf),
	CASE(test_symbolizer__corrupt_dwarf_falls_back),
	CASE(test_symbolizer__inline_chain_across_header),
	CASE(test_symbolizer__file_offsets_pie),
	CASE(test_symbolizer__file_offsets_nopie),
	CASE(test_symbolizer__file_offsets_shared_library),
	CASE(test_symbolizer__debuglink_next_to_binary),
	CASE(test_symbolizer__debuglink_in_debug_dir),
	CASE(test_symbolizer__build_id_directory),
	CASE(test_symbolizer__explicit_debug_file),
	CASE(test_symbolizer__stale_debug_file_rejected),
	CASE(test_symbolizer__symtab_fallback),
	CASE(test_symbolizer__dynsym_fallback),
	CASE(test_symbolizer__compressed_debug_sections),
	CASE(test_symbolizer__dwarf4_matches_dwarf5),
	CASE(test_symbolizer__demangle_cxx),
	CASE(test_symbolizer__demangle_rust_legacy),
	CASE(test_symbolizer__demangle_rust_v0),
	CASE(test_symbolizer__go_names),
	CASE(test_symbolizer__concurrent_lookups),
	CASE(test_symbolizer__line_program_v4),
	CASE(test_symbolizer__line_program_truncated),
};

int main(int argc, char **argv)
{
	ember_log_set_handler(quiet, NULL);
	return unit_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv);
}
