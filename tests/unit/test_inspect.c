/*
 * test_inspect.c - unit tests of elf-inspect/: what each fixture carries,
 * truncated and foreign files, source names, path canonicalization.
 */
#include "inspect.h"
#include "unit.h"

#include "craft_elf.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int inspect_fixture(const char *name, struct inspect_info *info)
{
	int fd = open(unit_fixture(name), O_RDONLY);
	int err;

	if (fd < 0)
		return -errno;
	err = inspect_elf_fd(fd, info);
	close(fd);
	return err;
}

static int test_inspect__fixture_features(void)
{
	static const struct { const char *name; const char *features; } want[] = {
		{ "c_O2_pie", "dwarf5,symtab,dynsym,eh_frame,text" },
		{ "c_dwarf4", "dwarf4,symtab,dynsym,eh_frame,text" },
		{ "c_gz", "dwarf5,symtab,dynsym,eh_frame,compressed,text" },
		{ "c_stripped", "dynsym,eh_frame,text,debuglink" },
		{ "c_nodwarf", "symtab,dynsym,eh_frame,text" },
	};
	struct inspect_info info;
	char buf[160];

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		CHECK_INT(inspect_fixture(want[i].name, &info), ==, 0);
		CHECK_STR(inspect_flags_str(&info, buf, sizeof(buf)), want[i].features);
		CHECK_INT(info.build_id_len, ==, 20);
	}
	CHECK_INT(inspect_fixture("c_stripped", &info), ==, 0);
	CHECK_STR(info.debuglink, "c_stripped.debug");
	CHECK_INT(inspect_fixture("c_stripped.debug", &info), ==, 0);
	CHECK(info.flags & INSPECT_DWARF);
	CHECK(!(info.flags & INSPECT_TEXT));
	CHECK_INT(inspect_fixture("go_prog", &info), ==, 0);
	CHECK(info.flags & INSPECT_GOPCLNTAB);
	return 0;
}

static int test_inspect__not_elf_and_truncated(void)
{
	struct inspect_info info;
	size_t len;
	char *elf = unit_slurp(unit_fixture("c_O2_pie"), &len);

	CHECK(elf);
	CHECK_INT(inspect_elf_mem("#!/bin/sh\n", 10, &info), ==, -INSPECT_ERR_NOT_ELF);
	CHECK_INT(inspect_elf_mem("", 0, &info), ==, -INSPECT_ERR_NOT_ELF);
	CHECK_INT(inspect_elf_mem(elf, 40, &info), ==, -INSPECT_ERR_TRUNCATED);
	CHECK_INT(inspect_elf_mem(elf, len / 2, &info), ==, -INSPECT_ERR_TRUNCATED);
	CHECK_INT(inspect_elf_mem(elf, len, &info), ==, 0);
	/* Every prefix is refused with a reason, never accepted or crashed
	 * on, also one that cuts only into the section headers at the end
	 * (libelf then counts no sections at all). */
	for (size_t cut = 0; cut < len; cut += 97)
		CHECK(inspect_elf_mem(elf, cut, &info) < 0);
	CHECK(inspect_elf_mem(elf, len - 1, &info) < 0);
	free(elf);
	return 0;
}

/* A rejection names the check that failed, for the 422 an uploader gets. */
static int test_inspect__rejections_explain_themselves(void)
{
	struct inspect_info info;
	char why[256];
	struct ember_diag d;
	size_t len;
	char *elf = unit_slurp(unit_fixture("c_O2_pie"), &len);

	CHECK(elf);
	d = ember_diag_make(why, sizeof(why));
	CHECK_INT(inspect_elf_mem_diag("#!/bin/sh\n", 10, &info, &d), ==, -INSPECT_ERR_NOT_ELF);
	CHECK(strstr(why, "no ELF magic"));
	d = ember_diag_make(why, sizeof(why));
	CHECK_INT(inspect_elf_mem_diag(elf, 40, &info, &d), ==, -INSPECT_ERR_TRUNCATED);
	CHECK(strstr(why, "ELF header is cut short"));
	d = ember_diag_make(why, sizeof(why));
	CHECK_INT(inspect_elf_mem_diag(elf, len - 100, &info, &d), ==, -INSPECT_ERR_TRUNCATED);
	CHECK(strstr(why, "section headers at 0x") && strstr(why, "run past the end"));
	free(elf);
	return 0;
}

