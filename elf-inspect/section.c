/*
 * section.c - where a named section's bytes lie in a stored file, for the
 * debuginfod /section endpoint (served straight from the file with
 * sendfile, never copied).
 */
#include "inspect_internal.h"

#include <errno.h>
#include <gelf.h>
#include <string.h>

struct wanted {
	const char *name;
	GElf_Shdr *out;
};

static int match(const char *name, Elf_Scn *scn, const GElf_Shdr *sh, void *arg)
{
	struct wanted *w = arg;

	if (strcmp(name, w->name) != 0)
		return 0;
	*w->out = *sh;
	return 1;
}

static int find_in(Elf *elf, const char *name, GElf_Shdr *out)
{
	struct wanted w = { name, out };
	int ret = inspect_each_section(elf, match, &w);

	return ret == 1 ? 0 : ret < 0 ? ret : -ENOENT;
}

int inspect_find_section(int fd, const char *name, uint64_t *offset,
			 uint64_t *size, uint64_t *flags)
{
	Elf *elf;
	GElf_Shdr sh;
	int err;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		err = -INSPECT_ERR_NOT_ELF;
	else
		err = find_in(elf, name, &sh);
	elf_end(elf);
	if (err)
		return err;
	if (sh.sh_type == SHT_NOBITS)
		return -ENODATA;
	*offset = sh.sh_offset;
	*size = sh.sh_size;
	*flags = sh.sh_flags;
	return 0;
}
