/*
 * unwind.c - GET /api/v1/unwind/ID: the compiled unwind table of a build
 * ID for eBPF agents (docs/unwind-format.md).
 *
 * Compiled on first request from the best stored executable (.eh_frame)
 * and the best debug file (.debug_frame), then kept in the store as a
 * derived artifact named by the format version and both inputs' sha256,
 * so a better upload later gives a new table and the old one is never
 * served for it.  The ETag is the table's sha256.  Compiles are
 * serialized: concurrent first requests compile once.
 */
#include "api_internal.h"
#include "unwind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct unwind_inputs {
	struct store_pair f;
	char what[STORE_NAME_MAX];
};

static void find_inputs(struct store *s, const char *id, struct unwind_inputs *in)
{
	store_find_pair(s, id, &in->f);
	snprintf(in->what, sizeof(in->what), "unwind-v%d-%.64s-%.64s", UNWIND_TABLE_VERSION,
		 in->f.has_exe ? in->f.exe.sha256 : "none",
		 in->f.has_dbg ? in->f.dbg.sha256 : "none");
}

static int produce_table(void *arg, struct store_blob *b)
{
	const struct ember_buf *table = arg;

	return store_blob_write(b, table->data, table->len);
}

/* Compile and store; msg gets the reason on failure. */
static int compile(struct store *s, const char *id, const struct unwind_inputs *in,
		   char *msg, size_t msg_size)
{
	char main_path[4096], dbg_path[4096];
	struct unwind_compile_opts o = { .sz = sizeof(o), .err_msg = msg,
					 .err_msg_size = msg_size };
	struct ember_buf table;
	int err;

	store_blob_path(s, in->f.has_exe ? in->f.exe.sha256 : in->f.dbg.sha256, main_path,
			sizeof(main_path));
	if (in->f.has_exe && in->f.has_dbg)
		store_blob_path(s, in->f.dbg.sha256, dbg_path, sizeof(dbg_path));
	ember_buf_init(&table, (size_t)1 << 31);
	msg[0] = '\0';
	err = unwind_table_compile(main_path, in->f.has_exe && in->f.has_dbg ? dbg_path : NULL,
				   &o, &table);
	if (!err)
		err = store_put_derived(s, id, in->what, produce_table, &table);
	if (err && !msg[0])
		snprintf(msg, msg_size, "%s", unwind_strerror(err));
	ember_buf_release(&table);
	return err;
}

enum MHD_Result api_serve_unwind(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req)
{
	const char *id = req->route.build_id;
	struct unwind_inputs in;
	struct store_artifact table;
	char msg[512], body[700];
	int err = 0;

	find_inputs(srv->store, id, &in);
	if (!in.f.has_exe && !in.f.has_dbg)
		return api_respond_text(srv, c, req, MHD_HTTP_NOT_FOUND, NULL,
					"no executable or debug file stored for this build ID\n");
	if (store_find_derived(srv->store, id, in.what, &table)) {
		pthread_mutex_lock(&srv->unwind_mu);
		if (store_find_derived(srv->store, id, in.what, &table))
			err = compile(srv->store, id, &in, msg, sizeof(msg));
		if (!err)
			err = store_find_derived(srv->store, id, in.what, &table);
		pthread_mutex_unlock(&srv->unwind_mu);
	}
	if (err) {
		snprintf(body, sizeof(body), "cannot compile an unwind table: %s\n", msg);
		return api_respond_text(srv, c, req,
					err == -UNWIND_ERR_NO_CFI ? MHD_HTTP_NOT_FOUND
								  : MHD_HTTP_UNPROCESSABLE_CONTENT,
					NULL, body);
	}
	return api_serve_stored(srv, c, req, &table);
}
