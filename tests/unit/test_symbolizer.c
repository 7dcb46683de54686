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
#include "craft_elf.h"

#include <dwarf.h>
#include <libiberty/demangle.h>
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

/* The text sym_demangle gives is libiberty's own (cplus_demangle) for
 * every name of the C++ and Rust fixtures' symbol tables. */
static int same_as_libiberty(void *arg, const char *name, const GElf_Sym *s)
{
	int *n = arg;

	(void)s;
	for (int params = 0; params < 2; params++) {
		char *want = cplus_demangle(name, DMGL_ANSI | (params ? DMGL_PARAMS : 0));
		char *got = sym_demangle(name, params, NULL);

		if (!want != !got || (want && strcmp(want, got) != 0)) {
			fprintf(stderr, "'%s': '%s', libiberty '%s'\n", name,
				got ? got : "(null)", want ? want : "(null)");
			free(want);
			free(got);
			return -1;
		}
		*n += want != NULL;
		free(want);
		free(got);
	}
	return 0;
}

static int test_symbolizer__demangle_as_libiberty(void)
{
	static const char *const fx[] = { "cxx_O2", "rust_O2", "rust_v0" };

	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		int n = 0;

		CHECK_INT(elf_each_symbol(unit_fixture(fx[i]), true, same_as_libiberty, &n),
			  ==, 0);
		CHECK_INT(n, >, 100);
	}
	return 0;
}

/* A C++ name of about 16 * k bytes whose text doubles with each of its
 * k levels: f<B<B<...>, B<...>>>(...), each template argument the one
 * before twice (g++ mangles B<T4, T4> so; substitutions S<n>_ name the
 * levels). */
static size_t doubling_name(char *buf, size_t size, int k)
{
	size_t n = (size_t)snprintf(buf, size, "_Z1fI1BI");

	for (int i = 0; i < k - 1; i++)
		n += (size_t)snprintf(buf + n, size - n, "S0_I");
	n += (size_t)snprintf(buf + n, size - n, "1AS1_E");
	for (int i = 2; i <= k; i++) { /* S<i in base 36>_E */
		char d[8];
		int m = 0;

		for (int v = i; v; v /= 36)
			d[m++] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[v % 36];
		n += (size_t)snprintf(buf + n, size - n, "S");
		while (m)
			buf[n++] = d[--m];
		n += (size_t)snprintf(buf + n, size - n, "_E");
	}
	return n + (size_t)snprintf(buf + n, size - n, "EvT_");
}

/* A legacy Rust name of len bytes (len >= 128): aaa::aaa::...::aaa::h<hash>,
 * in components of up to 997 a's. */
static char *long_name(size_t len)
{
	static const char hash[] = "17h0123456789abcdefE";
	char *s = malloc(len + 1);
	size_t at = 3, rem = len - 3 - (sizeof(hash) - 1);

	if (!s)
		return NULL;
	memcpy(s, "_ZN", 3);
	while (rem) {
		size_t m = rem > 1000 ? 500 : rem - 3; /* three digits */

		snprintf(s + at, 4, "%03zu", m);
		memset(s + at + 3, 'a', m);
		at += 3 + m;
		rem -= 3 + m;
	}
	memcpy(s + at, hash, sizeof(hash));
	return s;
}

/*
 * Demangling is bounded by the text a name may have, not by the text it
 * stands for: a 218-byte name whose text would be 872 MB (2^26 copies
 * of "A") stays raw after at most twice its cap of text was written; a
 * small one of the same shape demangles as libiberty does it.  Names
 * past SYM_DEMANGLE_MAX_NAME stay raw; one of that length demangles.
 */
