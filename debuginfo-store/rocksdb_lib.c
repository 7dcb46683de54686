/*
 * rocksdb_lib.c - dlopen RocksDB and resolve its C API (rocksdb_lib.h).
 *
 * The library's name is its SONAME, found by CMake at configure time
 * (EMBER_ROCKSDB_SONAME), so a missing library fails the build, not a
 * server's start.
 */
#include "rocksdb_lib.h"
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#ifndef EMBER_ROCKSDB_SONAME
#error "EMBER_ROCKSDB_SONAME: set by debuginfo-store/CMakeLists.txt"
#endif

int store_rocksdb_load(struct store_rocksdb *r)
{
	memset(r, 0, sizeof(*r));
	r->handle = dlopen(EMBER_ROCKSDB_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!r->handle) {
		pr_warn("store: cannot load RocksDB: %s", dlerror());
		return -ENOSYS;
	}
#define STORE_ROCKSDB_RESOLVE(name)                                            \
	*(void **)&r->name = dlsym(r->handle, "rocksdb_" #name);               \
	if (!r->name)                                                          \
		goto missing;
	STORE_ROCKSDB_FUNCS(STORE_ROCKSDB_RESOLVE)
#undef STORE_ROCKSDB_RESOLVE
	return 0;
missing:
	pr_warn("store: %s lacks a function the store needs: %s", EMBER_ROCKSDB_SONAME,
		dlerror());
	dlclose(r->handle);
	memset(r, 0, sizeof(*r));
	return -ENOSYS;
}
