/*
 * symbolize_output.c - llvm-symbolizer's three output shapes:
 *   LLVM: per frame "name\nfile:line:col\n", a blank line after each address
 *   GNU:  per frame "name\nfile:line\n", no blank line
 *   JSON: one object per address: {"Address","ModuleName","Symbol":[...]}
 * with --pretty-print ("name at file:line" and " (inlined by) ") and
 * --print-address variants.  JSON frames carry one extra field, "Source"
 * (dwarf, gopclntab, symtab, dynsym or none), and symbol-table frames
 * "SymbolOffset" (the address minus the symbol's), which llvm-symbolizer
 * consumers ignore.
 * Both modes print through here: offline answers name their frames through
 * the index, a server's answers (symbolize_remote.c) bring the names.
 */
#include "cli.h"
#include "common.h"

#include <string.h>

static const char *frame_name(const struct sym_index *idx,
			      const struct cli_symbolize_opts *o,
			      const struct sym_frame *f)
{
	if (!f->name)
		return NULL;
	if (o->functions == CLI_FN_SHORT && f->short_name)
		return f->short_name;
	if (!o->demangle)
		return f->name;
	return sym_frame_demangled(idx, f, o->functions != CLI_FN_SHORT);
}

static const char *frame_file(const struct cli_symbolize_opts *o,
			      const char *file)
{
	const char *s;

	if (!file || !o->basenames)
		return file;
	s = strrchr(file, '/');
	return s ? s + 1 : file;
}

/* llvm-symbolizer without --inlines: outer name, innermost location. */
static int collapse_inlines(const struct sym_frame *frames, int n,
			    struct sym_frame *one)
{
	if (n <= 1)
		return n;
	*one = frames[n - 1];
	one->file = frames[0].file;
	one->line = frames[0].line;
	one->column = frames[0].column;
	one->inlined = false;
	return 1;
}

static void print_location(struct cli_out *out,
			   const struct cli_symbolize_opts *o,
			   const struct sym_frame *f)
{
	const char *file = frame_file(o, f->file);

	cli_out_str(out, file ? file : "??");
	cli_out_char(out, ':');
	cli_out_u64(out, f->line);
	if (o->style == CLI_STYLE_GNU) {
		if (f->discriminator) {
			cli_out_str(out, " (discriminator ");
			cli_out_u64(out, f->discriminator);
			cli_out_char(out, ')');
		}
	} else {
		cli_out_char(out, ':');
		cli_out_u64(out, f->column);
	}
}

static void print_text_frame(struct cli_out *out,
			     const struct cli_symbolize_opts *o,
			     const struct sym_frame *f, const char *name, int i)
{
	if (o->pretty) {
		if (i > 0)
			cli_out_str(out, " (inlined by) ");
		if (o->functions != CLI_FN_NONE) {
			cli_out_str(out, name ? name : "??");
			cli_out_str(out, " at ");
		}
		print_location(out, o, f);
		cli_out_char(out, '\n');
		return;
	}
	if (o->functions != CLI_FN_NONE) {
		cli_out_str(out, name ? name : "??");
		cli_out_char(out, '\n');
	}
	print_location(out, o, f);
	cli_out_char(out, '\n');
}

static int out_write(void *ctx, const void *data, size_t len)
{
	cli_out_write(ctx, data, len);
	return 0;
}

/* The characters of s[0..n) escaped for the inside of a JSON string, as
 * LLVM's JSON writer escapes them (common.h's ember_json_escape). */
static void json_chars(struct cli_out *out, const char *s, size_t n)
{
	ember_json_escape(s, n, out_write, out);
}

static void json_string(struct cli_out *out, const char *s)
{
	cli_out_char(out, '"');
	if (s)
		json_chars(out, s, strlen(s));
	cli_out_char(out, '"');
}

/* ,"Key":number */
static void json_num(struct cli_out *out, const char *key, uint64_t v)
{
	cli_out_str(out, key);
	cli_out_u64(out, v);
}