static int test_symbolizer__demangle_bounded(void)
{
	char name[512], *want, *got;
	size_t work, len;
	char *longname;

	len = doubling_name(name, sizeof(name), 4);
	want = cplus_demangle(name, DMGL_ANSI | DMGL_PARAMS);
	got = sym_demangle(name, true, &work);
	CHECK(want && got);
	CHECK_STR(got, want);
	CHECK(strstr(got, "B<B<B<B<A, A>, B<A, A> >"));
	CHECK_INT(work, ==, strlen(got));
	free(want);
	free(got);
	len = doubling_name(name, sizeof(name), 26);
	CHECK_INT(len, ==, 218);
	CHECK(sym_demangle(name, true, &work) == NULL);
	CHECK_INT(work, <=, 2 * sym_demangle_cap(len));
	CHECK_INT(sym_demangle_cap(len), ==, 256 + 64 * 218);
	/* a long Rust name (libiberty reads no C++ name past 1024 bytes) */
	longname = long_name(SYM_DEMANGLE_MAX_NAME + 1);
	CHECK(longname);
	CHECK(sym_demangle(longname, true, &work) == NULL);
	CHECK_INT(work, ==, 0);
	free(longname);
	longname = long_name(SYM_DEMANGLE_MAX_NAME);
	CHECK(longname && strlen(longname) == SYM_DEMANGLE_MAX_NAME);
	got = sym_demangle(longname, true, &work);
	want = cplus_demangle(longname, DMGL_ANSI | DMGL_PARAMS);
	CHECK(got && want);
	CHECK_STR(got, want);
	CHECK(strstr(got, "aaa::aaa") && !strstr(got, "17h"));
	free(want);
	free(got);
	free(longname);
	return 0;
}

struct demangle_job {
	const char *name;
	bool done, ok;
};

static void *demangle_thread(void *arg)
{
	struct demangle_job *j = arg;
	char *d = sym_demangle(j->name, true, NULL);

	j->ok = d != NULL;
	free(d);
	j->done = true;
	return NULL;
}

/* f(int, int, ...) with n parameters. */
static char *params_name(size_t n)
{
	char *s = malloc(n + 5);

	if (!s)
		return NULL;
	memcpy(s, "_Z1f", 4);
	memset(s + 4, 'i', n);
	s[4 + n] = '\0';
	return s;
}

/* The stack symbolizer.h says is enough, a thread of 1 MB: the C++ name
 * libiberty recurses deepest on (the longest parameter list it reads:
 * 1020, one level each) and the longest Rust name demangled. */
