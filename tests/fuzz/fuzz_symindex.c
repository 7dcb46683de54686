/*
 * fuzz_symindex.c - libFuzzer target for the loader of saved symbol
 * indexes (symbolizer/index_load.c): an arbitrary file is loaded as it
 * is, and again with its header CRC made right, so mutations get past
 * the header check to the directory checks and to lookups over a body
 * nothing verified.  Nothing may crash or read out of bounds.  Seeds in
 * corpus/symindex/ are the saved indexes of four fixtures.
 *
 * Built with -fsanitize=fuzzer under EMBER_FUZZ=ON; the plain build links
 * it with replay.c.
 */
#include "symbolizer.h"
#include "index_file.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

static void exercise(struct sym_index *idx, const uint8_t *data, size_t size)
{
	struct sym_frame f[32];

	for (uint64_t a = 0; a < 0x6000; a += 0x3d)
		for (int kind = 0; kind < 2; kind++) {
			int k = sym_index_lookup(idx, a, (enum sym_addr_kind)kind,
						 SYM_LOOKUP_SYMBOL_NAME, f, 32);

			for (int j = 0; j < k && j < 32; j++)
				sym_frame_demangled(idx, &f[j], true);
		}
	for (size_t i = 0; i + 8 <= size; i += size / 16 + 8) {
		uint64_t v;

		memcpy(&v, data + i, 8);
		sym_index_lookup(idx, v, SYM_ADDR_VADDR, 0, f, 32);
	}
}

static void load_and_use(const uint8_t *data, size_t size)
{
	int fd = memfd_create("ember-fuzz", 0), err;
	struct sym_index *idx;

	if (fd < 0)
		return;
	if (write(fd, data, size) == (ssize_t)size) {
		idx = sym_index_load(fd, 0, &err);
		if (idx)
			exercise(idx, data, size);
		sym_index_free(idx);
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_file_header h;
	uint8_t *copy;

	ember_log_set_handler(quiet, NULL);
	load_and_use(data, size);
	if (size < sizeof(h) || !(copy = malloc(size)))
		return 0;
	memcpy(copy, data, size);
	memcpy(&h, copy, sizeof(h));
	h.header_crc = 0;
	h.file_size = size;
	h.header_crc = (uint32_t)crc32(crc32(0, NULL, 0), (const Bytef *)&h, sizeof(h));
	memcpy(copy, &h, sizeof(h));
	load_and_use(copy, size);
	free(copy);
	return 0;
}
