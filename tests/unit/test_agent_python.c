/*
 * test_agent_python.c - unit tests of the agent's reading of CPython
 * (agent/python_elf.c, python_code.c): the layouts by version, CPython's
 * own location tables decoded as CPython decodes them (the expected lines
 * from co_lines() of Debian's python3.11, run here), code objects read
 * from a live python3.11 process (names in each string kind), and hostile
 * memory (a buffer posing as a process: wrong types, oversized lengths,
 * legacy strings).
 */
#include "unit.h"
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define PYTHON "/usr/bin/python3.11"

static int test_agent_pycode__layout_by_version(void)
{
	CHECK(agent_python_layout(0x030b00f0) != NULL); /* 3.11.0 */
	CHECK(agent_python_layout(0x030b02f0) != NULL); /* 3.11.2, Debian 12 */
	CHECK(agent_python_layout(0x030b0af0) != NULL);
	CHECK(agent_python_layout(0x030a0cf0) == NULL); /* 3.10: no Py_Version */
	CHECK(agent_python_layout(0x030c00f0) == NULL); /* 3.12: another layout */
	CHECK(agent_python_layout(0) == NULL);
	return 0;
}

/* A hex string into bytes (at most size); the count. */
static size_t unhex(const char *hex, uint8_t *out, size_t size)
{
	size_t n = 0;

	while (n < size && hex[0] && hex[1] && sscanf(hex, "%2hhx", &out[n]) == 1) {
		n++;
		hex += 2;
	}
	return n;
}

/* Every code object of a module with long jumps, nested functions,
 * lambdas, comprehensions and lines without code: for each, its first
 * line and location table, then each instruction (code unit) and its
 * line by co_lines() ("-" for none). */
static const char lines_script[] =
	"import sys\n"
	"src = '\\n'.join(['def f(a):', '    x = 0', '    for i in range(a):',\n"
	"    '        if i % 3:', '            x += i', '        else:', '            x -= 1',\n"
	"    ''] + ['    # pad'] * 300 + ['    y = [j * 2 for j in range(a)]',\n"
	"    '    g = lambda q: (q +', '        1)', '    try:', '        return x / a',\n"
	"    '    except ZeroDivisionError:', '        return None', 'class C:',\n"
	"    '    def m(self):', '        return 1', '', 'def long():'] +\n"
	"    ['    v%d = %d' % (k, k) for k in range(400)] + ['    return v1'])\n"
	"co = compile(src, 'm.py', 'exec')\n"
	"def walk(c):\n"
	"    yield c\n"
	"    for k in c.co_consts:\n"
	"        if hasattr(k, 'co_lines'):\n"
	"            yield from walk(k)\n"
	"for c in walk(co):\n"
	"    print('code', c.co_firstlineno, c.co_linetable.hex() or '-')\n"
	"    for start, end, line in c.co_lines():\n"
	"        for u in range(start // 2, end // 2):\n"
	"            print('unit', u, '-' if line is None else line)\n";

static int test_agent_pycode__linetable_matches_cpython(void)
{
	char cmd[256], line[1 << 17];
	static uint8_t table[1 << 16];
	size_t len = 0, units = 0, codes = 0;
	long first = 0;
	FILE *f;
	char tmp[] = "/tmp/ember-py-lines-XXXXXX";
	int fd = mkstemp(tmp);

	if (access(PYTHON, X_OK) || fd < 0)
		return UNIT_SKIP;
	CHECK(write(fd, lines_script, sizeof(lines_script) - 1) == sizeof(lines_script) - 1);
	close(fd);
	snprintf(cmd, sizeof(cmd), PYTHON " %s", tmp);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		char hex[sizeof(line)], want[32];
		unsigned u;

		if (sscanf(line, "code %ld %s", &first, hex) == 2) {
			len = strcmp(hex, "-") ? unhex(hex, table, sizeof(table)) : 0;
			codes++;
		} else if (sscanf(line, "unit %u %31s", &u, want) == 2 && strcmp(want, "-")) {
			int64_t got = agent_py_line(table, len, first, u + 1);

			if (got != atol(want))
				fprintf(stderr, "code at line %ld, unit %u: %" PRId64 ", CPython %s\n",
					first, u, got, want);
			CHECK_INT(got, ==, atol(want));
			units++;
		}
	}
	CHECK_INT(pclose(f), ==, 0);
	unlink(tmp);
	CHECK_INT(codes, >=, 6);
	CHECK_INT(units, >=, 1000);
	/* before the first instruction: the first line */
	CHECK_INT(agent_py_line(table, len, first, 0), ==, first);
	return 0;
}

