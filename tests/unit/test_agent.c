/*
 * test_agent.c - unit tests of the agent's parts that run without a
 * sampling BPF program: the range allocator, the /proc/PID/maps, perf
 * map and jitdump parsers, kallsyms, the ELF facts (against the unwind compiler's own
 * reading of the build ID), loading a compiled table into real BPF maps,
 * the table manager (tables.c: files by build ID, the worker's outcome,
 * the cache, idle tables unloaded), the processes (procs.c, on children
 * this test starts with a fixture mapped at a known address) and pushing
 * (push.c, to an HTTP server on loopback in this process; each body
 * decoded back with wire/).  What needs BPF maps is skipped, exit 77,
 * where this process may not create them; procs.c's cases then check
 * everything but the BPF entry.
 */
#include "unit.h"
#include "agent_internal.h"
#include "pprof.h"
#include "unwind.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int test_agent__ranges_alloc_free_coalesce(void)
{
	struct agent_ranges r;
	uint64_t a, b, c, d;

	CHECK(agent_ranges_init(&r, 100) == 0);
	CHECK(agent_ranges_alloc(&r, 10, 1, &a) == 0 && a == 0);
	CHECK(agent_ranges_alloc(&r, 10, 8, &b) == 0 && b == 16); /* 10..16 stays free */
	CHECK(agent_ranges_alloc(&r, 6, 1, &c) == 0 && c == 10);  /* first fit */
	CHECK_INT(r.used, ==, 26);
	CHECK(agent_ranges_alloc(&r, 80, 1, &d) == -ENOSPC);
	CHECK(agent_ranges_free(&r, b, 10) == 0);
	CHECK(agent_ranges_free(&r, a, 10) == 0);
	CHECK(agent_ranges_free(&r, c, 6) == 0);
	CHECK_INT(r.nfree, ==, 1); /* all merged back */
	CHECK_INT(r.used, ==, 0);
	CHECK(agent_ranges_alloc(&r, 100, 1, &d) == 0 && d == 0);
	agent_ranges_release(&r);
	return 0;
}

static int test_agent__maps_line_parse(void)
{
	char l1[] = "7f0a1c200000-7f0a1c228000 r-xp 00028000 fd:01 1311 /usr/lib/x86_64-linux-gnu/libc.so.6\n";
	char l2[] = "7ffd5c7f0000-7ffd5c7f2000 r-xp 00000000 00:00 0                          [vdso]\n";
	char l3[] = "55d0c0000000-55d0c0001000 r-xp 00001000 08:02 42 /tmp/a b (deleted)\n";
	char bad[] = "zz-7f r-xp 0 0:0 0\n";
	struct agent_map_line m;

	CHECK(agent_maps_parse_line(l1, &m) == 0);
	CHECK(m.start == 0x7f0a1c200000 && m.end == 0x7f0a1c228000 && m.offset == 0x28000);
	CHECK(m.dev_major == 0xfd && m.dev_minor == 1 && m.inode == 1311);
	CHECK_STR(m.perms, "r-xp");
	CHECK_STR(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK(agent_maps_parse_line(l2, &m) == 0);
	CHECK_STR(m.path, "[vdso]");
	CHECK(agent_maps_parse_line(l3, &m) == 0);
	CHECK_STR(m.path, "/tmp/a b (deleted)");
	CHECK(agent_maps_parse_line(bad, &m) == -EINVAL);
	return 0;
}

static int test_agent__perfmap_lookup(void)
{
	static const char text[] = "7f0000001000 40 LazyCompile:*fib /app.js:1\n"
				   "not a line\n"
				   "7f0000000100 10 Builtin:Add\n"
				   "7f0000002000 0 empty\n"
				   "7f0000003000 20 last-no-newline";
	int err = 0;
	struct agent_perfmap *m = agent_perfmap_parse(text, sizeof(text) - 1, &err);

	CHECK(m != NULL);
	CHECK_STR(agent_perfmap_lookup(m, 0x7f0000001000), "LazyCompile:*fib /app.js:1");
	CHECK_STR(agent_perfmap_lookup(m, 0x7f000000103f), "LazyCompile:*fib /app.js:1");
	CHECK(agent_perfmap_lookup(m, 0x7f0000001040) == NULL);
	CHECK_STR(agent_perfmap_lookup(m, 0x7f0000000105), "Builtin:Add");
	CHECK(agent_perfmap_lookup(m, 0x7f0000002000) == NULL); /* size 0: skipped */
	CHECK_STR(agent_perfmap_lookup(m, 0x7f0000003010), "last-no-newline");
	CHECK(agent_perfmap_lookup(m, 0x1000) == NULL);
	agent_perfmap_free(m);
	return 0;
}

/* A map of AGENT_PERFMAP_MAX_ENTRIES entries is read, one more is refused
 * (-E2BIG): the runtime writing it is not trusted. */
static int test_agent__perfmap_entries_bounded(void)
{
	static const char line[] = "10 1 f\n";
	size_t n = AGENT_PERFMAP_MAX_ENTRIES + 1, len = sizeof(line) - 1;
	char *text = malloc(n * len);
	struct agent_perfmap *m;
	int err = 0;

	CHECK(text != NULL);
	for (size_t i = 0; i < n; i++)
		memcpy(text + i * len, line, len);
	m = agent_perfmap_parse(text, (n - 1) * len, &err);
	CHECK(m != NULL);
	CHECK_STR(agent_perfmap_lookup(m, 0x10), "f");
	agent_perfmap_free(m);
	m = agent_perfmap_parse(text, n * len, &err);
	free(text);
	CHECK(m == NULL && err == -E2BIG);
	return 0;
}

/* A jitdump written as perf's jitdump.h says (version 1, this machine's
 * byte order), record by record. */
static void jd_put(struct ember_buf *b, const void *p, size_t n)
{
	if (ember_buf_append(b, p, n))
		abort();
}

static void jd_header(struct ember_buf *b, uint32_t magic, uint32_t version, uint32_t size)
{
	uint32_t h[6] = { magic, version, size, 62 /* EM_X86_64 */, 0, 4242 };
	uint64_t t[2] = { 1, 0 };
	static const uint8_t pad[64];

	jd_put(b, h, sizeof(h));
	jd_put(b, t, sizeof(t));
	if (size > 40)
		jd_put(b, pad, size - 40);
}

static void jd_record(struct ember_buf *b, uint32_t id, uint32_t total)
{
	uint32_t r[2] = { id, total };
	uint64_t ts = 2;

	jd_put(b, r, sizeof(r));
	jd_put(b, &ts, sizeof(ts));
}

static void jd_load(struct ember_buf *b, uint64_t addr, uint64_t size, const char *name)
{
	size_t len = strlen(name) + 1;
	uint32_t ids[2] = { 4242, 4243 };
	uint64_t f[4] = { addr, addr, size, 7 };
	static const uint8_t code[16] = { 0xc3 };

	jd_record(b, 0, (uint32_t)(16 + 40 + len + sizeof(code)));
	jd_put(b, ids, sizeof(ids));
	jd_put(b, f, sizeof(f));
	jd_put(b, name, len);
	jd_put(b, code, sizeof(code));
}

static void jd_move(struct ember_buf *b, uint64_t from, uint64_t to, uint64_t size)
{
	uint32_t ids[2] = { 4242, 4243 };
	uint64_t f[5] = { to, from, to, size, 7 };

	jd_record(b, 1, 16 + 48);
	jd_put(b, ids, sizeof(ids));
	jd_put(b, f, sizeof(f));
}

static void jd_skipped(struct ember_buf *b, uint32_t id, size_t body)
{
	static const uint8_t zero[64];

	jd_record(b, id, (uint32_t)(16 + body));
	jd_put(b, zero, body);
}

/* Loads named, the records perf's reader skips skipped, a move carrying
 * its name, a later load at an address replacing the earlier one, and a
 * file read as it grows: a record cut short waits for the next read. */
static int test_agent__jitdump_loads_moves_and_growth(void)
{
	struct ember_buf b;
	struct agent_jitdump *jd;
	size_t cut;
	int err = 0;

	ember_buf_init(&b, 1 << 20);
	jd_header(&b, 0x4A695444, 1, 48); /* a header longer than 40: records start after it */
	jd_load(&b, 0x7f0000001000, 0x40, "JS:*fib /app.js:1");
	jd_skipped(&b, 2, 40);	/* DEBUG_INFO */
	jd_skipped(&b, 4, 24);	/* UNWINDING_INFO */
	jd_skipped(&b, 9, 8);	/* a kind of a later version */
	jd_load(&b, 0x7f0000002000, 0x10, "Builtin:Add");
	cut = b.len;
	jd_move(&b, 0x7f0000002000, 0x7f0000003000, 0x10);
	jd_load(&b, 0x7f0000001000, 0x20, "JS:*fib2 /app.js:9");
	jd_load(&b, 0x7f0000004000, 0, "no code");

	jd = agent_jitdump_new(&err);
	CHECK(jd != NULL);
	CHECK(agent_jitdump_lookup(jd, 0x7f0000001000) == NULL);
	CHECK(agent_jitdump_feed(jd, b.data, 20) == 0); /* the header not written yet */
	CHECK(agent_jitdump_feed(jd, b.data, cut + 30) == 0); /* the move cut short */
	CHECK_STR(agent_jitdump_lookup(jd, 0x7f000000103f), "JS:*fib /app.js:1");
	CHECK(agent_jitdump_lookup(jd, 0x7f0000001040) == NULL);
	CHECK_STR(agent_jitdump_lookup(jd, 0x7f0000002008), "Builtin:Add");
	CHECK(agent_jitdump_feed(jd, b.data, b.len) == 0);
	CHECK(agent_jitdump_lookup(jd, 0x7f0000002008) == NULL); /* moved away */
	CHECK_STR(agent_jitdump_lookup(jd, 0x7f0000003008), "Builtin:Add");
	CHECK_STR(agent_jitdump_lookup(jd, 0x7f0000001010), "JS:*fib2 /app.js:9");
	CHECK(agent_jitdump_lookup(jd, 0x7f0000001030) == NULL); /* the new code is shorter */
	CHECK(agent_jitdump_lookup(jd, 0x7f0000004000) == NULL); /* size 0: skipped */
	CHECK(agent_jitdump_feed(jd, b.data, 10) == -EINVAL); /* shorter than read */
	agent_jitdump_free(jd);
	agent_jitdump_free(NULL);
	ember_buf_release(&b);
	return 0;
}

/* The file is written by the profiled process: each bad header or record
 * is refused with its kind, never followed past the bytes there are. */
static int test_agent__jitdump_hostile_records_refused(void)
{
	struct {
		const char *what;
		uint32_t magic, version, hsize, id, total;
		int want;
	} cases[] = {
		{ "not a jitdump", 0x12345678, 1, 40, 0, 0, -EBADMSG },
		{ "the other byte order", 0x4454694A, 1, 40, 0, 0, -EPROTONOSUPPORT },
		{ "version 2", 0x4A695444, 2, 40, 0, 0, -EPROTONOSUPPORT },
		{ "a header shorter than its fields", 0x4A695444, 1, 39, 0, 0, -EBADMSG },
		{ "a header of 1 MiB", 0x4A695444, 1, 1 << 20, 0, 0, -EBADMSG },
		{ "a record shorter than its header", 0x4A695444, 1, 40, 2, 15, -EBADMSG },
		{ "a load shorter than its fields", 0x4A695444, 1, 40, 0, 16 + 40, -EBADMSG },
		{ "a move shorter than its fields", 0x4A695444, 1, 40, 1, 16 + 47, -EBADMSG },
		{ "a record past the end: not written yet", 0x4A695444, 1, 40, 2, 1 << 30, 0 },
	};
	char name[AGENT_JIT_NAME_MAX + 8];
	int err = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ember_buf b;
		struct agent_jitdump *jd = agent_jitdump_new(&err);
		static const uint8_t body[64];

		CHECK(jd != NULL);
		ember_buf_init(&b, 1 << 20);
		jd_header(&b, cases[i].magic, cases[i].version, 40);
		memcpy(b.data + 8, &cases[i].hsize, 4);
		if (cases[i].total) {
			jd_record(&b, cases[i].id, cases[i].total);
			jd_put(&b, body, sizeof(body));
		}
		err = agent_jitdump_feed(jd, b.data, b.len);
		if (err != cases[i].want) {
			fprintf(stderr, "%s: %d, want %d\n", cases[i].what, err, cases[i].want);
			CHECK(0);
		}
		agent_jitdump_free(jd);
		ember_buf_release(&b);
	}
	{ /* a name without its NUL in its record; one longer than a function's */
		struct ember_buf b;
		struct agent_jitdump *jd = agent_jitdump_new(&err);
		uint64_t f[5] = { 0, 0, 0x1000, 0x10, 0 };

		CHECK(jd != NULL);
		ember_buf_init(&b, 1 << 20);
		jd_header(&b, 0x4A695444, 1, 40);
		memset(name, 'x', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		jd_load(&b, 0x2000, 0x10, name); /* skipped */
		jd_load(&b, 0x3000, 0x10, "ok");
		jd_record(&b, 0, 16 + 40 + 3);
		jd_put(&b, f, 40);
		jd_put(&b, "abc", 3);
		CHECK(agent_jitdump_feed(jd, b.data, b.len) == -EBADMSG);
		CHECK(agent_jitdump_lookup(jd, 0x2000) == NULL);
		agent_jitdump_free(jd);
		ember_buf_release(&b);
	}
	return 0;
}

static int test_agent__kallsyms_names_a_kernel_function(void)
{
	int err = 0;
	struct agent_kallsyms *k = agent_kallsyms_new(NULL, &err);
	char line[512], name[256], type;
	uint64_t addr = 0;
	const char *mod, *got;
	FILE *f;

	if (!k) {
		fprintf(stderr, "skip: /proc/kallsyms: %s\n", strerror(-err));
		return UNIT_SKIP;
	}
	f = fopen("/proc/kallsyms", "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) == 3 &&
		    !strcmp(name, "vfs_read"))
			break;
	fclose(f);
	CHECK(addr != 0);
	got = agent_kallsyms_lookup(k, addr + 1, &mod);
	CHECK_STR(got, "vfs_read");
	CHECK_STR(mod, "");
	agent_kallsyms_free(k);
	return 0;
}

/* The build ID the agent reads is the one the unwind compiler puts in the
 * image, and the bias of the text mapping is what the PT_LOADs give. */
static int test_agent__elf_info_matches_unwind_compiler(void)
{
	const char *path = unit_fixture("c_O2_pie");
	struct agent_elf_info e;
	struct ember_buf image;
	struct unwind_table *b;
	uint64_t vaddr;
	int fd = open(path, O_RDONLY), err;

	CHECK(fd >= 0);
	CHECK(agent_elf_info_read(fd, &e) == 0);
	close(fd);
	ember_buf_init(&image, 64 << 20);
	CHECK(unwind_table_compile(path, NULL, NULL, &image) == 0);
	b = unwind_table_new(image.data, image.len, &err);
	CHECK(b != NULL);
	CHECK_INT(e.build_id_len, ==, unwind_table_header(b)->build_id_len);
	CHECK(!memcmp(e.build_id, unwind_table_header(b)->build_id, e.build_id_len));
	CHECK_INT(strlen(e.build_id_hex), ==, 2 * e.build_id_len);
	for (size_t i = 0; i < e.nloads; i++) {
		if (!e.loads[i].exec)
			continue; /* the agent maps executable segments only */
		CHECK(agent_elf_offset_to_vaddr(&e, e.loads[i].offset & ~0xfffull, &vaddr) == 0);
		CHECK(vaddr == e.loads[i].vaddr - (e.loads[i].offset & 0xfff));
	}
	unwind_table_free(b);
	ember_buf_release(&image);
	return 0;
}

/* Real BPF maps for tables (small): 0, or UNIT_SKIP where this process
 * may not create them. */
struct test_maps {
	int pages, data, rules;
	struct agent_table_maps t;
};

static int test_maps_new(struct test_maps *m)
{
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, hm, .map_flags = BPF_F_NO_PREALLOC);

	m->pages = bpf_map_create(BPF_MAP_TYPE_HASH, "pages", sizeof(struct agent_page_key),
				  sizeof(struct agent_page_val), 4096, &hm);
	m->data = bpf_map_create(BPF_MAP_TYPE_ARRAY, "data", 4, AGENT_DATA_CHUNK, 256, &mm);
	m->rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "rules", 4, 16, 4096, &mm);
	if (m->pages < 0 || m->data < 0 || m->rules < 0 ||
	    agent_table_maps_init(&m->t, m->pages, m->data, 256 * AGENT_DATA_CHUNK, m->rules,
				  4096)) {
		fprintf(stderr, "skip: cannot create BPF maps: %s\n", strerror(errno));
		return UNIT_SKIP;
	}
	return 0;
}

