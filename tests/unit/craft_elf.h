/*
 * craft_elf.h - ELF files written byte by byte, for tests whose input no
 * toolchain writes: sections of any bytes (DWARF made by hand), any
 * PT_LOAD segments, compressed sections whose header claims any size.
 * Little-endian ELF64 for x86-64: the ELF header, the program headers,
 * each section's bytes (16-aligned), .shstrtab, the section headers.
 * Header-only (static inline): a test includes it and links zlib.
 */
#ifndef EMBER_CRAFT_ELF_H
#define EMBER_CRAFT_ELF_H

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifndef SHF_COMPRESSED
#define SHF_COMPRESSED (1 << 11)
#endif

struct craft_sect {
	const char *name;
	uint32_t type;		/* 0: SHT_PROGBITS */
	uint64_t flags, addr;
	const void *data;
	size_t size;
	uint32_t link, info;
	uint64_t entsize;
	/* flags & SHF_COMPRESSED: data is deflated (zlib) behind an
	 * Elf64_Chdr whose ch_size says claim (0: size, the truth). */
	uint64_t claim;
};

struct craft_load {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags;		/* PF_X, PF_W, PF_R */
};

struct craft_elf {
	const struct craft_sect *sects;
	size_t nsects;
	const struct craft_load *loads;
	size_t nloads;
};

/* A growing byte string: the sections a test makes by hand.  Aborts
 * when memory runs out (a test's own input). */
struct craft_buf {
	uint8_t *v;
	size_t n, alloc;
};

static inline void craft_buf_put(struct craft_buf *b, const void *p, size_t n)
{
	if (b->n + n > b->alloc) {
		b->alloc = 2 * (b->n + n) + 64;
		b->v = realloc(b->v, b->alloc);
		if (!b->v)
			abort();
	}
	memcpy(b->v + b->n, p, n);
	b->n += n;
}

static inline void craft_put1(struct craft_buf *b, uint8_t v)
{
	craft_buf_put(b, &v, 1);
}

static inline void craft_put4(struct craft_buf *b, uint32_t v)
{
	craft_buf_put(b, &v, 4);
}

static inline void craft_uleb(struct craft_buf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		craft_put1(b, byte | (v ? 0x80 : 0));
	} while (v);
}

/* Append n bytes to the file image (*buf, *len), aligned to align. */
static inline int craft_put(uint8_t **buf, size_t *len, const void *p, size_t n,
			    size_t align)
{
	size_t at = (*len + align - 1) / align * align;
	uint8_t *b = realloc(*buf, at + n + 1);

	if (!b)
		return -ENOMEM;
	memset(b + *len, 0, at - *len);
	if (n)
		memcpy(b + at, p, n);
	*buf = b;
	*len = at + n;
	return 0;
}

/* Section s's bytes as the file holds them (deflated behind a Chdr when
 * compressed), appended; *off where they start, *size how many. */
static inline int craft_sect_bytes(uint8_t **buf, size_t *len,
				   const struct craft_sect *s, uint64_t *off,
				   uint64_t *size)
{
	Elf64_Chdr ch = { ELFCOMPRESS_ZLIB, 0, s->claim ? s->claim : s->size, 1 };
	uLongf zlen;
	uint8_t *z;
	int err;

	if (!(s->flags & SHF_COMPRESSED)) {
		err = craft_put(buf, len, s->data, s->size, 16);
		*off = *len - s->size;
		*size = s->size;
		return err;
	}
	zlen = compressBound(s->size);
	z = malloc(sizeof(ch) + zlen);
	if (!z)
		return -ENOMEM;
	memcpy(z, &ch, sizeof(ch));
	if (compress2(z + sizeof(ch), &zlen, s->data, s->size, 9) != Z_OK) {
		free(z);
		return -EIO;
	}
	*size = sizeof(ch) + zlen;
	err = craft_put(buf, len, z, (size_t)*size, 16);
	*off = *len - *size;
	free(z);
	return err;
}

