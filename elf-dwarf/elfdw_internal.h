/*
 * elfdw_internal.h - what only elf-dwarf/ sees: helpers its files share.
 */
#ifndef EMBER_ELFDW_INTERNAL_H
#define EMBER_ELFDW_INTERNAL_H

#include "elfdw.h"

#endif /* EMBER_ELFDW_INTERNAL_H */
