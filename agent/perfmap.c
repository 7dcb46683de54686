/*
 * perfmap.c - names of JIT-compiled code from /tmp/perf-PID.map, the
 * file runtimes (V8 with --perf-basic-prof, the JVM's perf-map-agent,
 * .NET, LuaJIT) write for perf: one "START SIZE NAME" line (hex) a
 * function.  Read through /proc/PID/root, with the pid the process has in
 * its own namespace, so a containerized runtime's map is found too.
 */
#include "agent_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERFMAP_MAX_BYTES ((size_t)64 << 20)

struct pm_entry {
	uint64_t start, size;
	size_t name;
};

struct agent_perfmap {
	struct pm_entry *v;
	size_t n, alloc;
	struct ember_buf names;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int add_line(struct agent_perfmap *m, char *line)
{
	struct pm_entry e;
	int pos = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &e.start, &e.size, &pos) < 2 || !pos)
		return 0;
	e.name = m->names.len;
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&m->names, line + pos, strlen(line + pos) + 1));
	return EMBER_VEC_PUSH(m->v, m->n, m->alloc, e);
}

struct agent_perfmap *agent_perfmap_new(const char *path, int *err)
{
	struct agent_perfmap *m = calloc(1, sizeof(*m));
	char line[4096];
	FILE *f;
	int e = 0;

	if (!m) {
		*err = -ENOMEM;
		return NULL;
	}
	ember_buf_init(&m->names, PERFMAP_MAX_BYTES);
	f = fopen(path, "re");
	if (!f)
		e = -errno;
	while (!e && fgets(line, sizeof(line), f))
		e = add_line(m, line);
	if (f)
		fclose(f);
	if (e) {
		agent_perfmap_free(m);
		*err = e;
		return NULL;
	}
	qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
	return m;
}

void agent_perfmap_free(struct agent_perfmap *m)
{
	if (!m)
		return;
	free(m->v);
	ember_buf_release(&m->names);
	free(m);
}

const char *agent_perfmap_lookup(const struct agent_perfmap *m, uint64_t addr)
{
	size_t i = agent_last_at_or_below(m->v, m->n, sizeof(*m->v), addr);

	if (i == SIZE_MAX || addr - m->v[i].start >= m->v[i].size)
		return NULL;
	return m->names.data + m->v[i].name;
}