/* A file without a build-ID note is refused, saying so. */
static int test_inspect__no_build_id_explained(void)
{
	char tmp[] = "/tmp/ember-inspect-XXXXXX", cmd[8400], why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct inspect_info info;
	int fd = mkstemp(tmp), err;

	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section=.note.gnu.build-id '%s' '%s'",
		 unit_fixture("c_O2_pie"), tmp);
	if (system(cmd) != 0) {
		unlink(tmp);
		return UNIT_SKIP;
	}
	fd = open(tmp, O_RDONLY);
	err = inspect_elf_fd_diag(fd, &info, &d);
	close(fd);
	unlink(tmp);
	CHECK_INT(err, ==, -INSPECT_ERR_NO_BUILD_ID);
	CHECK(strstr(why, "no NT_GNU_BUILD_ID note"));
	return 0;
}

static int test_inspect__build_id_matches_readelf(void)
{
	struct inspect_info info;
	char hex[2 * EMBER_BUILD_ID_MAX + 1], cmd[4200], out[200] = "";
	FILE *p;

	CHECK_INT(inspect_fixture("cxx_O2", &info), ==, 0);
	ember_build_id_to_hex(info.build_id, info.build_id_len, hex);
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | awk '/Build ID/{print $3}'",
		 unit_fixture("cxx_O2"));
	p = popen(cmd, "r");
	if (!p || !fgets(out, sizeof(out), p)) {
		if (p)
			pclose(p);
		fprintf(stderr, "SKIP: readelf -n gave nothing (Debian package binutils)\n");
		return UNIT_SKIP;
	}
	pclose(p);
	out[strcspn(out, "\n")] = '\0';
	CHECK_STR(hex, out);
	return 0;
}

static int collect(const char *path, void *arg)
{
	int *n = arg;

	if (strcmp(path, "/ember/fixtures/src/prog.c") == 0)
		n[0]++;
	if (path[0] != '/' || strstr(path, "/./") || strstr(path, "/../"))
		n[1]++;
	n[2]++;
	return 0;
}

static int test_inspect__sources_are_absolute_and_canonical(void)
{
	int n[3] = { 0 };
	int fd = open(unit_fixture("c_O2_pie"), O_RDONLY);

	CHECK(fd >= 0);
	CHECK_INT(inspect_list_sources(fd, collect, n), ==, 0);
	close(fd);
	CHECK_INT(n[0], ==, 1);  /* prog.c, once */
	CHECK_INT(n[1], ==, 0);  /* nothing relative or uncanonical */
	CHECK(n[2] >= 3);        /* prog.c, helper.c, mix.h and system headers */
	return 0;
}

/* A build ID longer than the store's keys is refused, saying so. */
static int test_inspect__long_build_id_explained(void)
{
	char path[4096], why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct inspect_info info;
	int fd, err, rc = unit_long_build_id_elf(path, sizeof(path));

	if (rc)
		return rc;
	fd = open(path, O_RDONLY);
	err = inspect_elf_fd_diag(fd, &info, &d);
	close(fd);
	unlink(path);
	CHECK_INT(err, ==, -INSPECT_ERR_BAD_ELF);
	CHECK(strstr(why, "build-ID note longer than 64 bytes"));
	return 0;
}

/* The DWARF version and sources of a compressed file, in either
 * compression (SHF_COMPRESSED and GNU .zdebug), and the memory image of
 * the upload is never written to. */
