/*
 * cmd_query.c - `ember query --server URL` and `ember diff`, run in
 * ember-client (docs/cli.md): a query or a diff asked of a server's
 * profile routes (GET /api/v1/query, GET /api/v1/diff; docs/http-api.md),
 * its answer written to stdout or -o FILE, or a diff of two pprof files
 * made here, offline, by the profile model's diff (pmodel_result_from_pprof,
 * pmodel_diff_new) with the same outputs.  `--format source --function
 * NAME` asks the source view's routes (GET /api/v1/source,
 * /api/v1/diff/source) for their text: pprof -list's listing.  The views
 * (--focus, --through, --hide, --sandwich) are the routes' parameters;
 * offline, --through and --sandwich are applied here (pmodel_result_view).
 * `ember diff --fail-on-regression`
 * and its CI reports (--format markdown, junit) read the diff's regression
 * table (diff_gate.c).
 */
#include "cli.h"
#include "diff_gate.h"
#include "pprof.h"
#include "pmodel.h"
#include "upload.h"
#include "httpc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ANSWER_MAX ((size_t)1 << 30)
#define FILE_MAX ((size_t)256 << 20)

/* A NAME=VALUE parameter of the request, or an option's own setting. */
struct param {
	const char *name, *value;
};

struct query_opts {
	const char *server, *out, *tenant;
	struct param p[32];
	size_t np;
	const char *files[2];
	size_t nfiles;
	bool diff;
	bool gate;		/* --fail-on-regression */
};

#define VIEW_USAGE                                                                          \
	"  --focus A;B;C       only the stacks beginning with this call path, root first\n"  \
	"  --through NAME      only the stacks through a frame NAME, anywhere in them\n"     \
	"  --hide REGEX        frames whose whole name matches (RE2) hidden into their\n"  \
	"                      callers\n"                                                      \
	"  --sandwich NAME     NAME's callees rooted at it, or with --sandwich-side\n"       \
	"                      callers its callers, inverted\n"

static void query_usage(FILE *f, bool diff)
{
	if (!diff)
		fputs("usage: ember query --server URL [SELECTOR] [options]\n"
		      "  --server URL        Ember server (default $EMBER_SERVER or\n"
		      "                      http://127.0.0.1:8002, as ember upload)\n"
		      "  --query SELECTOR    e.g. '{service_name=\"checkout\",version=~\"2\\\\.4.*\"}'\n"
		      "  --type TYPE         cpu, wall, alloc_space, ... or a full type ID\n"
		      "  --from T, --to T    now-1h (default), now, RFC 3339, epoch seconds\n"
		      "  --span-id ID, --trace-id ID   only the samples linked to these spans or\n"
		      "                      traces (hex; repeatable or comma-separated)\n"
		      "  --format F          top-text (default), top, json, folded, svg, pprof,\n"
		      "                      source (--function NAME's lines, as pprof -list)\n"
		      "  --function NAME     the function of --format source (--file PATH: one\n"
		      "                      of its source files only)\n"
		      "  --limit N           rows of a top table (default 100, 0: all)\n"
		      "  --unsymbolized frames  each unsymbolized frame its own\n"
		      "                      (MODULE+0xOFFSET; default module: one [MODULE]\n"
		      "                      frame a run of them; pprof always exact)\n"
		      VIEW_USAGE
		      "  --tenant T          the tenant read (X-Scope-OrgID; a server with\n"
		      "                      --multitenancy)\n"
		      "  -o FILE             write the answer to FILE (default stdout)\n",
		      f);
	else
		fputs("usage: ember diff --server URL --base SELECTOR --new SELECTOR [options]\n"
		      "       ember diff BASE.pb.gz NEW.pb.gz [options]      (offline)\n"
		      "  --base-from/--base-to/--new-from/--new-to T, --from/--to T\n"
		      "  --server URL        Ember server (default $EMBER_SERVER or\n"
		      "                      http://127.0.0.1:8002, as ember upload)\n"
		      "  --type TYPE         the sample type compared (offline: default the\n"
		      "                      profile's default type)\n"
		      "  --format F          table-text (default), table, json, folded, svg, pprof,\n"
		      "                      markdown (a pull-request comment), junit (JUnit XML),\n"
		      "                      source (--function NAME's lines before and after;\n"
		      "                      --server only)\n"
		      "  --limit N           rows of the table (default 100, markdown 20; 0: all)\n"
		      "  --min-abs-pct P, --min-rel R, --min-z Z   the flag's thresholds\n"
		      "                      (default 0.5 points, 0.1, 3 sigma)\n"
		      "  --unsymbolized frames  each unsymbolized frame its own (default\n"
		      "                      module: grouped per module on both sides)\n"
		      "  --fail-on-regression  exit 3 when a function's self share grew past\n"
		      "                      them (1: other failures, 2: bad usage)\n"
		      VIEW_USAGE
		      "                      (both sides; offline: not --hide or --focus)\n"
		      "  --tenant T          the tenant read (X-Scope-OrgID; with --server)\n"
		      "  -o FILE             write the answer to FILE (default stdout)\n",
		      f);
}

