/*
 * test_elfdw.c - unit tests of elf-dwarf/, the ELF/DWARF layer: the
 * cursors' one semantic (bounds, *pos > end, LEB128 range and padding,
 * nothing moved on failure), the GNU build ID and .gnu_debuglink against
 * readelf and the files themselves, PT_LOAD segments and executable
 * ranges, sections decompressed on request.  Linked with libelf only.
 */
#include "elfdw.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- cursors ------------------------------------------------------------ */

/* Each cursor at a position past end fails with -ENODATA and moves
 * nothing, whatever the size asked for (the unsigned difference wraps). */
static int test_elfdw__cursors_reject_pos_past_end(void)
{
	static const uint8_t buf[16] = { 1, 2, 3, 4 };
	const uint8_t *end = buf + 4, *p = buf + 8, *blk;
	const char *s;
	uint64_t v;
	int64_t sv;
	uint8_t b;

	CHECK(!elfdw_has(p, end, 0));
	CHECK_INT(elfdw_skip(&p, end, 0), ==, -ENODATA);
	CHECK_INT(elfdw_skip(&p, end, 1), ==, -ENODATA);
	CHECK_INT(elfdw_read_u8(&p, end, &b), ==, -ENODATA);
	for (unsigned n = 1; n <= 8; n++)
		CHECK_INT(elfdw_read_un(&p, end, n, &v), ==, -ENODATA);
	CHECK_INT(elfdw_read_uleb(&p, end, &v), ==, -ENODATA);
	CHECK_INT(elfdw_read_sleb(&p, end, &sv), ==, -ENODATA);
	CHECK_INT(elfdw_read_leb(&p, end, false, &v), ==, -ENODATA);
	CHECK_INT(elfdw_skip_leb(&p, end), ==, -ENODATA);
	CHECK_INT(elfdw_read_cstr(&p, end, &s), ==, -ENODATA);
	CHECK_INT(elfdw_read_block(&p, end, 0, &blk), ==, -ENODATA);
	CHECK(p == buf + 8);
	return 0;
}

static int test_elfdw__cursors_fixed_size(void)
{
	static const uint8_t buf[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
	const uint8_t *p = buf, *end = buf + sizeof(buf);
	uint64_t v = 0;

	CHECK_INT(elfdw_read_un(&p, end, 3, &v), ==, 0);
	CHECK_INT(v, ==, 0x030201);
	CHECK(p == buf + 3);
	CHECK_INT(elfdw_read_un(&p, end, 8, &v), ==, -ENODATA);
	CHECK(p == buf + 3 && v == 0x030201);
	CHECK_INT(elfdw_read_un(&p, end, 0, &v), ==, -EINVAL);
	CHECK_INT(elfdw_read_un(&p, end, 9, &v), ==, -EINVAL);
	p = buf;
	CHECK_INT(elfdw_read_un(&p, end, 8, &v), ==, 0);
	CHECK_INT(v, ==, 0x0807060504030201ll);
	CHECK(p == end);
	CHECK_INT(elfdw_skip(&p, end, 0), ==, 0);
	p = buf;
	CHECK_INT(elfdw_skip(&p, end, UINT64_MAX), ==, -ENODATA);
	CHECK(p == buf);
	return 0;
}

struct leb_case {
	uint8_t bytes[12];
	unsigned len;
	int err;		/* of the unsigned read */
	uint64_t u;
	int serr;		/* of the signed read */
	int64_t s;
};

static const struct leb_case leb_cases[] = {
	{ { 0x00 }, 1, 0, 0, 0, 0 },
	{ { 0x7f }, 1, 0, 0x7f, 0, -1 },
	{ { 0xe5, 0x8e, 0x26 }, 3, 0, 624485, 0, 624485 },
	{ { 0xc0, 0xbb, 0x78 }, 3, 0, 0x1e1dc0, 0, -123456 },
	/* zero padding: fine for both */
	{ { 0x80, 0x80, 0x80, 0x00 }, 4, 0, 0, 0, 0 },
	{ { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 },
	  12, 0, 1, 0, 1 },
	/* UINT64_MAX: ten bytes, the last carrying bit 63 only */
	{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 },
	  10, 0, UINT64_MAX, -ERANGE, 0 },
	/* -1 padded with the sign */
	{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f },
	  11, -ERANGE, 0, 0, -1 },
	/* INT64_MIN */
	{ { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f },
	  10, -ERANGE, 0, 0, INT64_MIN },
	/* bit 64 set: too big for both */
	{ { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02 },
	  10, -ERANGE, 0, -ERANGE, 0 },
	/* a non-zero byte after ten */
	{ { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 },
	  11, -ERANGE, 0, -ERANGE, 0 },
};