static void test_maps_release(struct test_maps *m)
{
	agent_table_maps_release(&m->t);
	close(m->pages), close(m->data), close(m->rules);
}

/* Real BPF maps of the sizes docs/unwind-format.md section 4 gives (small
 * here): the table's data area and rules land at the allocated offsets,
 * one page entry a page with data_off + base; unloading removes them. */
static int test_agent__table_load_into_bpf_maps(void)
{
	struct test_maps m;
	struct agent_loaded l1, l2;
	struct ember_buf image;
	const struct unwind_table_header *h;
	struct unwind_table *b;
	uint8_t *dp;
	struct agent_unwind_rule *rp;
	struct agent_page_key k = { 0 }, next;
	struct agent_page_val v;
	size_t n = 0;
	int err = test_maps_new(&m);

	if (err)
		return err;
	dp = mmap(NULL, 256 * AGENT_DATA_CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, m.data, 0);
	rp = mmap(NULL, 4096 * 16, PROT_READ | PROT_WRITE, MAP_SHARED, m.rules, 0);
	CHECK(dp != MAP_FAILED && rp != MAP_FAILED);
	ember_buf_init(&image, 64 << 20);
	CHECK(unwind_table_compile(unit_fixture("c_O2_pie"), NULL, NULL, &image) == 0);
	b = unwind_table_new(image.data, image.len, &err);
	CHECK(b != NULL);
	h = unwind_table_header(b);
	CHECK(agent_table_load(&m.t, image.data, image.len, 7, &l1) == 0);
	CHECK(agent_table_load(&m.t, image.data, image.len, 8, &l2) == 0);
	CHECK(l2.data_base >= l1.data_base + h->data_size && l2.data_base % 8 == 0);
	CHECK(l2.rule_base == l1.rule_base + h->nrules);
	CHECK(!memcmp(dp + l2.data_base, image.data + 128, h->data_size));
	CHECK(!memcmp(rp + l2.rule_base, image.data + 128 + h->data_size, 16 * h->nrules));
	while (!bpf_map_get_next_key(m.pages, n ? &k : NULL, &next)) {
		CHECK(bpf_map_lookup_elem(m.pages, &next, &v) == 0);
		CHECK(v.rule_base == (next.file_id == 7 ? l1.rule_base : l2.rule_base));
		k = next;
		n++;
	}
	CHECK_INT(n, ==, 2 * h->npages);
	agent_table_unload(&m.t, &l1);
	k.file_id = 7;
	k.page = l2.pages[0];
	CHECK(bpf_map_lookup_elem(m.pages, &k, &v) != 0); /* gone */
	k.file_id = 8;
	CHECK(bpf_map_lookup_elem(m.pages, &k, &v) == 0); /* the other stays */
	/* A image that fails its checksum loads nothing. */
	image.data[200] ^= 1;
	CHECK(agent_table_load(&m.t, image.data, image.len, 9, &l1) == -UNWIND_ERR_CHECKSUM);
	agent_table_unload(&m.t, &l2);
	CHECK_INT(m.t.data_free.used, ==, 0);
	CHECK_INT(m.t.rules_free.used, ==, 0);
	unwind_table_free(b);
	ember_buf_release(&image);
	munmap(dp, 256 * AGENT_DATA_CHUNK);
	munmap(rp, 4096 * 16);
	test_maps_release(&m);
	return 0;
}

static int test_agent__opts_need_a_destination(void)
{
	char *none[] = { "ember-agent", NULL };
	char *bad[] = { "ember-agent", "--output", "/tmp/x", "--frequency", "0", NULL };
	char *ok[] = { "ember-agent", "--output", "/tmp/x", "--pid", "1,2", "--label",
		       "team=db", NULL };
	char why[256];
	struct agent_opts o;

	CHECK(agent_opts_parse(1, none, &o, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "--output DIR or --server URL") != NULL);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(5, bad, &o, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "--frequency") != NULL);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(7, ok, &o, why, sizeof(why)) == 0);
	CHECK(o.npids == 2 && o.pids[1] == 2 && o.frequency == 19 && o.interval_s == 10);
	CHECK(o.nlabels == 1);
	CHECK_STR(o.labels[0].key, "team");
	CHECK_STR(o.labels[0].value, "db");
	agent_opts_release(&o);
	return 0;
}

/* --tenant: a tenant ID by the server's rule (ember_tenant_valid), and
 * only with --server. */
static int test_agent__opts_tenant(void)
{
	char *ok[] = { "ember-agent", "--server", "http://x", "--tenant", "team-a_1.(eu)", NULL };
	char *bad[] = { "ember-agent", "--server", "http://x", "--tenant", "../a", NULL };
	char *dots[] = { "ember-agent", "--server", "http://x", "--tenant", "..", NULL };
	char *local[] = { "ember-agent", "--output", "/tmp/x", "--tenant", "a", NULL };
	char why[256];
	struct agent_opts o;

	CHECK(agent_opts_parse(5, ok, &o, why, sizeof(why)) == 0);
	CHECK_STR(o.tenant, "team-a_1.(eu)");
	agent_opts_release(&o);
	CHECK(agent_opts_parse(5, bad, &o, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "invalid --tenant '../a': not a tenant ID") != NULL);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(5, dots, &o, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "invalid --tenant '..'") != NULL);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(5, local, &o, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "--tenant needs --server") != NULL);
	agent_opts_release(&o);
	return 0;
}