static int test_inspect__compressed_dwarf_read_in_place(void)
{
	static const char *const modes[] = { "zlib", "zlib-gnu" };
	char tmp[] = "/tmp/ember-inspect-XXXXXX", cmd[8400];
	struct inspect_info info;
	int n[3], fd;

	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	for (size_t i = 0; i < 2; i++) {
		size_t len;
		char *img, *copy;

		snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=%s '%s' '%s'",
			 modes[i], unit_fixture("c_O2_pie"), tmp);
		if (system(cmd) != 0) {
			unlink(tmp);
			return UNIT_SKIP;
		}
		img = unit_slurp(tmp, &len);
		copy = img ? malloc(len) : NULL;
		CHECK(img && copy);
		memcpy(copy, img, len);
		CHECK_INT(inspect_elf_mem(img, len, &info), ==, 0);
		CHECK(memcmp(img, copy, len) == 0);
		CHECK_INT(info.dwarf_version, ==, 5);
		CHECK(info.flags & INSPECT_COMPRESSED);
		free(img);
		free(copy);
		memset(n, 0, sizeof(n));
		fd = open(tmp, O_RDONLY);
		CHECK_INT(inspect_list_sources(fd, collect, n), ==, 0);
		close(fd);
		CHECK_INT(n[0], ==, 1);
		CHECK(n[2] >= 3);
	}
	unlink(tmp);
	return 0;
}

/* Set the ch_size of every SHF_COMPRESSED .debug_* section of the ELF64
 * image to size: how many were changed, or -1. */
static int claim_inflated_size(char *img, size_t len, uint64_t size)
{
	uint64_t at[64];
	int n = 0;
	size_t shstr;
	Elf_Scn *scn = NULL;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_memory(img, len);
	if (!elf || elf_getshdrstrndx(elf, &shstr))
		return -1;
	while ((scn = elf_nextscn(elf, scn)) && n < 64) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		name = elf_strptr(elf, shstr, sh.sh_name);
		if (name && strncmp(name, ".debug_", 7) == 0 && sh.sh_offset + 16 <= len)
			at[n++] = sh.sh_offset + 8; /* Elf64_Chdr: type, reserved, size */
	}
	elf_end(elf);
	for (int i = 0; i < n; i++)
		memcpy(img + at[i], &size, sizeof(size));
	return n;
}

/*
 * Validation inflates no compressed section whole: only the first bytes
 * of .debug_info, for the unit header (it inflated every compressed
 * .debug_* section before).  Every one of them claiming 1 TiB inflated,
 * as a hostile upload may, the file is still validated, its DWARF
 * version read; inflating any of them would have asked for the 1 TiB.
 */
static int test_inspect__compressed_sections_not_inflated(void)
{
	char tmp[] = "/tmp/ember-inspect-XXXXXX", cmd[8400];
	struct inspect_info info;
	size_t len;
	char *img;
	int fd;

	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s'",
		 unit_fixture("c_O2_pie"), tmp);
	if (system(cmd) != 0) {
		unlink(tmp);
		return UNIT_SKIP;
	}
	img = unit_slurp(tmp, &len);
	unlink(tmp);
	CHECK(img);
	CHECK_INT(claim_inflated_size(img, len, 1ull << 40), >=, 5); /* info, abbrev, line, str... */
	CHECK_INT(inspect_elf_mem(img, len, &info), ==, 0);
	CHECK_INT(info.dwarf_version, ==, 5);
	CHECK(info.flags & INSPECT_COMPRESSED);
	free(img);
	return 0;
}

/* An ELF of one DWARF 5 unit ("/src/u.c" in "/src") whose line
 * program lists n files, entry i a line_strp of .debug_line_str offset
 * at(i) in directory 0 ("/d"), copied units times; .debug_line_str is
 * line_str.  DW_AT_name and DW_AT_comp_dir inline strings, stmt_list 0. */
