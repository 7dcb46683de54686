/*
 * jfr_build.c - a chunk's sample events resolved through its constant
 * pools into one pprof profile a profile type (the table of jfr.h, as
 * grafana/jfr-parser's pprof package builds them for Pyroscope): the
 * events of a type grouped by stack trace and context; each stack trace's
 * frames (leaf first, as JFR and pprof both list them) named
 * "pkg.Class.method" from their method's class and name symbols (the
 * class's "a/b/C" written "a.b.C"), one location a (function, line).
 * CPU samples of a sleeping thread are not CPU time and are left out; an
 * event whose stack trace is not in the pools, and a frame whose method
 * or class is not, are passed over (as Pyroscope does).  Durations are
 * converted from the chunk's ticks into nanoseconds.  The profiles'
 * memory is charged to the decode's account.
 */
#include "jfr_internal.h"
#include "wire_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A location of a profile: its function and line. */
struct loc_key {
	uint64_t fid;
	int64_t line;
	uint64_t lid;
};

struct jfr_builder {
	struct pprof_profile *p;
	JFR_VEC(struct loc_key) locs;
	struct ember_hset set; /* of locs, by (fid, line) */
	size_t n_events;
};

static const struct {
	const char *event, *name;
	const char *types[2][2]; /* the sample types, type and unit */
	const char *period[2];	 /* period type and unit */
} kinds[JFR_KIND_COUNT] = {
	[JFR_KIND_CPU] = { "jdk.ExecutionSample", "process_cpu",
			   { { "cpu", "nanoseconds" } }, { "cpu", "nanoseconds" } },
	[JFR_KIND_ALLOC_IN_NEW_TLAB] = { "jdk.ObjectAllocationInNewTLAB", "memory",
					 { { "alloc_in_new_tlab_objects", "count" },
					   { "alloc_in_new_tlab_bytes", "bytes" } },
					 { "space", "bytes" } },
	[JFR_KIND_ALLOC_OUTSIDE_TLAB] = { "jdk.ObjectAllocationOutsideTLAB", "memory",
					  { { "alloc_outside_tlab_objects", "count" },
					    { "alloc_outside_tlab_bytes", "bytes" } },
					  { "space", "bytes" } },
	[JFR_KIND_ALLOC_SAMPLE] = { "jdk.ObjectAllocationSample", "memory",
				    { { "alloc_sample_objects", "count" },
				      { "alloc_sample_bytes", "bytes" } },
				    { "space", "bytes" } },
	[JFR_KIND_LOCK] = { "jdk.JavaMonitorEnter", "mutex",
			    { { "contentions", "count" }, { "delay", "nanoseconds" } },
			    { "mutex", "count" } },
	[JFR_KIND_PARK] = { "jdk.ThreadPark", "block",
			    { { "contentions", "count" }, { "delay", "nanoseconds" } },
			    { "block", "count" } },
};

static bool loc_equal(const void *ctx, size_t idx, const void *key)
{
	const struct loc_key *a = &((const struct jfr_builder *)ctx)->locs.v[idx], *b = key;

	return a->fid == b->fid && a->line == b->line;
}

static int builder_new(struct jfr_dec *x, enum jfr_kind k, struct jfr_builder **out)
{
	struct jfr_builder *b;
	int err;

	EMBER_FORWARD_IF_ERROR(ember_mem_account_take(x->lim.account, sizeof(*b) + 4096));
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	*out = b; /* freed by jfr_builders_free whatever follows */
	b->p = pprof_profile_new();
	if (!b->p)
		return -ENOMEM;
	b->p->acct = x->lim.account;
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&b->set));
	for (int i = 0; i < (k == JFR_KIND_CPU ? 1 : 2); i++)
		EMBER_FORWARD_IF_ERROR(pprof_add_sample_type(b->p, kinds[k].types[i][0],
							     kinds[k].types[i][1]));
	err = pprof_set_period(b->p, kinds[k].period[0], kinds[k].period[1],
			       k == JFR_KIND_CPU ? x->cpu_period : 1);
	return err;
}

void jfr_builders_free(struct jfr_dec *x)
{
	for (size_t i = 0; i < JFR_KIND_COUNT; i++) {
		struct jfr_builder *b = x->b[i];

		if (!b)
			continue;
		pprof_profile_free(b->p);
		free(b->locs.v);
		ember_hset_release(&b->set);
		free(b);
		x->b[i] = NULL;
	}
}

