/*
 * debuginfod.c - GET/HEAD /buildid/ID/{debuginfo,executable,source,section}.
 *
 * Answers as the elfutils debuginfod server does (Content-Length,
 * X-DEBUGINFOD-SIZE, X-DEBUGINFOD-FILE, Last-Modified, Cache-Control; 404
 * "not found"; 406 over X-DEBUGINFOD-MAXSIZE; 503 for a section it cannot
 * serve, so the client falls back to the whole file) and adds what a
 * cache in between wants: HEAD, a strong ETag (the content's sha256) with
 * 304 on If-None-Match, and single byte ranges (206/416).  Bodies go out
 * with sendfile from the blob, never through memory.
 */
#include "api_internal.h"
#include "inspect.h"

#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What is about to be sent: a whole blob or one of its sections. */
struct file_part {
	const struct store_artifact *a;
	int fd;
	uint64_t offset, size;  /* the part of the blob that is "the file" */
	bool compressed;        /* a section with SHF_COMPRESSED */
	char etag[STORE_SHA256_HEX + 80];
};

static const char *header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* "bytes=A-B", "bytes=A-" or "bytes=-N" against size; 1 if a range was
 * taken, 0 to send everything, -1 when unsatisfiable. */
static int parse_range(const char *h, uint64_t size, uint64_t *from, uint64_t *len)
{
	unsigned long long a = 0, b = 0;
	int n = 0;

	if (!h || strncmp(h, "bytes=", 6) != 0 || strchr(h, ','))
		return 0;
	h += 6;
	if (h[0] == '-') {
		if (sscanf(h + 1, "%llu%n", &b, &n) != 1 || h[1 + n] || b == 0)
			return 0;
		*from = b >= size ? 0 : size - b;
		*len = size - *from;
		return size ? 1 : -1;
	}
	if (sscanf(h, "%llu-%n", &a, &n) != 1)
		return 0;
	if (h[n] == '\0')
		b = size ? size - 1 : 0;
	else if (sscanf(h + n, "%llu", &b) != 1 || b < a)
		return 0;
	if (a >= size)
		return -1;
	*from = a;
	*len = (b >= size ? size - 1 : b) - a + 1;
	return 1;
}

static void add_common_headers(struct MHD_Response *r, const struct file_part *p)
{
	char buf[64], name[3 * STORE_NAME_MAX];
	struct tm tm;
	time_t t = (time_t)p->a->mtime;

	snprintf(buf, sizeof(buf), "%" PRIu64, p->size);
	MHD_add_response_header(r, "X-DEBUGINFOD-SIZE", buf);
	/* escaped at upload; a record of an older version is escaped here */
	if (ember_name_escape(p->a->name, name, sizeof(name)) >= 0)
		MHD_add_response_header(r, "X-DEBUGINFOD-FILE", name);
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	MHD_add_response_header(r, MHD_HTTP_HEADER_LAST_MODIFIED, buf);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "public");
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, p->etag);
	MHD_add_response_header(r, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
}

static enum MHD_Result queue(struct api_server *srv, struct MHD_Connection *c,
			     const struct api_request *req, unsigned status,
			     struct MHD_Response *r, uint64_t bytes)
{
	enum MHD_Result ret = MHD_queue_response(c, status, r);

	MHD_destroy_response(r);
	api_metrics_count(&srv->metrics, req->route.ep, status, bytes);
	return ret;
}

/* 304 and 416 carry no body; the fd is closed here. */
static enum MHD_Result send_empty(struct api_server *srv, struct MHD_Connection *c,
				  const struct api_request *req, unsigned status,
				  struct file_part *p)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
	char buf[64];

	close(p->fd);
	if (!r)
		return MHD_NO;
	add_common_headers(r, p);
	if (status == MHD_HTTP_RANGE_NOT_SATISFIABLE) {
		snprintf(buf, sizeof(buf), "bytes */%" PRIu64, p->size);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, buf);
	}
	return queue(srv, c, req, status, r, 0);
}

/* Sends p (taking its fd), honouring If-None-Match and Range. */
static enum MHD_Result send_part(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req, struct file_part *p)
{
	const char *inm = header(c, MHD_HTTP_HEADER_IF_NONE_MATCH);
	uint64_t from = 0, len = p->size;
	unsigned status = MHD_HTTP_OK;
	struct MHD_Response *r;
	int range;
	char buf[96];

	if (inm && (strstr(inm, p->etag) || strcmp(inm, "*") == 0))
		return send_empty(srv, c, req, MHD_HTTP_NOT_MODIFIED, p);
	range = parse_range(header(c, MHD_HTTP_HEADER_RANGE), p->size, &from, &len);
	if (range < 0)
		return send_empty(srv, c, req, MHD_HTTP_RANGE_NOT_SATISFIABLE, p);
	r = MHD_create_response_from_fd_at_offset64(len, p->fd, p->offset + from);
	if (!r) {
		close(p->fd);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	add_common_headers(r, p);
	if (range > 0) {
		status = MHD_HTTP_PARTIAL_CONTENT;
		snprintf(buf, sizeof(buf), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64,
			 from, from + len - 1, p->size);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_RANGE, buf);
	}
	return queue(srv, c, req, status, r, req->head ? 0 : len);
}

