/*
 * inspect_internal.h - shared between the files of elf-inspect/ only.
 */
#ifndef EMBER_INSPECT_INTERNAL_H
#define EMBER_INSPECT_INTERNAL_H

#include "inspect.h"

#include <gelf.h>
#include <libelf.h>

/* inspect_elf_*() on an open libelf handle of a file of file_size bytes. */
int inspect_elf(Elf *elf, uint64_t file_size, struct inspect_info *out);

/* Call cb for each named section in order; a non-zero cb return stops the
 * walk and is returned.  -INSPECT_ERR_BAD_ELF on unreadable headers. */
int inspect_each_section(Elf *elf, int (*cb)(const char *name, Elf_Scn *scn,
						const GElf_Shdr *sh, void *arg),
			 void *arg);

/* Bytes of a section (decompressed), or NULL/0 when absent. */
struct inspect_bytes {
	const uint8_t *data;
	size_t size;
};

struct inspect_line_sections {
	struct inspect_bytes line, line_str, str;
};

/*
 * Call cb(dir, name) for each file entry of the line program at offset in
 * .debug_line (dir is absolute when the unit says where it is, else
 * relative or NULL; name may itself be absolute).  comp_dir is the unit's
 * DW_AT_comp_dir (DWARF 2-4 directory 0).  Reads the header only.
 * Returns 0, -EINVAL for a malformed header, or cb's non-zero return.
 */
int inspect_line_files(const struct inspect_line_sections *s, uint64_t offset,
		       const char *comp_dir,
		       int (*cb)(const char *dir, const char *name, void *arg), void *arg);

#endif /* EMBER_INSPECT_INTERNAL_H */
