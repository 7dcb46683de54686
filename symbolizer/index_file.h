/*
 * index_file.h - the byte layout of a saved symbol index (private to
 * symbolizer/; the page that documents it is docs/symbol-index-format.md).
 *
 * A file is a header, a directory of sections, then the sections, each
 * starting on a 64-byte boundary.  Every integer is little endian; the
 * sections are the arrays of struct sym_index byte for byte, so loading
 * is a mmap and a check of the header, never a parse.
 */
#ifndef EMBER_SYM_INDEX_FILE_H
#define EMBER_SYM_INDEX_FILE_H

#include "symbolizer.h"

#include <stdint.h>

#define SYM_FILE_MAGIC "EMBERSYM"
#define SYM_FILE_VERSION SYM_INDEX_FORMAT_VERSION /* symbolizer.h */
#define SYM_FILE_ALIGN 64
#define SYM_FILE_BYTE_ORDER 0x01020304u

/* The sections, in file order; a version-2 file has exactly these (the same
 * as version 1). */
enum sym_file_sect {
	SYM_SECT_STRTAB = 0,	/* bytes: strings, NUL-terminated */
	SYM_SECT_NAMES,		/* u32: strtab offset per name id */
	SYM_SECT_NODES,		/* struct sym_file_node */
	SYM_SECT_SEG_START,	/* u64 */
	SYM_SECT_SEGS,		/* struct sym_seg */
	SYM_SECT_BUCKETS,	/* u32 */
	SYM_SECT_SYMTAB,	/* struct sym_symbol */
	SYM_SECT_SYMTAB_ADDR,	/* u64 */
	SYM_SECT_DYNSYM,	/* struct sym_symbol */
	SYM_SECT_DYNSYM_ADDR,	/* u64 */
	SYM_SECT_LOADS,		/* struct sym_load */
	SYM_SECT_DEBUG_PATH,	/* bytes: the DWARF file's path, NUL-terminated */
	SYM_SECT_COUNT
};

struct sym_file_sect_entry {
	uint32_t kind;		/* enum sym_file_sect */
	uint32_t elem_size;	/* bytes per element */
	uint64_t offset;	/* from the start of the file, aligned */
	uint64_t count;		/* elements */
};

struct sym_file_header {
	char magic[8];		/* SYM_FILE_MAGIC, no NUL */
	uint32_t version;	/* SYM_FILE_VERSION */
	uint32_t byte_order;	/* SYM_FILE_BYTE_ORDER as the writer stored it */
	uint32_t header_size;	/* sizeof(struct sym_file_header) */
	uint32_t nsections;	/* SYM_SECT_COUNT */
	uint64_t file_size;	/* the whole file */
	uint32_t header_crc;	/* CRC-32 of the header, this field as 0 */
	uint32_t body_crc;	/* CRC-32 of every byte after the header */
	uint64_t nfunctions, ninlined;
	uint32_t bucket_shift;
	uint8_t seg_source;	/* enum sym_source of the segments */
	uint8_t symtab_in_debug;
	uint8_t build_id_len;
	uint8_t reserved0;
	uint8_t build_id[64];
	struct sym_file_sect_entry sect[SYM_SECT_COUNT];
};

#endif /* EMBER_SYM_INDEX_FILE_H */
