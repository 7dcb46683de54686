/*
 * profile_build.c - one interval's drained counts -> a pprof profile
 * (profile.proto): sample types samples/count and cpu/nanoseconds (and
 * with --off-cpu a third, off_cpu/nanoseconds, the OpenTelemetry eBPF
 * profiler's name: a block's sample has 0 in the first two), the
 * period, one mapping per process mapping seen (start, limit, file
 * offset, path, build ID in hex), locations with raw user addresses
 * (symbolized centrally by build ID), kernel frames named here from
 * /proc/kallsyms (frame type "kernel", Location field 1000), JIT frames
 * named from /tmp/perf-PID.map, Python frames named from their code objects (mapping "[python]": python_proc.c), and labels on
 * every sample: the series labels host, service_name (service_id.c) and the
 * --label ones that apply to its service; then, as sample attributes
 * ("@KEY": per sample, never a series on the server), @pid, @tid (the
 * thread), @comm (the thread's name), @executable, @build_id, @cgroup,
 * @container_id and @unwind (how the walk ended).
 *
 * Addresses: the leaf frame's is the sampled pc; a caller's is its return
 * address minus one, inside the call instruction, so a lookup lands on
 * the calling line (as perf's converters and Go's runtime/pprof do).
 * A walk deeper than the bound gets a last frame "[truncated]".
 */
#include "agent_internal.h"
#include "pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loc_key {
	uint64_t mapping, addr;
	uint64_t kernel; /* 1: a kernel frame (named), 2: a pseudo frame,
			    3: a Python frame (addr: its line) */
	uint64_t function; /* a Python frame's function */
};

struct agent_profile {
	const struct agent_opts *o;
	struct agent_procs *procs;
	const struct agent_kallsyms *ks;
	struct pprof_profile *p;
	uint64_t kernel_mapping;
	uint64_t python_mapping; /* "[python]", made at the first Python frame */
	struct loc_key *keys;
	uint64_t *ids;
	size_t nkeys, akeys, aids;
	struct ember_hset locs;
	int64_t period_ns;
	size_t nsamples;	/* pprof samples added, CPU and off-CPU */
};

static void reset_ids(void *ctx, struct agent_process *pr)
{
	(void)ctx;
	for (size_t i = 0; i < pr->nmaps; i++)
		pr->maps[i].pprof_id = 0;
	for (size_t i = 0; i < pr->nretired; i++)
		pr->retired[i].pprof_id = 0;
}

static int start(struct agent_profile *pr, const struct agent_profile_opts *o)
{
	struct pprof_profile *p = pr->p;
	uint64_t s = 0, e = 0;
	struct pprof_mapping_desc km = { .filename = "[kernel.kallsyms]" };

	EMBER_FORWARD_IF_ERROR(pprof_add_sample_type(p, "samples", "count"));
	EMBER_FORWARD_IF_ERROR(pprof_add_sample_type(p, "cpu", "nanoseconds"));
	if (pr->o->off_cpu)
		EMBER_FORWARD_IF_ERROR(pprof_add_sample_type(p, "off_cpu", "nanoseconds"));
	EMBER_FORWARD_IF_ERROR(pprof_set_period(p, "cpu", "nanoseconds", pr->period_ns));
	pprof_set_time(p, (int64_t)o->start_ns, (int64_t)o->duration_ns);
	if (pr->ks)
		agent_kallsyms_text(pr->ks, &s, &e);
	km.start = s;
	km.limit = UINT64_MAX;
	EMBER_FORWARD_IF_ERROR(pprof_add_mapping(p, &km, &pr->kernel_mapping));
	return pprof_mapping_set_flags(p, pr->kernel_mapping, PPROF_MAPPING_HAS_FUNCTIONS);
}

struct agent_profile *agent_profile_new(const struct agent_profile_opts *o, int *err)
{
	struct agent_profile *pr = calloc(1, sizeof(*pr));
	int e;

	if (!pr) {
		*err = -ENOMEM;
		return NULL;
	}
	pr->o = o->opts;
	pr->procs = o->procs;
	pr->ks = o->kallsyms;
	pr->period_ns = 1000000000 / (o->opts->frequency ? o->opts->frequency : 1);
	pr->p = pprof_profile_new();
	e = pr->p ? ember_hset_init(&pr->locs) : -ENOMEM;
	if (!e)
		e = start(pr, o);
	if (e) {
		agent_profile_free(pr);
		*err = e;
		return NULL;
	}
	agent_procs_foreach(o->procs, reset_ids, NULL);
	return pr;
}

