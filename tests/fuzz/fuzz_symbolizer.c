/*
 * fuzz_symbolizer.c - libFuzzer target for the symbolizer's parsers of
 * outside input: an arbitrary file goes through ELF checks, debug-file
 * discovery, the DIE reader (unit headers, abbreviation tables, forms,
 * range lists) and libdw's walk for the units the reader leaves to it,
 * line tables, symbol tables, Go's .gopclntab (header, function records,
 * pc-value tables, moduledata, inline trees), flattening and lookups with
 * demangling.  Nothing may crash, leak or read out of bounds.  The seeds
 * in corpus/symbolizer/ cover DWARF 2, 4 and 5 from GCC and clang, 32- and
 * 64-bit (see test_symbolizer.c), and the three pclntab layouts
 * (seed_gopclntab_*, written by make_gopclntab_seeds.py).
 *
 * Built with -fsanitize=fuzzer under EMBER_FUZZ=ON; the plain build links
 * it with replay.c so CI replays the corpus and mutated fixtures.
 */
#include "symbolizer.h"
#include "common.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
	int fd, err = 0;
	struct sym_index *idx;

	ember_log_set_handler(quiet, NULL);
	fd = memfd_create("ember-fuzz", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		idx = sym_index_open(path, &o, &err);
		if (idx)
			exercise(idx, data, size);
		sym_index_free(idx);
	}
	close(fd);
	return 0;
}
