/*
 * source_lines.c - one function's values per source line of a result:
 * what the source view (docs/web-ui.md, "Source view") and `ember query
 * --format source` (pprof -list's listing) show beside each line.
 *
 * A location's lines (innermost first, as pprof lists inlined frames)
 * whose function is named NAME (pmodel_line_name: the name every tree
 * gives the frame) are the function's lines, each keyed by its
 * function's file and its line number.  A sample's value counts as self
 * of the key of its leaf frame (the leaf location's innermost line, when
 * it is NAME's), and as total of every key on its stack, each key once
 * a stack however often the function recurses through that line; the
 * function's and each file's self and total count each stack once too.
 *
 * The result's stack nodes come parent first, so one pass marks the
 * nodes whose stack holds the function at all; only the stacks of those
 * are walked to the root.
 */
#include "pmodel_internal.h"

#define NONE UINT32_MAX

struct skey {
	uint32_t file; /* string id of r's dictionary */
	int64_t line;
};

/* Per distinct file: its values and the mapping its frames weigh most in. */
struct sfile {
	uint32_t file;
	int64_t self, total;
	uint32_t stamp;
	uint32_t map[4], nmap;	/* mappings seen (0: none, else index + 1) */
	int64_t map_weight[4];
};

struct sctx {
	const struct pmodel_result *r;
	const char *name;
	EMBER_VEC(struct skey) keys;
	EMBER_VEC(struct pmodel_source_line) vals; /* per key */
	EMBER_VEC(uint32_t) key_file;		   /* per key: its sfile */
	EMBER_VEC(uint32_t) key_stamp;
	EMBER_VEC(struct sfile) files;
	struct ember_hset set;
	uint32_t *loc_off, *loc_n; /* per location: its keys in loc_keys */
	EMBER_VEC(uint32_t) loc_keys;
	uint32_t *leaf_key;	   /* per location: the key of its innermost line, or NONE */
	int64_t self, total;
};

static uint64_t key_hash(const struct sctx *c, const struct skey *k)
{
	return ember_hash_u64(&c->set.key, (uint64_t)k->file << 32 ^ (uint64_t)k->line);
}

static bool key_equal(const void *ctx, size_t i, const void *key)
{
	const struct sctx *c = ctx;
	const struct skey *k = key;

	return c->keys.v[i].file == k->file && c->keys.v[i].line == k->line;
}

/* The file entry of string id file, added when absent. */
static int file_of(struct sctx *c, uint32_t file, uint32_t *out)
{
	for (size_t i = 0; i < c->files.n; i++)
		if (c->files.v[i].file == file) {
			*out = (uint32_t)i;
			return 0;
		}
	*out = (uint32_t)c->files.n;
	return EMBER_VEC_APPEND(&c->files, ((struct sfile){ .file = file, .stamp = NONE }));
}

/* The key of (file, line), added when absent. */
static int key_of(struct sctx *c, uint32_t file, int64_t line, uint32_t *out)
{
	struct skey k = { file, line };
	uint64_t h = key_hash(c, &k);
	size_t i = ember_hset_find(&c->set, h, key_equal, c, &k);
	uint32_t f;

	if (i != SIZE_MAX) {
		*out = (uint32_t)i;
		return 0;
	}
	*out = (uint32_t)c->keys.n;
	EMBER_FORWARD_IF_ERROR(file_of(c, file, &f));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&c->keys, k));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&c->key_file, f));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&c->key_stamp, NONE));
	EMBER_FORWARD_IF_ERROR(
		EMBER_VEC_APPEND(&c->vals, ((struct pmodel_source_line){ .line = line })));
	return ember_hset_insert(&c->set, h, *out);
}

