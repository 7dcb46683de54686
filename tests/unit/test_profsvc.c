/*
 * test_profsvc.c - unit tests of profile-service/: the one rule that names
 * a frame (symsvc_frame_name, used at ingest and by the query-time
 * resolver), and the resolver path: a profile stored with an address left
 * unresolved is resolved at query time through a real symbolization
 * service on a fixture binary (profsvc_resolve), to the very function,
 * file and line that ingest gives the same profile (profsvc_ingest).
 * Files go into a real debuginfo store with the flags elf-inspect finds.
 */
#include "pprof.h"
#include "profsvc.h"
#include "symsvc_fixture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEC ((int64_t)1000000000)
#define T0 ((int64_t)1700000000 * SEC)
#define BASE ((uint64_t)0x555555554000)

static int rm_rf(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- the frame-naming rule ------------------------------------------------ */

/*
 * A C++ function: demangled as the function, mangled as the system name,
 * its file and line; demangling off: the linkage name both times; a frame
 * the symbolizer knows nothing of: "??" and no file.
 */
static int test_profsvc__frame_name_rule(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", id[STORE_BUILD_ID_HEX];
	uint64_t addr = func_addr(unit_fixture("cxx_O2"), "^_Z");
	struct sym_frame f[SYMSVC_FRAMES_MAX], none = { .name = NULL };
	struct symsvc_frame_name fn;
	struct symsvc_index *ix;
	struct symsvc *svc;
	struct store *s;
	int n;

	CHECK(addr);
	CHECK_INT(service_with(dir, "cxx_O2", &s, &svc, id), ==, 0);
	CHECK_INT(symsvc_index_get(svc, id, &ix), ==, 0);
	n = sym_index_lookup(symsvc_index_sym(ix), addr, SYM_ADDR_VADDR, SYM_LOOKUP_SYMBOL_NAME, f,
			     SYMSVC_FRAMES_MAX);
	CHECK(n >= 1);
	symsvc_frame_name(symsvc_index_sym(ix), &f[n - 1], true, &fn);
	CHECK(strncmp(fn.system_name, "_Z", 2) == 0);
	CHECK(strcmp(fn.function, fn.system_name) != 0);
	CHECK(strchr(fn.function, '(') || strstr(fn.function, "::"));
	CHECK(*fn.filename && fn.line > 0);
	symsvc_frame_name(symsvc_index_sym(ix), &f[n - 1], false, &fn);
	CHECK_STR(fn.function, fn.system_name);
	symsvc_frame_name(symsvc_index_sym(ix), &none, true, &fn);
	CHECK_STR(fn.function, "??");
	CHECK_STR(fn.system_name, "??");
	CHECK_STR(fn.filename, "");
	CHECK(fn.line == 0 && fn.start_line == 0);
	symsvc_index_put(svc, ix);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/* ---- the resolver path ---------------------------------------------------- */

/* A CPU profile of one sample at main's address in a mapping of id. */
static struct pprof_profile *profile_at_main(const char *id, uint64_t main_addr)
{
	struct pprof_mapping_desc md = { .start = BASE, .limit = BASE + 0x100000, .build_id = id };
	struct pprof_profile *p = pprof_profile_new();
	uint64_t mid, loc;
	int64_t v = 5 * SEC;

	if (!p || pprof_add_sample_type(p, "cpu", "nanoseconds") ||
	    pprof_add_mapping(p, &md, &mid) || pprof_add_location(p, mid, BASE + main_addr, &loc) ||
	    pprof_add_sample(p, &loc, 1, &v, 1)) {
		pprof_profile_free(p);
		return NULL;
	}
	return p;
}

/* The answer of the series service_name=name in o's format. */
static int answer_of(struct profsvc *ps, const char *name, const struct profsvc_output *o,
		     struct ember_buf *out)
{
	char sel_s[64], why[256] = "";
	struct pstore_selection sel = { .selector = sel_s, .type = "cpu", .from_ns = T0 - 60 * SEC,
					.to_ns = T0 + 60 * SEC };
	struct profsvc_answer a;
	int err;

	snprintf(sel_s, sizeof(sel_s), "{service_name=\"%s\"}", name);
	err = profsvc_query(ps, NULL, &sel, o, &a, why, sizeof(why));
	if (!err)
		*out = a.body;
	else
		ember_buf_release(&a.body);
	return err;
}

/* The JSON tree of the series service_name=name, each unsymbolized frame
 * its own ("MODULE+0xOFFSET": the tests read their addresses). */
static int tree_of(struct profsvc *ps, const char *name, struct ember_buf *out)
{
	struct profsvc_output o = { .sz = sizeof(o), .format = "json", .unsymbolized_frames = true };

	return answer_of(ps, name, &o, out);
}

/*
 * One profile appended with main's address unresolved (as the store
 * keeps what ingest could not resolve), the same profile through
 * ingest: the query resolves the first through the symbolization
 * service to the function, file and line ingest gave the second.
 */
static int test_profsvc__resolver_names_as_ingest(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", id[STORE_BUILD_ID_HEX], pdir[4200];
	uint64_t main_addr = func_addr(unit_fixture("c_O2_pie"), "^main$");
	struct pstore_label raw_l = { "service_name", "raw" }, ing_l = { "service_name", "ingest" };
	struct pstore_append_opts ao = { .sz = sizeof(ao), .labels = &raw_l, .n_labels = 1,
					 .time_ns = T0 };
	struct profsvc_in in = { .labels = &ing_l, .n_labels = 1, .time_ns = T0,
				 .route = PROFSVC_ROUTE_PROFILES };
	/* T0 is fixed, long past: no window of times */
	struct profsvc_opts po = { .sz = sizeof(po), .dir = pdir, .max_age_ns = -1 };
	struct ember_buf raw = { 0 }, ing = { 0 };
	struct pprof_profile *p;
	struct profsvc_out out;
	struct profsvc *ps;
	struct symsvc *svc;
	struct store *s;

	CHECK(main_addr);
	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	snprintf(pdir, sizeof(pdir), "%s/profiles", dir);
	CHECK_INT(profsvc_new(svc, &po, &ps), ==, 0);
	p = profile_at_main(id, main_addr);
	CHECK(p);
	CHECK_INT(pstore_append(profsvc_store(ps), p, &ao, NULL, 0), ==, 0);
	pprof_profile_free(p);
	in.p = profile_at_main(id, main_addr);
	CHECK(in.p);
	profsvc_ingest(ps, &in, &out);
	CHECK_INT(out.err, ==, 0);
	CHECK(strstr(out.body.data, "\"resolved_samples\":1"));
	ember_buf_release(&out.body);
	CHECK_INT(tree_of(ps, "raw", &raw), ==, 0);
	CHECK_INT(tree_of(ps, "ingest", &ing), ==, 0);
	CHECK(strstr(raw.data, "{\"name\":\"main\",\"file\":"));
	CHECK(!strstr(raw.data, "0x")); /* no frame left as an address */
	CHECK_STR(raw.data, ing.data);
	ember_buf_release(&raw);
	ember_buf_release(&ing);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

#define UNKNOWN_BID "00112233445566778899aabbccddeeff00112233" /* no file of it stored */

/* A service over a debuginfo store of c_O2_pie in dir (made; its profile
 * store in pdir), the series service_name=raw appended one profile of
 * main at 0x1000 of UNKNOWN_BID.  0, or 1 when a check failed. */
static int raw_service(char *dir, char *pdir, size_t pdir_size, struct store **s,
		       struct symsvc **svc, struct profsvc **ps)
{
	struct pstore_label l = { "service_name", "raw" };
	struct pstore_append_opts ao = { .sz = sizeof(ao), .labels = &l, .n_labels = 1,
					 .time_ns = T0 };
	struct profsvc_opts po = { .sz = sizeof(po), .dir = pdir };
	char id[STORE_BUILD_ID_HEX];
	struct pprof_profile *p;
	int err;

	CHECK_INT(service_with(dir, "c_O2_pie", s, svc, id), ==, 0);
	snprintf(pdir, pdir_size, "%s/profiles", dir);
	CHECK_INT(profsvc_new(*svc, &po, ps), ==, 0);
	p = profile_at_main(UNKNOWN_BID, 0x1000);
	CHECK(p);
	err = pstore_append(profsvc_store(*ps), p, &ao, NULL, 0);
	pprof_profile_free(p);
	CHECK_INT(err, ==, 0);
	return 0;
}

/* Without the resolver's build ID in the debuginfo store, the address
 * stays one, with the reason in the coverage (not an error). */
static int test_profsvc__unknown_build_id_stays_an_address(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", pdir[4200];
	struct ember_buf b = { 0 };
	struct profsvc *ps;
	struct symsvc *svc;
	struct store *s;

	CHECK_INT(raw_service(dir, pdir, sizeof(pdir), &s, &svc, &ps), ==, 0);
	CHECK_INT(tree_of(ps, "raw", &b), ==, 0);
	CHECK(strstr(b.data, "0x"));
	CHECK(!strstr(b.data, "\"main\""));
	ember_buf_release(&b);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/*
 * By default a query's outputs group the unsymbolized frames per module
 * ("[MODULE]", the build ID when the mapping names no file), each one
 * its own with unsymbolized_frames; the pprof keeps its exact addresses.
 */
static int test_profsvc__unsymbolized_grouped_by_default(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", pdir[4200];
	struct profsvc_output o = { .sz = sizeof(o), .format = "top-text" };
	struct pprof_profile *q = NULL;
	struct ember_buf b = { 0 };
	struct profsvc *ps;
	struct symsvc *svc;
	struct store *s;

	CHECK_INT(raw_service(dir, pdir, sizeof(pdir), &s, &svc, &ps), ==, 0);
	CHECK_INT(answer_of(ps, "raw", &o, &b), ==, 0);
	CHECK(strstr(b.data, "[" UNKNOWN_BID "]"));
	CHECK(!strstr(b.data, "+0x"));
	ember_buf_release(&b);
	o.unsymbolized_frames = true;
	CHECK_INT(answer_of(ps, "raw", &o, &b), ==, 0);
	CHECK(strstr(b.data, UNKNOWN_BID "+0x1000"));
	ember_buf_release(&b);
	o = (struct profsvc_output){ .sz = sizeof(o), .format = "pprof" };
	CHECK_INT(answer_of(ps, "raw", &o, &b), ==, 0);
	CHECK_INT(pprof_decode(b.data, b.len, NULL, &q, NULL, 0), ==, 0);
	CHECK_INT(pprof_message(q)->n_location, ==, 1);
	CHECK_INT(pprof_message(q)->location[0]->address, ==, BASE + 0x1000);
	CHECK_INT(pprof_message(q)->location[0]->n_line, ==, 1); /* out_pprof.c's name */
	CHECK_STR(pprof_string(q, pprof_function_by_id(
					  q, pprof_message(q)->location[0]->line[0]->function_id)
					  ->name),
		  UNKNOWN_BID "+0x1000");
	pprof_profile_free(q);
	ember_buf_release(&b);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/* ---- tenants ---------------------------------------------------------------- */

/*
 * Two tenants and anonymous append the same series: each answers its own
 * profile only, anonymous is the service itself (its store where it was),
 * the same ID gives the same service, and a new tenant past max_tenants
 * is refused while those open are still given.
 */
static int test_profsvc__tenants_share_nothing(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", id[STORE_BUILD_ID_HEX], pdir[4200];
	struct pstore_label l = { "service_name", "shop" };
	struct pstore_append_opts ao = { .sz = sizeof(ao), .labels = &l, .n_labels = 1,
					 .time_ns = T0 };
	struct profsvc_opts po = { .sz = sizeof(po), .dir = pdir, .max_tenants = 2 };
	static const uint64_t addr[3] = { 0x1000, 0x2000, 0x3000 }; /* in the mapping */
	struct profsvc *ps, *t[3], *again;
	struct ember_buf b[3];
	struct symsvc *svc;
	struct store *s;
	char hex[3][16];

	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	snprintf(pdir, sizeof(pdir), "%s/profiles", dir);
	CHECK_INT(profsvc_new(svc, &po, &ps), ==, 0);
	CHECK_INT(profsvc_tenant(ps, "anonymous", PROFSVC_TENANT_CREATE, &t[0]), ==, 0);
	CHECK(t[0] == ps);
	CHECK_INT(profsvc_tenant(ps, "a", PROFSVC_TENANT_CREATE, &t[1]), ==, 0);
	/* from a tenant's too */
	CHECK_INT(profsvc_tenant(t[1], "b", PROFSVC_TENANT_CREATE, &t[2]), ==, 0);
	CHECK(t[1] != ps && t[2] != ps && t[1] != t[2]);
	CHECK_STR(profsvc_tenant_id(t[2]), "b");
	CHECK_INT(profsvc_tenant(ps, "a", PROFSVC_TENANT_CREATE, &again), ==, 0);
	CHECK(again == t[1]);
	CHECK_INT(profsvc_tenant(ps, "c", PROFSVC_TENANT_CREATE, &again), ==, -EUSERS);
	CHECK_INT(profsvc_tenant(ps, "../a", PROFSVC_TENANT_CREATE, &again), ==, -EINVAL);
	for (int i = 0; i < 3; i++) {
		struct pprof_profile *p =
			profile_at_main("00112233445566778899aabbccddeeff00112233", addr[i]);

		CHECK(p);
		CHECK_INT(pstore_append(profsvc_store(t[i]), p, &ao, NULL, 0), ==, 0);
		pprof_profile_free(p);
	}
	for (int i = 0; i < 3; i++) {
		CHECK_INT(tree_of(t[i], "shop", &b[i]), ==, 0);
		snprintf(hex[i], sizeof(hex[i]), "+0x%llx", (unsigned long long)addr[i]);
	}
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			CHECK(!strstr(b[i].data, hex[j]) == (i != j));
	for (int i = 0; i < 3; i++)
		ember_buf_release(&b[i]);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/* ---- per-tenant limits ------------------------------------------------------- */

/* text into the file at path: 0 or -1. */
static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int err = !f || fputs(text, f) < 0 ? -1 : 0;

	if (f && fclose(f))
		err = -1;
	return err;
}

/* A file's bad lines refused naming the line and what; a good one read. */
static int test_profsvc__limits_file_checked(void)
{
	static const char *const bad[][2] = {
		{ "default nope=1\n", "line 1: 'nope' is not key=value" },
		{ "# c\na ingest_rate=fast\n", "line 2: ingest_rate=fast: want bytes" },
		{ "a retention=3w\n", "want a duration" },
		{ "a max_samples=1K\n", "want a number" },
		{ "../a max_samples=1\n", "'../a' is not a tenant ID" },
		{ "a max_samples=1\nb\na max_series=2\n", "tenant 'a' named twice" },
		{ "default\ndefault\n", "line 2: a second 'default'" },
		{ "a ingest_rate=99999999999999999999\n", "want bytes" },
		{ "a ingest_rate\n", "not key=value" },
	};
	const char *good = "# limits\n\ndefault max_samples=100 retention=30d\n"
			   "  team-a ingest_rate=4MiB ingest_burst=8M max_samples=0\n";
	struct profsvc_limits_table *t = NULL;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CHECK_INT(profsvc_limits_parse(bad[i][0], strlen(bad[i][0]), &t, why, sizeof(why)),
			  ==, -EINVAL);
		CHECK(strstr(why, bad[i][1]));
	}
	CHECK_INT(profsvc_limits_parse("a\0b", 3, &t, why, sizeof(why)), ==, -EINVAL);
	CHECK_INT(profsvc_limits_parse(good, strlen(good), &t, why, sizeof(why)), ==, 0);
	profsvc_limits_table_free(t);
	return 0;
}

/*
 * A tenant's entry overrides the default's keys it names (0 included:
 * no limit), the rest are the default's, an unnamed tenant has the
 * default's, anonymous too; the ingest rate is a token bucket (a write
 * past it refused with the seconds to wait, one past the burst never
 * fits); a table set later applies at once.
 */
static int test_profsvc__limits_per_tenant_and_rate(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", id[STORE_BUILD_ID_HEX], pdir[4200], lf[4200];
	const char *text = "default max_samples=100 retention=30d\n"
			   "a ingest_rate=1000 ingest_burst=3000 max_samples=0\n";
	struct profsvc_opts po = { .sz = sizeof(po), .dir = pdir, .limits_file = lf };
	struct profsvc_limits_table *t;
	struct profsvc_limits l;
	struct profsvc *ps, *a, *b;
	struct symsvc *svc;
	struct store *s;
	unsigned retry;
	char why[256];

	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	snprintf(pdir, sizeof(pdir), "%s/profiles", dir);
	snprintf(lf, sizeof(lf), "%s/limits", dir);
	CHECK_INT(write_file(lf, text), ==, 0);
	CHECK_INT(profsvc_new(svc, &po, &ps), ==, 0);
	CHECK_INT(profsvc_tenant(ps, "a", PROFSVC_TENANT_CREATE, &a), ==, 0);
	CHECK_INT(profsvc_tenant(ps, "b", PROFSVC_TENANT_CREATE, &b), ==, 0);
	profsvc_limits_of(a, &l);
	CHECK(l.ingest_rate == 1000 && l.ingest_burst == 3000 && l.max_samples == 0);
	CHECK(l.retention == 30 * 86400);
	profsvc_limits_of(b, &l);
	CHECK(l.ingest_rate == 0 && l.max_samples == 100 && l.retention == 30 * 86400);
	profsvc_limits_of(ps, &l);
	CHECK(l.max_samples == 100);
	/* the bucket: 3000 at first, then 1000 a second */
	CHECK_INT(profsvc_ingest_admit(a, 2500, &retry, why, sizeof(why)), ==, 0);
	CHECK_INT(profsvc_ingest_admit(a, 2500, &retry, why, sizeof(why)), ==, -PROFSVC_ERR_RATE);
	CHECK(retry >= 1 && retry <= 3);
	CHECK(strstr(why, "tenant 'a': past its ingest rate of 1000 bytes a second"));
	CHECK_INT(profsvc_ingest_admit(a, 3001, &retry, why, sizeof(why)), ==, -PROFSVC_ERR_RATE);
	CHECK(retry == 0 && strstr(why, "it never fits"));
	CHECK_INT(profsvc_ingest_admit(b, 1 << 30, &retry, why, sizeof(why)), ==, 0);
	CHECK(profsvc_error_kind(-PROFSVC_ERR_RATE) == EMBER_ERRK_CAPACITY);
	/* a new table: a's rate gone */
	CHECK_INT(profsvc_limits_parse("a max_samples=5\n", 16, &t, why, sizeof(why)), ==, 0);
	profsvc_limits_set(ps, t);
	CHECK_INT(profsvc_ingest_admit(a, 1 << 20, &retry, why, sizeof(why)), ==, 0);
	profsvc_limits_of(a, &l);
	CHECK(l.max_samples == 5 && l.retention == 0);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/* One profile of series service_name=name appended to ts's store at T0 + i s. */
static int append_one(struct profsvc *ts, const char *name, int i)
{
	struct pstore_label l = { "service_name", name };
	struct pstore_append_opts ao = { .sz = sizeof(ao), .labels = &l, .n_labels = 1,
					 .time_ns = T0 + i * SEC };
	struct pprof_profile *p = profile_at_main("00112233445566778899aabbccddeeff00112233",
						  0x1000);
	int err = p ? pstore_append(profsvc_store(ts), p, &ao, NULL, 0) : -ENOMEM;

	pprof_profile_free(p);
	return err;
}

/* Whether path exists. */
static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/*
 * A read of a tenant never written opens no store and takes no slot:
 * with the one slot taken, it is still answered, as an empty tenant of
 * its own name, and no directory is made for it; a write then makes it.
 */
static int test_profsvc__tenant_read_opens_nothing(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", id[STORE_BUILD_ID_HEX], pdir[4200], g[4300];
	struct profsvc_opts po = { .sz = sizeof(po), .dir = pdir, .max_tenants = 1 };
	struct profsvc *ps, *a, *ghost, *again;
	struct ember_buf b;
	struct symsvc *svc;
	struct store *s;

	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	snprintf(pdir, sizeof(pdir), "%s/profiles", dir);
	snprintf(g, sizeof(g), "%s/tenants/ghost", pdir);
	CHECK_INT(profsvc_new(svc, &po, &ps), ==, 0);
	CHECK_INT(profsvc_tenant(ps, "a", PROFSVC_TENANT_CREATE, &a), ==, 0);
	CHECK_INT(append_one(a, "shop", 0), ==, 0);
	CHECK_INT(profsvc_tenant(ps, "ghost", 0, &ghost), ==, 0);
	CHECK(ghost != a && ghost != ps);
	CHECK_STR(profsvc_tenant_id(ghost), "ghost");
	CHECK_INT(tree_of(ghost, "shop", &b), ==, 0);
	CHECK(!strstr(b.data, "+0x1000") && !strstr(b.data, "main"));
	ember_buf_release(&b);
	profsvc_tenant_put(ghost);
	CHECK(!exists(g));
	/* a read of a tenant written before opens its store */
	CHECK_INT(profsvc_tenant(ps, "a", 0, &again), ==, 0);
	CHECK(again == a);
	profsvc_tenant_put(again);
	/* a write of the new tenant: the one slot is a's, held */
	CHECK_INT(profsvc_tenant(ps, "ghost", PROFSVC_TENANT_CREATE, &ghost), ==, -EUSERS);
	profsvc_tenant_put(a);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/*
 * A tenant's store held by a request stays open past the idle time; let
 * go, it is closed (its directory's lock let go: another store can open
 * it) and opened again by the next request, the profiles there; a
 * tenant whose store is closed gives its slot to a new one.
 */
static int test_profsvc__tenant_idle_closed(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", id[STORE_BUILD_ID_HEX], pdir[4200], ad[4300];
	struct profsvc_opts po = { .sz = sizeof(po), .dir = pdir, .max_tenants = 1,
				   .tenant_idle_ns = 200 * 1000000LL };
	struct pstore_opts so = { .sz = sizeof(so) };
	struct pstore *other = NULL;
	struct profsvc *ps, *a, *b;
	struct ember_buf tree;
	struct symsvc *svc;
	struct store *s;
	char why[256];
	int err = -1;

	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	snprintf(pdir, sizeof(pdir), "%s/profiles", dir);
	snprintf(ad, sizeof(ad), "%s/tenants/a", pdir);
	CHECK_INT(profsvc_new(svc, &po, &ps), ==, 0);
	CHECK_INT(profsvc_tenant(ps, "a", PROFSVC_TENANT_CREATE, &a), ==, 0);
	CHECK_INT(append_one(a, "shop", 0), ==, 0);
	usleep(600000); /* held: open */
	CHECK_INT(pstore_open(ad, &so, &other, why, sizeof(why)), ==, -EBUSY);
	profsvc_tenant_put(a);
	for (int i = 0; i < 1000 && err; i++) { /* closed within 10 s */
		usleep(10000);
		err = pstore_open(ad, &so, &other, why, sizeof(why));
	}
	CHECK_INT(err, ==, 0);
	pstore_free(other);
	CHECK_INT(profsvc_tenant(ps, "a", 0, &b), ==, 0);
	CHECK(b == a); /* the same service, its counters kept */
	CHECK_INT(tree_of(b, "shop", &tree), ==, 0);
	CHECK(strstr(tree.data, "+0x1000") || strstr(tree.data, "main"));
	ember_buf_release(&tree);
	profsvc_tenant_put(b);
	for (int i = 0; i < 1000 && (err = profsvc_tenant(ps, "b", PROFSVC_TENANT_CREATE, &b));
	     i++)
		usleep(10000); /* -EUSERS until a's store is closed again */
	CHECK_INT(err, ==, 0);
	CHECK_STR(profsvc_tenant_id(b), "b");
	profsvc_tenant_put(b);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/*
 * The limits' max_series of a tenant whose store is open applies at the
 * reload (profsvc_reload), not only at the next open: one series, then
 * five.
 */
static int test_profsvc__limits_reload_retunes_stores(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", id[STORE_BUILD_ID_HEX], pdir[4200], lf[4200];
	struct profsvc_opts po = { .sz = sizeof(po), .dir = pdir, .limits_file = lf };
	struct profsvc_limits l;
	struct profsvc *ps, *a;
	struct symsvc *svc;
	struct store *s;

	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	snprintf(pdir, sizeof(pdir), "%s/profiles", dir);
	snprintf(lf, sizeof(lf), "%s/limits", dir);
	CHECK_INT(write_file(lf, "a max_series=1 rollup_retention=400d\n"), ==, 0);
	CHECK_INT(profsvc_new(svc, &po, &ps), ==, 0);
	CHECK_INT(profsvc_tenant(ps, "a", PROFSVC_TENANT_CREATE, &a), ==, 0);
	profsvc_limits_of(a, &l);
	CHECK(l.max_series == 1 && l.rollup_retention == 400 * 86400);
	CHECK_INT(append_one(a, "one", 0), ==, 0);
	CHECK_INT(append_one(a, "two", 1), ==, -PSTORE_ERR_SERIES_LIMIT);
	CHECK_INT(write_file(lf, "a max_series=5\n"), ==, 0);
	CHECK_INT(profsvc_reload(ps), ==, 0);
	CHECK_INT(append_one(a, "two", 2), ==, 0);
	CHECK_INT(write_file(lf, "a max_series=x\n"), ==, 0);
	CHECK_INT(profsvc_reload(ps), ==, -EINVAL); /* the limits before kept */
	CHECK_INT(append_one(a, "three", 3), ==, 0);
	profsvc_tenant_put(a);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

/* Requests for one new tenant at once: one open, one service for all. */
struct tenant_race {
	struct profsvc *ps, *got;
	int err;
};

static void *ask_tenant(void *arg)
{
	struct tenant_race *r = arg;

	r->err = profsvc_tenant(r->ps, "racer", PROFSVC_TENANT_CREATE, &r->got);
	return NULL;
}

/*
 * Eight threads asking for a new tenant at once get the one service; an
 * open that fails (the tenant's directory is a file) takes no slot, so
 * the next new tenant still fits max_tenants, and asking again fails
 * again rather than answering without a store.
 */
static int test_profsvc__tenant_opened_once(void)
{
	char dir[] = "/tmp/ember-profsvc-XXXXXX", id[STORE_BUILD_ID_HEX], pdir[4200], f[4400];
	struct profsvc_opts po = { .sz = sizeof(po), .dir = pdir, .max_tenants = 2 };
	struct tenant_race r[8];
	pthread_t th[8];
	struct profsvc *ps, *t;
	struct symsvc *svc;
	struct store *s;
	FILE *fp;

	CHECK_INT(service_with(dir, "c_O2_pie", &s, &svc, id), ==, 0);
	snprintf(pdir, sizeof(pdir), "%s/profiles", dir);
	CHECK_INT(profsvc_new(svc, &po, &ps), ==, 0);
	for (int i = 0; i < 8; i++) {
		r[i] = (struct tenant_race){ .ps = ps };
		CHECK_INT(pthread_create(&th[i], NULL, ask_tenant, &r[i]), ==, 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(r[i].err, ==, 0);
		CHECK(r[i].got == r[0].got);
	}
	snprintf(f, sizeof(f), "%s/tenants/broken", pdir);
	fp = fopen(f, "w");
	CHECK(fp);
	fclose(fp);
	CHECK(profsvc_tenant(ps, "broken", PROFSVC_TENANT_CREATE, &t) < 0);
	CHECK(profsvc_tenant(ps, "broken", PROFSVC_TENANT_CREATE, &t) < 0);
	CHECK_INT(profsvc_tenant(ps, "second", PROFSVC_TENANT_CREATE, &t), ==, 0);
	CHECK_INT(profsvc_tenant(ps, "third", PROFSVC_TENANT_CREATE, &t), ==, -EUSERS);
	profsvc_free(ps);
	symsvc_free(svc);
	store_free(s);
	return rm_rf(dir);
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_profsvc__frame_name_rule),
	UNIT_CASE(test_profsvc__resolver_names_as_ingest),
	UNIT_CASE(test_profsvc__unknown_build_id_stays_an_address),
	UNIT_CASE(test_profsvc__unsymbolized_grouped_by_default),
	UNIT_CASE(test_profsvc__tenants_share_nothing),
	UNIT_CASE(test_profsvc__tenant_opened_once),
	UNIT_CASE(test_profsvc__limits_file_checked),
	UNIT_CASE(test_profsvc__limits_per_tenant_and_rate),
	UNIT_CASE(test_profsvc__tenant_read_opens_nothing),
	UNIT_CASE(test_profsvc__tenant_idle_closed),
	UNIT_CASE(test_profsvc__limits_reload_retunes_stores),
};

UNIT_MAIN_QUIET(cases)