static int test_agent__opts_off_cpu(void)
{
	char *off[] = { "ember-agent", "--output", "/tmp/x", NULL };
	char *on[] = { "ember-agent", "--output", "/tmp/x", "--off-cpu", NULL };
	char *t[] = { "ember-agent", "--output", "/tmp/x", "--off-cpu",
		      "--off-cpu-threshold", "500", NULL };
	char *zero[] = { "ember-agent", "--output", "/tmp/x", "--off-cpu-threshold", "0", NULL };
	char *maps[] = { "ember-agent", "--output", "/tmp/x", "--off-cpu", "--transport", "maps",
			 NULL };
	char why[256];
	struct agent_opts o;

	CHECK(agent_opts_parse(3, off, &o, why, sizeof(why)) == 0 && o.off_cpu_ns == 0);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(4, on, &o, why, sizeof(why)) == 0);
	CHECK(o.off_cpu_ns == 10000000); /* T = 10 ms */
	agent_opts_release(&o);
	CHECK(agent_opts_parse(6, t, &o, why, sizeof(why)) == 0 && o.off_cpu_ns == 500000);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(5, zero, &o, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "--off-cpu-threshold") != NULL);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(6, maps, &o, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "--off-cpu needs --transport ringbuf") != NULL);
	agent_opts_release(&o);
	return 0;
}

static int test_agent__opts_off_cpu_budget_rseq_only(void)
{
	char *dflt[] = { "ember-agent", "--output", "/tmp/x", "--off-cpu", NULL };
	char *b[] = { "ember-agent", "--output", "/tmp/x", "--off-cpu", "--off-cpu-budget", "50",
		      NULL };
	char *zero[] = { "ember-agent", "--output", "/tmp/x", "--off-cpu-budget", "0", NULL };
	char *rseq[] = { "ember-agent", "--output", "/tmp/x", "--off-cpu", "--off-cpu-rseq-only",
			 NULL };
	char why[256];
	struct agent_opts o;

	CHECK(agent_opts_parse(4, dflt, &o, why, sizeof(why)) == 0 && o.off_cpu_budget == 500);
	CHECK(!o.off_cpu_rseq_only);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(5, rseq, &o, why, sizeof(why)) == 0 && o.off_cpu_rseq_only);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(6, b, &o, why, sizeof(why)) == 0 && o.off_cpu_budget == 50);
	agent_opts_release(&o);
	CHECK(agent_opts_parse(5, zero, &o, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "--off-cpu-budget") != NULL);
	agent_opts_release(&o);
	return 0;
}

/* T follows the kept rate to the budget: raised in proportion past it,
 * halved back (never under t0) below half of it, bounded above. */
static int test_agent__offcpu_t_follows_budget(void)
{
	const uint64_t ms = 1000000;

	CHECK(agent_offcpu_next_t(10 * ms, 10 * ms, 300, 500) == 10 * ms);  /* within */
	CHECK(agent_offcpu_next_t(10 * ms, 10 * ms, 2000, 500) == 40 * ms); /* 4x over */
	CHECK(agent_offcpu_next_t(40 * ms, 10 * ms, 400, 500) == 40 * ms);  /* held */
	CHECK(agent_offcpu_next_t(40 * ms, 10 * ms, 100, 500) == 20 * ms);  /* halved */
	CHECK(agent_offcpu_next_t(15 * ms, 10 * ms, 0, 500) == 10 * ms);    /* to t0 */
	CHECK(agent_offcpu_next_t(30000 * ms, 10 * ms, 1e6, 500) == AGENT_OFFCPU_T_MAX_NS);
	return 0;
}

/* ---- counting the samples ring (sample_agg.c) ------------------------------ */

struct agg_seen {
	uint64_t cpu, off;
	size_t n;
};

static int agg_collect(void *ctx, const struct agent_sample *s)
{
	struct agg_seen *seen = ctx;

	seen->n++;
	if (s->flags & AGENT_STACK_OFF_CPU)
		seen->off += s->count;
	else
		seen->cpu += s->count;
	return 0;
}

/* A record of one user and one kernel frame; off-CPU with weight w after them. */
static size_t agg_record(struct agent_sample_rec *r, bool off, uint64_t w)
{
	memset(r, 0, sizeof(*r));
	r->pid = 42;
	r->flags = off ? AGENT_STACK_OFF_CPU : 0;
	r->nuser = 1;
	r->nkernel = 1;
	r->ips[0] = 0x401000;
	r->ips[1] = 0xffffffff81000000ull;
	r->ips[2] = w;
	return offsetof(struct agent_sample_rec, ips) + (off ? 3 : 2) * sizeof(uint64_t);
}

static int test_agent__agg_off_cpu_weights_summed(void)
{
	struct agent_sample_rec r;
	struct agg_seen seen = { 0 };
	struct agent_agg *g;
	size_t size, n;
	int err;

	g = agent_agg_new(&err);
	CHECK(g != NULL);
	size = agg_record(&r, true, 3000);
	CHECK(agent_agg_add(g, &r, size) == 0);
	size = agg_record(&r, true, 5000); /* the same stack: weights add */
	CHECK(agent_agg_add(g, &r, size) == 0);
	CHECK(agent_agg_add(g, &r, size - sizeof(uint64_t)) == 0); /* no weight: ignored */
	size = agg_record(&r, false, 0); /* the same frames on CPU: its own entry */
	CHECK(agent_agg_add(g, &r, size) == 0);
	CHECK(agent_agg_drain(g, agg_collect, &seen, &n) == 0);
	CHECK(seen.n == 2 && seen.off == 8000 && seen.cpu == 1);
	CHECK(n == 1); /* samples: off-CPU nanoseconds are not samples */
	agent_agg_free(g);
	return 0;
}

/* ---- the profile of an interval (profile_build.c) ---------------------------- */

/* A sample's kernel frames carry the frame type "kernel" (what the UI's
 * Hide kernel folds away); its user frames none. */
static int test_agent__profile_marks_kernel_frames(void)
{
	const uint64_t user[] = { 0x401000 }, kernel[] = { 0xffffffff81001000ull,
							   0xffffffff81002000ull };
	struct agent_sample s = { .pid = 42, .count = 3, .nuser = 1, .nkernel = 2,
				  .user = user, .kernel = kernel };
	struct agent_opts o = { .frequency = 19, .host = "h" };
	struct pprof_profile *p = NULL;
	struct agent_procs *procs;
	struct agent_profile *pr;
	struct ember_buf raw;
	size_t kernels = 0, others = 0;
	int err = 0;

	strcpy(s.comm, "app");
	procs = agent_procs_new(NULL, -1, &err);
	CHECK(procs != NULL);
	pr = agent_profile_new(&(struct agent_profile_opts){ .opts = &o, .procs = procs }, &err);
	CHECK(pr != NULL);
	CHECK(agent_profile_add(pr, &s) == 0);
	CHECK(agent_profile_add(pr, &s) == 0); /* the same frames again: found, not added */
	ember_buf_init(&raw, 1 << 20);
	CHECK(agent_profile_encode(pr, false, &raw) == 0);
	CHECK(pprof_decode(raw.data, raw.len, NULL, &p, NULL, 0) == 0);
	for (size_t i = 0; i < pprof_message(p)->n_location; i++) {
		const char *t = pprof_location_frame_type(p, pprof_message(p)->location[i]);

		if (t && !strcmp(t, "kernel"))
			kernels++;
		else
			others++;
	}
	CHECK(kernels == 2 && others == 1);
	pprof_profile_free(p);
	ember_buf_release(&raw);
	agent_profile_free(pr);
	agent_procs_free(procs);
	return 0;
}

/* An interval whose only samples are off-CPU ones (a service that slept
 * through it, never on a CPU when sampled) still makes a profile to send:
 * its blocked time would be lost otherwise. */
static int test_agent__profile_of_off_cpu_stacks_alone_is_sent(void)
{
	const uint64_t user[] = { 0x401000 };
	struct agent_sample s = { .pid = 42, .count = 50000000, .nuser = 1, .user = user,
				  .flags = AGENT_STACK_OFF_CPU };
	struct agent_opts o = { .frequency = 19, .host = "h", .off_cpu = true };
	struct pprof_profile *p = NULL;
	struct agent_procs *procs;
	struct agent_profile *pr;
	struct ember_buf raw;
	int err = 0;

	strcpy(s.comm, "sleeper");
	procs = agent_procs_new(NULL, -1, &err);
	CHECK(procs != NULL);
	pr = agent_profile_new(&(struct agent_profile_opts){ .opts = &o, .procs = procs }, &err);
	CHECK(pr != NULL);
	CHECK_INT(agent_profile_samples(pr), ==, 0);
	CHECK(agent_profile_add(pr, &s) == 0);
	CHECK_INT(agent_profile_samples(pr), ==, 1);
	ember_buf_init(&raw, 1 << 20);
	CHECK(agent_profile_encode(pr, false, &raw) == 0);
	CHECK(pprof_decode(raw.data, raw.len, NULL, &p, NULL, 0) == 0);
	CHECK_INT(pprof_message(p)->n_sample, ==, 1);
	CHECK_INT(pprof_message(p)->sample[0]->n_value, ==, 3);
	CHECK(pprof_message(p)->sample[0]->value[2] == 50000000);
	pprof_profile_free(p);
	ember_buf_release(&raw);
	agent_profile_free(pr);
	agent_procs_free(procs);
	return 0;
}

/* ---- service identity (service_id.c) and --label ---------------------------- */

#define DOCKER_ID "3f4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081"
#define POD_UID "0d4c3a2b-1e5f-4a6b-9c8d-7e6f5a4b3c2d"
#define POD_UID_ "0d4c3a2b_1e5f_4a6b_9c8d_7e6f5a4b3c2d"

