/*
 * out_top.c - the top table: per function (frame name), the value of the
 * stacks it is the leaf of (self) and of the stacks it is in (total,
 * each stack once however deep the function recurses in it), with
 * percentages of the result's total; sorted by self, as `pprof -top`
 * sorts.  Text in pprof's columns with values in human units
 * (out_units.c: "25.63 s", "1.20 GiB"), or JSON (exact values, with each
 * function's source file and frame type where known).
 */
#include "pmodel_internal.h"

#include <inttypes.h>

static int cmp_row(const void *a, const void *b)
{
	const struct pmodel_top_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static double pct(int64_t v, int64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0;
}

/* Rows over tree t (names point into t). */
static int top_rows(const struct pmodel_ntree *t, int64_t total, size_t n,
		    struct pmodel_top_row **rows, size_t *nrows)
{
	struct pmodel_fstat *f;
	size_t names = pmodel_strtab_count(&t->names), k = 0;
	struct pmodel_top_row *r;

	EMBER_FORWARD_IF_ERROR(pmodel_ntree_functions(t, &f));
	r = malloc((names + 1) * sizeof(*r));
	if (!r) {
		free(f);
		return -ENOMEM;
	}
	for (uint32_t i = 1; i < names; i++)
		if (f[i].self || f[i].total)
			r[k++] = (struct pmodel_top_row){ pmodel_str(&t->names, i), f[i].self,
							 f[i].total, pct(f[i].self, total),
							 pct(f[i].total, total),
							 pmodel_ntree_file(t, i),
							 pmodel_ntree_type(t, i) };
	free(f);
	ember_qsort(r, k, sizeof(*r), cmp_row);
	*rows = r;
	*nrows = n && n < k ? n : k;
	return 0;
}

int pmodel_result_top(const struct pmodel_result *r, size_t n, struct pmodel_top_row **rows,
		      size_t *nrows)
{
	struct pmodel_ntree t;
	struct pmodel_top_row *tr;
	size_t k, bytes = 0;
	char *names;
	int err = pmodel_ntree_build(r, &t);

	if (!err)
		err = top_rows(&t, pmodel_result_total(r), n, &tr, &k);
	if (err) {
		pmodel_ntree_release(&t);
		return err;
	}
	/* One allocation holding the rows and their names, so free(rows)
	 * releases everything. */
	for (size_t i = 0; i < k; i++)
		bytes += strlen(tr[i].name) + strlen(tr[i].file) + strlen(tr[i].frame_type) + 3;
	*rows = malloc(k * sizeof(**rows) + bytes + 1);
	if (!*rows) {
		free(tr);
		pmodel_ntree_release(&t);
		return -ENOMEM;
	}
	names = (char *)(*rows + k);
	for (size_t i = 0; i < k; i++) {
		(*rows)[i] = tr[i];
		(*rows)[i].name = strcpy(names, tr[i].name);
		names += strlen(names) + 1;
		(*rows)[i].file = strcpy(names, tr[i].file);
		names += strlen(names) + 1;
		(*rows)[i].frame_type = strcpy(names, tr[i].frame_type);
		names += strlen(names) + 1;
	}
	*nrows = k;
	free(tr);
	pmodel_ntree_release(&t);
	return 0;
}

/* v in unit, right-aligned in a 14-column cell (µs is one column of two
 * bytes). */
static void value_cell(struct pmodel_out *o, int64_t v, const char *unit)
{
	char text[64];
	int cols = 0;

	pmodel_format_value((double)v, unit, text, sizeof(text));
	for (const char *c = text; *c; c++)
		cols += ((unsigned char)*c & 0xc0) != 0x80;
	pmodel_out_printf(o, "%*s%s", cols < 14 ? 14 - cols : 0, "", text);
}

static void text_rows(struct pmodel_out *o, const struct pmodel_result *r,
		      const struct pmodel_top_row *rows, size_t k, size_t all)
{
	char total[64];
	double sum = 0;

	pmodel_format_value((double)pmodel_result_total(r), r->sample_unit, total, sizeof(total));
	pmodel_out_printf(o, "Type: %s\nShowing %zu of %zu functions, total %s (%" PRId64 " %s)\n",
			  r->type, k, all, total, pmodel_result_total(r), r->sample_unit);
	pmodel_out_printf(o, "%14s %7s %7s %14s %7s  %s\n", "self", "self%", "sum%", "total",
			  "total%", "name");
	for (size_t i = 0; i < k; i++) {
		sum += rows[i].self_pct;
		value_cell(o, rows[i].self, r->sample_unit);
		pmodel_out_printf(o, " %6.2f%% %6.2f%% ", rows[i].self_pct, sum);
		value_cell(o, rows[i].total, r->sample_unit);
		pmodel_out_printf(o, " %6.2f%%  %s\n", rows[i].total_pct, rows[i].name);
	}
}

static void json_rows(struct pmodel_out *o, const struct pmodel_result *r,
		      const struct pmodel_top_row *rows, size_t k)
{
	pmodel_out_str(o, "{\"type\":");
	pmodel_out_json(o, r->type);
	pmodel_out_printf(o, ",\"unit\":");
	pmodel_out_json(o, r->sample_unit);
	pmodel_out_printf(o, ",\"total\":%" PRId64 ",\"profiles\":%" PRIu64 ",\"rows\":[",
			  pmodel_result_total(r), r->profiles);
	for (size_t i = 0; i < k; i++) {
		pmodel_out_str(o, i ? ",{\"name\":" : "{\"name\":");
		pmodel_out_json(o, rows[i].name);
		if (*rows[i].file) {
			pmodel_out_str(o, ",\"file\":");
			pmodel_out_json(o, rows[i].file);
		}
		if (*rows[i].frame_type) {
			pmodel_out_str(o, ",\"frame_type\":");
			pmodel_out_json(o, rows[i].frame_type);
		}
		pmodel_out_printf(o, ",\"self\":%" PRId64 ",\"self_pct\":%.4f,\"total\":%" PRId64
			      ",\"total_pct\":%.4f}", rows[i].self, rows[i].self_pct, rows[i].total,
			      rows[i].total_pct);
	}
	pmodel_out_str(o, "]}\n");
}

int pmodel_write_top(const struct pmodel_result *r, size_t n, bool json, pmodel_write_fn fn,
		     void *ctx)
{
	struct pmodel_top_row *rows = NULL;
	size_t k = 0, all = 0;
	struct pmodel_out o;
	int err = pmodel_result_top(r, 0, &rows, &all);

	if (err)
		return err;
	k = n && n < all ? n : all;
	pmodel_out_init(&o, fn, ctx);
	if (json)
		json_rows(&o, r, rows, k);
	else
		text_rows(&o, r, rows, k, all);
	free(rows);
	return pmodel_out_finish(&o);
}