/* --opt VALUE or --opt=VALUE as a request parameter named name. */
static const struct {
	const char *opt, *name;
} map[] = {
	{ "--query", "query" },		{ "--type", "type" },	    { "--from", "from" },
	{ "--to", "to" },		{ "--format", "format" },   { "--limit", "limit" },
	{ "--base", "base_query" },	{ "--new", "new_query" },   { "--base-from", "base_from" },
	{ "--base-to", "base_to" },	{ "--new-from", "new_from" }, { "--new-to", "new_to" },
	{ "--min-abs-pct", "min_abs_pct" }, { "--min-rel", "min_rel" }, { "--min-z", "min_z" },
	{ "--title", "title" },		{ "--span-id", "span_id" }, { "--trace-id", "trace_id" },
	{ "--function", "function" },	{ "--file", "file" },
	{ "--unsymbolized", "unsymbolized" },
	/* the views (docs/http-api.md, "Views") */
	{ "--focus", "focus" },		{ "--through", "through" }, { "--hide", "hide" },
	{ "--sandwich", "sandwich" },	{ "--sandwich-side", "sandwich_side" },
};

static int take(struct query_opts *o, const char *opt, const char *val)
{
	if (!val)
		return -EINVAL;
	if (strcmp(opt, "--server") == 0) {
		o->server = val;
		return 0;
	}
	if (strcmp(opt, "-o") == 0 || strcmp(opt, "--output") == 0) {
		o->out = val;
		return 0;
	}
	if (strcmp(opt, "--tenant") == 0) { /* a header's value: no control bytes */
		for (const char *c = val; *c; c++)
			if ((unsigned char)*c < ' ' || *c == 0x7f)
				return -EINVAL;
		o->tenant = val;
		return 0;
	}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(opt, map[i].opt) == 0 && o->np < sizeof(o->p) / sizeof(o->p[0])) {
			o->p[o->np++] = (struct param){ map[i].name, val };
			return 0;
		}
	return -EINVAL;
}

static int parse(struct query_opts *o, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '='), opt[64];

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
		if (o->diff && !strcmp(argv[i], "--fail-on-regression")) {
			o->gate = true;
			continue;
		}
		if (argv[i][0] != '-') {
			if (!o->diff && o->np < sizeof(o->p) / sizeof(o->p[0]))
				o->p[o->np++] = (struct param){ "query", argv[i] };
			else if (o->diff && o->nfiles < 2)
				o->files[o->nfiles++] = argv[i];
			else
				goto bad;
			continue;
		}
		if (eq && argv[i][1] == '-' && (size_t)(eq - argv[i]) < sizeof(opt)) {
			snprintf(opt, sizeof(opt), "%.*s", (int)(eq - argv[i]), argv[i]);
			if (!take(o, opt, eq + 1))
				continue;
		} else if (!take(o, argv[i], i + 1 < argc ? argv[i + 1] : NULL)) {
			i++;
			continue;
		}