/* Real-looking /proc/PID/cgroup paths and the service_name each gives. */
static int test_agent__service_name_from_cgroup_paths(void)
{
	static const struct {
		const char *cgroup, *exe, *want;
	} t[] = {
		{ "/system.slice/nginx.service", "/usr/sbin/nginx", "nginx" },
		{ "/system.slice/ember-test-42.scope", "/bin/sleep", "ember-test-42" },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/worker.service",
		  "/usr/bin/python3.11", "worker" },
		{ "/user.slice/user-1000.slice/user@1000.service/init.scope", "/lib/systemd/systemd",
		  "init" },
		{ "/user.slice/user-1000.slice/session-3.scope", "/usr/bin/bash", "bash" },
		{ "/system.slice/docker-" DOCKER_ID ".scope", "/app/server", "3f4e5a6b7c8d" },
		{ "/docker/" DOCKER_ID, "/app/server", "3f4e5a6b7c8d" },
		{ "/system.slice/cri-containerd-" DOCKER_ID ".scope", "/app/server", "3f4e5a6b7c8d" },
		{ "/machine.slice/libpod-" DOCKER_ID ".scope/container", "/app/server",
		  "3f4e5a6b7c8d" },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_UID_
		  ".slice/cri-containerd-" DOCKER_ID ".scope", "/app/server", POD_UID },
		{ "/kubepods.slice/kubepods-pod" POD_UID_ ".slice/crio-" DOCKER_ID ".scope",
		  "/app/server", POD_UID },
		{ "/kubepods/besteffort/pod" POD_UID "/" DOCKER_ID, "/app/server", POD_UID },
		{ "/kubepods/besteffort/pod" POD_UID "/crio-" DOCKER_ID, "/app/server", POD_UID },
		{ "/crio-" DOCKER_ID, "/app/server", "3f4e5a6b7c8d" },
		{ "/system.slice/docker-" DOCKER_ID ".scope/init", "/sbin/tini", "3f4e5a6b7c8d" },
		/* the UID's separators mixed, as the OpenTelemetry profiler's table has one */
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
		  "0d4c3a2b_1e5f_4a6b-9c8d_7e6f5a4b3c2d.slice/cri-containerd-" DOCKER_ID ".scope",
		  "/app/server", POD_UID },
		{ "/../../user.slice/user-501.slice/session-3.scope", "/usr/bin/zsh", "zsh" },
		{ "/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal"
		  ".slice/vte-spawn-868f9513-eee8-457d-8e36-1b37ae8ae622.scope", "/usr/bin/bash",
		  "bash" },
		{ "/system.slice/run-r3f1a2b.scope", "/usr/bin/stress", "stress" },
		{ "/system.slice/nginx.service", "/usr/sbin/nginx (deleted)", "nginx" },
		{ "/", "/usr/sbin/nginx (deleted)", "nginx" },
		{ "/", "/", "kworker/0:1" },
		{ "/", "/usr/bin/python3.11", "python3.11" },
		{ "", "", "kworker/0:1" },
		/* near misses: no container without 64 hex digits, no pod outside kubepods */
		{ "/system.slice/docker-3f4e5a6b.scope", "/x/y", "docker-3f4e5a6b" },
		{ "/pod" POD_UID "/app", "/x/y", "y" },
		{ "/system.slice/crio-conmon-" DOCKER_ID ".scope", "/usr/bin/conmon",
		  "crio-conmon-" DOCKER_ID },
	};
	struct agent_service_id id;
	char name[128];

	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		agent_service_parse_cgroup(t[i].cgroup, &id);
		agent_service_name(&id, t[i].exe, "kworker/0:1", name, sizeof(name));
		CHECK_STR(name, t[i].want);
	}
	agent_service_parse_cgroup("/kubepods.slice/kubepods-pod" POD_UID_
				   ".slice/docker-" DOCKER_ID ".scope", &id);
	CHECK_STR(id.container_id, "3f4e5a6b7c8d");
	CHECK_STR(id.pod_uid, POD_UID);
	return 0;
}

/* A pod named by the kubelet's log directory (NS_POD_UID/): its workload,
 * the controller's suffixes dropped; a symlinked directory is not read. */
static int test_agent__service_pod_workload_from_log_dir(void)
{
	static const char *const entries[][2] = {
		{ "shop_checkout-7d9f8b6c5d-x2x4z_", "checkout" },	/* Deployment */
		{ "kube-system_kube-proxy-b7xkq_", "kube-proxy" },	/* DaemonSet */
		{ "db_postgres-0_", "postgres-0" },			/* StatefulSet */
		{ "web_static-site_", "static-site" },		/* a bare pod */
		{ "web_backend-abcde_", "backend-abcde" },	/* vowels: no suffix */
	};
	char dir[] = "/tmp/ember-agent-pods-XXXXXX", path[400], link[400], name[128];
	char uid[40];
	struct agent_service_id id;
	int i;

	CHECK(mkdtemp(dir) != NULL);
	for (i = 0; i < (int)(sizeof(entries) / sizeof(*entries)); i++) {
		snprintf(uid, sizeof(uid), "0d4c3a2b-1e5f-4a6b-9c8d-7e6f5a4b3c%02d", i);
		snprintf(path, sizeof(path), "%s/%s%s", dir, entries[i][0], uid);
		CHECK(mkdir(path, 0755) == 0);
		CHECK(agent_service_pod_workload(dir, uid, name, sizeof(name)) == 0);
		CHECK_STR(name, entries[i][1]);
	}
	CHECK(agent_service_pod_workload(dir, "0d4c3a2b-1e5f-4a6b-9c8d-7e6f5a4b3c99", name,
					 sizeof(name)) == -ENOENT);
	agent_service_parse_cgroup("/kubepods/burstable/pod0d4c3a2b-1e5f-4a6b-9c8d-7e6f5a4b3c00/"
				   DOCKER_ID, &id);
	CHECK(agent_service_pod_workload(dir, id.pod_uid, id.workload, sizeof(id.workload)) == 0);
	agent_service_name(&id, "/app/server", "server", name, sizeof(name));
	CHECK_STR(name, "checkout");
	snprintf(link, sizeof(link), "%s.link", dir);
	CHECK(symlink(dir, link) == 0);
	CHECK(agent_service_pod_workload(link, id.pod_uid, name, sizeof(name)) == -ELOOP ||
	      agent_service_pod_workload(link, id.pod_uid, name, sizeof(name)) == -ENOTDIR);
	CHECK(unlink(link) == 0);
	for (i = 0; i < (int)(sizeof(entries) / sizeof(*entries)); i++) {
		snprintf(path, sizeof(path), "%s/%s0d4c3a2b-1e5f-4a6b-9c8d-7e6f5a4b3c%02d", dir,
			 entries[i][0], i);
		CHECK(rmdir(path) == 0);
	}
	CHECK(rmdir(dir) == 0);
	return 0;
}

/* --label K=V for all, 'service_name=S:K=V:K=V' for S; malformed ones refused. */
static int test_agent__label_per_service(void)
{
	char *ok[] = { "ember-agent", "--output", "/tmp/x", "--label", "team=db", "--label",
		       "service_name=checkout:version=2.4:tier=web", "--label", "url=a:b" };
	static const char *const bad[][2] = {
		{ "version", "not K=V" },
		{ "1x=2", "not [a-zA-Z_]" },
		{ "x-y=2", "not [a-zA-Z_]" },
		{ "x=", "the value is empty" },
		{ "host=h", "--host" },
		{ "service_name=:x=1", "no service name" },
		{ "service_name=a:x=1:", "not K=V" },
		{ "service_name=a:service_name=b", "given twice" },
		{ "service_name=a:x", "not K=V" },
		{ "service_name=a:x=1:x=2", "given twice" },
	};
	struct agent_opts o;
	char why[256];

	CHECK(agent_opts_parse(9, ok, &o, why, sizeof(why)) == 0);
	CHECK(o.nlabels == 4);
	CHECK(!o.labels[0].service && agent_label_applies(&o.labels[0], "anything"));
	CHECK_STR(o.labels[1].key, "version");
	CHECK_STR(o.labels[1].value, "2.4");
	CHECK_STR(o.labels[2].key, "tier");
	CHECK_STR(o.labels[2].service, "checkout");
	CHECK(agent_label_applies(&o.labels[2], "checkout"));
	CHECK(!agent_label_applies(&o.labels[2], "checkout2"));
	CHECK_STR(o.labels[3].value, "a:b"); /* a colon in a plain label is its value's */
	agent_opts_release(&o);
	{
		char *twice[] = { "ember-agent", "--output", "/tmp/x", "--label", "team=a",
				  "--label", "team=b" };

		CHECK(agent_opts_parse(7, twice, &o, why, sizeof(why)) == -EINVAL);
		CHECK(strstr(why, "'team=b': given twice") != NULL);
		agent_opts_release(&o);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char *argv[] = { "ember-agent", "--output", "/tmp/x", "--label", (char *)bad[i][0] };

		CHECK(agent_opts_parse(5, argv, &o, why, sizeof(why)) == -EINVAL);
		CHECK(strstr(why, "invalid --label") && strstr(why, bad[i][1]));
		agent_opts_release(&o);
	}
	return 0;
}

/* ---- the table manager (tables.c) ---------------------------------------- */

/* Collect the worker's results until none is pending (30 s at most). */
static void tables_settle(struct agent_tables *t, void (*ready)(void *, struct agent_file *),
			  void *ctx)
{
	uint64_t end = ember_monotonic_ns() + 30000000000ull;
	struct pollfd pfd = { .fd = agent_tables_fd(t), .events = POLLIN };

	while (agent_tables_pending(t) && ember_monotonic_ns() < end)
		if (poll(&pfd, 1, 100) > 0)
			agent_tables_collect(t, ready, ctx);
}

static size_t tables_total(const struct agent_tables *t, enum agent_table_source s,
			   size_t *bytes, size_t *unloads)
{
	size_t counts[AGENT_TABLE_SOURCE_COUNT];

	agent_tables_counts(t, counts, bytes, unloads);
	return counts[s];
}

static struct agent_file *acquire_path(struct agent_tables *t, const char *path, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct agent_file *f;

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	f = agent_tables_acquire(t, "inode-test", fd, path, path, err);
	close(fd);
	return f;
}

/* One entry a build ID, whatever the path or device:inode it came by;
 * with no server, no cache and no compiling, the worker settles for frame
 * pointers and says why; not an ELF is -ENOEXEC; an idle file is
 * forgotten by the gc once idle long enough, not before. */
static int test_agent__tables_file_by_build_id(void)
{
	struct agent_tables_opts o = { .local_compile = false };
	struct agent_table_maps none = { 0 };
	char text[] = "/tmp/ember-agent-text-XXXXXX";
	struct agent_elf_info e;
	struct agent_file *f1, *f2;
	struct agent_tables *t;
	size_t bytes, unloads;
	uint64_t idle;
	int fd, err = 0;

	fd = open(unit_fixture("c_O2_pie"), O_RDONLY);
	CHECK(fd >= 0 && agent_elf_info_read(fd, &e) == 0);
	close(fd);
	t = agent_tables_new(&o, &none, NULL, &err);
	CHECK(t != NULL);
	f1 = acquire_path(t, unit_fixture("c_O2_pie"), &err);
	CHECK(f1 != NULL);
	f2 = acquire_path(t, unit_fixture("c_O2_pie"), &err);
	CHECK(f2 == f1 && f1->refs == 2);
	CHECK_STR(f1->key, e.build_id_hex);
	fd = mkstemp(text);
	CHECK(fd >= 0 && write(fd, "not an ELF\n", 11) == 11);
	close(fd);
	CHECK(acquire_path(t, text, &err) == NULL && err == -ENOEXEC);
	unlink(text);
	tables_settle(t, NULL, NULL);
	CHECK_INT(agent_tables_pending(t), ==, 0);
	CHECK(f1->source == AGENT_TABLE_FRAME_POINTERS && !f1->loaded);
	CHECK(strstr(f1->why, "local compilation is off") != NULL);
	CHECK_INT(tables_total(t, AGENT_TABLE_FRAME_POINTERS, &bytes, &unloads), ==, 1);
	agent_tables_release(t, f1);
	agent_tables_gc(t, ember_monotonic_ns() + 1);
	CHECK_INT(tables_total(t, AGENT_TABLE_FRAME_POINTERS, &bytes, &unloads), ==, 1);
	agent_tables_release(t, f2);
	idle = f2->idle_since_ns;
	agent_tables_gc(t, idle); /* idle since exactly then: not yet */
	CHECK_INT(tables_total(t, AGENT_TABLE_FRAME_POINTERS, &bytes, &unloads), ==, 1);
	agent_tables_gc(t, idle + 1);
	CHECK_INT(tables_total(t, AGENT_TABLE_FRAME_POINTERS, &bytes, &unloads), ==, 0);
	CHECK_INT(unloads, ==, 0); /* nothing was loaded */
	agent_tables_free(t);
	return 0;
}

static void count_ready(void *ctx, struct agent_file *f)
{
	(void)f;
	(*(int *)ctx)++;
}

