/*
 * line_files.c - the file table of one DWARF line program, as (directory,
 * name) pairs: the header is the ELF/DWARF layer's (elfdw_line_header_read,
 * DWARF 2-5 §6.2.4), the rows are never decoded.  libdw 0.188 has no way
 * to read only the file names: dwarf_getsrcfiles() and dwarf_next_lines()
 * decode and keep every row (19 MB of heap for a 4 MB debug file).
 *
 * Directory 0 is the unit's: before DWARF 5 it is implicit (the unit's
 * DW_AT_comp_dir) and the header's list starts at 1; from DWARF 5 on the
 * header lists it first.  A relative directory is joined to it.
 */
#include "inspect_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* The directory of file entry f, as the header numbers them. */
static const char *file_dir(const struct elfdw_line_header *h,
			    const struct elfdw_line_file *f, const char *comp_dir)
{
	if (h->version >= 5)
		return f->dir < h->ndirs ? h->dirs[f->dir] : NULL;
	if (f->dir == 0)
		return comp_dir;
	return f->dir <= h->ndirs ? h->dirs[f->dir - 1] : NULL;
}

static int emit(const struct elfdw_line_header *h, const char *comp_dir,
		int (*cb)(const char *dir, const char *name, void *arg), void *arg)
{
	int err = 0;

	for (size_t i = 0; i < h->nfiles && !err; i++) {
		const char *dir = file_dir(h, &h->files[i], comp_dir);
		char *joined;

		if (!dir || dir[0] == '/' || !comp_dir) {
			err = cb(dir, h->files[i].name, arg);
			continue;
		}
		if (asprintf(&joined, "%s/%s", comp_dir, dir) < 0)
			return -ENOMEM;
		err = cb(joined, h->files[i].name, arg);
		free(joined);
	}
	return err;
}

int inspect_line_files(const struct elfdw_sections *s, uint64_t offset,
		       const char *comp_dir,
		       int (*cb)(const char *dir, const char *name, void *arg), void *arg)
{
	struct elfdw_line_header h;
	int err = elfdw_line_header_read(s, offset, ELFDW_LINE_TABLES, &h, NULL);

	if (err)
		return err;
	if (h.version >= 5 && h.ndirs)
		comp_dir = h.dirs[0];
	err = emit(&h, comp_dir, cb, arg);
	elfdw_line_header_release(&h);
	return err;
}
