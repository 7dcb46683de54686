/*
 * test_symbolizer.c - unit tests of symbolizer/ on the ELF fixtures
 * (fixtures/elf, built into $EMBER_FIXTURES_DIR).  Expected values come
 * from the fixtures' sources and from libelf directly, never from the
 * code under test.  The cross-check against llvm-symbolizer on thousands
 * of addresses is tests/oracle/compare_llvm.py.
 */
#include "symbolizer.h"
#include "sym_internal.h" /* the DWARF readers, tested directly */
#include "gopclntab.h"     /* the Go table reader, likewise */
#include "common.h"
#include "unit.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXF 64

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

/*
 * Call fn for each symbol of path's .symtab (and .dynsym too when dynsym
 * is set), in section order, read with libelf (not the code under test),
 * until fn returns non-zero.  Returns what fn returned, 0 at the end, or
 * -errno when the file cannot be opened.
 */
typedef int (*elf_sym_fn)(void *arg, const char *name, const GElf_Sym *s);

static int elf_each_symbol(const char *path, bool dynsym, elf_sym_fn fn, void *arg)
{
	int fd = open(path, O_RDONLY), ret = 0;
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && !(dynsym && sh.sh_type == SHT_DYNSYM)))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; !ret && d && i < d->d_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (gelf_getsym(d, (int)i, &sym) &&
			    (n = elf_strptr(elf, sh.sh_link, sym.st_name)))
				ret = fn(arg, n, &sym);
		}
	}
	elf_end(elf);
	close(fd);
	return ret;
}

struct sym_query {
	const char *name;
	size_t plen;		/* name's length without a final '*' */
	bool prefix, any_value;	/* any_value: st_value 0 matches too */
	uint64_t addr, size;
};

static int sym_query_match(void *arg, const char *n, const GElf_Sym *s)
{
	struct sym_query *q = arg;

	if (!(s->st_value || q->any_value))
		return 0;
	if (q->prefix ? strncmp(n, q->name, q->plen) == 0 && s->st_size &&
				GELF_ST_TYPE(s->st_info) == STT_FUNC
		      : strcmp(n, q->name) == 0) {
		q->addr = s->st_value;
		q->size = s->st_size;
		return 1;
	}
	return 0;
}

/*
 * Address and size of a symbol of .symtab or .dynsym, by libelf.  A name
 * ending in '*' matches the first function with that prefix and a
 * non-zero size.
 */
static int elf_symbol(const char *path, const char *name, uint64_t *addr,
		      uint64_t *size)
{
	size_t len = strlen(name);
	struct sym_query q = { .name = name, .prefix = len && name[len - 1] == '*' };
	int ret;

	q.plen = q.prefix ? len - 1 : len;
	ret = elf_each_symbol(path, true, sym_query_match, &q);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ENOENT;
	*addr = q.addr;
	*size = q.size;
	return 0;
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
	CHECK(copy_file(unit_fixture("c_O2_pie"), path, 6000) == 0);
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
	CHECK(copy_file(unit_fixture("c_O2_pie"), path, SIZE_MAX) == 0);
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
	CHECK(elf_symbol(unit_fixture("c_O2_pie"), "main", &addr, &size) == 0);
	n = sym_index_lookup(idx, addr + 1, SYM_ADDR_VADDR, 0, f, MAXF);
	CHECK_INT(n, >=, 1);
	CHECK_STR(f[n - 1].name, "main");
	sym_index_free(idx);
	return 0;
}

/* helper.c's exported functions inline mix.h helpers: frames from two files. */
static int test_symbolizer__inline_chain_across_header(void)
{
	struct sym_index *idx = open_ok(unit_fixture("c_O2_pie"), NULL);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int best = 0;

	CHECK(idx);
	CHECK(elf_symbol(unit_fixture("c_O2_pie"), "helper_digest_points", &addr, &size) == 0);
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
	struct sym_index *idx = open_ok(unit_fixture(name), NULL);
	struct sym_frame a[MAXF], b[MAXF];
	uint64_t addr, size, off;
	int na, nb;

	CHECK(idx);
	CHECK(elf_symbol(unit_fixture(name), sym, &addr, &size) == 0);
	CHECK(elf_vaddr_to_offset(unit_fixture(name), addr + 2, &off) == 0);
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
	struct sym_index *idx = open_ok(unit_fixture(bin), o);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int n;

	CHECK(idx);
	CHECK(sym_index_debug_path(idx) != NULL);
	CHECK(strstr(sym_index_debug_path(idx), want_path_part) != NULL);
	CHECK(elf_symbol(unit_fixture("c_stripped.debug"), "table_check.constprop.0",
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

	snprintf(root, sizeof(root), "%s", unit_fixture("debug-root"));
	return check_separate_debug("c_stripped_buildid_only", &o,
				    "/debug-root/.build-id/");
}

static int test_symbolizer__explicit_debug_file(void)
{
	char dbg[4096];
	struct sym_open_opts o = { .sz = sizeof(o), .debug_file = dbg };

	snprintf(dbg, sizeof(dbg), "%s", unit_fixture("c_stripped.debug"));
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
	CHECK(copy_file(unit_fixture("c_stripped"), bin, SIZE_MAX) == 0);
	CHECK(copy_file(unit_fixture("c_O2_pie"), dbg, SIZE_MAX) == 0);
	idx = sym_index_open(bin, NULL, &err);
	unlink(bin);
	unlink(dbg);
	rmdir(dir);
	CHECK(idx == NULL);
	CHECK_INT(err, ==, -SYM_ERR_NO_SYMBOLS);
	return 0;
}

/*
 * A failure of the machine while looking for the debug file is an error,
 * not "no debug file": with one file descriptor left, the binary opens
 * and its debuglink target does not (EMFILE), and the build must fail
 * with that, not answer from .dynsym as if the debug file were absent.
 */
static int test_symbolizer__debug_search_failure_is_an_error(void)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct rlimit rl;
		struct sym_index *idx;
		int err = 0;

		fd = dup(0); /* the lowest free descriptor: the binary gets it */
		close(fd);
		rl.rlim_cur = rl.rlim_max = (rlim_t)fd + 1;
		if (fd < 0 || setrlimit(RLIMIT_NOFILE, &rl))
			_exit(2);
		idx = sym_index_open(unit_fixture("c_stripped"), NULL, &err);
		_exit(idx == NULL && err == -EMFILE ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), ==, 0);
	return 0;
}

