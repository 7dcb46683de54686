/*
 * unwind.c - GET /api/v1/unwind/ID: the compiled unwind table of a build
 * ID for eBPF agents (docs/unwind-format.md).
 *
 * Compiled on first request from the best stored executable (.eh_frame)
 * and the best debug file (.debug_frame), then kept in the store as a
 * derived artifact named by the format version and both inputs' sha256,
 * so a better upload later gives a new table and the old one is never
 * served for it.  The ETag is the table's sha256.  Compiles are
 * serialized: concurrent first requests compile once.  A compile the
 * compiler rejects is remembered by the same name (the inputs' content),
 * so asking again answers at once instead of compiling again.  The compiler gets
 * the stored files as mapped images, never their paths, so no reason it
 * gives a client can name a file of the server.
 */
#include "api_internal.h"
#include "unwind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct unwind_inputs {
	struct store_pair f;
	char what[STORE_NAME_MAX];
};

static int find_inputs(struct store *s, const char *id, struct unwind_inputs *in)
{
	int err = store_find_pair(s, id, &in->f);

	if (err)
		return err;
	snprintf(in->what, sizeof(in->what), "unwind-v%d-%.64s-%.64s", UNWIND_TABLE_VERSION,
		 in->f.has_exe ? in->f.exe.sha256 : "none",
		 in->f.has_dbg ? in->f.dbg.sha256 : "none");
	return 0;
}

static int produce_table(void *arg, struct store_blob *b)
{
	const struct ember_buf *table = arg;

	return store_blob_write(b, table->data, table->len);
}

enum ember_errkind api_unwind_error_kind(int err)
{
	enum ember_errkind kind = unwind_error_kind(err);

	switch (kind) {
	case EMBER_ERRK_NOT_FOUND:	/* the compiler's own rejections */
	case EMBER_ERRK_UNPROCESSABLE:
	case EMBER_ERRK_BUSY:		/* the memory budget, taken by others now */
		return kind;
	default: /* the store's or its files': a GET is never answered 507 */
		return EMBER_ERRK_UNAVAILABLE;
	}
}

/* The compiler's own rejections, remembered by the inputs' content. */
static bool compiler_rejected(int err)
{
	enum ember_errkind kind = api_unwind_error_kind(err);

	return kind == EMBER_ERRK_NOT_FOUND || kind == EMBER_ERRK_UNPROCESSABLE;
}

/* A stored blob mapped read-only (the compiler reads images, not paths,
 * so no message of it can name a file of the store). */
struct mapped {
	void *p;
	size_t size;
};

static int map_blob(struct store *s, const char *sha256, struct mapped *m)
{
	struct stat st;
	int fd, err = store_blob_open(s, sha256, &fd);

	if (err)
		return err == -ENOENT ? -EIO : err; /* recorded, so it must be there */
	if (fstat(fd, &st))
		err = -errno;
	m->size = err ? 0 : (size_t)st.st_size;
	m->p = err || !m->size ? NULL : mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (!err && m->size && m->p == MAP_FAILED) {
		err = -errno;
		m->p = NULL;
	}
	close(fd);
	return err;
}

static void unmap_blob(struct mapped *m)
{
	if (m->p)
		munmap(m->p, m->size);
}

/* Compile and store; msg gets the reason on failure.  The table grows
 * through an account of the server's memory budget, up to a request's
 * share. */
