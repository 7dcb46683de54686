/*
 * mem_budget.c - memory a process hands out to its requests, counted
 * before it is allocated (struct ember_mem_budget and ember_mem_account
 * in common.h).
 *
 * A server sizes one budget at start (`--memory-limit-mb`); each request
 * draws on it through an account capped at the request's share.  A take
 * that would pass the share fails with -E2BIG (the request is too large:
 * 413), one the budget has no room for with -EAGAIN (the server is busy:
 * 503 with Retry-After); neither blocks, and neither allocates.  An
 * account only grows while its request runs (memory freed in between is
 * not credited back, which keeps the count an upper bound) and gives all
 * it took back when the request ends.
 */
#include "common.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

void ember_mem_budget_init(struct ember_mem_budget *b, uint64_t limit)
{
	atomic_init(&b->used, 0);
	b->limit = limit;
}

int ember_mem_budget_take(struct ember_mem_budget *b, uint64_t n)
{
	uint64_t used = atomic_load_explicit(&b->used, memory_order_relaxed);

	do {
		if (n > b->limit || used > b->limit - n)
			return -EAGAIN;
	} while (!atomic_compare_exchange_weak_explicit(&b->used, &used, used + n,
							memory_order_relaxed,
							memory_order_relaxed));
	return 0;
}

void ember_mem_budget_give(struct ember_mem_budget *b, uint64_t n)
{
	atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
}

uint64_t ember_mem_budget_used(const struct ember_mem_budget *b)
{
	return atomic_load_explicit(&b->used, memory_order_relaxed);
}

void ember_mem_account_init(struct ember_mem_account *a, struct ember_mem_budget *b,
			    uint64_t cap)
{
	*a = (struct ember_mem_account){ .budget = b, .cap = cap };
}

int ember_mem_account_take(struct ember_mem_account *a, uint64_t n)
{
	int err;

	if (!a)
		return 0;
	if (a->err)
		return a->err;
	if (n > a->cap - a->used)
		err = -E2BIG;
	else
		err = a->budget ? ember_mem_budget_take(a->budget, n) : 0;
	if (err)
		a->err = err; /* the request cannot go on: every later take fails */
	else
		a->used += n;
	return err;
}

int ember_mem_account_charge(struct ember_mem_account *a, uint64_t n)
{
	uint64_t used;

	if (!a)
		return 0;
	a->used += n;
	if (!a->budget)
		used = 0;
	else
		used = atomic_fetch_add_explicit(&a->budget->used, n, memory_order_relaxed) + n;
	if (!a->err && a->used > a->cap)
		a->err = -E2BIG;
	else if (!a->err && a->budget && used > a->budget->limit)
		a->err = -EAGAIN;
	return a->err;
}

void ember_mem_account_release(struct ember_mem_account *a)
{
	if (!a)
		return;
	if (a->budget)
		ember_mem_budget_give(a->budget, a->used);
	a->used = 0;
	a->err = 0;
}

void *ember_mem_alloc(struct ember_mem_account *a, size_t n)
{
	return ember_mem_account_take(a, n) ? NULL : malloc(n);
}

void *ember_mem_realloc(struct ember_mem_account *a, void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;

	if (n > old && ember_mem_account_take(a, n - old))
		return NULL;
	return realloc(p, n);
}
