/*
 * artifact_ingest.c - validate a received file and add it to the store.
 *
 * Shared by uploads and upstream fetches, so every file the store serves
 * passed the same checks: it is a whole ELF file, its build-ID note equals
 * the build ID it is filed under (gdb rejects a mismatch, libdwfl does not
 * even look), and it has what its kind promises.  The source names its
 * DWARF lists are recorded with it, for /source.
 */
#include "api_internal.h"
#include "inspect.h"

#include <errno.h>
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * Validating a file (elf-inspect: its headers, its DWARF's source names)
 * takes a sixteenth of the requests' budget while it runs, so at most
 * sixteen run at once whatever arrives; a validation waits for its turn
 * until deadline_ms (uploads carry the token: waiting beats refusing
 * them).  What one validation allocates is bounded only once elf-inspect
 * checks sizes before inflating (issue 13, its owner's part).
 */
#define VALIDATION_WAIT_MS 20

static uint64_t validation_bytes(const struct api_server *srv)
{
	return srv->mem.limit / 16;
}

int api_validation_begin(struct api_server *srv, uint64_t deadline_ms)
{
	struct timespec ts = { 0, VALIDATION_WAIT_MS * 1000000L };

	while (ember_mem_budget_take(&srv->mem, validation_bytes(srv))) {
		if (ember_monotonic_ms() >= deadline_ms)
			return -EAGAIN;
		nanosleep(&ts, NULL);
	}
	return 0;
}

void api_validation_end(struct api_server *srv)
{
	ember_mem_budget_give(&srv->mem, validation_bytes(srv));
}

/* The file is rejected for what it is. */
static void fail(struct api_ingest_result *res, unsigned status,
		 enum api_reject why, const char *fmt, const char *detail)
{
	res->status = status;
	res->reject = why;
	res->err = -EINVAL;
	snprintf(res->message, sizeof(res->message), fmt, detail);
}

/* We could not keep it (err < 0): 507 for a full disk, else 503. */
static void fail_local(struct api_ingest_result *res, int err, const char *what)
{
	enum ember_errkind kind = ember_errkind_of_errno(err);

	res->status = api_status_of_kind(kind);
	res->reject = kind == EMBER_ERRK_NO_SPACE ? API_REJECT_NO_SPACE : API_REJECT_STORE;
	res->err = err;
	snprintf(res->message, sizeof(res->message), "cannot store the %s: %s\n", what,
		 strerror(-err));
}

/* Whether elf-inspect's error rejects the file for what it is, rather
 * than reading our own copy of it failing. */
static bool inspect_rejected(enum ember_errkind kind)
{
	return kind == EMBER_ERRK_UNSUPPORTED || kind == EMBER_ERRK_UNPROCESSABLE;
}

static int check_elf(int fd, const char *build_id, struct inspect_info *info,
		     struct api_ingest_result *res)
{
	char hex[2 * EMBER_BUILD_ID_MAX + 1], why[200], reason[320];
	struct ember_diag d = ember_diag_make(why, sizeof(why));
	int err = inspect_elf_fd_diag(fd, info, &d);
	enum ember_errkind kind = inspect_error_kind(err);

	if (err && !inspect_rejected(kind)) {
		fail_local(res, err, "upload (reading it back)");
		return err;
	}
	if (err) { /* the class of the rejection, then which check failed */
		snprintf(reason, sizeof(reason), why[0] ? "%s: %s" : "%s",
			 inspect_strerror(err), why);
		fail(res, api_status_of_kind(kind),
		     kind == EMBER_ERRK_UNSUPPORTED ? API_REJECT_NOT_ELF : API_REJECT_BAD_ELF,
		     "rejected: %s\n", reason);
		return err;
	}
	ember_build_id_to_hex(info->build_id, info->build_id_len, hex);
	if (strcmp(hex, build_id) != 0) {
		fail(res, api_status_of_kind(EMBER_ERRK_CONFLICT), API_REJECT_BUILD_ID,
		     "rejected: the file's build ID is %s, not the one in the URL\n", hex);
		return -EINVAL;
	}
	return 0;
}

struct names {
	char **v;
	size_t len, alloc;
};

static int add_name(const char *path, void *arg)
{
	struct names *n = arg;

	if (n->len == n->alloc) {
		size_t na = n->alloc ? 2 * n->alloc : 64;
		char **p = realloc(n->v, na * sizeof(*p));

		if (!p)
			return -ENOMEM;
		n->v = p;
		n->alloc = na;
	}
	n->v[n->len] = strdup(path);
	return n->v[n->len++] ? 0 : -ENOMEM;
}

static void names_release(struct names *n)
{
	for (size_t i = 0; i < n->len; i++)
		free(n->v[i]);
	free(n->v);
}

/* file_id: the eBPF profiler's file ID of an executable, else NULL. */
static void success_json(const struct store_artifact *a, const struct inspect_info *info,
			 size_t n_names, const char *file_id, struct api_ingest_result *res)
{
	char features[160];
	json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:i, s:b, s:I, s:b, s:b, s:s?}",
		"build_id", a->build_id, "sha256", a->sha256, "size", (json_int_t)a->size,
		"features", inspect_flags_str(info, features, sizeof(features)),
		"dwarf_version", info->dwarf_version, "new", res->is_new,
		"sources_named", (json_int_t)n_names,
		"serves_debuginfo", (info->flags & INSPECT_DWARF) != 0,
		"serves_executable", (info->flags & INSPECT_TEXT) != 0,
		"file_id", file_id);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	snprintf(res->message, sizeof(res->message), "%s\n", s ? s : "{}");
	free(s);
	json_decref(o);
}