/* Values, padding and overflow: -ERANGE for what does not fit 64 bits,
 * and the cursor stays. */
static int test_elfdw__cursors_leb128(void)
{
	for (size_t i = 0; i < sizeof(leb_cases) / sizeof(leb_cases[0]); i++) {
		const struct leb_case *c = &leb_cases[i];
		const uint8_t *p = c->bytes, *end = c->bytes + c->len;
		uint64_t u = 42;
		int64_t s = 42;

		CHECK_INT(elfdw_read_uleb(&p, end, &u), ==, c->err);
		CHECK(p == (c->err ? c->bytes : end));
		CHECK(c->err ? u == 42 : u == c->u);
		p = c->bytes;
		CHECK_INT(elfdw_read_sleb(&p, end, &s), ==, c->serr);
		CHECK(p == (c->serr ? c->bytes : end));
		CHECK(c->serr ? s == 42 : s == c->s);
		p = c->bytes;
		CHECK_INT(elfdw_skip_leb(&p, end), ==, 0); /* no value: no range */
		CHECK(p == end);
	}
	return 0;
}

/* Every prefix of a multi-byte number is -ENODATA, cursor unmoved. */
static int test_elfdw__cursors_leb128_truncated(void)
{
	static const uint8_t num[] = { 0xe5, 0x8e, 0xa6, 0x80, 0x00 };
	uint64_t u;
	int64_t s;

	for (size_t cut = 0; cut < sizeof(num); cut++) {
		const uint8_t *p = num;

		CHECK_INT(elfdw_read_uleb(&p, num + cut, &u), ==, -ENODATA);
		CHECK_INT(elfdw_read_sleb(&p, num + cut, &s), ==, -ENODATA);
		CHECK_INT(elfdw_skip_leb(&p, num + cut), ==, -ENODATA);
		CHECK(p == num);
	}
	return 0;
}

static int test_elfdw__cursors_strings_and_blocks(void)
{
	static const uint8_t buf[] = { 'a', 'b', 0, 'c', 'd' };
	const uint8_t *p = buf, *end = buf + sizeof(buf), *blk;
	const char *s;

	CHECK_INT(elfdw_read_cstr(&p, end, &s), ==, 0);
	CHECK_STR(s, "ab");
	CHECK(p == buf + 3);
	CHECK_INT(elfdw_read_cstr(&p, end, &s), ==, -ENODATA); /* no NUL left */
	CHECK(p == buf + 3);
	CHECK_INT(elfdw_read_block(&p, end, 3, &blk), ==, -ENODATA);
	CHECK_INT(elfdw_read_block(&p, end, 2, &blk), ==, 0);
	CHECK(blk == buf + 3 && p == end);
	CHECK_INT(elfdw_read_cstr(&p, end, &s), ==, -ENODATA); /* at the end */
	return 0;
}

/* ---- ELF ------------------------------------------------------------------ */

struct elf_file {
	int fd;
	Elf *elf;
};

static int elf_file_open(const char *path, Elf_Cmd cmd, struct elf_file *f)
{
	elf_version(EV_CURRENT);
	f->fd = open(path, O_RDONLY);
	f->elf = f->fd >= 0 ? elf_begin(f->fd, cmd, NULL) : NULL;
	if (f->elf && elf_kind(f->elf) == ELF_K_ELF)
		return 0;
	elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	return -ENOENT;
}

static void elf_file_close(struct elf_file *f)
{
	elf_end(f->elf);
	close(f->fd);
}

/* The first line of a shell command's output, or "" when it has none. */
static int command_line(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");

	out[0] = '\0';
	if (!p)
		return -errno;
	if (!fgets(out, (int)size, p))
		out[0] = '\0';
	pclose(p);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* The build ID readelf -n prints for path ("" for none). */
static int readelf_build_id(const char *path, char *out, size_t size)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null | awk '/Build ID/{print $3}'",
		 path);
	return command_line(cmd, out, size);
}

static int build_id_hex(const char *path, char *hex)
{
	uint8_t id[EMBER_BUILD_ID_MAX];
	struct elf_file f;
	int n;

	if (elf_file_open(path, ELF_C_READ_MMAP, &f))
		return -ENOENT;
	n = elfdw_build_id(f.elf, id, sizeof(id));
	elf_file_close(&f);
	hex[0] = '\0';
	if (n > 0)
		ember_build_id_to_hex(id, (size_t)n, hex);
	return n < 0 ? n : 0;
}

