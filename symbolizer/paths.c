/*
 * paths.c - source paths as llvm-symbolizer prints them: a relative name
 * from the line table (Rust's std, for example, records "library/..."
 * under DW_AT_comp_dir "/rustc/<hash>") is joined to the unit's
 * compilation directory before it is interned.
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <string.h>

int64_t sym_intern_path(struct sym_index *idx, const char *comp_dir,
			const char *name)
{
	char stackbuf[512], *buf = stackbuf;
	size_t dl, nl;
	int64_t off;

	if (!name || !*name)
		return 0;
	dl = comp_dir ? strlen(comp_dir) : 0;
	if (name[0] == '/' || !comp_dir ||
	    (strncmp(name, comp_dir, dl) == 0 && name[dl] == '/'))
		return sym_strtab_intern(&idx->strtab, name);
	nl = strlen(name);
	if (dl + nl + 2 > sizeof(stackbuf)) {
		buf = malloc(dl + nl + 2);
		if (!buf)
			return -ENOMEM;
	}
	memcpy(buf, comp_dir, dl);
	if (dl && comp_dir[dl - 1] != '/')
		buf[dl++] = '/';
	memcpy(buf + dl, name, nl + 1);
	off = sym_strtab_intern(&idx->strtab, buf);
	if (buf != stackbuf)
		free(buf);
	return off;
}
