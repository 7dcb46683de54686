/*
 * fuzz_symbolizer.c - libFuzzer target for the symbolizer's parsers of
 * outside input: an arbitrary file goes through ELF checks, debug-file
 * discovery, the DIE reader (unit headers, abbreviation tables, forms,
 * range lists) and libdw's walk for the units the reader leaves to it,
 * line tables, symbol tables, Go's .gopclntab (header, function records,
 * pc-value tables, moduledata, inline trees), flattening and lookups with
 * demangling.  Nothing may crash, leak or read out of bounds.
 *
 * And the differential check of the DIE reader against libdw
 * (index_compare.h): every input is indexed twice, by the reader (with
 * libdw for the units it leaves to it) and by libdw's walk alone, and
 * the two indexes must say the same thing.  fuzz_dies.c mutates the
 * DWARF of valid files where it matters to the DIE reader.  The seeds
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
#include "index_compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_index_both(data, size);
	return 0;
}
