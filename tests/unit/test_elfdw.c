/*
 * test_elfdw.c - unit tests of elf-dwarf/, the ELF/DWARF layer: the
 * cursors' one semantic (bounds, *pos > end, LEB128 range and padding,
 * nothing moved on failure), the GNU build ID and .gnu_debuglink against
 * readelf and the files themselves, PT_LOAD segments and executable
 * ranges, sections decompressed on request; unit headers, abbreviation
 * tables under a caller's schema, DIE steps (the sibling of issue 13)
 * and range lists over hand-made sections.  Linked with libelf only.
 */
#include "elfdw.h"
#include "unit.h"
#include "craft_elf.h"

#include <dwarf.h>
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

	CHECK(!ember_cur_has(p, end, 0));
	CHECK_INT(ember_cur_skip(&p, end, 0), ==, -ENODATA);
	CHECK_INT(ember_cur_skip(&p, end, 1), ==, -ENODATA);
	CHECK_INT(ember_cur_u8(&p, end, &b), ==, -ENODATA);
	for (unsigned n = 1; n <= 8; n++)
		CHECK_INT(ember_cur_uint(&p, end, n, &v), ==, -ENODATA);
	CHECK_INT(ember_cur_uleb(&p, end, &v), ==, -ENODATA);
	CHECK_INT(ember_cur_sleb(&p, end, &sv), ==, -ENODATA);
	CHECK_INT(ember_cur_leb(&p, end, false, &v), ==, -ENODATA);
	CHECK_INT(ember_cur_skip_leb(&p, end), ==, -ENODATA);
	CHECK_INT(ember_cur_cstr(&p, end, &s), ==, -ENODATA);
	CHECK_INT(ember_cur_bytes(&p, end, 0, &blk), ==, -ENODATA);
	CHECK(p == buf + 8);
	return 0;
}

static int test_elfdw__cursors_fixed_size(void)
{
	static const uint8_t buf[] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
	const uint8_t *p = buf, *end = buf + sizeof(buf);
	uint64_t v = 0;

	CHECK_INT(ember_cur_uint(&p, end, 3, &v), ==, 0);
	CHECK_INT(v, ==, 0x030201);
	CHECK(p == buf + 3);
	CHECK_INT(ember_cur_uint(&p, end, 8, &v), ==, -ENODATA);
	CHECK(p == buf + 3 && v == 0x030201);
	CHECK_INT(ember_cur_uint(&p, end, 0, &v), ==, -EINVAL);
	CHECK_INT(ember_cur_uint(&p, end, 9, &v), ==, -EINVAL);
	p = buf;
	CHECK_INT(ember_cur_uint(&p, end, 8, &v), ==, 0);
	CHECK_INT(v, ==, 0x0807060504030201ll);
	CHECK(p == end);
	CHECK_INT(ember_cur_skip(&p, end, 0), ==, 0);
	p = buf;
	CHECK_INT(ember_cur_skip(&p, end, UINT64_MAX), ==, -ENODATA);
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
	{ { 0xe5, 0x0e }, 2, 0, 1893, 0, 1893 },
	{ { 0xff, 0x7f }, 2, 0, 16383, 0, -1 },
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

		CHECK_INT(ember_cur_uleb(&p, end, &u), ==, c->err);
		CHECK(p == (c->err ? c->bytes : end));
		CHECK(c->err ? u == 42 : u == c->u);
		p = c->bytes;
		CHECK_INT(ember_cur_sleb(&p, end, &s), ==, c->serr);
		CHECK(p == (c->serr ? c->bytes : end));
		CHECK(c->serr ? s == 42 : s == c->s);
		p = c->bytes;
		CHECK_INT(ember_cur_skip_leb(&p, end), ==, 0); /* no value: no range */
		CHECK(p == end);
	}
	return 0;
}

/* common.h's cursors (ember_cur_*, which the profile store reads with)
 * answer exactly what the layer's do, on the cases above and on random
 * bytes: the layer can be pointed at them without a change of meaning. */
static int test_elfdw__common_cursors_agree(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t buf[16];

	for (int i = 0; i < 20000; i++) {
		const uint8_t *a = buf, *b = buf, *end;
		uint64_t ua = 1, ub = 1;
		int64_t sa = 1, sb = 1;
		unsigned len;

		if (i < (int)(sizeof(leb_cases) / sizeof(leb_cases[0]))) {
			memcpy(buf, leb_cases[i].bytes, sizeof(leb_cases[i].bytes));
			len = leb_cases[i].len;
		} else {
			for (size_t k = 0; k < sizeof(buf); k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				/* mostly continuation bytes, so long numbers are common */
				buf[k] = (uint8_t)(x % 5 ? (x >> 8) | 0x80 : x >> 8);
			}
			len = (unsigned)(x % (sizeof(buf) + 1));
		}
		end = buf + len;
		CHECK_INT(ember_cur_uleb(&a, end, &ua), ==, ember_cur_uleb(&b, end, &ub));
		CHECK(a == b && ua == ub);
		a = b = buf;
		CHECK_INT(ember_cur_sleb(&a, end, &sa), ==, ember_cur_sleb(&b, end, &sb));
		CHECK(a == b && sa == sb);
		a = b = buf;
		CHECK_INT(ember_cur_skip_leb(&a, end), ==, ember_cur_skip_leb(&b, end));
		CHECK(a == b);
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

		CHECK_INT(ember_cur_uleb(&p, num + cut, &u), ==, -ENODATA);
		CHECK_INT(ember_cur_sleb(&p, num + cut, &s), ==, -ENODATA);
		CHECK_INT(ember_cur_skip_leb(&p, num + cut), ==, -ENODATA);
		CHECK(p == num);
	}
	return 0;
}

