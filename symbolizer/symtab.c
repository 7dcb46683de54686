/*
 * symtab.c - ELF symbol tables as the symbolizer's fallback (.symtab,
 * then .dynsym): function symbols sorted by address.  Among symbols at
 * one address the one with the largest size (then the greatest name) is
 * kept, and among equal sizes the last in table order: llvm-symbolizer's
 * rule, so aliases (C++ D1/D2 destructors, say) resolve alike.  A local
 * symbol remembers the STT_FILE symbol before it (its source file), which
 * llvm-symbolizer prints when nothing better is known.
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <string.h>


/* qsort has no context argument in C11: sort pairs that carry the name. */
struct sym_tmp {
	struct sym_symbol s;
	const char *name;
	const char *file;
	size_t order;		/* position in the table: makes the sort stable */
};

static int tmp_cmp(const void *pa, const void *pb)
{
	const struct sym_tmp *a = pa, *b = pb;

	if (a->s.addr != b->s.addr)
		return a->s.addr < b->s.addr ? -1 : 1;
	if (a->s.size != b->s.size)
		return a->s.size < b->s.size ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static bool sym_wanted(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       sym->st_shndx != SHN_UNDEF && sym->st_value != 0;
}

static int symtab_collect(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			  struct sym_tmp **out, size_t *n, size_t *alloc)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *file = NULL;
	size_t count;

	if (!data || sh->sh_entsize == 0)
		return -SYM_ERR_BAD_ELF;
	count = data->d_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FILE) {
			file = elf_strptr(elf, sh->sh_link, sym.st_name);
			continue;
		}
		if (!sym_wanted(&sym))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		struct sym_tmp t = { { sym.st_value, sym.st_size, 0, 0 }, name,
				     GELF_ST_BIND(sym.st_info) == STB_LOCAL ? file : NULL,
				     *n };
		if (SYM_VEC_PUSH(*out, *n, *alloc, t))
			return -ENOMEM;
	}
	return 0;
}

/* Keep the last of each run of equal addresses; intern the names. */
static int symtab_store(struct sym_index *idx, struct sym_tmp *t, size_t n,
			struct sym_symbol **out, uint64_t **keys, size_t *nout)
{
	struct sym_symbol *v = n ? malloc(n * sizeof(*v)) : NULL;
	uint64_t *k = n ? malloc(n * sizeof(*k)) : NULL;
	size_t w = 0;
	int err;

	if (n && (!v || !k)) {
		free(v);
		free(k);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && t[i + 1].s.addr == t[i].s.addr)
			continue;
		v[w] = t[i].s;
		err = sym_index_add_name(idx, t[i].name, &v[w].name);
		if (!err && t[i].file && *t[i].file) {
			int64_t off = sym_strtab_intern(&idx->strtab, t[i].file, NULL);

			err = off < 0 ? (int)off : 0;
			v[w].file = off > 0 ? (uint32_t)off : 0;
		}
		if (err) {
			free(v);
			free(k);
			return err;
		}
		k[w] = v[w].addr;
		w++;
	}
	*out = v;
	*keys = k;
	*nout = w;
	return 0;
}

int sym_symtab_read(struct sym_index *idx, Elf *elf, bool dynamic)
{
	GElf_Word want = dynamic ? SHT_DYNSYM : SHT_SYMTAB;
	struct sym_tmp *tmp = NULL;
	size_t n = 0, alloc = 0;
	Elf_Scn *scn = NULL;
	int err = 0;

	while ((scn = elf_nextscn(elf, scn)) && !err) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
			continue;
		err = symtab_collect(elf, scn, &sh, &tmp, &n, &alloc);
	}
	if (!err && n) {
		qsort(tmp, n, sizeof(*tmp), tmp_cmp);
		if (dynamic)
			err = symtab_store(idx, tmp, n, &idx->dynsym,
					   &idx->dynsym_addr, &idx->ndynsym);
		else
			err = symtab_store(idx, tmp, n, &idx->symtab,
					   &idx->symtab_addr, &idx->nsymtab);
	}
	free(tmp);
	return err;
}
