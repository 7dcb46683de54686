/*
 * kallsyms.c - kernel frames named in the agent, from /proc/kallsyms:
 * "ADDR TYPE NAME [MODULE]" lines whose addresses are the running
 * kernel's, KASLR offset already applied, which is what bpf_get_stack
 * records; so a lookup is a binary search with no relocation.  When
 * kptr_restrict hides the addresses (all zero), the agent says so rather
 * than naming every frame wrong.
 *
 * The names are kept zstd-compressed in blocks of KS_BLOCK symbols (in
 * the file's order, "name\0module\0" each): 3.2 MB of names are 0.7 MB
 * so (some 120,000 code symbols on a distribution kernel), and a lookup
 * decompresses the block of its symbol, keeping the last one.
 */
#include "agent_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define KS_BLOCK 128

struct ksym {
	uint64_t addr;
	uint32_t block;	/* of its name */
	uint32_t off;	/* of its name in the block, decompressed */
};

struct ks_block {
	size_t zoff, zlen, len;
};

/* The last decompressed block: lookups change it through a const
 * struct agent_kallsyms (a cache, not the table's state). */
struct ks_cache {
	size_t block; /* SIZE_MAX: none */
	char *data;   /* max_len bytes */
	ZSTD_DCtx *dctx; /* kept: ZSTD_decompress would set one up each time */
};

struct agent_kallsyms {
	struct ksym *syms;
	size_t n, alloc;
	struct ks_block *blocks;
	size_t nblocks, balloc;
	size_t max_len;	      /* of a decompressed block */
	struct ember_buf z;   /* the compressed blocks */
	struct ember_buf cur; /* the block being filled */
	size_t in_cur;
	struct ks_cache *cache;
	uint64_t stext, etext;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Compress the block being filled onto k->z. */
static int flush_block(struct agent_kallsyms *k, ZSTD_CCtx *zc)
{
	size_t bound = ZSTD_compressBound(k->cur.len), zlen;
	struct ks_block b = { .zoff = k->z.len, .len = k->cur.len };

	if (!k->in_cur)
		return 0;
	EMBER_FORWARD_IF_ERROR(ember_buf_reserve(&k->z, bound));
	zlen = ZSTD_compressCCtx(zc, k->z.data + k->z.len, bound, k->cur.data, k->cur.len, 1);
	if (ZSTD_isError(zlen))
		return -ENOMEM;
	b.zlen = zlen;
	k->z.len += zlen;
	if (b.len > k->max_len)
		k->max_len = b.len;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_PUSH(k->blocks, k->nblocks, k->balloc, b));
	ember_buf_reset(&k->cur);
	k->in_cur = 0;
	return 0;
}

static int add_line(struct agent_kallsyms *k, ZSTD_CCtx *zc, char *line)
{
	char type, name[512], mod[128] = "";
	uint64_t addr;
	struct ksym s = { 0 };
	int n = sscanf(line, "%" SCNx64 " %c %511s [%127[^]]]", &addr, &type, name, mod);

	if (n < 3)
		return 0;
	if (!strcmp(name, "_stext"))
		k->stext = addr;
	else if (!strcmp(name, "_etext"))
		k->etext = addr;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0; /* only code */
	if (k->nblocks > UINT32_MAX - 1)
		return -E2BIG;
	s.addr = addr;
	s.block = (uint32_t)k->nblocks;
	s.off = (uint32_t)k->cur.len;
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&k->cur, name, strlen(name) + 1));
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&k->cur, mod, strlen(mod) + 1));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_PUSH(k->syms, k->n, k->alloc, s));
	return ++k->in_cur == KS_BLOCK ? flush_block(k, zc) : 0;
}

struct agent_kallsyms *agent_kallsyms_new(const char *path, int *err)
{
	struct agent_kallsyms *k = calloc(1, sizeof(*k));
	char line[1024];
	bool nonzero = false;
	ZSTD_CCtx *zc = ZSTD_createCCtx(); /* one for every block */
	FILE *f;
	int e = 0;

	if (!k || !zc) {
		free(k);
		ZSTD_freeCCtx(zc);
		*err = -ENOMEM;
		return NULL;
	}
	ember_buf_init(&k->z, (size_t)64 << 20);
	ember_buf_init(&k->cur, (size_t)1 << 20); /* KS_BLOCK names of < 640 bytes */
	k->cache = calloc(1, sizeof(*k->cache));
	if (!k->cache)
		e = -ENOMEM;
	else
		k->cache->block = SIZE_MAX;
	f = e ? NULL : fopen(path ? path : "/proc/kallsyms", "re");
	if (!e && !f)
		e = -errno;
	while (!e && fgets(line, sizeof(line), f)) {
		e = add_line(k, zc, line);
		nonzero |= k->n && k->syms[k->n - 1].addr != 0;
	}
	if (f)
		fclose(f);
	if (!e)
		e = flush_block(k, zc);
	ZSTD_freeCCtx(zc);
	ember_buf_release(&k->cur);
	/* the cache holds any block: a lookup never allocates, so it cannot fail */
	if (!e && !(k->cache->data = malloc(k->max_len ? k->max_len : 1)))
		e = -ENOMEM;
	if (!e && !(k->cache->dctx = ZSTD_createDCtx()))
		e = -ENOMEM;
	if (!e && !nonzero)
		e = -EPERM; /* kptr_restrict: every address is 0 */
	if (e) {
		agent_kallsyms_free(k);
		*err = e;
		return NULL;
	}
	if (k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	return k;
}

void agent_kallsyms_free(struct agent_kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->blocks);
	ember_buf_release(&k->z);
	ember_buf_release(&k->cur);
	if (k->cache) {
		free(k->cache->data);
		ZSTD_freeDCtx(k->cache->dctx);
	}
	free(k->cache);
	free(k);
}

/* The decompressed block b, in the cache: its bytes, or NULL. */
static const char *block_of(const struct agent_kallsyms *k, size_t b)
{
	struct ks_cache *c = k->cache;
	const struct ks_block *bl = &k->blocks[b];
	size_t got;

	if (c->block == b)
		return c->data;
	c->block = SIZE_MAX;
	got = ZSTD_decompressDCtx(c->dctx, c->data, bl->len, k->z.data + bl->zoff, bl->zlen);
	if (ZSTD_isError(got) || got != bl->len)
		return NULL; /* not with the blocks compressed above */
	c->block = b;
	return c->data;
}

const char *agent_kallsyms_lookup(const struct agent_kallsyms *k, uint64_t addr,
				  const char **mod)
{
	size_t i = agent_last_at_or_below(k->syms, k->n, sizeof(*k->syms), addr);
	const char *data, *name;

	if (i == SIZE_MAX || k->syms[i].block >= k->nblocks)
		return NULL;
	data = block_of(k, k->syms[i].block);
	if (!data)
		return NULL;
	name = data + k->syms[i].off;
	*mod = name + strlen(name) + 1;
	return name;
}

void agent_kallsyms_text(const struct agent_kallsyms *k, uint64_t *start, uint64_t *end)
{
	*start = k->stext;
	*end = k->etext;
}
