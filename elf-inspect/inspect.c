/*
 * inspect.c - validate an ELF artifact and record what it carries.
 *
 * libelf parses the headers; before trusting any section we check that
 * its bytes lie inside the file, so a truncated upload is named as such
 * instead of failing later in a debugger.  The build ID comes from the
 * GNU build-ID note (dwelf), the DWARF version from the first unit header.
 */
#include "inspect.h"
#include "inspect_internal.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct section_flag {
	const char *name;
	unsigned flag;
};

static const struct section_flag section_flags[] = {
	{ ".debug_info", INSPECT_DWARF },
	{ ".zdebug_info", INSPECT_DWARF | INSPECT_COMPRESSED },
	{ ".symtab", INSPECT_SYMTAB },
	{ ".dynsym", INSPECT_DYNSYM },
	{ ".eh_frame", INSPECT_EH_FRAME },
	{ ".debug_frame", INSPECT_DEBUG_FRAME },
	{ ".zdebug_frame", INSPECT_DEBUG_FRAME | INSPECT_COMPRESSED },
	{ ".gopclntab", INSPECT_GOPCLNTAB },
	{ ".data.rel.ro.gopclntab", INSPECT_GOPCLNTAB },
	{ ".text", INSPECT_TEXT },
	{ ".gnu_debuglink", INSPECT_DEBUGLINK },
};

static int check_span(uint64_t off, uint64_t len, uint64_t file_size)
{
	if (off > file_size || len > file_size - off)
		return -INSPECT_ERR_TRUNCATED;
	return 0;
}

/* Every header table and every section with bytes lies inside the file. */
static int check_extents(Elf *elf, uint64_t file_size)
{
	GElf_Ehdr eh;
	size_t shnum, phnum;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &shnum) ||
	    elf_getphdrnum(elf, &phnum))
		return -INSPECT_ERR_BAD_ELF;
	if (check_span(eh.e_shoff, (uint64_t)shnum * eh.e_shentsize, file_size) ||
	    check_span(eh.e_phoff, (uint64_t)phnum * eh.e_phentsize, file_size))
		return -INSPECT_ERR_TRUNCATED;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -INSPECT_ERR_BAD_ELF;
		if (sh.sh_type != SHT_NOBITS &&
		    check_span(sh.sh_offset, sh.sh_size, file_size))
			return -INSPECT_ERR_TRUNCATED;
	}
	return 0;
}

static unsigned section_flag_of(const char *name, const GElf_Shdr *sh)
{
	unsigned flags = 0;

	if (sh->sh_type == SHT_NOBITS || sh->sh_size == 0)
		return 0;
	for (size_t i = 0; i < sizeof(section_flags) / sizeof(section_flags[0]); i++)
		if (strcmp(name, section_flags[i].name) == 0)
			flags |= section_flags[i].flag;
	/* A symbol table holds its null entry even when empty. */
	if ((flags & (INSPECT_SYMTAB | INSPECT_DYNSYM)) &&
	    sh->sh_entsize && sh->sh_size / sh->sh_entsize < 2)
		flags &= ~(unsigned)(INSPECT_SYMTAB | INSPECT_DYNSYM);
	if ((sh->sh_flags & SHF_COMPRESSED) && strncmp(name, ".debug", 6) == 0)
		flags |= INSPECT_COMPRESSED;
	return flags;
}

static void read_debuglink(Elf *elf, struct inspect_info *info)
{
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(elf, &crc);

	if (!name || strlen(name) >= sizeof(info->debuglink)) {
		info->flags &= ~(unsigned)INSPECT_DEBUGLINK;
		return;
	}
	strcpy(info->debuglink, name);
}

int inspect_each_section(Elf *elf, int (*cb)(const char *name, Elf_Scn *scn,
						const GElf_Shdr *sh, void *arg),
			 void *arg)
{
	size_t shstrndx;
	int ret = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -INSPECT_ERR_BAD_ELF;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !ret; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -INSPECT_ERR_BAD_ELF;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name)
			ret = cb(name, scn, &sh, arg);
	}
	return ret;
}

static int add_section_flags(const char *name, Elf_Scn *scn, const GElf_Shdr *sh,
			     void *arg)
{
	((struct inspect_info *)arg)->flags |= section_flag_of(name, sh);
	return 0;
}

static int read_sections(Elf *elf, struct inspect_info *info)
{
	int err = inspect_each_section(elf, add_section_flags, info);

	if (!err && (info->flags & INSPECT_DEBUGLINK))
		read_debuglink(elf, info);
	return err;
}