static int test_agent_pycode__linetable_malformed(void)
{
	/* a long entry whose varint never ends, an entry without bit 7, a
	 * short entry without its column byte: the first line, no read past */
	static const uint8_t unended[] = { 0xf0, 0x42, 0x41 };
	static const uint8_t nobit[] = { 0x08 };
	static const uint8_t short_cut[] = { 0x80 };
	static const uint8_t good[] = { 0xe8, 0x04, 0xe8, 0x02 }; /* +2 (1 unit), +1 (1) */

	CHECK_INT(agent_py_line(unended, sizeof(unended), 7, 1), ==, 7);
	CHECK_INT(agent_py_line(nobit, sizeof(nobit), 7, 1), ==, 7);
	CHECK_INT(agent_py_line(short_cut, sizeof(short_cut), 7, 1), ==, 7);
	CHECK_INT(agent_py_line(good, sizeof(good), 10, 1), ==, 12);
	CHECK_INT(agent_py_line(good, sizeof(good), 10, 2), ==, 13);
	CHECK_INT(agent_py_line(good, sizeof(good), 10, 3), ==, 10); /* past the table */
	CHECK_INT(agent_py_line(NULL, 0, 5, 9), ==, 5);
	return 0;
}

/* ---- a buffer posing as a process ------------------------------------ */

#define FAKE_BASE 0x10000ULL

struct fake {
	uint8_t mem[4096];
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct fake *f = ctx;

	if (addr < FAKE_BASE || addr - FAKE_BASE > sizeof(f->mem) ||
	    n > sizeof(f->mem) - (addr - FAKE_BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - FAKE_BASE), n);
	return 0;
}

static void put64(struct fake *f, size_t off, uint64_t v)
{
	memcpy(f->mem + off, &v, sizeof(v));
}

/* A str object at offset off: type, length, state (kind, compact, ascii). */
static void fake_str(struct fake *f, const struct agent_python_layout *l, size_t off,
		     uint64_t type, uint64_t len, unsigned kind, bool compact, bool ascii)
{
	uint32_t state = kind << l->str_kind_shift | (unsigned)compact << l->str_compact_bit |
			 (unsigned)ascii << l->str_ascii_bit;

	put64(f, off + l->ob_type, type);
	put64(f, off + l->str_length, len);
	memcpy(f->mem + off + l->str_state, &state, sizeof(state));
}

