/*
 * sources.c - the source files a file's DWARF names.
 *
 * The debuginfod protocol serves /buildid/ID/source/PATH only for paths the
 * DWARF of ID references; `ember upload --sources` packs exactly those
 * files.  Both ask here.  Names come from each unit's line table file
 * entries (joined with their include directory) and the unit's
 * DW_AT_name; relative ones are made absolute with DW_AT_comp_dir, then
 * canonicalized, sorted and de-duplicated.  Units, unit DIEs and line
 * tables are read by the ELF/DWARF layer with a schema of three
 * attributes: no libdw, and only the sections this needs are inflated.
 * A unit the layer does not read (DWARF 64, a form it leaves to libdw)
 * names nothing.
 */
#include "inspect_internal.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct name_list {
	char **names;
	size_t len, alloc;
};

static int names_add(struct name_list *l, const char *dir, const char *name)
{
	char *path;

	if (!name || !*name || (name[0] != '/' && (!dir || dir[0] != '/')))
		return 0; /* unusable without an absolute anchor */
	if (name[0] == '/' ? asprintf(&path, "%s", name) < 0
			   : asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	if (inspect_path_canonical(path)) {
		free(path);
		return 0;
	}
	if (l->len == l->alloc) {
		size_t n = l->alloc ? 2 * l->alloc : 64;
		char **p = realloc(l->names, n * sizeof(*p));

		if (!p) {
			free(path);
			return -ENOMEM;
		}
		l->names = p;
		l->alloc = n;
	}
	l->names[l->len++] = path;
	return 0;
}

static void names_release(struct name_list *l)
{
	for (size_t i = 0; i < l->len; i++)
		free(l->names[i]);
	free(l->names);
}

/* The three attributes of a unit DIE sources are named by. */
enum { SRC_NAME = ELFDW_SLOT_USER, SRC_COMP_DIR, SRC_STMT_LIST };

static uint8_t src_slot(uint64_t name)
{
	switch (name) {
	case DW_AT_name: return SRC_NAME;
	case DW_AT_comp_dir: return SRC_COMP_DIR;
	case DW_AT_stmt_list: return SRC_STMT_LIST;
	default: return 0;
	}
}

static const struct elfdw_schema src_schema = { .attr_slot = src_slot };

static int add_file(const char *dir, const char *name, void *arg)
{
	return names_add(arg, dir, name);
}

/* A unit's DW_AT_name (with DW_AT_comp_dir) and its line table's files. */
static int unit_names(const struct elfdw_sections *s, const struct elfdw_die *cu,
		      struct name_list *l)
{
	const char *comp_dir = NULL, *name = NULL;
	uint64_t stmt_list;
	int err;

	if (elfdw_val_str(s, cu, SRC_COMP_DIR, &comp_dir))
		comp_dir = NULL;
	if (elfdw_val_str(s, cu, SRC_NAME, &name))
		name = NULL;
	err = names_add(l, comp_dir, name);
	if (err || elfdw_val_secoff(s, cu, SRC_STMT_LIST, &stmt_list))
		return err;
	err = inspect_line_files(s, stmt_list, comp_dir, add_file, l);
	return err == -ENOMEM ? err : 0; /* a malformed table names nothing */
}

/* The unit at off: its names, and where the next one starts (0 after
 * the last readable one). */
static int unit_at(const struct elfdw_sections *s, struct elfdw_abbrevs *t,
		   uint64_t off, struct name_list *l, uint64_t *next)
{
	struct elfdw_unit u;
	struct elfdw_die cu;
	int err;

	*next = 0;
	if (elfdw_unit_header(&s->info, off, &u, NULL))
		return 0; /* libdw stops at a unit it cannot read, too */
	*next = u.end;
	if (t->addr_size != u.addr_size || t->off != u.abbrev_off ||
	    t->version != u.version) {
		err = elfdw_abbrevs_read(t, &src_schema, &s->abbrev, u.abbrev_off,
					 u.addr_size, u.version, NULL);
		if (err)
			return err == -ENOMEM ? err : 0;
	}
	err = elfdw_unit_open(s, &u, t, &cu);
	if (err)
		return err == -ENOMEM ? err : 0;
	return unit_names(s, &cu, l);
}

static int collect_names(const struct elfdw_sections *s, struct name_list *l)
{
	struct elfdw_abbrevs t = { 0 };
	uint64_t off = 0, next;
	int err = 0;

	/* libdw's iteration: a unit needs more than its first 4 bytes */
	while (!err && off + 4 < s->info.size) {
		err = unit_at(s, &t, off, l, &next);
		if (next <= off)
			break;
		off = next;
	}
	elfdw_abbrevs_release(&t);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The DWARF sections of the file open on fd, inflated: *elf is a private
 * mapping (libelf rewrites a decompressed section's header). */
static int open_sections(int fd, Elf **elf, struct elfdw_sections *s)
{
	int err;

	elf_version(EV_CURRENT);
	*elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF)
		return -INSPECT_ERR_BAD_DWARF;
	err = elfdw_sections_read(*elf, UINT64_MAX, s);
	if (err == -ENOMEM)
		return err;
	if (err || !s->info.data || !s->abbrev.data)
		return -INSPECT_ERR_BAD_DWARF;
	return 0;
}

int inspect_list_sources(int fd, int (*cb)(const char *path, void *arg),
			 void *arg)
{
	struct name_list l = { 0 };
	struct elfdw_sections s;
	Elf *elf = NULL;
	int err = open_sections(fd, &elf, &s);

	if (!err)
		err = collect_names(&s, &l);
	elf_end(elf);
	if (!err && l.len)
		qsort(l.names, l.len, sizeof(*l.names), cmp_str);
	for (size_t i = 0; !err && i < l.len; i++)
		if (i == 0 || strcmp(l.names[i], l.names[i - 1]) != 0)
			err = cb(l.names[i], arg);
	names_release(&l);
	return err;
}
