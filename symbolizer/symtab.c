/*
 * symtab.c - ELF symbol tables as the symbolizer's fallback (.symtab,
 * then .dynsym): function symbols sorted by address.  Among symbols at
 * one address the one with the largest size is kept, and among equal
 * sizes the last in table order: llvm-symbolizer's rule, so aliases (C++
 * D1/D2 destructors, say) resolve alike.  A local symbol remembers the
 * STT_FILE symbol before it (its source file), which llvm-symbolizer
 * prints when nothing better is known.
 *
 * Three steps, so that the parsing runs on the pipeline's worker while
 * the main thread walks DIEs (collect.c): sym_symtab_prepare finds the
 * tables through libelf (on the thread that owns the ELF handles: libelf
 * is not thread-safe); sym_symtab_collect parses and sorts them from
 * those bytes alone (any thread); sym_symtab_store interns the names into
 * the index (the thread that owns the index).
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <string.h>

/* qsort has no context argument in C11: sort records that carry the name. */
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

/* The string table a symbol table links to, as elf_strptr reads it: the
 * bytes of an SHT_STRTAB (none when it is something else). */
static void table_strings(Elf *elf, size_t link, struct elfdw_sect *out)
{
	Elf_Scn *scn = elf_getscn(elf, link);
	Elf_Data *d;
	GElf_Shdr sh;

	*out = (struct elfdw_sect){ NULL, 0 };
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB)
		return; /* elf_strptr finds nothing there: no names */
	/* elf_strptr reads a compressed table decompressed: so do we */
	if ((sh.sh_flags & SHF_COMPRESSED) &&
	    (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh)))
		return;
	d = elf_rawdata(scn, NULL);
	if (d && d->d_buf)
		*out = (struct elfdw_sect){ d->d_buf, d->d_size < sh.sh_size
							? d->d_size : sh.sh_size };
}

static int table_add(struct sym_symtab *t, const struct sym_symsrc *src)
{
	return EMBER_VEC_PUSH(t->v, t->n, t->alloc, *src);
}

/* The symbol tables of one kind in elf, in section order. */
static int symtab_prepare(Elf *elf, bool dynamic, struct sym_symtab *out)
{
	GElf_Word want = dynamic ? SHT_DYNSYM : SHT_SYMTAB;
	bool is64 = gelf_getclass(elf) == ELFCLASS64;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		struct sym_symsrc src = { .is64 = is64 };
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || sh.sh_entsize == 0)
			return -SYM_ERR_BAD_ELF;
		if (data->d_type != ELF_T_SYM)
			continue; /* gelf_getsym would read nothing */
		src.syms = (struct elfdw_sect){ data->d_buf, data->d_size };
		src.entsize = sh.sh_entsize;
		table_strings(elf, sh.sh_link, &src.strs);
		if (table_add(out, &src))
			return -ENOMEM;
	}
	return 0;
}

/* Symbol i as gelf_getsym reads it; false past the data. */
static bool read_sym(const struct sym_symsrc *src, size_t i, GElf_Sym *sym)
{
	size_t size = src->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	Elf32_Sym s32;

	if (i >= src->syms.size / size)
		return false;
	if (src->is64) {
		memcpy(sym, src->syms.data + i * size, sizeof(*sym));
		return true;
	}
	memcpy(&s32, src->syms.data + i * size, sizeof(s32));
	*sym = (GElf_Sym){ s32.st_name, s32.st_info, s32.st_other,
			   s32.st_shndx, s32.st_value, s32.st_size };
	return true;
}

/* The string at off, as elf_strptr finds it: NULL unless it ends inside
 * the table. */
static const char *sym_string(const struct sym_symsrc *src, size_t off)
{
	const struct elfdw_sect *s = &src->strs;

	if (!s->data || off >= s->size || !memchr(s->data + off, 0, s->size - off))
		return NULL;
	return (const char *)s->data + off;
}

