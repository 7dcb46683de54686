/*
 * inspect.c - validate an ELF artifact and record what it carries.
 *
 * libelf parses the headers; before trusting any section we check that
 * its bytes lie inside the file, so a truncated upload is named as such
 * instead of failing later in a debugger.  The build ID, the debuglink
 * and the DWARF version of the first unit header come from the ELF/DWARF
 * layer (elfdw.h): no libdw, and a compressed .debug_info is inflated
 * only as far as that header.  Every rejection says which check failed
 * (struct ember_diag): the upload API answers it as the 422 reason.
 */
#include "inspect.h"
#include "inspect_internal.h"
#include "elfdw.h"

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

static bool span_outside(uint64_t off, uint64_t len, uint64_t file_size)
{
	return off > file_size || len > file_size - off;
}

/* Every header table and every section with bytes lies inside the file. */
static int check_extents(Elf *elf, uint64_t file_size, struct ember_diag *d)
{
	GElf_Ehdr eh;
	size_t shnum, phnum;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &shnum) ||
	    elf_getphdrnum(elf, &phnum))
		return EMBER_FAIL(d, -INSPECT_ERR_BAD_ELF, "ELF headers unreadable: %s",
				  elf_errmsg(-1));
	/* libelf counts no sections (or segments) when their table does not
	 * fit the file: the header's own counts say how far it must reach */
	shnum = shnum > eh.e_shnum ? shnum : eh.e_shnum;
	phnum = phnum > eh.e_phnum ? phnum : eh.e_phnum;
	EMBER_FAIL_IF(span_outside(eh.e_shoff, (uint64_t)shnum * eh.e_shentsize, file_size),
		      d, -INSPECT_ERR_TRUNCATED,
		      "section headers at 0x%llx run past the end of the file (%llu bytes)",
		      (unsigned long long)eh.e_shoff, (unsigned long long)file_size);
	EMBER_FAIL_IF(span_outside(eh.e_phoff, (uint64_t)phnum * eh.e_phentsize, file_size),
		      d, -INSPECT_ERR_TRUNCATED,
		      "program headers at 0x%llx run past the end of the file (%llu bytes)",
		      (unsigned long long)eh.e_phoff, (unsigned long long)file_size);
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return EMBER_FAIL(d, -INSPECT_ERR_BAD_ELF, "section %zu: header unreadable",
					  elf_ndxscn(scn));
		EMBER_FAIL_IF(sh.sh_type != SHT_NOBITS &&
				      span_outside(sh.sh_offset, sh.sh_size, file_size),
			      d, -INSPECT_ERR_TRUNCATED,
			      "section %zu: its %llu bytes at 0x%llx run past the end of the file (%llu bytes)",
			      elf_ndxscn(scn), (unsigned long long)sh.sh_size,
			      (unsigned long long)sh.sh_offset, (unsigned long long)file_size);
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
	const char *name;
	uint32_t crc;

	/* a malformed one names nothing: the file is not the less whole */
	if (elfdw_debuglink(elf, &name, &crc) ||
	    strlen(name) >= sizeof(info->debuglink)) {
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

static int read_sections(Elf *elf, struct inspect_info *info, struct ember_diag *d)
{
	int err = inspect_each_section(elf, add_section_flags, info);

	if (err == -INSPECT_ERR_BAD_ELF)
		return EMBER_FAIL(d, err, "section names unreadable: %s", elf_errmsg(-1));
	if (!err && (info->flags & INSPECT_DEBUGLINK))
		read_debuglink(elf, info);
	return err;
}

/* DWARF version of the first unit: its header read from the first bytes
 * of .debug_info (inflated only that far when compressed).  A
 * .debug_info that cannot be read so is an error. */
static int read_dwarf_version(Elf *elf, struct inspect_info *info,
			      struct ember_diag *d)
{
	static const char *const names[] = { ".debug_info", ".zdebug_info", NULL };
	uint8_t head[16], version;
	uint64_t size;
	size_t got;
	int err;

	if (!(info->flags & INSPECT_DWARF))
		return 0;
	err = elfdw_section_head(elf, names, head, sizeof(head), &got, &size);
	if (err)
		return EMBER_FAIL(d, -INSPECT_ERR_BAD_DWARF, "'.debug_info': %s",
				  err == -EOPNOTSUPP ? "compressed in a way libelf cannot inflate"
						     : "does not inflate");
	if (elfdw_unit_version(head, got, size, &version, d))
		return EMBER_FAIL(d, -INSPECT_ERR_BAD_DWARF, "'.debug_info': no readable unit");
	info->dwarf_version = version;
	return 0;
}

static int read_build_id(Elf *elf, struct inspect_info *info, struct ember_diag *d)
{
	int n = elfdw_build_id(elf, info->build_id, sizeof(info->build_id));

	EMBER_FAIL_IF(n == -E2BIG, d, -INSPECT_ERR_BAD_ELF,
		      "build-ID note longer than %d bytes", EMBER_BUILD_ID_MAX);
	EMBER_FAIL_IF(n < 0, d, -INSPECT_ERR_BAD_ELF, "build-ID note unreadable");
	EMBER_FAIL_IF(n == 0, d, -INSPECT_ERR_NO_BUILD_ID,
		      "no NT_GNU_BUILD_ID note (link with --build-id)");
	info->build_id_len = (size_t)n;
	return 0;
}

int inspect_elf(Elf *elf, uint64_t file_size, struct inspect_info *out,
		struct ember_diag *d)
{
	struct inspect_info info = { .size = file_size };
	GElf_Ehdr eh;
	int err;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return EMBER_FAIL(d, -INSPECT_ERR_NOT_ELF, "no ELF header");
	if (!gelf_getehdr(elf, &eh))
		return EMBER_FAIL(d, -INSPECT_ERR_BAD_ELF, "ELF header unreadable: %s",
				  elf_errmsg(-1));
	info.elf_type = eh.e_type;
	info.machine = eh.e_machine;
	err = check_extents(elf, file_size, d);
	if (!err)
		err = read_sections(elf, &info, d);
	if (!err)
		err = read_build_id(elf, &info, d);
	if (!err)
		err = read_dwarf_version(elf, &info, d);
	if (!err)
		*out = info;
	return err;
}

/* libelf rejects a file too short for an ELF header as "not ELF"; say
 * truncated when it starts with the ELF magic. */
static int classify_unopened(const void *head, size_t len, struct ember_diag *d)
{
	if (len >= 4 && memcmp(head, ELFMAG, 4) == 0)
		return EMBER_FAIL(d, -INSPECT_ERR_TRUNCATED,
				  "the ELF header is cut short (%zu bytes)", len);
	return EMBER_FAIL(d, -INSPECT_ERR_NOT_ELF, "no ELF magic at the start");
}

int inspect_elf_mem_diag(const void *data, size_t size, struct inspect_info *out,
			 struct ember_diag *d)
{
	Elf *elf;
	int err;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)data, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		err = classify_unopened(data, size, d);
	else
		err = inspect_elf(elf, size, out, d);
	elf_end(elf);
	return err;
}

int inspect_elf_mem(const void *data, size_t size, struct inspect_info *out)
{
	return inspect_elf_mem_diag(data, size, out, NULL);
}

int inspect_elf_fd_diag(int fd, struct inspect_info *out, struct ember_diag *d)
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

		err = n < 0 ? -errno : classify_unopened(head, (size_t)n, d);
	} else {
		err = inspect_elf(elf, (uint64_t)st.st_size, out, d);
	}
	elf_end(elf);
	return err;
}

int inspect_elf_fd(int fd, struct inspect_info *out)
{
	return inspect_elf_fd_diag(fd, out, NULL);
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

enum ember_errkind inspect_error_kind(int err)
{
	switch (-err) {
	case INSPECT_ERR_NOT_ELF:
		return EMBER_ERRK_UNSUPPORTED;
	case INSPECT_ERR_TRUNCATED:
	case INSPECT_ERR_BAD_ELF:
	case INSPECT_ERR_NO_BUILD_ID:
	case INSPECT_ERR_BAD_DWARF:
		return EMBER_ERRK_UNPROCESSABLE;
	default:
		return ember_errkind_of_errno(err);
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
