/*
 * inspect_internal.h - shared between the files of elf-inspect/ only.
 */
#ifndef EMBER_INSPECT_INTERNAL_H
#define EMBER_INSPECT_INTERNAL_H

#include "inspect.h"
#include "elfdw.h"

#include <gelf.h>
#include <libelf.h>

/* inspect_elf_*() on an open libelf handle of a file of file_size bytes;
 * a rejection explained in d (may be NULL). */
int inspect_elf(Elf *elf, uint64_t file_size, struct inspect_info *out,
		struct ember_diag *d);

/* Call cb for each named section in order; a non-zero cb return stops the
 * walk and is returned.  -INSPECT_ERR_BAD_ELF on unreadable headers. */
int inspect_each_section(Elf *elf, int (*cb)(const char *name, Elf_Scn *scn,
						const GElf_Shdr *sh, void *arg),
			 void *arg);

/*
 * Call cb(dir, name) for each file entry of the line program at offset in
 * s->line (dir is absolute when the unit says where it is, else relative
 * or NULL; name may itself be absolute).  comp_dir is the unit's
 * DW_AT_comp_dir (DWARF 2-4 directory 0).  Reads the header only.
 * Returns 0, an input error (elfdw_err_input) for a malformed header,
 * -ENOMEM, or cb's non-zero return.
 */
int inspect_line_files(const struct elfdw_sections *s, uint64_t offset,
		       const char *comp_dir,
		       int (*cb)(const char *dir, const char *name, void *arg), void *arg);

#endif /* EMBER_INSPECT_INTERNAL_H */
