/*
 * source_answers.c - a function's source view (docs/http-api.md, "Source
 * view"; GET /api/v1/source and /api/v1/diff/source): the selection (a
 * diff's two) merged as a query merges it, the function's self and total
 * per source line (pmodel_result_source), and each of its files' text read
 * from the debuginfo store by the build ID of the mapping its frames weigh
 * most in (the lookup of debuginfod's /buildid/ID/source/PATH, which
 * `ember upload --sources` fills), as JSON or as pprof -list's listing.
 *
 * A file the store has no text of is answered without it, saying why and
 * which build ID and module an upload would need; a store that cannot be
 * read is the answer's error (never "no source").
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ANSWER_CAP ((size_t)512 << 20)
#define SOURCE_MAX_BYTES ((size_t)4 << 20)
#define SOURCE_MAX_FILES 16
#define CONTEXT_LINES 5 /* shown around the function's lines in text */

enum { BASE, NEW };

/* One file of the answer: its values on each side, and its text. */
struct listing_file {
	const char *file;
	const struct pmodel_source_file *side[2]; /* NULL: none of that side */
	struct ember_buf text;
	bool has_text;
	const char *missing;		/* why not, when !has_text */
	const char *build_id, *module;	/* of the text, or of the upload it needs */
};

struct listing {
	const struct profsvc_source_opts *o;
	struct pmodel_result *r[2];	/* a query's base NULL */
	struct pmodel_source *src[2];
	struct listing_file *files;
	size_t n;
};

static const char *const missing_text[][2] = {
	{ "no_file", "the profile names no source file for these frames" },
	{ "no_build_id", "the frames' mapping has no build ID to look the source up by" },
	{ "not_stored", "the debuginfo store has no source of this path for the build ID: "
			"ember upload --sources of the binary adds it" },
	{ "too_large", "the source file is larger than 4 MiB" },
	{ "not_read", "only the 16 heaviest files of the function are read" },
};

static const char *missing_message(const char *code)
{
	for (size_t i = 0; i < sizeof(missing_text) / sizeof(missing_text[0]); i++)
		if (!strcmp(code, missing_text[i][0]))
			return missing_text[i][1];
	return code;
}

/* ---- the files and their text ---------------------------------------------- */

static int add_file(struct listing *l, const struct pmodel_source_file *f, int side)
{
	struct listing_file *e;

	if (l->o->file && strcmp(l->o->file, f->file))
		return 0;
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->files[i].file, f->file)) {
			l->files[i].side[side] = f;
			return 0;
		}
	e = realloc(l->files, (l->n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	l->files = e;
	e = &l->files[l->n++];
	*e = (struct listing_file){ .file = f->file, .build_id = "", .module = "" };
	e->side[side] = f;
	ember_buf_init(&e->text, SOURCE_MAX_BYTES);
	return 0;
}

/* The new side's files (heaviest first), then the base's it lacks. */
static int gather_files(struct listing *l)
{
	for (int side = NEW; side >= BASE; side--)
		for (size_t i = 0; l->src[side] && i < l->src[side]->n_files; i++)
			EMBER_FORWARD_IF_ERROR(add_file(l, &l->src[side]->files[i], side));
	return 0;
}

static int read_fd(int fd, struct ember_buf *b)
{
	char chunk[65536];
	ssize_t n;

	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		EMBER_FORWARD_IF_ERROR(ember_buf_append(b, chunk, (size_t)n));
	}
	return 0;
}

/* e's text of build_id from store: 0 (read, or e->missing set when too
 * large), -ENOENT (none stored), or the store's error. */
