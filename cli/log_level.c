/*
 * log_level.c - `--log-level=error|warn|info|debug` and EMBER_LOG_LEVEL,
 * for every command of the three binaries: the option is taken out of
 * argv before the command parses its own options, so each command has it
 * without knowing of it.  The option wins over the environment variable,
 * which wins over the command's default (info for the server, warn for
 * the others).
 */
#include "cli.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_level(const char *prog, const char *from, const char *s)
{
	enum ember_log_level l;

	if (ember_log_level_parse(s, &l)) {
		fprintf(stderr, "%s: bad log level '%s' in %s (error, warn, info or debug)\n",
			prog, s, from);
		return -1;
	}
	ember_log_set_level(l);
	return 0;
}

/* Drop argv[i .. i + n) (argv stays NULL-terminated). */
static void drop_args(int *argc, char **argv, int i, int n)
{
	memmove(argv + i, argv + i + n, (size_t)(*argc - i - n + 1) * sizeof(*argv));
	*argc -= n;
}

int cli_log_setup(const char *prog, int *argc, char **argv, enum ember_log_level dflt)
{
	const char *env = getenv("EMBER_LOG_LEVEL");
	static const char opt[] = "--log-level";
	size_t n = sizeof(opt) - 1;

	ember_log_set_level(dflt);
	if (env && *env && set_level(prog, "EMBER_LOG_LEVEL", env))
		return -1;
	for (int i = 1; i < *argc;) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			break;
		if (strncmp(a, opt, n) != 0 || (a[n] != '=' && a[n] != '\0')) {
			i++;
			continue;
		}
		if (a[n] == '=') {
			if (set_level(prog, opt, a + n + 1))
				return -1;
			drop_args(argc, argv, i, 1);
		} else if (i + 1 < *argc) {
			if (set_level(prog, opt, argv[i + 1]))
				return -1;
			drop_args(argc, argv, i, 2);
		} else {
			fprintf(stderr, "%s: %s needs a value (error, warn, info or debug)\n",
				prog, opt);
			return -1;
		}
	}
	return 0;
}
