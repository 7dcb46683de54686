/*
 * cmd_upload.c - `ember upload`: the CI step that sends a release's
 * executables and debug info to `ember serve`.
 *
 * For each FILE: read its build ID, pick what to send (the file as the
 * executable when it has code; as debug info when it has DWARF, else its
 * separate debug file found like `ember symbolize` finds it; with
 * --sources a tar of the sources its DWARF names), ask the server which
 * sha256s it already holds, and upload only the rest.  Exits non-zero
 * with the server's reason when anything fails.  docs/cli.md documents it.
 */
#include "cli.h"
#include "inspect.h"
#include "upload.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MAPS 16
#define PROGRESS_MIN (1u << 20)

struct upload_opts {
	struct upload_http http;
	const char *token_file;
	const char *debug_root;
	bool sources;
	bool quiet;
	struct upload_prefix_map maps[MAX_MAPS];
	size_t n_maps;
};

/* One file to send and what it is sent as. */
struct upload_item {
	const char *path;
	int fd;
	uint64_t size;
	const char *kind;       /* "executable", "debuginfo", "sources" */
	char sha256[65];
};

static void upload_usage(FILE *f)
{
	fputs("usage: ember upload [options] FILE...\n"
	      "  --server URL              ember server (default $EMBER_SERVER or\n"
	      "                            http://127.0.0.1:8002)\n"
	      "  --token T                 upload token (default $EMBER_TOKEN)\n"
	      "  --token-file F            read the token from F (default ./ember-data/token\n"
	      "                            when it exists)\n"
	      "  --sources                 also upload the source files the DWARF names\n"
	      "  --source-prefix-map OLD=NEW  read DWARF path OLD/... from NEW/...\n"
	      "  --debug-file-directory D  root of .build-id/ for finding debug files\n"
	      "  --quiet                   print failures only\n",
	      f);
}

/* ---- options ------------------------------------------------------------ */

static int add_map(struct upload_opts *o, char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || eq == arg || o->n_maps == MAX_MAPS)
		return -EINVAL;
	*eq = '\0';
	o->maps[o->n_maps++] = (struct upload_prefix_map){ arg, eq + 1 };
	return 0;
}

static int take_value(const char *opt, int *i, int argc, char **argv, char **out)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*out = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0' || *i + 1 >= argc)
		return 0;
	*out = argv[++*i];
	return 1;
}

static int parse_option(struct upload_opts *o, int *i, int argc, char **argv)
{
	char *v;

	if (strcmp(argv[*i], "--sources") == 0)
		o->sources = true;
	else if (strcmp(argv[*i], "--quiet") == 0)
		o->quiet = true;
	else if (take_value("--server", i, argc, argv, &v))
		o->http.server = v;
	else if (take_value("--token-file", i, argc, argv, &v))
		o->token_file = v;
	else if (take_value("--token", i, argc, argv, &v))
		o->http.token = v;
	else if (take_value("--debug-file-directory", i, argc, argv, &v))
		o->debug_root = v;
	else if (take_value("--source-prefix-map", i, argc, argv, &v))
		return add_map(o, v);
	else
		return -EINVAL;
	return 0;
}

static char *read_token_file(const char *path)
{
	char buf[256];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	return n ? strdup(buf) : NULL;
}

/* --token, $EMBER_TOKEN, --token-file, ./ember-data/token: the first set. */
static int resolve_token(struct upload_opts *o, char **owned)
{
	*owned = NULL;
	if (!o->http.token)
		o->http.token = getenv("EMBER_TOKEN");
	if (o->http.token)
		return 0;
	*owned = read_token_file(o->token_file ? o->token_file : "ember-data/token");
	if (!*owned && o->token_file) {
		fprintf(stderr, "ember upload: cannot read token file '%s'\n", o->token_file);
		return -EINVAL;
	}
	o->http.token = *owned;
	return 0;
}

/* ---- what the server has ---------------------------------------------------- */

/* Whether the server lists sha256 under build_id with the given kind. */
static bool server_has(json_t *list, const char *sha, const char *kind)
{
	size_t i, k;
	json_t *a, *kj;

	json_array_foreach(json_object_get(list, "artifacts"), i, a) {
		if (!json_is_string(json_object_get(a, "sha256")) ||
		    strcmp(json_string_value(json_object_get(a, "sha256")), sha))
			continue;
		json_array_foreach(json_object_get(a, "kinds"), k, kj)
			if (json_is_string(kj) && strcmp(json_string_value(kj), kind) == 0)
				return true;
	}
	return false;
}