static int read_text(struct store *store, const char *build_id, struct listing_file *e)
{
	struct store_artifact a;
	int fd, err = store_find_source(store, build_id, e->file, &a);

	if (err)
		return err;
	if (a.size > SOURCE_MAX_BYTES) {
		e->missing = "too_large";
		return 0;
	}
	err = store_artifact_open(store, &a, &fd);
	if (err)
		return err == -ENOENT ? -EIO : err; /* a record without its file */
	err = read_fd(fd, &e->text);
	close(fd);
	e->has_text = !err;
	return err == -E2BIG ? -EIO : err; /* grown past its record's size */
}

/* e's text by the new side's build ID, else the base's; e->missing set
 * when neither has one stored.  0 or the store's error. */
static int find_text(struct store *store, struct listing_file *e)
{
	for (int side = NEW; side >= BASE; side--) {
		const struct pmodel_source_file *f = e->side[side];
		int err;

		if (!f || !*f->build_id)
			continue;
		if (!*e->build_id) { /* the upload an answer without text names */
			e->build_id = f->build_id;
			e->module = f->module;
		}
		err = read_text(store, f->build_id, e);
		if (err == -ENOENT)
			continue;
		if (!err) {
			e->build_id = f->build_id;
			e->module = f->module;
		}
		return err;
	}
	e->missing = *e->build_id ? "not_stored" : "no_build_id";
	if (!*e->module) /* no build ID: the module that has none */
		e->module = e->side[NEW] ? e->side[NEW]->module : e->side[BASE]->module;
	return 0;
}

static int read_texts(struct profsvc *s, struct listing *l)
{
	struct store *store = symsvc_store(s->symbols);

	for (size_t i = 0; i < l->n; i++) {
		struct listing_file *e = &l->files[i];

		if (!*e->file)
			e->missing = "no_file";
		else if (i >= SOURCE_MAX_FILES)
			e->missing = "not_read";
		else
			EMBER_FORWARD_IF_ERROR(find_text(store, e));
	}
	return 0;
}

static void listing_release(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		ember_buf_release(&l->files[i].text);
	free(l->files);
	for (int side = BASE; side <= NEW; side++) {
		pmodel_source_free(l->src[side]);
		pmodel_result_free(l->r[side]);
	}
}

/* ---- JSON ---------------------------------------------------------------------- */

/* The side's values under its prefix ("" for a query's one side). */
static int json_values(struct ember_buf *b, const struct listing *l, int side, int64_t self,
		       int64_t total)
{
	const char *p = l->r[BASE] ? side == BASE ? "base_" : "new_" : "";

	return ember_buf_appendf(b, ",\"%sself\":%" PRId64 ",\"%stotal\":%" PRId64, p, self, p,
				 total);
}

/* Line no's values on each side (zeros where a side has none). */
static int json_line(struct ember_buf *b, const struct listing *l, const struct listing_file *e,
		     size_t *at, int64_t no)
{
	int err = ember_buf_appendf(b, "{\"line\":%" PRId64, no);

	for (int side = BASE; !err && side <= NEW; side++) {
		const struct pmodel_source_file *f = e->side[side];
		bool here = f && at[side] < f->n_lines && f->lines[at[side]].line == no;

		if (!l->r[side])
			continue;
		err = json_values(b, l, side, here ? f->lines[at[side]].self : 0,
				  here ? f->lines[at[side]].total : 0);
		at[side] += here;
	}
	return err ? err : ember_buf_appendf(b, "}");
}

/* The smallest line number either side has left, or INT64_MAX. */
static int64_t next_line(const struct listing_file *e, const size_t *at)
{
	int64_t no = INT64_MAX;

	for (int side = BASE; side <= NEW; side++)
		if (e->side[side] && at[side] < e->side[side]->n_lines &&
		    e->side[side]->lines[at[side]].line < no)
			no = e->side[side]->lines[at[side]].line;
	return no;
}

static int json_lines(struct ember_buf *b, const struct listing *l, const struct listing_file *e)
{
	size_t at[2] = { 0, 0 };
	int err = ember_buf_appendf(b, ",\"lines\":[");

	for (int64_t no; !err && (no = next_line(e, at)) != INT64_MAX;) {
		err = at[0] + at[1] ? ember_buf_putc(b, ',') : 0;
		err = err ? err : json_line(b, l, e, at, no);
	}
	return err ? err : ember_buf_appendf(b, "]");
}