static int write_listing_elf(const char *path, size_t units, size_t n,
			     uint32_t (*at)(size_t), const struct craft_buf *line_str,
			     const struct craft_sect *extra)
{
	static const uint8_t params[] = { 1, 1, 1, (uint8_t)-5, 14, 13,
					  0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	static const uint8_t abbrev[] = { 1, DW_TAG_compile_unit, DW_CHILDREN_no,
					  DW_AT_name, DW_FORM_string,
					  DW_AT_comp_dir, DW_FORM_string,
					  DW_AT_stmt_list, DW_FORM_sec_offset, 0, 0, 0 };
	struct craft_buf info = { 0 }, line = { 0 };
	uint32_t v;
	int err;

	for (size_t u = 0; u < units; u++) { /* 31 bytes: 12 of header */
		craft_put4(&info, 27);
		craft_buf_put(&info, (uint8_t[]){ 5, 0, DW_UT_compile, 8 }, 4);
		craft_put4(&info, 0);
		craft_buf_put(&info, "\1/src/u.c\0/src", 15);
		craft_put4(&info, 0);
	}
	craft_put4(&line, 0);
	craft_buf_put(&line, (uint8_t[]){ 5, 0, 8, 0 }, 4);
	craft_put4(&line, 0);
	craft_buf_put(&line, params, sizeof(params));
	craft_buf_put(&line, (uint8_t[]){ 1, DW_LNCT_path, DW_FORM_line_strp, 1 }, 4);
	craft_put4(&line, 0); /* "/d" */
	craft_buf_put(&line, (uint8_t[]){ 2, DW_LNCT_path, DW_FORM_line_strp,
					  DW_LNCT_directory_index, DW_FORM_udata }, 5);
	craft_uleb(&line, n);
	for (size_t i = 0; i < n; i++) {
		craft_put4(&line, at(i));
		craft_put1(&line, 0);
	}
	v = (uint32_t)(line.n - 4);
	memcpy(line.v, &v, 4);
	v = (uint32_t)(line.n - 12);
	memcpy(line.v + 8, &v, 4);
	{
		const struct craft_sect sects[] = {
			{ .name = ".debug_info", .data = info.v, .size = info.n },
			{ .name = ".debug_abbrev", .data = abbrev, .size = sizeof(abbrev) },
			{ .name = ".debug_line", .data = line.v, .size = line.n },
			{ .name = ".debug_line_str", .data = line_str->v, .size = line_str->n },
			extra ? *extra : (struct craft_sect){ .name = ".comment", .data = "", .size = 1 },
		};
		struct craft_elf e = { sects, 5, NULL, 0 };

		err = craft_elf_write(path, &e);
	}
	free(info.v);
	free(line.v);
	return err;
}

/* .debug_line_str: "/d", "a.c", then 60,000 a's. */
static void listing_strings(struct craft_buf *b)
{
	craft_buf_put(b, "/d\0a.c\0", 7);
	for (int i = 0; i < 60000; i++)
		craft_put1(b, 'a');
	craft_put1(b, 0);
}

static uint32_t at_short(size_t i)
{
	(void)i;
	return 3;
}

static uint32_t at_long(size_t i)
{
	(void)i;
	return 7;
}

static uint32_t at_suffix(size_t i)
{
	return (uint32_t)(7 + 60000 - 61 - i % 100); /* 61..160 a's */
}

static int count_paths(const char *path, void *arg)
{
	(void)path;
	(*(size_t *)arg)++;
	return 0;
}

/* The listing of path in a child: 0, how many paths, and how much its
 * peak RSS grew (KB), through a pipe. */
static int listing_in_child(const char *path, const struct inspect_sources_opts *o,
			    long *listed, long *grew_kb, int *err)
{
	int fds[2];
	long out[3] = { 0, 0, 0 };
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct rusage before, after;
		size_t n = 0;
		int fd = open(path, O_RDONLY);

		getrusage(RUSAGE_SELF, &before);
		out[0] = inspect_list_sources_opts(fd, o, count_paths, &n);
		getrusage(RUSAGE_SELF, &after);
		out[1] = (long)n;
		out[2] = after.ru_maxrss - before.ru_maxrss;
		if (write(fds[1], out, sizeof(out)) != sizeof(out))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], out, sizeof(out)) != sizeof(out)) {
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	waitpid(pid, NULL, 0);
	*err = (int)out[0];
	*listed = out[1];
	*grew_kb = out[2];
	return 0;
}