bad:
		fprintf(stderr, "ember %s: bad option or value '%s'\n", o->diff ? "diff" : "query",
			argv[i]);
		return -EINVAL;
	}
	return 0;
}

static const char *param(const struct query_opts *o, const char *name)
{
	for (size_t i = 0; i < o->np; i++)
		if (strcmp(o->p[i].name, name) == 0)
			return o->p[i].value;
	return NULL;
}

/* ---- output --------------------------------------------------------------- */

static int write_out(const char *path, const void *data, size_t len)
{
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	int err = fd < 0 ? -errno : 0;

	if (!err)
		err = ember_write_all(fd, data, len);
	if (path && fd >= 0 && close(fd) && !err)
		err = -errno;
	if (err)
		fprintf(stderr, "ember: cannot write '%s': %s\n", path ? path : "stdout",
			strerror(-err));
	return err;
}

/* ---- the regression gate (diff_gate.c) ------------------------------------ */

/* markdown and junit: reports made here from the regression table. */
static bool gate_format(const struct query_opts *o)
{
	const char *f = param(o, "format");

	return o->diff && f && (!strcmp(f, "markdown") || !strcmp(f, "junit"));
}

static const char *either(const struct query_opts *o, const char *name, const char *dflt)
{
	return param(o, name) ? param(o, name) : param(o, dflt);
}

static struct diff_gate_sides gate_sides(const struct query_opts *o)
{
	if (o->nfiles == 2)
		return (struct diff_gate_sides){ .base = o->files[0], .new_ = o->files[1] };
	return (struct diff_gate_sides){
		.base = either(o, "base_query", "query"), .new_ = either(o, "new_query", "query"),
		.base_from = either(o, "base_from", "from"), .base_to = either(o, "base_to", "to"),
		.new_from = either(o, "new_from", "from"), .new_to = either(o, "new_to", "to"),
	};
}

static int gate_write(const struct query_opts *o, const struct diff_gate *g)
{
	struct diff_gate_sides s = gate_sides(o);
	const char *limit = param(o, "limit");
	struct ember_buf b;
	int err;

	ember_buf_init(&b, ANSWER_MAX);
	if (!strcmp(param(o, "format"), "markdown"))
		err = diff_gate_write_markdown(g, &s, limit ? strtoul(limit, NULL, 10) : 20, &b);
	else
		err = diff_gate_write_junit(g, &s, &b);
	if (!err)
		err = write_out(o->out, b.data ? b.data : "", b.len);
	ember_buf_release(&b);
	return err;
}

/* The verdict and reports from the table's JSON: 0, 1 (a failure, said)
 * or DIFF_GATE_EXIT_REGRESSION (with --fail-on-regression). */
static int gate_finish(const struct query_opts *o, const char *json, size_t len)
{
	struct diff_gate g;
	char why[256];
	int err = diff_gate_parse(json, len, &g, why, sizeof(why)), ret;

	if (err) {
		fprintf(stderr, "ember diff: the regression table: %s\n",
			err == -EINVAL ? why : strerror(-err));
		return 1;
	}
	err = gate_format(o) ? gate_write(o, &g) : 0;
	if (!err && o->gate)
		diff_gate_report(&g, stderr);
	ret = err ? 1 : o->gate && diff_gate_regressions(&g) ? DIFF_GATE_EXIT_REGRESSION : 0;
	diff_gate_release(&g);
	return ret;
}

/* ---- against a server ----------------------------------------------------- */

/* --format source: the source view's route, its listing as text. */
static bool source_format(const struct query_opts *o)
{
	const char *f = param(o, "format");

	return f && !strcmp(f, "source");
}