static void print_json_frame(struct cli_out *out,
			     const struct cli_symbolize_opts *o,
			     const struct sym_frame *f, const char *name,
			     uint64_t addr)
{
	if (o->functions == CLI_FN_NONE)
		name = NULL;
	json_num(out, "{\"Column\":", f->column);
	json_num(out, ",\"Discriminator\":", f->discriminator);
	cli_out_str(out, ",\"FileName\":");
	json_string(out, frame_file(o, f->file));
	cli_out_str(out, ",\"FunctionName\":");
	json_string(out, name);
	json_num(out, ",\"Line\":", f->line);
	cli_out_str(out, ",\"Source\":\"");
	cli_out_str(out, sym_source_name(f->source));
	cli_out_str(out, "\",\"StartAddress\":\"");
	if (f->source != SYM_SOURCE_NONE && f->func_start != SYM_ADDR_UNKNOWN)
		cli_out_hex(out, f->func_start);
	cli_out_str(out, "\",\"StartFileName\":");
	json_string(out, frame_file(o, f->decl_file));
	json_num(out, ",\"StartLine\":", f->decl_line);
	/* name + offset, the whole answer of a symbol-table frame */
	if ((f->source == SYM_SOURCE_SYMTAB || f->source == SYM_SOURCE_DYNSYM) &&
	    f->func_start != SYM_ADDR_UNKNOWN && addr >= f->func_start) {
		cli_out_str(out, ",\"SymbolOffset\":\"");
		cli_out_hex(out, addr - f->func_start);
		cli_out_char(out, '"');
	}
	cli_out_char(out, '}');
}

/* The display name of frame i of a (NULL when unknown). */
static const char *answer_name(const struct cli_symbolize_opts *o,
			       const struct cli_answer *a, int i)
{
	if (a->names)
		return a->names[i];
	return a->idx ? frame_name(a->idx, o, &a->frames[i]) : NULL;
}

static void print_json(struct cli_out *out, const struct cli_symbolize_opts *o,
		       const struct cli_answer *a, const struct sym_frame *frames,
		       const char *const *names, int n)
{
	static const struct sym_frame none = { .source = SYM_SOURCE_NONE };

	cli_out_str(out, "{\"Address\":\"");
	cli_out_hex(out, a->addr);
	cli_out_str(out, "\",");
	if (a->error) {
		cli_out_str(out, "\"Error\":{\"Message\":");
		json_string(out, a->error);
		cli_out_str(out, "},");
	}
	cli_out_str(out, "\"ModuleName\":");
	json_string(out, a->module);
	cli_out_str(out, ",\"Symbol\":[");
	for (int i = 0; i < (n > 0 ? n : 1); i++) {
		if (i)
			cli_out_char(out, ',');
		print_json_frame(out, o, n > 0 ? &frames[i] : &none,
				 n > 0 ? names[i] : NULL, a->addr);
	}
	cli_out_str(out, "]}\n");
}

#define MAX_PRINTED 256 /* frames of one address; deeper inlining is cut */

void cli_print_answer(struct cli_out *out, const struct cli_symbolize_opts *o,
		      const struct cli_answer *a)
{
	static const struct sym_frame none = { .source = SYM_SOURCE_NONE };
	const struct sym_frame *frames = a->frames;
	const char *names[MAX_PRINTED];
	struct sym_frame one;
	int n = a->n < MAX_PRINTED ? a->n : MAX_PRINTED;

	if (!o->inlines && n > 1) {
		names[0] = o->functions == CLI_FN_NONE ? NULL : answer_name(o, a, n - 1);
		n = collapse_inlines(frames, n, &one), frames = &one;
	} else {
		for (int i = 0; i < n; i++)
			names[i] = o->functions == CLI_FN_NONE ? NULL : answer_name(o, a, i);
	}
	if (o->style == CLI_STYLE_JSON) {
		print_json(out, o, a, frames, names, n);
		return;
	}
	if (o->print_address) {
		cli_out_hex(out, a->addr);
		cli_out_str(out, o->pretty ? ": " : "\n");
	}
	if (n <= 0)
		print_text_frame(out, o, &none, NULL, 0);
	for (int i = 0; i < n; i++)
		print_text_frame(out, o, &frames[i], names[i], i);
	if (o->style == CLI_STYLE_LLVM)
		cli_out_char(out, '\n');
}

void cli_print_invalid(struct cli_out *out, const struct cli_symbolize_opts *o,
		       const char *module, const char *line, size_t len)
{
	if (o->style == CLI_STYLE_JSON) {
		cli_out_str(out, "{\"Error\":{\"Message\":\"unable to parse arguments: ");
		json_chars(out, line, len);
		cli_out_str(out, "\"},\"ModuleName\":");
		json_string(out, module);
		cli_out_str(out, "}\n");
		return;
	}
	cli_out_write(out, line, len);
	cli_out_char(out, '\n');
}
