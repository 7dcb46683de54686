/*
 * profile_fixture.c - what the profile store's and the profile model's
 * unit tests share (test_pstore.c, test_pmodel.c): a temporary directory,
 * CPU profiles built from "root;...;leaf" stacks, the stacks of the
 * outputs' and diffs' cases, a result built by hand (the focus's and
 * the views' cases, test_pmodel_views.c), and the peer tools run as
 * oracles (xmllint).
 */
#include "pmodel.h"
#include "unit.h"
/* after unit.h, whose parameters would shadow its globals */
#include "profile_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char dir[256];

const char *const SREC[] = { "main;rec;rec;leaf", "main;rec;leaf", "main;other" };
const int64_t CREC[] = { 6, 3, 1 };

const char *const SB[] = { "main;work;hot", "main;work;cold", "main;idle", "main;gone",
				   "main;few" };
const int64_t CB[] = { 300, 300, 300, 98, 2 };
const char *const SN[] = { "main;work;hot", "main;work;cold", "main;idle", "main;fresh",
				   "main;few" };
const int64_t CN[] = { 700, 300, 300, 95, 5 };

int make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/ember-test-pstore.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

void remove_dir(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

int func_of(struct pprof_profile *p, const char *name, uint64_t *id)
{
	char file[128];
	struct pprof_function_desc f = { name, name, file, 1 };

	snprintf(file, sizeof(file), "%s.c", name);
	return pprof_add_function(p, &f, id);
}

/* A location with one line of function name (one location per name). */
int loc_of(struct pprof_profile *p, uint64_t mid, const char *name, uint64_t *id)
{
	const pprof_message_t *m = pprof_message(p);
	struct pprof_line ln = { 0, 10, 0 };
	uint64_t addr = 0x401000 + (ember_checksum64(name, strlen(name), 0) & 0xffff0);

	for (size_t i = 0; i < m->n_location; i++)
		if (m->location[i]->n_line &&
		    strcmp(pprof_string(
				   p, pprof_function_by_id(p, m->location[i]->line[0]->function_id)
					      ->name),
			   name) == 0) {
			*id = m->location[i]->id;
			return 0;
		}
	if (func_of(p, name, &ln.function_id) || pprof_add_location(p, mid, addr, id))
		return -1;
	return pprof_location_set_lines(p, *id, &ln, 1);
}

/* A location without lines at address (unsymbolized). */
int raw_loc(struct pprof_profile *p, uint64_t mid, uint64_t addr, uint64_t *id)
{
	const pprof_message_t *m = pprof_message(p);

	for (size_t i = 0; i < m->n_location; i++)
		if (!m->location[i]->n_line && m->location[i]->address == addr &&
		    m->location[i]->mapping_id == mid) {
			*id = m->location[i]->id;
			return 0;
		}
	return pprof_add_location(p, mid, addr, id);
}

/*
 * A CPU profile (samples/count, cpu/nanoseconds, period 10 ms) of stacks
 * "root;...;leaf" with counts[i] samples each.  A frame "0xADDR" is an
 * unsymbolized address in the mapping of build ID "beef" (others are in
 * the mapping of "cafe").
 */
struct pprof_profile *mkprof(const char *const *stacks, const int64_t *counts, size_t n,
				    int64_t time)
{
	struct pprof_mapping_desc md = { 0x400000, 0x500000, 0, "/usr/bin/app", "cafe" };
	struct pprof_mapping_desc raw = { 0x7f0000000000, 0x7f0000100000, 0x1000, "/lib/libx.so",
					  "beef" };
	struct pprof_profile *p = pprof_profile_new();
	uint64_t mid, rid;

	if (!p || pprof_add_sample_type(p, "samples", "count") ||
	    pprof_add_sample_type(p, "cpu", "nanoseconds") ||
	    pprof_set_period(p, "cpu", "nanoseconds", 10 * MS) || pprof_add_mapping(p, &md, &mid) ||
	    pprof_add_mapping(p, &raw, &rid))
		goto fail;
	pprof_set_time(p, time, 10 * SEC);
	for (size_t i = 0; i < n; i++) {
		uint64_t locs[64];
		size_t k = 0;
		char copy[1024], *save, *tok;
		int64_t v[2] = { counts[i], counts[i] * 10 * MS };

		snprintf(copy, sizeof(copy), "%s", stacks[i]);
		for (tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			int err = strncmp(tok, "0x", 2) == 0
					  ? raw_loc(p, rid, strtoull(tok, NULL, 16), &locs[k])
					  : loc_of(p, mid, tok, &locs[k]);

			if (err)
				goto fail;
			k++;
		}
		for (size_t a = 0, b = k ? k - 1 : 0; a < b; a++, b--) { /* leaf first */
			uint64_t t = locs[a];

			locs[a] = locs[b];
			locs[b] = t;
		}
		if (pprof_add_sample(p, locs, k, v, 2))
			goto fail;
	}
	return p;
fail:
	pprof_profile_free(p);
	return NULL;
}

/* Run cmd (a shell line), its stdout into out; the exit status. */
int run_cmd(const char *cmd, struct ember_buf *out)
{
	FILE *f = popen(cmd, "r");
	char buf[4096];
	size_t n;

	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		ember_buf_append(out, buf, n);
	return pclose(f);
}

bool have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "which %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int err = !f || fwrite(data, 1, len, f) != len;

	if (f && fclose(f))
		err = 1;
	return err ? -1 : 0;
}

