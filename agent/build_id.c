/*
 * build_id.c - TEMPORARY: the GNU build-ID note (NT_GNU_BUILD_ID, in a
 * PT_NOTE segment, else a SHT_NOTE section) of an ELF opened with
 * libelf.  The ELF layer (elf-dwarf/, ember_elfdw) has the project's
 * reader; once it is on main the agent calls it and this file goes.
 */
#include "agent_internal.h"

#include <errno.h>
#include <gelf.h>
#include <string.h>

/* The build ID in the notes of data, if any: 0, or -ENOENT. */
static int notes_build_id(Elf *elf, Elf_Data *data, uint8_t *out, size_t *len)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	while (data && off < data->d_size &&
	       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= EMBER_BUILD_ID_MAX) {
			memcpy(out, (char *)data->d_buf + desc_off, nh.n_descsz);
			*len = nh.n_descsz;
			return 0;
		}
	}
	(void)elf;
	return -ENOENT;
}

int agent_build_id_read(struct Elf *elf, uint8_t *out, size_t *len)
{
	size_t n;
	Elf_Scn *scn = NULL;

	if (elf_getphdrnum(elf, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ELF_T_NHDR);
			if (d && !notes_build_id(elf, d, out, len))
				return 0;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    !notes_build_id(elf, elf_getdata(scn, NULL), out, len))
			return 0;
	}
	return -ENOENT;
}