static int fetch_listing(const struct upload_opts *o, const char *id, json_t **out)
{
	char path[256];
	struct upload_reply r;
	int err;

	snprintf(path, sizeof(path), "/api/v1/artifacts/%s", id);
	err = upload_http_get(&o->http, path, &r);
	if (!err && r.status != 200)
		err = -EPROTO;
	if (err && r.status)
		fprintf(stderr, "ember upload: cannot ask '%s' what it has: HTTP %ld: %s\n",
			o->http.server, r.status, r.body);
	else if (err)
		fprintf(stderr, "ember upload: cannot reach '%s': %s\n", o->http.server, r.body);
	else if (!(*out = json_loads(r.body, 0, NULL)))
		err = -EPROTO;
	free(r.body);
	return err;
}

/* ---- one item ------------------------------------------------------------------- */

static int hash_fd(int fd, char out[65])
{
	struct sha256_ctx ctx;
	uint8_t buf[1 << 16], digest[SHA256_DIGEST_SIZE];
	off_t off = 0;
	ssize_t n;

	sha256_init(&ctx);
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		sha256_update(&ctx, (size_t)n, buf);
		off += n;
	}
	if (n < 0)
		return -errno;
	sha256_digest(&ctx, sizeof(digest), digest);
	ember_hex_encode(digest, sizeof(digest), out);
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* What the server said of an upload it took (its JSON answer, body):
 * a source tar's files stored, already stored and not named by the
 * DWARF, counted apart; a file new or already stored. */
static void print_stored(const struct upload_item *it, const char *id, const char *body)
{
	json_t *a = json_loads(body, 0, NULL);
	json_int_t n[3];

	if (strcmp(it->kind, "sources") == 0 && a) {
		n[0] = json_integer_value(json_object_get(a, "stored"));
		n[1] = json_integer_value(json_object_get(a, "duplicates"));
		n[2] = json_integer_value(json_object_get(a, "skipped"));
		printf("%s: sources %s: %lld files uploaded, %lld already stored, %lld not named "
		       "by its DWARF (%llu bytes sent)\n", it->path, id, (long long)n[0],
		       (long long)n[1], (long long)n[2], (unsigned long long)it->size);
	} else if (json_is_false(json_object_get(a, "new"))) {
		printf("%s: %s %s already stored\n", it->path, it->kind, id);
	} else {
		printf("%s: %s %s uploaded (%llu bytes)\n", it->path, it->kind, id,
		       (unsigned long long)it->size);
	}
	json_decref(a);
}

static int send_item(const struct upload_opts *o, const char *id, json_t *listing,
		     struct upload_item *it)
{
	struct upload_http h = o->http;
	struct upload_reply r;
	char path[512];
	int err;

	if (strcmp(it->kind, "sources") && server_has(listing, it->sha256, it->kind)) {
		if (!o->quiet)
			printf("%s: %s %s already stored\n", it->path, it->kind, id);
		return 0;
	}
	snprintf(path, sizeof(path), "/api/v1/artifacts/%s/%s?name=%s", id, it->kind,
		 base_name(it->path));
	h.progress = h.progress && it->size >= PROGRESS_MIN;
	err = upload_http_put(&h, path, it->fd, it->size, base_name(it->path), &r);
	if (!err && r.status >= 300)
		err = -EPROTO;
	if (err)
		fprintf(stderr, "ember upload: '%s' (%s): %s: %s%s", it->path, it->kind,
			r.status ? "server said" : "failed", r.body,
			r.body[0] && r.body[strlen(r.body) - 1] == '\n' ? "" : "\n");
	else if (!o->quiet)
		print_stored(it, id, r.body);
	free(r.body);
	return err;
}

static int open_item(struct upload_item *it, const char *path, const char *kind)
{
	struct stat st;
	int err;

	it->path = path;
	it->kind = kind;
	it->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (it->fd < 0 || fstat(it->fd, &st)) {
		err = -errno; /* before fprintf, which may change errno */
		fprintf(stderr, "ember upload: cannot open '%s': %s\n", path, strerror(-err));
		return err;
	}
	it->size = (uint64_t)st.st_size;
	err = hash_fd(it->fd, it->sha256);
	if (err)
		fprintf(stderr, "ember upload: cannot read '%s': %s\n", path, strerror(-err));
	return err;
}

static void close_items(struct upload_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (items[i].fd >= 0)
			close(items[i].fd);
}

