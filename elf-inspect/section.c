/*
 * section.c - where a named section's bytes lie in a stored file, for the
 * debuginfod /section endpoint (served straight from the file with
 * sendfile, never copied).
 */
#include "inspect.h"

#include <errno.h>
#include <gelf.h>
#include <string.h>

static int find_in(Elf *elf, const char *name, GElf_Shdr *out)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -INSPECT_ERR_BAD_ELF;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			return -INSPECT_ERR_BAD_ELF;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0) {
			*out = sh;
			return 0;
		}
	}
	return -ENOENT;
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
