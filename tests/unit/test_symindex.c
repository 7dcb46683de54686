/*
 * test_symindex.c - saved symbol indexes (symbolizer/index_save.c,
 * index_load.c): a loaded index answers every address exactly as the
 * index it was saved from, the bytes are deterministic, and damaged or
 * foreign files are refused or, when only the body is damaged and not
 * verified, answered without a read outside the file.
 */
#include "symbolizer.h"
#include "sym_internal.h"
#include "index_file.h"
#include "common.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAXF 64

/* ---- saving into memory ------------------------------------------------ */

struct membuf {
	uint8_t *data;
	size_t len, alloc;
};

static int mem_write(void *arg, const void *data, size_t len)
{
	struct membuf *m = arg;

	if (m->len + len > m->alloc) {
		size_t n = (m->len + len) * 2;
		uint8_t *p = realloc(m->data, n);

		if (!p)
			return -ENOMEM;
		m->data = p;
		m->alloc = n;
	}
	memcpy(m->data + m->len, data, len);
	m->len += len;
	return 0;
}

/* A file holding bytes, open for reading (unlinked already). */
static int file_of(const void *data, size_t len)
{
	char path[] = "/tmp/ember-symindex-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct sym_index *load_bytes(const void *data, size_t len, unsigned flags, int *err)
{
	int fd = file_of(data, len);
	struct sym_index *idx;

	if (fd < 0) {
		*err = -EIO;
		return NULL;
	}
	idx = sym_index_load(fd, flags, err);
	close(fd);
	return idx;
}

static int save(const struct sym_index *idx, struct membuf *m)
{
	memset(m, 0, sizeof(*m));
	return sym_index_save(idx, mem_write, m);
}

/* ---- comparing answers ------------------------------------------------- */

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_frame(const struct sym_index *ia, const struct sym_frame *a,
		       const struct sym_index *ib, const struct sym_frame *b)
{
	return same_str(a->name, b->name) && same_str(a->short_name, b->short_name) &&
	       same_str(a->file, b->file) && a->line == b->line && a->column == b->column &&
	       same_str(a->decl_file, b->decl_file) && a->decl_line == b->decl_line &&
	       a->func_start == b->func_start && a->discriminator == b->discriminator &&
	       a->source == b->source && a->inlined == b->inlined &&
	       same_str(sym_frame_demangled(ia, a, true), sym_frame_demangled(ib, b, true));
}

/* Both indexes answer addr (of kind) alike; returns frames seen or -1. */
static int same_answer(const struct sym_index *a, const struct sym_index *b, uint64_t addr,
		       enum sym_addr_kind kind, unsigned flags)
{
	struct sym_frame fa[MAXF], fb[MAXF];
	int na = sym_index_lookup(a, addr, kind, flags, fa, MAXF);
	int nb = sym_index_lookup(b, addr, kind, flags, fb, MAXF);

	if (na != nb) {
		fprintf(stderr, "0x%llx: %d vs %d frames\n", (unsigned long long)addr, na, nb);
		return -1;
	}
	for (int i = 0; i < na && i < MAXF; i++)
		if (!same_frame(a, &fa[i], b, &fb[i])) {
			fprintf(stderr, "0x%llx: frame %d differs (%s vs %s)\n",
				(unsigned long long)addr, i, fa[i].name ? fa[i].name : "-",
				fb[i].name ? fb[i].name : "-");
			return -1;
		}
	return na > 0 ? na : 0;
}

/* Every byte of every loadable segment, as an address and as an offset,
 * plus the bytes just outside them. */
static int compare_everywhere(const struct sym_index *a, const struct sym_index *b,
			      size_t *answered)
{
	*answered = 0;
	for (size_t i = 0; i < a->nloads; i++) {
		const struct sym_load *l = &a->loads[i];

		for (uint64_t at = l->vaddr ? l->vaddr - 1 : 0; at <= l->vaddr + l->memsz; at++) {
			int n = same_answer(a, b, at, SYM_ADDR_VADDR, 0);

			if (n < 0 || same_answer(a, b, at, SYM_ADDR_VADDR,
						 SYM_LOOKUP_SYMBOL_NAME) < 0)
				return -1;
			*answered += n > 0;
		}
		for (uint64_t off = l->offset; off < l->offset + l->filesz; off += 7)
			if (same_answer(a, b, off, SYM_ADDR_FILE_OFFSET, 0) < 0)
				return -1;
	}
	return 0;
}

/* ---- cases -------------------------------------------------------------- */

static const char *const round_trip_fixtures[] = {
	"c_O2_pie", "c_O2_nopie", "c_dwarf4", "c_gz", "c_nodwarf", "c_dynsym_only",
	"libfixture.so", "cxx_O2", "rust_O2", "rust_v0", "go_prog",
};

static int round_trip(const char *name)
{
	int err = 0;
	struct sym_index *built = sym_index_open(unit_fixture(name), NULL, &err), *loaded;
	struct sym_index_stats sa, sb;
	struct membuf m;
	size_t answered;

	CHECK(built);
	CHECK_INT(save(built, &m), ==, 0);
	loaded = load_bytes(m.data, m.len, SYM_LOAD_VERIFY, &err);
	if (!loaded)
		fprintf(stderr, "%s: %s\n", name, sym_strerror(err));
	CHECK(loaded);
	sym_index_get_stats(built, &sa);
	sym_index_get_stats(loaded, &sb);
	CHECK(memcmp(&sa, &sb, sizeof(sa)) == 0);
	CHECK(compare_everywhere(built, loaded, &answered) == 0);
	CHECK(answered > 100); /* the comparison saw real answers */
	{
		size_t la, lb;
		const uint8_t *ba = sym_index_build_id(built, &la), *bb = sym_index_build_id(loaded, &lb);

		CHECK(la == lb && (!la || memcmp(ba, bb, la) == 0));
		CHECK(same_str(sym_index_debug_path(built), sym_index_debug_path(loaded)));
	}
	sym_index_free(loaded);
	sym_index_free(built);
	free(m.data);
	return 0;
}

static int test_symindex__round_trip_answers_alike(void)
{
	for (size_t i = 0; i < sizeof(round_trip_fixtures) / sizeof(*round_trip_fixtures); i++) {
		fprintf(stderr, "%s\n", round_trip_fixtures[i]);
		if (round_trip(round_trip_fixtures[i]))
			return 1;
	}
	return 0;
}

static int test_symindex__deterministic_bytes(void)
{
	int err;
	struct sym_index *a = sym_index_open(unit_fixture("cxx_O2"), NULL, &err);
	struct sym_index *b = sym_index_open(unit_fixture("cxx_O2"), NULL, &err);
	struct membuf ma, mb, mc;
	struct sym_index *loaded;

	CHECK(a && b);
	CHECK_INT(save(a, &ma), ==, 0);
	CHECK_INT(save(b, &mb), ==, 0);
	CHECK(ma.len == mb.len && memcmp(ma.data, mb.data, ma.len) == 0);
	/* Saving a loaded index gives the file it came from. */
	loaded = load_bytes(ma.data, ma.len, 0, &err);
	CHECK(loaded);
	CHECK_INT(save(loaded, &mc), ==, 0);
	CHECK(mc.len == ma.len && memcmp(mc.data, ma.data, ma.len) == 0);
	CHECK_INT(ma.len % SYM_FILE_ALIGN, ==, 0);
	sym_index_free(loaded);
	sym_index_free(a);
	sym_index_free(b);
	free(ma.data);
	free(mb.data);
	free(mc.data);
	return 0;
}

/* Re-sum the header after an edit, so only the edit is wrong. */
static void reseal_header(uint8_t *file)
{
	struct sym_file_header h;

	memcpy(&h, file, sizeof(h));
	h.header_crc = 0;
	h.header_crc = (uint32_t)crc32(crc32(0, NULL, 0), (const Bytef *)&h, sizeof(h));
	memcpy(file, &h, sizeof(h));
}

static int test_symindex__refuses_foreign_and_damaged_files(void)
{
	int err = 0;
	struct sym_index *idx = sym_index_open(unit_fixture("c_O2_pie"), NULL, &err);
	struct sym_file_header *h;
	struct membuf m;
	uint8_t *copy;

	CHECK(idx);
	CHECK_INT(save(idx, &m), ==, 0);
	copy = malloc(m.len);
	CHECK(copy);
	h = (struct sym_file_header *)copy;

	/* Truncated anywhere, even by one byte. */
	for (size_t len = 0; len < m.len; len += len < 512 ? 1 : 997) {
		CHECK(!load_bytes(m.data, len, 0, &err));
		CHECK(err == -SYM_ERR_BAD_INDEX);
	}
	CHECK(!load_bytes(m.data, m.len - 1, 0, &err) && err == -SYM_ERR_BAD_INDEX);
	/* An ELF file is not an index. */
	{
		int fd = open(unit_fixture("c_O2_pie"), O_RDONLY);

		CHECK(fd >= 0);
		CHECK(!sym_index_load(fd, 0, &err) && err == -SYM_ERR_BAD_INDEX);
		close(fd);
	}
	/* Another format version: its own error, even with a good checksum. */
	memcpy(copy, m.data, m.len);
	h->version = SYM_FILE_VERSION + 1;
	reseal_header(copy);
	CHECK(!load_bytes(copy, m.len, 0, &err) && err == -SYM_ERR_INDEX_VERSION);
	/* Any header byte flipped: refused by the header CRC. */
	for (size_t i = 0; i < sizeof(*h); i++) {
		memcpy(copy, m.data, m.len);
		copy[i] ^= 0x10;
		CHECK(!load_bytes(copy, m.len, 0, &err));
		CHECK(err == -SYM_ERR_BAD_INDEX || (i >= 8 && i < 12 && err == -SYM_ERR_INDEX_VERSION));
	}
	/* A section past the end, re-sealed: refused by the directory checks. */
	memcpy(copy, m.data, m.len);
	h->sect[SYM_SECT_SEGS].count = m.len;
	reseal_header(copy);
	CHECK(!load_bytes(copy, m.len, 0, &err) && err == -SYM_ERR_BAD_INDEX);
	memcpy(copy, m.data, m.len);
	h->sect[SYM_SECT_NODES].offset += 8;
	reseal_header(copy);
	CHECK(!load_bytes(copy, m.len, 0, &err) && err == -SYM_ERR_BAD_INDEX);
	/* A body byte flipped: only the verifying load sees it. */
	memcpy(copy, m.data, m.len);
	copy[h->sect[SYM_SECT_NODES].offset + 3] ^= 1;
	CHECK(!load_bytes(copy, m.len, SYM_LOAD_VERIFY, &err) && err == -SYM_ERR_BAD_INDEX);
	{
		struct sym_index *l = load_bytes(copy, m.len, 0, &err);

		CHECK(l);
		sym_index_free(l);
	}
	sym_index_free(idx);
	free(copy);
	free(m.data);
	return 0;
}

/* The reason load_bytes' file was refused, for one damage. */
static const char *refusal(const void *data, size_t len, unsigned flags, int *err)
{
	static char why[256];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int fd = file_of(data, len);
	struct sym_index *idx;

	if (fd < 0)
		return "(no file)";
	idx = sym_index_load_diag(fd, flags, &d, err);
	close(fd);
	sym_index_free(idx);
	return idx ? "(loaded)" : why;
}

/* Each check that refuses a file says which it is. */
static int test_symindex__refusals_name_their_check(void)
{
	int err = 0;
	struct sym_index *idx = sym_index_open(unit_fixture("c_O2_pie"), NULL, &err);
	struct sym_file_header *h;
	struct membuf m;
	uint8_t *copy;

	CHECK(idx);
	CHECK_INT(save(idx, &m), ==, 0);
	copy = malloc(m.len);
	CHECK(copy);
	h = (struct sym_file_header *)copy;
	CHECK(strstr(refusal(m.data, 10, 0, &err), "shorter than the header"));
	memcpy(copy, m.data, m.len);
	copy[0] = 'X';
	CHECK(strstr(refusal(copy, m.len, 0, &err), "not a symbol index"));
	memcpy(copy, m.data, m.len);
	h->version = SYM_FILE_VERSION + 1;
	reseal_header(copy);
	CHECK(strstr(refusal(copy, m.len, 0, &err), "format version"));
	CHECK_INT(err, ==, -SYM_ERR_INDEX_VERSION);
	CHECK(strstr(refusal(m.data, m.len - 64, 0, &err), "the file has"));
	memcpy(copy, m.data, m.len);
	h->nfunctions ^= 1;
	CHECK(strstr(refusal(copy, m.len, 0, &err), "header checksum mismatch"));
	memcpy(copy, m.data, m.len);
	h->bucket_shift = 64;
	reseal_header(copy);
	CHECK(strstr(refusal(copy, m.len, 0, &err), "bucket shift 64"));
	memcpy(copy, m.data, m.len);
	h->sect[SYM_SECT_SEGS].count = m.len;
	reseal_header(copy);
	CHECK(strstr(refusal(copy, m.len, 0, &err), "records run past the file"));
	memcpy(copy, m.data, m.len);
	h->sect[SYM_SECT_NODES].offset += 8;
	reseal_header(copy);
	CHECK(strstr(refusal(copy, m.len, 0, &err), "misplaced"));
	memcpy(copy, m.data, m.len);
	h->sect[SYM_SECT_NODES].elem_size++;
	reseal_header(copy);
	CHECK(strstr(refusal(copy, m.len, 0, &err), "records, not"));
	memcpy(copy, m.data, m.len);
	h->sect[SYM_SECT_DYNSYM_ADDR].count = h->sect[SYM_SECT_DYNSYM].count + 1;
	reseal_header(copy);
	CHECK(strstr(refusal(copy, m.len, 0, &err), "different lengths") ||
	      strstr(refusal(copy, m.len, 0, &err), "run past"));
	memcpy(copy, m.data, m.len);
	copy[h->sect[SYM_SECT_STRTAB].offset] = 'x';
	CHECK(strstr(refusal(copy, m.len, 0, &err), "string table"));
	memcpy(copy, m.data, m.len);
	copy[h->sect[SYM_SECT_NODES].offset + 3] ^= 1;
	CHECK(strstr(refusal(copy, m.len, SYM_LOAD_VERIFY, &err), "body checksum mismatch"));
	CHECK_INT(err, ==, -SYM_ERR_BAD_INDEX);
	sym_index_free(idx);
	free(copy);
	free(m.data);
	return 0;
}

/* Lookups over every address of an index whose body is garbage in places
 * (not verified): answers may be wrong, reads stay inside (ASan checks). */
static int test_symindex__damaged_body_stays_in_bounds(void)
{
	int err = 0;
	struct sym_index *idx = sym_index_open(unit_fixture("cxx_O2"), NULL, &err);
	const struct sym_file_header *h;
	struct membuf m;
	uint8_t *copy;
	uint32_t seed = 12345;

	CHECK(idx);
	CHECK_INT(save(idx, &m), ==, 0);
	copy = malloc(m.len);
	CHECK(copy);
	h = (const struct sym_file_header *)m.data;
	for (int round = 0; round < 40; round++) {
		struct sym_index *l;
		struct sym_frame f[MAXF];

		memcpy(copy, m.data, m.len);
		for (int k = 0; k < 64; k++) { /* 64 random bytes of the body */
			seed = seed * 1103515245u + 12345u;
			size_t at = sizeof(*h) + (seed >> 4) % (m.len - sizeof(*h));

			copy[at] = (uint8_t)(seed >> 24);
		}
		l = load_bytes(copy, m.len, 0, &err);
		CHECK(l);
		for (size_t i = 0; i < idx->nloads; i++)
			for (uint64_t a = idx->loads[i].vaddr;
			     a < idx->loads[i].vaddr + idx->loads[i].memsz; a += 3) {
				int n = sym_index_lookup(l, a, SYM_ADDR_VADDR,
							 SYM_LOOKUP_SYMBOL_NAME, f, MAXF);

				for (int j = 0; j < n && j < MAXF; j++)
					(void)sym_frame_demangled(l, &f[j], true);
			}
		sym_index_free(l);
	}
	sym_index_free(idx);
	free(copy);
	free(m.data);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_symindex__round_trip_answers_alike),
	UNIT_CASE(test_symindex__deterministic_bytes),
	UNIT_CASE(test_symindex__refuses_foreign_and_damaged_files),
	UNIT_CASE(test_symindex__refusals_name_their_check),
	UNIT_CASE(test_symindex__damaged_body_stays_in_bounds),
};

UNIT_MAIN_QUIET(cases)