/* "text":[lines] (a final newline ends the last line, no empty one). */
static int json_text(struct ember_buf *b, const struct ember_buf *t)
{
	const char *p = t->data ? t->data : "", *end = p + t->len;
	int err = ember_buf_appendf(b, ",\"text\":[");

	for (bool first = true; !err && p < end; first = false) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		err = first ? 0 : ember_buf_putc(b, ',');
		err = err ? err : ember_json_str(b, p, n && p[n - 1] == '\r' ? n - 1 : n);
		p += n + 1;
	}
	return err ? err : ember_buf_appendf(b, "]");
}

static int json_str_field(struct ember_buf *b, const char *name, const char *v)
{
	int err = ember_buf_appendf(b, ",\"%s\":", name);

	return err ? err : ember_json_str(b, v, strlen(v));
}

static int json_file(struct ember_buf *b, const struct listing *l, const struct listing_file *e)
{
	int err = ember_buf_appendf(b, "{\"file\":");

	err = err ? err : ember_json_str(b, e->file, strlen(e->file));
	err = err ? err : json_str_field(b, "build_id", e->build_id);
	err = err ? err : json_str_field(b, "module", e->module);
	for (int side = BASE; !err && side <= NEW; side++)
		if (l->r[side])
			err = json_values(b, l, side, e->side[side] ? e->side[side]->self : 0,
					  e->side[side] ? e->side[side]->total : 0);
	err = err ? err : json_lines(b, l, e);
	if (!err && e->has_text)
		err = json_text(b, &e->text);
	if (!err && !e->has_text) {
		err = ember_buf_appendf(b, ",\"missing\":{\"reason\":\"%s\"", e->missing);
		err = err ? err : json_str_field(b, "message", missing_message(e->missing));
		err = err ? err : ember_buf_appendf(b, "}");
	}
	return err ? err : ember_buf_appendf(b, "}");
}

/* The side's selection values (the diff's under its prefix). */
static int json_side(struct ember_buf *b, const struct listing *l, int side)
{
	struct pmodel_result_info ri;
	const char *p = l->r[BASE] ? side == BASE ? "base_" : "new_" : "";

	pmodel_result_info(l->r[side], &ri);
	return ember_buf_appendf(b,
				 ",\"%stotal\":%" PRId64 ",\"%sprofiles\":%" PRIu64
				 ",\"%sfunction_self\":%" PRId64 ",\"%sfunction_total\":%" PRId64,
				 p, ri.total, p, ri.profiles, p, l->src[side]->self, p,
				 l->src[side]->total);
}

static int write_json(const struct listing *l, struct ember_buf *b)
{
	struct pmodel_result_info ri;
	int err;

	pmodel_result_info(l->r[NEW], &ri);
	err = ember_buf_appendf(b, "{\"type\":");
	err = err ? err : ember_json_str(b, ri.type, strlen(ri.type));
	err = err ? err : json_str_field(b, "unit", l->r[NEW]->sample_unit);
	err = err ? err : json_str_field(b, "function", l->o->function);
	for (int side = BASE; !err && side <= NEW; side++)
		if (l->r[side])
			err = json_side(b, l, side);
	err = err ? err : ember_buf_appendf(b, ",\"files\":[");
	for (size_t i = 0; !err && i < l->n; i++) {
		err = i ? ember_buf_putc(b, ',') : 0;
		err = err ? err : json_file(b, l, &l->files[i]);
	}
	return err ? err : ember_buf_appendf(b, "]}\n");
}

/* ---- text: pprof -list's listing ---------------------------------------------- */

/* A value cell: "." for none, else human units (a query) or a share of
 * the side's total in percent (a diff), right-aligned in 11 columns. */
