/*
 * sample_agg.c - --transport ringbuf: the records of the samples ring
 * buffer (struct agent_sample_rec, one a sample) counted in user space
 * into what the count maps hold with the maps transport: one entry a
 * distinct (pid, tid, flags, comm, user frames, kernel frames).  The records'
 * bytes sit one after another in an arena; a hash set deduplicates them.
 * Bounded as the count maps are: at most AGG_MAX_ENTRIES distinct stacks
 * an interval, past which a sample is counted as dropped.  An off-CPU
 * record is deduplicated on the same bytes and adds the weighted ns it
 * carries after its frames (profile_types.h) instead of one.
 */
#include "agent_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define AGG_MAX_ENTRIES 16384
#define AGG_MAX_BYTES ((size_t)AGG_MAX_ENTRIES * sizeof(struct agent_sample_rec))

struct agg_entry {
	uint64_t count;
	size_t off;	/* of the record in the arena */
	uint32_t len;
};

struct agent_agg {
	struct ember_hset set;
	struct agg_entry *v;
	size_t n, alloc;
	struct ember_buf arena;
	uint64_t samples, dropped;
	agent_agg_new_fn on_new; /* a distinct stack's first record: NULL, none */
	void *on_new_ctx;
};

void agent_agg_on_new(struct agent_agg *g, agent_agg_new_fn fn, void *ctx)
{
	g->on_new = fn;
	g->on_new_ctx = ctx;
}

struct agent_agg *agent_agg_new(int *err)
{
	struct agent_agg *g = calloc(1, sizeof(*g));

	if (!g) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = ember_hset_init(&g->set);
	if (*err) {
		free(g);
		return NULL;
	}
	ember_buf_init(&g->arena, AGG_MAX_BYTES);
	return g;
}

void agent_agg_free(struct agent_agg *g)
{
	if (!g)
		return;
	ember_hset_release(&g->set);
	ember_buf_release(&g->arena);
	free(g->v);
	free(g);
}

struct probe {
	const struct agent_agg *g;
	uint32_t len;
};

static bool same(const void *ctx, size_t idx, const void *key)
{
	const struct probe *p = ctx;
	const struct agg_entry *e = &p->g->v[idx];

	return e->len == p->len && !memcmp(p->g->arena.data + e->off, key, p->len);
}

int agent_agg_add(struct agent_agg *g, const void *data, size_t size)
{
	const struct agent_sample_rec *r = data;
	size_t want = offsetof(struct agent_sample_rec, ips);
	struct probe p = { .g = g };
	struct agg_entry e;
	uint64_t h, value = 1;
	size_t i;

	if (size < want || size > sizeof(*r))
		return 0; /* not a record of this build: ignored */
	want += ((size_t)r->nuser + r->nkernel) * sizeof(uint64_t);
	if (r->nuser > AGENT_MAX_FRAMES || r->nkernel > AGENT_MAX_KFRAMES || size < want)
		return 0;
	if (r->flags & AGENT_STACK_OFF_CPU) {
		if (size < want + sizeof(value))
			return 0;
		memcpy(&value, (const uint8_t *)data + want, sizeof(value));
	}
	p.len = (uint32_t)want;
	h = ember_hash(&g->set.key, data, want);
	i = ember_hset_find(&g->set, h, same, &p, data);
	g->samples++;
	if (i != SIZE_MAX) {
		g->v[i].count += value;
		return 0;
	}
	e = (struct agg_entry){ .count = value, .off = g->arena.len, .len = p.len };
	if (g->n >= AGG_MAX_ENTRIES || ember_buf_append_grow(&g->arena, data, want) ||
	    EMBER_VEC_PUSH(g->v, g->n, g->alloc, e)) {
		g->arena.len = e.off;
		g->dropped++;
		return 0;
	}
	if (ember_hset_insert(&g->set, h, g->n - 1)) {
		g->n--;
		g->arena.len = e.off;
		g->dropped++;
		return 0;
	}
	if (g->on_new)
		g->on_new(g->on_new_ctx, r);
	return 0;
}

int agent_agg_drain(struct agent_agg *g, agent_sample_fn fn, void *ctx, size_t *nsamples)
{
	int err = 0;

	*nsamples = 0;
	for (size_t i = 0; i < g->n && !err; i++) {
		const struct agent_sample_rec *r =
			(const void *)(g->arena.data + g->v[i].off);
		struct agent_sample s = { .pid = r->pid, .tid = r->tid,
					  .flags = r->flags,
					  .count = g->v[i].count, .nuser = r->nuser,
					  .nkernel = r->nkernel,
					  .user = (const uint64_t *)r->ips,
					  .kernel = (const uint64_t *)r->ips + r->nuser };

		memcpy(s.comm, r->comm, sizeof(s.comm));
		s.comm[AGENT_COMM_LEN - 1] = '\0';
		if (!(s.flags & AGENT_STACK_OFF_CPU))
			*nsamples += s.count;
		err = fn(ctx, &s);
	}
	/* empty for the next interval: the arena freed (a busy interval's
	 * stacks do not stay in the RSS), the set's slots kept (8 bytes a
	 * slot) */
	g->n = 0;
	ember_buf_release(&g->arena); /* empty, same cap */
	ember_hset_clear(&g->set);
	return err;
}

uint64_t agent_agg_dropped(const struct agent_agg *g)
{
	return g ? g->dropped : 0;
}