/* DWARF version of the first unit, through libdw (which also inflates
 * compressed sections).  A .debug_info libdw cannot read is an error. */
static int read_dwarf_version(Elf *elf, struct inspect_info *info)
{
	Dwarf *dw;
	Dwarf_Half version = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int err = 0;

	if (!(info->flags & INSPECT_DWARF))
		return 0;
	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		return -INSPECT_ERR_BAD_DWARF;
	if (dwarf_next_unit(dw, off, &next, &hsize, &version, NULL, NULL, NULL,
			    NULL, NULL) != 0 || version < 2 || version > 5)
		err = -INSPECT_ERR_BAD_DWARF;
	else
		info->dwarf_version = version;
	dwarf_end(dw);
	return err;
}

static int read_build_id(Elf *elf, struct inspect_info *info)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

	if (n <= 0)
		return -INSPECT_ERR_NO_BUILD_ID;
	if ((size_t)n > sizeof(info->build_id))
		return -INSPECT_ERR_BAD_ELF;
	memcpy(info->build_id, id, (size_t)n);
	info->build_id_len = (size_t)n;
	return 0;
}

int inspect_elf(Elf *elf, uint64_t file_size, struct inspect_info *out)
{
	struct inspect_info info = { .size = file_size };
	GElf_Ehdr eh;
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -INSPECT_ERR_NOT_ELF;
	if (!gelf_getehdr(elf, &eh))
		return -INSPECT_ERR_BAD_ELF;
	info.elf_type = eh.e_type;
	info.machine = eh.e_machine;
	err = check_extents(elf, file_size);
	if (!err)
		err = read_sections(elf, &info);
	if (!err)
		err = read_build_id(elf, &info);
	if (!err)
		err = read_dwarf_version(elf, &info);
	if (!err)
		*out = info;
	return err;
}

/* libelf rejects a file too short for an ELF header as "not ELF"; say
 * truncated when it starts with the ELF magic. */
static int classify_unopened(const void *head, size_t len)
{
	if (len >= 4 && memcmp(head, ELFMAG, 4) == 0)
		return -INSPECT_ERR_TRUNCATED;
	return -INSPECT_ERR_NOT_ELF;
}

int inspect_elf_mem(const void *data, size_t size, struct inspect_info *out)
{
	Elf *elf;
	int err;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)data, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		err = classify_unopened(data, size);
	else
		err = inspect_elf(elf, size, out);
	elf_end(elf);
	return err;
}

int inspect_elf_fd(int fd, struct inspect_info *out)
{
	struct stat st;
	unsigned char head[4] = { 0 };
	Elf *elf;
	int err;

	if (fstat(fd, &st))
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		ssize_t n = pread(fd, head, sizeof(head), 0);

		err = classify_unopened(head, n > 0 ? (size_t)n : 0);
	} else {
		err = inspect_elf(elf, (uint64_t)st.st_size, out);
	}
	elf_end(elf);
	return err;
}

const char *inspect_strerror(int err)
{
	switch (-err) {
	case INSPECT_ERR_NOT_ELF: return "not an ELF file";
	case INSPECT_ERR_TRUNCATED: return "truncated ELF file (headers point past its end)";
	case INSPECT_ERR_BAD_ELF: return "malformed ELF headers";
	case INSPECT_ERR_NO_BUILD_ID: return "no GNU build-ID note";
	case INSPECT_ERR_BAD_DWARF: return "unreadable DWARF in .debug_info";
	default: return strerror(-err);
	}
}

const char *inspect_flags_str(const struct inspect_info *info, char *buf,
			      size_t size)
{
	static const struct { unsigned flag; const char *name; } names[] = {
		{ INSPECT_SYMTAB, "symtab" }, { INSPECT_DYNSYM, "dynsym" },
		{ INSPECT_EH_FRAME, "eh_frame" }, { INSPECT_DEBUG_FRAME, "debug_frame" },
		{ INSPECT_GOPCLNTAB, "gopclntab" }, { INSPECT_COMPRESSED, "compressed" },
		{ INSPECT_TEXT, "text" }, { INSPECT_DEBUGLINK, "debuglink" },
	};
	size_t len = 0;

	buf[0] = '\0';
	if (info->flags & INSPECT_DWARF)
		len = (size_t)snprintf(buf, size, "dwarf%d", info->dwarf_version);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && len < size; i++)
		if (info->flags & names[i].flag)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
						len ? "," : "", names[i].name);
	return buf;
}