static int test_agent_pycode__hostile_memory(void)
{
	const struct agent_python_layout *l = agent_python_layout(0x030b02f0);
	struct fake f = { 0 };
	struct agent_py_reader r = { .layout = l, .read = fake_read, .ctx = &f,
				     .types = { .code = 0xc0de, .unicode = 0x5777, .bytes = 0xb7e5 } };
	struct agent_py_code c;
	char *s = NULL;

	CHECK(l != NULL);
	/* a compact ASCII string: read */
	fake_str(&f, l, 0, 0x5777, 3, 1, true, true);
	memcpy(f.mem + l->str_ascii_data, "abc", 3);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE, &s), ==, 0);
	CHECK_STR(s, "abc");
	free(s);
	/* a UCS-2 string: as UTF-8 */
	fake_str(&f, l, 256, 0x5777, 2, 2, true, false);
	memcpy(f.mem + 256 + l->str_compact_data, "\x3d\x04\xfd\xff", 4); /* U+043D U+FFFD */
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 256, &s), ==, 0);
	CHECK_STR(s, "\xd0\xbd\xef\xbf\xbd");
	free(s);
	/* a surrogate in UCS-4 and a code point past U+10FFFF: '?' */
	fake_str(&f, l, 512, 0x5777, 2, 4, true, false);
	memcpy(f.mem + 512 + l->str_compact_data, "\x00\xd8\x00\x00\x00\x00\x11\x00", 8);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 512, &s), ==, 0);
	CHECK_STR(s, "??");
	free(s);
	/* not a str, a length past the bound, a legacy string, kind 3, unaligned,
	 * unreadable */
	fake_str(&f, l, 768, 0xbad, 3, 1, true, true);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 768, &s), ==, -EINVAL);
	fake_str(&f, l, 768, 0x5777, AGENT_PY_STR_MAX + 1, 1, true, true);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 768, &s), ==, -E2BIG);
	fake_str(&f, l, 768, 0x5777, UINT64_MAX, 1, true, true);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 768, &s), ==, -E2BIG);
	fake_str(&f, l, 768, 0x5777, 3, 1, false, true);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 768, &s), ==, -EINVAL);
	fake_str(&f, l, 768, 0x5777, 3, 3, true, false);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 768, &s), ==, -EINVAL);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 769, &s), ==, -EINVAL);
	CHECK_INT(agent_py_str_read(&r, FAKE_BASE + 8192, &s), ==, -EFAULT);
	/* a code object whose linetable is a bytes object longer than the bound */
	put64(&f, 1024 + l->ob_type, 0xc0de);
	put64(&f, 1024 + l->code_qualname, FAKE_BASE);
	put64(&f, 1024 + l->code_filename, FAKE_BASE);
	put64(&f, 1024 + l->code_linetable, FAKE_BASE + 1536);
	put64(&f, 1536 + l->ob_type, 0xb7e5);
	put64(&f, 1536 + l->bytes_size, AGENT_PY_LINETABLE_MAX + 1);
	CHECK_INT(agent_py_code_read(&r, FAKE_BASE + 1024, &c), ==, -E2BIG);
	/* its bytes object within the bound but past the readable memory */
	put64(&f, 1536 + l->bytes_size, 8192);
	CHECK_INT(agent_py_code_read(&r, FAKE_BASE + 1024, &c), ==, -EFAULT);
	put64(&f, 1536 + l->bytes_size, 4);
	CHECK_INT(agent_py_code_read(&r, FAKE_BASE + 1024, &c), ==, 0);
	CHECK_STR(c.qualname, "abc");
	CHECK_INT(c.linetable_len, ==, 4);
	agent_py_code_release(&c);
	/* not a code object */
	put64(&f, 1024 + l->ob_type, 0x5777);
	CHECK_INT(agent_py_code_read(&r, FAKE_BASE + 1024, &c), ==, -EINVAL);
	return 0;
}

/* ---- a live python3.11 ---------------------------------------------- */

struct live {
	pid_t pid;
	struct agent_py_reader r;
};