/* A build-ID note the index cannot hold (68 bytes) is an error, not a
 * file without a build ID (whose debug file would go unchecked). */
static int test_symbolizer__long_build_id_is_an_error(void)
{
	char path[4096];
	struct sym_index *idx;
	int err = 0, rc = unit_long_build_id_elf(path, sizeof(path));

	if (rc)
		return rc;
	idx = sym_index_open(path, NULL, &err);
	unlink(path);
	CHECK(idx == NULL);
	CHECK_INT(err, ==, -SYM_ERR_BAD_ELF);
	return 0;
}

static int check_fallback(const char *bin, const char *sym, enum sym_source src,
			  const char *file)
{
	struct sym_index *idx = open_ok(unit_fixture(bin), NULL);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int n;

	CHECK(idx);
	CHECK(elf_symbol(unit_fixture(bin), sym, &addr, &size) == 0);
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
	struct sym_index *a = open_ok(unit_fixture(a_name), NULL);
	struct sym_index *b = open_ok(unit_fixture(b_name), NULL);
	struct sym_frame fa[MAXF], fb[MAXF];
	uint64_t addr, size;

	CHECK(a && b);
	CHECK(elf_symbol(unit_fixture(a_name), "helper_collect_stats", &addr, &size) == 0);
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
	struct sym_index *idx = open_ok(unit_fixture(bin), NULL);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int seen = 0;

	CHECK(idx);
	snprintf(sym, sizeof(sym), "%s*", prefix);
	CHECK(elf_symbol(unit_fixture(bin), sym, &addr, &size) == 0);
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
	struct sym_index *idx = open_ok(unit_fixture("go_prog"), NULL);
	struct sym_frame f[MAXF];
	uint64_t addr, size;
	int n;

	CHECK(idx);
	CHECK(elf_symbol(unit_fixture("go_prog"), "main.main", &addr, &size) == 0);
	n = sym_index_lookup(idx, addr, SYM_ADDR_VADDR, 0, f, MAXF);
	CHECK_INT(n, >=, 1);
	CHECK_STR(f[n - 1].name, "main.main");
	CHECK(ends_with(f[n - 1].file, "prog.go"));
	CHECK(sym_frame_demangled(idx, &f[n - 1], true) == f[n - 1].name);
	sym_index_free(idx);
	return 0;
}

/* ---- Go without DWARF: .gopclntab ---------------------------------------- */

/* Address of the symbol of .symtab called exactly name (any type, any
 * value), by libelf. */
static int elf_symbol_exact(const char *path, const char *name, uint64_t *addr)
{
	struct sym_query q = { .name = name, .plen = strlen(name), .any_value = true };
	int ret = elf_each_symbol(path, false, sym_query_match, &q);

	if (ret <= 0)
		return ret < 0 ? ret : -ENOENT;
	*addr = q.addr;
	return 0;
}

/* Where section name is in the file: its header's offset, its bytes. */
struct sect_loc {
	uint64_t shdr_off, off, size, addr;
};

static int elf_section_loc(const char *path, const char *name,
			   struct sect_loc *out)
{
	int fd = open(path, O_RDONLY), found = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t shstr;
	GElf_Ehdr eh;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && gelf_getehdr(elf, &eh) && elf_getshdrstrndx(elf, &shstr) == 0)
		while (found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) &&
			    strcmp(elf_strptr(elf, shstr, sh.sh_name), name) == 0) {
				*out = (struct sect_loc){
					eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize,
					sh.sh_offset, sh.sh_size, sh.sh_addr };
				found = 0;
			}
		}
	elf_end(elf);
	close(fd);
	return found;
}

struct addr_list {
	uint64_t *v;
	size_t n, alloc;
};

/* A function's start and five points inside it, into the list. */
static int add_function_points(void *arg, const char *name, const GElf_Sym *s)
{
	struct addr_list *l = arg;

	(void)name;
	if (GELF_ST_TYPE(s->st_info) != STT_FUNC || !s->st_size)
		return 0;
	for (uint64_t k = 0; k < 6; k++) {
		if (l->n == l->alloc) {
			uint64_t *p = realloc(l->v, (l->alloc ? 2 * l->alloc : 1024) * sizeof(*p));

			if (!p)
				return -ENOMEM;
			l->v = p;
			l->alloc = l->alloc ? 2 * l->alloc : 1024;
		}
		l->v[l->n++] = s->st_value + s->st_size * k / 6;
	}
	return 0;
}

/* Function starts and five points inside each function of the Go fixture
 * (from its .symtab, by libelf): the addresses the Go tests look up. */
static size_t go_addresses(uint64_t **out)
{
	struct addr_list l = { 0 };

	if (elf_each_symbol(unit_fixture("go_prog_nodwarf"), false, add_function_points, &l))
		l.n = 0;
	*out = l.v;
	return l.n;
}

static bool have_go(void)
{
	return system("go version >/dev/null 2>&1") == 0;
}

/* A DWARF path as the pclntab records it: Go's DWARF names files
 * relative to the unit's comp_dir ".", so Ember joins them as "./x". */
static const char *go_path(const char *p)
{
	return p && strncmp(p, "./", 2) == 0 ? p + 2 : p;
}

