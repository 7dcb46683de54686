/*
 * main.c - the `ember` binary: dispatch to subcommands.  Installed or
 * linked under the name `llvm-symbolizer`, it behaves as
 * `ember symbolize`, so tools that run llvm-symbolizer (pprof with
 * PPROF_TOOLS) use Ember unchanged.
 */
#include "cli.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: ember <command> [options]\n"
	      "\n"
	      "commands:\n"
	      "  symbolize   address -> function, file, line, inlined frames\n"
	      "              (llvm-symbolizer compatible; see `ember symbolize --help`)\n"
	      "  serve       the debuginfo store and debuginfod-compatible server\n"
	      "  upload      send executables, debug info and sources to a server\n"
	      "  query       a server's profiles merged: top table, flame graph, pprof...\n"
	      "  diff        two selections (or two pprof files) compared: regressions first\n"
	      "  unwind      compile CFI into unwind tables, dump them (`ember unwind --help`)\n"
	      "  help        this text\n"
	      "\n"
	      "Every command takes --log-level=error|warn|info|debug (or EMBER_LOG_LEVEL;\n"
	      "default: info for serve, warn for the others).\n"
	      "Installed as `llvm-symbolizer`, ember runs `symbolize`.\n",
	      f);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

int main(int argc, char **argv)
{
	const char *self = argc > 0 ? base_name(argv[0]) : "ember";

	if (strncmp(self, "llvm-symbolizer", 15) == 0)
		return cli_log_setup("llvm-symbolizer", &argc, argv, EMBER_LOG_WARN)
			       ? 2 : cmd_symbolize(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* the helpers (serve, upload, symbolize --server) read it themselves */
	if (strcmp(argv[1], "symbolize") == 0 || strcmp(argv[1], "unwind") == 0) {
		argc--;
		argv++;
		if (cli_log_setup("ember", &argc, argv, EMBER_LOG_WARN))
			return 2;
		return strcmp(argv[0], "unwind") == 0 ? cmd_unwind(argc, argv)
						      : cmd_symbolize(argc, argv);
	}
	if (strcmp(argv[1], "serve") == 0)
		return cli_exec_helper("ember-server", argv);
	if (strcmp(argv[1], "query") == 0 || strcmp(argv[1], "diff") == 0)
		return cli_exec_helper("ember-client", argv);
	if (strcmp(argv[1], "upload") == 0)
		return cli_exec_helper("ember-client", argv);
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "ember: '%s' is not an ember command\n", argv[1]);
	usage(stderr);
	return 2;
}
