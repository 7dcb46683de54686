/*
 * symbolize_remote_names.c - a checked reply of POST /api/v1/symbolize
 * (wire/symbolize_json.h: symjson_reply_parse) turned into the struct
 * sym_frame the shared printer takes, with the names offline mode would
 * print, for `ember symbolize --server`.
 *
 * Names: the server sends "function" (demangled with parameters) and
 * "linkage_name" (raw; the outermost frame named after its ELF symbol),
 * which is what --functions=linkage prints with and without demangling.
 * --functions=short prints DWARF's DW_AT_name offline, which the API does
 * not carry: it is derived here from the linkage name (demangled without
 * parameters, last scope component, clone suffix dropped) through
 * libiberty, which is why this stays in cli/; see docs/cli.md for where
 * that can differ.
 */
#include "symbolize_remote.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

static enum sym_source source_of(const char *s)
{
	if (!s)
		return SYM_SOURCE_NONE;
	if (strcmp(s, "dwarf") == 0)
		return SYM_SOURCE_DWARF;
	if (strcmp(s, "dynsym") == 0)
		return SYM_SOURCE_DYNSYM;
	return SYM_SOURCE_SYMTAB; /* symtab; gopclntab is a symbol table too */
}

static bool is_mangled(const char *s)
{
	return (s[0] == '_' && (s[1] == 'Z' || s[1] == 'R')) ||
	       (s[0] == '_' && s[1] == '_' && s[2] == 'Z');
}

/* The last "::" component of a demangled name, ignoring "::" inside
 * <...>, (...), {...} and [...] ("(anonymous namespace)::f", lambdas). */
static const char *last_component(const char *s)
{
	const char *last = s;
	int depth = 0;

	for (const char *p = s; *p; p++) {
		if (*p == '<' || *p == '(' || *p == '{' || *p == '[')
			depth++;
		else if ((*p == '>' || *p == ')' || *p == '}' || *p == ']') && depth > 0)
			depth--;
		else if (depth == 0 && p[0] == ':' && p[1] == ':')
			last = p + 2, p++;
	}
	return last;
}

/* "name[abi:cxx11]" -> "name": DW_AT_name has no ABI tags. */
static void drop_abi_tags(char *s)
{
	char *tag, *end;

	while ((tag = strstr(s, "[abi:")) && (end = strchr(tag, ']')))
		memmove(tag, end + 1, strlen(end + 1) + 1);
}

/*
 * What offline --functions=short prints, from the raw name: DW_AT_name
 * for DWARF frames (approximated: no scope, no GCC clone suffix such as
 * ".constprop.0" or " [clone .cold]", no ABI tag; template arguments as
 * the demangler spells them, not as GCC does), the symbol demangled
 * without parameters otherwise.  Caller frees.
 */
static char *short_name(const char *raw, bool dwarf, bool demangle)
{
	char *d = is_mangled(raw) && (demangle || dwarf)
			  ? cplus_demangle(raw, DMGL_ANSI) : NULL;
	const char *s = d ? d : raw, *cut;
	char *out;

	if (dwarf) {
		s = last_component(s);
		cut = d ? strstr(s, " [clone ") : strchr(s, '.');
		out = strndup(s, cut ? (size_t)(cut - s) : strlen(s));
		if (out && d)
			drop_abi_tags(out);
	} else {
		out = strdup(s);
	}
	free(d);
	return out;
}

/* The name frame i is printed with, as offline mode would choose it. */
static void name_frame(struct remote_result *r, size_t i, const struct symjson_frame *f,
		       const struct cli_symbolize_opts *o)
{
	const char *fn = f->function, *raw = f->linkage_name;

	if (!raw)
		raw = fn;
	if (o->functions == CLI_FN_NONE || !raw) {
		r->names[i] = NULL;
	} else if (o->functions == CLI_FN_SHORT) {
		r->owned[i] = short_name(raw, r->frames[i].source == SYM_SOURCE_DWARF,
					 o->demangle);
		r->names[i] = r->owned[i];
	} else {
		r->names[i] = o->demangle && fn ? fn : raw;
	}
}

void remote_result_get(const struct symjson_reply *a, size_t i,
		       const struct cli_symbolize_opts *o, struct remote_result *r)
{
	const struct symjson_reply_item *it = symjson_reply_item(a, i);
	enum sym_source src = source_of(it->source);

	r->n = it->nframes < REMOTE_MAX_FRAMES ? (int)it->nframes : REMOTE_MAX_FRAMES;
	r->reason = it->error;
	for (int k = 0; k < r->n; k++) {
		const struct symjson_frame *f = &it->frames[k];

		r->frames[k] = (struct sym_frame){
			.name = f->linkage_name,
			.file = f->file,
			.line = f->line,
			.column = f->column,
			.func_start = SYM_ADDR_UNKNOWN,
			.source = src,
			.inlined = f->inlined,
		};
		r->owned[k] = NULL;
		name_frame(r, (size_t)k, f, o);
	}
}

void remote_result_release(struct remote_result *r)
{
	if (!r)
		return;
	for (int k = 0; k < r->n; k++) {
		free(r->owned[k]);
		r->owned[k] = NULL;
	}
	r->n = 0;
}