/* No server: the table is compiled here, loaded into the maps (the
 * processes told once), and written to --cache-dir; a second manager on
 * the same cache loads the cached one.  Unused, both are unloaded and the
 * maps are empty again. */
static int test_agent__tables_compile_then_cache(void)
{
	char dir[] = "/tmp/ember-agent-cache-XXXXXX", path[256];
	struct agent_tables_opts o = { .local_compile = true, .cache_dir = dir };
	enum agent_table_source want[2] = { AGENT_TABLE_COMPILED, AGENT_TABLE_CACHE };
	struct ember_buf image;
	struct test_maps m;
	int err = 0, rc;

	rc = test_maps_new(&m);
	if (rc)
		return rc;
	CHECK(mkdtemp(dir) != NULL);
	ember_buf_init(&image, 64 << 20);
	CHECK(unwind_table_compile(unit_fixture("c_O2_pie"), NULL, NULL, &image) == 0);
	for (int round = 0; round < 2; round++) {
		struct agent_tables *t = agent_tables_new(&o, &m.t, NULL, &err);
		struct agent_file *f;
		size_t bytes, unloads;
		char *cached;
		size_t len;
		int ready = 0;

		CHECK(t != NULL);
		f = acquire_path(t, unit_fixture("c_O2_pie"), &err);
		CHECK(f != NULL && agent_tables_pending(t) == 1);
		tables_settle(t, count_ready, &ready);
		CHECK_INT(ready, ==, 1);
		CHECK(f->loaded && f->source == want[round]);
		CHECK(round || !strcmp(f->why, "no --server"));
		CHECK(f->table.file_id == 1);
		CHECK_INT(tables_total(t, want[round], &bytes, &unloads), ==, 1);
		CHECK_INT(bytes, >, 0);
		snprintf(path, sizeof(path), "%s/%s.unwind", dir, f->elf.build_id_hex);
		cached = unit_slurp(path, &len);
		CHECK(cached && len == image.len && !memcmp(cached, image.data, len));
		free(cached);
		agent_tables_release(t, f);
		agent_tables_gc(t, ember_monotonic_ns() + 1);
		CHECK_INT(tables_total(t, want[round], &bytes, &unloads), ==, 0);
		CHECK_INT(unloads, ==, 1);
		CHECK_INT(m.t.data_free.used, ==, 0);
		CHECK_INT(m.t.rules_free.used, ==, 0);
		agent_tables_free(t);
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK(system(path) == 0);
	ember_buf_release(&image);
	test_maps_release(&m);
	return 0;
}

/* ---- processes (procs.c) ------------------------------------------------- */

/* A child of this test with the fixture's executable segment mapped
 * (PROT_EXEC, the file's offset of that segment), named "ember-kid"; it
 * unmaps it when told (kid_unmap). */
struct kid {
	pid_t pid;
	uint64_t addr, offset;
	int cmd, ack; /* a byte to the child: unmap; one back: done */
};

static int kid_start(const char *path, struct kid *k)
{
	struct agent_elf_info e;
	int fd = open(path, O_RDONLY | O_CLOEXEC), pipefd[2], cmd[2];
	size_t i;
	char c;

	if (fd < 0 || agent_elf_info_read(fd, &e) || pipe(pipefd) || pipe(cmd))
		return -1;
	for (i = 0; i < e.nloads && !e.loads[i].exec; i++)
		;
	if (i == e.nloads)
		return -1;
	k->offset = e.loads[i].offset & ~0xfffull;
	k->pid = fork();
	if (k->pid == 0) {
		void *a = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
			       (off_t)k->offset);
		uint64_t addr = a == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)a;

		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlives a failed case */
		prctl(PR_SET_NAME, "ember-kid");
		if (write(pipefd[1], &addr, sizeof(addr)) != sizeof(addr))
			_exit(1);
		if (read(cmd[0], &c, 1) == 1 && !munmap(a, 4096) && write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fd);
	close(pipefd[1]);
	close(cmd[0]);
	k->cmd = cmd[1];
	k->ack = pipefd[0];
	if (k->pid < 0 || read(k->ack, &k->addr, sizeof(k->addr)) != sizeof(k->addr))
		k->addr = 0;
	return k->addr ? 0 : -1;
}

/* The child unmaps its mapping of the fixture: 0 once done. */
static int kid_unmap(struct kid *k)
{
	char c = 'u';

	return write(k->cmd, &c, 1) == 1 && read(k->ack, &c, 1) == 1 ? 0 : -1;
}

static void kid_stop(struct kid *k)
{
	if (k->pid > 0) {
		kill(k->pid, SIGKILL);
		waitpid(k->pid, NULL, 0);
		k->pid = 0;
		close(k->cmd);
		close(k->ack);
	}
}

/* The BPF procs map as profile.bpf.c declares it, or -1 where this
 * process may not create one (the cases then skip the BPF entry). */
static int procs_map_new(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, hm, .map_flags = BPF_F_NO_PREALLOC);

	return bpf_map_create(BPF_MAP_TYPE_HASH, "procs", sizeof(uint32_t),
			      sizeof(struct agent_proc), 64, &hm);
}

/* The child's mapping as the agent reads it: where, which file (by the
 * fixture's build ID), the bias the PT_LOADs give, its labels; its BPF
 * entry says the same (file_id 0: no table loaded); a second scan keeps
 * the file with one reference. */