static void store_checked(struct store *s, struct store_blob *b, int fd,
			  const struct inspect_info *info, struct store_artifact *a,
			  struct api_ingest_result *res)
{
	struct names names = { 0 };
	char fid[STORE_FILE_ID_HEX];
	bool has_fid = false;
	int err = 0;

	if (info->flags & INSPECT_TEXT) /* as the store indexes it: for the answer */
		has_fid = store_file_id_fd(fd, a->size, fid) == 0;
	if (info->flags & INSPECT_DWARF)
		err = inspect_list_sources(fd, add_name, &names);
	if (err && err != -INSPECT_ERR_BAD_DWARF) {
		store_blob_discard(b);
		if (!inspect_rejected(inspect_error_kind(err))) /* reading our copy failed */
			fail_local(res, err, "file (listing its sources)");
		else /* a file validated a moment ago */
			fail(res, api_status_of_kind(EMBER_ERRK_INTERNAL), API_REJECT_OTHER,
			     "cannot list sources: %s\n", inspect_strerror(err));
		goto out;
	}
	err = store_add_artifact(s, b, a, (const char *const *)names.v, names.len,
				 &res->is_new);
	if (err) {
		fail_local(res, err, "file");
		goto out;
	}
	res->status = res->is_new ? MHD_HTTP_CREATED : MHD_HTTP_OK;
	success_json(a, info, names.len, has_fid ? fid : NULL, res);
out:
	names_release(&names);
	/* libdw's allocations for a big DWARF file are freed by now; give the
	 * pages back so one large upload does not raise the server's RSS. */
	malloc_trim(0);
}

void api_ingest_artifact(struct store *s, struct store_blob *b,
			 const char *build_id, unsigned kinds, const char *name,
			 unsigned origin, struct api_ingest_result *res)
{
	struct store_artifact a = { .kinds = kinds, .mtime = time(NULL), .origin = origin };
	struct inspect_info info;
	int fd = store_blob_fd(b);
	int err = store_blob_seal(b, a.sha256, &a.size);

	if (err) {
		store_blob_discard(b);
		fail_local(res, err, "upload");
		return;
	}
	if (check_elf(fd, build_id, &info, res)) {
		store_blob_discard(b);
		return;
	}
	if ((kinds & STORE_KIND_EXECUTABLE) && !(info.flags & INSPECT_TEXT)) {
		store_blob_discard(b);
		fail(res, api_status_of_kind(EMBER_ERRK_UNPROCESSABLE), API_REJECT_BAD_ELF,
		     "rejected: no code (.text) in the file: upload it as %s\n", "debuginfo");
		return;
	}
	snprintf(a.build_id, sizeof(a.build_id), "%s", build_id);
	snprintf(a.name, sizeof(a.name), "%s", name);
	a.flags = info.flags;
	a.dwarf_version = info.dwarf_version;
	store_checked(s, b, fd, &info, &a, res);
}

_Static_assert((int)STORE_HAS_DWARF == (int)INSPECT_DWARF &&
	       (int)STORE_HAS_SYMTAB == (int)INSPECT_SYMTAB &&
	       (int)STORE_HAS_DYNSYM == (int)INSPECT_DYNSYM &&
	       (int)STORE_HAS_GOPCLNTAB == (int)INSPECT_GOPCLNTAB &&
	       (int)STORE_HAS_TEXT == (int)INSPECT_TEXT,
	       "the store ranks by elf-inspect's flag bits");

/* Copy an open file into a new blob (for files fetched from upstream). */
static int copy_to_blob(struct store *s, int fd, struct store_blob **out)
{
	struct store_blob *b;
	int err = store_blob_begin(s, &b);

	if (!err)
		err = store_blob_write_fd(b, fd);
	if (err) {
		store_blob_discard(b);
		return err;
	}
	*out = b;
	return 0;
}

int api_ingest_fd(struct store *s, int fd, const char *build_id, unsigned kinds,
		  const char *name)
{
	struct api_ingest_result res = { 0 };
	struct store_blob *b;
	int err = copy_to_blob(s, fd, &b);

	if (err)
		return err;
	api_ingest_artifact(s, b, build_id, kinds, name, STORE_FROM_UPSTREAM, &res);
	if (res.status >= 400) {
		pr_warn("api: upstream file for '%s' not stored: %.*s", build_id,
			(int)strcspn(res.message, "\n"), res.message);
		return res.err;
	}
	return 0;
}

int api_ingest_source_fd(struct store *s, int fd, const char *build_id,
			 const char *path)
{
	char sha[STORE_SHA256_HEX];
	struct store_blob *b;
	uint64_t size;
	bool is_new;
	int err = copy_to_blob(s, fd, &b);

	if (err)
		return err;
	err = store_blob_seal(b, sha, &size);
	if (err) {
		store_blob_discard(b);
		return err;
	}
	return store_add_source(s, b, build_id, path, sha, size, STORE_FROM_UPSTREAM, &is_new);
}
