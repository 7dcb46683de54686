/*
 * die_schema.c - what the index needs of a DIE, told to the ELF/DWARF
 * layer's DIE reader (struct elfdw_schema): the attributes that name a
 * function, say where it is declared, where an inlined call was made
 * (DWARF 5 §3.3.8), what it inherits from (abstract_origin,
 * specification), and where its unit's line program and directory are;
 * and the kinds of tags both walks (die_walk.c, libdw_walk.c) tell apart.
 */
#include "sym_internal.h"

#include <dwarf.h>

static uint8_t attr_slot(uint64_t name)
{
	switch (name) {
	case DW_AT_name: return SYM_SLOT_NAME;
	case DW_AT_linkage_name: return SYM_SLOT_LINKAGE_NAME;
	case DW_AT_MIPS_linkage_name: return SYM_SLOT_MIPS_LINKAGE_NAME;
	case DW_AT_decl_file: return SYM_SLOT_DECL_FILE;
	case DW_AT_decl_line: return SYM_SLOT_DECL_LINE;
	case DW_AT_abstract_origin: return SYM_SLOT_ABSTRACT_ORIGIN;
	case DW_AT_specification: return SYM_SLOT_SPECIFICATION;
	case DW_AT_call_file: return SYM_SLOT_CALL_FILE;
	case DW_AT_call_line: return SYM_SLOT_CALL_LINE;
	case DW_AT_call_column: return SYM_SLOT_CALL_COLUMN;
	case SYM_AT_GNU_DISCRIMINATOR: return SYM_SLOT_DISCRIMINATOR;
	case DW_AT_comp_dir: return SYM_SLOT_COMP_DIR;
	case DW_AT_stmt_list: return SYM_SLOT_STMT_LIST;
	default: return 0;
	}
}

uint8_t sym_tag_kind(uint64_t tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_partial_unit:
		return SYM_KIND_UNIT;
	case DW_TAG_subprogram:
		return SYM_KIND_FUNC;
	case DW_TAG_inlined_subroutine:
		return SYM_KIND_INLINED;
	case DW_TAG_lexical_block: case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return SYM_KIND_BLOCK;
	case DW_TAG_namespace: case DW_TAG_module: case DW_TAG_class_type:
	case DW_TAG_structure_type: case DW_TAG_union_type:
		return SYM_KIND_SCOPE;
	default:
		return SYM_KIND_OTHER;
	}
}

const struct elfdw_schema sym_die_schema = {
	.attr_slot = attr_slot,
	.tag_kind = sym_tag_kind,
	.capture_kinds = (1u << SYM_KIND_FUNC) | (1u << SYM_KIND_INLINED),
	.first_mask = (1u << SYM_SLOT_ABSTRACT_ORIGIN) | (1u << SYM_SLOT_SPECIFICATION),
};