void agent_profile_free(struct agent_profile *pr)
{
	if (!pr)
		return;
	pprof_profile_free(pr->p);
	ember_hset_release(&pr->locs);
	free(pr->keys);
	free(pr->ids);
	free(pr);
}

static bool key_equal(const void *ctx, size_t idx, const void *key)
{
	const struct agent_profile *pr = ctx;

	return !memcmp(&pr->keys[idx], key, sizeof(struct loc_key));
}


/* The location of k when the profile has it already: true with *id. */
static bool known_location(const struct agent_profile *pr, const struct loc_key *k,
			   uint64_t *id)
{
	uint64_t h = ember_hash(&pr->locs.key, k, sizeof(*k));
	size_t i = ember_hset_find(&pr->locs, h, key_equal, pr, k);

	if (i != SIZE_MAX)
		*id = pr->ids[i];
	return i != SIZE_MAX;
}

/* The location of k, added with line (its function named, when given)
 * at address addr the first time. */
static int location_with(struct agent_profile *pr, const struct loc_key *k, uint64_t addr,
			 const struct pprof_line *line, uint64_t *id)
{
	uint64_t h = ember_hash(&pr->locs.key, k, sizeof(*k));
	size_t i = ember_hset_find(&pr->locs, h, key_equal, pr, k);

	if (i != SIZE_MAX) {
		*id = pr->ids[i];
		return 0;
	}
	if (pr->nkeys >= pr->akeys &&
	    ember_vec_grow((void **)&pr->keys, &pr->akeys, pr->nkeys, sizeof(*pr->keys)))
		return -ENOMEM;
	if (pr->nkeys >= pr->aids &&
	    ember_vec_grow((void **)&pr->ids, &pr->aids, pr->nkeys, sizeof(*pr->ids)))
		return -ENOMEM;
	EMBER_FORWARD_IF_ERROR(pprof_add_location(pr->p, k->mapping, addr, id));
	if (line)
		EMBER_FORWARD_IF_ERROR(pprof_location_set_lines(pr->p, *id, line, 1));
	pr->keys[pr->nkeys] = *k;
	pr->ids[pr->nkeys] = *id;
	EMBER_FORWARD_IF_ERROR(ember_hset_insert(&pr->locs, h, pr->nkeys));
	pr->nkeys++;
	return 0;
}

/* The location of k at its address, named name (kernel, JIT and pseudo
 * frames) or not (NULL), added the first time. */
static int location(struct agent_profile *pr, const struct loc_key *k, const char *name,
		    uint64_t *id)
{
	struct pprof_function_desc d = { .name = name, .system_name = name };
	struct pprof_line line = { 0 };

	if (known_location(pr, k, id))
		return 0;
	if (name)
		EMBER_FORWARD_IF_ERROR(pprof_add_function(pr->p, &d, &line.function_id));
	return location_with(pr, k, k->addr, name ? &line : NULL, id);
}

static int kernel_location(struct agent_profile *pr, uint64_t addr, bool leaf, uint64_t *id)
{
	struct loc_key k = { .mapping = pr->kernel_mapping, .addr = addr, .kernel = 1 };
	const char *mod = "", *name;
	char buf[600];

	if (known_location(pr, &k, id))
		return 0; /* named already: no lookup (kallsyms' names are compressed) */
	name = pr->ks ? agent_kallsyms_lookup(pr->ks, leaf ? addr : addr - 1, &mod) : NULL;
	if (!name)
		snprintf(buf, sizeof(buf), "[kernel 0x%" PRIx64 "]", addr);
	else if (mod && *mod)
		snprintf(buf, sizeof(buf), "%s [%s]", name, mod);
	else
		snprintf(buf, sizeof(buf), "%s", name);
	EMBER_FORWARD_IF_ERROR(location(pr, &k, buf, id));
	/* OTLP's profile.frame.type: what the UI's Hide kernel goes by */
	return pprof_location_set_frame_type(pr->p, *id, "kernel");
}

static int mapping_id(struct agent_profile *pr, struct agent_proc_map *m, uint64_t *id)
{
	struct pprof_mapping_desc d = { .start = m->start, .limit = m->end, .offset = m->offset,
					.filename = m->path };

	if (m->pprof_id) {
		*id = m->pprof_id;
		return 0;
	}
	if (m->file && m->file->elf.build_id_len)
		d.build_id = m->file->elf.build_id_hex;
	if (!d.filename || !d.filename[0])
		d.filename = "[anon]";
	EMBER_FORWARD_IF_ERROR(pprof_add_mapping(pr->p, &d, &m->pprof_id));
	*id = m->pprof_id;
	return 0;
}