static int text_cell(struct ember_buf *b, const struct listing *l, int side, int64_t v)
{
	char t[64];

	if (!v)
		snprintf(t, sizeof(t), ".");
	else if (l->r[BASE])
		snprintf(t, sizeof(t), "%.2f%%",
			 100.0 * (double)v / (double)pmodel_result_total(l->r[side]));
	else
		pmodel_format_value((double)v, l->r[side]->sample_unit, t, sizeof(t));
	return ember_buf_appendf(b, " %10s", t);
}

/* The cells of line no (what the sides have there) into b. */
static int text_cells(struct ember_buf *b, const struct listing *l, const struct listing_file *e,
		      int64_t no)
{
	int err = 0;

	for (int side = BASE; !err && side <= NEW; side++) {
		const struct pmodel_source_file *f = e->side[side];
		int64_t self = 0, total = 0;

		if (!l->r[side])
			continue;
		for (size_t i = 0; f && i < f->n_lines; i++)
			if (f->lines[i].line == no) {
				self = f->lines[i].self;
				total = f->lines[i].total;
			}
		err = text_cell(b, l, side, self);
		err = err ? err : text_cell(b, l, side, total);
	}
	return err;
}

/* The first and last line numbered of e on either side (0, 0: none). */
static void text_span(const struct listing_file *e, int64_t *lo, int64_t *hi)
{
	*lo = INT64_MAX;
	*hi = 0;
	for (int side = BASE; side <= NEW; side++)
		for (size_t i = 0; e->side[side] && i < e->side[side]->n_lines; i++) {
			int64_t no = e->side[side]->lines[i].line;

			if (no > 0 && no < *lo)
				*lo = no;
			if (no > *hi)
				*hi = no;
		}
	if (*lo == INT64_MAX)
		*lo = 0;
}

/* The line at *p of e's text (without its newline) into *line, *n; *p
 * moved past it.  false past the text's end. */
static bool text_next(const struct listing_file *e, const char **p, const char **line,
		      size_t *n)
{
	const char *end = e->text.data + e->text.len, *nl;

	if (!e->text.data || *p >= end)
		return false;
	nl = memchr(*p, '\n', (size_t)(end - *p));
	*line = *p;
	*n = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
	*p = nl ? nl + 1 : end;
	return true;
}

/* s as one word a POSIX shell reads literally (Python's shlex.quote:
 * as it is when every byte is safe, else single-quoted). */
static int shell_word(struct ember_buf *b, const char *s)
{
	int err = 0;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			    "_@%+=:,./-") == strlen(s))
		return ember_buf_appendf(b, "%s", s);
	err = ember_buf_putc(b, '\'');
	for (; !err && *s; s++)
		err = *s == '\'' ? ember_buf_appendf(b, "'\\''") : ember_buf_putc(b, *s);
	return err ? err : ember_buf_putc(b, '\'');
}

/* Whether s holds a control character (a command pasted would end there). */
static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			return true;
	return false;
}

/* Why e has no text, and the upload that would add it: "ember upload
 * --sources MODULE" (PATH/TO/... when the profile names no module; none
 * for a build ID that is not hex or a name with a control character). */
static int text_missing(struct ember_buf *b, const struct listing_file *e)
{
	bool hex = *e->build_id && strspn(e->build_id, "0123456789abcdefABCDEF") == strlen(e->build_id);
	int err = ember_buf_appendf(b, "   (no source: %s", missing_message(e->missing));

	if (!err && hex && strcmp(e->missing, "not_stored") == 0 && !has_control(e->module)) {
		err = ember_buf_appendf(b, "; build ID %s: ember upload --sources ", e->build_id);
		err = err ? err
			  : *e->module ? shell_word(b, e->module)
				       : ember_buf_appendf(b, "PATH/TO/the-binary-with-build-id-%.12s",
							   e->build_id);
	}
	return err ? err : ember_buf_appendf(b, ")\n");
}

