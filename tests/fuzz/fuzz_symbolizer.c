/*
 * fuzz_symbolizer.c - libFuzzer target for the symbolizer's parsers of
 * outside input: an arbitrary file goes through ELF checks, debug-file
 * discovery, the DIE reader (unit headers, abbreviation tables, forms,
 * range lists) and libdw's walk for the units the reader leaves to it,
 * line tables, symbol tables, Go's .gopclntab (header, function records,
 * pc-value tables, moduledata, inline trees), flattening and lookups with
 * demangling.  Nothing may crash, leak or read out of bounds.
 *
 * And the differential check of the DIE reader against libdw: every
 * input is indexed twice, by the reader (with libdw for the units it
 * leaves to it) and by libdw's walk alone (SYM_BUILD_LIBDW_ONLY), and the
 * two indexes must say the same thing: the same nodes, names, call sites,
 * declarations and segments, compared through their strings (a unit the
 * reader gave up on may leave strings it interned in the table, which
 * shifts offsets but changes no answer).  A difference aborts, printing
 * where.  The seeds
 * in corpus/symbolizer/ cover DWARF 2, 4 and 5 from GCC and clang, 32- and
 * 64-bit (see test_symbolizer.c), and the three pclntab layouts
 * (seed_gopclntab_*, written by make_gopclntab_seeds.py).
 *
 * Built with -fsanitize=fuzzer under EMBER_FUZZ=ON; the plain build links
 * it with replay.c so CI replays the corpus and mutated fixtures.
 */
#include "symbolizer.h"
#include "sym_internal.h" /* the index's arrays, to compare two builds */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A string of the index by strtab offset ("" for none). */
static const char *str(const struct sym_index *idx, uint32_t off)
{
	const char *s = sym_strtab_get(&idx->strtab, off);

	return s ? s : "";
}

static const char *name_str(const struct sym_index *idx, uint32_t id)
{
	return id < idx->nnames ? str(idx, idx->names[id]) : "";
}

static void mismatch(const char *what, size_t i)
{
	fprintf(stderr, "fuzz_symbolizer: the DIE reader and libdw disagree: %s %zu\n",
		what, i);
	abort();
}

static bool node_same(const struct sym_index *a, const struct sym_node *x,
		      const struct sym_index *b, const struct sym_node *y)
{
	return x->parent == y->parent && x->call_line == y->call_line &&
	       x->call_col == y->call_col && x->call_disc == y->call_disc &&
	       x->decl_line == y->decl_line && x->entry == y->entry &&
	       strcmp(name_str(a, x->name), name_str(b, y->name)) == 0 &&
	       strcmp(str(a, x->short_name), str(b, y->short_name)) == 0 &&
	       strcmp(str(a, x->call_file), str(b, y->call_file)) == 0 &&
	       strcmp(str(a, x->decl_file), str(b, y->decl_file)) == 0;
}

/* The index a (the reader's) says what b (libdw's) says. */
static void compare(const struct sym_index *a, const struct sym_index *b)
{
	if (a->nnodes != b->nnodes || a->nfunctions != b->nfunctions ||
	    a->ninlined != b->ninlined)
		mismatch("node count", a->nnodes);
	for (size_t i = 0; i < a->nnodes; i++)
		if (!node_same(a, &a->nodes[i], b, &b->nodes[i]))
			mismatch("node", i);
	if (a->nsegs != b->nsegs)
		mismatch("segment count", a->nsegs);
	for (size_t i = 0; i < a->nsegs; i++) {
		const struct sym_seg *x = &a->segs[i], *y = &b->segs[i];

		if (a->seg_start[i] != b->seg_start[i] || x->node != y->node ||
		    x->line != y->line || x->col != y->col || x->disc != y->disc ||
		    strcmp(str(a, x->file), str(b, y->file)) != 0)
			mismatch("segment", i);
	}
	if (b->units_read != 0 || a->units_read + a->units_libdw != b->units_libdw)
		mismatch("unit count", b->units_libdw);
}

/* Index path both ways and compare; the reader's index is returned (or
 * NULL with its error, which libdw's walk must share). */
static struct sym_index *open_both(const char *path, const struct sym_open_opts *o)
{
	int e1 = 0, e2 = 0;
	struct sym_index *a = sym_index_open_flags(path, o, 0, &e1);
	struct sym_index *b = sym_index_open_flags(path, o, SYM_BUILD_LIBDW_ONLY, &e2);

	if (!a != !b || (!a && e1 != e2))
		mismatch("result", (size_t)(a ? -e2 : -e1));
	if (a)
		compare(a, b);
	sym_index_free(b);
	return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

static void exercise(struct sym_index *idx, const uint8_t *data, size_t size)
{
	struct sym_frame f[32];
	uint64_t addrs[80];
	size_t n = 0;

	for (uint64_t a = 0; a < 0x4000 && n < 64; a += 0x101)
		addrs[n++] = a;
	for (size_t i = 0; i + 8 <= size && n < 80; i += size / 16 + 8) {
		uint64_t v;

		memcpy(&v, data + i, 8);
		addrs[n++] = v;
	}
	for (size_t i = 0; i < n; i++)
		for (int kind = 0; kind < 2; kind++) {
			int k = sym_index_lookup(idx, addrs[i], (enum sym_addr_kind)kind,
						 SYM_LOOKUP_SYMBOL_NAME, f, 32);

			for (int j = 0; j < k && j < 32; j++) {
				sym_frame_demangled(idx, &f[j], true);
				sym_frame_demangled(idx, &f[j], false);
			}
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_open_opts o = { .sz = sizeof(o), .no_debug_search = true };
	char path[64];
	int fd;
	struct sym_index *idx;

	ember_log_set_handler(quiet, NULL);
	fd = memfd_create("ember-fuzz", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		idx = open_both(path, &o);
		if (idx)
			exercise(idx, data, size);
		sym_index_free(idx);
	}
	close(fd);
	return 0;
}
