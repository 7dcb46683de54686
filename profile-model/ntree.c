/*
 * ntree.c - the tree of frame names that flame graphs, folded stacks, the
 * top table and diffs are drawn from.  A result's stack nodes are
 * locations; here each location becomes its frames (inlined functions
 * outermost first, as pprof lists a location's lines innermost first),
 * an unsymbolized one "file+0xOFFSET" (its offset in the mapped file,
 * the same in every process whatever the load address; the build ID for
 * the file when the mapping names none) or "0xADDRESS",
 * and equal paths of names merge, as flamegraph.pl merges them.
 */
#include "pmodel_internal.h"

#include <stdio.h>

struct nkey {
	uint32_t parent, name;
};

static uint64_t node_hash(const void *ctx, size_t i)
{
	const struct pmodel_ntree *t = ctx;

	return ember_hash_u64(&t->set.key, (uint64_t)t->parent.v[i] << 32 | t->name.v[i]);
}

static bool node_equal(const void *ctx, size_t i, const void *key)
{
	const struct pmodel_ntree *t = ctx;
	const struct nkey *k = key;

	return t->parent.v[i] == k->parent && t->name.v[i] == k->name;
}

static const struct pmodel_hset_ops ops = { node_hash, node_equal };

int pmodel_ntree_init(struct pmodel_ntree *t)
{
	memset(t, 0, sizeof(*t));
	EMBER_FORWARD_IF_ERROR(pmodel_strtab_init(&t->names));
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&t->set));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->parent, 0));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->name, 0));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->self, 0));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->line, 0));
	return EMBER_VEC_APPEND(&t->total, 0);
}

void pmodel_ntree_release(struct pmodel_ntree *t)
{
	pmodel_strtab_release(&t->names);
	EMBER_VEC_FREE(&t->parent);
	EMBER_VEC_FREE(&t->name);
	EMBER_VEC_FREE(&t->self);
	EMBER_VEC_FREE(&t->total);
	EMBER_VEC_FREE(&t->file);
	EMBER_VEC_FREE(&t->type);
	EMBER_VEC_FREE(&t->line);
	ember_hset_release(&t->set);
	free(t->first);
	free(t->next);
	t->first = t->next = NULL;
}

int pmodel_ntree_child(struct pmodel_ntree *t, uint32_t parent, const char *name, size_t len,
		   uint32_t *out)
{
	struct nkey k = { parent, 0 };
	uint64_t h;
	uint32_t i;

	EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern(&t->names, name, len, &k.name));
	h = ember_hash_u64(&t->set.key, (uint64_t)parent << 32 | k.name);
	i = pmodel_hset_find(&t->set, &ops, t, h, &k);
	if (i == UINT32_MAX) {
		i = (uint32_t)t->parent.n;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->parent, parent));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->name, k.name));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->self, 0));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->total, 0));
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->line, -1)); /* none seen yet */
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&t->set, &ops, t, i, h));
	}
	*out = i;
	return 0;
}

const char *pmodel_line_name(const struct pmodel_dict *d, const struct pmodel_line *ln)
{
	const struct pmodel_func *f = &d->funcs.v[ln->func];
	const char *n = pmodel_str(&d->str, f->name);

	if (!*n)
		n = pmodel_str(&d->str, f->system_name);
	return *n ? n : "?";
}

size_t pmodel_loc_unresolved_name(const struct pmodel_dict *d, const struct pmodel_loc *l,
				  char *buf, size_t size)
{
	const char *module = pmodel_loc_module(d, l);
	int n;

	if (module) {
		const struct pmodel_map *m = &d->maps.v[l->mapping - 1];

		n = snprintf(buf, size, "%s+0x%llx", module,
			     (unsigned long long)(l->address - m->start + m->offset));
	} else {
		n = snprintf(buf, size, "0x%llx", (unsigned long long)l->address);
	}
	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* v[name] (per name id: a file or a frame type) set to s's id, when it
 * has none yet. */
static int note_per_name(struct pmodel_ntree *t, struct pmodel_u32s *v, uint32_t name,
			 const char *s)
{
	uint32_t id;

	if (!*s || (name < v->n && v->v[name]))
		return 0;
	EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern(&t->names, s, strlen(s), &id));
	if (name >= v->n) {
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(v, (size_t)name + 1));
		memset(v->v + v->n, 0, ((size_t)name + 1 - v->n) * sizeof(uint32_t));
		v->n = (size_t)name + 1;
	}
	v->v[name] = id;
	return 0;
}

