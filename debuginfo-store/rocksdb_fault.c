/*
 * rocksdb_fault.c - a RocksDB that fails on demand, for tests (built
 * into test builds only: EMBER_STORE_FAULTS, debuginfo-store/CMakeLists.txt).
 *
 * The store reaches RocksDB through a table of function pointers
 * (rocksdb_lib.h).  With EMBER_TEST_STORE_FAULT=N (or =+N) in the
 * environment, store_rocksdb_fault_wrap() puts wrappers in that table: the
 * DB handle the wrapped open returns is a struct fault_db holding the real
 * handle and a budget of N record reads, counted from RocksDB's open (N)
 * or from the end of the store's open, once it has counted its records
 * (+N), and each iterator a struct fault_iter.  A read is a seek, an
 * iterator step onto a key (the one past a prefix included) or a get: a
 * store past its budget cannot even look for a key.
 * Once the budget is spent, a get fails with an error string and an
 * iterator turns invalid with its error set, exactly as RocksDB reports
 * an I/O error or a corrupt block, so the store's own error paths run.
 * Tests use it where nothing real fails on demand: in the middle of a
 * scan (tests/unit/test_store.c) and under a running server
 * (tests/server/test_server.py).
 *
 * The wrappers get no context argument from their callers, so the real
 * functions are kept in one table of this file, filled once when the
 * library is loaded (the same functions for every store) and read-only
 * afterwards; the fault state itself is per DB.
 */
#include "rocksdb_lib.h"
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FAULT_ENV "EMBER_TEST_STORE_FAULT"
#define FAULT_MSG "IO error: injected by " FAULT_ENV

static pthread_mutex_t real_mu = PTHREAD_MUTEX_INITIALIZER;
static struct store_rocksdb real; /* set once under real_mu, then read-only */

struct fault_db {
	rocksdb_t *db;
	long budget;			/* reads answered before the faults */
	bool after_open;		/* "+N": counted from store_rocksdb_fault_opened() */
	atomic_bool armed;		/* counting */
	atomic_long reads;		/* reads so far */
};

struct fault_iter {
	rocksdb_iterator_t *it;
	struct fault_db *f;
	bool failed;
};

/* Whether one more read of f is answered (counting it). */
static bool read_allowed(struct fault_db *f)
{
	return !atomic_load(&f->armed) || atomic_fetch_add(&f->reads, 1) < f->budget;
}

static char *fault_message(void)
{
	return strdup(FAULT_MSG); /* freed by rocksdb_free(), i.e. free() */
}

static rocksdb_t *fault_open(const rocksdb_options_t *o, const char *name, char **errptr)
{
	struct fault_db *f = calloc(1, sizeof(*f));
	const char *v = getenv(FAULT_ENV);

	if (!f) {
		*errptr = strdup("out of memory");
		return NULL;
	}
	f->after_open = v && v[0] == '+';
	f->budget = v ? strtol(v + f->after_open, NULL, 10) : 0;
	atomic_store(&f->armed, !f->after_open);
	f->db = real.open(o, name, errptr);
	if (!f->db) {
		free(f);
		return NULL;
	}
	return (rocksdb_t *)f;
}

static void fault_close(rocksdb_t *db)
{
	struct fault_db *f = (struct fault_db *)db;

	real.close(f->db);
	free(f);
}

static char *fault_get(rocksdb_t *db, const rocksdb_readoptions_t *o, const char *key,
		       size_t klen, size_t *vlen, char **errptr)
{
	struct fault_db *f = (struct fault_db *)db;

	if (!read_allowed(f)) {
		*errptr = fault_message();
		return NULL;
	}
	return real.get(f->db, o, key, klen, vlen, errptr);
}

static void fault_write(rocksdb_t *db, const rocksdb_writeoptions_t *o,
			rocksdb_writebatch_t *wb, char **errptr)
{
	real.write(((struct fault_db *)db)->db, o, wb, errptr);
}

static rocksdb_iterator_t *fault_create_iterator(rocksdb_t *db, const rocksdb_readoptions_t *o)
{
	struct fault_db *f = (struct fault_db *)db;
	struct fault_iter *fi = calloc(1, sizeof(*fi));

	if (!fi)
		abort(); /* a test helper: RocksDB's own allocation never fails either */
	fi->f = f;
	fi->it = real.create_iterator(f->db, o);
	return (rocksdb_iterator_t *)fi;
}

static void fault_iter_destroy(rocksdb_iterator_t *it)
{
	struct fault_iter *fi = (struct fault_iter *)it;

	real.iter_destroy(fi->it);
	free(fi);
}

static void fault_iter_seek(rocksdb_iterator_t *it, const char *k, size_t klen)
{
	struct fault_iter *fi = (struct fault_iter *)it;

	if (read_allowed(fi->f))
		real.iter_seek(fi->it, k, klen);
	else
		fi->failed = true;
}

static void fault_iter_next(rocksdb_iterator_t *it)
{
	real.iter_next(((struct fault_iter *)it)->it);
}

static unsigned char fault_iter_valid(const rocksdb_iterator_t *it)
{
	struct fault_iter *fi = (struct fault_iter *)it;

	if (fi->failed || !real.iter_valid(fi->it))
		return 0;
	if (read_allowed(fi->f))
		return 1;
	fi->failed = true;
	return 0;
}

static const char *fault_iter_key(const rocksdb_iterator_t *it, size_t *klen)
{
	return real.iter_key(((const struct fault_iter *)it)->it, klen);
}

static const char *fault_iter_value(const rocksdb_iterator_t *it, size_t *vlen)
{
	return real.iter_value(((const struct fault_iter *)it)->it, vlen);
}

static void fault_iter_get_error(const rocksdb_iterator_t *it, char **errptr)
{
	const struct fault_iter *fi = (const struct fault_iter *)it;

	if (fi->failed)
		*errptr = fault_message();
	else
		real.iter_get_error(fi->it, errptr);
}

void store_rocksdb_fault_opened(const struct store_rocksdb *r, rocksdb_t *db)
{
	struct fault_db *f = (struct fault_db *)db;

	if (r->open == fault_open && f->after_open)
		atomic_store(&f->armed, true);
}

int store_rocksdb_fault_wrap(struct store_rocksdb *r)
{
	const char *v = getenv(FAULT_ENV);
	const char *digits = v && v[0] == '+' ? v + 1 : v;
	char *end;
	long n;

	if (!v)
		return 0;
	n = strtol(digits, &end, 10);
	if (!*digits || *end || n < 0) {
		pr_warn("store: %s='%s': not a number of reads (N or +N)", FAULT_ENV, v);
		return -EINVAL;
	}
	pr_warn("store: %s=%s: record reads fail after the first %ld%s (a test build)",
		FAULT_ENV, v, n, digits != v ? " once the store is open" : "");
	pthread_mutex_lock(&real_mu);
	if (!real.handle)
		real = *r;
	pthread_mutex_unlock(&real_mu);
	r->open = fault_open;
	r->close = fault_close;
	r->get = fault_get;
	r->write = fault_write;
	r->create_iterator = fault_create_iterator;
	r->iter_destroy = fault_iter_destroy;
	r->iter_seek = fault_iter_seek;
	r->iter_next = fault_iter_next;
	r->iter_valid = fault_iter_valid;
	r->iter_key = fault_iter_key;
	r->iter_value = fault_iter_value;
	r->iter_get_error = fault_iter_get_error;
	return 0;
}
