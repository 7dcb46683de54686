/*
 * inspect.h - what an ELF artifact carries, checked before Ember stores it.
 *
 * The debuginfo store keeps files keyed by GNU build ID and serves the best
 * candidate for each.  Before a file is accepted (an upload, or a fetch
 * from an upstream debuginfod server) the server inspects it here: it must
 * be a whole ELF file (no section or segment past its end), carry a build
 * ID note, and we record what it offers a debugger or symbolizer: DWARF and
 * its version, symbol tables, CFI, Go's pclntab, compressed sections.
 * `ember upload` uses the same functions on the client side, so both ends
 * agree on what a file is.
 *
 * Layer: beside the symbolizer, on the ELF/DWARF layer (elf-dwarf/, libelf)
 * and ember_common only: no libdw.
 */
#ifndef EMBER_INSPECT_H
#define EMBER_INSPECT_H

#include "common.h"

#include <stddef.h>
#include <stdint.h>

enum inspect_flags {
	INSPECT_DWARF = 1 << 0,       /* .debug_info with bytes (not NOBITS) */
	INSPECT_SYMTAB = 1 << 1,      /* .symtab with at least one symbol */
	INSPECT_DYNSYM = 1 << 2,      /* .dynsym with at least one symbol */
	INSPECT_EH_FRAME = 1 << 3,    /* .eh_frame with bytes */
	INSPECT_DEBUG_FRAME = 1 << 4, /* .debug_frame with bytes */
	INSPECT_GOPCLNTAB = 1 << 5,   /* Go .gopclntab with bytes */
	INSPECT_COMPRESSED = 1 << 6,  /* SHF_COMPRESSED or .zdebug_* sections */
	INSPECT_TEXT = 1 << 7,        /* .text with bytes: runnable code */
	INSPECT_DEBUGLINK = 1 << 8,   /* names a separate file (.gnu_debuglink) */
};

/* Domain errors, returned negated; inspect_strerror() explains them. */
enum inspect_error {
	INSPECT_ERR_NOT_ELF = 2000,  /* not an ELF file at all */
	INSPECT_ERR_TRUNCATED,       /* headers point past the end of the file */
	INSPECT_ERR_BAD_ELF,         /* libelf rejects the headers */
	INSPECT_ERR_NO_BUILD_ID,     /* no NT_GNU_BUILD_ID note */
	INSPECT_ERR_BAD_DWARF,       /* .debug_info present but unreadable */
};

#define INSPECT_DEBUGLINK_MAX 256

/* Everything is filled by inspect_elf_*() on success; nothing on failure. */
struct inspect_info {
	uint8_t build_id[EMBER_BUILD_ID_MAX];
	size_t build_id_len;
	unsigned flags;           /* enum inspect_flags */
	int dwarf_version;        /* of the first unit; 0 without DWARF */
	uint16_t elf_type;        /* ET_EXEC, ET_DYN, ET_REL, ... */
	uint16_t machine;         /* EM_X86_64, ... */
	uint64_t size;            /* file size in bytes */
	char debuglink[INSPECT_DEBUGLINK_MAX]; /* "" unless INSPECT_DEBUGLINK */
};

/*
 * Inspect the ELF file open on fd (read from offset 0; the fd stays the
 * caller's).  Returns 0, a negative errno, or -INSPECT_ERR_*.
 */
int inspect_elf_fd(int fd, struct inspect_info *out);
/* The same, with a rejection explained in d (may be NULL): which check
 * failed and on what ("section 12: its 4096 bytes at 0x3000 run past the
 * end of the file (8192 bytes)"), for the uploader. */
int inspect_elf_fd_diag(int fd, struct inspect_info *out, struct ember_diag *d);

/* The same on a memory image (the fuzz target's entry point); elf-inspect
 * never writes to it. */
int inspect_elf_mem(const void *data, size_t size, struct inspect_info *out);
int inspect_elf_mem_diag(const void *data, size_t size, struct inspect_info *out,
			 struct ember_diag *d);

/* Human-readable reason for any error inspect_* returned. */
const char *inspect_strerror(int err);
/* What any error inspect_* returned means to whoever asked: not ELF
 * EMBER_ERRK_UNSUPPORTED, the other -INSPECT_ERR_* EMBER_ERRK_UNPROCESSABLE
 * (the file is unusable), an errno ember_errkind_of_errno() (reading the
 * file failed). */
enum ember_errkind inspect_error_kind(int err);

/*
 * A comma-separated summary of info->flags ("dwarf5,symtab,eh_frame") into
 * buf; returns buf.  For logs, JSON and `ember upload` output.
 */
const char *inspect_flags_str(const struct inspect_info *info, char *buf,
			      size_t size);

/*
 * Call cb once for each distinct source file the DWARF in fd names (the
 * line tables' file entries and each unit's DW_AT_name, made absolute with
 * DW_AT_comp_dir and canonicalized by inspect_path_canonical()), in
 * strcmp order.  path is valid only during the call.  A non-zero return
 * from cb stops the walk and is returned.  Returns 0, a negative errno or
 * -INSPECT_ERR_BAD_DWARF; -E2BIG past a limit of inspect_sources_opts
 * (the defaults here).
 */
int inspect_list_sources(int fd, int (*cb)(const char *path, void *arg),
			 void *arg);

/* A path longer than this names no file (PATH_MAX): not listed. */
#define INSPECT_PATH_MAX 4096

/*
 * The limits of a listing, for files from anybody: what it may inflate,
 * keep and do.  Fields at 0 take the defaults; NULL options are all
 * defaults.
 */
struct inspect_sources_opts {
	size_t sz;		/* sizeof(struct inspect_sources_opts) */
	/* A compressed DWARF section whose header says it inflates past
	 * this is refused before anything is inflated (-E2BIG).  Default
	 * 1 GiB (ELFDW_MAX_INFLATE_DEFAULT); UINT64_MAX: no limit. */
	uint64_t max_section_bytes;
	/* The distinct paths listed, each with its NUL, may add up to this
	 * (-E2BIG past it).  Default 64 MiB. */
	uint64_t max_names_bytes;
	/* Why -E2BIG (or an unreadable section), for the uploader; may be
	 * NULL.  Every path joined (before duplicates are dropped) counts
	 * too: at most 64 times the file's .debug_line and .debug_info plus
	 * 64 MiB, so that no line table can make the listing work more than
	 * its bytes say (a million entries of one long path). */
	struct ember_diag *diag;
};

#define INSPECT_MAX_NAMES_DEFAULT ((uint64_t)64 << 20)

int inspect_list_sources_opts(int fd, const struct inspect_sources_opts *opts,
			      int (*cb)(const char *path, void *arg), void *arg);

/*
 * Canonicalize an absolute path in place, lexically: collapse "//", drop
 * "." and resolve ".." (never above "/").  Returns 0, or -EINVAL when path
 * is not absolute.
 */
int inspect_path_canonical(char *path);

/*
 * Where the bytes of section `name` lie in the file open on fd: *offset,
 * *size and the section's sh_flags.  Returns 0, -ENOENT when there is no
 * such section, -ENODATA for a NOBITS section, or another error.
 */
int inspect_find_section(int fd, const char *name, uint64_t *offset,
			 uint64_t *size, uint64_t *flags);

#endif /* EMBER_INSPECT_H */