static int path_of(const struct query_opts *o, struct ember_buf *b)
{
	bool src = source_format(o);
	int err = ember_buf_appendf(b, "/api/v1/%s?", o->diff ? src ? "diff/source" : "diff"
							      : src ? "source" : "query");

	if (!err && !param(o, "format"))
		err = ember_buf_appendf(b, "format=%s&", o->diff ? "table-text" : "top-text");
	for (size_t i = 0; !err && i < o->np; i++) {
		bool text = src && !strcmp(o->p[i].name, "format");

		err = ember_buf_appendf(b, "%s%s=", i ? "&" : "", o->p[i].name);
		if (!err)
			err = httpc_escape(b, text ? "text" : o->p[i].value);
	}
	return err;
}

/* GET the route for o's parameters: 0 with the answer in *r (free
 * r->body), or 1 after saying why. */
static int remote_get(const struct query_opts *o, struct upload_reply *r)
{
	struct upload_http h = { .server = o->server, .tenant = o->tenant,
				 .max_reply = ANSWER_MAX };
	struct ember_buf path;
	int err;

	ember_buf_init(&path, 16384);
	err = path_of(o, &path);
	if (!err)
		err = upload_http_get(&h, path.data, r);
	ember_buf_release(&path);
	if (err || r->status != 200) {
		fprintf(stderr, "ember %s: %s%s%s", o->diff ? "diff" : "query",
			r->status ? "the server answered: " : "cannot reach the server: ",
			r->body ? r->body : strerror(-err),
			r->body && r->len && r->body[r->len - 1] == '\n' ? "" : "\n");
		free(r->body);
		r->body = NULL; /* the caller frees it too */
		return 1;
	}
	return 0;
}

/* The gate's table: o's request with format=table&limit=0. */
static int remote_gate(const struct query_opts *o)
{
	struct query_opts t = *o;
	struct upload_reply r = { 0 };
	int ret;

	t.np = 0;
	for (size_t i = 0; i < o->np; i++)
		if (strcmp(o->p[i].name, "format") && strcmp(o->p[i].name, "limit"))
			t.p[t.np++] = o->p[i];
	if (t.np + 2 > sizeof(t.p) / sizeof(t.p[0])) {
		fputs("ember diff: too many options for --fail-on-regression\n", stderr);
		return 2;
	}
	t.p[t.np++] = (struct param){ "format", "table" };
	t.p[t.np++] = (struct param){ "limit", "0" };
	ret = remote_get(&t, &r);
	if (!ret)
		ret = gate_finish(o, r.body, r.len);
	free(r.body);
	return ret;
}

static int remote(const struct query_opts *o)
{
	struct upload_reply r = { 0 };
	int ret = 0;

	if (!gate_format(o)) {
		ret = remote_get(o, &r);
		if (!ret)
			ret = write_out(o->out, r.body, r.len) ? 1 : 0;
		free(r.body);
	}
	if (!ret && (o->gate || gate_format(o)))
		ret = remote_gate(o);
	return ret;
}

/* ---- offline: two pprof files ---------------------------------------------- */

static int read_file(const char *path, struct ember_buf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char chunk[65536];
	ssize_t n;
	int err = fd < 0 ? -errno : 0;

	while (!err && (n = read(fd, chunk, sizeof(chunk))) != 0)
		err = n < 0 ? (errno == EINTR ? 0 : -errno) : ember_buf_append(b, chunk, (size_t)n);
	if (fd >= 0)
		close(fd);
	return err;
}