static int test_agent__procs_scan_reads_a_child(void)
{
	struct agent_tables_opts o = { .local_compile = false };
	struct agent_table_maps none = { 0 };
	struct agent_elf_info e;
	struct agent_tables *t;
	struct agent_procs *p;
	struct agent_process *pr;
	struct agent_proc_map *m;
	struct agent_proc *v;
	struct kid k = { 0 };
	char exe[512], want_path[4096];
	uint64_t vaddr;
	uint32_t key;
	int fd = procs_map_new(), err = 0, want;
	ssize_t n;

	want = fd >= 0 ? 0 : -EBADF;
	if (fd < 0)
		fprintf(stderr, "no BPF map (%s): the BPF entry is not checked\n", strerror(errno));
	CHECK(realpath(unit_fixture("c_O2_pie"), want_path) != NULL);
	CHECK(kid_start(want_path, &k) == 0);
	t = agent_tables_new(&o, &none, NULL, &err);
	p = t ? agent_procs_new(t, fd, &err) : NULL;
	CHECK(p != NULL);
	CHECK_INT(agent_procs_scan(p, k.pid), ==, want);
	pr = agent_procs_find(p, k.pid);
	CHECK(pr != NULL && pr->scanned && !pr->exited);
	CHECK_STR(pr->comm, "ember-kid");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	CHECK_STR(pr->exe, exe);
	CHECK_INT(pr->nspid, ==, k.pid);
	m = agent_process_mapping(pr, k.addr + 100);
	CHECK(m != NULL && m->start == k.addr && m->end == k.addr + 4096);
	CHECK(m->offset == k.offset && m->file != NULL);
	CHECK_STR(m->path, want_path);
	err = open(want_path, O_RDONLY);
	CHECK(err >= 0 && agent_elf_info_read(err, &e) == 0);
	close(err);
	CHECK_STR(m->file->elf.build_id_hex, e.build_id_hex);
	CHECK(agent_elf_offset_to_vaddr(&e, k.offset, &vaddr) == 0);
	CHECK(m->bias == k.addr - vaddr);
	CHECK(agent_process_mapping(pr, 0x10) == NULL);
	if (fd >= 0) {
		v = calloc(1, sizeof(*v));
		key = (uint32_t)k.pid;
		CHECK(v && bpf_map_lookup_elem(fd, &key, v) == 0);
		CHECK_INT(v->nmaps, ==, pr->nmaps < AGENT_PROC_MAPPINGS ? pr->nmaps
									 : AGENT_PROC_MAPPINGS);
		CHECK_INT(v->generation, ==, 1);
		for (n = 0; n < (ssize_t)v->nmaps && v->maps[n].start != k.addr; n++)
			;
		CHECK(n < (ssize_t)v->nmaps);
		CHECK(v->maps[n].end == k.addr + 4096 && v->maps[n].bias == m->bias);
		CHECK(v->maps[n].file_id == 0);
		free(v);
	}
	CHECK_INT(agent_procs_scan(p, k.pid), ==, want); /* again: one reference still */
	m = agent_process_mapping(pr, k.addr);
	CHECK(m != NULL && m->file != NULL && m->file->refs == 1);
	CHECK_INT(pr->generation, ==, 2);
	kid_stop(&k);
	agent_procs_free(p);
	agent_tables_free(t);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* A process that is gone: its scan says so and marks it exited; it is
 * kept for the profile until reaped past its exit, then its file has no
 * reference left and the table manager's gc forgets it.  An exec after
 * the scan drops the mappings read before it (and the BPF entry); one
 * before the scan does not. */
static int test_agent__procs_exec_exit_reap(void)
{
	struct agent_tables_opts o = { .local_compile = false };
	struct agent_table_maps none = { 0 };
	struct agent_tables *t;
	struct agent_procs *p;
	struct agent_process *pr;
	struct agent_file *f;
	struct agent_proc *v = calloc(1, sizeof(*v));
	struct kid k = { 0 };
	size_t bytes, unloads;
	uint32_t key;
	int fd = procs_map_new(), err = 0;

	CHECK(v != NULL);
	CHECK(kid_start(unit_fixture("c_O2_pie"), &k) == 0);
	key = (uint32_t)k.pid;
	t = agent_tables_new(&o, &none, NULL, &err);
	p = t ? agent_procs_new(t, fd, &err) : NULL;
	CHECK(p != NULL);
	agent_procs_scan(p, k.pid);
	pr = agent_procs_find(p, k.pid);
	CHECK(pr != NULL && pr->scanned && pr->nmaps > 0);
	agent_procs_exec(p, k.pid, pr->scan_ns - 1); /* the image we read */
	CHECK(pr->scanned && pr->nmaps > 0);
	agent_procs_exec(p, k.pid, pr->scan_ns + 1);
	CHECK(!pr->scanned && pr->nmaps == 0 && pr->maps == NULL);
	CHECK(fd < 0 || bpf_map_lookup_elem(fd, &key, v) != 0); /* deleted */
	agent_procs_scan(p, k.pid);
	f = agent_process_mapping(pr, k.addr)->file;
	CHECK(f != NULL && f->refs == 1);
	kid_stop(&k);
	CHECK(agent_procs_scan(p, key) == -ENOENT);
	CHECK(pr->exited && pr->exit_ns > pr->scan_ns);
	CHECK(agent_procs_find(p, (pid_t)key) == pr && agent_procs_count(p) == 1);
	agent_procs_reap(p, pr->exit_ns); /* exited exactly then: kept */
	CHECK_INT(agent_procs_count(p), ==, 1);
	agent_procs_reap(p, ember_monotonic_ns() + 1);
	CHECK_INT(agent_procs_count(p), ==, 0);
	CHECK(agent_procs_find(p, (pid_t)key) == NULL);
	CHECK(fd < 0 || bpf_map_lookup_elem(fd, &key, v) != 0); /* deleted */
	CHECK(f->refs == 0);
	agent_tables_gc(t, ember_monotonic_ns() + 1);
	CHECK_INT(tables_total(t, AGENT_TABLE_FRAME_POINTERS, &bytes, &unloads), ==, 0);
	agent_procs_free(p);
	agent_tables_free(t);
	free(v);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* Code unmapped before a rescan (V8 frees its code space before it
 * exits): the samples of the interval taken before the rescan still find
 * the mapping, its file kept, until the interval's reap drops it. */
static int test_agent__procs_rescan_keeps_unmapped_until_reap(void)
{
	struct agent_tables_opts o = { .local_compile = false };
	struct agent_table_maps none = { 0 };
	struct agent_tables *t;
	struct agent_procs *p;
	struct agent_process *pr;
	struct agent_proc_map *m;
	struct agent_file *f;
	struct kid k = { 0 };
	int err = 0;

	CHECK(kid_start(unit_fixture("c_O2_pie"), &k) == 0);
	t = agent_tables_new(&o, &none, NULL, &err);
	p = t ? agent_procs_new(t, -1, &err) : NULL;
	CHECK(p != NULL);
	agent_procs_scan(p, k.pid);
	pr = agent_procs_find(p, k.pid);
	m = pr ? agent_process_mapping(pr, k.addr + 100) : NULL;
	CHECK(m != NULL && m->file != NULL && m->file->refs == 1);
	f = m->file;
	CHECK(kid_unmap(&k) == 0);
	agent_procs_scan(p, k.pid);
	CHECK_INT(pr->nretired, ==, 1);
	m = agent_process_mapping(pr, k.addr + 100);
	CHECK(m != NULL && m->start == k.addr && m->end == k.addr + 4096 && m->file == f);
	CHECK_INT(f->refs, ==, 1); /* moved, not taken again */
	agent_procs_reap(p, 0); /* the interval's end: nothing exited */
	CHECK_INT(agent_procs_count(p), ==, 1);
	CHECK(agent_process_mapping(pr, k.addr + 100) == NULL);
	CHECK_INT(pr->nretired, ==, 0);
	CHECK_INT(f->refs, ==, 0);
	kid_stop(&k);
	agent_procs_free(p);
	agent_tables_free(t);
	return 0;
}

/* ---- pushing (push.c) ---------------------------------------------------- */

/*
 * An HTTP/1.1 server on 127.0.0.1 in a thread of this test: it answers
 * each request with the next status of its script (200 once the script
 * is done; a 401 with WWW-Authenticate when challenge is set) and keeps
 * what came: the request line, the Content-Encoding, Authorization and
 * X-Scope-OrgID headers, the body.
 */
#define FAKE_MAX 8

struct fake_req {
	char line[128], encoding[32], auth[64], tenant[64];
	char *body;
	size_t len;
};

struct fake_server {
	int fd, port;
	pthread_t thread;
	int script[FAKE_MAX];
	size_t nscript;
	bool challenge;
	struct fake_req req[FAKE_MAX];
	atomic_size_t nreq;
};

static void header_value(const char *head, const char *name, char *out, size_t size)
{
	const char *h = strcasestr(head, name);

	out[0] = '\0';
	if (h)
		snprintf(out, size, "%.*s", (int)strcspn(h + strlen(name), "\r\n"),
			 h + strlen(name));
}

/* One request on c, answered: 0, or -1 when the peer closed. */
static int fake_serve_one(struct fake_server *s, int c)
{
	char head[8192], *end = NULL, reply[256];
	size_t got = 0, i = atomic_load(&s->nreq), len, have;
	struct fake_req *r = &s->req[i < FAKE_MAX ? i : FAKE_MAX - 1];
	int status = i < s->nscript ? s->script[i] : 200;
	ssize_t n;

	while (!end && got < sizeof(head) - 1 && (n = read(c, head + got, sizeof(head) - 1 - got)) > 0) {
		got += (size_t)n;
		head[got] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	if (!end)
		return -1;
	*end = '\0';
	free(r->body);
	snprintf(r->line, sizeof(r->line), "%.*s", (int)strcspn(head, "\r\n"), head);
	header_value(head, "\r\nContent-Encoding: ", r->encoding, sizeof(r->encoding));
	header_value(head, "\r\nAuthorization: ", r->auth, sizeof(r->auth));
	header_value(head, "\r\nX-Scope-OrgID: ", r->tenant, sizeof(r->tenant));
	{
		char cl[32];

		header_value(head, "\r\nContent-Length: ", cl, sizeof(cl));
		len = (size_t)strtoull(cl, NULL, 10);
	}
	r->body = malloc(len + 1);
	have = got - (size_t)(end + 4 - head);
	memcpy(r->body, end + 4, have < len ? have : len);
	while (have < len && (n = read(c, r->body + have, len - have)) > 0)
		have += (size_t)n;
	r->len = have;
	snprintf(reply, sizeof(reply),
		 "HTTP/1.1 %d X\r\n%sContent-Length: 9\r\nConnection: close\r\n\r\nscripted\n",
		 status, status == 401 && s->challenge ? "WWW-Authenticate: Bearer\r\n" : "");
	atomic_fetch_add(&s->nreq, 1); /* before the client can see the answer */
	return write(c, reply, strlen(reply)) < 0 ? -1 : 0;
}

static void *fake_main(void *arg)
{
	struct fake_server *s = arg;
	int c;

	while ((c = accept(s->fd, NULL, NULL)) >= 0) {
		fake_serve_one(s, c);
		close(c);
	}
	return NULL;
}

static int fake_start(struct fake_server *s, const int *script, size_t n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	memset(s, 0, sizeof(*s));
	if (n)
		memcpy(s->script, script, n * sizeof(*script));
	s->nscript = n;
	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) || listen(s->fd, 8) ||
	    getsockname(s->fd, (struct sockaddr *)&a, &al))
		return -1;
	s->port = ntohs(a.sin_port);
	return pthread_create(&s->thread, NULL, fake_main, s) ? -1 : 0;
}

static void fake_stop(struct fake_server *s)
{
	shutdown(s->fd, SHUT_RDWR);
	close(s->fd);
	pthread_join(s->thread, NULL);
	for (size_t i = 0; i < FAKE_MAX; i++)
		free(s->req[i].body);
}

/* A raw (uncompressed) pprof profile with one sample of value v. */
static int small_profile(int64_t v, struct ember_buf *out)
{
	struct pprof_profile *p = pprof_profile_new();
	struct pprof_mapping_desc md = { .start = 0x1000, .limit = 0x2000 };
	uint64_t mid = 0, lid = 0;
	int err = p ? 0 : -ENOMEM;

	if (!err)
		err = pprof_add_sample_type(p, "samples", "count");
	if (!err)
		err = pprof_add_mapping(p, &md, &mid);
	if (!err)
		err = pprof_add_location(p, mid, 0x1234, &lid);
	if (!err)
		err = pprof_add_sample(p, &lid, 1, &v, 1);
	ember_buf_init(out, 1 << 20);
	if (!err)
		err = pprof_encode(p, false, out);
	pprof_profile_free(p);
	return err;
}

/* A small profile of value v queued on p: 0 or the queue's error. */
static int enqueue_small(struct agent_push *p, int64_t v)
{
	struct ember_buf raw;
	int err = small_profile(v, &raw);

	if (!err)
		err = agent_push_enqueue(p, &raw);
	ember_buf_release(&raw);
	return err;
}

/* The value of the one sample in a request's body, decoded as the server
 * does (Content-Encoding undone, then pprof); -1 when it does not decode. */
static int64_t body_sample_value(const struct fake_req *r)
{
	struct ember_buf raw;
	struct pprof_profile *p = NULL;
	int64_t v = -1;

	ember_buf_init(&raw, 1 << 20);
	if (!pprof_decompress(r->body, r->len, &raw, NULL, 0) &&
	    !pprof_decode(raw.data, raw.len, NULL, &p, NULL, 0) &&
	    pprof_message(p)->n_sample == 1 && pprof_message(p)->sample[0]->n_value == 1)
		v = pprof_message(p)->sample[0]->value[0];
	pprof_profile_free(p);
	ember_buf_release(&raw);
	return v;
}

static struct agent_push *push_to(struct fake_server *s, struct agent_http **h, bool gzip,
				  size_t cap)
{
	char url[64];
	int err = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s->port);
	*h = agent_http_new("sekrit");
	return *h ? agent_push_new(*h, url, NULL, gzip, cap, &err) : NULL;
}

/* What a push sends: POST /api/v1/profiles, the bearer token, zstd or
 * gzip as Content-Encoding says, and a body that decodes back to the
 * profile queued. */
static int test_agent__push_body_decodes_back(void)
{
	for (int gzip = 0; gzip < 2; gzip++) {
		struct fake_server s;
		struct agent_http *h;
		struct agent_push *p;
		struct agent_push_stats st;

		CHECK(fake_start(&s, NULL, 0) == 0);
		p = push_to(&s, &h, gzip, 1 << 20);
		CHECK(p != NULL && enqueue_small(p, 41 + gzip) == 0);
		CHECK_INT(agent_push_run(p, 0), ==, -1);
		CHECK_INT(atomic_load(&s.nreq), ==, 1);
		CHECK_STR(s.req[0].line, "POST /api/v1/profiles HTTP/1.1");
		CHECK_STR(s.req[0].encoding, gzip ? "gzip" : "zstd");
		CHECK_STR(s.req[0].auth, "Bearer sekrit");
		CHECK_INT(body_sample_value(&s.req[0]), ==, 41 + gzip);
		agent_push_stats(p, &st);
		CHECK(st.sent == 1 && st.queued == 0 && st.last_status == 200);
		agent_push_free(p);
		agent_http_free(h);
		fake_stop(&s);
	}
	return 0;
}

/* A 503 is retried after 1 s, then 2 s (nothing is sent before it is
 * due), a 413 drops the profile and counts it refused, and the next one
 * goes out at once; a server nobody answers for backs off the same. */
static int test_agent__push_backoff_and_refusal(void)
{
	static const int script[] = { 503, 503, 413, 200 };
	struct fake_server s;
	struct agent_http *h;
	struct agent_push *p;
	struct agent_push_stats st;

	CHECK(fake_start(&s, script, 4) == 0);
	p = push_to(&s, &h, false, 1 << 20);
	CHECK(p != NULL && enqueue_small(p, 1) == 0 && enqueue_small(p, 2) == 0);
	CHECK_INT(agent_push_run(p, 10000), ==, 1000);
	CHECK_INT(agent_push_run(p, 10400), ==, 600);
	CHECK_INT(atomic_load(&s.nreq), ==, 1);
	CHECK_INT(agent_push_run(p, 11000), ==, 2000);
	CHECK_INT(agent_push_run(p, 13000), ==, -1);
	CHECK_INT(atomic_load(&s.nreq), ==, 4);
	CHECK_INT(body_sample_value(&s.req[2]), ==, 1); /* refused */
	CHECK_INT(body_sample_value(&s.req[3]), ==, 2);
	agent_push_stats(p, &st);
	CHECK(st.sent == 1 && st.refused == 1 && st.failed_attempts == 2);
	CHECK(st.backoff_ms == 0 && st.last_status == 200 && st.queued == 0);
	CHECK(agent_push_refusal(p) == NULL);
	agent_push_free(p);
	fake_stop(&s);
	/* the port is closed now: connection refused, the same backoff */
	p = agent_push_new(h, "http://127.0.0.1:1", NULL, false, 1 << 20, &(int){ 0 });
	CHECK(p != NULL && enqueue_small(p, 3) == 0);
	CHECK_INT(agent_push_run(p, 0), ==, 1000);
	agent_push_stats(p, &st);
	CHECK(st.failed_attempts == 1 && st.last_status == 0 && st.queued == 1);
	agent_push_free(p);
	agent_http_free(h);
	return 0;
}