static int test_elfdw__cursors_strings_and_blocks(void)
{
	static const uint8_t buf[] = { 'a', 'b', 0, 'c', 'd' };
	const uint8_t *p = buf, *end = buf + sizeof(buf), *blk;
	const char *s;

	CHECK_INT(ember_cur_cstr(&p, end, &s), ==, 0);
	CHECK_STR(s, "ab");
	CHECK(p == buf + 3);
	CHECK_INT(ember_cur_cstr(&p, end, &s), ==, -ENODATA); /* no NUL left */
	CHECK(p == buf + 3);
	CHECK_INT(ember_cur_bytes(&p, end, 3, &blk), ==, -ENODATA);
	CHECK_INT(ember_cur_bytes(&p, end, 2, &blk), ==, 0);
	CHECK(blk == buf + 3 && p == end);
	CHECK_INT(ember_cur_cstr(&p, end, &s), ==, -ENODATA); /* at the end */
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

/* A note of 68 bytes: longer than EMBER_BUILD_ID_MAX, an error (not "no
 * build ID"). */
static int test_elfdw__build_id_too_long(void)
{
	uint8_t id[EMBER_BUILD_ID_MAX];
	char path[4096];
	struct elf_file f;
	int rc = unit_long_build_id_elf(path, sizeof(path));

	if (rc)
		return rc;
	CHECK_INT(elf_file_open(path, ELF_C_READ_MMAP, &f), ==, 0);
	CHECK_INT(elfdw_build_id(f.elf, id, sizeof(id)), ==, -E2BIG);
	elf_file_close(&f);
	unlink(path);
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

/* Without section headers (as sstrip leaves a file) the note is found in
 * the PT_NOTE segments, as dwelf finds it. */
static int test_elfdw__build_id_from_segments(void)
{
	uint8_t id[EMBER_BUILD_ID_MAX];
	char hex[2 * EMBER_BUILD_ID_MAX + 1], want[2 * EMBER_BUILD_ID_MAX + 1];
	size_t len;
	char *img = unit_slurp(unit_fixture("c_O2_pie"), &len);
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
	char *dbg = unit_slurp(unit_fixture("c_stripped.debug"), &len);

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
	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' | awk '/^  LOAD/ { n++ } END { print n + 0 }'",
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
	CHECK_INT(elfdw_section_read(f.elf, info, 16, &s, NULL), ==, -E2BIG);
	CHECK_INT(elfdw_section_read(f.elf, info, UINT64_MAX, &s, NULL), ==, 0);
	p = s.data;
	CHECK(ember_cur_uint(&p, s.data + s.size, 4, &len) == 0 && len + 4 <= s.size);
	CHECK(ember_cur_uint(&p, s.data + s.size, 2, &version) == 0 && version == 5);
	s = elfdw_section_loaded(f.elf, info);
	CHECK(s.data != NULL); /* inflated now */
	CHECK_INT(elfdw_section_read(f.elf, (const char *const[]){ ".nope", NULL },
				     UINT64_MAX, &s, NULL), ==, -ENOENT);
	elf_file_close(&f);
	return 0;
}

/* ---- DWARF ---------------------------------------------------------------- */

#define U32LE(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), \
	(uint8_t)((v) >> 24)
#define U64LE(v) U32LE(v), U32LE((uint64_t)(v) >> 32)

/* Copies of test bytes exactly sized, so that ASan sees any read past. */
static const uint8_t *exact(const uint8_t *src, size_t len, uint8_t **own)
{
	*own = malloc(len ? len : 1);
	if (*own && len)
		memcpy(*own, src, len);
	return *own;
}

static int test_elfdw__unit_header(void)
{
	static const uint8_t v5[] = { U32LE(9), 5, 0, DW_UT_compile, 8, U32LE(0x40), 1 };
	static const uint8_t v4[] = { U32LE(8), 4, 0, U32LE(0x10), 4, 1 };
	static const uint8_t v5_64[] = { U32LE(0xffffffff), U64LE(13), 5, 0,
					 DW_UT_compile, 8, U64LE(0x20), 1 };
	static const uint8_t reserved[] = { U32LE(0xfffffff0), 5, 0 };
	static const uint8_t type_unit[] = { U32LE(21), 5, 0, DW_UT_type, 8, U32LE(0),
					     U64LE(0x1122334455667788ull), U32LE(0x17), 1 };
	static const uint8_t vendor[] = { U32LE(8), 5, 0, 0x80, 8, U32LE(0), 1 };
	struct elfdw_sect sect = { v5, sizeof(v5) };
	struct elfdw_unit u;
	char why[160];
	struct ember_diag d = ember_diag_make(why, sizeof(why));

	CHECK_INT(elfdw_unit_header(&sect, 0, &u, &d), ==, 0);
	CHECK(u.version == 5 && u.unit_type == DW_UT_compile && u.addr_size == 8 &&
	      u.offset_size == 4 && u.abbrev_off == 0x40 && u.die_off == 12 &&
	      u.end == sizeof(v5) && u.base == UINT64_MAX);
	sect = (struct elfdw_sect){ v4, sizeof(v4) };
	CHECK_INT(elfdw_unit_header(&sect, 0, &u, NULL), ==, 0);
	CHECK(u.version == 4 && u.unit_type == DW_UT_compile && u.addr_size == 4 &&
	      u.abbrev_off == 0x10 && u.die_off == 11);
	sect = (struct elfdw_sect){ v5_64, sizeof(v5_64) };
	CHECK_INT(elfdw_unit_header(&sect, 0, &u, NULL), ==, 0);
	CHECK(u.offset_size == 8 && u.abbrev_off == 0x20 && u.die_off == 24 &&
	      u.end == sizeof(v5_64));
	sect = (struct elfdw_sect){ type_unit, sizeof(type_unit) };
	CHECK_INT(elfdw_unit_header(&sect, 0, &u, NULL), ==, 0);
	CHECK(u.unit_type == DW_UT_type && u.unit_id == 0x1122334455667788ull &&
	      u.type_off == 0x17 && u.die_off == 24);
	sect = (struct elfdw_sect){ reserved, sizeof(reserved) };
	CHECK_INT(elfdw_unit_header(&sect, 0, &u, &d), ==, -EINVAL);
	CHECK(strstr(why, "reserved unit length"));
	sect = (struct elfdw_sect){ vendor, sizeof(vendor) };
	CHECK_INT(elfdw_unit_header(&sect, 0, &u, NULL), ==, -EOPNOTSUPP);
	/* every truncation: the unit runs past the section, or has no DIE */
	for (size_t cut = 0; cut < sizeof(v5); cut++) {
		uint8_t *own;

		sect = (struct elfdw_sect){ exact(v5, cut, &own), cut };
		CHECK_INT(elfdw_unit_header(&sect, 0, &u, NULL), ==, -ENODATA);
		free(own);
	}
	return 0;
}

/* A schema of a caller that wants subprograms (read whole) and blocks,
 * names and declaration lines. */
enum { T_NAME = ELFDW_SLOT_USER, T_DECL_LINE, T_ORIGIN, T_SPEC };
enum { T_OTHER = ELFDW_KIND_OTHER, T_FUNC, T_BLOCK, T_UNIT };

static uint8_t t_slot(uint64_t name)
{
	switch (name) {
	case DW_AT_name: return T_NAME;
	case DW_AT_decl_line: return T_DECL_LINE;
	case DW_AT_abstract_origin: return T_ORIGIN;
	case DW_AT_specification: return T_SPEC;
	default: return 0;
	}
}

static uint8_t t_kind(uint64_t tag)
{
	return tag == DW_TAG_subprogram ? T_FUNC : tag == DW_TAG_lexical_block ? T_BLOCK
	       : tag == DW_TAG_compile_unit ? T_UNIT : T_OTHER;
}

static const struct elfdw_schema t_schema = {
	.attr_slot = t_slot, .tag_kind = t_kind,
	.capture_kinds = 1u << T_FUNC,
	.first_mask = (1u << T_ORIGIN) | (1u << T_SPEC),
};

/* An abbreviation table: codes, kinds, slots and skip programs. */
static const uint8_t abbrev_tab[] = {
	1, DW_TAG_subprogram, DW_CHILDREN_yes,
	DW_AT_sibling, DW_FORM_ref4,
	DW_AT_name, DW_FORM_strp,
	DW_AT_low_pc, DW_FORM_addr,
	DW_AT_high_pc, DW_FORM_data4,
	DW_AT_frame_base, DW_FORM_exprloc,
	DW_AT_decl_line, DW_FORM_implicit_const, 0x7f, /* -1 */
	0, 0,
	2, DW_TAG_variable, DW_CHILDREN_no,
	DW_AT_name, DW_FORM_string,
	DW_AT_type, DW_FORM_ref4,
	0, 0,
	3, DW_TAG_lexical_block, DW_CHILDREN_yes,
	DW_AT_low_pc, DW_FORM_addr,
	DW_AT_high_pc, DW_FORM_data8,
	0, 0,
	4, DW_TAG_variable, DW_CHILDREN_no,
	DW_AT_location, 0x7f, /* no such form */
	0, 0,
	5, DW_TAG_subprogram, DW_CHILDREN_no,
	DW_AT_specification, DW_FORM_ref4,
	DW_AT_abstract_origin, DW_FORM_ref4,
	0, 0,
	0,
};

static int test_elfdw__abbrev_table(void)
{
	struct elfdw_abbrevs t = { 0 };
	struct elfdw_sect sect = { abbrev_tab, sizeof(abbrev_tab) };
	const struct elfdw_abbrev *a;
	const struct elfdw_skip_op *op;

	CHECK_INT(elfdw_abbrevs_read(&t, &t_schema, &sect, 0, 8, 5, NULL), ==, 0);
	CHECK_INT(t.n, ==, 5);
	CHECK(t.dense);
	CHECK(!elfdw_abbrev_find(&t, 0) && !elfdw_abbrev_find(&t, 6));
	a = elfdw_abbrev_find(&t, 1);
	CHECK(a && a->kind == T_FUNC && a->children && !a->bad);
	CHECK_INT(a->sibling_at, ==, 0);
	CHECK_INT(a->sibling_form, ==, DW_FORM_ref4);
	CHECK_INT(t.specs[a->first].slot, ==, ELFDW_SLOT_SIBLING);
	CHECK_INT(t.specs[a->first + 1].slot, ==, T_NAME);
	CHECK_INT(t.specs[a->first + 2].slot, ==, ELFDW_SLOT_LOW_PC);
	CHECK_INT(t.specs[a->first + 4].slot, ==, ELFDW_NOSLOT); /* frame_base */
	CHECK_INT(t.specs[a->first + 5].slot, ==, T_DECL_LINE);
	CHECK_INT(t.implicits[t.specs[a->first + 5].implicit], ==, -1);
	/* no capture list: decl_line follows the exprloc's variable size */
	CHECK(!a->caps_fixed);
	CHECK_INT(a->cap_mask, ==, (1u << ELFDW_SLOT_SIBLING) | (1u << T_NAME) |
		  (1u << ELFDW_SLOT_LOW_PC) | (1u << ELFDW_SLOT_HIGH_PC) |
		  (1u << T_DECL_LINE));
	/* ref4 + strp + addr + data4 in one step, then the exprloc */
	CHECK_INT(a->nops, ==, 1);
	op = &t.ops[a->op_first];
	CHECK(op->fixed == 20 && op->var == ELFDW_SKIP_BLOCK);
	a = elfdw_abbrev_find(&t, 2);
	CHECK(a && a->kind == T_OTHER && !a->children && a->sibling_at < 0);
	CHECK_INT(a->nops, ==, 2);
	op = &t.ops[a->op_first];
	CHECK(op[0].fixed == 0 && op[0].var == ELFDW_SKIP_STRING);
	CHECK(op[1].fixed == 4 && op[1].var == ELFDW_SKIP_NONE);
	a = elfdw_abbrev_find(&t, 3);
	CHECK(a && a->kind == T_BLOCK && a->nops == 1 &&
	      t.ops[a->op_first].fixed == 16 && a->ncaps == 0);
	a = elfdw_abbrev_find(&t, 4);
	CHECK(a && a->bad);
	a = elfdw_abbrev_find(&t, 5); /* the first origin in attribute order */
	CHECK(a && a->first_slot == T_SPEC);
	CHECK(a->caps_fixed && a->ncaps == 2);
	CHECK(t.caps[a->cap_first].slot == T_SPEC && t.caps[a->cap_first].at == 0);
	CHECK(t.caps[a->cap_first + 1].slot == T_ORIGIN && t.caps[a->cap_first + 1].at == 4);
	elfdw_abbrevs_release(&t);
	return 0;
}

/* Every truncation of a table fails cleanly (ASan watches the exactly
 * sized copy) and explains itself; a code defined twice is malformed. */
static int test_elfdw__abbrev_table_malformed(void)
{
	static const uint8_t twice[] = { 2, DW_TAG_variable, 0, 0, 0,
					 2, DW_TAG_member, 0, 0, 0, 0 };
	struct elfdw_abbrevs t = { 0 };
	struct elfdw_sect sect = { twice, sizeof(twice) };
	char why[160];
	struct ember_diag d = ember_diag_make(why, sizeof(why));

	CHECK_INT(elfdw_abbrevs_read(&t, &t_schema, &sect, 0, 8, 5, &d), ==, -EINVAL);
	CHECK(strstr(why, "code 2 defined twice"));
	CHECK_INT(t.addr_size, ==, 0);
	for (size_t cut = 0; cut < sizeof(abbrev_tab); cut++) {
		uint8_t *own;
		int err;

		sect = (struct elfdw_sect){ exact(abbrev_tab, cut, &own), cut };
		d = ember_diag_make(why, sizeof(why));
		err = elfdw_abbrevs_read(&t, &t_schema, &sect, 0, 8, 5, &d);
		CHECK_INT(err, ==, cut ? -ENODATA : -EINVAL);
		CHECK(why[0]);
		free(own);
	}
	elfdw_abbrevs_release(&t);
	return 0;
}

/* A unit (DWARF 5, 8-byte addresses) whose DIEs are the bytes given:
 * header, then dies[]. */
static size_t make_unit(uint8_t *buf, const uint8_t *dies, size_t n)
{
	static const uint8_t head[] = { 0, 0, 0, 0, 5, 0, DW_UT_compile, 8, U32LE(0) };
	uint32_t len = (uint32_t)(sizeof(head) - 4 + n);

	memcpy(buf, head, sizeof(head));
	memcpy(buf, &len, 4);
	memcpy(buf + sizeof(head), dies, n);
	return sizeof(head) + n;
}

/*
 * The walk steps over DIEs it does not want: by DW_AT_sibling at a fixed
 * place, by the skip program, or past the children; it reads whole the
 * DIEs of the kinds it asks for.
 */
static int test_elfdw__die_steps(void)
{
	static const uint8_t abbrev[] = {
		1, DW_TAG_compile_unit, DW_CHILDREN_yes, DW_AT_name, DW_FORM_string, 0, 0,
		2, DW_TAG_structure_type, DW_CHILDREN_yes, DW_AT_sibling, DW_FORM_ref4, 0, 0,
		3, DW_TAG_member, DW_CHILDREN_no, DW_AT_name, DW_FORM_string, 0, 0,
		4, DW_TAG_subprogram, DW_CHILDREN_yes, DW_AT_name, DW_FORM_string,
		   DW_AT_decl_line, DW_FORM_data1, 0, 0,
		5, DW_TAG_lexical_block, DW_CHILDREN_no, 0, 0,
		0,
	};
	static const uint8_t dies[] = {
		1, 'c', 'u', 0,				/* 12: the unit DIE */
		2, U32LE(28),				/* 16: struct, sibling at 28 */
		3, 'm', 0,				/* 21 */
		3, 'n', 0,				/* 24 */
		0,					/* 27 */
		4, 'f', 0, 42,				/* 28: subprogram */
		5,					/* 32: its block */
		0,					/* 33 */
		0,					/* 34: the unit's end */
	};
	uint8_t buf[64], *own;
	struct elfdw_sections s = { 0 };
	struct elfdw_abbrevs t = { 0 };
	struct elfdw_unit u;
	struct elfdw_die cu, d;
	const uint8_t *p, *next;
	const char *name;
	uint64_t line;
	size_t len = make_unit(buf, dies, sizeof(dies));

	s.info = (struct elfdw_sect){ exact(buf, len, &own), len };
	s.abbrev = (struct elfdw_sect){ abbrev, sizeof(abbrev) };
	CHECK_INT(elfdw_unit_header(&s.info, 0, &u, NULL), ==, 0);
	CHECK_INT(elfdw_abbrevs_read(&t, &t_schema, &s.abbrev, 0, 8, 5, NULL), ==, 0);
	CHECK_INT(elfdw_unit_open(&s, &u, &t, &cu), ==, 0);
	CHECK(u.die_tag == DW_TAG_compile_unit && u.base == 0 && !u.split);
	CHECK_INT(elfdw_val_str(&s, &cu, T_NAME, &name), ==, 0);
	CHECK_STR(name, "cu");
	p = cu.end;
	CHECK_INT(elfdw_next_child(&s, &u, &t, &p, 1u << T_FUNC, 1u << T_FUNC, &d), ==, 0);
	CHECK_INT(d.off, ==, 28); /* the struct stepped over by its sibling */
	CHECK_INT(elfdw_val_str(&s, &d, T_NAME, &name), ==, 0);
	CHECK_STR(name, "f");
	CHECK_INT(elfdw_val_const(&s, &d, T_DECL_LINE, &line), ==, 0);
	CHECK_INT(line, ==, 42);
	CHECK_INT(elfdw_val_const(&s, &d, ELFDW_SLOT_LOW_PC, &line), ==, -ENOENT);
	CHECK_INT(elfdw_die_after(&s, &t, &d, &next), ==, 0);
	CHECK_INT(next - s.info.data, ==, 34); /* past its block */
	p = next;
	CHECK_INT(elfdw_next_child(&s, &u, &t, &p, ELFDW_ALL_KINDS, 0, &d), ==, 1);
	CHECK(p == s.info.data + len);
	/* every truncation of the unit: an error, never a read past it */
	for (size_t cut = u.die_off + 1; cut < len; cut++) {
		uint8_t *short_own;
		const uint8_t *q;
		int rc;

		s.info = (struct elfdw_sect){ exact(buf, cut, &short_own), cut };
		u.end = cut;
		q = s.info.data + (cu.end - own);
		while ((rc = elfdw_next_child(&s, &u, &t, &q, 1u << T_FUNC, 1u << T_FUNC,
					      &d)) == 0)
			if ((rc = elfdw_die_after(&s, &t, &d, &q)))
				break;
		CHECK(rc == 1 || elfdw_err_input(rc));
		free(short_own);
	}
	elfdw_abbrevs_release(&t);
	free(own);
	return 0;
}

/*
 * Issue 13's out-of-bounds read: an abbreviation whose DW_AT_sibling is
 * at a fixed offset far past the DIE (after a hundred data16 values) in
 * a unit of a few bytes.  The step checks the bounds before it reads the
 * sibling: -ENODATA, and ASan sees no read past the exactly sized unit.
 */
static int test_elfdw__die_sibling_past_unit(void)
{
	uint8_t abbrev[512], buf[64], *own;
	static const uint8_t dies[] = { 1, 2, 0xaa, 0xbb, 0, 0 };
	struct elfdw_sections s = { 0 };
	struct elfdw_abbrevs t = { 0 };
	const struct elfdw_abbrev *a;
	struct elfdw_unit u;
	struct elfdw_die cu, d;
	const uint8_t *p;
	size_t n = 0, len;

	abbrev[n++] = 1, abbrev[n++] = DW_TAG_compile_unit, abbrev[n++] = DW_CHILDREN_yes;
	abbrev[n++] = 0, abbrev[n++] = 0;
	abbrev[n++] = 2, abbrev[n++] = DW_TAG_structure_type, abbrev[n++] = DW_CHILDREN_no;
	for (int i = 0; i < 100; i++)
		abbrev[n++] = DW_AT_const_value, abbrev[n++] = DW_FORM_data16;
	abbrev[n++] = DW_AT_sibling, abbrev[n++] = DW_FORM_ref4;
	abbrev[n++] = 0, abbrev[n++] = 0, abbrev[n++] = 0;
	len = make_unit(buf, dies, sizeof(dies));
	s.info = (struct elfdw_sect){ exact(buf, len, &own), len };
	s.abbrev = (struct elfdw_sect){ abbrev, n };
	CHECK_INT(elfdw_unit_header(&s.info, 0, &u, NULL), ==, 0);
	CHECK_INT(elfdw_abbrevs_read(&t, &t_schema, &s.abbrev, 0, 8, 5, NULL), ==, 0);
	a = elfdw_abbrev_find(&t, 2);
	CHECK(a && a->sibling_at == 1600);
	CHECK_INT(elfdw_unit_open(&s, &u, &t, &cu), ==, 0);
	p = cu.end;
	CHECK_INT(elfdw_next_child(&s, &u, &t, &p, 1u << T_FUNC, 0, &d), ==, -ENODATA);
	p = cu.end;
	CHECK_INT(elfdw_next_child(&s, &u, &t, &p, ELFDW_ALL_KINDS, 0, &d), ==, -ENODATA);
	elfdw_abbrevs_release(&t);
	free(own);
	return 0;
}

/*
 * The case issue 13 describes, at its size: an abbreviation whose
 * fixed-position DW_AT_sibling is 1 GiB past its DIE (what 67 million
 * data16 values before it would give; plan_sibling keeps offsets up to
 * that), its skip program as dwarf_abbrev.c plans one, in a unit of a
 * few bytes allocated exactly.  Every way to the sibling fails with
 * -ENODATA and ASan sees no read: the step over it (a walk that skips
 * the DIE, alone and inside a parent's children), reading it for its
 * sibling, and the sibling value itself when a DIE was read with it in
 * place (the cursor at unit start + 1 GiB, past the end: rejected, not
 * wrapped).  Reading it whole goes value by value through the cursors
 * (test_elfdw__die_sibling_past_unit, on a parsed table).
 */
static int test_elfdw__die_sibling_a_gib_out(void)
{
	enum { GIB = 1 << 30 };
	static const uint8_t dies[] = {
		1,			/* 12: the unit DIE */
		3,			/* 13: a parent, its child: */
		2, 0xaa, 0xbb,		/* 14: the struct of the far sibling */
		0,			/* 17: the parent's end */
		2, 0xcc,		/* 18: the struct again */
		0,			/* 20: the unit's end */
	};
	size_t nops = GIB / 65519 + 1;
	struct elfdw_skip_op *ops = calloc(nops, sizeof(*ops));
	struct elfdw_abbrev ab[3] = {
		{ .code = 1, .tag = DW_TAG_compile_unit, .kind = T_UNIT,
		  .children = true, .sibling_at = -1 },
		{ .code = 2, .tag = DW_TAG_structure_type, .kind = T_OTHER,
		  .sibling_at = GIB, .sibling_form = DW_FORM_ref4,
		  .nops = (uint32_t)nops },
		{ .code = 3, .tag = DW_TAG_lexical_block, .kind = T_BLOCK,
		  .children = true, .sibling_at = -1 },
	};
	struct elfdw_abbrevs t = { .schema = &t_schema, .addr_size = 8, .version = 5,
				   .dense = true, .v = ab, .n = 3, .ops = ops,
				   .nops = nops };
	struct elfdw_sections s = { 0 };
	struct elfdw_unit u;
	struct elfdw_die cu, d;
	uint8_t buf[64], *own;
	const uint8_t *p, *next;
	size_t len = make_unit(buf, dies, sizeof(dies));

	CHECK(ops);
	for (size_t i = 0; i < nops; i++) /* runs of 65519 bytes, the sibling's 4 last */
		ops[i] = (struct elfdw_skip_op){ (uint16_t)(i + 1 < nops ? 65519
							    : GIB + 4 - 65519 * (nops - 1)),
						 ELFDW_SKIP_NONE };
	s.info = (struct elfdw_sect){ exact(buf, len, &own), len };
	CHECK_INT(elfdw_unit_header(&s.info, 0, &u, NULL), ==, 0);
	CHECK_INT(elfdw_unit_open(&s, &u, &t, &cu), ==, 0);
	p = cu.end; /* the parent, stepped over: the struct inside it */
	CHECK_INT(elfdw_next_child(&s, &u, &t, &p, 1u << T_FUNC, 0, &d), ==, -ENODATA);
	p = cu.end + 1; /* the struct, stepped over on its own */
	CHECK_INT(elfdw_next_child(&s, &u, &t, &p, 1u << T_FUNC, 0, &d), ==, -ENODATA);
	p = cu.end + 1; /* read for its sibling only: the skip program fails */
	CHECK_INT(elfdw_die_read(&s, &u, &t, &p, 0, &d), ==, -ENODATA);
	/* a skip program that does not reach the sibling (a table made
	 * wrong): the DIE reads, its sibling value does not */
	ab[1].nops = 0;
	p = cu.end + 1;
	CHECK_INT(elfdw_die_read(&s, &u, &t, &p, 0, &d), ==, 0);
	CHECK(elfdw_die_has(&d, ELFDW_SLOT_SIBLING));
	CHECK_INT(d.v[ELFDW_SLOT_SIBLING].at, ==, 14 + 1 + GIB);
	CHECK_INT(elfdw_die_after(&s, &t, &d, &next), ==, -ENODATA);
	free(own);
	free(ops);
	return 0;
}

/*
 * fuzz_elfdw's finding: a DW_AT_sibling of DW_FORM_implicit_const (its
 * value in the table, no bytes in the DIE) was taken for one at a fixed
 * place in the DIE, and reading it indexed the table's constants with a
 * unit offset.  Its value reads as the table's, and the step by it is
 * left to libdw (not a reference).
 */
static int test_elfdw__die_sibling_implicit_const(void)
{
	static const uint8_t abbrev[] = {
		1, DW_TAG_compile_unit, DW_CHILDREN_yes, 0, 0,
		2, DW_TAG_structure_type, DW_CHILDREN_no,
		   DW_AT_byte_size, DW_FORM_data1,
		   DW_AT_sibling, DW_FORM_implicit_const, 5, 0, 0,
		0,
	};
	static const uint8_t dies[] = { 1, 2, 8, 0, 0 };
	struct elfdw_sections s = { 0 };
	struct elfdw_abbrevs t = { 0 };
	const struct elfdw_abbrev *a;
	struct elfdw_unit u;
	struct elfdw_die cu, d;
	const uint8_t *p, *next;
	uint8_t buf[64], *own;
	uint64_t v;
	size_t len = make_unit(buf, dies, sizeof(dies));

	s.info = (struct elfdw_sect){ exact(buf, len, &own), len };
	s.abbrev = (struct elfdw_sect){ abbrev, sizeof(abbrev) };
	CHECK_INT(elfdw_unit_header(&s.info, 0, &u, NULL), ==, 0);
	CHECK_INT(elfdw_abbrevs_read(&t, &t_schema, &s.abbrev, 0, 8, 5, NULL), ==, 0);
	a = elfdw_abbrev_find(&t, 2);
	CHECK(a && a->sibling_form == DW_FORM_implicit_const && a->sibling_at == -1);
	CHECK_INT(elfdw_unit_open(&s, &u, &t, &cu), ==, 0);
	p = cu.end;
	CHECK_INT(elfdw_die_read(&s, &u, &t, &p, 0, &d), ==, 0);
	CHECK_INT(elfdw_val_const(&s, &d, ELFDW_SLOT_SIBLING, &v), ==, 0);
	CHECK_INT(v, ==, 5);
	CHECK_INT(elfdw_die_after(&s, &t, &d, &next), ==, -EOPNOTSUPP);
	p = cu.end;
	CHECK_INT(elfdw_next_child(&s, &u, &t, &p, 1u << T_FUNC, 0, &d), ==, -EOPNOTSUPP);
	elfdw_abbrevs_release(&t);
	free(own);
	return 0;
}

struct got_ranges {
	uint64_t lo[16], hi[16];
	int n;
};

static int got_range(void *arg, uint64_t lo, uint64_t hi)
{
	struct got_ranges *g = arg;

	if (g->n < 16) {
		g->lo[g->n] = lo;
		g->hi[g->n++] = hi;
	}
	return 0;
}

/* Hand-made sections: one unit whose DIE has DW_AT_ranges (form, at the
 * start of info) and nothing else. */
struct fake_die {
	struct elfdw_sections s;
	struct elfdw_unit u;
	struct elfdw_die d;
};

static void fake_die_init(struct fake_die *f, const uint8_t *info, size_t size,
			  uint8_t version, unsigned form)
{
	memset(f, 0, sizeof(*f));
	f->s.info = (struct elfdw_sect){ info, size };
	f->u = (struct elfdw_unit){ .end = size, .version = version,
				    .addr_size = 8, .offset_size = 4, .base = 0x1000,
				    .addr_base = UINT64_MAX,
				    .str_off_base = UINT64_MAX,
				    .rnglists_base = UINT64_MAX };
	f->d.unit = &f->u;
	f->d.have = 1u << ELFDW_SLOT_RANGES;
	f->d.v[ELFDW_SLOT_RANGES] = (struct elfdw_val){ 0, (uint16_t)form };
}

/* DWARF 4 .debug_ranges: pairs after the unit's base, a base selection,
 * the (0, 0) end. */
static int test_elfdw__range_list_dwarf4(void)
{
	static const uint8_t info[] = { 0, 0, 0, 0 }; /* sec_offset 0 */
	static const uint8_t ranges[] = {
		U64LE(0x10), U64LE(0x20),
		U64LE(UINT64_MAX), U64LE(0x5000),
		U64LE(0x1), U64LE(0x3),
		U64LE(0), U64LE(0),
	};
	struct got_ranges g = { .n = 0 };
	struct fake_die f;

	fake_die_init(&f, info, sizeof(info), 4, DW_FORM_sec_offset);
	f.s.ranges = (struct elfdw_sect){ ranges, sizeof(ranges) };
	CHECK_INT(elfdw_die_ranges(&f.s, &f.d, got_range, &g), ==, 0);
	CHECK_INT(g.n, ==, 2);
	CHECK(g.lo[0] == 0x1010 && g.hi[0] == 0x1020);
	CHECK(g.lo[1] == 0x5001 && g.hi[1] == 0x5003);
	for (size_t cut = 0; cut < sizeof(ranges); cut++) {
		uint8_t *own;

		f.s.ranges = (struct elfdw_sect){ exact(ranges, cut, &own), cut };
		g.n = 0;
		/* the list past the section, or its end missing */
		CHECK_INT(elfdw_die_ranges(&f.s, &f.d, got_range, &g), ==,
			  cut ? -ENODATA : -EINVAL);
		free(own);
	}
	return 0;
}

/* DWARF 5 .debug_rnglists: every DW_RLE_* kind, reached through
 * DW_FORM_rnglistx and the unit's offset table. */
static int test_elfdw__range_list_dwarf5(void)
{
	static const uint8_t info[] = { 1 }; /* rnglistx 1 */
	static const uint8_t addr[] = { U64LE(0), U64LE(0x3000), U64LE(0x7000) };
	static const uint8_t lists[] = {
		0, 0, 0, 0,		/* base - 4: (a header, unused) */
		0xff, 0xff, 0, 0,	/* offsets[0]: junk, unused */
		8, 0, 0, 0,		/* offsets[1]: list at base + 8 */
		DW_RLE_offset_pair, 0x10, 0x20,
		DW_RLE_base_addressx, 1,
		DW_RLE_offset_pair, 0, 4,
		DW_RLE_startx_length, 0, 8,
		DW_RLE_start_end, U64LE(0x100), U64LE(0x200),
		DW_RLE_base_address, U64LE(0x9000),
		DW_RLE_offset_pair, 1, 2,
		DW_RLE_start_length, U64LE(0x400), 0x10,
		DW_RLE_startx_endx, 0, 1,
		DW_RLE_end_of_list,
	};
	static const uint64_t want[][2] = {
		{ 0x1010, 0x1020 }, { 0x7000, 0x7004 }, { 0x3000, 0x3008 },
		{ 0x100, 0x200 }, { 0x9001, 0x9002 }, { 0x400, 0x410 },
		{ 0x3000, 0x7000 },
	};
	struct got_ranges g = { .n = 0 };
	struct fake_die f;

	fake_die_init(&f, info, sizeof(info), 5, DW_FORM_rnglistx);
	f.u.addr_base = 8;
	f.u.rnglists_base = 4;
	f.s.addr = (struct elfdw_sect){ addr, sizeof(addr) };
	f.s.rnglists = (struct elfdw_sect){ lists, sizeof(lists) };
	CHECK_INT(elfdw_die_ranges(&f.s, &f.d, got_range, &g), ==, 0);
	CHECK_INT(g.n, ==, 7);
	for (int i = 0; i < 7; i++)
		CHECK(g.lo[i] == want[i][0] && g.hi[i] == want[i][1]);
	/* no DW_AT_rnglists_base: libdw would guess one, the reader does not */
	f.u.rnglists_base = UINT64_MAX;
	CHECK_INT(elfdw_die_ranges(&f.s, &f.d, got_range, &g), ==, -EOPNOTSUPP);
	f.u.rnglists_base = 4;
	for (size_t cut = 0; cut < sizeof(lists); cut++) {
		uint8_t *own;
		int err;

		f.s.rnglists = (struct elfdw_sect){ exact(lists, cut, &own), cut };
		g.n = 0;
		err = elfdw_die_ranges(&f.s, &f.d, got_range, &g);
		/* the offset table cut (its index or list out of the section)
		 * or the list cut */
		CHECK(err == (cut <= 12 ? -EINVAL : -ENODATA));
		free(own);
	}
	return 0;
}

/* A DWARF 5 line-program header: directory and file tables with string,
 * line_strp and udata forms, an MD5 skipped. */
static const uint8_t line_v5[] = {
	0, 0, 0, 0,		/* unit_length, patched */
	5, 0, 8, 0,		/* version 5, address size 8, selector size 0 */
	0, 0, 0, 0,		/* header_length, patched */
	1, 1, 1, (uint8_t)-5, 14, 13, /* min_inst, max_ops, default_is_stmt, base, range, opcode_base */
	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1,
	1, DW_LNCT_path, DW_FORM_line_strp,	/* directories: path */
	2, U32LE(0), U32LE(4),			/* "/cd", "inc" */
	3, DW_LNCT_path, DW_FORM_string, DW_LNCT_directory_index, DW_FORM_udata,
	   DW_LNCT_MD5, DW_FORM_data16,
	2, 'a', '.', 'c', 0, 0, U64LE(1), U64LE(2),
	   'b', '.', 'h', 0, 1, U64LE(3), U64LE(4),
	1,			/* the program: DW_LNS_copy */
};

static size_t line_v5_bytes(uint8_t *buf)
{
	uint32_t len = sizeof(line_v5) - 4, hlen = sizeof(line_v5) - 12 - 1;

	memcpy(buf, line_v5, sizeof(line_v5));
	memcpy(buf, &len, 4);
	memcpy(buf + 8, &hlen, 4);
	return sizeof(line_v5);
}

static int test_elfdw__line_header_v5(void)
{
	static const uint8_t line_str[] = "/cd\0inc";
	uint8_t buf[sizeof(line_v5)], *own;
	struct elfdw_sections s = { .line_str = { line_str, sizeof(line_str) } };
	struct elfdw_line_header h;
	size_t len = line_v5_bytes(buf);

	s.line = (struct elfdw_sect){ buf, len };
	CHECK_INT(elfdw_line_header_read(&s, 0, ELFDW_LINE_TABLES, &h, NULL), ==, 0);
	CHECK(h.version == 5 && h.offset_size == 4 && h.addr_size == 8 &&
	      h.min_inst == 1 && h.line_base == -5 && h.line_range == 14 &&
	      h.opcode_base == 13 && h.default_stmt);
	CHECK_INT(h.ndirs, ==, 2);
	CHECK_STR(h.dirs[0], "/cd");
	CHECK_STR(h.dirs[1], "inc");
	CHECK_INT(h.nfiles, ==, 2);
	CHECK_STR(h.files[1].name, "b.h");
	CHECK_INT(h.files[1].dir, ==, 1);
	CHECK(h.program == buf + len - 1 && h.program_end == buf + len && h.end == len);
	elfdw_line_header_release(&h);
	CHECK_INT(elfdw_line_header_read(&s, 0, 0, &h, NULL), ==, 0);
	CHECK(h.dirs == NULL && h.files == NULL && h.program == buf + len - 1);
	/* every truncation of the unit: an input error, nothing to release */
	for (size_t cut = 0; cut < len - 1; cut++) {
		s.line = (struct elfdw_sect){ exact(buf, cut, &own), cut };
		CHECK(elfdw_err_input(elfdw_line_header_read(&s, 0, ELFDW_LINE_TABLES,
							     &h, NULL)));
		free(own);
	}
	return 0;
}

/*
 * A DWARF 5 table claiming a million entries in a few bytes fails before
 * it allocates (the count against the bytes left), and says why; a
 * format no entry uses may hold forms the tables cannot.
 */
static int test_elfdw__line_header_bounded(void)
{
	uint8_t buf[sizeof(line_v5)];
	struct elfdw_sections s = { 0 };
	struct elfdw_line_header h;
	char why[160];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	size_t len = line_v5_bytes(buf), count_at = 33;

	s.line = (struct elfdw_sect){ buf, len };
	CHECK_INT(buf[count_at], ==, 2); /* the directory count */
	buf[count_at] = 0x80 | (1000000 & 0x7f); /* ... made a million (3 bytes) */
	buf[count_at + 1] = 0x80 | ((1000000 >> 7) & 0x7f);
	buf[count_at + 2] = (1000000 >> 14) & 0x7f;
	CHECK_INT(elfdw_line_header_read(&s, 0, ELFDW_LINE_TABLES, &h, &d), ==, -EINVAL);
	CHECK(strstr(why, "1000000 entries cannot fit"));
	/* no directories, with a format of strx: fine, nothing uses it */
	len = line_v5_bytes(buf);
	buf[count_at - 1] = DW_FORM_strx;
	buf[count_at] = 0;
	memmove(buf + count_at + 1, buf + count_at + 9, len - count_at - 9);
	len -= 8;
	buf[0] = (uint8_t)(len - 4);
	buf[8] = (uint8_t)(len - 13);
	s.line = (struct elfdw_sect){ buf, len };
	CHECK_INT(elfdw_line_header_read(&s, 0, ELFDW_LINE_TABLES, &h, NULL), ==, 0);
	CHECK(h.ndirs == 0 && h.nfiles == 2);
	elfdw_line_header_release(&h);
	return 0;
}

/* A DWARF 5 line-program header of n file entries, each (path: a
 * line_strp of .debug_line_str offset at(i), directory 0), one
 * directory "/d"; its program empty. */
static void line_v5_files(struct craft_buf *b, size_t n, uint32_t (*at)(size_t))
{
	static const uint8_t params[] = { 1, 1, 1, (uint8_t)-5, 14, 13,
					  0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	uint32_t v;

	craft_put4(b, 0);
	craft_buf_put(b, (uint8_t[]){ 5, 0, 8, 0 }, 4);
	craft_put4(b, 0);
	craft_buf_put(b, params, sizeof(params));
	craft_buf_put(b, (uint8_t[]){ 1, DW_LNCT_path, DW_FORM_line_strp, 1 }, 4);
	craft_put4(b, 0); /* "/d" */
	craft_buf_put(b, (uint8_t[]){ 2, DW_LNCT_path, DW_FORM_line_strp,
				      DW_LNCT_directory_index, DW_FORM_udata }, 5);
	craft_uleb(b, n);
	for (size_t i = 0; i < n; i++) {
		craft_put4(b, at(i));
		craft_put1(b, 0);
	}
	v = (uint32_t)(b->n - 4);
	memcpy(b->v, &v, 4);
	v = (uint32_t)(b->n - 12);
	memcpy(b->v + 8, &v, 4);
}

static uint32_t at_short(size_t i)
{
	(void)i;
	return 3; /* "a.c" */
}

static uint32_t at_long(size_t i)
{
	(void)i;
	return 7; /* 60,000 a's */
}

static uint32_t at_suffix(size_t i)
{
	return (uint32_t)(7 + i % 60000); /* a suffix of them each */
}

/*
 * Issue 13's validation case: a DWARF 5 file table of a million entries.
 * Naming a short path they read (5 MB of table, 16 bytes allocated an
 * entry, 4 MB of strings); naming one 60 KB path, or a different suffix
 * of it each, they are refused once the strings reach 64 bytes per byte
 * of the table (-E2BIG, saying so) instead of reading 60 GB.
 */
static int test_elfdw__line_header_million_files(void)
{
	uint32_t (*const at[])(size_t) = { at_short, at_long, at_suffix };
	size_t n = 1000000, lslen = 7 + 60000 + 1;
	char *line_str = calloc(1, lslen), why[200];
	struct elfdw_line_header h;

	CHECK(line_str);
	memcpy(line_str, "/d\0a.c\0", 7);
	memset(line_str + 7, 'a', 60000);
	for (int k = 0; k < 3; k++) {
		struct craft_buf b = { 0 };
		struct ember_diag d = ember_diag_make(why, sizeof(why));
		struct elfdw_sections s = { .line_str = { (uint8_t *)line_str, lslen } };
		int err;

		line_v5_files(&b, n, at[k]);
		s.line = (struct elfdw_sect){ b.v, b.n };
		err = elfdw_line_header_read(&s, 0, ELFDW_LINE_TABLES, &h, &d);
		if (k == 0) {
			CHECK_INT(err, ==, 0);
			CHECK_INT(h.nfiles, ==, n);
			CHECK_STR(h.files[n - 1].name, "a.c");
			CHECK_INT(h.strings, ==, 3 + 4 * n);
			CHECK_INT(b.n, >=, 5 * n);
			elfdw_line_header_release(&h);
		} else {
			CHECK_INT(err, ==, -E2BIG);
			CHECK(strstr(why, "its tables name more than"));
		}
		free(b.v);
	}
	free(line_str);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_elfdw__cursors_reject_pos_past_end),
	UNIT_CASE(test_elfdw__cursors_fixed_size),
	UNIT_CASE(test_elfdw__cursors_leb128),
	UNIT_CASE(test_elfdw__common_cursors_agree),
	UNIT_CASE(test_elfdw__cursors_leb128_truncated),
	UNIT_CASE(test_elfdw__cursors_strings_and_blocks),
	UNIT_CASE(test_elfdw__build_id_matches_readelf),
	UNIT_CASE(test_elfdw__build_id_buffer_too_small),
	UNIT_CASE(test_elfdw__build_id_too_long),
	UNIT_CASE(test_elfdw__build_id_from_segments),
	UNIT_CASE(test_elfdw__build_id_absent),
	UNIT_CASE(test_elfdw__debuglink),
	UNIT_CASE(test_elfdw__loads_and_exec_ranges),
	UNIT_CASE(test_elfdw__section_read_decompresses),
	UNIT_CASE(test_elfdw__unit_header),
	UNIT_CASE(test_elfdw__abbrev_table),
	UNIT_CASE(test_elfdw__abbrev_table_malformed),
	UNIT_CASE(test_elfdw__die_steps),
	UNIT_CASE(test_elfdw__die_sibling_past_unit),
	UNIT_CASE(test_elfdw__die_sibling_a_gib_out),
	UNIT_CASE(test_elfdw__die_sibling_implicit_const),
	UNIT_CASE(test_elfdw__range_list_dwarf4),
	UNIT_CASE(test_elfdw__range_list_dwarf5),
	UNIT_CASE(test_elfdw__line_header_v5),
	UNIT_CASE(test_elfdw__line_header_bounded),
	UNIT_CASE(test_elfdw__line_header_million_files),
};

UNIT_MAIN_QUIET(cases)