static int send_sources(const struct upload_opts *o, const char *id, json_t *listing,
			const char *dwarf_path)
{
	struct upload_item it = { .path = dwarf_path, .kind = "sources", .fd = -1 };
	int dfd = open(dwarf_path, O_RDONLY | O_CLOEXEC);
	size_t found = 0, named = 0;
	struct stat st;
	int err = dfd < 0 ? -errno : upload_sources_tar(dfd, o->maps, o->n_maps, &it.fd,
							 &found, &named);

	if (dfd >= 0)
		close(dfd);
	if (err) {
		fprintf(stderr, "ember upload: '%s': cannot pack its sources: %s\n",
			dwarf_path, strerror(-err));
		return err;
	}
	if (!o->quiet)
		printf("%s: %zu of the %zu source files its DWARF names are here\n",
		       dwarf_path, found, named);
	if (found && fstat(it.fd, &st)) {
		err = -errno;
		fprintf(stderr, "ember upload: '%s': cannot read the packed sources: %s\n",
			dwarf_path, strerror(-err));
	} else if (found) {
		it.size = (uint64_t)st.st_size;
		err = send_item(o, id, listing, &it);
	}
	close(it.fd);
	return err;
}

/* The separate debug file when the file carries no DWARF itself. */
static const char *debug_file_of(const struct upload_opts *o, const char *path,
				 char *buf, size_t size)
{
	if (sym_debug_file_path(path, o->debug_root, buf, size) == 0)
		return buf;
	if (!o->quiet)
		printf("%s: no DWARF in it and no separate debug file found\n", path);
	return NULL;
}

static int plan_items(const struct upload_opts *o, const char *path,
		      const struct inspect_info *info, struct upload_item *items,
		      size_t *n, char *dbg, size_t dbg_size, const char **dwarf_path)
{
	int err = 0;

	*n = 0;
	*dwarf_path = NULL;
	/* An unstripped binary is sent once: the server serves it for both. */
	if (info->flags & INSPECT_TEXT)
		err = open_item(&items[(*n)++], path, "executable");
	if (!err && (info->flags & INSPECT_DWARF)) {
		*dwarf_path = path;
		if (!(info->flags & INSPECT_TEXT))
			err = open_item(&items[(*n)++], path, "debuginfo");
	} else if (!err && (*dwarf_path = debug_file_of(o, path, dbg, dbg_size))) {
		err = open_item(&items[(*n)++], *dwarf_path, "debuginfo");
	}
	return err;
}

static int upload_file(const struct upload_opts *o, const char *path)
{
	struct upload_item items[2] = { { .fd = -1 }, { .fd = -1 } };
	struct inspect_info info;
	char id[2 * EMBER_BUILD_ID_MAX + 1], dbg[4096];
	const char *dwarf_path;
	json_t *listing = NULL;
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err = fd < 0 ? -errno : inspect_elf_fd(fd, &info);

	if (fd >= 0)
		close(fd);
	if (err) {
		fprintf(stderr, "ember upload: '%s': %s\n", path, inspect_strerror(err));
		return err;
	}
	ember_build_id_to_hex(info.build_id, info.build_id_len, id);
	err = fetch_listing(o, id, &listing);
	if (!err)
		err = plan_items(o, path, &info, items, &n, dbg, sizeof(dbg), &dwarf_path);
	for (size_t i = 0; !err && i < n; i++)
		err = send_item(o, id, listing, &items[i]);
	if (!err && o->sources && dwarf_path)
		err = send_sources(o, id, listing, dwarf_path);
	close_items(items, n);
	json_decref(listing);
	return err;
}

int cmd_upload(int argc, char **argv)
{
	struct upload_opts o = { .http.server = getenv("EMBER_SERVER") };
	char *token = NULL;
	int first = argc, failed = 0;

	for (int i = 1; i < argc && first == argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			upload_usage(stdout);
			return 0;
		}
		if (argv[i][0] != '-')
			first = i;
		else if (parse_option(&o, &i, argc, argv)) {
			fprintf(stderr, "ember upload: bad option or value '%s'\n", argv[i]);
			upload_usage(stderr);
			return 2;
		}
	}
	if (first == argc) {
		upload_usage(stderr);
		return 2;
	}
	if (!o.http.server)
		o.http.server = "http://127.0.0.1:8002";
	o.http.progress = isatty(STDERR_FILENO);
	if (resolve_token(&o, &token) || upload_http_init())
		return 1;
	for (int i = first; i < argc; i++)
		failed += upload_file(&o, argv[i]) != 0;
	free(token);
	return failed ? 1 : 0;
}
