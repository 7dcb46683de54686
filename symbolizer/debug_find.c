/*
 * debug_find.c - locating the separate debug file of a stripped ELF, in
 * the order GDB and elfutils use:
 *   1. an explicit debug file;
 *   2. the .gnu_debuglink name next to the binary, in its .debug/
 *      directory, and under DEBUG_ROOT/<binary's dir>/;
 *   3. DEBUG_ROOT/.build-id/xx/rest.debug for build ID xxrest.
 * A candidate whose build ID differs from the binary's is rejected (a
 * stale debug file gives wrong answers, which is worse than none).  A
 * candidate that is not there, or is there but no debug file of this
 * binary, sends the search on to the next; a failure of the machine
 * (out of memory or file descriptors, an I/O error) ends it with that
 * error, never as "no debug file".
 */
#include "sym_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"

/* Whether the search goes on past a candidate that failed with err:
 * yes when it is absent or unusable (said at debug or warn level), no
 * for a failure that is not the candidate's. */
static bool search_goes_on(const char *path, int err)
{
	switch (-err) {
	case ENOENT: case ENOTDIR: case EISDIR: case ENAMETOOLONG: case ELOOP:
		return true;
	case EACCES: case EPERM:
	case SYM_ERR_NOT_ELF: case SYM_ERR_TRUNCATED: case SYM_ERR_BAD_ELF:
		pr_warn("symbolizer: '%s': not usable as a debug file: %s", path,
			sym_strerror(err));
		return true;
	default:
		return false;
	}
}

/* Open path as a debug file matching build_id: 0; -ENOENT when it is not
 * one (absent, another build ID, no DWARF); another error when opening
 * it failed. */
static int debug_try(const char *path, const uint8_t *build_id,
		     size_t build_id_len, struct sym_elf *out)
{
	uint8_t id[EMBER_BUILD_ID_MAX];
	int n, err;

	err = sym_elf_open(path, out);
	if (err)
		return search_goes_on(path, err) ? -ENOENT : err;
	n = elfdw_build_id(out->elf, id, sizeof(id));
	if (build_id_len && (n < 0 || (n > 0 && ((size_t)n != build_id_len ||
						 memcmp(id, build_id, (size_t)n))))) {
		pr_debug("symbolizer: '%s': build ID does not match, ignored",
			 path);
		sym_elf_close(out);
		return -ENOENT;
	}
	if (!sym_elf_has_dwarf(out->elf)) {
		sym_elf_close(out);
		return -ENOENT;
	}
	return 0;
}

static int debug_try_debuglink(const struct sym_elf *main_elf,
			       const char *root, const uint8_t *build_id,
			       size_t build_id_len, struct sym_elf *out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	const char *link, *slash;
	uint32_t crc;
	int n, err = elfdw_debuglink(main_elf->elf, &link, &crc);

	if (err == -EINVAL)
		pr_debug("symbolizer: '%s': malformed .gnu_debuglink, ignored",
			 main_elf->path);
	if (err || !*link || strchr(link, '/'))
		return -ENOENT;
	slash = strrchr(main_elf->path, '/');
	n = slash ? snprintf(dir, sizeof(dir), "%.*s",
			     (int)(slash - main_elf->path), main_elf->path)
		  : snprintf(dir, sizeof(dir), ".");
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENOENT; /* no candidate path to try */
	const char *fmts[] = { "%s/%s", "%s/.debug/%s", NULL };
	for (int i = 0; fmts[i]; i++) {
		n = snprintf(path, sizeof(path), fmts[i], dir, link);
		if (n > 0 && (size_t)n < sizeof(path) &&
		    strcmp(path, main_elf->path) != 0 &&
		    (err = debug_try(path, build_id, build_id_len, out)) != -ENOENT)
			return err;
	}
	if (dir[0] == '/') {
		n = snprintf(path, sizeof(path), "%s%s/%s", root, dir, link);
		if (n > 0 && (size_t)n < sizeof(path) &&
		    (err = debug_try(path, build_id, build_id_len, out)) != -ENOENT)
			return err;
	}
	return -ENOENT;
}

static int debug_try_build_id(const char *root, const uint8_t *build_id,
			      size_t build_id_len, struct sym_elf *out)
{
	char hex[2 * EMBER_BUILD_ID_MAX + 1], path[PATH_MAX];
	int n;

	if (build_id_len < 2 || ember_build_id_to_hex(build_id, build_id_len, hex))
		return -ENOENT;
	n = snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root,
		     hex, hex + 2);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENOENT; /* no candidate path to try */
	return debug_try(path, build_id, build_id_len, out);
}

int sym_debug_find(const struct sym_elf *main_elf, const uint8_t *build_id,
		   size_t build_id_len, const struct sym_open_opts *opts,
		   struct sym_elf *out)
{
	const char *root = opts && opts->debug_root ? opts->debug_root
						    : DEFAULT_DEBUG_ROOT;
	int err;

	if (opts && opts->debug_file) {
		err = sym_elf_open(opts->debug_file, out);
		if (err)
			return err;
		if (!sym_elf_has_dwarf(out->elf)) {
			sym_elf_close(out);
			return -SYM_ERR_BAD_DEBUG_FILE;
		}
		return 0;
	}
	if (opts && opts->no_debug_search)
		return -ENOENT;
	err = debug_try_debuglink(main_elf, root, build_id, build_id_len, out);
	if (err != -ENOENT)
		return err;
	return debug_try_build_id(root, build_id, build_id_len, out);
}
