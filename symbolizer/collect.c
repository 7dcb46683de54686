/*
 * collect.c - running every DWARF unit through the index build, on two
 * threads in a pipeline:
 *
 *   main thread:  unit ranges, line-program header (file table interned),
 *                 DIE walk (nodes, names, scope intervals)
 *   worker:       first the ELF symbol tables (symtab.c), then for each
 *                 unit its line rows (line_program.c) and the flattening
 *                 of scopes and rows into segment blocks (flatten.c)
 *
 * When units pile up for the worker, the main thread reads the rows of
 * the next one itself, so that neither thread idles whichever half costs
 * more on an input.  The DIE walk is the DIE reader's (die_walk.c) for
 * every unit it handles, libdw's (libdw_walk.c) for the others and for
 * files the reader does not read at all.  Ownership is split so that
 * nothing needs a lock but the queue: the main thread alone writes the
 * string table, names and nodes and uses libdw and libelf; the worker
 * alone writes the segments and blocks; both only read the section bytes
 * and the executable ranges, and charge the build's budget (atomic).
 * A line program's rows go with the first unit that names it
 * (unit_claim_rows).  Section pages are given back to the kernel
 * as units are done with them (file_pages.c).
 */
#include "sym_internal.h"

#include <dwarf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
	const struct elfdw_sections *ctx;
	struct sym_origin_cache origins;	/* the main thread's */
	struct sym_walk_ctx wc;			/* the main thread's */
	struct sym_symjob *syms;		/* the worker's, before units */
};

/* The worker's half of one unit: its rows (unless the main thread read
 * them) and its flattening.  The unit's buffers are lent to b meanwhile. */
static int unit_finish(struct sym_build *b, const struct elfdw_sections *ctx,
		       struct sym_unit *u)
{
	struct sym_ivals scopes = b->scopes, lines = b->lines;
	int err = 0;

	if (u->rows_read)
		b->lines = u->lines;
	else
		err = sym_unit_rows(u, ctx, b->exec, &b->lines);
	/* line programs are read once, in unit order: give them back */
	if (u->has_lines) {
		if (!b->line_done)
			b->line_done = ctx->line.data + u->stmt_off;
		sym_pages_done(&b->pages, &b->line_done,
			       ctx->line.data + u->stmt_end);
	}
	if (!err) {
		b->scopes = u->scopes;
		err = sym_flatten_unit(b);
		u->scopes = b->scopes;
		b->scopes = scopes;
	}
	if (u->rows_read) {
		u->lines = b->lines; /* freed with the unit */
		b->lines = lines;
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

	/* the symbol tables while the main thread starts on the DIEs */
	if (p->syms)
		p->syms->err = sym_symjob_collect(p->syms);

	while ((u = queue_pop(p))) {
		int err = p->err ? 0 : unit_finish(p->b, p->ctx, u);

		if (err && !p->err)
			p->err = err; /* the main thread reads it after join */
		sym_unit_free(u);
	}
	return NULL;
}

/* A new unit, its intervals charged to the build's budget. */
static struct sym_unit *unit_new(struct pipeline *p, int *err)
{
	struct sym_unit *u = calloc(1, sizeof(*u));

	if (!u) {
		*err = -ENOMEM;
		return NULL;
	}
	u->scopes.budget = u->lines.budget = p->b->budget;
	return u;
}

/* The main thread's half of one unit through libdw: a new sym_unit, or
 * NULL with *err. */
static struct sym_unit *unit_start(struct pipeline *p, Dwarf_Die *cudie,
				   int *err)
{
	struct sym_unit *u = unit_new(p, err);

	if (!u)
		return NULL;
	*err = sym_libdw_walk_unit(&p->wc, cudie, u);
	if (*err) {
		sym_unit_free(u);
		return NULL;
	}
	p->b->idx->units_libdw++;
	return u;
}

/* The same by the DIE reader; a unit it leaves to libdw goes to
 * unit_start once what the reader added for it is dropped. */
static struct sym_unit *unit_start_reader(struct pipeline *p,
					  struct sym_die_reader *r,
					  struct sym_die_unit *du, int *err)
{
	struct sym_index *idx = p->b->idx;
	size_t nnodes = idx->nnodes, nfunctions = idx->nfunctions,
	       ninlined = idx->ninlined;
	struct sym_unit *u = unit_new(p, err);

