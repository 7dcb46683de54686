/*
 * tables.c - the table manager: one entry per mapped file (by build ID),
 * holding where its unwind table came from and where it sits in the BPF
 * maps.  The first mapping of a file brings its table in, in this order:
 *
 *   1. --cache-dir: DIR/BUILDID.unwind, revalidated with the server's
 *      ETag (If-None-Match: a 304 keeps it);
 *   2. --server: GET /api/v1/unwind/BUILDID (then written to the cache);
 *   3. the server has none (404), is unreachable, or there is no server:
 *      compiled here with the unwind compiler (and cached);
 *   4. nothing compiles (no CFI, no build ID and no compiler, maps full):
 *      frame pointers, with the reason.
 *
 * Each outcome is logged once per file and counted (/metrics).  A table
 * no mapping uses any more is unloaded by the next agent_tables_gc()
 * after it has been idle a whole interval, so the short-lived processes
 * of a build or a shell loop do not load and unload libc each time.
 */
#include "agent_internal.h"
#include "unwind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BLOB_MAX ((size_t)256 << 20)

struct agent_tables {
	struct agent_tables_opts o;
	struct agent_table_maps *maps;
	struct agent_http *http;
	struct agent_file **files;
	size_t nfiles, alloc;
	uint64_t next_file_id;
	size_t unloads;
	size_t uploads;
	size_t reuses;
};

static const char *const source_names[AGENT_TABLE_SOURCE_COUNT] = {
	[AGENT_TABLE_NONE] = "none",
	[AGENT_TABLE_CACHE] = "cache",
	[AGENT_TABLE_SERVER] = "server",
	[AGENT_TABLE_COMPILED] = "compiled",
	[AGENT_TABLE_FRAME_POINTERS] = "frame_pointers",
};

const char *agent_table_source_name(enum agent_table_source s)
{
	return s < AGENT_TABLE_SOURCE_COUNT ? source_names[s] : "?";
}

struct agent_tables *agent_tables_new(const struct agent_tables_opts *o,
				      struct agent_table_maps *maps, struct agent_http *http,
				      int *err)
{
	struct agent_tables *t = calloc(1, sizeof(*t));

	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	t->o = *o;
	t->maps = maps;
	t->http = http;
	t->next_file_id = 1;
	return t;
}

void agent_tables_free(struct agent_tables *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfiles; i++) {
		if (t->files[i]->loaded)
			agent_table_unload(t->maps, &t->files[i]->table);
		free(t->files[i]);
	}
	free(t->files);
	free(t);
}

static struct agent_file *find(struct agent_tables *t, const char *key)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (!strcmp(t->files[i]->key, key))
			return t->files[i];
	return NULL;
}

/* Compile f's table here: 0, or the compiler's error with f->why. */
static int compile_here(struct agent_file *f, struct ember_buf *blob)
{
	char msg[200] = "";
	struct unwind_compile_opts co = { .sz = sizeof(co), .err_msg = msg,
					  .err_msg_size = sizeof(msg), .threads = 1 };
	int err;

	ember_buf_release(blob);
	ember_buf_init(blob, BLOB_MAX);
	err = unwind_table_compile(f->open_path, NULL, &co, blob);
	if (err)
		snprintf(f->why, sizeof(f->why), "cannot compile a table: %s%s%s",
			 unwind_strerror(err), msg[0] ? ": " : "", msg);
	return err;
}

/*
 * The blob of f from the cache and the server: 0 with f->source set, or
 * -ENOENT when neither has one (why says what the server answered).
 */
static int from_cache_or_server(struct agent_tables *t, struct agent_file *f,
				struct ember_buf *blob, bool *server_lacks)
{
	char etag[160] = "", new_etag[160] = "", why[256] = "";
	const char *id = f->elf.build_id_hex;
	bool cached = false;
	int st;

	if (!f->elf.build_id_len)
		return -ENOENT;
	if (t->o.cache_dir)
		cached = agent_cache_read(t->o.cache_dir, id, blob, etag, sizeof(etag)) == 0;
	if (!t->o.server) {
		f->source = AGENT_TABLE_CACHE;
		return cached ? 0 : -ENOENT;
	}
	st = agent_fetch_table(t->http, t->o.server, id, cached ? etag : NULL, blob, new_etag,
			       sizeof(new_etag), why, sizeof(why));
	if (st == 304 && cached) {
		f->source = AGENT_TABLE_CACHE;
		return 0;
	}
	if (st == 200) {
		f->source = AGENT_TABLE_SERVER;
		if (t->o.cache_dir &&
		    agent_cache_write(t->o.cache_dir, id, blob->data, blob->len, new_etag))
			pr_warn("agent: cannot write '%s/%s.unwind' to the cache", t->o.cache_dir, id);
		return 0;
	}
	*server_lacks = st == 404;
	if (st < 0)
		pr_warn("agent: server '%s' unreachable for the table of '%s': %s", t->o.server,
			f->path, why[0] ? why : strerror(-st));
	else if (st != 404)
		pr_warn("agent: server '%s' answered %d for the table of '%s': %s", t->o.server, st,
			f->path, why);
	if (cached && etag[0] == '\0') {
		f->source = AGENT_TABLE_CACHE; /* compiled here before */
		return 0;
	}
	if (cached && st < 0) {
		f->source = AGENT_TABLE_CACHE; /* keep using it while the server is away */
		return 0;
	}
	snprintf(f->why, sizeof(f->why), "the server has no table (%d%s%.200s)", st,
		 why[0] ? ": " : "", why);
	return -ENOENT;
}

