/*
 * elf_layout.c - where things are in an ELF file (libelf): sections by
 * name and their bytes (decompressed when asked), the PT_LOAD segments
 * that map file offsets to addresses, and the executable address ranges
 * that tell live code from what a linker discarded (DWARF and .eh_frame
 * of dropped functions point at address 0 or -1, outside them).
 */
#include "elfdw_internal.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifndef SHF_COMPRESSED
#define SHF_COMPRESSED (1 << 11)
#endif

Elf_Scn *elfdw_section_by_name(Elf *elf, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0) {
			if (out)
				*out = sh;
			return scn;
		}
	}
	return NULL;
}

/* A GNU .zdebug section whose bytes are still compressed. */
static bool still_zlib(const char *name, const Elf_Data *d)
{
	return name[1] == 'z' && d->d_size >= 4 && memcmp(d->d_buf, "ZLIB", 4) == 0;
}

struct elfdw_sect elfdw_section_loaded(Elf *elf, const char *const *names)
{
	for (; *names; names++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elfdw_section_by_name(elf, *names, &sh);
		Elf_Data *d;

		if (!scn || sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || still_zlib(*names, d))
			continue;
		return (struct elfdw_sect){ d->d_buf, d->d_size };
	}
	return (struct elfdw_sect){ NULL, 0 };
}

/* How a section's bytes are stored. */
enum packing { PLAIN, GABI, GNU };

static enum packing section_packing(Elf_Scn *scn, const char *name,
				    const GElf_Shdr *sh)
{
	Elf_Data *raw;

	if (sh->sh_flags & SHF_COMPRESSED)
		return GABI;
	if (name[1] != 'z')
		return PLAIN;
	raw = elf_getdata(scn, NULL); /* PROGBITS: the bytes as they are */
	return raw && raw->d_buf && raw->d_size >= 12 &&
	       memcmp(raw->d_buf, "ZLIB", 4) == 0 ? GNU : PLAIN;
}

/* The inflated size of a compressed section (its Chdr's, or the
 * big-endian one after a GNU "ZLIB"). */
static int inflated_size(Elf_Scn *scn, enum packing how, uint64_t *size)
{
	const uint8_t *raw;
	GElf_Chdr ch;

	if (how == GABI) {
		if (!gelf_getchdr(scn, &ch))
			return -EINVAL;
		*size = ch.ch_size;
		return 0;
	}
	raw = elf_getdata(scn, NULL)->d_buf; /* checked by section_packing */
	*size = 0;
	for (int i = 0; i < 8; i++)
		*size = *size << 8 | raw[4 + i];
	return 0;
}

/* Inflate a compressed section in place, unless it grows past max_size. */
static int section_inflate(Elf_Scn *scn, enum packing how, uint64_t max_size)
{
	uint64_t size;
	int err = inflated_size(scn, how, &size);

	if (err)
		return err;
	if (size > max_size)
		return -E2BIG;
	if (how == GABI ? elf_compress(scn, 0, 0) < 0 : elf_compress_gnu(scn, 0, 0) < 0)
		return -EINVAL;
	return 0;
}

int elfdw_section_read(Elf *elf, const char *const *names, uint64_t max_size,
		       struct elfdw_sect *out)
{
	for (; *names; names++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elfdw_section_by_name(elf, *names, &sh);
		enum packing how;
		Elf_Data *d;
		int err;

		if (!scn || sh.sh_type == SHT_NOBITS)
			continue;
		how = section_packing(scn, *names, &sh);
		if (how != PLAIN && (err = section_inflate(scn, how, max_size)))
			return err;
		d = elf_getdata(scn, NULL);
		if (!d || (!d->d_buf && d->d_size))
			return -EINVAL;
		*out = (struct elfdw_sect){ d->d_buf, d->d_size };
		return 0;
	}
	return -ENOENT;
}

/* Inflate the zlib stream in[0..n) into out[0..size): how many bytes
 * came out (up to size), or -EINVAL. */
static ssize_t inflate_head(const uint8_t *in, size_t n, uint8_t *out, size_t size)
{
	z_stream z = { .next_in = (Bytef *)in, .avail_in = (uInt)(n > UINT32_MAX ? UINT32_MAX : n),
		       .next_out = out, .avail_out = (uInt)size };
	int rc;

	if (inflateInit(&z) != Z_OK)
		return -ENOMEM;
	rc = inflate(&z, Z_SYNC_FLUSH);
	inflateEnd(&z);
	if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && z.avail_out == 0))
		return -EINVAL;
	return (ssize_t)(size - z.avail_out);
}