	if (!u)
		return NULL;
	*err = sym_die_walk_unit(r, du, &p->wc, u);
	if (!*err) {
		idx->units_read++;
		return u;
	}
	sym_unit_free(u);
	if (!elfdw_err_input(*err))
		return NULL;
	pr_debug("symbolizer: unit at 0x%llx left to libdw: %s",
		 (unsigned long long)du->u.off, r->why[0] ? r->why : strerror(-*err));
	idx->nnodes = nnodes; /* strings interned meanwhile stay: harmless */
	idx->nfunctions = nfunctions;
	idx->ninlined = ninlined;
	return unit_start(p, &du->cudie, err);
}

/* Units waiting for the worker beyond which the main thread reads the
 * rows of the next unit itself: the two halves of a unit cost about the
 * same, but not on every input, and the worker may get less of the CPU. */
#define SHARE_AT 2

static bool worker_behind(struct pipeline *p)
{
	bool behind;

	pthread_mutex_lock(&p->lock);
	behind = p->count >= SHARE_AT;
	pthread_mutex_unlock(&p->lock);
	return behind;
}

/* A unit whose line program an earlier unit took the rows of keeps its
 * files and leaves the rows (budget.c says why). */
static int unit_claim_rows(struct pipeline *p, struct sym_unit *u)
{
	int rc;

	if (!u->has_lines || !p->b->budget)
		return 0;
	rc = sym_budget_program_seen(p->b->budget, u->stmt_off);
	if (rc == 1) {
		u->has_lines = false;
		p->b->idx->lines_shared++;
	}
	return rc < 0 ? rc : 0;
}

/* Pass a started unit on to the worker (its rows read here when the
 * worker is behind), or finish it here if there is no worker. */
static int unit_hand_over(struct pipeline *p, struct sym_unit *u,
			  bool threaded)
{
	int err = unit_claim_rows(p, u);

	if (err) {
		sym_unit_free(u);
		return err;
	}

	if (threaded) {
		if (worker_behind(p)) {
			err = sym_unit_rows(u, p->ctx, p->b->exec, &u->lines);
			u->rows_read = !err;
		}
		if (err) {
			sym_unit_free(u);
			return err;
		}
		queue_push(p, u);
	} else {
		err = unit_finish(p->b, p->ctx, u);
		sym_unit_free(u);
	}
	return err;
}

static bool unit_wanted(uint8_t unit_type)
{
	return unit_type == DW_UT_compile || unit_type == DW_UT_partial;
}

/* Every compile and partial unit through libdw alone. */
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

		if (!unit_wanted(unit_type))
			continue;
		u = unit_start(p, &cudie, &err);
		if (!u)
			break;
		err = unit_hand_over(p, u, threaded);
	}
	if (!err && rc < 0)
		pr_warn("symbolizer: DWARF units unreadable past a point: %s",
			dwarf_errmsg(-1));
	return err;
}

/* The same units, listed by the DIE reader, which walks those it can. */
static int walk_units_reader(struct pipeline *p, struct sym_die_reader *r,
			     bool threaded)
{
	const uint8_t *info_done = r->s->info.data;
	struct sym_die_unit *du;
	int err = 0;

	for (size_t i = 0; !err && (du = sym_die_unit(r, i, &err)); i++) {
		struct sym_unit *u;

		if (!unit_wanted(du->u.unit_type))
			continue;
		u = unit_start_reader(p, r, du, &err);
		if (!u)
			break;
		/* its DIEs are read: later reads (references) fault them in */
		sym_pages_done(&p->b->pages, &info_done,
			       r->s->info.data + du->u.end);
		err = unit_hand_over(p, u, threaded);
	}
	if (!err && r->truncated)
		pr_warn("symbolizer: DWARF units unreadable past a point");
	return err;
}

/* The reader's walk when it reads the file (and b allows it), else libdw's. */
static int walk_all(struct pipeline *p, Dwarf *dw, bool threaded)
{
	struct sym_die_reader r;
	int err = -EOPNOTSUPP;

	memset(&r, 0, sizeof(r));
	if (!(p->b->flags & SYM_BUILD_LIBDW_ONLY))
		err = sym_die_open(&r, dw, p->ctx);
	r.budget = p->b->budget;
	if (!err)
		err = walk_units_reader(p, &r, threaded);
	else if (err == -EOPNOTSUPP)
		err = walk_units(p, dw, threaded);
	p->b->idx->abbrev_parses += r.abbrev_parses;
	sym_die_release(&r);
	return err;
}

/*
 * Reserve the index's big arrays from the sizes of the sections that fill
 * them: a mapping costs nothing until it is touched (big_array.c).  Guesses
 * from objdump (545k segments from 3.9 MB of line programs, 29k nodes
 * from 20 MB of DIEs) and the fixtures; the arrays still grow if short.
 */
static int reserve_arrays(struct sym_index *idx, const struct elfdw_sections *ctx)
{
	size_t segs = ctx->line.size / 6;
	size_t nodes = ctx->info.size / 160;

	if (sym_big_grow((void **)&idx->seg_start, &idx->seg_start_map,
			 segs * sizeof(*idx->seg_start)) ||
	    sym_big_grow((void **)&idx->segs, &idx->segs_map,
			 segs * sizeof(*idx->segs)) ||
	    sym_big_grow((void **)&idx->nodes, &idx->nodes_map,
			 nodes * sizeof(*idx->nodes)))
		return -ENOMEM;
	return 0;
}

int sym_collect_units(struct sym_build *b, Dwarf *dw, struct sym_symjob *syms)
{
	struct elfdw_sections ctx;
	struct pipeline p = { .b = b, .ctx = &ctx, .syms = syms };
	pthread_t worker;
	bool threaded;
	int err;

	if (!dwarf_getelf(dw))
		return -SYM_ERR_BAD_ELF;
	elfdw_sections_loaded(dwarf_getelf(dw), &ctx); /* as libdw loaded them */
	err = reserve_arrays(b->idx, &ctx);
	if (err)
		return err;
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	p.wc = (struct sym_walk_ctx){ b->idx, b->exec, &p.origins, &ctx, dw };
	threaded = pthread_create(&worker, NULL, worker_run, &p) == 0;
	err = walk_all(&p, dw, threaded);
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