static void log_outcome(const struct agent_file *f, size_t size)
{
	const char *id = f->elf.build_id_len ? f->elf.build_id_hex : "none";

	switch (f->source) {
	case AGENT_TABLE_SERVER:
		pr_info("agent: '%s' (build ID %s): unwind table from the server (%zu bytes)",
			f->path, id, size);
		break;
	case AGENT_TABLE_CACHE:
		pr_info("agent: '%s' (build ID %s): unwind table from the cache (%zu bytes)",
			f->path, id, size);
		break;
	case AGENT_TABLE_COMPILED:
		pr_info("agent: '%s' (build ID %s): unwind table compiled by the agent "
			"(%zu bytes)%s%s",
			f->path, id, size, f->why[0] ? ": " : "", f->why);
		break;
	default:
		pr_info("agent: '%s' (build ID %s): frame pointers: %s", f->path, id, f->why);
		break;
	}
}

/* Bring f's table in and load it (or settle for frame pointers). */
static void bring_table(struct agent_tables *t, struct agent_file *f)
{
	struct ember_buf blob;
	bool server_lacks = false;
	int err;

	ember_buf_init(&blob, BLOB_MAX);
	err = from_cache_or_server(t, f, &blob, &server_lacks);
	if (server_lacks && t->o.upload_missing && f->elf.build_id_len && !f->upload_tried) {
		f->upload_tried = true;
		if (agent_upload_missing(t->http, t->o.server, f) == 0)
			t->uploads++;
	}
	if (err && t->o.local_compile) {
		char server_why[256];

		snprintf(server_why, sizeof(server_why), "%s", f->why);
		err = compile_here(f, &blob);
		if (!err) {
			f->source = AGENT_TABLE_COMPILED;
			snprintf(f->why, sizeof(f->why), "%s",
				 t->o.server ? server_why : "no --server");
			if (t->o.cache_dir && f->elf.build_id_len)
				agent_cache_write(t->o.cache_dir, f->elf.build_id_hex, blob.data,
						  blob.len, "");
		}
	} else if (err) {
		snprintf(f->why + strlen(f->why), sizeof(f->why) - strlen(f->why),
			 "; local compilation is off");
	}
	if (!err) {
		err = agent_table_load(t->maps, blob.data, blob.len, t->next_file_id, &f->table);
		if (!err) {
			f->loaded = true;
			t->next_file_id++;
		} else {
			snprintf(f->why, sizeof(f->why), "cannot load its table: %s",
				 err == -ENOSPC ? "the unwind maps are full" : unwind_strerror(err));
		}
	}
	if (err)
		f->source = AGENT_TABLE_FRAME_POINTERS;
	log_outcome(f, blob.len);
	ember_buf_release(&blob);
}

struct agent_file *agent_tables_acquire(struct agent_tables *t, const char *ident, int fd,
					const char *path, const char *open_path, int *err)
{
	struct agent_elf_info e;
	struct agent_file *f;
	char key[sizeof(f->key)];
	int e2 = agent_elf_info_read(fd, &e);

	if (e2) {
		*err = e2;
		return NULL;
	}
	snprintf(key, sizeof(key), "%s", e.build_id_len ? e.build_id_hex : ident);
	f = find(t, key);
	if (f) {
		if (f->refs++ == 0)
			t->reuses++;
		return f;
	}
	if (t->nfiles >= t->alloc &&
	    ember_vec_grow((void **)&t->files, &t->alloc, t->nfiles, sizeof(*t->files))) {
		*err = -ENOMEM;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	snprintf(f->key, sizeof(f->key), "%s", key);
	f->elf = e;
	snprintf(f->path, sizeof(f->path), "%s", path);
	snprintf(f->open_path, sizeof(f->open_path), "%s", open_path);
	f->refs = 1;
	t->files[t->nfiles++] = f;
	bring_table(t, f);
	return f;
}

void agent_tables_release(struct agent_tables *t, struct agent_file *f)
{
	if (f && --f->refs == 0)
		f->idle_since_ns = agent_now_mono_ns(); /* unloaded by agent_tables_gc */
}

static void file_drop(struct agent_tables *t, struct agent_file *f)
{
	if (f->loaded) {
		agent_table_unload(t->maps, &f->table);
		t->unloads++;
		pr_debug("agent: '%s': unwind table unloaded (no process maps it)", f->path);
	}
	free(f);
}

void agent_tables_gc(struct agent_tables *t, uint64_t idle_before_ns)
{
	size_t k = 0;

	for (size_t i = 0; i < t->nfiles; i++) {
		struct agent_file *f = t->files[i];

		if (f->refs == 0 && f->idle_since_ns < idle_before_ns) {
			file_drop(t, f);
			continue;
		}
		t->files[k++] = f;
	}
	t->nfiles = k;
}

void agent_tables_counts(const struct agent_tables *t, size_t counts[AGENT_TABLE_SOURCE_COUNT],
			 size_t *loaded_bytes, size_t *unloads)
{
	memset(counts, 0, sizeof(size_t) * AGENT_TABLE_SOURCE_COUNT);
	*loaded_bytes = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct agent_file *f = t->files[i];

		counts[f->source < AGENT_TABLE_SOURCE_COUNT ? f->source : 0]++;
		if (f->loaded)
			*loaded_bytes += f->table.data_len + 16 * f->table.rule_len +
					 32 * (size_t)f->table.npages;
	}
	*unloads = t->unloads;
}

void agent_tables_foreach(const struct agent_tables *t,
			  void (*fn)(void *ctx, const struct agent_file *f), void *ctx)
{
	for (size_t i = 0; i < t->nfiles; i++)
		fn(ctx, t->files[i]);
}