/* A 401 (or 400, 403) is a refusal no later push changes: the reason is
 * kept for the agent to stop on, and the queue rests. */
static int test_agent__push_permanent_refusal_stops(void)
{
	static const int script[] = { 401, 200 };
	struct fake_server s;
	struct agent_http *h;
	struct agent_push *p;

	CHECK(fake_start(&s, script, 2) == 0);
	p = push_to(&s, &h, false, 1 << 20);
	CHECK(p != NULL && enqueue_small(p, 1) == 0 && enqueue_small(p, 2) == 0);
	CHECK(agent_push_refusal(p) == NULL);
	CHECK_INT(agent_push_run(p, 10000), ==, -1);
	CHECK_INT(atomic_load(&s.nreq), ==, 1);
	CHECK(agent_push_refusal(p) != NULL && strstr(agent_push_refusal(p), "HTTP 401"));
	agent_push_free(p);
	fake_stop(&s);
	agent_http_free(h);
	return 0;
}

/* --tenant: every push and the start-up check carry X-Scope-OrgID;
 * without it, no push does. */
static int test_agent__push_names_its_tenant(void)
{
	for (int named = 0; named < 2; named++) {
		struct fake_server s;
		struct agent_http *h = agent_http_new("sekrit");
		struct agent_push *p;
		struct ember_buf empty;
		char url[64], why[512];

		CHECK(h != NULL && fake_start(&s, NULL, 0) == 0);
		snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
		p = agent_push_new(h, url, named ? "team-a" : NULL, false, 1 << 20, &(int){ 0 });
		CHECK(p != NULL && small_profile(1, &empty) == 0);
		CHECK(agent_push_check(p, &empty, NULL, 0, why, sizeof(why)) == 0);
		CHECK(enqueue_small(p, 2) == 0);
		CHECK_INT(agent_push_run(p, 0), ==, -1);
		CHECK_INT(atomic_load(&s.nreq), ==, 2);
		CHECK_STR(s.req[0].tenant, named ? "team-a" : "");
		CHECK_STR(s.req[1].tenant, named ? "team-a" : "");
		CHECK_STR(s.req[1].auth, "Bearer sekrit");
		ember_buf_release(&empty);
		agent_push_free(p);
		agent_http_free(h);
		fake_stop(&s);
	}
	return 0;
}

/* A 401 says what to give: the token when the server challenges
 * (WWW-Authenticate), the tenant when it does not (a server with
 * --multitenancy and no X-Scope-OrgID named). */
static int test_agent__push_refusal_says_token_or_tenant(void)
{
	static const int script[] = { 401 };

	for (int challenge = 0; challenge < 2; challenge++) {
		struct fake_server s;
		struct agent_http *h;
		struct agent_push *p;

		CHECK(fake_start(&s, script, 1) == 0);
		s.challenge = challenge;
		p = push_to(&s, &h, false, 1 << 20);
		CHECK(p != NULL && enqueue_small(p, 1) == 0);
		CHECK_INT(agent_push_run(p, 0), ==, -1);
		CHECK(agent_push_refusal(p) != NULL);
		CHECK(strstr(agent_push_refusal(p), challenge ? "give --token" : "give --tenant NAME"));
		CHECK(!strstr(agent_push_refusal(p), challenge ? "--tenant" : "--token"));
		agent_push_free(p);
		agent_http_free(h);
		fake_stop(&s);
	}
	return 0;
}

/* The queue's cap: the oldest profile goes to make room (counted), one
 * larger than the whole cap is refused with -E2BIG; what is sent is the
 * rest, oldest first. */
static int test_agent__push_queue_drops_oldest(void)
{
	struct fake_server s;
	struct agent_http *h;
	struct agent_push *p;
	struct agent_push_stats st;
	struct ember_buf raw[3], big;
	char url[64];
	size_t one;

	for (int i = 0; i < 3; i++)
		CHECK(small_profile(100 + i, &raw[i]) == 0);
	CHECK(fake_start(&s, NULL, 0) == 0);
	p = push_to(&s, &h, false, 1 << 20);
	CHECK(p != NULL && agent_push_enqueue(p, &raw[0]) == 0);
	agent_push_stats(p, &st);
	one = st.queued_bytes; /* one profile, compressed */
	agent_push_free(p);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s.port);
	p = agent_push_new(h, url, NULL, false, 2 * one + one / 2, &(int){ 0 });
	CHECK(p != NULL);
	for (int i = 0; i < 3; i++)
		CHECK(agent_push_enqueue(p, &raw[i]) == 0);
	agent_push_stats(p, &st);
	CHECK(st.queued == 2 && st.dropped == 1);
	ember_buf_init(&big, 1 << 20);
	for (size_t i = 0; i < 3 * one; i++) /* incompressible */
		CHECK(ember_buf_append(&big, &(char){ (char)(rand() & 0xff) }, 1) == 0);
	CHECK(agent_push_enqueue(p, &big) == -E2BIG);
	agent_push_stats(p, &st);
	CHECK(st.queued == 2 && st.dropped == 2);
	CHECK_INT(agent_push_run(p, 0), ==, -1);
	CHECK_INT(atomic_load(&s.nreq), ==, 2);
	CHECK_INT(body_sample_value(&s.req[0]), ==, 101);
	CHECK_INT(body_sample_value(&s.req[1]), ==, 102);
	for (int i = 0; i < 3; i++)
		ember_buf_release(&raw[i]);
	ember_buf_release(&big);
	agent_push_free(p);
	agent_http_free(h);
	fake_stop(&s);
	return 0;
}

/* ---- files written and read as root (safe_files.c) ---------------------- */

static int rm_rf(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* A cache or output directory group or others may write to is refused,
 * nothing is written in it, and the error names it. */
static int test_agent__dir_writable_by_others_refused(void)
{
	char dir[] = "/tmp/ember-agent-ww-XXXXXX", path[300], why[400] = "";
	struct ember_buf gz = { .data = "x", .len = 1 };
	struct ember_buf image;
	char etag[64];

	CHECK(mkdtemp(dir) != NULL);
	CHECK(chmod(dir, 0777) == 0);
	CHECK_INT(agent_dir_open(dir, why, sizeof(why)), ==, -EPERM);
	CHECK(strstr(why, dir) && strstr(why, "writable by others"));
	CHECK_INT(agent_cache_write(dir, "abcd", "table", 5, ""), ==, -EPERM);
	CHECK_INT(agent_output_write(dir, "h", 1, &gz, path, sizeof(path)), ==, -EPERM);
	CHECK(chmod(dir, 0775) == 0);
	CHECK_INT(agent_cache_read(dir, "abcd", &image, etag, sizeof(etag)), ==, -EPERM);
	ember_buf_release(&image);
	CHECK(chmod(dir, 0700) == 0);
	snprintf(path, sizeof(path), "%s/abcd.unwind", dir);
	CHECK(access(path, F_OK) != 0);
	CHECK(rm_rf(dir) == 0);
	return 0;
}

/* A directory whose parent others may write to could be renamed away and
 * replaced by theirs: refused, the parent named; a sticky parent (/tmp)
 * is not such a risk for a child of root's. */
static int test_agent__dir_parent_writable_by_others_refused(void)
{
	char top[] = "/tmp/ember-agent-pw-XXXXXX", sub[300], why[600] = "";
	int fd;

	CHECK(mkdtemp(top) != NULL);
	snprintf(sub, sizeof(sub), "%s/out", top);
	CHECK(mkdir(sub, 0700) == 0);
	CHECK(chmod(top, 0777) == 0);
	CHECK_INT(agent_dir_open(sub, why, sizeof(why)), ==, -EPERM);
	CHECK(strstr(why, sub) && strstr(why, "its parent") && strstr(why, top) &&
	      strstr(why, "writable by others"));
	CHECK(chmod(top, 0770) == 0);
	CHECK_INT(agent_dir_open(sub, why, sizeof(why)), ==, -EPERM);
	CHECK(strstr(why, "writable by its group"));
	CHECK(chmod(top, 01777) == 0);
	fd = agent_dir_open(sub, why, sizeof(why));
	CHECK(fd >= 0);
	close(fd);
	CHECK(chmod(top, 0700) == 0);
	CHECK(rm_rf(top) == 0);
	return 0;
}

/* Symlinks planted at the final names and at the temporary names the
 * agent used to make (NAME.tmp.PID) lead nowhere: the file they point at
 * is unchanged, the cache holds regular 0600 files with the table. */
static int test_agent__cache_write_ignores_planted_symlinks(void)
{
	char dir[] = "/tmp/ember-agent-sl-XXXXXX", victim[] = "/tmp/ember-agent-victim-XXXXXX";
	char path[300], link[300];
	const char *names[] = { "abcd.unwind", "abcd.etag" };
	struct stat st;
	size_t len;
	char *got;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	fd = mkstemp(victim);
	CHECK(fd >= 0 && write(fd, "secret", 6) == 6 && fchmod(fd, 0600) == 0);
	close(fd);
	for (size_t i = 0; i < 2; i++) {
		snprintf(link, sizeof(link), "%s/%s", dir, names[i]);
		CHECK(symlink(victim, link) == 0);
		snprintf(link, sizeof(link), "%s/%s.tmp.%d", dir, names[i], (int)getpid());
		CHECK(symlink(victim, link) == 0);
	}
	CHECK_INT(agent_cache_write(dir, "abcd", "table-bytes", 11, "\"etag\""), ==, 0);
	got = unit_slurp(victim, &len);
	CHECK(got && len == 6 && !memcmp(got, "secret", 6));
	free(got);
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
		CHECK_INT(st.st_mode & 07777, ==, 0600);
	}
	snprintf(path, sizeof(path), "%s/abcd.unwind", dir);
	got = unit_slurp(path, &len);
	CHECK(got && len == 11 && !memcmp(got, "table-bytes", 11));
	free(got);
	unlink(victim);
	CHECK(rm_rf(dir) == 0);
	return 0;
}

/* A profile written to --output is readable by its owner alone. */
static int test_agent__output_profile_is_0600(void)
{
	char dir[] = "/tmp/ember-agent-out-XXXXXX", sub[300], path[400];
	struct ember_buf gz = { .data = "profile", .len = 7 };
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(sub, sizeof(sub), "%s/profiles", dir); /* made by the agent */
	CHECK_INT(agent_output_write(sub, "h", 42, &gz, path, sizeof(path)), ==, 0);
	CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode));
	CHECK_INT(st.st_mode & 07777, ==, 0600);
	CHECK(rm_rf(dir) == 0);
	return 0;
}

struct flipper {
	int fd;
	const char *bytes;
	size_t len;
	atomic_bool stop;
};

/* Cut the file to its first page and put it back, again and again. */
static void *flip_size(void *arg)
{
	struct flipper *fl = arg;

	while (!atomic_load(&fl->stop)) {
		if (ftruncate(fl->fd, 4096) || pwrite(fl->fd, fl->bytes + 4096, fl->len - 4096,
						      4096) != (ssize_t)(fl->len - 4096))
			break;
	}
	return NULL;
}

