/*
 * sources.c - the source files a file's DWARF names.
 *
 * The debuginfod protocol serves /buildid/ID/source/PATH only for paths the
 * DWARF of ID references; `ember upload --sources` packs exactly those
 * files.  Both ask here.  Names come from each unit's line table file
 * entries (joined with their include directory) and the unit's
 * DW_AT_name; relative ones are made absolute with DW_AT_comp_dir, then
 * canonicalized, de-duplicated as they come (a keyed hash set) and
 * sorted.  Units, unit DIEs and line tables are read by the ELF/DWARF
 * layer with a schema of three attributes: no libdw, and only the
 * sections this needs are inflated, none past its limit.  A unit the
 * layer does not read (DWARF 64, a form it leaves to libdw) names
 * nothing.
 *
 * Bounded for files from anybody (struct inspect_sources_opts): a path
 * or a part of one longer than INSPECT_PATH_MAX names no file; paths are
 * joined in one buffer, never allocated until they are new; the distinct
 * ones may hold max_names_bytes, and all joined (duplicates too) 64
 * times the DWARF's bytes plus 64 MiB, so that neither a million entries
 * of one long path nor units that all name one big table make the work
 * grow past the input.
 */
#include "inspect_internal.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The listing: the distinct canonical paths so far (a keyed hash set of
 * indexes into names[]), their bytes, the join work done, and the
 * limits. */
struct name_list {
	char **names;
	size_t len, alloc;
	struct ember_hset set;
	uint64_t bytes, max_bytes;
	uint64_t work, max_work;
	bool limit;		/* a limit of the listing's was hit */
	struct ember_diag *d;
	char buf[3 * (INSPECT_PATH_MAX + 1)];
};

/* Append part (at most INSPECT_PATH_MAX bytes, else false) to the path
 * of *len bytes in l->buf, after a '/' unless it is the first part. */
static bool path_part(struct name_list *l, size_t *len, const char *part)
{
	size_t n = strnlen(part, INSPECT_PATH_MAX + 1);

	if (n > INSPECT_PATH_MAX)
		return false;
	if (*len)
		l->buf[(*len)++] = '/';
	memcpy(l->buf + *len, part, n);
	*len += n;
	l->buf[*len] = '\0';
	return true;
}

/* The path of (base, dir, name) in l->buf, canonical: its length, or 0
 * when it names no file (not absolute, a part or the whole too long). */
static size_t path_join(struct name_list *l, const char *base, const char *dir,
			const char *name)
{
	size_t len = 0;

	if (!name || !*name)
		return 0;
	if (name[0] == '/')
		base = dir = NULL;
	else if (!dir || (dir[0] != '/' && (!base || base[0] != '/')))
		return 0; /* unusable without an absolute anchor */
	if ((base && !path_part(l, &len, base)) || (dir && !path_part(l, &len, dir)) ||
	    !path_part(l, &len, name) || len > INSPECT_PATH_MAX ||
	    inspect_path_canonical(l->buf))
		return 0;
	return strlen(l->buf);
}

static bool name_equal(const void *ctx, size_t idx, const void *key)
{
	return strcmp(((char *const *)ctx)[idx], key) == 0;
}

/* Keep l->buf (len bytes) unless it is listed already. */
static int names_keep(struct name_list *l, size_t len)
{
	uint64_t h = ember_hash(&l->set.key, l->buf, len);
	char *path;
	int err;

	if (ember_hset_find(&l->set, h, name_equal, l->names, l->buf) != SIZE_MAX)
		return 0;
	l->bytes += len + 1;
	l->limit = l->bytes > l->max_bytes;
	EMBER_FAIL_IF(l->limit, l->d, -E2BIG,
		      "source paths: more than %llu bytes of distinct paths",
		      (unsigned long long)l->max_bytes);
	path = strdup(l->buf);
	if (!path || EMBER_VEC_PUSH(l->names, l->len, l->alloc, path)) {
		free(path);
		return -ENOMEM;
	}
	err = ember_hset_insert(&l->set, h, l->len - 1);
	if (err) {
		free(l->names[--l->len]);
		return err;
	}
	return 0;
}

static int names_add(struct name_list *l, const char *base, const char *dir,
		     const char *name)
{
	size_t len = path_join(l, base, dir, name);

	if (!len)
		return 0;
	l->work += len;
	l->limit = l->work > l->max_work;
	EMBER_FAIL_IF(l->limit, l->d, -E2BIG,
		      "source paths: %llu bytes of paths joined, more than the %llu "
		      "the DWARF's size allows", (unsigned long long)l->work,
		      (unsigned long long)l->max_work);
	return names_keep(l, len);
}

static void names_release(struct name_list *l)
{
	for (size_t i = 0; i < l->len; i++)
		free(l->names[i]);
	free(l->names);
	ember_hset_release(&l->set);
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

static int add_file(const char *base, const char *dir, const char *name, void *arg)
{
	return names_add(arg, base, dir, name);
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
	err = names_add(l, NULL, comp_dir, name);
	if (err || elfdw_val_secoff(s, cu, SRC_STMT_LIST, &stmt_list))
		return err;
	err = inspect_line_files(s, stmt_list, comp_dir, add_file, l);
	/* a malformed table (one naming too many strings too) names
	 * nothing; a limit of the listing's ends it */
	return err == -ENOMEM || (err == -E2BIG && l->limit) ? err : 0;
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

/* The DWARF sections of the file open on fd, inflated (none past
 * max_inflate): *elf is a private mapping (libelf rewrites a decompressed
 * section's header). */
static int open_sections(int fd, uint64_t max_inflate, struct ember_diag *d,
			 Elf **elf, struct elfdw_sections *s)
{
	int err;

	elf_version(EV_CURRENT);
	*elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF)
		return -INSPECT_ERR_BAD_DWARF;
	err = elfdw_inflate_check(*elf, NULL, max_inflate, NULL, d);
	if (!err)
		err = elfdw_sections_read(*elf, max_inflate, s, d);
	if (err == -ENOMEM || err == -E2BIG)
		return err;
	if (err || !s->info.data || !s->abbrev.data)
		return -INSPECT_ERR_BAD_DWARF;
	return 0;
}

int inspect_list_sources_opts(int fd, const struct inspect_sources_opts *opts,
			      int (*cb)(const char *path, void *arg), void *arg)
{
	struct name_list *l = calloc(1, sizeof(*l));
	struct elfdw_sections s = { 0 };
	Elf *elf = NULL;
	int err = l ? ember_hset_init(&l->set) : -ENOMEM;

	if (err) {
		free(l);
		return err;
	}
	l->max_bytes = EMBER_OPTS_OR(opts, max_names_bytes, INSPECT_MAX_NAMES_DEFAULT);
	l->d = EMBER_OPTS_OR(opts, diag, NULL);
	err = open_sections(fd, EMBER_OPTS_OR(opts, max_section_bytes, ELFDW_MAX_INFLATE_DEFAULT),
			    l->d, &elf, &s);
	l->max_work = ((uint64_t)64 << 20) + 64 * ((uint64_t)s.line.size + s.info.size);
	if (!err)
		err = collect_names(&s, l);
	elf_end(elf);
	if (!err && l->len)
		qsort(l->names, l->len, sizeof(*l->names), cmp_str);
	for (size_t i = 0; !err && i < l->len; i++)
		err = cb(l->names[i], arg);
	names_release(l);
	free(l);
	return err;
}

int inspect_list_sources(int fd, int (*cb)(const char *path, void *arg),
			 void *arg)
{
	return inspect_list_sources_opts(fd, NULL, cb, arg);
}
