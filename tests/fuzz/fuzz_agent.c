/*
 * fuzz_agent.c - libFuzzer target for the agent's parsers of outside
 * input: /tmp/perf-PID.map and jit-PID.dump (written by the profiled
 * process, read by the root agent) and /proc/PID/maps lines.  Byte 0
 * selects: 0 a perf map, 1 maps lines, 2 a jitdump (read in two steps, a
 * prefix then the whole, as a file that grows); the rest is the input.
 * Every name a lookup returns must be NUL-terminated inside the input: a
 * violation aborts.  9: a CPython process' memory (python_code.c): the
 * rest is memory at PY_BASE, a code object read at its start (types: the
 * first three u64s) and every instruction's line from the location
 * table found.
 * (The unwind blobs the agent downloads are fuzz_unwind.c's.)
 */
#include "agent_internal.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

static void perfmap(const char *text, size_t n)
{
	int err = 0;
	struct agent_perfmap *m = agent_perfmap_parse(text, n, &err);
	uint64_t probes[] = { 0, 0x1000, 0x7f0000001000, 0x7f0000000105, UINT64_MAX };

	if (!m)
		return;
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const char *name = agent_perfmap_lookup(m, probes[i]);

		if (name && strlen(name) > n)
			abort();
	}
	agent_perfmap_free(m);
}

static void jitdump(const uint8_t *data, size_t n)
{
	int err = 0;
	struct agent_jitdump *jd = agent_jitdump_new(&err);
	uint64_t probes[] = { 0, 0x1000, 0x7f0000001000, 0x7f0000003008, UINT64_MAX };

	if (!jd)
		return;
	if (!agent_jitdump_feed(jd, data, n / 2))
		agent_jitdump_feed(jd, data, n);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const char *name = agent_jitdump_lookup(jd, probes[i]);

		if (name && strlen(name) > n)
			abort();
	}
	agent_jitdump_free(jd);
}

static void maps(const char *text, size_t n)
{
	char *copy = malloc(n + 1), *save = NULL;
	struct agent_map_line m;

	if (!copy)
		return;
	memcpy(copy, text, n);
	copy[n] = '\0';
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (agent_maps_parse_line(l, &m) == 0 && (m.start > m.end || strlen(m.perms) != 4))
			abort();
	free(copy);
}

#define PY_BASE 0x100000ULL

struct py_mem {
	const uint8_t *b;
	size_t n;
};

static int py_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct py_mem *m = ctx;

	if (addr < PY_BASE || addr - PY_BASE > m->n || n > m->n - (addr - PY_BASE))
		return -1;
	memcpy(buf, m->b + (addr - PY_BASE), n);
	return 0;
}

static void python(const uint8_t *b, size_t n)
{
	struct py_mem m = { b, n };
	struct agent_py_reader r = { .layout = agent_python_layout(0x030b02f0), .read = py_read,
				     .ctx = &m };
	struct agent_py_code c;

	if (n < 24 || !r.layout)
		return;
	memcpy(&r.types, b, 24);
	if (agent_py_code_read(&r, PY_BASE + 24, &c))
		return;
	if (strlen(c.qualname) > 4 * AGENT_PY_STR_MAX || strlen(c.filename) > 4 * AGENT_PY_STR_MAX)
		abort();
	for (uint32_t i = 0; i <= c.linetable_len * 8 + 1 && i < 4096; i++)
		(void)agent_py_line(c.linetable, c.linetable_len, c.id.firstlineno, i);
	agent_py_code_release(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ember_log_set_handler(quiet, NULL);
	if (size < 1)
		return 0;
	if (data[0] == 0)
		perfmap((const char *)data + 1, size - 1);
	else if (data[0] == 1)
		maps((const char *)data + 1, size - 1);
	else if (data[0] == 2)
		jitdump(data + 1, size - 1);
	else if (data[0] == 9)
		python(data + 1, size - 1);
	return 0;
}