/*
 * `go tool addr2line` (debug/gosym on .gopclntab) against Ember on the
 * Go fixture without DWARF, and on the one without .symtab either.  It
 * prints the function the address is in (the outermost frame: gosym
 * knows no inlining) with the file:line of the innermost one (the pc's
 * own row): those are compared.
 */
static int test_symbolizer__gopclntab_matches_go_addr2line(void)
{
	char in[] = "/tmp/ember-goaddr-XXXXXX", cmd[8192];
	struct sym_index *idx, *stripped;
	struct sym_frame f[MAXF], g[MAXF];
	uint64_t *addrs;
	size_t n = go_addresses(&addrs), checked = 0;
	int fd = mkstemp(in);
	FILE *fp, *p;

	if (!have_go()) {
		free(addrs);
		close(fd);
		unlink(in);
		fprintf(stderr, "SKIP: 'go' not found in PATH (Debian package golang-go)\n");
		return UNIT_SKIP;
	}
	CHECK(fd >= 0 && n > 1000);
	fp = fdopen(fd, "w");
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "0x%llx\n", (unsigned long long)addrs[i]);
	fclose(fp);
	snprintf(cmd, sizeof(cmd), "env GOENV=off GOFLAGS= GOTOOLCHAIN=local "
		 "go tool addr2line '%s' < '%s'", unit_fixture("go_prog_nodwarf"), in);
	p = popen(cmd, "r");
	idx = open_ok(unit_fixture("go_prog_nodwarf"), NULL);
	stripped = open_ok(unit_fixture("go_prog_stripped"), NULL);
	CHECK(p && idx && stripped);
	for (size_t i = 0; i < n; i++) {
		char name[4096], loc[4096], *colon;
		int k = sym_index_lookup(idx, addrs[i], SYM_ADDR_VADDR, 0, f, MAXF);
		int ks = sym_index_lookup(stripped, addrs[i], SYM_ADDR_VADDR, 0, g, MAXF);

		CHECK(fgets(name, sizeof(name), p) && fgets(loc, sizeof(loc), p));
		name[strcspn(name, "\n")] = loc[strcspn(loc, "\n")] = '\0';
		colon = strrchr(loc, ':');
		CHECK(colon);
		*colon = '\0';
		if (strcmp(name, "?") == 0)
			continue; /* not in the table: nothing to compare */
		CHECK_INT(k, >=, 1);
		CHECK_INT(k, <=, MAXF);
		for (int j = 0; j < k; j++)
			CHECK_INT(f[j].source, ==, SYM_SOURCE_GOPCLNTAB);
		CHECK_STR(f[k - 1].name, name);
		CHECK_STR(f[0].file, loc);
		CHECK_INT(f[0].line, ==, atoi(colon + 1));
		/* no .symtab: the same frames from .gopclntab alone */
		CHECK_INT(ks, ==, k);
		for (int j = 0; j < k; j++) {
			CHECK_STR(g[j].name, f[j].name);
			CHECK(g[j].file == f[j].file || strcmp(g[j].file, f[j].file) == 0);
			CHECK_INT(g[j].line, ==, f[j].line);
		}
		checked++;
	}
	CHECK(pclose(p) == 0);
	unlink(in);
	CHECK_INT(checked, >, n * 9 / 10);
	sym_index_free(idx);
	sym_index_free(stripped);
	free(addrs);
	return 0;
}

/* Go's pclntab shortens array types in generated names ("type..eq.[5]T"
 * is "type..eq.[...]T" there); DWARF keeps the length. */
static bool go_names_match(const char *dwarf, const char *pcln)
{
	if (!dwarf || !pcln)
		return dwarf == pcln;
	while (*dwarf && *pcln) {
		if (strncmp(pcln, "[...]", 5) == 0 && *dwarf == '[') {
			const char *close = strchr(dwarf, ']');

			if (!close)
				return false;
			dwarf = close + 1;
			pcln += 5;
		} else if (*dwarf++ != *pcln++) {
			return false;
		}
	}
	return *dwarf == *pcln;
}

static bool go_frames_equal(const struct sym_frame *d, int nd,
			    const struct sym_frame *p, int np)
{
	if (nd != np)
		return false;
	for (int j = 0; j < nd; j++)
		if (!go_names_match(d[j].name, p[j].name) ||
		    !d[j].file != !p[j].file ||
		    (d[j].file && strcmp(go_path(d[j].file), p[j].file) != 0) ||
		    d[j].line != p[j].line || d[j].inlined != p[j].inlined)
			return false;
	return nd == 0 || d[nd - 1].func_start == p[np - 1].func_start;
}

/*
 * An autogenerated wrapper ((*T).M calling T.M) that inlined its target:
 * the pclntab records the inlined call, Go's DWARF leaves it out and
 * gives the wrapper the callee's line.  Same pc row, one frame less.
 */
static bool go_wrapper_case(const struct sym_frame *d, int nd,
			    const struct sym_frame *p, int np)
{
	return nd >= 1 && np > nd && p[np - 1].file &&
	       strcmp(p[np - 1].file, "<autogenerated>") == 0 &&
	       go_names_match(d[nd - 1].name, p[np - 1].name) &&
	       d[0].file && p[0].file && strcmp(go_path(d[0].file), p[0].file) == 0 &&
	       d[0].line == p[0].line;
}

