/*
 * elf_input.c - from an ELF image to its CFI sections (libelf): the
 * checks that turn a foreign or truncated file into a clear error, the
 * GNU build ID and the span of the code (from the ELF/DWARF layer), and
 * .eh_frame, .eh_frame_hdr and .debug_frame (from the
 * binary, else from its separate debug file; decompressed when
 * SHF_COMPRESSED or .zdebug_frame).  A binary without section headers
 * is read through PT_GNU_EH_FRAME, as runtime unwinders do.
 *
 * libelf's elf_compress() rewrites section headers in place, so images
 * are opened writable and private: the caller's own files through
 * ELF_C_READ_MMAP_PRIVATE (copy on write), files someone else may change
 * under the caller (the agent's: unwind_table_compile_fd) through
 * ELF_C_READ (libelf preads the headers and each section it is asked for
 * into memory of its own: a file truncated meanwhile is a read error,
 * where a mapping of it is a SIGBUS), a caller's read-only memory image
 * through a private copy, made only when a CFI section needs
 * decompressing.  pread costs 6-10% of a compile's CPU against the
 * mapping (docs/performance-notes.md), so only the fd entry pays it.
 */
#include "unwind_internal.h"

#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#ifndef SHF_COMPRESSED
#define SHF_COMPRESSED (1 << 11)
#endif

struct unwind_elf {
	Elf *elf;
	void *copy;		/* private copy of a memory image, or NULL */
	uint16_t machine;
	bool has_sections;
};

enum cfi_scn { SCN_EH, SCN_HDR, SCN_DEBUG, SCN_COUNT };

struct scns {
	Elf_Scn *scn[SCN_COUNT];
	GElf_Shdr sh[SCN_COUNT];
};

static const char *const scn_names[SCN_COUNT] = {
	".eh_frame", ".eh_frame_hdr", ".debug_frame",
};

void unwind_elf_free(struct unwind_elf *e)
{
	if (!e)
		return;
	elf_end(e->elf);
	free(e->copy);
	free(e);
}

/* Every header and non-NOBITS section inside the image. */
static int check_bounds(Elf *elf, size_t size, struct ember_diag *d)
{
	size_t n;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n) || elf_getshdrnum(elf, &n))
		return EMBER_FAIL(d, -UNWIND_ERR_BAD_ELF, "ELF headers unreadable: %s",
				  elf_errmsg(-1));
	EMBER_FAIL_IF(eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > size ||
			      eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize > size,
		      d, -UNWIND_ERR_BAD_ELF, "ELF header tables run past the end of the file");
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return EMBER_FAIL(d, -UNWIND_ERR_BAD_ELF, "section header unreadable");
		EMBER_FAIL_IF(sh.sh_type != SHT_NOBITS &&
				      (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset),
			      d, -UNWIND_ERR_BAD_ELF,
			      "section %zu runs past the end of the file", elf_ndxscn(scn));
	}
	return 0;
}

static int check_machine(Elf *elf, struct unwind_elf *e, struct ember_diag *d)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh))
		return EMBER_FAIL(d, -UNWIND_ERR_BAD_ELF, "ELF header unreadable");
	EMBER_FAIL_IF(eh.e_ident[EI_CLASS] != ELFCLASS64 ||
			      eh.e_ident[EI_DATA] != ELFDATA2LSB ||
			      (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64),
		      d, -UNWIND_ERR_ARCH, "ELF machine %u, class %u: not x86-64 or arm64",
		      eh.e_machine, eh.e_ident[EI_CLASS]);
	e->machine = eh.e_machine;
	return 0;
}

/* Find the CFI sections by name. */
static void find_scns(Elf *elf, struct scns *s)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	memset(s, 0, sizeof(*s));
	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		for (int i = 0; name && i < SCN_COUNT; i++) {
			bool z = i == SCN_DEBUG && strcmp(name, ".zdebug_frame") == 0;

			if (!s->scn[i] && (z || strcmp(name, scn_names[i]) == 0)) {
				s->scn[i] = scn;
				s->sh[i] = sh;
			}
		}
	}
}

/* Whether a CFI section is compressed: libelf would write to the image
 * when inflating it. */
static bool needs_decompressing(Elf *elf)
{
	struct scns s;
	uint64_t size;

	find_scns(elf, &s);
	for (int i = 0; i < SCN_COUNT; i++)
		if (s.scn[i] && elfdw_section_inflated_size(elf, s.scn[i], &size) != 0)
			return true;
	return false;
}

/* size: the file's or image's (elf_rawfile() would read a whole file in). */
static int elf_new(Elf *elf, void *copy, size_t size, struct ember_diag *d,
		   struct unwind_elf **out)
{
	struct unwind_elf *e = calloc(1, sizeof(*e));
	size_t n = 0;
	int err;

	if (!e) {
		elf_end(elf);
		free(copy);
		return -ENOMEM;
	}
	e->elf = elf;
	e->copy = copy;
	err = elf_kind(elf) == ELF_K_ELF ? 0 : EMBER_FAIL(d, -UNWIND_ERR_NOT_ELF, "not an ELF file");
	if (!err)
		err = check_machine(elf, e, d);
	if (!err)
		err = check_bounds(elf, size, d);
	if (err) {
		unwind_elf_free(e);
		return err;
	}
	e->has_sections = elf_getshdrnum(elf, &n) == 0 && n > 1;
	*out = e;
	return 0;
}

