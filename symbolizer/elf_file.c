/*
 * elf_file.c - opening ELF files for the symbolizer (libelf): sanity
 * checks that turn a truncated or foreign file into a clear error, the
 * GNU build ID, PT_LOAD segments (file offset -> vaddr) and the
 * executable section ranges that decide which DWARF ranges are live code.
 */
#include "sym_internal.h"

#include <elfutils/libdwelf.h>
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

Elf_Scn *sym_elf_find_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/* DWARF is present when .debug_info (or Go's old .zdebug_info) has bytes. */
bool sym_elf_has_dwarf(Elf *elf)
{
	static const char *const names[] = { ".debug_info", ".zdebug_info" };

	for (size_t i = 0; i < 2; i++) {
		Elf_Scn *scn = sym_elf_find_section(elf, names[i]);
		GElf_Shdr sh;

		if (scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    sh.sh_size > 0)
			return true;
	}
	return false;
}

/*
 * Bytes of the first of the named sections that libdw has loaded: it
 * decompresses SHF_COMPRESSED and GNU .zdebug sections in place when it
 * reads them, so one still compressed is one libdw did not use.
 */
struct sym_sect sym_elf_dwarf_section(Elf *elf, const char *const *names)
{
	for (; *names; names++) {
		Elf_Scn *scn = sym_elf_find_section(elf, *names);
		GElf_Shdr sh;
		Elf_Data *d;

		if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf ||
		    ((*names)[1] == 'z' && d->d_size >= 4 &&
		     memcmp(d->d_buf, "ZLIB", 4) == 0))
			continue;
		return (struct sym_sect){ d->d_buf, d->d_size };
	}
	return (struct sym_sect){ NULL, 0 };
}

int sym_elf_build_id(Elf *elf, uint8_t *out, size_t size)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n <= 0)
		return 0;
	if ((size_t)n > size)
		return -E2BIG;
	memcpy(out, id, (size_t)n);
	return (int)n;
}

int sym_elf_read_loads(Elf *elf, struct sym_index *idx)
{
	size_t phnum, alloc = 0;

	if (elf_getphdrnum(elf, &phnum))
		return -SYM_ERR_BAD_ELF;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct sym_load l;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -SYM_ERR_BAD_ELF;
		if (ph.p_type != PT_LOAD)
			continue;
		l = (struct sym_load){ ph.p_vaddr, ph.p_memsz, ph.p_offset,
				       ph.p_filesz };
		if (EMBER_VEC_PUSH(idx->loads, idx->nloads, alloc, l))
			return -ENOMEM;
	}
	return 0;
}

int sym_elf_exec_ranges(Elf *elf, struct sym_ranges *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -SYM_ERR_BAD_ELF;
		if (!(sh.sh_flags & SHF_EXECINSTR) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_size == 0)
			continue;
		if (ember_vec_grow((void **)&out->r, &out->alloc, out->n,
				 sizeof(*out->r)))
			return -ENOMEM;
		out->r[out->n].lo = sh.sh_addr;
		out->r[out->n].hi = sh.sh_addr + sh.sh_size;
		out->n++;
	}
	return 0;
}

/* Few executable sections (usually under 10): a linear scan is enough. */
bool sym_ranges_contain(const struct sym_ranges *r, uint64_t lo, uint64_t hi)
{
	if (r->n == 0)
		return true; /* no section headers: accept everything */
	for (size_t i = 0; i < r->n; i++)
		if (lo >= r->r[i].lo && hi <= r->r[i].hi)
			return true;
	return false;
}