static int go_text_identical(void)
{
	struct sect_loc a, b;
	FILE *fa, *fb;
	int same = 1, ca, cb;

	if (elf_section_loc(unit_fixture("go_prog"), ".text", &a) ||
	    elf_section_loc(unit_fixture("go_prog_nodwarf"), ".text", &b) ||
	    a.addr != b.addr || a.size != b.size)
		return 0;
	fa = fopen(unit_fixture("go_prog"), "rb");
	fb = fopen(unit_fixture("go_prog_nodwarf"), "rb");
	if (!fa || !fb || fseek(fa, (long)a.off, SEEK_SET) ||
	    fseek(fb, (long)b.off, SEEK_SET))
		same = 0;
	for (uint64_t i = 0; same && i < a.size; i++) {
		ca = getc(fa);
		cb = getc(fb);
		same = ca == cb && ca != EOF;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/*
 * Ember's pclntab answers against its own DWARF answers for the same
 * code (go_prog and go_prog_nodwarf differ only in -ldflags=-w): every
 * frame, innermost first, inlined ones included, at every function start
 * and five points inside each function.  Differences allowed, and only
 * these (docs/symbol-index.md): the "./" DWARF puts before paths, "[...]"
 * for array lengths in generated names, and inlined calls in
 * autogenerated wrappers that only the pclntab records.
 */
static int test_symbolizer__gopclntab_matches_dwarf(void)
{
	struct sym_index *dw = open_ok(unit_fixture("go_prog"), NULL);
	struct sym_index *pc = open_ok(unit_fixture("go_prog_nodwarf"), NULL);
	struct sym_frame d[MAXF], p[MAXF];
	size_t same = 0, wrappers = 0, with_inlined = 0, compared = 0;
	uint64_t *addrs;
	size_t n = go_addresses(&addrs);

	CHECK(dw && pc && n > 1000);
	CHECK(go_text_identical()); /* the fixtures' premise */
	for (size_t i = 0; i < n; i++) {
		int nd = sym_index_lookup(dw, addrs[i], SYM_ADDR_VADDR, 0, d, MAXF);
		int np = sym_index_lookup(pc, addrs[i], SYM_ADDR_VADDR, 0, p, MAXF);

		CHECK_INT(nd, <=, MAXF);
		CHECK_INT(np, <=, MAXF);
		if (nd < 1 || d[0].source != SYM_SOURCE_DWARF)
			continue; /* DWARF says nothing here */
		compared++;
		CHECK_INT(np, >=, 1);
		CHECK_INT(p[0].source, ==, SYM_SOURCE_GOPCLNTAB);
		if (go_frames_equal(d, nd, p, np)) {
			same++;
			with_inlined += nd > 1;
		} else if (go_wrapper_case(d, nd, p, np)) {
			wrappers++;
		} else {
			fprintf(stderr, "0x%llx: dwarf %d frames, pclntab %d:\n",
				(unsigned long long)addrs[i], nd, np);
			for (int j = 0; j < nd || j < np; j++)
				fprintf(stderr, "  %s %s:%u | %s %s:%u\n",
					j < nd ? d[j].name : "-", j < nd ? d[j].file : "-",
					j < nd ? d[j].line : 0, j < np ? p[j].name : "-",
					j < np ? p[j].file : "-", j < np ? p[j].line : 0);
			CHECK(!"pclntab and DWARF frames differ");
		}
	}
	printf("gopclntab vs DWARF: %zu addresses, %zu identical (%zu with "
	       "inlined frames), %zu in wrappers\n", compared, same,
	       with_inlined, wrappers);
	CHECK_INT(compared, >, n * 9 / 10);
	CHECK_INT(with_inlined, >=, 100);
	CHECK_INT(wrappers, <=, compared / 100);
	sym_index_free(dw);
	sym_index_free(pc);
	free(addrs);
	return 0;
}

/* The header and moduledata as read, against the symbols of the file. */
static int test_symbolizer__gopclntab_moduledata(void)
{
	static const char *const names[] = { "go_prog_nodwarf", "go_prog_stripped" };
	uint64_t gofunc, text;
	struct sect_loc tx;
	char tc[4096] = "";
	FILE *f = fopen(unit_fixture("TOOLCHAIN"), "r");

	CHECK(f);
	while (fgets(tc, sizeof(tc), f) && !strstr(tc, "go version"))
		;
	fclose(f);
	CHECK(elf_symbol_exact(unit_fixture("go_prog_nodwarf"), "go.func.*", &gofunc) == 0 ||
	      elf_symbol_exact(unit_fixture("go_prog_nodwarf"), "go:func.*", &gofunc) == 0);
	CHECK(elf_symbol_exact(unit_fixture("go_prog_nodwarf"), "runtime.text", &text) == 0);
	CHECK(elf_section_loc(unit_fixture("go_prog_stripped"), ".text", &tx) == 0);
	for (size_t i = 0; i < 2; i++) {
		struct sym_elf e = { .fd = -1 };
		struct sym_go_table t;

		CHECK(sym_elf_open(unit_fixture(names[i]), &e) == 0);
		CHECK_INT(sym_go_table_open(&t, e.elf), ==, 0);
		if (strstr(tc, "go1.18") || strstr(tc, "go1.19"))
			CHECK_INT(t.ver, ==, SYM_GO_118);
		CHECK_INT(t.ptrsize, ==, 8);
		CHECK_INT(t.quantum, ==, 1);
		CHECK(t.gofunc_found);
		CHECK_INT(t.gofunc, ==, gofunc);	/* the stripped one too */
		CHECK_INT(t.text_start, ==, text);
		CHECK_INT(t.text_start, ==, tx.addr);
		sym_go_table_release(&t);
		sym_elf_close(&e);
	}
	return 0;
}

/* A copy of fixture name with len bytes at off replaced by bytes. */
static int go_patched(const char *name, char *path, uint64_t off,
		      const void *bytes, size_t len)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	close(fd);
	if (copy_file(unit_fixture(name), path, SIZE_MAX))
		return -1;
	fd = open(path, O_RDWR);
	if (fd < 0 || pwrite(fd, bytes, len, (off_t)off) != (ssize_t)len)
		return -1;
	close(fd);
	return 0;
}

/* Open a patched copy: the index or NULL, *err its error. */
static struct sym_index *go_open_patched(const char *name, uint64_t off,
					 const void *bytes, size_t len, int *err)
{
	char path[] = "/tmp/ember-gopcln-XXXXXX";
	struct sym_index *idx = NULL;

	*err = -EIO;
	if (go_patched(name, path, off, bytes, len) == 0)
		idx = sym_index_open(path, NULL, err);
	unlink(path);
	return idx;
}

/*
 * A broken .gopclntab: a bad magic or a section cut short falls back to
 * .symtab (or gives "no symbols" when there is none); moduledata not
 * found keeps names and lines without inline frames; random damage
 * never crashes (ASan/UBSan build).
 */
static int test_symbolizer__gopclntab_corrupt(void)
{
	static const uint64_t sizes[] = { 0, 4, 8, 16, 0x40, 0x48, 0x400, 0x4000 };
	struct sect_loc pcln, nd;
	struct sym_frame f[MAXF];
	uint64_t digest, size, inl_addr = 0, zero = 0, rng = 0x9e3779b97f4a7c15ull;
	struct sym_index *idx;
	int err, n;

	CHECK(elf_section_loc(unit_fixture("go_prog_nodwarf"), ".gopclntab", &pcln) == 0);
	CHECK(elf_section_loc(unit_fixture("go_prog_nodwarf"), ".noptrdata", &nd) == 0);
	CHECK(elf_symbol(unit_fixture("go_prog_nodwarf"), "main.digest", &digest, &size) == 0);
	/* an address in digest where mixStep is inlined, from the intact file */
	idx = open_ok(unit_fixture("go_prog_nodwarf"), NULL);
	CHECK(idx);
	for (uint64_t a = digest; a < digest + size && !inl_addr; a++)
		if (sym_index_lookup(idx, a, SYM_ADDR_VADDR, 0, f, MAXF) == 2 &&
		    strcmp(f[0].name, "main.mixStep") == 0)
			inl_addr = a;
	sym_index_free(idx);
	CHECK(inl_addr);

	/* bad magic: .symtab answers; without .symtab, a clear error */
	idx = go_open_patched("go_prog_nodwarf", pcln.off, "\0\0\0\0", 4, &err);
	CHECK(idx);
	n = sym_index_lookup(idx, inl_addr, SYM_ADDR_VADDR, 0, f, MAXF);
	CHECK_INT(n, ==, 1);
	CHECK_INT(f[0].source, ==, SYM_SOURCE_SYMTAB);
	CHECK_STR(f[0].name, "main.digest");
	sym_index_free(idx);
	CHECK(elf_section_loc(unit_fixture("go_prog_stripped"), ".gopclntab", &pcln) == 0);
	idx = go_open_patched("go_prog_stripped", pcln.off, "\0\0\0\0", 4, &err);
	CHECK(!idx);
	CHECK_INT(err, ==, -SYM_ERR_NO_SYMBOLS);

	/* the section cut short (its header's sh_size) */
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		idx = go_open_patched("go_prog_stripped", pcln.shdr_off + 32,
				      &sizes[i], 8, &err);
		CHECK(idx || err == -SYM_ERR_NO_SYMBOLS);
		sym_index_free(idx);
	}
	for (uint64_t cut = pcln.size - 1; cut > pcln.size / 2; cut -= pcln.size / 7) {
		idx = go_open_patched("go_prog_stripped", pcln.shdr_off + 32,
				      &cut, 8, &err);
		CHECK(idx || err == -SYM_ERR_NO_SYMBOLS);
		sym_index_free(idx);
	}

	/* moduledata unrecognisable: lines, no inline frames */
	CHECK(elf_section_loc(unit_fixture("go_prog_nodwarf"), ".gopclntab", &pcln) == 0);
	{
		uint8_t *buf = malloc(nd.size);
		FILE *fp = fopen(unit_fixture("go_prog_nodwarf"), "rb");

		CHECK(buf && fp && fseek(fp, (long)nd.off, SEEK_SET) == 0 &&
		      fread(buf, 1, nd.size, fp) == nd.size);
		fclose(fp);
		for (uint64_t o = 0; o + 8 <= nd.size; o += 8)
			if (memcmp(buf + o, &pcln.addr, 8) == 0)
				memcpy(buf + o, &zero, 8);
		idx = go_open_patched("go_prog_nodwarf", nd.off, buf, nd.size, &err);
		free(buf);
	}
	CHECK(idx);
	n = sym_index_lookup(idx, inl_addr, SYM_ADDR_VADDR, 0, f, MAXF);
	CHECK_INT(n, ==, 1);
	CHECK_INT(f[0].source, ==, SYM_SOURCE_GOPCLNTAB);
	CHECK_STR(f[0].name, "main.digest");
	CHECK(ends_with(f[0].file, "prog.go"));
	CHECK_INT(f[0].line, >, 0);
	sym_index_free(idx);

	/* random damage anywhere in the table */
	for (int i = 0; i < 40; i++) {
		uint8_t junk[8];
		uint64_t off;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		off = pcln.off + (i < 10 ? rng % 0x80 : rng % (pcln.size - 8));
		memcpy(junk, &rng, 8);
		idx = go_open_patched(i % 2 ? "go_prog_stripped" : "go_prog_nodwarf",
				      off, junk, 1 + (size_t)(rng >> 61), &err);
		CHECK(idx || err == -SYM_ERR_NO_SYMBOLS);
		for (uint64_t a = digest; idx && a < digest + size; a += 7)
			sym_index_lookup(idx, a, SYM_ADDR_VADDR, 0, f, MAXF);
		sym_index_free(idx);
	}
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
	struct sym_index *idx = open_ok(unit_fixture("cxx_O2"), NULL);
	struct race r[2];
	pthread_t t[2];
	uint64_t addr, size;

	CHECK(idx);
	CHECK(elf_symbol(unit_fixture("cxx_O2"), "main", &addr, &size) == 0);
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
	struct elfdw_sections ctx = { .line = { buf, len } };
	err = sym_line_program_read(idx, &ctx, 0, "/cd", &files, collect_row, &rs, NULL);
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

/* Every truncation of the program: an input error or fewer rows, never
 * a crash or a read past the end (ASan watches the copy, exactly sized). */
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
		struct elfdw_sections ctx = { .line = { copy, cut } };
		err = sym_line_program_read(idx, &ctx, 0, "/cd", &files,
					    collect_row, &rs, NULL);
		CHECK(elfdw_err_input(err) || err == 0);
		CHECK_INT(rs.n, <=, 3);
		free(files.off);
		free(copy);
	}
	sym_index_free(idx);
	return 0;
}

