/*
 * perfmap.c - names of JIT-compiled code from /tmp/perf-PID.map, the
 * file runtimes (V8 with --perf-basic-prof, the JVM's `jcmd PID
 * Compiler.perfmap` or perf-map-agent, .NET, LuaJIT) write for perf: one
 * "START SIZE NAME" line (hex) a function.  Read through /proc/PID/root,
 * with the pid the process has in its own namespace, so a containerized
 * runtime's map is found too.
 *
 * Read when a frame in anonymous executable memory is not named by the
 * map held (none yet, or code compiled since): a map written after the
 * process started, or one that grows, is picked up, at most once per
 * AGENT_PERFMAP_RETRY_NS a process and only when the file's size or
 * mtime changed.  The map is written by the profiled, unprivileged
 * process and read by root: opened without following symlinks
 * (agent_open_mapped), refused unless a regular file owned by the
 * process's uid or root, at most AGENT_PERFMAP_MAX_BYTES and
 * AGENT_PERFMAP_MAX_ENTRIES (a refusal counted, logged once a process).
 * The process's jitdump (jitdump.c) is read at the same time, and its
 * entries win over the map's.
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

struct agent_perfmap *agent_perfmap_new(int *err)
{
	struct agent_perfmap *m = calloc(1, sizeof(*m));

	if (!m) {
		*err = -ENOMEM;
		return NULL;
	}
	ember_buf_init(&m->names, AGENT_PERFMAP_MAX_BYTES);
	return m;
}

int agent_perfmap_add(struct agent_perfmap *m, uint64_t start, uint64_t size, const char *name,
		      size_t len)
{
	struct pm_entry e = { .start = start, .size = size, .name = m->names.len };
	static const char nul;

	if (m->n >= AGENT_PERFMAP_MAX_ENTRIES)
		return -E2BIG;
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&m->names, name, len));
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&m->names, &nul, 1));
	return EMBER_VEC_PUSH(m->v, m->n, m->alloc, e);
}

void agent_perfmap_sort(struct agent_perfmap *m)
{
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_entry);
}

/* One "START SIZE NAME" line (hex numbers, NAME to the end of the line);
 * other lines are skipped. */
static int add_line(struct agent_perfmap *m, const char *line, size_t len)
{
	char buf[AGENT_JIT_NAME_MAX];
	uint64_t start, size;
	int pos = 0;

	if (len >= sizeof(buf))
		return 0; /* a name this long is not a function name */
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (sscanf(buf, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &pos) < 2 || !pos ||
	    !buf[pos] || size == 0 || start + size < start)
		return 0;
	return agent_perfmap_add(m, start, size, buf + pos, len - (size_t)pos);
}

struct agent_perfmap *agent_perfmap_parse(const char *data, size_t size, int *err)
{
	struct agent_perfmap *m = agent_perfmap_new(err);
	const char *end = data + size;
	int e = 0;

	if (!m)
		return NULL;
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
	agent_perfmap_sort(m);
	return m;
}

/* The map on fd, read to its end (at most AGENT_PERFMAP_MAX_BYTES). */
static struct agent_perfmap *read_fd(int fd, int *err)
{
	struct ember_buf b;
	struct agent_perfmap *m = NULL;
	char chunk[65536];
	ssize_t n = 0;
	int e = 0;

	ember_buf_init(&b, AGENT_PERFMAP_MAX_BYTES);
	while (!e && (n = read(fd, chunk, sizeof(chunk))) > 0)
		e = ember_buf_append(&b, chunk, (size_t)n);
	if (!e && n < 0)
		e = -errno;
	if (!e)
		m = agent_perfmap_parse(b.data ? b.data : "", b.len, &e);
	ember_buf_release(&b);
	if (!m)
		*err = e;
	return m;
}

const char *agent_jit_file_refusal(const struct agent_process *pr, const struct stat *st,
				   size_t max_bytes, char *why, size_t size)
{
	if (st->st_uid != pr->uid && st->st_uid != 0)
		snprintf(why, size, "owned by uid %u, not the process's (%u) or root",
			 (unsigned)st->st_uid, (unsigned)pr->uid);
	else if ((uint64_t)st->st_size > max_bytes)
		snprintf(why, size, "larger than %zu MiB (%" PRId64 " bytes)", max_bytes >> 20,
			 (int64_t)st->st_size);
	else
		return NULL;
	return why;
}

void agent_jit_refuse(struct agent_procs *p, struct agent_process *pr, bool *warned,
		      const char *what, const char *path, const char *why)
{
	agent_procs_note_perfmap(p, true);
	if (*warned)
		return;
	*warned = true;
	pr_warn("agent: pid %d (%s): %s '%s' ignored: %s", (int)pr->pid, pr->comm, what, path,
		why);
}

/* Read pr's map again if it changed since the last try. */
static void refresh(struct agent_procs *p, struct agent_process *pr)
{
	char path[128], why[128];
	struct agent_perfmap *m;
	struct stat st;
	int fd, err = 0;
	int64_t mtime_ns;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", (int)pr->pid,
		 (int)pr->nspid);
	fd = agent_open_mapped(path, &st);
	if (fd == -ELOOP || fd == -EINVAL) {
		agent_jit_refuse(p, pr, &pr->jit.warned, "perf map", path,
				 fd == -ELOOP ? "a symlink" : "not a regular file");
		return;
	}
	if (fd < 0)
		return; /* not written (yet) */
	mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (pr->jit.tried && st.st_size == pr->jit.size && mtime_ns == pr->jit.mtime_ns) {
		close(fd);
		return; /* unchanged */
	}
	pr->jit.size = st.st_size;
	pr->jit.mtime_ns = mtime_ns;
	if (agent_jit_file_refusal(pr, &st, AGENT_PERFMAP_MAX_BYTES, why, sizeof(why))) {
		close(fd);
		agent_jit_refuse(p, pr, &pr->jit.warned, "perf map", path, why);
		return;
	}
	m = read_fd(fd, &err);
	close(fd);
	if (!m) {
		if (err == -E2BIG)
			snprintf(why, sizeof(why), "more than %zu entries", AGENT_PERFMAP_MAX_ENTRIES);
		else
			snprintf(why, sizeof(why), "%s", strerror(-err));
		agent_jit_refuse(p, pr, &pr->jit.warned, "perf map", path, why);
		return;
	}
	agent_perfmap_free(pr->jit.map);
	pr->jit.map = m;
	agent_procs_note_perfmap(p, false);
}

/* A jitdump's entry first: it names the code the runtime loaded last at
 * an address, where a perf map may keep an older line. */
static const char *lookup(const struct agent_jit *j, uint64_t addr)
{
	const char *name = j->dump ? agent_jitdump_lookup(j->dump, addr) : NULL;

	if (!name && j->map)
		name = agent_perfmap_lookup(j->map, addr);
	return name;
}

const char *agent_perfmap_name(struct agent_procs *p, struct agent_process *pr, uint64_t addr)
{
	const char *name = lookup(&pr->jit, addr);
	uint64_t now;

	if (name)
		return name;
	now = ember_monotonic_ns();
	if (pr->jit.tried && now - pr->jit.tried_ns < AGENT_PERFMAP_RETRY_NS)
		return NULL;
	refresh(p, pr);
	agent_jitdump_refresh(p, pr);
	pr->jit.tried = true;
	pr->jit.tried_ns = now;
	return lookup(&pr->jit, addr);
}

void agent_perfmap_forget(struct agent_process *pr)
{
	agent_perfmap_free(pr->jit.map);
	agent_jitdump_free(pr->jit.dump);
	memset(&pr->jit, 0, sizeof(pr->jit));
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