static int user_location(struct agent_profile *pr, struct agent_process *proc, uint64_t pc,
			 bool leaf, uint64_t *id)
{
	uint64_t addr = leaf ? pc : pc - 1;
	struct agent_proc_map *m = proc ? agent_process_mapping(proc, pc) : NULL;
	struct loc_key k = { .addr = addr };
	const char *jit = NULL;

	if (m) {
		EMBER_FORWARD_IF_ERROR(mapping_id(pr, m, &k.mapping));
		if (!m->file)
			jit = agent_perfmap_name(pr->procs, proc, addr);
	}
	return location(pr, &k, jit, id);
}

/* "[python]": the mapping of Python frames, named here. */
static int python_mapping(struct agent_profile *pr, uint64_t *id)
{
	struct pprof_mapping_desc d = { .filename = "[python]" };

	if (!pr->python_mapping) {
		EMBER_FORWARD_IF_ERROR(pprof_add_mapping(pr->p, &d, &pr->python_mapping));
		EMBER_FORWARD_IF_ERROR(pprof_mapping_set_flags(
			pr->p, pr->python_mapping,
			PPROF_MAPPING_HAS_FUNCTIONS | PPROF_MAPPING_HAS_FILENAMES |
				PPROF_MAPPING_HAS_LINE_NUMBERS));
	}
	*id = pr->python_mapping;
	return 0;
}

/* A Python frame (AGENT_PY_FRAME_TAG): its function (qualified name, file,
 * first line) at its line; one location per function and line, whatever
 * the process.  Unreadable: "[python]" alone. */
static int python_location(struct agent_profile *pr, struct agent_process *proc,
			   uint64_t frame, uint64_t *id)
{
	struct agent_py_frame f;
	struct pprof_function_desc d = { .name = "[python]", .system_name = "[python]" };
	struct pprof_line line = { 0 };
	struct loc_key k = { .kernel = 3 };

	EMBER_FORWARD_IF_ERROR(python_mapping(pr, &k.mapping));
	if (!agent_procs_python_frame(pr->procs, proc, frame, &f)) {
		d = (struct pprof_function_desc){ .name = f.qualname, .system_name = f.qualname,
						  .filename = f.filename,
						  .start_line = f.firstlineno };
		line.line = f.line;
	}
	EMBER_FORWARD_IF_ERROR(pprof_add_function(pr->p, &d, &line.function_id));
	k.addr = (uint64_t)line.line;
	k.function = line.function_id;
	return location_with(pr, &k, 0, &line, id);
}

static int pseudo_location(struct agent_profile *pr, const char *name, uint64_t *id)
{
	struct loc_key k = { .kernel = 2 }; /* the one pseudo frame */

	return location(pr, &k, name, id);
}

static const char *unwind_label(uint32_t flags)
{
	if (flags & AGENT_STACK_KERNEL_THREAD)
		return "kernel_thread";
	if (flags & AGENT_STACK_UNKNOWN_PROC)
		return "unknown_process";
	if (flags & AGENT_STACK_TRUNCATED)
		return "truncated";
	if (flags & AGENT_STACK_COMPLETE)
		return "complete";
	if (flags & AGENT_STACK_NO_MAPPING)
		return "no_mapping";
	if (flags & AGENT_STACK_NO_CFI)
		return "no_cfi";
	if (flags & AGENT_STACK_READ_FAILED)
		return "read_failed";
	if (flags & AGENT_STACK_UNSUPPORTED)
		return "unsupported_rule";
	return "stopped";
}

/* The build ID of the process' executable, if a mapping of it has one. */
static const char *exe_build_id(const struct agent_process *proc)
{
	for (size_t i = 0; proc && i < proc->nmaps; i++)
		if (proc->maps[i].file && proc->maps[i].file->elf.build_id_len &&
		    !strcmp(proc->maps[i].path, proc->exe))
			return proc->maps[i].file->elf.build_id_hex;
	return NULL;
}

/* Whether --label i of o goes on a sample of service: it applies, names
 * no service_name, and no label for service alone overrides it. */
static bool label_applies(const struct agent_opts *o, size_t i, const char *service)
{
	const struct agent_label *l = &o->labels[i];

	if (!strcmp(l->key, "service_name") || !agent_label_applies(l, service))
		return false;
	for (size_t j = 0; !l->service && j < o->nlabels; j++)
		if (o->labels[j].service && !strcmp(o->labels[j].key, l->key) &&
		    agent_label_applies(&o->labels[j], service))
			return false;
	return true;
}