/* ---- frames ------------------------------------------------------------------------ */

/* The text of a string value (through the String pool), or NULL. */
static const char *str_of(const struct jfr_dec *x, const struct jfr_str *s)
{
	if (s->is_ref) {
		const struct jfr_const *k = jfr_const_find(x, JFR_ROLE_STRING, s->ref);

		s = k ? &k->r.s : NULL;
	}
	return s && s->set && !s->is_ref ? jfr_text(x, s->off) : NULL;
}

/* The text of symbol id ("" for a null or empty one), or NULL when the
 * pool has no such symbol. */
static const char *symbol(const struct jfr_dec *x, int64_t id)
{
	const struct jfr_const *k = jfr_const_find(x, JFR_ROLE_SYMBOL, id);
	const char *s = k ? str_of(x, &k->r.s) : NULL;

	return s ? s : k && !k->r.s.is_ref ? "" : NULL;
}

/*
 * cls ("a/b/C") written "a.b.C" into buf; a lambda's hidden class
 * ("C$$Lambda$88+0x...a08/1790421142", different in every run) as
 * "C$$Lambda_", as Pyroscope merges them.
 */
static void class_name(const char *cls, char *buf, size_t size)
{
	const char *lambda = strstr(cls, "$$Lambda");
	size_t n = lambda ? (size_t)(lambda - cls) + 8 : strlen(cls);

	snprintf(buf, size, "%.*s%s", (int)(n < size ? n : size - 1), cls, lambda ? "_" : "");
	for (char *p = buf; *p; p++)
		if (*p == '/')
			*p = '.';
}

/* "pkg.Class.method" of method id into buf (a class named "": "method",
 * as async-profiler may name native frames); false when the method, its
 * class or their names are not in the pools. */
static bool method_name(const struct jfr_dec *x, int64_t id, char *buf, size_t size)
{
	const struct jfr_const *m = jfr_const_find(x, JFR_ROLE_METHOD, id), *c;
	const char *cls, *name;
	char cbuf[512];

	c = m ? jfr_const_find(x, JFR_ROLE_CLASS, m->r.v[JFR_SLOT_STACK]) : NULL;
	cls = c ? symbol(x, c->r.v[JFR_SLOT_STATE]) : NULL;
	name = m ? symbol(x, m->r.v[JFR_SLOT_STATE]) : NULL;
	if (!cls || !name)
		return false;
	class_name(cls, cbuf, sizeof(cbuf));
	snprintf(buf, size, "%s%s%s", cbuf, *cbuf ? "." : "", name);
	return true;
}

static int location(struct jfr_dec *x, struct jfr_builder *b, const struct jfr_frame *f,
		    uint64_t *lid, bool *found)
{
	char name[1024];
	struct pprof_function_desc fd = { .name = name, .system_name = name };
	struct loc_key k = { .line = f->line > 0 ? f->line : 0 }; /* -1: none */
	struct pprof_line ln;
	uint64_t h;
	size_t i;
	int err;

	*found = method_name(x, f->method, name, sizeof(name));
	if (!*found)
		return 0;
	EMBER_FORWARD_IF_ERROR(pprof_add_function(b->p, &fd, &k.fid));
	h = ember_hash(&b->set.key, &k, offsetof(struct loc_key, lid));
	i = ember_hset_find(&b->set, h, loc_equal, b, &k);
	if (i != SIZE_MAX) {
		*lid = b->locs.v[i].lid;
		return 0;
	}
	EMBER_FORWARD_IF_ERROR(pprof_add_location(b->p, 0, 0, &k.lid));
	ln = (struct pprof_line){ .function_id = k.fid, .line = k.line };
	EMBER_FORWARD_IF_ERROR(pprof_location_set_lines(b->p, k.lid, &ln, 1));
	EMBER_FORWARD_IF_ERROR(JFR_PUSH(x, &b->locs, k, err));
	EMBER_FORWARD_IF_ERROR(ember_hset_insert(&b->set, h, b->locs.n - 1));
	*lid = k.lid;
	return 0;
}

/* ---- samples ------------------------------------------------------------------------- */

/* A group of events: one kind, stack trace and context. */
struct group {
	uint8_t kind;
	int64_t stack, context;
	int64_t count, value;
};

