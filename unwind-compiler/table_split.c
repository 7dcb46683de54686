/*
 * table_split.c - a big compile in two halves on two threads: the walk
 * of .eh_frame, then the table.
 *
 * The walk: the helper walks .eh_frame from an entry boundary near its
 * middle (unwind_cfi_guess_boundary), borrowing the CIEs before it, while
 * this thread walks up to it.  Only if this thread's walk arrives exactly
 * there, and the first half has every CIE the second borrowed, are the
 * second half's CIEs and FDEs appended (unwind_cfi_join); otherwise this
 * thread walks on from where it stopped, as one thread would.
 *
 * The table: running the FDEs into rows and encoding the pages is most
 * of a compile (libLLVM: 95k FDEs, 818k rows).  The rows of one address
 * range depend only on the FDE that covers it, so the ordered FDEs are
 * cut at the base S of a 64 KiB page:
 *
 *  - the first half (the caller's thread and writer) runs the FDEs
 *    starting below S and stores the rows below S (unwind_writer_window);
 *  - the second half (a helper thread with its own writer, buffer, stats
 *    and message) first re-runs the last FDE starting below S, whose rows
 *    below S only set the rule in effect at S, then the FDEs from S on;
 *  - the second half's pages are appended to the first's and its rule
 *    ids renumbered into the first's table (unwind_writer_merge).
 *
 * Rule ids number rules in order of first use, pages are cut at the same
 * addresses and the first half ends with the pages its last rule covers,
 * so the blob is the same bytes as one thread's (tests compare them).
 * Each FDE and gap is counted by one half.  The first failure in address
 * order is the one reported, as with one thread.
 *
 * The helper is started before the sections are parsed
 * (unwind_split_begin): making a thread, its malloc arena and its output
 * buffer cost 1-2 ms of page faults on a VM, which then overlap the
 * parse instead of delaying the second half.
 */
#include "unwind_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Below this much CFI a second thread costs more than it saves (bash's
 * 100 KB compile in 1 ms; libLLVM's 5 MB in 30-40 ms). */
#define SPLIT_MIN_CFI ((size_t)1 << 20)

#define PAGE_SIZE_CODE (UINT64_C(1) << UNWIND_PAGE_BITS)

enum { WAIT = 0, RUN = 1, QUIT = -1 };

struct unwind_split {
	const struct unwind_input *in;
	struct unwind_build pb;	/* the second half's walk: its CIEs, FDEs */
	size_t mid;		/* where it starts (0: no split walk) */
	int parse_err;		/* of that walk */
	struct unwind_build b;	/* the second half's table: its own writer,
				   stats and message; the rest shared */
	struct ember_buf out;
	char msg[512];
	struct ember_diag diag;
	size_t est;		/* bytes of page data expected */
	uint64_t s;		/* the cut: an address, a page base */
	size_t k;		/* the first FDE at or after s */
	int err;
	pthread_t thread;
	bool threaded;		/* thread started (else run in turn) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool parsed;		/* (mu) the second half's walk is done */
	bool ready;		/* (mu) the helper's writer is made */
	int go;			/* (mu) WAIT, RUN or QUIT */
};

/* ---- the cut ---------------------------------------------------------- */