static int collect_table(const struct sym_symsrc *src, struct sym_symlist *out)
{
	size_t count = src->syms.size / src->entsize;
	const char *file = NULL;

	for (size_t i = 0; i < count; i++) {
		const char *name;
		GElf_Sym sym;

		if (!read_sym(src, i, &sym))
			continue;
		if (GELF_ST_TYPE(sym.st_info) == STT_FILE) {
			file = sym_string(src, sym.st_name);
			continue;
		}
		if (!sym_wanted(&sym))
			continue;
		name = sym_string(src, sym.st_name);
		if (!name || !*name)
			continue;
		struct sym_tmp t = { { sym.st_value, sym.st_size, 0, 0 }, name,
				     GELF_ST_BIND(sym.st_info) == STB_LOCAL ? file : NULL,
				     out->n };
		if (EMBER_VEC_PUSH(out->v, out->n, out->alloc, t))
			return -ENOMEM;
	}
	return 0;
}

static int symtab_collect(const struct sym_symtab *t, struct sym_symlist *out)
{
	int err = 0;

	for (size_t i = 0; i < t->n && !err; i++)
		err = collect_table(&t->v[i], out);
	if (!err && out->n)
		qsort(out->v, out->n, sizeof(*out->v), tmp_cmp);
	return err;
}

/* Keep the last of each run of equal addresses; intern the names. */
static int symtab_store(struct sym_index *idx, const struct sym_tmp *t, size_t n,
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
			int64_t off = sym_strtab_intern(&idx->strtab, t[i].file);

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

static void symtab_release(struct sym_symtab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static void symlist_release(struct sym_symlist *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int sym_symjob_prepare(struct sym_symjob *j, Elf *main_elf, Elf *dbg_elf)
{
	int err;

	memset(j, 0, sizeof(*j));
	err = symtab_prepare(main_elf, false, &j->symtab);
	if (!err && dbg_elf)
		err = symtab_prepare(dbg_elf, false, &j->symtab_dbg);
	if (!err)
		err = symtab_prepare(main_elf, true, &j->dynsym);
	return err;
}

/* Symbol bytes beyond which collecting them on the pipeline's worker pays
 * (below, a second thread's allocations cost more than it saves). */
#define BIG_TABLES ((size_t)64 << 10)

bool sym_symjob_big(const struct sym_symjob *j)
{
	size_t bytes = 0;

	for (size_t i = 0; i < j->symtab.n; i++)
		bytes += j->symtab.v[i].syms.size;
	for (size_t i = 0; i < j->symtab_dbg.n; i++)
		bytes += j->symtab_dbg.v[i].syms.size;
	return bytes >= BIG_TABLES;
}

/* .symtab of the binary, else of its debug file; .dynsym. */
int sym_symjob_collect(struct sym_symjob *j)
{
	int err = symtab_collect(&j->symtab, &j->symtab_list);

	if (!err && j->symtab_list.n == 0) {
		err = symtab_collect(&j->symtab_dbg, &j->symtab_list);
		j->symtab_in_debug = j->symtab_list.n > 0;
	}
	if (!err)
		err = symtab_collect(&j->dynsym, &j->dynsym_list);
	j->collected = true;
	return err;
}

int sym_symjob_store(struct sym_index *idx, const struct sym_symjob *j)
{
	const struct sym_symlist *s = &j->symtab_list, *d = &j->dynsym_list;
	int err = symtab_store(idx, s->v, s->n, &idx->symtab, &idx->symtab_addr,
			       &idx->nsymtab);

	idx->symtab_in_debug = j->symtab_in_debug;
	if (!err)
		err = symtab_store(idx, d->v, d->n, &idx->dynsym,
				   &idx->dynsym_addr, &idx->ndynsym);
	return err;
}

void sym_symjob_release(struct sym_symjob *j)
{
	if (!j)
		return;
	symtab_release(&j->symtab);
	symtab_release(&j->symtab_dbg);
	symtab_release(&j->dynsym);
	symlist_release(&j->symtab_list);
	symlist_release(&j->dynsym_list);
}
