/*
 * elf_note.c - what an ELF file says about itself in notes and links:
 * the GNU build ID (NT_GNU_BUILD_ID, the key of the debuginfo store and
 * of debuginfod) and the .gnu_debuglink that names its separate debug
 * file.  Both are read the way elfutils' dwelf_elf_gnu_build_id and
 * dwelf_elf_gnu_debuglink read them, so Ember and debuginfod clients
 * agree on what a file is, but with libelf alone.
 */
#include "elfdw_internal.h"

#include <string.h>

/* The first build-ID note in one block of notes: *id and *len (an
 * empty one counts: dwelf stops there too). */
static bool notes_build_id(Elf_Data *data, const uint8_t **id, size_t *len)
{
	size_t off = 0, name_off, desc_off, next;
	GElf_Nhdr nh;

	while (data && data->d_buf &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof("GNU") &&
		    memcmp((const char *)data->d_buf + name_off, "GNU",
			   sizeof("GNU")) == 0) {
			*id = (const uint8_t *)data->d_buf + desc_off;
			*len = nh.n_descsz;
			return true;
		}
		off = next;
	}
	return false;
}

/* In the PT_NOTE segments, for a file without section headers. */
static int segments_build_id(Elf *elf, const uint8_t **id, size_t *len)
{
	bool found = false;
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (size_t i = 0; !found && i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		found = notes_build_id(data, id, len);
	}
	return 0;
}

int elfdw_build_id(Elf *elf, uint8_t *out, size_t size)
{
	Elf_Scn *scn = elf_nextscn(elf, NULL);
	const uint8_t *id = NULL;
	bool found = false;
	size_t len = 0;
	int err;

	if (!scn) {
		err = segments_build_id(elf, &id, &len);
		if (err)
			return err;
	}
	for (; scn && !found; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			found = notes_build_id(elf_getdata(scn, NULL), &id, &len);
	}
	if (!len)
		return 0;
	if (len > size || len > INT32_MAX)
		return -E2BIG;
	memcpy(out, id, len);
	return (int)len;
}

int elfdw_debuglink(Elf *elf, const char **name, uint32_t *crc)
{
	Elf_Scn *scn = elfdw_section_by_name(elf, ".gnu_debuglink", NULL);
	Elf_Data *raw = scn ? elf_rawdata(scn, NULL) : NULL;
	uint32_t word;
	Elf_Data dst = { .d_type = ELF_T_WORD, .d_buf = &word,
			 .d_size = sizeof(word), .d_version = EV_CURRENT };
	Elf_Data src = dst;
	GElf_Ehdr eh;

	if (!scn)
		return -ENOENT;
	/* the name, NUL-terminated, then (4-aligned) the CRC at the end */
	if (!raw || !raw->d_buf || raw->d_size <= sizeof(*crc) ||
	    !memchr(raw->d_buf, 0, raw->d_size - sizeof(*crc)) ||
	    !gelf_getehdr(elf, &eh))
		return -EINVAL;
	src.d_buf = (char *)raw->d_buf + raw->d_size - sizeof(*crc);
	if (!gelf_xlatetom(elf, &dst, &src, eh.e_ident[EI_DATA]))
		return -EINVAL;
	*name = raw->d_buf;
	*crc = word;
	return 0;
}
