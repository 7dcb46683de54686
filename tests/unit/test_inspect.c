/*
 * test_inspect.c - unit tests of elf-inspect/: what each fixture carries,
 * truncated and foreign files, source names, path canonicalization.
 */
#include "inspect.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
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

static const struct unit_case cases[] = {
	UNIT_CASE(test_inspect__fixture_features),
	UNIT_CASE(test_inspect__not_elf_and_truncated),
	UNIT_CASE(test_inspect__rejections_explain_themselves),
	UNIT_CASE(test_inspect__no_build_id_explained),
	UNIT_CASE(test_inspect__long_build_id_explained),
	UNIT_CASE(test_inspect__compressed_dwarf_read_in_place),
	UNIT_CASE(test_inspect__build_id_matches_readelf),
	UNIT_CASE(test_inspect__sources_are_absolute_and_canonical),
	UNIT_CASE(test_inspect__path_canonical),
	UNIT_CASE(test_inspect__find_section),
};

UNIT_MAIN_QUIET(cases)