static int sample_add(struct jfr_dec *x, const struct group *g, uint64_t *locs)
{
	const struct jfr_const *st = jfr_const_find(x, JFR_ROLE_STACKTRACE, g->stack);
	struct pprof_sample_label labels[64];
	const char *const *pairs = NULL;
	struct jfr_builder *b;
	int64_t v[2] = { g->count, g->value };
	size_t n = 0, nl = 0;

	if (!st || !g->count)
		return 0;
	if (!x->b[g->kind])
		EMBER_FORWARD_IF_ERROR(builder_new(x, g->kind, &x->b[g->kind]));
	b = x->b[g->kind];
	for (uint32_t i = 0; i < st->r.n_frames; i++) {
		bool found;

		EMBER_FORWARD_IF_ERROR(location(x, b, &x->frames.v[st->r.first_frame + i], &locs[n],
						&found));
		n += found;
	}
	if (!n)
		return 0;
	if (g->kind == JFR_KIND_CPU)
		v[0] = g->count * x->cpu_period;
	if (x->labels)
		jfr_labels_of(x->labels, g->context, &pairs, &nl);
	for (size_t i = 0; i < nl && i < sizeof(labels) / sizeof(labels[0]); i++)
		labels[i] = (struct pprof_sample_label){ .key = pairs[2 * i],
							 .str = pairs[2 * i + 1] };
	b->n_events += (size_t)g->count;
	return pprof_add_sample_labeled(b->p, locs, n, v, g->kind == JFR_KIND_CPU ? 1 : 2, labels,
					nl < 64 ? nl : 64);
}

static int event_cmp(const void *a, const void *b)
{
	const struct jfr_event *p = a, *q = b;

	if (p->kind != q->kind)
		return p->kind < q->kind ? -1 : 1;
	if (p->stack != q->stack)
		return p->stack < q->stack ? -1 : 1;
	return (p->context > q->context) - (p->context < q->context);
}

static bool sleeping(const struct jfr_dec *x, const struct jfr_event *e)
{
	const struct jfr_const *k;
	const char *s;

	if (e->kind != JFR_KIND_CPU || e->state == INT64_MIN)
		return false;
	k = jfr_const_find(x, JFR_ROLE_STATE, e->state);
	s = k ? str_of(x, &k->r.s) : NULL;
	return s && strcmp(s, "STATE_SLEEPING") == 0;
}

/* An event's value: bytes as they are, durations from ticks into ns. */
static int64_t event_value(const struct jfr_event *e, uint64_t ticks_per_s)
{
	double ns;

	if (e->kind != JFR_KIND_LOCK && e->kind != JFR_KIND_PARK)
		return e->value < 0 ? 0 : e->value;
	ns = (double)(e->value < 0 ? 0 : e->value) * 1e9 / (double)(ticks_per_s ? ticks_per_s : 1000000000);
	return ns >= 9e18 ? (int64_t)9e18 : (int64_t)ns;
}

int jfr_build_chunk(struct jfr_dec *x, uint64_t ticks_per_s)
{
	int err = jfr_reserve(x, (void **)&x->locs.v, &x->locs.alloc, x->lim.max_stack_depth,
			      sizeof(*x->locs.v)); /* once a recording */

	if (x->events.n)
		qsort(x->events.v, x->events.n, sizeof(*x->events.v), event_cmp);
	for (size_t i = 0; !err && i < x->events.n;) {
		const struct jfr_event *e = &x->events.v[i];
		struct group g = { .kind = e->kind, .stack = e->stack, .context = e->context };

		for (; i < x->events.n && !event_cmp(&x->events.v[i], e); i++) {
			if (sleeping(x, &x->events.v[i]))
				continue;
			int64_t v = event_value(&x->events.v[i], ticks_per_s);

			g.count++;
			g.value = v > INT64_MAX - g.value ? INT64_MAX : g.value + v;
		}
		err = sample_add(x, &g, x->locs.v);
	}
	return err;
}

int jfr_build_finish(struct jfr_dec *x)
{
	struct jfr_recording *r = x->rec;

	for (size_t k = 0; k < JFR_KIND_COUNT; k++) {
		struct jfr_builder *b = x->b[k];

		if (!b || !pprof_message(b->p)->n_sample)
			continue;
		pprof_set_time(b->p, r->start_ns, r->duration_ns);
		r->profiles[r->n_profiles++] = (struct jfr_profile){
			.p = b->p, .kind = (enum jfr_kind)k, .name = kinds[k].name,
			.event = kinds[k].event, .n_events = b->n_events };
		b->p = NULL;
	}
	return 0;
}