static int live_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct live *lv = ctx;
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };

	return process_vm_readv(lv->pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* The load bias of path in pid: its first mapping's start minus the ELF
 * address of that mapping's offset. */
static int live_bias(pid_t pid, const char *path, const struct agent_elf_info *e, uint64_t *bias)
{
	char maps[64], buf[1024];
	FILE *f;
	int err = -ENOENT;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	if (!f)
		return -errno;
	while (err && fgets(buf, sizeof(buf), f)) {
		struct agent_map_line m;
		uint64_t vaddr;

		if (!agent_maps_parse_line(buf, &m) && !strcmp(m.path, path) &&
		    !agent_elf_offset_to_vaddr(e, m.offset, &vaddr)) {
			*bias = m.start - vaddr;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

/* Functions named in each kind of str (ASCII, Latin-1, UCS-2, UCS-4) and
 * a method; the child prints each code object's address, qualified name
 * and first line, then waits. */
static const char live_script[] =
	"import sys\n"
	"def plain(): pass\n"
	"def größe(): pass\n"
	"def 函数(): pass\n"
	"def \xf0\xa0\x80\x80(): pass\n"
	"class Shop:\n"
	"    def checkout(self): pass\n"
	"for fn in (plain, größe, 函数, \xf0\xa0\x80\x80, Shop.checkout):\n"
	"    c = fn.__code__\n"
	"    print(hex(id(c)), c.co_qualname, c.co_firstlineno, c.co_filename, flush=True)\n"
	"print('list', hex(id([])), flush=True)\n"
	"sys.stdin.read()\n";

/* Start PYTHON on script (its stdin held open: it waits on it) and find
 * its interpreter: lv's reader on the child, its type objects' addresses. */
static int live_start(struct live *lv, const char *script, FILE **out, int *in, char *first,
		      int first_size)
{
	int to[2], from[2], fd, err;
	struct agent_elf_info e;
	uint64_t bias = 0;

	if (pipe(to) || pipe(from))
		return -errno;
	lv->pid = fork();
	if (lv->pid < 0)
		return -errno;
	if (lv->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(PYTHON, PYTHON, script, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	*in = to[1];
	*out = fdopen(from[0], "r");
	if (!*out || !fgets(first, first_size, *out)) /* started: python3.11 mapped */
		return -EIO;
	fd = open(PYTHON, O_RDONLY);
	if (fd < 0)
		return -errno;
	err = agent_elf_info_read(fd, &e);
	close(fd);
	if (err || !e.python.found)
		return -ENOEXEC;
	EMBER_FORWARD_IF_ERROR(live_bias(lv->pid, PYTHON, &e, &bias));
	lv->r = (struct agent_py_reader){
		.layout = agent_python_layout(e.python.version), .read = live_read, .ctx = lv,
		.types = { .code = e.python.code_type + bias, .unicode = e.python.unicode_type + bias,
			   .bytes = e.python.bytes_type + bias },
	};
	return lv->r.layout ? 0 : -ENOTSUP;
}

static int test_agent_pycode__code_objects_of_a_live_process(void)
{
	char tmp[] = "/tmp/ember-py-live-XXXXXX", line[1024];
	struct live lv = { 0 };
	FILE *out = NULL;
	int in = -1, fd = mkstemp(tmp), err, named = 0, status;

	if (access(PYTHON, X_OK) || fd < 0)
		return UNIT_SKIP;
	CHECK(write(fd, live_script, sizeof(live_script) - 1) == sizeof(live_script) - 1);
	close(fd);
	err = live_start(&lv, tmp, &out, &in, line, sizeof(line));
	if (err == -EFAULT || err == -EPERM) {
		fprintf(stderr, "cannot read the child's memory here: %s\n", strerror(-err));
		err = UNIT_SKIP;
	}
	do {
		uint64_t addr;
		char want[256], file[512];
		long first;
		struct agent_py_code c;

		if (err)
			break;
		if (sscanf(line, "list %" SCNx64, &addr) == 1) {
			/* a list is not a code object; the last line */
			CHECK_INT(agent_py_code_read(&lv.r, addr, &c), ==, -EINVAL);
			break;
		}
		CHECK(sscanf(line, "%" SCNx64 " %255s %ld %511s", &addr, want, &first, file) == 4);
		CHECK_INT(agent_py_code_read(&lv.r, addr, &c), ==, 0);
		CHECK_STR(c.qualname, want);
		CHECK_STR(c.filename, file);
		CHECK_INT(c.id.firstlineno, ==, first);
		CHECK(c.linetable_len > 0);
		agent_py_code_release(&c);
		named++;
	} while (fgets(line, sizeof(line), out));
	if (in >= 0)
		close(in); /* the child's stdin: it exits */
	if (out)
		fclose(out);
	if (lv.pid > 0)
		waitpid(lv.pid, &status, 0);
	unlink(tmp);
	if (err)
		return err == UNIT_SKIP ? UNIT_SKIP : (fprintf(stderr, "%s\n", strerror(-err)), 1);
	CHECK_INT(named, ==, 5);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_agent_pycode__layout_by_version),
	UNIT_CASE(test_agent_pycode__linetable_matches_cpython),
	UNIT_CASE(test_agent_pycode__linetable_malformed),
	UNIT_CASE(test_agent_pycode__hostile_memory),
	UNIT_CASE(test_agent_pycode__code_objects_of_a_live_process),
};

UNIT_MAIN_QUIET(cases)