/* The build ID of every kind of fixture is the one readelf finds. */
static int test_elfdw__build_id_matches_readelf(void)
{
	static const char *const names[] = {
		"c_O2_pie", "c_O2_nopie", "c_dwarf4", "c_gz", "c_stripped",
		"c_stripped.debug", "cxx_O2", "libfixture.so", "go_prog",
		"rust_O2",
	};
	char hex[2 * EMBER_BUILD_ID_MAX + 1], want[200];

	if (access("/usr/bin/readelf", X_OK) != 0)
		return UNIT_SKIP;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK_INT(build_id_hex(unit_fixture(names[i]), hex), ==, 0);
		CHECK_INT(readelf_build_id(unit_fixture(names[i]), want, sizeof(want)), ==, 0);
		CHECK(want[0]);
		CHECK_STR(hex, want);
	}
	return 0;
}

static int test_elfdw__build_id_buffer_too_small(void)
{
	uint8_t id[8];
	struct elf_file f;

	CHECK_INT(elf_file_open(unit_fixture("c_O2_pie"), ELF_C_READ_MMAP, &f), ==, 0);
	CHECK_INT(elfdw_build_id(f.elf, id, sizeof(id)), ==, -E2BIG);
	elf_file_close(&f);
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	char *buf = NULL;

	if (fd >= 0 && !fstat(fd, &st) && (buf = malloc((size_t)st.st_size + 1)) &&
	    read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	*len = buf ? (size_t)st.st_size : 0;
	return buf;
}

/* Without section headers (as sstrip leaves a file) the note is found in
 * the PT_NOTE segments, as dwelf finds it. */
static int test_elfdw__build_id_from_segments(void)
{
	uint8_t id[EMBER_BUILD_ID_MAX];
	char hex[2 * EMBER_BUILD_ID_MAX + 1], want[2 * EMBER_BUILD_ID_MAX + 1];
	size_t len;
	char *img = slurp(unit_fixture("c_O2_pie"), &len);
	GElf_Ehdr eh;
	Elf *elf;
	int n;

	CHECK(img);
	CHECK_INT(build_id_hex(unit_fixture("c_O2_pie"), want), ==, 0);
	elf_version(EV_CURRENT);
	elf = elf_memory(img, len);
	CHECK(elf && gelf_getehdr(elf, &eh));
	elf_end(elf);
	/* no section headers: e_shoff, e_shnum, e_shstrndx zero (ELF64) */
	CHECK(eh.e_ident[EI_CLASS] == ELFCLASS64);
	memset(img + offsetof(Elf64_Ehdr, e_shoff), 0, 8);
	memset(img + offsetof(Elf64_Ehdr, e_shnum), 0, 2);
	memset(img + offsetof(Elf64_Ehdr, e_shstrndx), 0, 2);
	elf = elf_memory(img, len);
	CHECK(elf && elf_nextscn(elf, NULL) == NULL);
	n = elfdw_build_id(elf, id, sizeof(id));
	CHECK_INT(n, ==, 20);
	ember_build_id_to_hex(id, (size_t)n, hex);
	CHECK_STR(hex, want);
	elf_end(elf);
	free(img);
	return 0;
}

/* A file without the note has none (0, not an error). */
static int test_elfdw__build_id_absent(void)
{
	static const char script[] =
		"objcopy --remove-section=.note.gnu.build-id '%s' '%s' 2>/dev/null";
	char tmp[] = "/tmp/ember-elfdw-XXXXXX", cmd[8400];
	uint8_t id[EMBER_BUILD_ID_MAX];
	struct elf_file f;
	int fd = mkstemp(tmp);

	CHECK(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), script, unit_fixture("c_O2_pie"), tmp);
	if (system(cmd) != 0) {
		unlink(tmp);
		return UNIT_SKIP; /* no objcopy */
	}
	CHECK_INT(elf_file_open(tmp, ELF_C_READ_MMAP, &f), ==, 0);
	CHECK_INT(elfdw_build_id(f.elf, id, sizeof(id)), ==, 0);
	elf_file_close(&f);
	unlink(tmp);
	return 0;
}

/* The debuglink names the debug file and carries its CRC-32. */
static int test_elfdw__debuglink(void)
{
	struct elf_file f;
	const char *name = NULL;
	uint32_t crc = 0;
	size_t len;
	char *dbg = slurp(unit_fixture("c_stripped.debug"), &len);

	CHECK(dbg);
	CHECK_INT(elf_file_open(unit_fixture("c_stripped"), ELF_C_READ_MMAP, &f), ==, 0);
	CHECK_INT(elfdw_debuglink(f.elf, &name, &crc), ==, 0);
	CHECK_STR(name, "c_stripped.debug");
	CHECK_INT(crc, ==, (uint32_t)crc32(0, (const Bytef *)dbg, (uInt)len));
	elf_file_close(&f);
	free(dbg);
	CHECK_INT(elf_file_open(unit_fixture("c_O2_pie"), ELF_C_READ_MMAP, &f), ==, 0);
	CHECK_INT(elfdw_debuglink(f.elf, &name, &crc), ==, -ENOENT);
	elf_file_close(&f);
	return 0;
}

