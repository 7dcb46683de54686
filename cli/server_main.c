/*
 * server_main.c - `ember-server`: `ember serve`, in a binary of its own
 * because it links the server's libraries (RocksDB, libmicrohttpd,
 * libarchive); `ember` execs it (exec_server.c).  Running `ember-server
 * serve` directly works the same.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "serve") == 0) {
		if (cli_log_setup("ember serve", &argc, argv, EMBER_LOG_INFO))
			return 2;
		return cmd_serve(argc - 1, argv + 1);
	}
	fputs("usage: ember-server serve [options] (run as `ember serve`)\n", stderr);
	return 2;
}
