/*
 * inspect_internal.h - shared between the files of elf-inspect/ only.
 */
#ifndef EMBER_INSPECT_INTERNAL_H
#define EMBER_INSPECT_INTERNAL_H

#include "inspect.h"

#include <libelf.h>

/* inspect_elf_*() on an open libelf handle of a file of file_size bytes. */
int inspect_elf(Elf *elf, uint64_t file_size, struct inspect_info *out);

#endif /* EMBER_INSPECT_INTERNAL_H */