static int note_file(struct pmodel_ntree *t, uint32_t name, const char *file)
{
	return note_per_name(t, &t->file, name, file);
}

/* Node n's frames are at line: its line, unless another was seen (0). */
static void note_line(struct pmodel_ntree *t, uint32_t n, int64_t line)
{
	int64_t *l = &t->line.v[n];

	*l = *l < 0 || *l == line ? line : 0;
}

int pmodel_ntree_note_source(struct pmodel_ntree *t, uint32_t n, const char *file, int64_t line)
{
	if (line >= 0) /* a node's -1: no line seen */
		note_line(t, n, line);
	return note_file(t, t->name.v[n], file);
}

static int location_frames(struct pmodel_ntree *t, const struct pmodel_dict *d, uint32_t loc,
			   uint32_t cur, uint32_t *out)
{
	const struct pmodel_loc *l = &d->locs.v[loc];
	const char *type = pmodel_str(&d->str, l->type);
	char buf[PMODEL_UNRESOLVED_NAME_MAX];

	if (!l->nlines) {
		size_t n = pmodel_loc_unresolved_name(d, l, buf, sizeof(buf));

		EMBER_FORWARD_IF_ERROR(pmodel_ntree_child(t, cur, buf, n, out));
		return note_per_name(t, &t->type, t->name.v[*out], type);
	}
	for (uint32_t k = l->nlines; k-- > 0;) {
		const struct pmodel_line *ln = &d->lines.v[l->line_off + k];
		const char *name = pmodel_line_name(d, ln);

		EMBER_FORWARD_IF_ERROR(pmodel_ntree_child(t, cur, name, strlen(name), &cur));
		EMBER_FORWARD_IF_ERROR(note_per_name(t, &t->type, t->name.v[cur], type));
		note_line(t, cur, ln->line > 0 ? ln->line : 0);
		EMBER_FORWARD_IF_ERROR(note_file(t, t->name.v[cur],
						 pmodel_str(&d->str, d->funcs.v[ln->func].filename)));
	}
	*out = cur;
	return 0;
}

int pmodel_ntree_build_leaves(const struct pmodel_result *r, struct pmodel_ntree *t,
			      uint32_t *leaf)
{
	const struct pmodel_dict *d = &r->dict;
	size_t n = pmodel_dict_nodes(d);
	uint32_t *map = leaf ? leaf : malloc(n * sizeof(*map));
	int err = map ? pmodel_ntree_init(t) : -ENOMEM;

	if (map)
		map[0] = 0;
	for (size_t i = 1; !err && i < n; i++) {
		err = location_frames(t, d, d->node_loc.v[i], map[d->node_parent.v[i]], &map[i]);
		if (!err && i < r->self.n)
			t->self.v[map[i]] = pmodel_add(t->self.v[map[i]], r->self.v[i]);
	}
	if (map != leaf)
		free(map);
	if (!err)
		err = pmodel_ntree_finish(t);
	return err;
}

int pmodel_ntree_build(const struct pmodel_result *r, struct pmodel_ntree *t)
{
	return pmodel_ntree_build_leaves(r, t, NULL);
}

static int cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y) - (x > y);
}

int64_t pmodel_ntree_cutoff(int64_t *v, size_t n, size_t max_nodes)
{
	if (!max_nodes || n <= max_nodes)
		return 0;
	ember_qsort(v, n, sizeof(*v), cmp_desc);
	return v[max_nodes - 1];
}