static int load(const char *path, const char *type, struct pmodel_result **out)
{
	struct pprof_profile *p = NULL;
	struct ember_buf b;
	char why[512] = "";
	int err;

	ember_buf_init(&b, FILE_MAX);
	err = read_file(path, &b);
	if (err) {
		fprintf(stderr, "ember diff: cannot read '%s': %s\n", path, strerror(-err));
		ember_buf_release(&b);
		return err;
	}
	err = pprof_decode(b.data ? b.data : "", b.len, NULL, &p, why, sizeof(why));
	ember_buf_release(&b);
	if (!err)
		err = pmodel_result_from_pprof(p, type, out, why, sizeof(why));
	if (err)
		fprintf(stderr, "ember diff: '%s': %s\n", path, why[0] ? why : pmodel_strerror(err));
	pprof_profile_free(p);
	return err;
}

/* Both sides' unsymbolized frames grouped per module as the server groups
 * them (pmodel_result_group_unresolved): all but pprof, unless
 * --unsymbolized frames. */
static int offline_group(const struct query_opts *o, struct pmodel_result **r)
{
	const char *u = param(o, "unsymbolized"), *f = param(o, "format");
	struct pmodel_result *g;
	int err;

	if (u && strcmp(u, "module") && strcmp(u, "frames")) {
		fprintf(stderr, "ember diff: --unsymbolized: '%s' is not module or frames\n", u);
		return -EINVAL;
	}
	if ((u && !strcmp(u, "frames")) || (f && !strcmp(f, "pprof")))
		return 0;
	for (int i = 0; i < 2; i++) {
		err = pmodel_result_group_unresolved(r[i], &g);
		if (err) {
			fprintf(stderr, "ember diff: %s\n", pmodel_strerror(err));
			return err;
		}
		pmodel_result_free(r[i]);
		r[i] = g;
	}
	return 0;
}

static int thresholds(const struct query_opts *o, struct pmodel_diff_opts *d)
{
	const char *names[3] = { "min_abs_pct", "min_rel", "min_z" };
	double *f[3] = { &d->min_abs_pct, &d->min_rel, &d->min_z };

	*d = (struct pmodel_diff_opts){ .sz = sizeof(*d) };
	for (int i = 0; i < 3; i++) {
		const char *v = param(o, names[i]);
		char *end;

		if (!v)
			continue;
		*f[i] = strtod(v, &end);
		if (end == v || *end || !(*f[i] > 0)) {
			fprintf(stderr, "ember diff: --%s: '%s' is not a positive number\n", names[i], v);
			return -EINVAL;
		}
	}
	return 0;
}

static int offline_write(const struct query_opts *o, const struct pmodel_diff *d,
			 struct ember_buf *b)
{
	const char *f = param(o, "format") ? param(o, "format") : "table-text";
	const char *limit = param(o, "limit");
	size_t rows = limit ? strtoul(limit, NULL, 10) : 100;
	struct pmodel_svg_opts so = { .sz = sizeof(so), .title = param(o, "title") };

	if (!strcmp(f, "table") || !strcmp(f, "table-text"))
		return pmodel_write_diff_table(d, rows, !f[5], pmodel_write_buf, b);
	if (!strcmp(f, "json")) { /* one JSON value: the document's newline is ours */
		int err = pmodel_write_diff_tree_json(d, pmodel_write_buf, b);

		return err ? err : ember_buf_putc(b, '\n');
	}
	if (!strcmp(f, "folded"))
		return pmodel_write_diff_folded(d, false, pmodel_write_buf, b);
	if (!strcmp(f, "svg"))
		return pmodel_write_diff_flamegraph(d, &so, pmodel_write_buf, b);
	if (!strcmp(f, "pprof"))
		return pmodel_write_diff_pprof(d, b);
	fprintf(stderr, "ember diff: --format '%s': table-text, table, json, folded, svg, pprof,"
		" markdown or junit\n", f);
	return -EINVAL;
}

/* The views of o (--through, --sandwich) applied to *r, here without a
 * server; --hide and --focus are the server's (its RE2, its call-path
 * focus).  0, or -EINVAL / -ENOMEM said. */