static int compile(struct api_server *srv, const char *id, const struct unwind_inputs *in,
		   char *msg, size_t msg_size)
{
	struct store *s = srv->store;
	struct ember_mem_account acct;
	struct unwind_compile_opts o = { .sz = sizeof(o), .err_msg = msg,
					 .err_msg_size = msg_size };
	bool two = in->f.has_exe && in->f.has_dbg;
	struct mapped main = { 0 }, dbg = { 0 };
	struct ember_buf table;
	int err;

	err = map_blob(s, in->f.has_exe ? in->f.exe.sha256 : in->f.dbg.sha256, &main);
	if (!err && two)
		err = map_blob(s, in->f.dbg.sha256, &dbg);
	ember_mem_account_init(&acct, &srv->mem, srv->request_share);
	ember_buf_init_account(&table, (size_t)1 << 31, &acct);
	msg[0] = '\0';
	if (!err)
		err = unwind_table_compile_mem(main.p, main.size, two ? dbg.p : NULL, dbg.size, &o,
					       &table);
	if (err == -E2BIG && acct.err == -E2BIG)
		snprintf(msg, msg_size, "the table needs more memory than the server gives one "
					"request");
	else if (acct.err == -EAGAIN)
		err = -EAGAIN; /* the budget is taken by others now: not the files' fault */
	unmap_blob(&main);
	unmap_blob(&dbg);
	if (!err)
		err = store_put_derived(s, id, in->what, produce_table, &table);
	if (err && !msg[0])
		snprintf(msg, msg_size, "%s", unwind_strerror(err));
	ember_buf_release(&table);
	ember_mem_account_release(&acct);
	return err;
}

/* The derived table of in, as stored: -ENOENT too when its record is
 * there but its file is not (the record is dropped: it is made again). */
static int find_table(struct store *s, const char *id, const struct unwind_inputs *in,
		      struct store_artifact *table)
{
	int fd, err = store_find_derived(s, id, in->what, table);

	if (err)
		return err;
	err = store_artifact_open(s, table, &fd);
	if (!err) {
		close(fd);
		return 0;
	}
	if (err != -ENOENT)
		return err;
	err = store_drop_derived(s, id, in->what);
	return err && err != -ENOENT ? err : -ENOENT;
}

/* The stored table of in into *table, compiled first if need be. */
static int find_or_compile(struct api_server *srv, const char *id,
			   const struct unwind_inputs *in, struct store_artifact *table,
			   char *msg, size_t msg_size)
{
	int err = find_table(srv->store, id, in, table);

	if (err != -ENOENT)
		return err;
	pthread_mutex_lock(&srv->unwind_mu);
	err = find_table(srv->store, id, in, table);
	if (err == -ENOENT && ember_errcache_get_msg(srv->unwind_failed, in->what, &err, msg,
						      msg_size)) {
		srv->metrics.unwind_failures_cached++; /* the same files fail the same */
	} else if (err == -ENOENT) {
		err = compile(srv, id, in, msg, msg_size);
		if (err && compiler_rejected(err)) /* remembered by the inputs' content */
			ember_errcache_put_msg(srv->unwind_failed, in->what, err, msg);
	}
	if (!err)
		err = store_find_derived(srv->store, id, in->what, table);
	pthread_mutex_unlock(&srv->unwind_mu);
	return err;
}

enum MHD_Result api_serve_unwind(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req)
{
	const char *id = req->route.build_id;
	struct unwind_inputs in;
	struct store_artifact table;
	char msg[512], body[700];
	int err = find_inputs(srv->store, id, &in);

	if (err)
		return api_respond_unavailable(srv, c, req, err);
	if (!in.f.has_exe && !in.f.has_dbg)
		return api_respond_kind(srv, c, req, EMBER_ERRK_NOT_FOUND,
					"no executable or debug file stored for this build ID\n");
	msg[0] = '\0';
	err = find_or_compile(srv, id, &in, &table, msg, sizeof(msg));
	if (!err)
		return api_serve_stored(srv, c, req, &table);
	switch (api_unwind_error_kind(err)) {
	case EMBER_ERRK_BUSY:
		return api_respond_kind(srv, c, req, EMBER_ERRK_BUSY,
					"server busy: no memory free to compile the table now\n");
	case EMBER_ERRK_UNAVAILABLE:
		pr_warn("api: unwind table of '%s': %s", id, msg[0] ? msg : strerror(-err));
		return api_respond_unavailable(srv, c, req, err);
	default:
		snprintf(body, sizeof(body), "cannot compile an unwind table: %s\n", msg);
		return api_respond_kind(srv, c, req, api_unwind_error_kind(err), body);
	}
}
