/*
 * rocksdb_lib.h - the RocksDB C API, loaded with dlopen (private to
 * debuginfo-store/).
 *
 * RocksDB is a C++ library whose static initializers (option tables,
 * registries, libstdc++'s locale) cost several milliseconds of page
 * faults at every process start.  Loaded on the thread that opens the
 * store (store_open_begin()), that cost runs beside the server's own start
 * instead of before its main(): a restarted server answers from its saved
 * symbol indexes while RocksDB is still loading.
 */
#ifndef EMBER_ROCKSDB_LIB_H
#define EMBER_ROCKSDB_LIB_H

#include <rocksdb/c.h>

/* Every RocksDB function the store calls, by its name without "rocksdb_". */
#define STORE_ROCKSDB_FUNCS(X)                                                 \
	X(options_create) X(options_destroy) X(options_set_create_if_missing)    \
	X(options_set_write_buffer_size) X(options_set_max_open_files)          \
	X(options_set_keep_log_file_num) X(options_set_block_based_table_factory) \
	X(cache_create_lru) X(cache_destroy)                                      \
	X(block_based_options_create) X(block_based_options_destroy)              \
	X(block_based_options_set_block_cache)                                    \
	X(writeoptions_create) X(writeoptions_destroy) X(writeoptions_set_sync)   \
	X(readoptions_create) X(readoptions_destroy)                              \
	X(open) X(close) X(free) X(get) X(write)                                  \
	X(writebatch_create) X(writebatch_destroy) X(writebatch_put)              \
	X(writebatch_delete)                                                      \
	X(create_iterator) X(iter_destroy) X(iter_seek) X(iter_valid)             \
	X(iter_next) X(iter_key) X(iter_value) X(iter_get_error)

struct store_rocksdb {
	void *handle;
#define STORE_ROCKSDB_FIELD(name) __typeof__(rocksdb_##name) *name;
	STORE_ROCKSDB_FUNCS(STORE_ROCKSDB_FIELD)
#undef STORE_ROCKSDB_FIELD
};

/* Load the library and resolve every function: 0, or -ENOSYS with the
 * reason logged.  A loaded library stays for the life of the process:
 * RocksDB's default environment keeps threads that outlive any DB.
 * In test builds, EMBER_TEST_STORE_FAULT in the environment puts the
 * fault-injecting functions of rocksdb_fault.c in the table. */
int store_rocksdb_load(struct store_rocksdb *r);

#ifdef EMBER_STORE_FAULTS
/*
 * Test builds only (rocksdb_fault.c): with EMBER_TEST_STORE_FAULT=N set,
 * replace r's open, close, get and iterator functions by wrappers under
 * which the DB answers N record reads (a seek, an iterator step or a get, counted
 * per DB from its open, the store's own count of its records included;
 * with =+N from store_rocksdb_fault_opened() on) and then fails every
 * read as RocksDB reports an I/O error: the get with an error string, an
 * iterator by turning invalid with rocksdb_iter_get_error() set.  Writes
 * pass.  0, or -EINVAL (logged) for a value that is not N or +N.
 * Without the variable r is left as it is.
 */
int store_rocksdb_fault_wrap(struct store_rocksdb *r);
/* The store has opened db (and counted its records): "+N" starts counting. */
void store_rocksdb_fault_opened(const struct store_rocksdb *r, rocksdb_t *db);
#else
static inline void store_rocksdb_fault_opened(const struct store_rocksdb *r, rocksdb_t *db)
{
	(void)r, (void)db;
}
#endif

#endif /* EMBER_ROCKSDB_LIB_H */