/*
 * A DWARF 4 line table whose include directory is longer than the 64 KiB
 * a path may take: building the file's path fails with -E2BIG (the table
 * is not used), and no path cut short is interned as if it were real.
 */
static int test_symbolizer__line_program_path_too_long(void)
{
	static const uint8_t params[] = { 1, 1, 1, (uint8_t)-5, 14, 13,
					  0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	static const uint8_t file[] = { 'a', '.', 'c', 0, 1, 0, 0, 0 };
	size_t dirlen = 70000, len = 10 + sizeof(params) + dirlen + 2 + sizeof(file);
	struct sym_index *idx = calloc(1, sizeof(*idx));
	uint8_t *buf = calloc(1, len);
	struct sym_unit_files files = { 0 };
	struct sym_unit *u = calloc(1, sizeof(*u));
	uint32_t v;
	char why[160];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	size_t at;

	CHECK(idx && buf && u && sym_strtab_init(&idx->strtab) == 0);
	v = (uint32_t)(len - 4);
	memcpy(buf, &v, 4);
	buf[4] = 4;
	v = (uint32_t)(len - 10);
	memcpy(buf + 6, &v, 4);
	memcpy(buf + 10, params, sizeof(params));
	at = 10 + sizeof(params);
	memset(buf + at, 'x', dirlen); /* the directory, then its NUL and the list's */
	at += dirlen + 2;
	memcpy(buf + at, file, sizeof(file));
	struct elfdw_sections ctx = { .line = { buf, len } };
	CHECK_INT(sym_line_program_read(idx, &ctx, 0, "/cd", &files, NULL, NULL, &d),
		  ==, -E2BIG);
	CHECK(strstr(why, "longer than"));
	CHECK(files.off == NULL && files.n == 0);
	for (size_t off = 1; off < idx->strtab.len; off += strlen(idx->strtab.data + off) + 1)
		CHECK(strlen(idx->strtab.data + off) < 60000);
	/* the unit goes without rows, the build goes on */
	CHECK_INT(sym_unit_lines_open(idx, &ctx, 0, "/cd", u), ==, 0);
	CHECK(!u->has_lines);
	sym_unit_free(u);
	free(buf);
	sym_index_free(idx);
	return 0;
}

/* ---- the DIE reader (dwarf_*.c) against libdw's walk ------------------ */

static bool node_equal(const struct sym_node *a, const struct sym_node *b)
{
	return a->name == b->name && a->short_name == b->short_name &&
	       a->parent == b->parent && a->call_file == b->call_file &&
	       a->call_line == b->call_line && a->call_col == b->call_col &&
	       a->call_disc == b->call_disc && a->decl_file == b->decl_file &&
	       a->decl_line == b->decl_line && a->entry == b->entry;
}

/* Two indexes of one file hold the same strings in the same order, the
 * same names, nodes and segments. */
static int check_same_index(const struct sym_index *a, const struct sym_index *b)
{
	CHECK_INT(a->strtab.len, ==, b->strtab.len);
	CHECK(memcmp(a->strtab.data, b->strtab.data, a->strtab.len) == 0);
	CHECK_INT(a->nnames, ==, b->nnames);
	CHECK(a->nnames == 0 ||
	      memcmp(a->names, b->names, a->nnames * sizeof(*a->names)) == 0);
	CHECK_INT(a->nnodes, ==, b->nnodes);
	for (size_t i = 0; i < a->nnodes; i++)
		CHECK(node_equal(&a->nodes[i], &b->nodes[i]));
	CHECK_INT(a->nfunctions, ==, b->nfunctions);
	CHECK_INT(a->ninlined, ==, b->ninlined);
	CHECK_INT(a->nsegs, ==, b->nsegs);
	CHECK(a->nsegs == 0 || memcmp(a->seg_start, b->seg_start,
				      a->nsegs * sizeof(*a->seg_start)) == 0);
	CHECK(a->nsegs == 0 ||
	      memcmp(a->segs, b->segs, a->nsegs * sizeof(*a->segs)) == 0);
	return 0;
}

/* The DIE reader walked all units of path itself (at least min_units)
 * and built the index libdw's walk builds. */
static int check_reader_matches(const char *path, size_t min_units)
{
	int e1 = 0, e2 = 0;
	struct sym_index *a = sym_index_open_flags(path, NULL, 0, &e1);
	struct sym_index *b = sym_index_open_flags(path, NULL,
						   SYM_BUILD_LIBDW_ONLY, &e2);

	if (!a || !b)
		fprintf(stderr, "open '%s': %d %d\n", path, e1, e2);
	CHECK(a && b);
	CHECK_INT(a->units_read, >=, min_units);
	CHECK_INT(a->units_libdw, ==, 0);
	CHECK_INT(b->units_read, ==, 0);
	CHECK_INT(b->units_libdw, ==, a->units_read);
	if (check_same_index(a, b))
		return 1;
	sym_index_free(a);
	sym_index_free(b);
	return 0;
}

static int test_symbolizer__reader_matches_libdw(void)
{
	static const struct { const char *name; size_t units; } fx[] = {
		{ "c_O2_pie", 2 }, { "c_O2_nopie", 2 }, { "c_dwarf4", 2 },
		{ "c_gz", 2 }, { "c_stripped.debug", 2 }, { "libfixture.so", 1 },
		{ "cxx_O2", 1 }, { "rust_O2", 2 }, { "rust_v0", 2 },
		{ "go_prog", 2 },
	};

	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++)
		if (check_reader_matches(unit_fixture(fx[i].name), fx[i].units)) {
			fprintf(stderr, "fixture '%s'\n", fx[i].name);
			return 1;
		}
	return 0;
}