static int text_file_header(struct ember_buf *b, const struct listing *l,
			    const struct listing_file *e)
{
	int err = ember_buf_appendf(b, "ROUTINE ======================== %s in %s\n",
				    l->o->function, *e->file ? e->file : "(no source file)");

	for (int side = BASE; !err && side <= NEW; side++)
		if (l->r[side]) {
			err = text_cell(b, l, side, e->side[side] ? e->side[side]->self : 0);
			err = err ? err : text_cell(b, l, side, e->side[side] ? e->side[side]->total : 0);
		}
	err = err ? err : ember_buf_appendf(b, " (flat, cum%s)\n", l->r[BASE] ? "; base, new" : "");
	if (!err && !e->has_text)
		err = text_missing(b, e);
	return err;
}

/* The text of e from line lo to hi (the function's lines and some
 * around them), each with its cells. */
static int text_with_source(struct ember_buf *b, const struct listing *l,
			    const struct listing_file *e, int64_t lo, int64_t hi)
{
	const char *p = e->text.data, *line;
	size_t n;
	int err = 0;

	lo = lo > CONTEXT_LINES ? lo - CONTEXT_LINES : 1;
	hi += CONTEXT_LINES;
	for (int64_t no = 1; !err && no <= hi && text_next(e, &p, &line, &n); no++) {
		if (no < lo)
			continue;
		err = text_cells(b, l, e, no);
		err = err ? err : ember_buf_appendf(b, " %6" PRId64 ": %.*s\n", no, (int)n, line);
	}
	return err;
}

/* Without text: the lines that have values, by number. */
static int text_without_source(struct ember_buf *b, const struct listing *l,
			       const struct listing_file *e)
{
	size_t at[2] = { 0, 0 };
	int err = 0;

	for (int64_t no; !err && (no = next_line(e, at)) != INT64_MAX;) {
		err = text_cells(b, l, e, no);
		err = err ? err : ember_buf_appendf(b, " %6" PRId64 ":\n", no);
		for (int side = BASE; side <= NEW; side++)
			at[side] += e->side[side] && at[side] < e->side[side]->n_lines &&
				    e->side[side]->lines[at[side]].line == no;
	}
	return err;
}

static int text_file(struct ember_buf *b, const struct listing *l, const struct listing_file *e)
{
	int64_t lo, hi;
	int err = text_file_header(b, l, e);

	text_span(e, &lo, &hi);
	if (err)
		return err;
	return e->has_text ? text_with_source(b, l, e, lo, hi) : text_without_source(b, l, e);
}

static int write_text(const struct listing *l, struct ember_buf *b)
{
	char t[2][64];
	int err;

	for (int side = BASE; side <= NEW; side++)
		if (l->r[side])
			pmodel_format_value((double)pmodel_result_total(l->r[side]),
					    l->r[side]->sample_unit, t[side], sizeof(t[side]));
	err = l->r[BASE] ? ember_buf_appendf(b, "Total: base %s, new %s\n%11s%11s%11s%11s "
						"(shares of each side's total)\n",
					     t[BASE], t[NEW], "base flat", "base cum", "new flat",
					     "new cum")
			 : ember_buf_appendf(b, "Total: %s\n", t[NEW]);
	if (!err && !l->n)
		err = ember_buf_appendf(b, "no source lines of function '%s' in the selection (no "
					"frame of it, or none with a source file)\n", l->o->function);
	for (size_t i = 0; !err && i < l->n; i++)
		err = text_file(b, l, &l->files[i]);
	return err;
}

/* ---- the answers ----------------------------------------------------------------- */

