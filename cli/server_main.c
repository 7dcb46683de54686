/*
 * server_main.c - `ember-server`: the commands that need the server's
 * libraries, `serve`, `upload` and `symbolize --server`.  Users run them
 * as `ember serve`, `ember upload` and `ember symbolize --server URL`
 * (exec_server.c); running `ember-server serve` directly works the same.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "serve") == 0)
		return cmd_serve(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "upload") == 0)
		return cmd_upload(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "symbolize") == 0)
		return cmd_symbolize_remote(argc - 1, argv + 1);
	fputs("usage: ember-server serve|upload|symbolize [options] (run as `ember serve`,\n"
	      "`ember upload`, `ember symbolize --server URL`)\n",
	      stderr);
	return 2;
}