static int offline_view(const struct query_opts *o, struct pmodel_result **r)
{
	const char *side = param(o, "sandwich_side");
	struct pmodel_view v = { .sz = sizeof(v), .through = param(o, "through"),
				 .sandwich = param(o, "sandwich") };
	struct pmodel_result *next;
	int err;

	if (param(o, "hide") || param(o, "focus")) {
		fputs("ember diff: --hide and --focus need --server\n", stderr);
		return -EINVAL;
	}
	if (side && strcmp(side, "callers") && strcmp(side, "callees")) {
		fprintf(stderr, "ember diff: --sandwich-side '%s': callers or callees\n", side);
		return -EINVAL;
	}
	v.side = side && !strcmp(side, "callers") ? PMODEL_SANDWICH_CALLERS
						  : PMODEL_SANDWICH_CALLEES;
	if (!v.through && !v.sandwich)
		return 0;
	err = pmodel_result_view(*r, &v, &next);
	if (err) {
		fprintf(stderr, "ember diff: %s\n", pmodel_strerror(err));
		return err;
	}
	pmodel_result_free(*r);
	*r = next;
	return 0;
}

static int offline(const struct query_opts *o)
{
	struct pmodel_result *r[2] = { NULL, NULL };
	struct pmodel_diff *d = NULL;
	struct pmodel_diff_opts dopts;
	struct ember_buf b;
	int err = thresholds(o, &dopts), ret = 0;

	ember_buf_init(&b, ANSWER_MAX);
	if (!err)
		err = load(o->files[0], param(o, "type"), &r[0]);
	if (!err)
		err = load(o->files[1], param(o, "type"), &r[1]);
	if (!err)
		err = offline_group(o, r);
	if (!err)
		err = offline_view(o, &r[0]);
	if (!err)
		err = offline_view(o, &r[1]);
	if (!err && (err = pmodel_diff_new(r[0], r[1], &dopts, &d)))
		fprintf(stderr, "ember diff: %s\n", err == -PMODEL_ERR_TYPE
			? "the two profiles hold different sample types or units (--type)"
			: pmodel_strerror(err));
	if (!err && !gate_format(o))
		err = offline_write(o, d, &b);
	if (!err && !gate_format(o))
		err = write_out(o->out, b.data ? b.data : "", b.len);
	if (!err && (o->gate || gate_format(o))) { /* the table the server would send */
		ember_buf_reset(&b);
		err = pmodel_write_diff_table(d, 0, true, pmodel_write_buf, &b);
		ret = err ? 1 : gate_finish(o, b.data, b.len);
	}
	ember_buf_release(&b);
	pmodel_diff_free(d);
	pmodel_result_free(r[0]);
	pmodel_result_free(r[1]);
	return err ? 1 : ret;
}

static int run(int argc, char **argv, bool diff)
{
	struct query_opts o = { .server = getenv("EMBER_SERVER"), .diff = diff };
	int ret = parse(&o, argc, argv);

	if (ret) {
		query_usage(ret > 0 ? stdout : stderr, diff);
		return ret > 0 ? 0 : 2;
	}
	if (source_format(&o) && (!param(&o, "function") || o.nfiles)) {
		fprintf(stderr, "ember %s: --format source needs --function NAME%s\n",
			diff ? "diff" : "query", diff ? " and --server" : "");
		return 2;
	}
	if (diff && o.nfiles == 2 && !param(&o, "base_query") && !param(&o, "new_query"))
		return offline(&o);
	if (diff && o.nfiles) {
		fputs("ember diff: give two pprof files, or --server with --base and --new\n",
		      stderr);
		return 2;
	}
	if (!o.server)
		o.server = "http://127.0.0.1:8002"; /* ember upload's default */
	if (upload_http_init())
		return 1;
	return remote(&o);
}

int cmd_query(int argc, char **argv)
{
	return run(argc, argv, false);
}

int cmd_diff(int argc, char **argv)
{
	return run(argc, argv, true);
}
