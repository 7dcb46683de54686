/*
 * dl.c - load a library with dlopen and resolve its functions (common.h,
 * "libraries loaded when first needed"): RocksDB and libdebuginfod in the
 * debuginfo store, libcurl for the HTTP client (http-client/).
 */
#include "common.h"

#include <dlfcn.h>

void *ember_dl_load(const char *soname, const char *who, const struct ember_dl_fn *fns,
		    size_t n)
{
	void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!handle) {
		pr_warn("%s: cannot load %s: %s", who, soname, dlerror());
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (!(*fns[i].slot = dlsym(handle, fns[i].name))) {
			pr_warn("%s: %s has no %s", who, soname, fns[i].name);
			dlclose(handle);
			return NULL;
		}
	return handle;
}