/*
 * Issue 13: a DWARF 5 line table of a million file entries naming one
 * long path made validation allocate without bound (a copy of the path
 * an entry).  Now: the million naming one 60 KB path names nothing (the
 * layer refuses a table naming 64 times its bytes of strings), a million
 * naming a short one lists it once, and the listing's memory grows by
 * less than 64 MB either way (the table is 5 MB; one path a copy would
 * have been 60 GB).
 */
static int test_inspect__sources_million_entries_bounded(void)
{
	char path[] = "/tmp/ember-listing-XXXXXX";
	struct craft_buf ls = { 0 };
	long listed, grew;
	int fd = mkstemp(path), err;

	CHECK(fd >= 0);
	close(fd);
	listing_strings(&ls);
	CHECK_INT(write_listing_elf(path, 1, 1000000, at_long, &ls, NULL), ==, 0);
	CHECK_INT(listing_in_child(path, NULL, &listed, &grew, &err), ==, 0);
	CHECK_INT(err, ==, 0);
	CHECK_INT(listed, ==, 1); /* /src/u.c, the unit's name */
	CHECK_INT(grew, <, 64 << 10);
	CHECK_INT(write_listing_elf(path, 1, 1000000, at_short, &ls, NULL), ==, 0);
	CHECK_INT(listing_in_child(path, NULL, &listed, &grew, &err), ==, 0);
	CHECK_INT(err, ==, 0);
	CHECK_INT(listed, ==, 2); /* and /d/a.c */
	CHECK_INT(grew, <, 64 << 10);
	unlink(path);
	free(ls.v);
	return 0;
}

/*
 * The listing's own limits, each -E2BIG with its reason: distinct paths
 * past max_names_bytes; paths joined past 64 times the DWARF (units that
 * all name one table of 1,000 paths of 60 to 160 bytes); a compressed section whose
 * header claims 2 GiB, before anything is inflated.
 */
static int test_inspect__sources_limits(void)
{
	char path[] = "/tmp/ember-limits-XXXXXX", why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	struct inspect_sources_opts o = { .sz = sizeof(o), .max_names_bytes = 4096,
					  .diag = &d };
	static const uint8_t zeros[64];
	const struct craft_sect big = { .name = ".debug_str", .flags = SHF_COMPRESSED,
					.data = zeros, .size = sizeof(zeros),
					.claim = (uint64_t)2 << 30 };
	struct craft_buf ls = { 0 };
	size_t n = 0;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	listing_strings(&ls);
	CHECK_INT(write_listing_elf(path, 1, 1000, at_suffix, &ls, NULL), ==, 0);
	fd = open(path, O_RDONLY);
	CHECK_INT(inspect_list_sources_opts(fd, &o, count_paths, &n), ==, -E2BIG);
	CHECK(strstr(why, "more than 4096 bytes of distinct paths"));
	CHECK_INT(n, ==, 0);
	close(fd);
	CHECK_INT(write_listing_elf(path, 2000, 1000, at_suffix, &ls, NULL), ==, 0);
	fd = open(path, O_RDONLY);
	d = ember_diag_make(why, sizeof(why));
	o.max_names_bytes = 0;
	CHECK_INT(inspect_list_sources_opts(fd, &o, count_paths, &n), ==, -E2BIG);
	CHECK(strstr(why, "bytes of paths joined, more than the"));
	close(fd);
	CHECK_INT(write_listing_elf(path, 1, 10, at_short, &ls, &big), ==, 0);
	fd = open(path, O_RDONLY);
	d = ember_diag_make(why, sizeof(why));
	CHECK_INT(inspect_list_sources_opts(fd, &o, count_paths, &n), ==, -E2BIG);
	CHECK(strstr(why, "section '.debug_str' inflates to 2147483648 bytes"));
	close(fd);
	unlink(path);
	free(ls.v);
	return 0;
}