/* The service_name of a sample: a plain --label service_name=S, else
 * detected (its process', or its comm when the process is unknown). */
static const char *service_label(const struct agent_opts *o, const char *detected)
{
	for (size_t i = 0; i < o->nlabels; i++)
		if (!o->labels[i].service && !strcmp(o->labels[i].key, "service_name"))
			return o->labels[i].value;
	return detected;
}

/* Series labels (host, service_name, the --label ones that apply) and,
 * named "@KEY", the sample's attributes: kept per sample by the server,
 * never a series (docs/formats.md), so one service is one series. */
static size_t labels_of(const struct agent_profile *pr, const struct agent_sample *s,
			const struct agent_process *proc, char (*num)[16],
			struct pprof_sample_label *l)
{
	const char *bid = exe_build_id(proc);
	const char *service = proc && proc->service[0] ? proc->service : s->comm;
	size_t n = 0;

	snprintf(num[0], sizeof(num[0]), "%u", s->pid);
	snprintf(num[1], sizeof(num[1]), "%u", s->tid);
	l[n++] = (struct pprof_sample_label){ .key = "host", .str = pr->o->host };
	l[n++] = (struct pprof_sample_label){ .key = "service_name",
					       .str = service_label(pr->o, service) };
	for (size_t i = 0; i < pr->o->nlabels; i++)
		if (label_applies(pr->o, i, service))
			l[n++] = (struct pprof_sample_label){ .key = pr->o->labels[i].key,
							       .str = pr->o->labels[i].value };
	l[n++] = (struct pprof_sample_label){ .key = "@pid", .str = num[0] };
	l[n++] = (struct pprof_sample_label){ .key = "@tid", .str = num[1] };
	l[n++] = (struct pprof_sample_label){ .key = "@comm", .str = s->comm };
	if (proc && proc->exe[0])
		l[n++] = (struct pprof_sample_label){ .key = "@executable", .str = proc->exe };
	if (bid)
		l[n++] = (struct pprof_sample_label){ .key = "@build_id", .str = bid };
	if (proc && proc->cgroup[0])
		l[n++] = (struct pprof_sample_label){ .key = "@cgroup", .str = proc->cgroup };
	if (proc && proc->container[0])
		l[n++] = (struct pprof_sample_label){ .key = "@container_id", .str = proc->container };
	l[n++] = (struct pprof_sample_label){ .key = "@unwind", .str = unwind_label(s->flags) };
	return n;
}

int agent_profile_add(void *ctx, const struct agent_sample *s)
{
	struct agent_profile *pr = ctx;
	struct agent_process *proc = agent_procs_find(pr->procs, (pid_t)s->pid);
	uint64_t ids[AGENT_MAX_KFRAMES + AGENT_MAX_FRAMES + 1];
	struct pprof_sample_label labels[10 + pr->o->nlabels];
	int64_t values[3] = { 0 };
	size_t nvalues = pr->o->off_cpu ? 3 : 2;
	char num[2][16]; /* @pid, @tid */
	size_t n = 0;

	for (uint32_t i = 0; i < s->nkernel; i++)
		EMBER_FORWARD_IF_ERROR(kernel_location(pr, s->kernel[i], i == 0, &ids[n++]));
	for (uint32_t i = 0; i < s->nuser; i++)
		if (s->user[i] & AGENT_PY_FRAME_TAG)
			EMBER_FORWARD_IF_ERROR(python_location(pr, proc, s->user[i], &ids[n++]));
		else
			EMBER_FORWARD_IF_ERROR(user_location(pr, proc, s->user[i],
							     i == 0 && s->nkernel == 0, &ids[n++]));
	if (s->flags & AGENT_STACK_TRUNCATED)
		EMBER_FORWARD_IF_ERROR(pseudo_location(pr, "[truncated]", &ids[n++]));
	if (s->flags & AGENT_STACK_OFF_CPU) {
		values[2] = (int64_t)s->count; /* ns blocked */
	} else {
		values[0] = (int64_t)s->count;
		values[1] = (int64_t)s->count * pr->period_ns;
	}
	pr->nsamples++;
	return pprof_add_sample_labeled(pr->p, ids, n, values, nvalues, labels,
				       labels_of(pr, s, proc, num, labels));
}

int agent_profile_encode(struct agent_profile *pr, bool gzip, struct ember_buf *out)
{
	return pprof_encode(pr->p, gzip, out);
}

size_t agent_profile_samples(const struct agent_profile *pr)
{
	return pr->nsamples;
}