/* Location l's lines of the function, as keys. */
static int index_location(struct sctx *c, uint32_t l)
{
	const struct pmodel_dict *d = &c->r->dict;
	const struct pmodel_loc *loc = &d->locs.v[l];

	c->loc_off[l] = (uint32_t)c->loc_keys.n;
	for (uint32_t k = 0; k < loc->nlines; k++) {
		const struct pmodel_line *ln = &d->lines.v[loc->line_off + k];
		uint32_t key;

		if (strcmp(pmodel_line_name(d, ln), c->name))
			continue;
		EMBER_FORWARD_IF_ERROR(key_of(c, d->funcs.v[ln->func].filename, ln->line, &key));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&c->loc_keys, key));
		if (k == 0)
			c->leaf_key[l] = key;
	}
	c->loc_n[l] = (uint32_t)c->loc_keys.n - c->loc_off[l];
	return 0;
}

static int index_locations(struct sctx *c)
{
	size_t n = c->r->dict.locs.n;

	c->loc_off = calloc(n + 1, sizeof(*c->loc_off));
	c->loc_n = calloc(n + 1, sizeof(*c->loc_n));
	c->leaf_key = malloc((n + 1) * sizeof(*c->leaf_key));
	if (!c->loc_off || !c->loc_n || !c->leaf_key)
		return -ENOMEM;
	for (size_t l = 0; l < n; l++) {
		c->leaf_key[l] = NONE;
		EMBER_FORWARD_IF_ERROR(index_location(c, (uint32_t)l));
	}
	return 0;
}

/* v added to file f's weight under mapping m (0: none, else index + 1):
 * four mappings kept, past them the lightest replaced (only the choice of
 * a build ID reads them). */
static void weigh_mapping(struct sfile *f, uint32_t m, int64_t v)
{
	size_t lightest = 0;

	for (size_t i = 0; i < f->nmap; i++)
		if (f->map[i] == m) {
			f->map_weight[i] = pmodel_add(f->map_weight[i], v);
			return;
		}
	if (f->nmap < 4) {
		f->map[f->nmap] = m;
		f->map_weight[f->nmap++] = v;
		return;
	}
	for (size_t i = 1; i < 4; i++)
		if (f->map_weight[i] < f->map_weight[lightest])
			lightest = i;
	f->map[lightest] = m;
	f->map_weight[lightest] = v;
}

/* Stack node i's value v added along its path (stamp i: each key and
 * file once). */
static void add_stack(struct sctx *c, uint32_t i, int64_t v)
{
	const struct pmodel_dict *d = &c->r->dict;
	uint32_t leaf = c->leaf_key[d->node_loc.v[i]];

	c->total = pmodel_add(c->total, v);
	if (leaf != NONE) {
		c->self = pmodel_add(c->self, v);
		c->vals.v[leaf].self = pmodel_add(c->vals.v[leaf].self, v);
		c->files.v[c->key_file.v[leaf]].self =
			pmodel_add(c->files.v[c->key_file.v[leaf]].self, v);
	}
	for (uint32_t n = i; n; n = d->node_parent.v[n]) {
		uint32_t l = d->node_loc.v[n];

		for (uint32_t k = 0; k < c->loc_n[l]; k++) {
			uint32_t key = c->loc_keys.v[c->loc_off[l] + k];
			struct sfile *f = &c->files.v[c->key_file.v[key]];

			if (c->key_stamp.v[key] == i)
				continue;
			c->key_stamp.v[key] = i;
			c->vals.v[key].total = pmodel_add(c->vals.v[key].total, v);
			weigh_mapping(f, d->locs.v[l].mapping, v);
			if (f->stamp != i) {
				f->stamp = i;
				f->total = pmodel_add(f->total, v);
			}
		}
	}
}