static int test_inspect__path_canonical(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "/a/b/c.c", "/a/b/c.c" },     { "/a//b/./c.c", "/a/b/c.c" },
		{ "/a/b/../c.c", "/a/c.c" },    { "/../../etc/passwd", "/etc/passwd" },
		{ "/a/b/../../..", "/" },       { "/", "/" },
		{ "//a///", "/a" },             { "/a/./../b", "/b" },
		{ "/a/..b/c", "/a/..b/c" },     { "/a/.b", "/a/.b" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		CHECK_INT(inspect_path_canonical(buf), ==, 0);
		CHECK_STR(buf, cases[i].out);
	}
	snprintf(buf, sizeof(buf), "relative/x.c");
	CHECK_INT(inspect_path_canonical(buf), ==, -EINVAL);
	return 0;
}

static int test_inspect__find_section(void)
{
	uint64_t off, size, flags;
	int fd = open(unit_fixture("c_gz"), O_RDONLY);

	CHECK(fd >= 0);
	CHECK_INT(inspect_find_section(fd, ".debug_info", &off, &size, &flags), ==, 0);
	CHECK(flags & (1u << 11)); /* SHF_COMPRESSED */
	CHECK_INT(inspect_find_section(fd, ".nope", &off, &size, &flags), ==, -ENOENT);
	CHECK_INT(inspect_find_section(fd, ".bss", &off, &size, &flags), ==, -ENODATA);
	close(fd);
	return 0;
}

/* Each code's kind: a file not ELF unsupported, the rest unusable; an
 * errno (reading the file) never a rejection, never "not found". */
static int test_inspect__error_kind(void)
{
	CHECK_INT(inspect_error_kind(-INSPECT_ERR_NOT_ELF), ==, EMBER_ERRK_UNSUPPORTED);
	CHECK_INT(inspect_error_kind(-INSPECT_ERR_TRUNCATED), ==, EMBER_ERRK_UNPROCESSABLE);
	CHECK_INT(inspect_error_kind(-INSPECT_ERR_BAD_ELF), ==, EMBER_ERRK_UNPROCESSABLE);
	CHECK_INT(inspect_error_kind(-INSPECT_ERR_NO_BUILD_ID), ==, EMBER_ERRK_UNPROCESSABLE);
	CHECK_INT(inspect_error_kind(-INSPECT_ERR_BAD_DWARF), ==, EMBER_ERRK_UNPROCESSABLE);
	CHECK_INT(inspect_error_kind(-EIO), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(inspect_error_kind(-ENOENT), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(inspect_error_kind(-E2BIG), ==, EMBER_ERRK_UNAVAILABLE);
	CHECK_INT(inspect_error_kind(-ENOSPC), ==, EMBER_ERRK_NO_SPACE);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_inspect__error_kind),
	UNIT_CASE(test_inspect__fixture_features),
	UNIT_CASE(test_inspect__not_elf_and_truncated),
	UNIT_CASE(test_inspect__rejections_explain_themselves),
	UNIT_CASE(test_inspect__no_build_id_explained),
	UNIT_CASE(test_inspect__long_build_id_explained),
	UNIT_CASE(test_inspect__compressed_dwarf_read_in_place),
	UNIT_CASE(test_inspect__compressed_sections_not_inflated),
	UNIT_CASE(test_inspect__build_id_matches_readelf),
	UNIT_CASE(test_inspect__sources_are_absolute_and_canonical),
	UNIT_CASE(test_inspect__sources_million_entries_bounded),
	UNIT_CASE(test_inspect__sources_limits),
	UNIT_CASE(test_inspect__path_canonical),
	UNIT_CASE(test_inspect__find_section),
};

UNIT_MAIN_QUIET(cases)
