/*
 * store_upstream.h - the debuginfo store's upstream fetch (libdebuginfod).
 * A separate header because only the server links it: tools that read a
 * store offline need no HTTP client.
 */
#ifndef EMBER_STORE_UPSTREAM_H
#define EMBER_STORE_UPSTREAM_H

#include "store.h"

struct store_upstream_query {
	const char *build_id;       /* lowercase hex */
	enum store_want want;       /* DEBUGINFO or EXECUTABLE, or SYMBOLS with
				       source_path set: the source file */
	const char *source_path;    /* absolute path, or NULL */
	const char *forwarded_for;  /* X-Forwarded-For to pass on, or NULL */
	bool (*cancelled)(void *arg); /* polled while waiting; true aborts */
	void *cancel_arg;
};

/* The libdebuginfod client library, loaded (dlopen) on the first fetch.
 * Thread-safe; free after the last fetch. */
struct store_upstream;
int store_upstream_new(struct store_upstream **out);
void store_upstream_free(struct store_upstream *u);

/*
 * Fetch from the servers in DEBUGINFOD_URLS (blocking; the time limits are
 * libdebuginfod's: DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME).  On success
 * *fd is open on the downloaded file and *path is its name in the client
 * cache; both are the caller's (close, free, and unlink when stored).
 * Returns 0, -ENOENT when no server has it, -ENOSYS when no server is
 * configured, -ECANCELED when f->cancelled said so, or another negative
 * errno for transport failures; -ENOSYS too when libdebuginfod cannot be
 * loaded (logged once).
 */
int store_upstream_fetch(struct store_upstream *u, const struct store_upstream_query *f,
			 int *fd, char **path);

#endif /* EMBER_STORE_UPSTREAM_H */