/* The image of e into *out (caller frees), *out_len bytes. */
static inline int craft_elf_image(const struct craft_elf *e, uint8_t **out,
				  size_t *out_len)
{
	size_t n = e->nsects + 2, len = 0, strs = 1;
	Elf64_Shdr *sh = calloc(n, sizeof(*sh));
	char *names = calloc(1, 1);
	uint8_t *buf = NULL;
	Elf64_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_X86_64,
			  .e_version = EV_CURRENT, .e_phoff = e->nloads ? sizeof(eh) : 0,
			  .e_ehsize = sizeof(eh), .e_phentsize = sizeof(Elf64_Phdr),
			  .e_phnum = (uint16_t)e->nloads,
			  .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = (uint16_t)n,
			  .e_shstrndx = (uint16_t)(n - 1) };
	int err = sh && names ? 0 : -ENOMEM;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	if (!err)
		err = craft_put(&buf, &len, &eh, sizeof(eh), 1);
	for (size_t i = 0; !err && i < e->nloads; i++) {
		const struct craft_load *l = &e->loads[i];
		Elf64_Phdr ph = { PT_LOAD, l->flags, l->offset, l->vaddr, l->vaddr,
				  l->filesz, l->memsz, 0x1000 };

		err = craft_put(&buf, &len, &ph, sizeof(ph), 1);
	}
	for (size_t i = 0; !err && i < n - 1; i++) {
		const struct craft_sect *s = i ? &e->sects[i - 1] : NULL;
		const char *name = s ? s->name : "";
		size_t nl = strlen(name) + 1;
		char *p = realloc(names, strs + nl);

		if (!p) {
			err = -ENOMEM;
			break;
		}
		names = p;
		memcpy(names + strs, name, nl);
		if (s) {
			sh[i] = (Elf64_Shdr){ .sh_name = (uint32_t)strs,
					      .sh_type = s->type ? s->type : SHT_PROGBITS,
					      .sh_flags = s->flags, .sh_addr = s->addr,
					      .sh_link = s->link, .sh_info = s->info,
					      .sh_addralign = 1, .sh_entsize = s->entsize };
			if (sh[i].sh_type == SHT_NOBITS)
				sh[i].sh_size = s->size;
			else
				err = craft_sect_bytes(&buf, &len, s, &sh[i].sh_offset,
						       &sh[i].sh_size);
		}
		strs += nl;
	}
	if (!err) { /* .shstrtab, its own name first */
		char *p = realloc(names, strs + 10);

		err = p ? 0 : -ENOMEM;
		if (p) {
			names = p;
			memcpy(names + strs, ".shstrtab", 10);
			sh[n - 1] = (Elf64_Shdr){ .sh_name = (uint32_t)strs,
						  .sh_type = SHT_STRTAB, .sh_addralign = 1 };
			err = craft_put(&buf, &len, names, strs + 10, 1);
			sh[n - 1].sh_offset = len - (strs + 10);
			sh[n - 1].sh_size = strs + 10;
		}
	}
	if (!err) {
		eh.e_shoff = (len + 7) / 8 * 8;
		err = craft_put(&buf, &len, sh, n * sizeof(*sh), 8);
		memcpy(buf, &eh, sizeof(eh));
	}
	free(sh);
	free(names);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

/* The same, written to path: 0 or a negative errno. */
static inline int craft_elf_write(const char *path, const struct craft_elf *e)
{
	uint8_t *img;
	size_t len;
	FILE *f;
	int err = craft_elf_image(e, &img, &len);

	if (err)
		return err;
	f = fopen(path, "wb");
	err = f && fwrite(img, 1, len, f) == len ? 0 : -EIO;
	if (f && fclose(f))
		err = -EIO;
	free(img);
	return err;
}

#endif /* EMBER_CRAFT_ELF_H */
