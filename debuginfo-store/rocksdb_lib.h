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
	X(iter_next) X(iter_key) X(iter_value)

struct store_rocksdb {
	void *handle;
#define STORE_ROCKSDB_FIELD(name) __typeof__(rocksdb_##name) *name;
	STORE_ROCKSDB_FUNCS(STORE_ROCKSDB_FIELD)
#undef STORE_ROCKSDB_FIELD
};

/* Load the library and resolve every function: 0, or -ENOSYS with the
 * reason logged.  A loaded library stays for the life of the process:
 * RocksDB's default environment keeps threads that outlive any DB. */
int store_rocksdb_load(struct store_rocksdb *r);

#endif /* EMBER_ROCKSDB_LIB_H */
