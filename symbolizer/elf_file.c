/*
 * elf_file.c - opening ELF files for the symbolizer (libelf): sanity
 * checks that turn a truncated or foreign file into a clear error, and
 * the PT_LOAD segments (file offset -> vaddr) kept in the index.  The
 * build ID, the executable ranges and sections by name come from the
 * ELF/DWARF layer (elfdw.h).
 */
#include "sym_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every header and non-NOBITS section must lie inside the file. */
static int elf_check_bounds(Elf *elf, uint64_t file_size)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t phnum;

	if (!gelf_getehdr(elf, &eh))
		return -SYM_ERR_BAD_ELF;
	if (eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize > file_size ||
	    eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > file_size)
		return -SYM_ERR_TRUNCATED;
	if (elf_getphdrnum(elf, &phnum))
		return -SYM_ERR_BAD_ELF;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -SYM_ERR_BAD_ELF;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		if (sh.sh_offset > file_size ||
		    sh.sh_size > file_size - sh.sh_offset)
			return -SYM_ERR_TRUNCATED;
	}
	return 0;
}

int sym_elf_open(const char *path, struct sym_elf *out)
{
	struct stat st;
	int err, fd;
	Elf *elf;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail_fd;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -SYM_ERR_NOT_ELF;
		goto fail_elf;
	}
	err = elf_check_bounds(elf, (uint64_t)st.st_size);
	if (err)
		goto fail_elf;
	out->path = strdup(path);
	if (!out->path) {
		err = -ENOMEM;
		goto fail_elf;
	}
	out->fd = fd;
	out->elf = elf;
	return 0;
fail_elf:
	elf_end(elf);
fail_fd:
	close(fd);
	return err;
}

void sym_elf_close(struct sym_elf *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->path);
	e->elf = NULL;
	e->fd = -1;
	e->path = NULL;
}

/* DWARF is present when .debug_info (or Go's old .zdebug_info) has bytes. */
bool sym_elf_has_dwarf(Elf *elf)
{
	static const char *const names[] = { ".debug_info", ".zdebug_info" };

	for (size_t i = 0; i < 2; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elfdw_section_by_name(elf, names[i], &sh);

		if (scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0)
			return true;
	}
	return false;
}

struct loads {
	struct sym_index *idx;
	size_t alloc;
};

static int add_load(void *arg, const struct elfdw_load *l)
{
	struct loads *ls = arg;
	struct sym_load v = { l->vaddr, l->memsz, l->offset, l->filesz };

	return EMBER_VEC_PUSH(ls->idx->loads, ls->idx->nloads, ls->alloc, v);
}

int sym_elf_read_loads(Elf *elf, struct sym_index *idx)
{
	struct loads ls = { idx, 0 };
	int err = elfdw_each_load(elf, add_load, &ls);

	return err == -EINVAL ? -SYM_ERR_BAD_ELF : err;
}