static int count_load(void *arg, const struct elfdw_load *l)
{
	size_t *n = arg;

	n[0]++;
	n[1] += (l->flags & PF_X) != 0;
	return 0;
}

/* PT_LOAD segments and executable ranges of the C fixture: .text lies in
 * one executable section range and one executable segment. */
static int test_elfdw__loads_and_exec_ranges(void)
{
	struct elfdw_ranges secs = { 0 }, segs = { 0 };
	size_t n[2] = { 0, 0 };
	struct elf_file f;
	GElf_Shdr text;
	char cmd[4200], want[64];

	CHECK_INT(elf_file_open(unit_fixture("c_O2_pie"), ELF_C_READ_MMAP, &f), ==, 0);
	CHECK(elfdw_section_by_name(f.elf, ".text", &text));
	CHECK(!elfdw_section_by_name(f.elf, ".no-such", NULL));
	CHECK_INT(elfdw_each_load(f.elf, count_load, n), ==, 0);
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' | grep -c '^  LOAD'",
		 unit_fixture("c_O2_pie"));
	if (command_line(cmd, want, sizeof(want)) == 0 && want[0])
		CHECK_INT(n[0], ==, atoi(want));
	CHECK_INT(n[1], ==, 1);
	CHECK_INT(elfdw_exec_sections(f.elf, &secs), ==, 0);
	CHECK_INT(elfdw_exec_segments(f.elf, &segs), ==, 0);
	CHECK_INT(segs.n, ==, 1);
	CHECK(secs.n >= 3); /* .init, .plt, .text, .fini, ... */
	CHECK(elfdw_ranges_contain(&secs, text.sh_addr, text.sh_addr + text.sh_size));
	CHECK(elfdw_ranges_contain(&segs, text.sh_addr, text.sh_addr + text.sh_size));
	CHECK(!elfdw_ranges_contain(&secs, 0, 1));
	elfdw_ranges_sort(&secs);
	for (size_t i = 1; i < secs.n; i++)
		CHECK(secs.r[i - 1].lo <= secs.r[i].lo);
	elfdw_ranges_release(&secs);
	elfdw_ranges_release(&segs);
	CHECK(elfdw_ranges_contain(&secs, 0, 1)); /* empty: nothing to judge by */
	elf_file_close(&f);
	return 0;
}

/* A compressed section is not "loaded" until inflated on request; its
 * inflated size is checked against the caller's limit first. */
static int test_elfdw__section_read_decompresses(void)
{
	static const char *const info[] = { ".debug_info", NULL };
	struct elfdw_sect s = { NULL, 0 };
	const uint8_t *p;
	struct elf_file f;
	uint64_t len, version;

	CHECK_INT(elf_file_open(unit_fixture("c_gz"), ELF_C_READ_MMAP_PRIVATE, &f), ==, 0);
	s = elfdw_section_loaded(f.elf, info);
	CHECK(s.data == NULL); /* still compressed */
	CHECK_INT(elfdw_section_read(f.elf, info, 16, &s), ==, -E2BIG);
	CHECK_INT(elfdw_section_read(f.elf, info, UINT64_MAX, &s), ==, 0);
	p = s.data;
	CHECK(elfdw_read_un(&p, s.data + s.size, 4, &len) == 0 && len + 4 <= s.size);
	CHECK(elfdw_read_un(&p, s.data + s.size, 2, &version) == 0 && version == 5);
	s = elfdw_section_loaded(f.elf, info);
	CHECK(s.data != NULL); /* inflated now */
	CHECK_INT(elfdw_section_read(f.elf, (const char *const[]){ ".nope", NULL },
				     UINT64_MAX, &s), ==, -ENOENT);
	elf_file_close(&f);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_elfdw__cursors_reject_pos_past_end),
	UNIT_CASE(test_elfdw__cursors_fixed_size),
	UNIT_CASE(test_elfdw__cursors_leb128),
	UNIT_CASE(test_elfdw__cursors_leb128_truncated),
	UNIT_CASE(test_elfdw__cursors_strings_and_blocks),
	UNIT_CASE(test_elfdw__build_id_matches_readelf),
	UNIT_CASE(test_elfdw__build_id_buffer_too_small),
	UNIT_CASE(test_elfdw__build_id_from_segments),
	UNIT_CASE(test_elfdw__build_id_absent),
	UNIT_CASE(test_elfdw__debuglink),
	UNIT_CASE(test_elfdw__loads_and_exec_ranges),
	UNIT_CASE(test_elfdw__section_read_decompresses),
};

UNIT_MAIN_QUIET(cases)
