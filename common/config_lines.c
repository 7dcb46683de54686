/*
 * config_lines.c - the lines of a small configuration file of Ember's
 * own (`ember serve --tokens`, `--limits`, `--rules`): one entry a line, blank lines
 * and '#' comments skipped, each entry passed on with its line number so
 * that a refusal can name it.
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t ember_config_line_count(const char *text, size_t len)
{
	size_t n = 1;

	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

int ember_config_lines(char *text, int (*fn)(void *arg, unsigned no, char *line), void *arg)
{
	unsigned no = 0;

	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		no++;
		line += strspn(line, " \t\r");
		if (*line && *line != '#')
			EMBER_FORWARD_IF_ERROR(fn(arg, no, line));
	}
	return 0;
}

int ember_config_read(const char *path, size_t max, char **text, size_t *len, char *why,
		      size_t why_size)
{
	FILE *f = fopen(path, "re");
	char *t = malloc(max + 2);
	size_t n = 0;
	int err = 0;

	if (!f || !t) {
		err = !f ? -errno : -ENOMEM;
	} else {
		n = fread(t, 1, max + 1, f);
		err = ferror(f) ? -EIO : 0;
	}
	if (f)
		fclose(f);
	if (err) {
		snprintf(why, why_size, "cannot read '%s': %s", path, strerror(-err));
		free(t);
		return err;
	}
	t[n] = '\0';
	*text = t;
	*len = n;
	return 0;
}
