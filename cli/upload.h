/*
 * upload.h - the pieces of `ember upload` (cmd_upload.c): its HTTP client
 * (upload_http.c, on http-client/httpc.h) and the source archive (upload_sources.c).
 */
#ifndef EMBER_CLI_UPLOAD_H
#define EMBER_CLI_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct upload_http {
	const char *server;     /* base URL, no trailing slash */
	const char *token;      /* bearer token, or NULL */
	const char *tenant;     /* sent as X-Scope-OrgID (a server with
				   --multitenancy), or NULL */
	bool progress;          /* draw a progress line on stderr */
	size_t max_reply;       /* bytes of an answer; 0: 1 MiB */
};

/* An HTTP answer: status and body (malloc'd, NUL-terminated, len bytes
 * before the NUL; caller frees), or status 0 and a transport error in
 * body. */
struct upload_reply {
	long status;
	char *body;
	size_t len;
};

/* Load the HTTP client (libcurl): 0, or -ENOSYS (the reason logged). */
int upload_http_init(void);
/* GET server+path. */
int upload_http_get(const struct upload_http *h, const char *path,
		    struct upload_reply *out);
/* PUT the file open on fd (size bytes) to server+path. */
int upload_http_put(const struct upload_http *h, const char *path, int fd,
		    uint64_t size, const char *label, struct upload_reply *out);

struct upload_prefix_map {
	const char *from, *to;
};

/*
 * Write a tar of the source files the DWARF in dwarf_fd names and that
 * exist locally (after rewriting a leading `from` to `to`), each stored
 * under its DWARF path, into a new temporary file: *out_fd (caller
 * closes).  *found / *named count what went in / what the DWARF names.
 */
int upload_sources_tar(int dwarf_fd, const struct upload_prefix_map *maps,
		       size_t n_maps, int *out_fd, size_t *found, size_t *named);

#endif /* EMBER_CLI_UPLOAD_H */
