/*
 * pstore_fixture.h - the profile store's test stores (pstore_fixture.c),
 * shared by test_pstore.c and test_pstore_rollup.c: a store in the
 * fixture's directory (profile_fixture.h's dir) on a clock the test sets.
 */
#ifndef EMBER_TEST_PSTORE_FIXTURE_H
#define EMBER_TEST_PSTORE_FIXTURE_H

#include "pstore.h"

#include <stdint.h>

/* What the test stores' clock says (T0 at fresh_store). */
extern int64_t fake_now;

/* Options of a test store: no background thread, fake_now's clock. */
struct pstore_opts test_opts(void);
/* The store in dir (o NULL: test_opts), or with replica the replica
 * dir/REPLICA of a shared store whose blocks are in dir/shared.  NULL
 * on failure (said on stderr). */
struct pstore *open_replica(const struct pstore_opts *o, const char *replica);
struct pstore *open_store(const struct pstore_opts *o);
/* A new dir and its store, the clock at T0. */
struct pstore *fresh_store(void);
/* The next of the xorshift64 sequence in *state, in [0, n): the same
 * random profiles and ranges at every run. */
uint32_t test_rand(uint64_t *state, uint32_t n);

#endif /* EMBER_TEST_PSTORE_FIXTURE_H */
