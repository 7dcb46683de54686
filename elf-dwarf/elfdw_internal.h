/*
 * elfdw_internal.h - what only elf-dwarf/ sees: helpers its files share.
 */
#ifndef EMBER_ELFDW_INTERNAL_H
#define EMBER_ELFDW_INTERNAL_H

#include "elfdw.h"

#include <dwarf.h>

/* The GNU split-DWARF forms and attributes (not in every dwarf.h). */
#define ELFDW_FORM_GNU_ADDR_INDEX 0x1f01
#define ELFDW_FORM_GNU_STR_INDEX 0x1f02
#define ELFDW_AT_GNU_DWO_NAME 0x2130
#define ELFDW_AT_GNU_ADDR_BASE 0x2133

/* A NUL-terminated string at off in sect: -EOPNOTSUPP without the
 * section (libdw's business: a default or another file), -EINVAL when
 * off is outside it, -ENODATA when the string runs past its end. */
int elfdw_sect_string(const struct elfdw_sect *sect, uint64_t off,
		      const char **out);

#endif /* EMBER_ELFDW_INTERNAL_H */
