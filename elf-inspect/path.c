/*
 * path.c - lexical canonicalization of absolute source paths.
 *
 * DWARF names sources as the compiler saw them ("/src/./lib/../f.c"); the
 * debuginfod client sends paths verbatim, "//" and ".." included.  Both
 * sides are reduced to one canonical form before they are compared, and
 * ".." never climbs above "/", so a request cannot name a path outside
 * the ones the DWARF lists.  The file system is never consulted.
 */
#include "inspect.h"

#include <errno.h>
#include <string.h>

/* Append component [s, s+n) to out (which has room: it only shrinks). */
static size_t push_component(char *out, size_t len, const char *s, size_t n)
{
	if (n == 1 && s[0] == '.')
		return len;
	if (n == 2 && s[0] == '.' && s[1] == '.') {
		while (len > 0 && out[len - 1] != '/')
			len--;
		return len > 0 ? len - 1 : 0;
	}
	out[len++] = '/';
	memmove(out + len, s, n);
	return len + n;
}

int inspect_path_canonical(char *path)
{
	size_t len = 0;
	const char *p;

	if (path[0] != '/')
		return -EINVAL;
	p = path;
	while (*p) {
		const char *start, *end;

		while (*p == '/')
			p++;
		start = p;
		end = strchrnul(p, '/');
		if (end > start)
			len = push_component(path, len, start, (size_t)(end - start));
		p = end;
	}
	if (len == 0)
		path[len++] = '/';
	path[len] = '\0';
	return 0;
}