int unwind_elf_open_fd(int fd, bool mapped, struct ember_diag *d, struct unwind_elf **out)
{
	struct stat st;
	Elf *elf;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return EMBER_FAIL(d, -UNWIND_ERR_NOT_ELF, "not a regular file");
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, mapped ? ELF_C_READ_MMAP_PRIVATE : ELF_C_READ, NULL);
	if (!elf)
		return EMBER_FAIL(d, -UNWIND_ERR_NOT_ELF, "not an ELF file: %s",
				  elf_errmsg(-1));
	return elf_new(elf, NULL, (size_t)st.st_size, d, out);
}

int unwind_elf_open_mem(const void *image, size_t size, struct ember_diag *d,
			struct unwind_elf **out)
{
	void *copy = NULL;
	Elf *elf;

	elf_version(EV_CURRENT);
	/* libelf only writes to the image when decompressing (see above) */
	elf = elf_memory((char *)image, size);
	if (elf && elf_kind(elf) == ELF_K_ELF && needs_decompressing(elf)) {
		elf_end(elf);
		copy = malloc(size ? size : 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, image, size);
		elf = elf_memory(copy, size);
	}
	if (!elf) {
		free(copy);
		return EMBER_FAIL(d, -UNWIND_ERR_NOT_ELF, "not an ELF file: %s",
				  elf_errmsg(-1));
	}
	return elf_new(elf, copy, size, d, out);
}

/* The bytes of a found section, inflated if need be (the ELF/DWARF
 * layer checks the size it claims against max_inflate first). */
static int scn_bytes(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		     uint64_t max_inflate, struct ember_diag *d,
		     struct unwind_section *out)
{
	Elf_Data *data;
	int err = elfdw_section_inflate(elf, scn, max_inflate, d);

	if (err)
		return err == -EINVAL ? -UNWIND_ERR_BAD_ELF : err;
	data = elf_getdata(scn, NULL);
	if (!data || (!data->d_buf && data->d_size))
		return EMBER_FAIL(d, -UNWIND_ERR_BAD_ELF, "section %zu unreadable: %s",
				  elf_ndxscn(scn), elf_errmsg(-1));
	out->data = data->d_buf;
	out->size = data->d_size;
	out->vaddr = sh->sh_addr;
	out->size_known = true;
	return 0;
}

/* No section headers: .eh_frame through PT_GNU_EH_FRAME and its PT_LOAD. */
static int eh_frame_from_phdrs(Elf *elf, struct ember_diag *d,
			       struct unwind_section *eh)
{
	size_t size, phnum;
	const uint8_t *image = (const uint8_t *)elf_rawfile(elf, &size);
	GElf_Phdr ph, hdr = { .p_type = PT_NULL };
	uint64_t at;

	if (!image || elf_getphdrnum(elf, &phnum))
		return 0;
	for (size_t i = 0; i < phnum; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			hdr = ph;
	if (hdr.p_type != PT_GNU_EH_FRAME || hdr.p_offset > size ||
	    hdr.p_filesz > size - hdr.p_offset)
		return 0;
	if (unwind_hdr_eh_frame_ptr(image + hdr.p_offset, hdr.p_filesz, hdr.p_vaddr, &at))
		return EMBER_FAIL(d, -UNWIND_ERR_BAD_CFI, "'.eh_frame_hdr': unreadable header");
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    at < ph.p_vaddr || at - ph.p_vaddr >= ph.p_filesz ||
		    ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
			continue;
		eh->data = image + ph.p_offset + (at - ph.p_vaddr);
		eh->size = ph.p_filesz - (at - ph.p_vaddr);
		eh->vaddr = at;
		eh->size_known = false;
		return 0;
	}
	return EMBER_FAIL(d, -UNWIND_ERR_BAD_CFI,
			  "'.eh_frame_hdr': .eh_frame at 0x%llx is in no PT_LOAD segment",
			  (unsigned long long)at);
}

/*
 * The span of the binary's code: its executable PT_LOAD segments, else
 * (a debug file, an object without program headers) its executable
 * sections, as the ELF/DWARF layer lists them.  An FDE outside it
 * describes no code of this binary.
 */
static int code_span(Elf *elf, struct ember_diag *d, uint64_t *lo, uint64_t *hi)
{
	struct elfdw_ranges r = { 0 };
	int err = elfdw_exec_segments(elf, &r);

	if (!err && r.n == 0)
		err = elfdw_exec_sections(elf, &r);
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; !err && i < r.n; i++) {
		*lo = r.r[i].lo < *lo ? r.r[i].lo : *lo;
		*hi = r.r[i].hi > *hi ? r.r[i].hi : *hi;
	}
	if (*hi == 0)
		*lo = 0;
	elfdw_ranges_release(&r);
	if (err == -ENOMEM)
		return err;
	return err ? EMBER_FAIL(d, -UNWIND_ERR_BAD_ELF, "ELF headers unreadable") : 0;
}