static int cmp_child(const void *a, const void *b, void *ctx)
{
	const struct pmodel_ntree *t = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (t->parent.v[x] != t->parent.v[y])
		return t->parent.v[x] < t->parent.v[y] ? -1 : 1;
	return strcmp(pmodel_str(&t->names, t->name.v[x]), pmodel_str(&t->names, t->name.v[y]));
}

int pmodel_ntree_finish(struct pmodel_ntree *t)
{
	size_t n = pmodel_ntree_count(t);
	uint32_t *order = malloc(n * sizeof(*order));

	free(t->first);
	free(t->next);
	t->first = malloc(n * sizeof(*t->first));
	t->next = malloc(n * sizeof(*t->next));
	if (!order || !t->first || !t->next) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		t->total.v[i] = t->self.v[i];
	for (size_t i = n; i-- > 1;)
		t->total.v[t->parent.v[i]] = pmodel_add(t->total.v[t->parent.v[i]], t->total.v[i]);
	for (size_t i = 1; i < n; i++)
		order[i - 1] = (uint32_t)i;
	ember_qsort_r(order, n - 1, sizeof(*order), cmp_child, t);
	memset(t->first, 0, n * sizeof(*t->first)); /* 0: none (the root is nobody's child) */
	memset(t->next, 0, n * sizeof(*t->next));
	for (size_t i = n - 1; i-- > 0;) { /* backwards: lists come out in order */
		uint32_t c = order[i], p = t->parent.v[c];

		t->next[c] = t->first[p];
		t->first[p] = c;
	}
	free(order);
	return 0;
}

int pmodel_ntree_path(const struct pmodel_ntree *t, uint32_t n, struct ember_buf *b)
{
	uint32_t chain[8192];
	size_t k = 0;

	ember_buf_reset(b);
	for (; n && k < 8192; n = t->parent.v[n])
		chain[k++] = n;
	while (k--) {
		const char *s = pmodel_str(&t->names, t->name.v[chain[k]]);

		EMBER_FORWARD_IF_ERROR(ember_buf_append(b, s, strlen(s)));
		if (k)
			EMBER_FORWARD_IF_ERROR(ember_buf_putc(b, ';'));
	}
	return 0;
}

/* Whether an ancestor of n has n's name. */
static bool recursive(const struct pmodel_ntree *t, uint32_t n)
{
	for (uint32_t a = t->parent.v[n]; a; a = t->parent.v[a])
		if (t->name.v[a] == t->name.v[n])
			return true;
	return false;
}

int pmodel_ntree_functions(const struct pmodel_ntree *t, struct pmodel_fstat **out)
{
	struct pmodel_fstat *f = calloc(pmodel_strtab_count(&t->names) + 1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	for (size_t i = 1; i < pmodel_ntree_count(t); i++) {
		struct pmodel_fstat *s = &f[t->name.v[i]];

		s->self = pmodel_add(s->self, t->self.v[i]);
		if (!recursive(t, (uint32_t)i))
			s->total = pmodel_add(s->total, t->total.v[i]);
	}
	*out = f;
	return 0;
}

struct wframe {
	uint32_t node, child; /* child: the next child to visit, 0 when done */
};

int pmodel_ntree_walk(const struct pmodel_ntree *t, int (*fn)(void *ctx, uint32_t n, int depth,
						       bool enter), void *ctx)
{
	EMBER_VEC(struct wframe) st = { 0 };
	int err = fn(ctx, 0, 0, true);

	if (err > 0) /* the root skipped: nothing below it either */
		return 0;
	if (!err)
		err = EMBER_VEC_APPEND(&st, ((struct wframe){ 0, t->first[0] }));
	while (!err && st.n) {
		struct wframe *top = &st.v[st.n - 1];
		uint32_t c = top->child;

		if (!c) {
			err = fn(ctx, top->node, (int)st.n - 1, false);
			st.n--;
			continue;
		}
		top->child = t->next[c];
		err = fn(ctx, c, (int)st.n, true);
		if (err > 0) /* do not descend */
			err = 0;
		else if (!err)
			err = EMBER_VEC_APPEND(&st, ((struct wframe){ c, t->first[c] }));
	}
	EMBER_VEC_FREE(&st);
	return err;
}
