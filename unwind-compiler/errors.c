/*
 * errors.c - the unwind compiler's error strings (enum unwind_err).  A
 * rejected input says more than its error: the first failed check is
 * formatted into the caller's err_msg buffer ("'.eh_frame' +0x1a4: FDE
 * length 0x100 runs past the section end") by common.h's EMBER_FAIL.
 */
#include "unwind_internal.h"

#include <stdio.h>

const char *unwind_strerror(int err)
{
	switch (-err) {
	case UNWIND_ERR_NOT_ELF:
		return "not an ELF file";
	case UNWIND_ERR_BAD_ELF:
		return "malformed or truncated ELF file";
	case UNWIND_ERR_ARCH:
		return "unsupported architecture (x86-64 and arm64 only)";
	case UNWIND_ERR_NO_CFI:
		return "no .eh_frame or .debug_frame";
	case UNWIND_ERR_BAD_CFI:
		return "truncated or corrupt call frame information";
	case UNWIND_ERR_DEBUG_MISMATCH:
		return "debug file does not match the binary's build ID";
	case UNWIND_ERR_LIMIT:
		return "table exceeds the format's limits";
	case UNWIND_ERR_BAD_TABLE:
		return "not an unwind table, or a truncated or inconsistent one";
	case UNWIND_ERR_CHECKSUM:
		return "unwind table checksum mismatch";
	case UNWIND_ERR_VERSION:
		return "unwind table of an unsupported format version";
	default:
		return strerror(-err);
	}
}

enum ember_errkind unwind_error_kind(int err)
{
	switch (-err) {
	case UNWIND_ERR_NO_CFI:
		return EMBER_ERRK_NOT_FOUND;
	case UNWIND_ERR_NOT_ELF:
	case UNWIND_ERR_BAD_ELF:
	case UNWIND_ERR_ARCH:
	case UNWIND_ERR_BAD_CFI:
	case UNWIND_ERR_DEBUG_MISMATCH:
	case UNWIND_ERR_LIMIT:
	case UNWIND_ERR_BAD_TABLE:
	case UNWIND_ERR_CHECKSUM:
	case UNWIND_ERR_VERSION:
	case E2BIG:
		return EMBER_ERRK_UNPROCESSABLE;
	default:
		return ember_errkind_of_errno(err);
	}
}
