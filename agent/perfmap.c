/*
 * perfmap.c - names of JIT-compiled code from /tmp/perf-PID.map, the
 * file runtimes (V8 with --perf-basic-prof, the JVM's perf-map-agent,
 * .NET, LuaJIT) write for perf: one "START SIZE NAME" line (hex) a
 * function.  Read through /proc/PID/root, with the pid the process has in
 * its own namespace, so a containerized runtime's map is found too.
 */
#include "agent_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* One "START SIZE NAME" line (hex numbers, NAME to the end of the line);
 * other lines are skipped. */
static int add_line(struct agent_perfmap *m, const char *line, size_t len)
{
	char buf[4096];
	struct pm_entry e;
	int pos = 0;

	if (len >= sizeof(buf))
		return 0; /* a name this long is not a function name */
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "%" SCNx64 " %" SCNx64 " %n", &e.start, &e.size, &pos) < 2 || !pos ||
	    !buf[pos] || e.size == 0 || e.start + e.size < e.start)
		return 0;
	e.name = m->names.len;
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&m->names, buf + pos, len - (size_t)pos + 1));
	return EMBER_VEC_PUSH(m->v, m->n, m->alloc, e);
}

struct agent_perfmap *agent_perfmap_parse(const char *data, size_t size, int *err)
{
	struct agent_perfmap *m = calloc(1, sizeof(*m));
	const char *end = data + size;
	int e = 0;

	if (!m) {
		*err = -ENOMEM;
		return NULL;
	}
	ember_buf_init(&m->names, PERFMAP_MAX_BYTES);
	for (const char *p = data; !e && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);

		e = add_line(m, p, len);
		p += len + 1;
	}
	if (e) {
		agent_perfmap_free(m);
		*err = e;
		return NULL;
	}
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
	return m;
}

struct agent_perfmap *agent_perfmap_new(const char *path, int *err)
{
	struct ember_buf b;
	struct agent_perfmap *m = NULL;
	struct stat st;
	char chunk[65536];
	ssize_t n = 0;
	int e = 0, fd;

	/* Written by the profiled process and read by root: no symlinks, only
	 * a regular file, at most PERFMAP_MAX_BYTES. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*err = fd < 0 ? -errno : -EINVAL;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	ember_buf_init(&b, PERFMAP_MAX_BYTES);
	while (!e && (n = read(fd, chunk, sizeof(chunk))) > 0)
		e = ember_buf_append(&b, chunk, (size_t)n);
	close(fd);
	if (!e && n < 0)
		e = -errno;
	if (!e)
		m = agent_perfmap_parse(b.data ? b.data : "", b.len, &e);
	ember_buf_release(&b);
	if (!m)
		*err = e;
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
