/*
 * exec_server.c - commands that need big libraries run in sibling
 * binaries: `ember serve` in `ember-server` (RocksDB, libmicrohttpd,
 * libarchive), `ember upload` and `ember symbolize --server` in
 * `ember-client` (the HTTP client over libcurl, libarchive, jansson).  Loading libraries costs
 * about 0.5-1 ms each at every start on this kind of machine (page faults
 * of relocations): the commands run per file or per address (`symbolize`,
 * `unwind`) must not pay for the server's, and the server must not pay
 * for the HTTP client's.  As git does with its git-<command> helpers,
 * `ember` execs the helper next to itself, with the same arguments.
 */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cli_exec_helper(const char *helper, char **argv)
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
	snprintf(path, sizeof(path), "%.*s/%s", slash ? (int)(slash - self) : 1,
		 slash ? self : ".", helper);
	argv[0] = path;
	execv(path, argv);
	fprintf(stderr, "ember: cannot run '%s': %s\n", path, strerror(errno));
	return 127;
}