/* Every stack holding the function added. */
static int add_stacks(struct sctx *c)
{
	const struct pmodel_dict *d = &c->r->dict;
	size_t nodes = pmodel_dict_nodes(d);
	bool *holds = calloc(nodes + 1, sizeof(*holds));

	if (!holds)
		return -ENOMEM;
	for (size_t i = 1; i < nodes; i++) {
		holds[i] = holds[d->node_parent.v[i]] || c->loc_n[d->node_loc.v[i]];
		if (holds[i] && i < c->r->self.n && c->r->self.v[i])
			add_stack(c, (uint32_t)i, c->r->self.v[i]);
	}
	free(holds);
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct pmodel_source_line *x = a, *y = b;

	return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_file(const void *a, const void *b)
{
	const struct pmodel_source_file *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->file, y->file);
}

/* The mapping of f its frames weigh most in (0: none). */
static uint32_t heaviest_mapping(const struct sfile *f)
{
	size_t best = 0;

	for (size_t i = 1; i < f->nmap; i++)
		if (f->map_weight[i] > f->map_weight[best])
			best = i;
	return f->map[best];
}

/* File fi of c as out's entry, its lines copied (sorted) into lines. */
static void fill_file(const struct sctx *c, uint32_t fi, struct pmodel_source_file *out,
		      struct pmodel_source_line *lines)
{
	const struct pmodel_dict *d = &c->r->dict;
	const struct sfile *f = &c->files.v[fi];
	uint32_t m = heaviest_mapping(f);
	size_t n = 0;

	for (size_t k = 0; k < c->keys.n; k++)
		if (c->key_file.v[k] == fi && (c->vals.v[k].self || c->vals.v[k].total))
			lines[n++] = c->vals.v[k];
	ember_qsort(lines, n, sizeof(*lines), cmp_line);
	*out = (struct pmodel_source_file){
		.file = pmodel_str(&d->str, f->file), .build_id = "", .module = "",
		.self = f->self, .total = f->total, .lines = lines, .n_lines = n };
	if (m) {
		out->build_id = pmodel_str(&d->str, d->maps.v[m - 1].build_id);
		out->module = pmodel_str(&d->str, d->maps.v[m - 1].filename);
	}
}

/* c's files and lines as one allocation. */
static int finish(const struct sctx *c, struct pmodel_source **out)
{
	size_t nf = 0, nl = 0;
	struct pmodel_source *s;
	struct pmodel_source_line *lines;

	for (size_t i = 0; i < c->files.n; i++)
		nf += c->files.v[i].total != 0;
	s = calloc(1, sizeof(*s) + nf * sizeof(*s->files) + c->keys.n * sizeof(*lines) + 1);
	if (!s)
		return -ENOMEM;
	s->files = (struct pmodel_source_file *)(s + 1);
	lines = (struct pmodel_source_line *)(s->files + nf);
	for (size_t i = 0; i < c->files.n; i++) {
		if (!c->files.v[i].total)
			continue;
		fill_file(c, (uint32_t)i, &s->files[s->n_files], lines + nl);
		nl += s->files[s->n_files++].n_lines;
	}
	ember_qsort(s->files, s->n_files, sizeof(*s->files), cmp_file);
	s->self = c->self;
	s->total = c->total;
	*out = s;
	return 0;
}

static void sctx_release(struct sctx *c)
{
	EMBER_VEC_FREE(&c->keys);
	EMBER_VEC_FREE(&c->vals);
	EMBER_VEC_FREE(&c->key_file);
	EMBER_VEC_FREE(&c->key_stamp);
	EMBER_VEC_FREE(&c->files);
	EMBER_VEC_FREE(&c->loc_keys);
	ember_hset_release(&c->set);
	free(c->loc_off);
	free(c->loc_n);
	free(c->leaf_key);
}

int pmodel_result_source(const struct pmodel_result *r, const char *function,
			 struct pmodel_source **out)
{
	struct sctx c = { .r = r, .name = function };
	int err = ember_hset_init(&c.set);

	err = err ? err : index_locations(&c);
	err = err ? err : add_stacks(&c);
	err = err ? err : finish(&c, out);
	sctx_release(&c);
	return err;
}

void pmodel_source_free(struct pmodel_source *s)
{
	free(s); /* one allocation */
}