/* 406 when the client's X-DEBUGINFOD-MAXSIZE is below the size. */
static bool over_max_size(struct MHD_Connection *c, uint64_t size, char *msg,
			  size_t msglen)
{
	const char *h = header(c, "X-DEBUGINFOD-MAXSIZE");
	char *end;
	unsigned long long max;

	if (!h)
		return false;
	max = strtoull(h, &end, 10);
	if (end == h || size <= max)
		return false;
	snprintf(msg, msglen, "File too large, max size=%llu", max);
	return true;
}

enum MHD_Result api_serve_stored(struct api_server *srv, struct MHD_Connection *c,
				 const struct api_request *req,
				 const struct store_artifact *a)
{
	struct file_part p = { .a = a, .size = a->size };
	char msg[96];
	int err;

	if (over_max_size(c, a->size, msg, sizeof(msg)))
		return api_respond_text(srv, c, req, MHD_HTTP_NOT_ACCEPTABLE, NULL, msg);
	err = store_artifact_open(srv->store, a, &p.fd);
	if (err) {
		pr_warn("api: stored file '%s' of '%s' unreadable: %s", a->sha256, a->build_id,
			strerror(-err));
		return api_respond_unavailable(srv, c, req, err);
	}
	snprintf(p.etag, sizeof(p.etag), "\"%s\"", a->sha256);
	return send_part(srv, c, req, &p);
}

/*
 * Where section rt->path lies in the best candidate for want: 0 with *a
 * and *p (p->fd open); -ENOENT when there is no such candidate (*found
 * stays false) or it has no such section, or one without bytes; else the
 * error of a store or stored file that cannot be read (logged).
 */
static int find_section(struct store *s, const struct api_route *rt, enum store_want want,
			struct store_artifact *a, struct file_part *p, bool *found)
{
	uint64_t flags;
	int err = store_find_best(s, rt->build_id, want, a);

	if (err)
		return err;
	*found = true;
	p->a = a;
	err = store_blob_open(s, a->sha256, &p->fd);
	if (err == -ENOENT)
		err = -EIO; /* recorded, so its file must be there */
	if (!err) {
		err = inspect_find_section(p->fd, rt->path, &p->offset, &p->size, &flags);
		if (err)
			close(p->fd);
	}
	if (err == -ENOENT || err == -ENODATA)
		return -ENOENT;
	if (err) { /* a file validated when stored: it must be readable */
		pr_warn("api: section '%s' of stored file '%s': %s", rt->path, a->sha256,
			inspect_strerror(err));
		return -err >= INSPECT_ERR_NOT_ELF ? -EIO : err;
	}
	p->compressed = (flags & SHF_COMPRESSED) != 0;
	return 0;
}

/* The section from the best debuginfo, then the best executable. */
static enum MHD_Result serve_section(struct api_server *srv, struct MHD_Connection *c,
				     const struct api_request *req, bool *missing)
{
	static const enum store_want order[] = { STORE_WANT_DEBUGINFO, STORE_WANT_EXECUTABLE };
	const struct api_route *rt = &req->route;
	bool any = false;

	for (size_t i = 0; i < 2; i++) {
		struct store_artifact a;
		struct file_part p = { 0 };
		char msg[96];
		int err = find_section(srv->store, rt, order[i], &a, &p, &any);

		if (store_error_kind(err) == EMBER_ERRK_NOT_FOUND)
			continue;
		if (err)
			return api_respond_unavailable(srv, c, req, err);
		if (p.compressed) {
			close(p.fd); /* the client inflates it from the whole file */
			return api_respond_text(srv, c, req, MHD_HTTP_SERVICE_UNAVAILABLE,
						NULL, "compressed section: fetch the file");
		}
		if (over_max_size(c, p.size, msg, sizeof(msg))) {
			close(p.fd);
			return api_respond_text(srv, c, req, MHD_HTTP_NOT_ACCEPTABLE, NULL, msg);
		}
		snprintf(p.etag, sizeof(p.etag), "\"%s:%.64s\"", a.sha256, rt->path);
		snprintf(a.name, sizeof(a.name), "section-%.200s", rt->path);
		return send_part(srv, c, req, &p);
	}
	if (!any) {
		*missing = true; /* nothing stored: the caller may ask upstream */
		return MHD_YES;
	}
	return api_respond_kind(srv, c, req, EMBER_ERRK_NOT_FOUND, "not found");
}

static int find_for(struct api_server *srv, const struct api_route *rt,
		    struct store_artifact *a)
{
	switch (rt->ep) {
	case API_EP_DEBUGINFO:
		return store_find_best(srv->store, rt->build_id, STORE_WANT_DEBUGINFO, a);
	case API_EP_EXECUTABLE:
		return store_find_best(srv->store, rt->build_id, STORE_WANT_EXECUTABLE, a);
	default:
		return store_find_source(srv->store, rt->build_id, rt->path, a);
	}
}

enum MHD_Result api_serve_buildid(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, bool *missing)
{
	struct store_artifact a;
	int err;

	*missing = false;
	if (req->route.ep == API_EP_SECTION)
		return serve_section(srv, c, req, missing);
	err = find_for(srv, &req->route, &a);
	if (err == 0)
		return api_serve_stored(srv, c, req, &a);
	if (store_error_kind(err) != EMBER_ERRK_NOT_FOUND) /* never 404, nor a question upstream */
		return api_respond_unavailable(srv, c, req, err);
	*missing = true;
	return MHD_YES;
}
