/*
 * symbolize_output.c - llvm-symbolizer's three output shapes:
 *   LLVM: per frame "name\nfile:line:col\n", a blank line after each address
 *   GNU:  per frame "name\nfile:line\n", no blank line
 *   JSON: one object per address: {"Address","ModuleName","Symbol":[...]}
 * with --pretty-print ("name at file:line" and " (inlined by) ") and
 * --print-address variants.  JSON frames carry one extra field, "Source"
 * (dwarf, symtab, dynsym or none), and symbol-table frames "SymbolOffset"
 * (the address minus the symbol's), which llvm-symbolizer consumers ignore.
 */
#include "cli.h"

#include <inttypes.h>
#include <string.h>

/* Unlocked stdio: one thread writes; fprintf's format parsing is the
 * largest cost of a C answer otherwise. */
static void out_str(FILE *out, const char *s)
{
	fputs_unlocked(s, out);
}

static void out_u32(FILE *out, uint32_t v)
{
	char buf[11], *p = buf + sizeof(buf);

	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
	fputs_unlocked(p, out);
}

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

static void print_location(FILE *out, const struct cli_symbolize_opts *o,
			   const struct sym_frame *f)
{
	const char *file = frame_file(o, f->file);

	out_str(out, file ? file : "??");
	putc_unlocked(':', out);
	out_u32(out, f->line);
	if (o->style == CLI_STYLE_GNU) {
		if (f->discriminator) {
			out_str(out, " (discriminator ");
			out_u32(out, f->discriminator);
			putc_unlocked(')', out);
		}
	} else {
		putc_unlocked(':', out);
		out_u32(out, f->column);
	}
}

static void print_text_frame(FILE *out, const struct cli_symbolize_opts *o,
			     const struct sym_index *idx,
			     const struct sym_frame *f, int i)
{
	const char *name = idx ? frame_name(idx, o, f) : NULL;

	if (o->pretty) {
		if (i > 0)
			out_str(out, " (inlined by) ");
		if (o->functions != CLI_FN_NONE) {
			out_str(out, name ? name : "??");
			out_str(out, " at ");
		}
		print_location(out, o, f);
		putc_unlocked('\n', out);
		return;
	}
	if (o->functions != CLI_FN_NONE) {
		out_str(out, name ? name : "??");
		putc_unlocked('\n', out);
	}
	print_location(out, o, f);
	putc_unlocked('\n', out);
}

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void print_json_frame(FILE *out, const struct cli_symbolize_opts *o,
			     const struct sym_index *idx,
			     const struct sym_frame *f, uint64_t addr)
{
	const char *name = idx && o->functions != CLI_FN_NONE
				   ? frame_name(idx, o, f) : NULL;

	fprintf(out, "{\"Column\":%" PRIu32 ",\"Discriminator\":%" PRIu32
		",\"FileName\":", f->column, f->discriminator);
	json_string(out, frame_file(o, f->file));
	fputs(",\"FunctionName\":", out);
	json_string(out, name);
	fprintf(out, ",\"Line\":%" PRIu32 ",\"Source\":\"%s\",\"StartAddress\":",
		f->line, sym_source_name(f->source));
	if (f->source != SYM_SOURCE_NONE && f->func_start != SYM_ADDR_UNKNOWN)
		fprintf(out, "\"0x%" PRIx64 "\"", f->func_start);
	else
		fputs("\"\"", out);
	fputs(",\"StartFileName\":", out);
	json_string(out, frame_file(o, f->decl_file));
	fprintf(out, ",\"StartLine\":%" PRIu32, f->decl_line);
	/* name + offset, the whole answer of a symbol-table frame */
	if ((f->source == SYM_SOURCE_SYMTAB || f->source == SYM_SOURCE_DYNSYM) &&
	    f->func_start != SYM_ADDR_UNKNOWN && addr >= f->func_start)
		fprintf(out, ",\"SymbolOffset\":\"0x%" PRIx64 "\"",
			addr - f->func_start);
	fputc('}', out);
}

static void print_json(FILE *out, const struct cli_symbolize_opts *o,
		       const char *module, const struct sym_index *idx,
		       uint64_t addr, const struct sym_frame *frames, int n,
		       int err)
{
	static const struct sym_frame none = { .source = SYM_SOURCE_NONE };

	fprintf(out, "{\"Address\":\"0x%" PRIx64 "\",", addr);
	if (err) {
		fputs("\"Error\":{\"Message\":", out);
		json_string(out, sym_strerror(err));
		fputs("},", out);
	}
	fputs("\"ModuleName\":", out);
	json_string(out, module);
	fputs(",\"Symbol\":[", out);
	for (int i = 0; i < (n > 0 ? n : 1); i++) {
		if (i)
			fputc(',', out);
		print_json_frame(out, o, idx, n > 0 ? &frames[i] : &none, addr);
	}
	fputs("]}\n", out);
}

void cli_print_answer(FILE *out, const struct cli_symbolize_opts *o,
		      const char *module, const struct sym_index *idx,
		      uint64_t addr, const struct sym_frame *frames, int n,
		      int err)
{
	static const struct sym_frame none = { .source = SYM_SOURCE_NONE };
	struct sym_frame one;

	if (!o->inlines && n > 1)
		n = collapse_inlines(frames, n, &one), frames = &one;
	if (o->style == CLI_STYLE_JSON) {
		print_json(out, o, module, idx, addr, frames, n, err);
		return;
	}
	if (o->print_address)
		fprintf(out, o->pretty ? "0x%" PRIx64 ": " : "0x%" PRIx64 "\n",
			addr);
	if (n <= 0)
		print_text_frame(out, o, idx, &none, 0);
	for (int i = 0; i < n; i++)
		print_text_frame(out, o, idx, &frames[i], i);
	if (o->style == CLI_STYLE_LLVM)
		putc_unlocked('\n', out);
}

void cli_print_invalid(FILE *out, const struct cli_symbolize_opts *o,
		       const char *module, const char *line, size_t len)
{
	if (o->style == CLI_STYLE_JSON) {
		fputs("{\"Error\":{\"Message\":\"unable to parse arguments: ", out);
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)line[i];

			if (c == '"' || c == '\\')
				fprintf(out, "\\%c", c);
			else if (c >= 0x20)
				fputc(c, out);
		}
		fputs("\"},\"ModuleName\":", out);
		json_string(out, module);
		fputs("}\n", out);
		return;
	}
	fwrite(line, 1, len, out);
	fputc('\n', out);
}