/* xmllint finds it well-formed and it has the script and frames. */
int check_svg(const char *path, const char *frame)
{
	struct ember_buf out;
	char cmd[600];
	int rc;

	if (!have("xmllint")) {
		fprintf(stderr, "xmllint not found (apt-get install libxml2-utils)\n");
		return UNIT_SKIP;
	}
	ember_buf_init(&out, 1 << 20);
	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s' 2>&1", path);
	rc = run_cmd(cmd, &out);
	if (rc != 0)
		fprintf(stderr, "xmllint: %s\n", out.data ? out.data : "");
	ember_buf_reset(&out);
	snprintf(cmd, sizeof(cmd), "xmllint --xpath 'count(//*[local-name()=\"g\"][@class=\"f\"])' "
		 "'%s' 2>&1", path);
	if (!rc && (run_cmd(cmd, &out) || atoi(out.data) < 3))
		rc = -1;
	ember_buf_release(&out);
	return rc;
	(void)frame;
}

/* ---- a result by hand (the focus and the views) ------------------------------- */

/* Location of function name (one line), or of inner inlined into outer
 * (two lines, innermost first as pprof lists them), in d. */
static int focus_loc(struct pmodel_dict *d, const char *outer, const char *inner, uint32_t *out)
{
	struct pmodel_line ln[2] = { { 0 } };
	const char *names[2] = { inner ? inner : outer, outer };
	uint32_t n = inner ? 2 : 1;

	for (uint32_t i = 0; i < n; i++) {
		struct pmodel_func f = { 0 };

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, names[i], &f.name));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_func(d, &f, &ln[i].func));
	}
	return pmodel_dict_loc(d, 0, 0x1000 + d->locs.n, 0, ln, n, out);
}

/* A result by hand: main;work;inner 3 (work and inner one location,
 * inner inlined), main;work 2 (work's own location), main;idle 4,
 * main;libx.so+0x10 1 (unsymbolized, in /usr/lib/libx.so mapped at
 * 0x7000), other 5; the inlined stack's 3 with attributes "thread=t". */
struct pmodel_result *focus_result(void)
{
	struct pmodel_result *r = NULL;
	struct pmodel_map m = { .start = 0x7000, .limit = 0x8000 };
	uint32_t lmain, lwi, lwork, lidle, llib, lother, mid, nmain, n[5];
	struct pmodel_attr_part part = { 0, "thread=t", 3 };
	static const int64_t self[] = { 3, 2, 4, 1, 5 };
	struct pmodel_dict *d;

	if (pmodel_result_new("cpu:samples:count:cpu:nanoseconds", &r))
		return NULL;
	d = &r->dict;
	if (focus_loc(d, "main", NULL, &lmain) || focus_loc(d, "work", "inner", &lwi) ||
	    focus_loc(d, "work", NULL, &lwork) || focus_loc(d, "idle", NULL, &lidle) ||
	    focus_loc(d, "other", NULL, &lother) ||
	    pmodel_strtab_intern0(&d->str, "/usr/lib/libx.so", &m.filename) ||
	    pmodel_dict_map(d, &m, &mid) || pmodel_dict_loc(d, mid + 1, 0x7010, 0, NULL, 0, &llib) ||
	    pmodel_dict_node(d, 0, lmain, &nmain) || pmodel_dict_node(d, nmain, lwi, &n[0]) ||
	    pmodel_dict_node(d, nmain, lwork, &n[1]) || pmodel_dict_node(d, nmain, lidle, &n[2]) ||
	    pmodel_dict_node(d, nmain, llib, &n[3]) || pmodel_dict_node(d, 0, lother, &n[4]) ||
	    EMBER_VEC_RESERVE(&r->self, pmodel_dict_nodes(d)))
		goto fail;
	while (r->self.n < pmodel_dict_nodes(d))
		r->self.v[r->self.n++] = 0;
	for (size_t i = 0; i < 5; i++)
		r->self.v[n[i]] = self[i];
	r->profiles = 2;
	r->period = 10;
	part.node = n[0];
	if (!pmodel_result_add_attrs(r, d, &part, 1))
		return r;
fail:
	pmodel_result_free(r);
	return NULL;
}
