/*
 * drain.c - every --interval: switch the BPF side to the other set of
 * aggregation maps, wait for samples in flight, then read the set it
 * left (counts with lookup-and-delete in batches, the stacks they name)
 * and empty it, so it is clean when samples come back to it.  With
 * --transport ringbuf, the records still queued, then sample_agg.c's
 * counts.
 */
#include "agent_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 1024

struct drain {
	int counts, ustacks, kstacks;
	agent_sample_fn fn;
	void *ctx;
	size_t n;
	struct agent_ustack ust;
	uint64_t kips[AGENT_MAX_KFRAMES];
};

static int one(struct drain *d, const struct agent_count_key *k, uint64_t count)
{
	struct agent_sample s = { .pid = k->pid, .tid = k->tid, .flags = k->flags, .count = count };

	memcpy(s.comm, k->comm, sizeof(s.comm));
	s.comm[AGENT_COMM_LEN - 1] = '\0';
	if (k->ustack_hash && !bpf_map_lookup_elem(d->ustacks, &k->ustack_hash, &d->ust)) {
		s.user = (const uint64_t *)d->ust.ips;
		s.nuser = d->ust.len < AGENT_MAX_FRAMES ? d->ust.len : AGENT_MAX_FRAMES;
	}
	if (k->kstack_id >= 0) {
		uint32_t id = (uint32_t)k->kstack_id;

		if (!bpf_map_lookup_elem(d->kstacks, &id, d->kips)) {
			s.kernel = d->kips;
			while (s.nkernel < AGENT_MAX_KFRAMES && d->kips[s.nkernel])
				s.nkernel++;
		}
	}
	d->n += count;
	return d->fn(d->ctx, &s);
}

static int read_counts(struct drain *d)
{
	struct agent_count_key *keys = calloc(BATCH, sizeof(*keys));
	uint64_t *vals = calloc(BATCH, sizeof(*vals));
	struct agent_count_key in;
	bool first = true, done = false;
	int err = 0;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	while (!done && !err) {
		__u32 n = BATCH;
		struct agent_count_key out;
		int r = bpf_map_lookup_and_delete_batch(d->counts, first ? NULL : &in, &out, keys,
							vals, &n, NULL);

		if (r && errno != ENOENT) {
			err = -errno;
			break;
		}
		done = r != 0; /* ENOENT: this was the last batch */
		for (__u32 i = 0; i < n && !err; i++)
			err = one(d, &keys[i], vals[i]);
		in = out;
		first = false;
	}
	free(keys);
	free(vals);
	return err;
}

/* Delete every entry of a map (the stacks of the drained set). */
static void clear_map(int fd, size_t key_size)
{
	uint8_t key[64], next[64];

	if (key_size > sizeof(key))
		return;
	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, key_size);
		if (bpf_map_delete_elem(fd, key))
			break;
	}
}

int agent_drain(struct agent_bpf *b, agent_sample_fn fn, void *ctx, size_t *nsamples)
{
	struct drain *d;
	struct timespec wait = { .tv_nsec = 2 * 1000 * 1000 };
	unsigned set;
	int err;

	if (agent_bpf_agg(b)) { /* --transport ringbuf: what is queued, then the counts */
		agent_bpf_poll(b, 0);
		return agent_agg_drain(agent_bpf_agg(b), fn, ctx, nsamples);
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fn = fn;
	d->ctx = ctx;
	set = agent_bpf_flip(b);
	nanosleep(&wait, NULL); /* a BPF program runs for microseconds */
	agent_bpf_set_fds(b, set, &d->counts, &d->ustacks, &d->kstacks);
	err = read_counts(d);
	clear_map(d->ustacks, sizeof(uint64_t));
	clear_map(d->kstacks, sizeof(uint32_t));
	*nsamples = d->n;
	free(d);
	return err;
}