/* A file of the fuzz corpus, tests/fuzz/corpus/symbolizer/ next to this
 * source; NULL when the tree is not there. */
static const char *corpus_file(const char *name)
{
	static char path[4096];
	const char *slash = strrchr(__FILE__, '/');

	if (!slash)
		return NULL;
	snprintf(path, sizeof(path), "%.*s/../fuzz/corpus/symbolizer/%s",
		 (int)(slash - __FILE__), __FILE__, name);
	return access(path, R_OK) == 0 ? path : NULL;
}

/*
 * The seeds of the fuzz corpus cover what the fixtures do not: built from
 * fixtures/elf/src/helper.c (lib.c too for LTO) with -O2 -ffreestanding
 * -fno-builtin -nostdlib -static -Wl,-e,helper_collect_stats, then
 * objcopy -R .comment:
 *   seed_clang_dwarf5       clang 14 -gdwarf-5: strx, addrx, rnglistx
 *   seed_clang_dwarf5_i386  the same, --target=i386-linux-gnu
 *   seed_gcc_dwarf4_i386    gcc 12 -m32 -gdwarf-4: 32-bit .debug_ranges
 *   seed_gcc_dwarf2         gcc 12 -gdwarf-2: block and flag forms
 *   seed_gcc_lto            gcc 12 -g -flto helper.c lib.c: three units
 */