/* The GNU build ID, as elfutils and debuginfod clients read it. */
static int read_build_id(Elf *elf, struct ember_diag *d, uint8_t *out, size_t *len)
{
	int n = elfdw_build_id(elf, out, EMBER_BUILD_ID_MAX);

	EMBER_FAIL_IF(n == -E2BIG, d, -UNWIND_ERR_BAD_ELF,
		      "build-ID note longer than %d bytes", EMBER_BUILD_ID_MAX);
	EMBER_FAIL_IF(n < 0, d, -UNWIND_ERR_BAD_ELF, "build-ID note unreadable");
	*len = (size_t)n;
	return 0;
}

/* .eh_frame and .eh_frame_hdr of the binary. */
static int input_eh(struct unwind_elf *bin, const struct scns *s,
		    uint64_t max_inflate, struct ember_diag *d, struct unwind_input *in)
{
	struct unwind_section *eh = &in->sec[UNWIND_SEC_EH];
	uint64_t at;
	int err;

	if (!s->scn[SCN_EH])
		return bin->has_sections ? 0 : eh_frame_from_phdrs(bin->elf, d, eh);
	err = scn_bytes(bin->elf, s->scn[SCN_EH], &s->sh[SCN_EH], max_inflate, d, eh);
	if (err || !s->scn[SCN_HDR])
		return err;
	struct unwind_section hdr;

	err = scn_bytes(bin->elf, s->scn[SCN_HDR], &s->sh[SCN_HDR], max_inflate, d, &hdr);
	if (!err && (unwind_hdr_eh_frame_ptr(hdr.data, hdr.size, hdr.vaddr, &at) ||
		     at != eh->vaddr))
		pr_info("unwind: '.eh_frame_hdr' does not point at '.eh_frame' (0x%llx)",
			(unsigned long long)eh->vaddr);
	return err;
}

/* .debug_frame of the binary, else of the debug file. */
static int input_debug(struct unwind_elf *bin, const struct scns *s,
		       struct unwind_elf *dbg, uint64_t max_inflate,
		       struct ember_diag *d, struct unwind_input *in)
{
	struct scns ds;

	if (s->scn[SCN_DEBUG])
		return scn_bytes(bin->elf, s->scn[SCN_DEBUG], &s->sh[SCN_DEBUG],
				 max_inflate, d, &in->sec[UNWIND_SEC_DEBUG]);
	if (!dbg)
		return 0;
	find_scns(dbg->elf, &ds);
	if (!ds.scn[SCN_DEBUG])
		return 0;
	return scn_bytes(dbg->elf, ds.scn[SCN_DEBUG], &ds.sh[SCN_DEBUG], max_inflate, d,
			 &in->sec[UNWIND_SEC_DEBUG]);
}

static int check_debug_file(struct unwind_elf *bin, struct unwind_elf *dbg,
			    struct ember_diag *d, struct unwind_input *in)
{
	uint8_t id[EMBER_BUILD_ID_MAX];
	size_t n = 0;
	int err;

	if (!dbg)
		return 0;
	EMBER_FAIL_IF(dbg->machine != bin->machine, d, -UNWIND_ERR_DEBUG_MISMATCH,
		      "debug file is for ELF machine %u, the binary for %u", dbg->machine,
		      bin->machine);
	if ((err = read_build_id(dbg->elf, d, id, &n)))
		return err;
	EMBER_FAIL_IF(n && in->build_id_len &&
			      (n != in->build_id_len || memcmp(id, in->build_id, n)),
		      d, -UNWIND_ERR_DEBUG_MISMATCH, "debug file has another build ID");
	if (!in->build_id_len) {
		memcpy(in->build_id, id, n);
		in->build_id_len = n;
	}
	return 0;
}

int unwind_elf_input(struct unwind_elf *bin, struct unwind_elf *dbg,
		     unsigned flags, uint64_t max_inflate, struct ember_diag *d,
		     struct unwind_input *in)
{
	struct scns s;
	int err;

	memset(in, 0, sizeof(*in));
	in->machine = bin->machine;
	in->addr_size = 8;
	in->flags = flags;
	err = read_build_id(bin->elf, d, in->build_id, &in->build_id_len);
	if (!err)
		err = code_span(bin->elf, d, &in->code_lo, &in->code_hi);
	if (!err)
		err = check_debug_file(bin, dbg, d, in);
	if (err)
		return err;
	find_scns(bin->elf, &s);
	if (!(flags & UNWIND_COMPILE_DEBUG_FRAME_ONLY))
		err = input_eh(bin, &s, max_inflate, d, in);
	if (!err && !(flags & UNWIND_COMPILE_EH_FRAME_ONLY))
		err = input_debug(bin, &s, dbg, max_inflate, d, in);
	if (err)
		return err;
	EMBER_FAIL_IF(!in->sec[UNWIND_SEC_EH].data && !in->sec[UNWIND_SEC_DEBUG].data, d,
		      -UNWIND_ERR_NO_CFI, "no .eh_frame or .debug_frame");
	return 0;
}
