/*
 * collect.c - running every DWARF unit through the index build, on two
 * threads in a pipeline:
 *
 *   main thread:  unit ranges, line-program header (file table interned),
 *                 DIE walk through libdw (nodes, names, scope intervals)
 *   worker:       line rows of the unit (line_program.c), flattening of
 *                 scopes and rows into segment blocks (flatten.c)
 *
 * The two halves cost about the same on big inputs, so the pipeline
 * nearly halves the build without a second libdw handle or a second
 * mapping of the file.  Ownership is split so that nothing needs a lock
 * but the queue: the main thread alone writes the string table, names
 * and nodes; the worker alone writes the segments and blocks; both only
 * read the section bytes and the executable ranges.
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <pthread.h>
#include <stdlib.h>

/* Units in flight: enough to ride out one big unit, bounded in memory. */
#define QUEUE_MAX 8

struct pipeline {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct sym_unit *head, *tail;
	size_t count;
	bool done;		/* the main thread has queued its last unit */
	int err;		/* the worker's first error */
	struct sym_build *b;
	const struct sym_line_ctx *ctx;
	struct sym_origin_cache origins;	/* the main thread's */
};

/* The worker's half of one unit. */
static int unit_finish(struct sym_build *b, const struct sym_line_ctx *ctx,
		       struct sym_unit *u)
{
	int err = sym_unit_rows(u, ctx, b->exec, &b->lines);

	if (!err) {
		struct sym_ivals mine = b->scopes;

		b->scopes = u->scopes;
		err = sym_flatten_unit(b);
		u->scopes = b->scopes;
		b->scopes = mine;
	}
	return err;
}

static struct sym_unit *queue_pop(struct pipeline *p)
{
	struct sym_unit *u;

	pthread_mutex_lock(&p->lock);
	while (!p->head && !p->done)
		pthread_cond_wait(&p->changed, &p->lock);
	u = p->head;
	if (u) {
		p->head = u->next;
		if (!p->head)
			p->tail = NULL;
		p->count--;
		pthread_cond_broadcast(&p->changed);
	}
	pthread_mutex_unlock(&p->lock);
	return u;
}

static void queue_push(struct pipeline *p, struct sym_unit *u)
{
	pthread_mutex_lock(&p->lock);
	while (p->count >= QUEUE_MAX)
		pthread_cond_wait(&p->changed, &p->lock);
	u->next = NULL;
	if (p->tail)
		p->tail->next = u;
	else
		p->head = u;
	p->tail = u;
	p->count++;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
}

static void *worker_run(void *arg)
{
	struct pipeline *p = arg;
	struct sym_unit *u;

	while ((u = queue_pop(p))) {
		int err = p->err ? 0 : unit_finish(p->b, p->ctx, u);

		if (err && !p->err)
			p->err = err; /* the main thread reads it after join */
		sym_unit_free(u);
	}
	return NULL;
}

/* The main thread's half of one unit: a new sym_unit, or NULL with *err. */
static struct sym_unit *unit_start(struct pipeline *p, Dwarf_Die *cudie,
				   int *err)
{
	struct sym_build *b = p->b;
	struct sym_unit *u = calloc(1, sizeof(*u));
	const char *comp_dir = sym_unit_comp_dir(cudie);

	if (!u) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = sym_unit_prepare(b->idx, cudie, p->ctx, comp_dir, u);
	if (!*err)
		*err = sym_dwarf_walk_unit(b->idx, b->exec, &p->origins, cudie,
					   comp_dir, &u->files, &u->scopes);
	if (*err) {
		sym_unit_free(u);
		return NULL;
	}
	return u;
}

/* Feed every compile unit to the worker (or finish it here if there is
 * no worker). */
static int walk_units(struct pipeline *p, Dwarf *dw, bool threaded)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie;
	int rc, err = 0;

	while (!err && (rc = dwarf_get_units(dw, cu, &cu, &version, &unit_type,
					     &cudie, NULL)) == 0) {
		struct sym_unit *u;

		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		u = unit_start(p, &cudie, &err);
		if (!u)
			break;
		if (threaded) {
			queue_push(p, u);
		} else {
			err = unit_finish(p->b, p->ctx, u);
			sym_unit_free(u);
		}
	}
	if (!err && rc < 0)
		pr_warn("symbolizer: DWARF units unreadable past a point: %s",
			dwarf_errmsg(-1));
	return err;
}

int sym_dwarf_collect(struct sym_build *b, Dwarf *dw)
{
	struct sym_line_ctx ctx;
	struct pipeline p = { .b = b, .ctx = &ctx };
	pthread_t worker;
	bool threaded;
	int err;

	err = sym_line_ctx_init(dw, &ctx);
	if (err)
		return err;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	threaded = pthread_create(&worker, NULL, worker_run, &p) == 0;
	err = walk_units(&p, dw, threaded);
	if (threaded) {
		pthread_mutex_lock(&p.lock);
		p.done = true;
		pthread_cond_broadcast(&p.changed);
		pthread_mutex_unlock(&p.lock);
		pthread_join(worker, NULL);
	}
	if (!err)
		err = p.err;
	sym_origin_cache_release(&p.origins);
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.lock);
	return err;
}
