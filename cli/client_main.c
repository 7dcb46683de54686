/*
 * client_main.c - `ember-client`: the commands that talk to a server over
 * HTTP, `ember upload`, `ember symbolize --server`, `ember query` and
 * `ember diff` (the HTTP client, which loads libcurl; jansson, libarchive;
 * the profile model, not the store, for `ember diff` of two files);
 * `ember` execs it (exec_server.c).  Running `ember-client upload ...`
 * directly works the same.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc >= 2 && cli_log_setup("ember", &argc, argv, EMBER_LOG_WARN))
		return 2;
	if (argc >= 2 && strcmp(argv[1], "upload") == 0)
		return cmd_upload(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "symbolize") == 0)
		return cmd_symbolize_remote(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "query") == 0)
		return cmd_query(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "diff") == 0)
		return cmd_diff(argc - 1, argv + 1);
	fputs("usage: ember-client upload|symbolize|query|diff [options] (run as `ember upload`,\n"
	      "`ember symbolize --server URL`, `ember query`, `ember diff`)\n",
	      stderr);
	return 2;
}
