/*
 * sources.c - the source files a file's DWARF names.
 *
 * The debuginfod protocol serves /buildid/ID/source/PATH only for paths the
 * DWARF of ID references; `ember upload --sources` packs exactly those
 * files.  Both ask here.  Names come from each unit's line table file
 * entries (libdw joins them with their include directory) and the unit's
 * DW_AT_name; relative ones are made absolute with DW_AT_comp_dir, then
 * canonicalized, sorted and de-duplicated.
 */
#include "inspect_internal.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
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

struct section_want {
	const char *name, *zname;
	struct inspect_bytes *out;
};

static int take_section(const char *name, Elf_Scn *scn, const GElf_Shdr *sh, void *arg)
{
	struct section_want *w = arg;
	Elf_Data *d;

	if (strcmp(name, w->name) != 0 && strcmp(name, w->zname) != 0)
		return 0;
	/* libdw inflated the compressed debug sections in dwarf_begin(). */
	d = elf_getdata(scn, NULL);
	if (d && d->d_buf && sh->sh_type != SHT_NOBITS)
		*w->out = (struct inspect_bytes){ d->d_buf, d->d_size };
	return 1;
}

static void line_sections(Dwarf *dw, struct inspect_line_sections *s)
{
	struct section_want want[] = {
		{ ".debug_line", ".zdebug_line", &s->line },
		{ ".debug_line_str", ".zdebug_line_str", &s->line_str },
		{ ".debug_str", ".zdebug_str", &s->str },
	};

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		inspect_each_section(dwarf_getelf(dw), take_section, &want[i]);
}

static int add_file(const char *dir, const char *name, void *arg)
{
	return names_add(arg, dir, name);
}

/* A unit's DW_AT_name (with DW_AT_comp_dir) and its line table's files. */
static int unit_names(Dwarf_Die *cu, const struct inspect_line_sections *secs,
		      struct name_list *l)
{
	Dwarf_Attribute attr;
	Dwarf_Word stmt_list;
	const char *comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	int err = names_add(l, comp_dir, dwarf_diename(cu));

	if (err || dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &attr), &stmt_list))
		return err;
	err = inspect_line_files(secs, stmt_list, comp_dir, add_file, l);
	return err == -ENOMEM ? err : 0; /* a malformed table names nothing */
}

/*
 * libdw 0.188 reads a unit's file table only by decoding and keeping all
 * its rows (19 MB of heap for a 4 MB debug file, measured with massif),
 * so the line program headers are read by line_files.c instead.
 */
static int collect_names(Dwarf *dw, struct name_list *l)
{
	struct inspect_line_sections secs;
	Dwarf_Off off = 0, next;
	size_t hsize;
	int err = 0;

	line_sections(dw, &secs);
	while (!err && dwarf_next_unit(dw, off, &next, &hsize, NULL, NULL, NULL,
				       NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, off + hsize, &cu))
			err = unit_names(&cu, &secs, l);
		off = next;
	}
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int inspect_list_sources(int fd, int (*cb)(const char *path, void *arg),
			 void *arg)
{
	struct name_list l = { 0 };
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	int err;

	if (!dw)
		return -INSPECT_ERR_BAD_DWARF;
	err = collect_names(dw, &l);
	dwarf_end(dw);
	if (!err && l.len)
		qsort(l.names, l.len, sizeof(*l.names), cmp_str);
	for (size_t i = 0; !err && i < l.len; i++)
		if (i == 0 || strcmp(l.names[i], l.names[i - 1]) != 0)
			err = cb(l.names[i], arg);
	names_release(&l);
	return err;
}
