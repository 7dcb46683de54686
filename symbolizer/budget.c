/*
 * budget.c - what bounds one index build: the bytes it holds and the
 * work it does, both decided by a file anybody may have written.
 *
 *   bytes: sym_open_opts.max_bytes (0: no limit).  Charged before each
 *          array grows (the index's segments, nodes, strings and names,
 *          the scratch intervals of the units in flight, segment blocks,
 *          symbol lists, unit records) and for the DWARF sections libdw
 *          inflates, by both threads of the build; given back when
 *          scratch is freed.  Past the limit the build fails with
 *          -E2BIG and says what it was building.
 *   work:  bytes of strings interned, line-table headers (and the
 *          strings they name) and abbreviation tables read: at most 64
 *          times the bytes of the input plus 16 MiB (main thread).
 *          Reading is proportional to the input in any file a compiler
 *          wrote; a crafted one can make every unit read one big table
 *          or name one long string again, which this stops.
 *
 * The first refusal is recorded (struct sym_budget.why) by whichever
 * thread hits it; the other thread stops at its next charge.
 *
 * And the rows of each line program are read once: units that share a
 * program (no compiler's do; a crafted file's thousand units may all
 * name one program of 100,000 rows, 4.6 GB of segments) take its rows
 * only the first time, the first unit's (the later ones' rows would be
 * dropped as overlaps when the blocks are joined, or duplicate them).
 */
#include "sym_internal.h"

#include <inttypes.h>
#include <stdlib.h>

int sym_budget_init(struct sym_budget *b, uint64_t max_bytes)
{
	*b = (struct sym_budget){ .max_bytes = max_bytes, .max_work = UINT64_MAX };
	b->diag = ember_diag_make(b->why, sizeof(b->why));
	return ember_hset_init(&b->program_set);
}

void sym_budget_release(struct sym_budget *b)
{
	if (!b)
		return;
	ember_hset_release(&b->program_set);
	free(b->programs);
	b->programs = NULL;
	b->nprograms = b->programs_alloc = 0;
}

static bool program_equal(const void *ctx, size_t idx, const void *key)
{
	return ((const uint64_t *)ctx)[idx] == *(const uint64_t *)key;
}

int sym_budget_program_seen(struct sym_budget *b, uint64_t off)
{
	uint64_t h = ember_hash_u64(&b->program_set.key, off);
	int err;

	if (ember_hset_find(&b->program_set, h, program_equal, b->programs, &off) != SIZE_MAX)
		return 1;
	err = EMBER_VEC_PUSH(b->programs, b->nprograms, b->programs_alloc, off);
	if (!err && (err = ember_hset_insert(&b->program_set, h, b->nprograms - 1)))
		b->nprograms--;
	return err;
}

/* Whether this is the first refusal (the one d records). */
static bool first_refusal(struct sym_budget *b)
{
	return !atomic_exchange(&b->exceeded, true);
}

int sym_budget_charge(struct sym_budget *b, uint64_t n, const char *what)
{
	uint64_t was;

	if (!b)
		return 0;
	if (atomic_load_explicit(&b->exceeded, memory_order_relaxed))
		return -E2BIG;
	was = atomic_fetch_add_explicit(&b->bytes, n, memory_order_relaxed);
	if (!b->max_bytes || (was + n >= was && was + n <= b->max_bytes))
		return 0;
	atomic_fetch_sub_explicit(&b->bytes, n, memory_order_relaxed);
	if (first_refusal(b))
		(void)EMBER_FAIL(&b->diag, -E2BIG,
				 "the index needs more than its limit of %" PRIu64
				 " bytes (%s: %" PRIu64 " more, %" PRIu64 " held)",
				 b->max_bytes, what, n, was);
	return -E2BIG;
}

void sym_budget_give(struct sym_budget *b, uint64_t n)
{
	if (b)
		atomic_fetch_sub_explicit(&b->bytes, n, memory_order_relaxed);
}

int sym_budget_work(struct sym_budget *b, uint64_t n, const char *what)
{
	if (!b)
		return 0;
	if (atomic_load_explicit(&b->exceeded, memory_order_relaxed))
		return -E2BIG;
	b->work += n;
	if (b->work <= b->max_work)
		return 0;
	if (first_refusal(b))
		(void)EMBER_FAIL(&b->diag, -E2BIG,
				 "%s: %" PRIu64 " bytes of strings and tables read, more than "
				 "the %" PRIu64 " its input allows (64 per byte)",
				 what, b->work, b->max_work);
	return -E2BIG;
}

void sym_budget_set_input(struct sym_budget *b, uint64_t input_bytes)
{
	b->max_work = input_bytes > UINT64_MAX / 128 ? UINT64_MAX
			: 64 * input_bytes + ((uint64_t)16 << 20);
}

int sym_budget_fail(struct sym_budget *b, const char *what, uint64_t limit)
{
	if (b && first_refusal(b))
		(void)EMBER_FAIL(&b->diag, -E2BIG, "%s: more than %" PRIu64 " bytes read",
				 what, limit);
	return -E2BIG;
}