/* First FDE of the order starting at or after addr (norder if none). */
static size_t first_at(const struct unwind_build *b, uint64_t addr)
{
	size_t lo = 0, hi = b->norder;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (unwind_fde_at(b, mid)->start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * k with 0 < k < norder, FDEs [0, k) starting below *s and [k, norder)
 * at or after it, *s a page base near the middle of the work
 * (instruction bytes).  0 when every FDE is in one page.
 */
static size_t split_point(const struct unwind_build *b, uint64_t *s)
{
	uint64_t total = 0, acc = 0, base;
	size_t mid = 0, k;

	for (size_t i = 0; i < b->norder; i++)
		total += unwind_fde_at(b, i)->insns_len + 16;
	while (mid + 1 < b->norder && 2 * acc < total)
		acc += unwind_fde_at(b, mid++)->insns_len + 16;
	base = unwind_fde_at(b, mid)->start & ~(PAGE_SIZE_CODE - 1);
	k = first_at(b, base);
	if (k == 0) {		/* the first FDEs share mid's page: the next one */
		if (base > UINT64_MAX - PAGE_SIZE_CODE)
			return 0;
		base += PAGE_SIZE_CODE;
		k = first_at(b, base);
	}
	*s = base;
	return k < b->norder ? k : 0;
}

/*
 * Every CIE an FDE in the order uses, run once here: both halves read
 * them (unwind_cie_initial() fills a CIE in on first use).  false when
 * one fails: it is left unrun, for one thread to report the first
 * failure in address order with its message, as it would alone.
 */
static bool cies_prepare(struct unwind_build *b)
{
	struct ember_diag *d = b->diag, quiet = { NULL, 0, false };
	bool ok = true;

	b->diag = &quiet;
	for (size_t i = 0; i < b->norder && ok; i++) {
		struct unwind_cie *cie = unwind_fde_cie(b, unwind_fde_at(b, i));

		if (unwind_cie_initial(b, cie)) {
			cie->initial_err = 1;
			ok = false;
		}
	}
	b->diag = d;
	return ok;
}

/* ---- the helper --------------------------------------------------------- */

/* Its output buffer, faulted in ahead, and its writer. */
static int helper_prepare(struct unwind_split *sp)
{
	unwind_buf_prefault(&sp->out, sp->est);
	return unwind_writer_new(&sp->b, &sp->out);
}

/* The second half, once the cut is made. */
static int helper_work(struct unwind_split *sp)
{
	int err;

	unwind_writer_window(sp->b.writer, sp->s, UINT64_MAX);
	err = unwind_table_run_span(&sp->b, sp->k - 1, sp->b.norder, sp->k);
	return err ? err : unwind_writer_close(sp->b.writer);
}

/* Flag done (under mu) and wake the waiters. */
static void helper_flag(struct unwind_split *sp, bool *flag)
{
	pthread_mutex_lock(&sp->mu);
	*flag = true;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
}

/* Wait (under mu) for the helper to set flag. */
static void helper_await(struct unwind_split *sp, const bool *flag)
{
	pthread_mutex_lock(&sp->mu);
	while (!*flag)
		pthread_cond_wait(&sp->cv, &sp->mu);
	pthread_mutex_unlock(&sp->mu);
}

static void *helper_main(void *arg)
{
	struct unwind_split *sp = arg;
	int err, go;

	if (sp->mid) {
		unwind_build_init(&sp->pb, sp->in, &sp->diag);
		sp->parse_err = unwind_cfi_parse_second_half(&sp->pb, sp->mid);
		helper_flag(sp, &sp->parsed);
	}
	err = helper_prepare(sp);

	pthread_mutex_lock(&sp->mu);
	sp->ready = true;
	pthread_cond_broadcast(&sp->cv);
	while (sp->go == WAIT)
		pthread_cond_wait(&sp->cv, &sp->mu);
	go = sp->go;
	pthread_mutex_unlock(&sp->mu);
	if (go == RUN)
		sp->err = err ? err : helper_work(sp);
	return NULL;
}

bool unwind_split_wanted(const struct unwind_input *in)
{
	size_t cfi = in->sec[UNWIND_SEC_EH].size + in->sec[UNWIND_SEC_DEBUG].size;

	if (in->threads == 1)
		return false;
	if (in->threads >= 2)
		return true;
	return cfi >= SPLIT_MIN_CFI && sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

struct unwind_split *unwind_split_begin(const struct unwind_input *in)
{
	size_t cfi = in->sec[UNWIND_SEC_EH].size + in->sec[UNWIND_SEC_DEBUG].size;
	struct unwind_split *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return NULL; /* one thread then */
	ember_buf_init(&sp->out, SIZE_MAX / 2); /* the merge applies the caller's cap */
	sp->in = in;
	sp->diag = (struct ember_diag){ sp->msg, sizeof(sp->msg), false };
	sp->b.diag = &sp->diag;
	sp->est = cfi / 16 * 3; /* half a blob (compile.c) */
	if (in->sec[UNWIND_SEC_EH].size >= SPLIT_MIN_CFI || in->threads >= 2)
		sp->mid = unwind_cfi_guess_boundary(&in->sec[UNWIND_SEC_EH],
						    in->sec[UNWIND_SEC_EH].size / 2);
	pthread_mutex_init(&sp->mu, NULL);
	pthread_cond_init(&sp->cv, NULL);
	sp->threaded = pthread_create(&sp->thread, NULL, helper_main, sp) == 0;
	return sp;
}

void unwind_split_end(struct unwind_split *sp)
{
	if (!sp)
		return;
	if (sp->threaded) {
		pthread_mutex_lock(&sp->mu);
		if (sp->go == WAIT)
			sp->go = QUIT;
		pthread_cond_broadcast(&sp->cv);
		pthread_mutex_unlock(&sp->mu);
		pthread_join(sp->thread, NULL);
	}
	unwind_writer_free(sp->b.writer);
	unwind_build_release(&sp->pb);
	ember_buf_release(&sp->out);
	pthread_cond_destroy(&sp->cv);
	pthread_mutex_destroy(&sp->mu);
	free(sp);
}

/* ---- both halves -------------------------------------------------------- */

/* Hand the cut and the build to the helper, once its writer is made. */
static void helper_start(struct unwind_split *sp, const struct unwind_build *b)
{
	struct unwind_writer *w;

	pthread_mutex_lock(&sp->mu);
	while (!sp->ready)
		pthread_cond_wait(&sp->cv, &sp->mu);
	w = sp->b.writer;
	sp->b = *b;
	sp->b.writer = w;
	sp->diag = (struct ember_diag){ sp->msg, sizeof(sp->msg), false };
	sp->b.diag = &sp->diag;
	memset(&sp->b.stats, 0, sizeof(sp->b.stats));
	sp->go = RUN;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
}

/* The second half's counts into the first's. */
static void stats_add(struct unwind_compile_stats *a,
		      const struct unwind_compile_stats *b)
{
	a->fdes += b->fdes;
	a->fdes_debug_frame += b->fdes_debug_frame;
	a->fdes_unsupported += b->fdes_unsupported;
	a->rows += b->rows;
	a->rows_invalid += b->rows_invalid;
	a->rows_end += b->rows_end;
	a->gaps_bridged += b->gaps_bridged;
}

/* The first failure in address order: the first half's err, else the
 * second's err2 (its message copied). */
static int halves_err(struct unwind_build *b, int err, const struct unwind_split *sp,
		      int err2)
{
	if (err || !err2)
		return err;
	if (b->diag->msg && b->diag->size && !b->diag->set)
		snprintf(b->diag->msg, b->diag->size, "%s", sp->msg);
	b->diag->set = true;
	return err2;
}

int unwind_split_parse(struct unwind_build *b, struct unwind_split *sp)
{
	size_t size = b->in->sec[UNWIND_SEC_EH].size, at;
	int err;

	if (!sp || !sp->mid || !sp->threaded)
		return unwind_cfi_parse(b, UNWIND_SEC_EH);
	err = unwind_cfi_parse_range(b, 0, sp->mid, &at);
	if (err)
		return err;	/* before the second half's */
	helper_await(sp, &sp->parsed);
	if (at == sp->mid && sp->parse_err && sp->parse_err != -EAGAIN &&
	    unwind_cfi_lends(b, &sp->pb))
		return halves_err(b, 0, sp, sp->parse_err); /* the second half's */
	if (at == sp->mid && !sp->parse_err) {
		err = unwind_cfi_join(b, &sp->pb);
		b->stats.walk_threads = err ? 1 : 2;
		if (err != -EAGAIN)
			return err;
	}
	return unwind_cfi_parse_range(b, at, size, &at); /* on, as one thread */
}

static int run_halves(struct unwind_build *b, struct unwind_split *sp)
{
	int err;

	if (sp->threaded) {
		helper_start(sp, b);
	} else {		/* no thread to be had: the same work, in turn */
		sp->b = *b;
		sp->b.writer = NULL;
		sp->b.diag = &sp->diag;
		memset(&sp->b.stats, 0, sizeof(sp->b.stats));
		sp->err = helper_prepare(sp);
		sp->err = sp->err ? sp->err : helper_work(sp);
	}
	unwind_writer_window(b->writer, 0, sp->s);
	err = unwind_table_run_span(b, 0, sp->k, 0);
	if (!err)
		err = unwind_writer_close(b->writer);
	if (sp->threaded) {
		pthread_join(sp->thread, NULL);
		sp->threaded = false;
	}
	err = halves_err(b, err, sp, sp->err);
	if (!err)
		err = unwind_writer_merge(b->writer, sp->b.writer);
	if (!err)
		stats_add(&b->stats, &sp->b.stats);
	b->stats.threads = 2;
	return err;
}

int unwind_table_build_split(struct unwind_build *b, struct unwind_split *sp)
{
	sp->k = split_point(b, &sp->s);
	if (sp->k == 0 || !cies_prepare(b))
		return unwind_table_run_span(b, 0, b->norder, 0);
	return run_halves(b, sp);
}