/* l's sides (merged) to their lines, files, texts, and written into a. */
static int answer(struct profsvc *s, struct listing *l, struct profsvc_answer *a, char *why,
		  size_t why_size)
{
	int err = 0;

	for (int side = BASE; !err && side <= NEW; side++)
		if (l->r[side])
			err = pmodel_result_source(l->r[side], l->o->function, &l->src[side]);
	err = err ? err : gather_files(l);
	err = err ? err : read_texts(s, l);
	if (err) {
		snprintf(why, why_size, "%s", err == -ENOMEM ? "out of memory"
				: "the debuginfo store cannot be read");
		return err;
	}
	if (l->o->format && !strcmp(l->o->format, "text")) {
		a->type = "text/plain";
		err = write_text(l, &a->body);
	} else {
		err = write_json(l, &a->body);
	}
	return profsvc_write_failed(err, why, why_size,
				    "the answer is larger than 512 MiB: narrow the selection");
}

static int check_opts(const struct profsvc_source_opts *o, char *why, size_t why_size)
{
	if (o->function && *o->function &&
	    (!o->format || !strcmp(o->format, "json") || !strcmp(o->format, "text")))
		return 0;
	snprintf(why, why_size, "%s", o->function && *o->function
		 ? "format: json or text" : "function: the function's name is required");
	return -EINVAL;
}

/* The sides of sel (a query's base NULL) merged into l on ro's behalf; a
 * initialized. */
static int merge_sides(struct profsvc *s, const struct symsvc_request_opts *ro,
		       const struct pstore_selection *const sel[2], struct listing *l,
		       struct profsvc_answer *a, char *why, size_t why_size)
{
	struct profsvc_read rd;
	int err = profsvc_read_begin(s, ro, &rd);

	profsvc_answer_init(a, ANSWER_CAP, profsvc_read_account(&rd));
	err = err ? err : check_opts(l->o, why, why_size);
	for (int side = BASE; side <= NEW; side++)
		if (sel[side] && !err)
			err = profsvc_read_range(&rd, sel[side], why, why_size);
	for (int side = BASE; side <= NEW; side++)
		if (sel[side] && !err)
			err = profsvc_read_merge(s, &rd, sel[side], &l->r[side], why, why_size);
	profsvc_read_end(&rd);
	if (!err && l->r[BASE] && strcmp(l->r[BASE]->type, l->r[NEW]->type)) {
		snprintf(why, why_size, "the two sides hold different sample types or units");
		err = -PMODEL_ERR_TYPE;
	}
	return err;
}

static int source_answer(struct profsvc *s, const struct symsvc_request_opts *ro,
			 const struct pstore_selection *base, const struct pstore_selection *new_,
			 const struct profsvc_source_opts *o, struct profsvc_answer *a, char *why,
			 size_t why_size)
{
	const struct pstore_selection *const sel[2] = { base, new_ };
	struct listing l = { .o = o };
	struct pmodel_result_info ri;
	int err = merge_sides(s, ro, sel, &l, a, why, why_size);

	if (!err && base) {
		pmodel_result_info(l.r[BASE], &ri);
		a->base_profiles = ri.profiles;
	}
	if (!err) {
		pmodel_result_info(l.r[NEW], &ri);
		a->profiles = ri.profiles;
		a->total = ri.total;
		err = answer(s, &l, a, why, why_size);
	}
	listing_release(&l);
	return err;
}

int profsvc_source(struct profsvc *s, const struct symsvc_request_opts *ro,
		   const struct pstore_selection *sel, const struct profsvc_source_opts *o,
		   struct profsvc_answer *a, char *why, size_t why_size)
{
	return source_answer(s, ro, NULL, sel, o, a, why, why_size);
}

int profsvc_source_diff(struct profsvc *s, const struct symsvc_request_opts *ro,
			const struct pstore_selection *base, const struct pstore_selection *new_,
			const struct profsvc_source_opts *o, struct profsvc_answer *a, char *why,
			size_t why_size)
{
	return source_answer(s, ro, base, new_, o, a, why, why_size);
}