static int test_symbolizer__demangle_stack(void)
{
	struct demangle_job jobs[2] = {
		{ .name = params_name(1020) },
		{ .name = long_name(SYM_DEMANGLE_MAX_NAME) },
	};
	pthread_attr_t attr;

	CHECK(pthread_attr_init(&attr) == 0 &&
	      pthread_attr_setstacksize(&attr, 1u << 20) == 0);
	for (int i = 0; i < 2; i++) {
		pthread_t t;

		CHECK(jobs[i].name);
		CHECK(pthread_create(&t, &attr, demangle_thread, &jobs[i]) == 0);
		CHECK(pthread_join(t, NULL) == 0);
		CHECK(jobs[i].done && jobs[i].ok);
		free((char *)jobs[i].name);
	}
	pthread_attr_destroy(&attr);
	return 0;
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

/*
 * The origin cache's hash has a key of its own: keys that the fixed hash
 * it had (Fibonacci hashing, bits 20 and up of key * 0x9e3779b97f4a7c15)
 * sends to one slot of the final table, 4,000 of them, which took
 * 8 million probes there, take about one each, and all are found again.
 */
static int test_symbolizer__origin_cache_keyed(void)
{
	const uint64_t mul = 0x9e3779b97f4a7c15ull;
	struct sym_origin_cache c = { 0 };
	uint64_t inv = mul;
	size_t n = 4000;

	for (int i = 0; i < 6; i++) /* Newton: the inverse of mul mod 2^64 */
		inv *= 2 - mul * inv;
	CHECK_INT(inv * mul, ==, 1);
	for (size_t j = 1; j <= n; j++) {
		uint64_t key = (j << 33) * inv; /* key * mul = j << 33 */
		struct sym_node node = { .name = (uint32_t)j, .short_name = 7 };
		struct sym_origin *slot;

		CHECK_INT((key * mul >> 20) & 8191, ==, 0); /* one slot of 8192 */
		CHECK_INT(sym_origin_cache_get(&c, key, &node, &slot), ==, 0);
		sym_origin_cache_put(&c, slot, key, &node);
	}
	CHECK_INT(c.nslots, ==, 8192);
	CHECK_INT(c.probes, <, 4 * n);
	for (size_t j = 1; j <= n; j++) {
		struct sym_node node = { 0 };
		struct sym_origin *slot;

		CHECK_INT(sym_origin_cache_get(&c, (j << 33) * inv, &node, &slot), ==, 1);
		CHECK_INT(node.name, ==, j);
	}
	sym_origin_cache_release(&c);
	return 0;
}

/* A file of n PT_LOAD segments (i: 0x1000 bytes at 0x100000 + 0x2000 i,
 * file offset 0x1000 i), in reverse program-header order when reversed,
 * and one more overlapping segment 5, which the index drops; .text and
 * one function symbol "f" at 0x100000 of size 0 (to the next symbol: the
 * segments bound it). */
static int write_many_loads(const char *path, size_t n, bool reversed)
{
	static const uint8_t code[16] = { 0xc3 };
	static const char strtab[] = "\0f";
	Elf64_Sym syms[2] = { { 0 }, { .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				       .st_shndx = 1, .st_value = 0x100000 } };
	const struct craft_sect sects[] = {
		{ .name = ".text", .flags = SHF_ALLOC | SHF_EXECINSTR, .addr = 0x100000,
		  .data = code, .size = sizeof(code) },
		{ .name = ".symtab", .type = SHT_SYMTAB, .data = syms, .size = sizeof(syms),
		  .link = 3, .info = 1, .entsize = sizeof(Elf64_Sym) },
		{ .name = ".strtab", .type = SHT_STRTAB, .data = strtab, .size = sizeof(strtab) },
	};
	struct craft_load *l = calloc(n + 1, sizeof(*l));
	struct craft_elf e = { sects, 3, l, n + 1 };
	int err;

	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		l[reversed ? n - 1 - i : i] = (struct craft_load){
			0x100000 + 0x2000 * i, 0x1000, 0x1000 * i, 0x1000, PF_R | PF_X };
	l[n] = (struct craft_load){ 0x100000 + 0x2000 * 5 + 0x800, 0x1000, 0x400, 0x10, PF_R };
	err = craft_elf_write(path, &e);
	free(l);
	return err;
}

/* Lookups of idx inside, between and past the segments of write_many_loads:
 * by address, and by file offset. */
static int check_many_loads(const struct sym_index *idx, size_t n)
{
	struct sym_frame f[4];
	uint64_t va;

	for (size_t i = 0; i < n; i += 7) {
		uint64_t at = 0x100000 + 0x2000 * i;

		CHECK_INT(sym_index_lookup(idx, at + 0xfff, SYM_ADDR_VADDR, 0, f, 4), ==, 1);
		CHECK_STR(f[0].name, "f");
		CHECK_INT(sym_index_lookup(idx, at + 0x1000, SYM_ADDR_VADDR, 0, f, 4), ==, 0);
		CHECK_INT(sym_index_offset_to_vaddr(idx, 0x1000 * i + 5, &va), ==, 0);
		CHECK_INT(va, ==, at + 5);
	}
	CHECK_INT(sym_index_lookup(idx, 0x100000 - 1, SYM_ADDR_VADDR, 0, f, 4), ==, 0);
	CHECK_INT(sym_index_offset_to_vaddr(idx, 0x1000 * n, &va), ==,
		  -SYM_ERR_OFFSET_UNMAPPED);
	return 0;
}

/*
 * A lookup searches the PT_LOAD segments (it scanned them all before, a
 * cost the file chose): SYM_MAX_LOADS segments in any program-header
 * order are put in address order, an overlapping one dropped, and every
 * lookup by address and by offset answers as the segments say; one
 * segment more makes the file malformed.  Segments out of order (a
 * damaged saved index) are scanned, with the same answers.
 */
static int test_symbolizer__loads_searched(void)
{
	char path[] = "/tmp/ember-loads-XXXXXX";
	int fd = mkstemp(path), err = 0;
	size_t n = SYM_MAX_LOADS - 1;
	struct sym_index *idx;

	CHECK(fd >= 0);
	close(fd);
	for (int reversed = 0; reversed < 2; reversed++) {
		CHECK_INT(write_many_loads(path, n, reversed), ==, 0);
		idx = sym_index_open(path, NULL, &err);
		CHECK(idx);
		CHECK_INT(idx->nloads, ==, n);
		CHECK(idx->loads_sorted && idx->loads_by_offset);
		if (check_many_loads(idx, n))
			return 1;
		sym_index_free(idx);
	}
	/* out of order, as a damaged saved index could be: scanned */
	CHECK_INT(write_many_loads(path, n, false), ==, 0);
	idx = sym_index_open(path, NULL, &err);
	CHECK(idx);
	for (size_t i = 0; i < n / 2; i++) {
		struct sym_load t = idx->loads[i];

		idx->loads[i] = idx->loads[n - 1 - i];
		idx->loads[n - 1 - i] = t;
	}
	CHECK_INT(sym_loads_check(idx, NULL), ==, 0);
	CHECK(!idx->loads_sorted && !idx->loads_by_offset);
	if (check_many_loads(idx, n))
		return 1;
	sym_index_free(idx);
	CHECK_INT(write_many_loads(path, n + 1, false), ==, 0);
	CHECK(sym_index_open(path, NULL, &err) == NULL);
	CHECK_INT(err, ==, -SYM_ERR_BAD_ELF);
	unlink(path);
	return 0;
}

/* ---- bounds of a build from hostile DWARF ------------------------------ */

/* A DWARF 4 line program of rows rows from 0x1001, one a byte, lines 2,
 * 3, 4 ... of file "u.c" in "/src". */
static void line_program_v4(struct craft_buf *b, size_t rows)
{
	static const uint8_t params[] = { 1, 1, 1, (uint8_t)-5, 14, 13,
					  0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	size_t start = b->n, hstart;
	uint32_t v;

	craft_put4(b, 0);			/* unit_length, patched */
	craft_buf_put(b, (uint8_t[]){ 4, 0 }, 2);	/* version 4 */
	craft_put4(b, 0);			/* header_length, patched */
	hstart = b->n;
	craft_buf_put(b, params, sizeof(params));
	craft_buf_put(b, "/src\0\0u.c\0\1\0\0\0", 15); /* dirs; files: u.c in dir 1 */
	v = (uint32_t)(b->n - hstart);
	memcpy(b->v + start + 6, &v, 4);
	craft_buf_put(b, (uint8_t[]){ 0, 9, DW_LNE_set_address, 0, 0x10, 0, 0, 0, 0, 0, 0 }, 11);
	for (size_t i = 0; i < rows; i++) /* address +1, line +1: 13 + 5 + 14 */
		craft_put1(b, 13 + 6 + 14);
	craft_buf_put(b, (uint8_t[]){ DW_LNS_advance_pc, 1, 0, 1, DW_LNE_end_sequence }, 5);
	v = (uint32_t)(b->n - start - 4);
	memcpy(b->v + start, &v, 4);
}

/* A DWARF 4 unit whose DIE (abbreviation code 1 at abbrev_off) has a
 * DW_AT_stmt_list of 0 and nothing else. */
static void unit_v4(struct craft_buf *b, uint32_t abbrev_off, uint8_t code)
{
	craft_put4(b, 2 + 4 + 1 + 1 + 4);
	craft_buf_put(b, (uint8_t[]){ 4, 0 }, 2);
	craft_put4(b, abbrev_off);
	craft_put1(b, 8);
	craft_put1(b, code);
	craft_put4(b, 0);
}

/* An ELF of units and a program of rows rows, .text over the rows. */
static int write_dwarf_elf(const char *path, const struct craft_buf *info,
			   const struct craft_buf *abbrev, const struct craft_buf *line,
			   size_t rows)
{
	static const uint8_t code[1] = { 0xc3 };
	uint8_t *text = calloc(1, rows + 16);
	const struct craft_sect sects[] = {
		{ .name = ".text", .flags = SHF_ALLOC | SHF_EXECINSTR, .addr = 0x1000,
		  .type = SHT_NOBITS, .data = code, .size = rows + 16 },
		{ .name = ".debug_info", .data = info->v, .size = info->n },
		{ .name = ".debug_abbrev", .data = abbrev->v, .size = abbrev->n },
		{ .name = ".debug_line", .data = line->v, .size = line->n },
	};
	struct craft_elf e = { sects, 4, NULL, 0 };
	int err = text ? craft_elf_write(path, &e) : -ENOMEM;

	free(text);
	return err;
}

/*
 * Units that share one line program take its rows once: 1,000 units
 * naming one program of 20,000 rows (which took 1,000 times its rows
 * before: 20 million intervals, 480 MB of segments) build within 16 MiB,
 * with 999 units counted as sharing, every row found; and the build's
 * byte budget refuses the same file at 256 KiB, saying what it needed.
 */
static int test_symbolizer__shared_line_program_read_once(void)
{
	static const uint8_t abbrev_v[] = { 1, DW_TAG_compile_unit, DW_CHILDREN_no,
					    DW_AT_stmt_list, DW_FORM_data4, 0, 0, 0 };
	struct craft_buf info = { 0 }, abbrev = { 0 }, line = { 0 };
	char path[] = "/tmp/ember-shared-lines-XXXXXX", why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct sym_open_opts o = { .sz = sizeof(o), .max_bytes = 16u << 20, .diag = &d };
	int fd = mkstemp(path), err = 0;
	size_t rows = 20000, units = 1000;
	struct sym_index *idx;
	struct sym_frame f[4];

	CHECK(fd >= 0);
	close(fd);
	craft_buf_put(&abbrev, abbrev_v, sizeof(abbrev_v));
	line_program_v4(&line, rows);
	for (size_t i = 0; i < units; i++)
		unit_v4(&info, 0, 1);
	CHECK_INT(write_dwarf_elf(path, &info, &abbrev, &line, rows), ==, 0);
	idx = sym_index_open(path, &o, &err);
	if (!idx)
		fprintf(stderr, "%s: %s\n", sym_strerror(err), why);
	CHECK(idx);
	CHECK_INT(idx->lines_shared, ==, units - 1);
	CHECK_INT(idx->nsegs, <=, rows + 2);
	for (size_t k = 0; k < rows; k += 997) {
		CHECK_INT(sym_index_lookup(idx, 0x1001 + k, SYM_ADDR_VADDR, 0, f, 4), ==, 1);
		CHECK_INT(f[0].line, ==, k + 2);
		CHECK_STR(f[0].file, "/src/u.c");
	}
	sym_index_free(idx);
	o.max_bytes = 256u << 10;
	CHECK(sym_index_open(path, &o, &err) == NULL);
	CHECK_INT(err, ==, -E2BIG);
	CHECK(strstr(why, "limit of 262144 bytes"));
	unlink(path);
	free(info.v);
	free(abbrev.v);
	free(line.v);
	return 0;
}

/* The byte budget on a real file: each limit below what the index of
 * c_O2_pie needs fails with -E2BIG, explained; the index built within a
 * limit holds less than it. */
static int test_symbolizer__byte_budget(void)
{
	char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct sym_open_opts o = { .sz = sizeof(o), .diag = &d };
	struct sym_index_stats st;
	struct sym_index *idx;
	int err = 0;

	for (uint64_t max = 1024; max < (64u << 10); max *= 4) {
		o.max_bytes = max;
		d = ember_diag_make(why, sizeof(why));
		CHECK(sym_index_open(unit_fixture("c_O2_pie"), &o, &err) == NULL);
		CHECK_INT(err, ==, -E2BIG);
		CHECK(strstr(why, "the index needs more than its limit of"));
	}
	o.max_bytes = 8u << 20;
	idx = sym_index_open(unit_fixture("c_O2_pie"), &o, &err);
	CHECK(idx);
	sym_index_get_stats(idx, &st);
	CHECK_INT(st.bytes, <, o.max_bytes);
	CHECK_INT(st.functions, >, 0);
	sym_index_free(idx);
	return 0;
}

/*
 * A compressed DWARF section is checked against the limit before libdw
 * inflates anything: a .debug_info of a few bytes whose header claims
 * 2 GiB is refused at the default limit (1 GiB) without an allocation,
 * naming the section; a real compressed file (objcopy) builds the index
 * its uncompressed original builds unless the limit is below one of its
 * sections.
 */
static int test_symbolizer__compressed_section_limit(void)
{
	static const uint8_t zeros[64];
	const struct craft_sect sects[] = {
		{ .name = ".debug_info", .flags = SHF_COMPRESSED, .data = zeros,
		  .size = sizeof(zeros), .claim = (uint64_t)2 << 30 },
		{ .name = ".debug_abbrev", .data = zeros, .size = 8 },
	};
	struct craft_elf e = { sects, 2, NULL, 0 };
	char path[] = "/tmp/ember-zclaim-XXXXXX", cmd[8400], why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct sym_open_opts o = { .sz = sizeof(o), .diag = &d };
	struct sym_index *a, *b;
	int fd = mkstemp(path), err = 0;

	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(craft_elf_write(path, &e), ==, 0);
	CHECK(sym_index_open(path, &o, &err) == NULL);
	CHECK_INT(err, ==, -E2BIG);
	CHECK(strstr(why, "section '.debug_info' inflates to 2147483648 bytes, "
		      "more than the limit of 1073741824"));
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s'",
		 unit_fixture("c_O2_pie"), path);
	if (system(cmd) != 0) {
		unlink(path);
		fprintf(stderr, "no objcopy (binutils)\n");
		return UNIT_SKIP;
	}
	a = sym_index_open(path, NULL, &err);
	b = sym_index_open(unit_fixture("c_O2_pie"), NULL, &err);
	CHECK(a && b);
	CHECK_INT(a->nsegs, ==, b->nsegs);
	CHECK_INT(a->nnodes, ==, b->nnodes);
	sym_index_free(a);
	sym_index_free(b);
	o.max_section_bytes = 64;
	d = ember_diag_make(why, sizeof(why));
	CHECK(sym_index_open(path, &o, &err) == NULL);
	CHECK_INT(err, ==, -E2BIG);
	CHECK(strstr(why, "section '.debug_") && strstr(why, "more than the limit of 64"));
	unlink(path);
	return 0;
}

/*
 * Abbreviation tables parsed are counted as work: every unit naming an
 * offset of its own into one table of 32 KB (each offset a valid table
 * of the rest) would parse most of it again, 1,000 times; the build
 * stops past its work allowance (64 times its 60 KB, plus 16 MiB) and
 * says so.  A file a compiler wrote
 * parses each unit's table once (fixtures).
 */
static int test_symbolizer__abbrev_parses_bounded(void)
{
	struct craft_buf info = { 0 }, abbrev = { 0 }, line = { 0 };
	char path[] = "/tmp/ember-abbrevs-XXXXXX", why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct sym_open_opts o = { .sz = sizeof(o), .diag = &d };
	int fd = mkstemp(path), err = 0;
	size_t units = 1000, pairs = 16384;
	struct sym_index *idx;

	CHECK(fd >= 0);
	close(fd);
	/* 0x19 0x19 ...: from any offset, code 25, tag 25, then pairs of
	 * (attribute 25, DW_FORM_flag_present) up to the end */
	for (size_t i = 0; i < 2 * pairs + 3; i++)
		craft_put1(&abbrev, 0x19);
	craft_buf_put(&abbrev, (uint8_t[]){ 0, 0, 0 }, 3);
	line_program_v4(&line, 16);
	for (size_t i = 0; i < units; i++)
		unit_v4(&info, (uint32_t)i, 0x19);
	CHECK_INT(write_dwarf_elf(path, &info, &abbrev, &line, 16), ==, 0);
	CHECK(sym_index_open(path, &o, &err) == NULL);
	CHECK_INT(err, ==, -E2BIG);
	CHECK(strstr(why, "abbreviation tables: ") && strstr(why, "64 per byte"));
	unlink(path);
	idx = sym_index_open(unit_fixture("c_O2_pie"), NULL, &err);
	CHECK(idx);
	CHECK_INT(idx->abbrev_parses, ==, idx->units_read);
	sym_index_free(idx);
	free(info.v);
	free(abbrev.v);
	free(line.v);
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
	UNIT_CASE(test_symbolizer__demangle_as_libiberty),
	UNIT_CASE(test_symbolizer__demangle_bounded),
	UNIT_CASE(test_symbolizer__demangle_stack),
	UNIT_CASE(test_symbolizer__origin_cache_keyed),
	UNIT_CASE(test_symbolizer__loads_searched),
	UNIT_CASE(test_symbolizer__shared_line_program_read_once),
	UNIT_CASE(test_symbolizer__byte_budget),
	UNIT_CASE(test_symbolizer__compressed_section_limit),
	UNIT_CASE(test_symbolizer__abbrev_parses_bounded),
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