/* Where a compressed section's zlib stream starts in its raw bytes. */
static int zlib_stream(Elf *elf, Elf_Scn *scn, enum packing how,
		       const uint8_t **in, size_t *n)
{
	Elf_Data *raw = how == GABI ? elf_rawdata(scn, NULL) : elf_getdata(scn, NULL);
	size_t skip = 12; /* "ZLIB" and the big-endian size */
	GElf_Chdr ch;

	if (!raw || !raw->d_buf)
		return -EINVAL;
	if (how == GABI) {
		if (!gelf_getchdr(scn, &ch))
			return -EINVAL;
		if (ch.ch_type != ELFCOMPRESS_ZLIB)
			return -EOPNOTSUPP;
		skip = gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Chdr)
							 : sizeof(Elf64_Chdr);
	}
	if (raw->d_size < skip)
		return -EINVAL;
	*in = (const uint8_t *)raw->d_buf + skip;
	*n = raw->d_size - skip;
	return 0;
}

int elfdw_section_head(Elf *elf, const char *const *names, uint8_t *buf,
		       size_t size, size_t *got, uint64_t *total)
{
	for (; *names; names++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elfdw_section_by_name(elf, *names, &sh);
		const uint8_t *in;
		enum packing how;
		Elf_Data *d;
		ssize_t n;
		size_t len;
		int err;

		if (!scn || sh.sh_type == SHT_NOBITS)
			continue;
		how = section_packing(scn, *names, &sh);
		if (how == PLAIN) {
			d = elf_getdata(scn, NULL);
			if (!d || (!d->d_buf && d->d_size))
				return -EINVAL;
			*got = d->d_size < size ? d->d_size : size;
			memcpy(buf, d->d_buf, *got);
			*total = d->d_size;
			return 0;
		}
		if ((err = zlib_stream(elf, scn, how, &in, &len)) ||
		    (err = inflated_size(scn, how, total)))
			return err;
		if ((n = inflate_head(in, len, buf, size)) < 0)
			return (int)n;
		*got = (size_t)n;
		return 0;
	}
	return -ENOENT;
}

int elfdw_each_load(Elf *elf, int (*fn)(void *arg, const struct elfdw_load *l),
		    void *arg)
{
	size_t phnum;
	int rc = 0;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (size_t i = 0; i < phnum && !rc; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type == PT_LOAD)
			rc = fn(arg, &(struct elfdw_load){ ph.p_vaddr, ph.p_memsz,
							  ph.p_offset, ph.p_filesz,
							  ph.p_flags });
	}
	return rc;
}

void elfdw_ranges_release(struct elfdw_ranges *r)
{
	if (!r)
		return;
	free(r->r);
	*r = (struct elfdw_ranges){ 0 };
}

int elfdw_ranges_add(void *ranges, uint64_t lo, uint64_t hi)
{
	struct elfdw_ranges *r = ranges;
	struct elfdw_range x = { lo, hi };

	if (hi <= lo)
		return 0;
	return EMBER_VEC_PUSH(r->r, r->n, r->alloc, x);
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct elfdw_range *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

void elfdw_ranges_sort(struct elfdw_ranges *r)
{
	if (r->n > 1)
		qsort(r->r, r->n, sizeof(*r->r), range_cmp);
}

bool elfdw_ranges_contain(const struct elfdw_ranges *r, uint64_t lo, uint64_t hi)
{
	if (r->n == 0)
		return true;
	for (size_t i = 0; i < r->n; i++)
		if (lo >= r->r[i].lo && hi <= r->r[i].hi)
			return true;
	return false;
}

int elfdw_exec_sections(Elf *elf, struct elfdw_ranges *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		if (!(sh.sh_flags & SHF_EXECINSTR) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_addr + sh.sh_size < sh.sh_addr)
			continue;
		if (elfdw_ranges_add(out, sh.sh_addr, sh.sh_addr + sh.sh_size))
			return -ENOMEM;
	}
	return 0;
}

static int add_exec_load(void *arg, const struct elfdw_load *l)
{
	if (!(l->flags & PF_X) || l->vaddr + l->memsz < l->vaddr)
		return 0;
	return elfdw_ranges_add(arg, l->vaddr, l->vaddr + l->memsz);
}

int elfdw_exec_segments(Elf *elf, struct elfdw_ranges *out)
{
	return elfdw_each_load(elf, add_exec_load, out);
}
