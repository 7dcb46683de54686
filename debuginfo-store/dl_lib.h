/*
 * dl_lib.h - the libraries the store loads with dlopen when first needed
 * (RocksDB: rocksdb_lib.c; libdebuginfod: debuginfod_client.c), private to
 * debuginfo-store/.
 *
 * Each caller lists the functions it calls in an X-macro and gets a
 * struct of typed function pointers; this loads the library and fills
 * every pointer, or fails whole.
 */
#ifndef EMBER_STORE_DL_LIB_H
#define EMBER_STORE_DL_LIB_H

#include <stddef.h>

/* One function to resolve: its symbol, and the pointer that receives it. */
struct store_dl_fn {
	const char *name;
	void **slot;
};

/*
 * dlopen soname (RTLD_NOW | RTLD_LOCAL) and fill fns[0..n): its handle,
 * or NULL with the reason logged ("WHO: ...") and the library closed.
 */
void *store_dl_load(const char *soname, const char *who, const struct store_dl_fn *fns,
		    size_t n);

#endif /* EMBER_STORE_DL_LIB_H */
