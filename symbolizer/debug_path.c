/*
 * debug_path.c - where the separate debug file of an ELF is, without
 * building an index: `ember upload` sends it along with the executable.
 * The search is sym_debug_find()'s, so upload and symbolize agree.
 */
#include "sym_internal.h"

#include <stdio.h>
#include <string.h>

int sym_debug_file_path(const char *path, const char *debug_root, char *out,
			size_t size)
{
	struct sym_open_opts opts = { .sz = sizeof(opts), .debug_root = debug_root };
	struct sym_elf main_elf, dbg;
	uint8_t id[EMBER_BUILD_ID_MAX];
	int n, err;

	err = sym_elf_open(path, &main_elf);
	if (err)
		return err;
	n = elfdw_build_id(main_elf.elf, id, sizeof(id));
	err = sym_debug_find(&main_elf, id, n > 0 ? (size_t)n : 0, &opts, &dbg);
	sym_elf_close(&main_elf);
	if (err)
		return err;
	if (snprintf(out, size, "%s", dbg.path) >= (int)size)
		err = -ENAMETOOLONG;
	sym_elf_close(&dbg);
	return err;
}
