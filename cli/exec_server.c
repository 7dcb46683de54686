/*
 * exec_server.c - `ember serve` and `ember upload` run in `ember-server`,
 * the sibling binary that links the server's libraries (RocksDB,
 * libmicrohttpd, libcurl, libarchive, ...).  Loading those costs 35-80 ms
 * at every start on this kind of machine; the commands that are run per
 * file or per address (`symbolize`, `unwind`) must not pay it.  As git
 * does with its git-<command> helpers, `ember` execs the helper next to
 * itself, with the same arguments.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cli_exec_server(int argc, char **argv)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0) {
		fprintf(stderr, "ember: cannot find my own binary: %s\n", strerror(errno));
		return 127;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	snprintf(path, sizeof(path), "%.*s/ember-server", slash ? (int)(slash - self) : 1,
		 slash ? self : ".");
	argv[0] = path;
	execv(path, argv);
	fprintf(stderr, "ember: cannot run '%s': %s\n", path, strerror(errno));
	return 127;
}