/* A file its owner truncates while the agent reads it (ELF facts and a
 * table's compilation, as the worker does: by descriptor) gives a table
 * or an error, never a SIGBUS. */
static int test_agent__compile_file_truncated_meanwhile(void)
{
	char copy[] = "/tmp/ember-agent-trunc-XXXXXX";
	struct flipper fl = { 0 };
	struct agent_elf_info e;
	struct ember_buf image;
	pthread_t th;
	uint64_t end;
	size_t ok = 0, failed = 0;
	char *bytes = unit_slurp(unit_fixture("c_O2_pie"), &fl.len);

	CHECK(bytes && fl.len > 8192);
	fl.bytes = bytes;
	fl.fd = mkstemp(copy);
	CHECK(fl.fd >= 0 && write(fl.fd, bytes, fl.len) == (ssize_t)fl.len);
	CHECK(pthread_create(&th, NULL, flip_size, &fl) == 0);
	end = ember_monotonic_ns() + 1500000000ull;
	while (ember_monotonic_ns() < end) {
		int fd = open(copy, O_RDONLY | O_CLOEXEC), err;

		CHECK(fd >= 0);
		ember_buf_init(&image, 64 << 20);
		err = agent_elf_info_read(fd, &e);
		if (!err)
			err = unwind_table_compile_fd(fd, NULL, &image);
		err ? failed++ : ok++;
		ember_buf_release(&image);
		close(fd);
	}
	atomic_store(&fl.stop, true);
	pthread_join(th, NULL);
	CHECK(failed > 0); /* the truncation was seen */
	close(fl.fd);
	unlink(copy);
	free(bytes);
	return 0;
}

/* A FIFO where a mapped file was is refused at once (it would block an
 * open without O_NONBLOCK for ever), and through /proc/PID/root of a
 * process in a chroot an absolute symlink resolves inside that root, not
 * to the agent's file of the same name. */
static int test_agent__open_mapped_fifo_and_symlink_out_of_root(void)
{
	char dir[] = "/tmp/ember-agent-root-XXXXXX", path[300], target[] = "/tmp/ember-agent-host-XXXXXX";
	struct stat st;
	pid_t kid;
	int fd, fd2;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "/proc/self/root%s/fifo", dir);
	CHECK(mkfifo(path + strlen("/proc/self/root"), 0666) == 0);
	alarm(10); /* a blocking open fails the case instead of hanging it */
	CHECK_INT(agent_open_mapped(path, &st), ==, -EINVAL);
	CHECK_INT(agent_open_mapped(path + strlen("/proc/self/root"), &st), ==, -EINVAL);
	alarm(0);
	fd = mkstemp(target);
	CHECK(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	CHECK(symlink(target, path) == 0); /* absolute: the host's file from outside */
	snprintf(path, sizeof(path), "%s/d", dir);
	CHECK(symlink("/tmp", path) == 0); /* a directory on the way, absolute too */
	if (geteuid() != 0) {
		unlink(target);
		rm_rf(dir);
		return 77; /* chroot needs root */
	}
	kid = fork();
	if (kid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (chroot(dir) || chdir("/"))
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(kid > 0);
	usleep(100000);
	snprintf(path, sizeof(path), "/proc/%d/root/lib.so", (int)kid);
	fd = agent_open_mapped(path, &st); /* maps never names a symlink */
	snprintf(path, sizeof(path), "/proc/%d/root/d%s", (int)kid, target + strlen("/tmp"));
	fd2 = agent_open_mapped(path, &st);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	CHECK_INT(fd, ==, -ELOOP);
	CHECK_INT(fd2, ==, -ENOENT); /* resolved as /tmp/... inside the chroot */
	unlink(target);
	CHECK(rm_rf(dir) == 0);
	return 0;
}

static void write_text(const char *path, const char *text, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(text, 1, n, f) != n || fclose(f))
		abort();
}

/* A Docker container named by dockerd's config.v2.json ("Name": "/NAME"),
 * read from directories only root may write; every other file or
 * directory refused with its reason, and the ID kept then. */
static int test_agent__service_container_name_from_docker_dir(void)
{
	static const char config[] =
		"{\"StreamConfig\":{},\"State\":{\"Running\":true,\"Pid\":4242},"
		"\"ID\":\"" DOCKER_ID "\",\"Path\":\"/app/server\",\"Args\":[],"
		"\"Config\":{\"Hostname\":\"3f4e5a6b7c8d\",\"Labels\":{\"Name\":\"/no\"}},"
		"\"Image\":\"sha256:0123\",\"Name\":\"/checkout-1\",\"Driver\":\"overlay2\"}";
	static const struct {
		const char *text, *why;
		int want;
	} bad[] = {
		{ "{\"Name\":\"/../etc\"}", "not a name Docker gives", -EBADMSG },
		{ "{\"Name\":\"/ok\",\"Name\":\"/dup\"}", "a key given twice", -EBADMSG },
		{ "{\"Name\":", "not JSON", -EBADMSG },
		{ "{\"ID\":\"x\"}", "no Name", -ENOENT },
		{ "{\"Name\":42}", "a Name not a string", -ENOENT },
	};
	char dir[] = "/tmp/ember-agent-docker-XXXXXX", idd[200], cfg[260], link[220], name[128];
	struct agent_service_id id;
	char *big;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(idd, sizeof(idd), "%s/%s", dir, DOCKER_ID);
	snprintf(cfg, sizeof(cfg), "%s/config.v2.json", idd);
	CHECK(mkdir(idd, 0700) == 0);
	CHECK(agent_service_container_name(dir, DOCKER_ID, name, sizeof(name)) == -ENOENT);
	write_text(cfg, config, sizeof(config) - 1);
	agent_service_parse_cgroup("/system.slice/docker-" DOCKER_ID ".scope", &id);
	CHECK_STR(id.container_full, DOCKER_ID);
	CHECK(agent_service_container_name(dir, id.container_full, id.container_name,
					   sizeof(id.container_name)) == 0);
	CHECK_STR(id.container_name, "checkout-1");
	agent_service_name(&id, "/app/server", "server", name, sizeof(name));
	CHECK_STR(name, "checkout-1");
	CHECK(agent_service_container_name(dir, "3f4e5a6b7c8d", name, sizeof(name)) == -EINVAL);
	CHECK(agent_service_container_name(dir, "../../../../../../../../etc/x", name,
					   sizeof(name)) == -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int err;

		write_text(cfg, bad[i].text, strlen(bad[i].text));
		err = agent_service_container_name(dir, DOCKER_ID, name, sizeof(name));
		if (err != bad[i].want) {
			fprintf(stderr, "%s: %d, want %d\n", bad[i].why, err, bad[i].want);
			CHECK(0);
		}
	}
	big = malloc(AGENT_CONTAINER_CONFIG_MAX + 1);
	CHECK(big != NULL);
	memset(big, ' ', AGENT_CONTAINER_CONFIG_MAX + 1);
	write_text(cfg, big, AGENT_CONTAINER_CONFIG_MAX + 1);
	free(big);
	CHECK(agent_service_container_name(dir, DOCKER_ID, name, sizeof(name)) == -E2BIG);
	/* written by another than root: the ID's directory, the top one, the file */
	write_text(cfg, config, sizeof(config) - 1);
	CHECK(chmod(idd, 0777) == 0);
	CHECK(agent_service_container_name(dir, DOCKER_ID, name, sizeof(name)) == -EPERM);
	CHECK(chmod(idd, 0700) == 0 && chmod(dir, 0770) == 0);
	CHECK(agent_service_container_name(dir, DOCKER_ID, name, sizeof(name)) == -EPERM);
	CHECK(chmod(dir, 0700) == 0);
	snprintf(link, sizeof(link), "%s/other.json", idd);
	CHECK(rename(cfg, link) == 0 && symlink(link, cfg) == 0);
	CHECK(agent_service_container_name(dir, DOCKER_ID, name, sizeof(name)) == -ELOOP);
	CHECK(unlink(cfg) == 0 && unlink(link) == 0 && rmdir(idd) == 0);
	snprintf(link, sizeof(link), "%s.elsewhere", dir);
	CHECK(mkdir(link, 0700) == 0 && symlink(link, idd) == 0);
	CHECK(agent_service_container_name(dir, DOCKER_ID, name, sizeof(name)) == -ELOOP ||
	      agent_service_container_name(dir, DOCKER_ID, name, sizeof(name)) == -ENOTDIR);
	CHECK(unlink(idd) == 0 && rmdir(link) == 0 && rmdir(dir) == 0);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_agent__ranges_alloc_free_coalesce),
	UNIT_CASE(test_agent__maps_line_parse),
	UNIT_CASE(test_agent__perfmap_lookup),
	UNIT_CASE(test_agent__perfmap_entries_bounded),
	UNIT_CASE(test_agent__jitdump_loads_moves_and_growth),
	UNIT_CASE(test_agent__jitdump_hostile_records_refused),
	UNIT_CASE(test_agent__kallsyms_names_a_kernel_function),
	UNIT_CASE(test_agent__elf_info_matches_unwind_compiler),
	UNIT_CASE(test_agent__table_load_into_bpf_maps),
	UNIT_CASE(test_agent__opts_need_a_destination),
	UNIT_CASE(test_agent__opts_off_cpu),
	UNIT_CASE(test_agent__opts_tenant),
	UNIT_CASE(test_agent__opts_off_cpu_budget_rseq_only),
	UNIT_CASE(test_agent__offcpu_t_follows_budget),
	UNIT_CASE(test_agent__agg_off_cpu_weights_summed),
	UNIT_CASE(test_agent__profile_marks_kernel_frames),
	UNIT_CASE(test_agent__profile_of_off_cpu_stacks_alone_is_sent),
	UNIT_CASE(test_agent__service_name_from_cgroup_paths),
	UNIT_CASE(test_agent__service_pod_workload_from_log_dir),
	UNIT_CASE(test_agent__service_container_name_from_docker_dir),
	UNIT_CASE(test_agent__label_per_service),
	UNIT_CASE(test_agent__tables_file_by_build_id),
	UNIT_CASE(test_agent__tables_compile_then_cache),
	UNIT_CASE(test_agent__procs_scan_reads_a_child),
	UNIT_CASE(test_agent__procs_exec_exit_reap),
	UNIT_CASE(test_agent__procs_rescan_keeps_unmapped_until_reap),
	UNIT_CASE(test_agent__push_body_decodes_back),
	UNIT_CASE(test_agent__push_backoff_and_refusal),
	UNIT_CASE(test_agent__push_permanent_refusal_stops),
	UNIT_CASE(test_agent__push_names_its_tenant),
	UNIT_CASE(test_agent__push_refusal_says_token_or_tenant),
	UNIT_CASE(test_agent__push_queue_drops_oldest),
	UNIT_CASE(test_agent__dir_writable_by_others_refused),
	UNIT_CASE(test_agent__dir_parent_writable_by_others_refused),
	UNIT_CASE(test_agent__cache_write_ignores_planted_symlinks),
	UNIT_CASE(test_agent__output_profile_is_0600),
	UNIT_CASE(test_agent__compile_file_truncated_meanwhile),
	UNIT_CASE(test_agent__open_mapped_fifo_and_symlink_out_of_root),
};

UNIT_MAIN_QUIET(cases)