static int test_symbolizer__reader_matches_libdw_seeds(void)
{
	static const char *const seeds[] = {
		"seed_clang_dwarf5", "seed_clang_dwarf5_i386",
		"seed_gcc_dwarf4_i386", "seed_gcc_dwarf2", "seed_gcc_lto",
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		const char *path = corpus_file(seeds[i]);

		if (!path)
			return UNIT_SKIP;
		if (check_reader_matches(path, 1)) {
			fprintf(stderr, "seed '%s'\n", seeds[i]);
			return 1;
		}
	}
	return 0;
}

/* Offset and size of section name in the ELF at path (libelf). */
static int section_place(const char *path, const char *name, off_t *off,
			 size_t *size)
{
	int fd = open(path, O_RDONLY), err = -ENOENT;
	Elf_Scn *scn = NULL;
	size_t shstr;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && elf_getshdrstrndx(elf, &shstr) == 0 &&
	       (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    strcmp(elf_strptr(elf, shstr, sh.sh_name), name) == 0) {
			*off = (off_t)sh.sh_offset;
			*size = sh.sh_size;
			err = 0;
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

/* In the first abbreviation table of buf, make every subprogram's
 * (DW_AT_name, DW_FORM_strp) a DW_FORM_strp_sup (same size, but a string
 * in a supplementary file, which the reader leaves to libdw).  Returns
 * how many it changed.  The fixture's codes, tags, names and forms are
 * all single-byte LEB128. */
static int patch_subprogram_names(uint8_t *buf, size_t size)
{
	size_t i = 0;
	int changed = 0;

	while (i + 3 <= size && buf[i] != 0) {
		bool subprogram = buf[i + 1] == DW_TAG_subprogram;

		for (i += 3; i + 2 <= size && (buf[i] || buf[i + 1]); i += 2) {
			if (subprogram && buf[i] == DW_AT_name &&
			    buf[i + 1] == DW_FORM_strp) {
				buf[i + 1] = DW_FORM_strp_sup;
				changed++;
			}
			if (buf[i + 1] == DW_FORM_implicit_const)
				i++; /* its value: one byte in the fixture */
		}
		i += 2;
	}
	return changed;
}

/* A unit the reader cannot read is walked by libdw, and what the reader
 * had added for it is dropped: the index is still libdw's, byte for byte. */
static int test_symbolizer__reader_leaves_unit_to_libdw(void)
{
	char path[] = "/tmp/ember-abbrev-XXXXXX";
	int fd = mkstemp(path), e1 = 0, e2 = 0;
	struct sym_index *a, *b;
	uint8_t *buf;
	size_t size;
	off_t off;

	CHECK(fd >= 0);
	close(fd);
	CHECK(copy_file(unit_fixture("c_O2_pie"), path, SIZE_MAX) == 0);
	CHECK(section_place(path, ".debug_abbrev", &off, &size) == 0);
	buf = malloc(size);
	fd = open(path, O_RDWR);
	CHECK(buf && fd >= 0 && pread(fd, buf, size, off) == (ssize_t)size);
	CHECK_INT(patch_subprogram_names(buf, size), >, 0);
	CHECK(pwrite(fd, buf, size, off) == (ssize_t)size);
	close(fd);
	free(buf);
	a = sym_index_open_flags(path, NULL, 0, &e1);
	b = sym_index_open_flags(path, NULL, SYM_BUILD_LIBDW_ONLY, &e2);
	unlink(path);
	CHECK(a && b);
	CHECK_INT(a->units_libdw, ==, 1); /* prog.c: its table was patched */
	CHECK_INT(a->units_read, ==, 1);  /* helper.c */
	if (check_same_index(a, b))
		return 1;
	sym_index_free(a);
	sym_index_free(b);
	return 0;
}

/* A big array keeps its contents across every growth step: 4 KB pages,
 * the move to a huge-page mapping at 2 MB, mremap after. */
static int test_symbolizer__big_array_growth(void)
{
	uint32_t *v = NULL;
	size_t map = 0, n = 0;

	for (size_t want = 1000; want <= (6u << 20) / 4; want += want / 2) {
		CHECK_INT(sym_big_grow((void **)&v, &map, want * sizeof(*v)), ==, 0);
		CHECK(map >= want * sizeof(*v));
		for (size_t i = 0; i < n; i++)
			CHECK(v[i] == (uint32_t)(i * 2654435761u));
		for (; n < want; n++)
			v[n] = (uint32_t)(n * 2654435761u);
	}
	sym_big_free(v, map);
	return 0;
}

/* An ELF with 8 MB of pattern after its contents; its image in memory. */
static int open_padded_elf(char *path, struct sym_elf *e, size_t *pad_at)
{
	size_t pad = 8u << 20;
	uint8_t *junk = malloc(pad);
	struct stat st;
	int fd = mkstemp(path);

	CHECK(fd >= 0 && junk);
	close(fd);
	CHECK(copy_file(unit_fixture("c_O2_pie"), path, SIZE_MAX) == 0);
	CHECK(stat(path, &st) == 0);
	for (size_t i = 0; i < pad; i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, junk, pad) == (ssize_t)pad);
	close(fd);
	free(junk);
	*pad_at = (size_t)st.st_size;
	CHECK_INT(sym_elf_open(path, e), ==, 0);
	return 0;
}

/* Pages given back read again as they were (libelf maps the file read
 * only): a reference into a unit already walked still sees its DIEs. */
static int test_symbolizer__file_pages_read_back(void)
{
	char path[] = "/tmp/ember-pages-XXXXXX";
	struct sym_elf e = { .fd = -1 };
	struct sym_pages m;
	const uint8_t *from, *raw;
	size_t size, pad_at;

	if (open_padded_elf(path, &e, &pad_at))
		return 1;
	unlink(path);
	sym_pages_init(&m, &e);
	raw = (const uint8_t *)elf_rawfile(e.elf, &size);
	CHECK(raw && m.page > 0 && m.lo == raw && m.hi == raw + size);
	from = raw + pad_at;
	sym_pages_done(&m, &from, raw + size - 1);
	CHECK(from == raw + size - 1); /* 8 MB: past the step, given back */
	for (size_t i = 0; i < size - pad_at; i += 4096)
		CHECK(raw[pad_at + i] == (uint8_t)(i * 131 + 7));
	sym_elf_close(&e);
	return 0;
}

/* Memory that is not a read-only mapping of the file is never given back:
 * dropping its pages would zero them. */
static int test_symbolizer__file_pages_only_file_mappings(void)
{
	size_t size = 4u << 20;
	uint8_t *copy = malloc(size);
	struct sym_elf e = { .fd = -1 };
	struct sym_pages m;
	const uint8_t *from;
	FILE *f = fopen(unit_fixture("c_O2_pie"), "rb");

	CHECK(copy && f);
	memset(copy, 0x5a, size);
	CHECK(fread(copy, 1, size, f) > 0);
	fclose(f);
	e.fd = open(unit_fixture("c_O2_pie"), O_RDONLY);
	elf_version(EV_CURRENT);
	e.elf = elf_memory((char *)copy, size);
	CHECK(e.fd >= 0 && e.elf);
	sym_pages_init(&m, &e);
	CHECK_INT(m.page, ==, 0);
	from = copy;
	sym_pages_done(&m, &from, copy + size);
	CHECK(copy[size - 1] == 0x5a && copy[size / 2] == 0x5a);
	elf_end(e.elf);
	close(e.fd);
	free(copy);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_symbolizer__open_missing_file),
	UNIT_CASE(test_symbolizer__open_not_elf),
	UNIT_CASE(test_symbolizer__open_truncated_elf),
	UNIT_CASE(test_symbolizer__corrupt_dwarf_falls_back),
	UNIT_CASE(test_symbolizer__inline_chain_across_header),
	UNIT_CASE(test_symbolizer__file_offsets_pie),
	UNIT_CASE(test_symbolizer__file_offsets_nopie),
	UNIT_CASE(test_symbolizer__file_offsets_shared_library),
	UNIT_CASE(test_symbolizer__debuglink_next_to_binary),
	UNIT_CASE(test_symbolizer__debuglink_in_debug_dir),
	UNIT_CASE(test_symbolizer__build_id_directory),
	UNIT_CASE(test_symbolizer__explicit_debug_file),
	UNIT_CASE(test_symbolizer__stale_debug_file_rejected),
	UNIT_CASE(test_symbolizer__debug_search_failure_is_an_error),
	UNIT_CASE(test_symbolizer__long_build_id_is_an_error),
	UNIT_CASE(test_symbolizer__symtab_fallback),
	UNIT_CASE(test_symbolizer__dynsym_fallback),
	UNIT_CASE(test_symbolizer__compressed_debug_sections),
	UNIT_CASE(test_symbolizer__dwarf4_matches_dwarf5),
	UNIT_CASE(test_symbolizer__demangle_cxx),
	UNIT_CASE(test_symbolizer__demangle_rust_legacy),
	UNIT_CASE(test_symbolizer__demangle_rust_v0),
	UNIT_CASE(test_symbolizer__go_names),
	UNIT_CASE(test_symbolizer__gopclntab_matches_go_addr2line),
	UNIT_CASE(test_symbolizer__gopclntab_matches_dwarf),
	UNIT_CASE(test_symbolizer__gopclntab_moduledata),
	UNIT_CASE(test_symbolizer__gopclntab_corrupt),
	UNIT_CASE(test_symbolizer__concurrent_lookups),
	UNIT_CASE(test_symbolizer__line_program_v4),
	UNIT_CASE(test_symbolizer__line_program_truncated),
	UNIT_CASE(test_symbolizer__line_program_path_too_long),
	UNIT_CASE(test_symbolizer__reader_matches_libdw),
	UNIT_CASE(test_symbolizer__reader_matches_libdw_seeds),
	UNIT_CASE(test_symbolizer__reader_leaves_unit_to_libdw),
	UNIT_CASE(test_symbolizer__big_array_growth),
	UNIT_CASE(test_symbolizer__file_pages_read_back),
	UNIT_CASE(test_symbolizer__file_pages_only_file_mappings),
};

UNIT_MAIN_QUIET(cases)
