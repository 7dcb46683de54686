/*
 * test_agent.c - unit tests of the agent's parts that run without a
 * sampling BPF program: the range allocator, the /proc/PID/maps and perf
 * map parsers, kallsyms, the ELF facts (against the unwind compiler's own
 * reading of the build ID), and loading a compiled table into real BPF
 * maps (skipped, exit 77, where this process may not create BPF maps).
 */
#include "unit.h"
#include "agent_internal.h"
#include "unwind.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/mman.h>
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

/* Real BPF maps of the sizes docs/unwind-format.md section 4 gives (small
 * here): the table's data area and rules land at the allocated offsets,
 * one page entry a page with data_off + base; unloading removes them. */
static int test_agent__table_load_into_bpf_maps(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	LIBBPF_OPTS(bpf_map_create_opts, hm, .map_flags = BPF_F_NO_PREALLOC);
	int pages = bpf_map_create(BPF_MAP_TYPE_HASH, "pages", sizeof(struct agent_page_key),
				   sizeof(struct agent_page_val), 4096, &hm);
	int data = bpf_map_create(BPF_MAP_TYPE_ARRAY, "data", 4, AGENT_DATA_CHUNK, 256, &mm);
	int rules = bpf_map_create(BPF_MAP_TYPE_ARRAY, "rules", 4, 16, 4096, &mm);
	struct agent_table_maps t;
	struct agent_loaded l1, l2;
	struct ember_buf image;
	const struct unwind_table_header *h;
	struct unwind_table *b;
	uint8_t *dp;
	struct agent_unwind_rule *rp;
	struct agent_page_key k = { 0 }, next;
	struct agent_page_val v;
	size_t n = 0;
	int err;

	if (pages < 0 || data < 0 || rules < 0) {
		fprintf(stderr, "skip: cannot create BPF maps: %s\n", strerror(errno));
		return UNIT_SKIP;
	}
	dp = mmap(NULL, 256 * AGENT_DATA_CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, data, 0);
	rp = mmap(NULL, 4096 * 16, PROT_READ | PROT_WRITE, MAP_SHARED, rules, 0);
	CHECK(dp != MAP_FAILED && rp != MAP_FAILED);
	CHECK(agent_table_maps_init(&t, pages, data, 256 * AGENT_DATA_CHUNK, rules, 4096) == 0);
	ember_buf_init(&image, 64 << 20);
	CHECK(unwind_table_compile(unit_fixture("c_O2_pie"), NULL, NULL, &image) == 0);
	b = unwind_table_new(image.data, image.len, &err);
	CHECK(b != NULL);
	h = unwind_table_header(b);
	CHECK(agent_table_load(&t, image.data, image.len, 7, &l1) == 0);
	CHECK(agent_table_load(&t, image.data, image.len, 8, &l2) == 0);
	CHECK(l2.data_base >= l1.data_base + h->data_size && l2.data_base % 8 == 0);
	CHECK(l2.rule_base == l1.rule_base + h->nrules);
	CHECK(!memcmp(dp + l2.data_base, image.data + 128, h->data_size));
	CHECK(!memcmp(rp + l2.rule_base, image.data + 128 + h->data_size, 16 * h->nrules));
	while (!bpf_map_get_next_key(pages, n ? &k : NULL, &next)) {
		CHECK(bpf_map_lookup_elem(pages, &next, &v) == 0);
		CHECK(v.rule_base == (next.file_id == 7 ? l1.rule_base : l2.rule_base));
		k = next;
		n++;
	}
	CHECK_INT(n, ==, 2 * h->npages);
	agent_table_unload(&t, &l1);
	k.file_id = 7;
	k.page = l2.pages[0];
	CHECK(bpf_map_lookup_elem(pages, &k, &v) != 0); /* gone */
	k.file_id = 8;
	CHECK(bpf_map_lookup_elem(pages, &k, &v) == 0); /* the other stays */
	/* A image that fails its checksum loads nothing. */
	image.data[200] ^= 1;
	CHECK(agent_table_load(&t, image.data, image.len, 9, &l1) == -UNWIND_ERR_CHECKSUM);
	agent_table_unload(&t, &l2);
	CHECK_INT(t.data_free.used, ==, 0);
	CHECK_INT(t.rules_free.used, ==, 0);
	unwind_table_free(b);
	ember_buf_release(&image);
	agent_table_maps_release(&t);
	munmap(dp, 256 * AGENT_DATA_CHUNK);
	munmap(rp, 4096 * 16);
	close(pages), close(data), close(rules);
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

static const struct unit_case cases[] = {
	UNIT_CASE(test_agent__ranges_alloc_free_coalesce),
	UNIT_CASE(test_agent__maps_line_parse),
	UNIT_CASE(test_agent__perfmap_lookup),
	UNIT_CASE(test_agent__kallsyms_names_a_kernel_function),
	UNIT_CASE(test_agent__elf_info_matches_unwind_compiler),
	UNIT_CASE(test_agent__table_load_into_bpf_maps),
	UNIT_CASE(test_agent__opts_need_a_destination),
};

UNIT_MAIN_QUIET(cases)
