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
int inspect_each_section(Elf *elf, int (*cb)(const char *name, const GElf_Shdr *sh,
						void *arg),
			 void *arg);

#endif /* EMBER_INSPECT_INTERNAL_H */
