/*
 * symbolize_opts.c - the command line of `ember symbolize`: llvm-symbolizer's
 * flags (docs/cli.md), single- or double-dash, NAME=VALUE or NAME VALUE.
 * Shared by both binaries: `ember` parses it to symbolize locally or, with
 * --server, to check it before exec'ing `ember-server symbolize`, which
 * parses the same arguments again (symbolize_remote.c).
 */
#include "cli.h"
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void cli_symbolize_usage(FILE *f)
{
	fputs("usage: ember symbolize [options] [ADDRESS...]\n"
	      "  --obj=FILE, -e FILE        the ELF to symbolize in (else each input\n"
	      "                             line names it: [CODE|DATA] FILE ADDRESS)\n"
	      "  --server=URL               ask an `ember serve` server instead of\n"
	      "                             reading a file (needs --build-id)\n"
	      "  --build-id=ID              the module, by GNU build ID (hex), with --server\n"
	      "  --inlines, -i              print inlined frames (default)\n"
	      "  --no-inlines               outermost function only\n"
	      "  --functions=linkage|short|none, -f\n"
	      "  --demangle, -C / --no-demangle\n"
	      "  --output-style=LLVM|GNU|JSON\n"
	      "  --print-address, -a        print the address first\n"
	      "  --pretty-print, -p         one line per frame\n"
	      "  --basenames, -s            file names without directories\n"
	      "  --debug-file-directory=DIR root of .build-id/ and debuglink lookups\n"
	      "  --file-offsets             input addresses are file offsets, not\n"
	      "                             ELF virtual addresses\n"
	      "  --stats                    print index figures to stderr at exit\n"
	      "Addresses: 0x-prefixed hex or decimal.  Without ADDRESS arguments,\n"
	      "one request per line on stdin.\n",
	      f);
}

/* "true"/"false" values of llvm-style boolean options ("-demangle=false"). */
static int parse_bool(const char *v, bool *out)
{
	if (!v || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static int parse_style(const char *v, enum cli_style *s)
{
	if (v && strcmp(v, "LLVM") == 0)
		*s = CLI_STYLE_LLVM;
	else if (v && strcmp(v, "GNU") == 0)
		*s = CLI_STYLE_GNU;
	else if (v && strcmp(v, "JSON") == 0)
		*s = CLI_STYLE_JSON;
	else
		return -EINVAL;
	return 0;
}

static int parse_functions(const char *v, enum cli_functions *f)
{
	if (!v || strcmp(v, "linkage") == 0)
		*f = CLI_FN_LINKAGE;
	else if (strcmp(v, "short") == 0)
		*f = CLI_FN_SHORT;
	else if (strcmp(v, "none") == 0)
		*f = CLI_FN_NONE;
	else
		return -EINVAL;
	return 0;
}

/* An option that takes a value: "NAME=VALUE" or "NAME VALUE"; returns 1
 * if it took the next argument. */
static int take_value(const char **dst, const char *val, const char *next)
{
	*dst = val ? val : next;
	return *dst ? (val ? 0 : 1) : -EINVAL;
}

/* A long option NAME or NAME=VALUE: returns 1 if it took the next arg. */
static int parse_long(struct cli_symbolize_opts *o, const char *name,
		      const char *val, const char *next)
{
	size_t n = strcspn(name, "=");
	char key[64];

	if (n >= sizeof(key))
		return -EINVAL;
	memcpy(key, name, n);
	key[n] = '\0';
	if (!strcmp(key, "obj") || !strcmp(key, "exe") || !strcmp(key, "e"))
		return take_value(&o->obj, val, next);
	if (!strcmp(key, "debug-file-directory"))
		return take_value(&o->debug_dir, val, next);
	if (!strcmp(key, "server"))
		return take_value(&o->server, val, next);
	if (!strcmp(key, "build-id"))
		return take_value(&o->build_id, val, next);
	if (!strcmp(key, "inlines") || !strcmp(key, "inlining") || !strcmp(key, "i"))
		return parse_bool(val, &o->inlines);
	if (!strcmp(key, "no-inlines"))
		return o->inlines = false, 0;
	if (!strcmp(key, "demangle") || !strcmp(key, "C"))
		return parse_bool(val, &o->demangle);
	if (!strcmp(key, "no-demangle"))
		return o->demangle = false, 0;
	if (!strcmp(key, "functions") || !strcmp(key, "f"))
		return parse_functions(val, &o->functions);
	if (!strcmp(key, "output-style"))
		return parse_style(val, &o->style);
	if (!strcmp(key, "print-address") || !strcmp(key, "addresses") || !strcmp(key, "a"))
		return parse_bool(val, &o->print_address);
	if (!strcmp(key, "pretty-print") || !strcmp(key, "p"))
		return parse_bool(val, &o->pretty);
	if (!strcmp(key, "basenames") || !strcmp(key, "s"))
		return o->basenames = true, 0;
	if (!strcmp(key, "file-offsets"))
		return o->addr_kind = SYM_ADDR_FILE_OFFSET, 0;
	if (!strcmp(key, "stats"))
		return o->stats = true, 0;
	return -EINVAL;
}

/* Even-length hex of 2..128 digits, as the server takes it. */
static bool is_build_id(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	return s[n] == '\0' && n >= 2 && n % 2 == 0 && n <= 2 * EMBER_BUILD_ID_MAX;
}

/* The combinations that make no sense: a message, or NULL. */
static const char *check_server_opts(const struct cli_symbolize_opts *o)
{
	if (o->server && o->obj)
		return "--obj and --server cannot be used together";
	if (o->server && !o->build_id)
		return "--server needs --build-id ID";
	if (o->build_id && !o->server)
		return "--build-id needs --server URL";
	if (o->build_id && !is_build_id(o->build_id))
		return "--build-id: not a build ID (even-length hex, 2 to 128 digits)";
	if (o->server && !o->server[0])
		return "--server: empty URL";
	return NULL;
}

int cli_symbolize_parse_opts(struct cli_symbolize_opts *o, int argc, char **argv)
{
	const char *why;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *name, *eq;
		int r;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0' || (a[1] >= '0' && a[1] <= '9'))
			break;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return -2;
		name = a + (a[1] == '-' ? 2 : 1);
		eq = strchr(name, '=');
		r = parse_long(o, name, eq ? eq + 1 : NULL,
			       i + 1 < argc ? argv[i + 1] : NULL);
		if (r < 0) {
			fprintf(stderr, "ember symbolize: '%s': unknown option or bad value\n", a);
			return -1;
		}
		i += r;
	}
	why = check_server_opts(o);
	if (why) {
		fprintf(stderr, "ember symbolize: %s\n", why);
		return -1;
	}
	return i;
}
