/*
 * jitdump.c - names of JIT-compiled code from jit-PID.dump, the file
 * runtimes write for `perf inject --jit` (V8 and so Node.js with
 * --perf-prof, a JVM with perf's jvmti agent, .NET with
 * DOTNET_PerfMapEnabled=1, ...).  Format: Linux tools/perf/util/jitdump.h,
 * version 1, in the writer's byte order (x86-64 only here: little-endian;
 * a file of the other order is refused):
 *
 *   header  u32 magic 'JiTD' (0x4A695444), u32 version, u32 total_size
 *           (the header's, records start there), u32 elf_mach, u32 pad1,
 *           u32 pid, u64 timestamp, u64 flags                  (40 bytes)
 *   record  u32 id, u32 total_size (the record's, header included),
 *           u64 timestamp                                       (16 bytes)
 *     0 CODE_LOAD   u32 pid, u32 tid, u64 vma, u64 code_addr, u64 code_size,
 *                   u64 code_index, the name NUL-terminated, the code bytes
 *     1 CODE_MOVE   u32 pid, u32 tid, u64 vma, u64 old_code_addr,
 *                   u64 new_code_addr, u64 code_size, u64 code_index
 *     2 DEBUG_INFO, 4 UNWINDING_INFO: skipped; 3 CODE_CLOSE: the end
 *
 * The writer mmaps the file executable so perf records it: the agent finds
 * it among the process's executable mappings (a file named jit-NSPID.dump)
 * and opens the mapped file itself (/proc/PID/map_files), else its path
 * inside the process's root without following a symlink.  The file is
 * written by the profiled, unprivileged process and read by root: a
 * regular file owned by the process's uid or root, at most
 * AGENT_JITDUMP_MAX_BYTES, every length checked against its record and
 * the file before it is followed, entries and names bounded as a perf
 * map's.  It only grows, so it is read incrementally: each read parses
 * from where the last one stopped (a record still being written is left
 * for the next); a file that shrinks is refused.  Read with the perf map
 * (perfmap.c), by the same rule: when a JIT frame is not named, at most
 * once per AGENT_PERFMAP_RETRY_NS a process.  A later load at an address
 * replaces the earlier one (a runtime reuses freed code memory); a move
 * carries the name to its new address.
 *
 * The file stays open while the process is known: V8 writes it through a
 * 4 KiB stdio buffer, so the records of the code compiled last reach the
 * file only when more code follows or at exit, when /proc/PID is gone but
 * the descriptor still reads the file (the interval holding the exit is
 * then named in full).
 */
#include "agent_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JD_MAGIC 0x4A695444u
#define JD_VERSION 1
#define JD_HEADER 40		/* the header's fixed part */
#define JD_HEADER_MAX 4096	/* a header claiming more is not one */
#define JD_RECORD 16		/* a record's header */
#define JD_LOAD 40		/* CODE_LOAD's fixed part, after the record header */
#define JD_MOVE 48		/* CODE_MOVE's */

enum jd_record_id {
	JD_CODE_LOAD = 0,
	JD_CODE_MOVE = 1,
	JD_CODE_DEBUG_INFO = 2,
	JD_CODE_CLOSE = 3,
	JD_CODE_UNWINDING_INFO = 4,
};

struct jd_entry {
	uint64_t start, size;	/* size 0: moved away */
	uint32_t name, len;	/* in names */
};

/* Invariants: by_start holds one index of v per distinct start; names
 * holds every name once, without NUL; map is v's live entries sorted,
 * rebuilt after a read that changed v. */
struct agent_jitdump {
	struct jd_entry *v;
	size_t n, alloc;
	struct ember_hset by_start;
	struct ember_buf names;
	uint64_t offset;	/* the next record's; 0: the header not read */
	bool closed;		/* CODE_CLOSE read */
	bool changed;		/* v changed since map was built */
	struct agent_perfmap *map;
	int fd;			/* the file, -1: not opened */
	char path[256];		/* how it was opened (messages) */
};

/* Where a parse reads: len bytes at off, exactly, or a negative errno. */
struct jd_src {
	int (*read_at)(void *ctx, uint64_t off, void *buf, size_t len);
	void *ctx;
	uint64_t size;		/* bytes there are to parse */
};

struct agent_jitdump *agent_jitdump_new(int *err)
{
	struct agent_jitdump *jd = calloc(1, sizeof(*jd));

	if (!jd) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = ember_hset_init(&jd->by_start);
	if (*err) {
		free(jd);
		return NULL;
	}
	ember_buf_init(&jd->names, AGENT_PERFMAP_MAX_BYTES);
	jd->fd = -1;
	return jd;
}

void agent_jitdump_free(struct agent_jitdump *jd)
{
	if (!jd)
		return;
	free(jd->v);
	ember_hset_release(&jd->by_start);
	ember_buf_release(&jd->names);
	agent_perfmap_free(jd->map);
	if (jd->fd >= 0)
		close(jd->fd);
	free(jd);
}

static bool same_start(const void *ctx, size_t idx, const void *key)
{
	const struct agent_jitdump *jd = ctx;

	return jd->v[idx].start == *(const uint64_t *)key;
}

static size_t find(const struct agent_jitdump *jd, uint64_t start, uint64_t *h)
{
	*h = ember_hash(&jd->by_start.key, &start, sizeof(start));
	return ember_hset_find(&jd->by_start, *h, same_start, jd, &start);
}

/* Code [start, start + size) is named names[name, name + len): replaces
 * what was at start. */
static int put(struct agent_jitdump *jd, uint64_t start, uint64_t size, uint32_t name,
	       uint32_t len)
{
	struct jd_entry e = { .start = start, .size = size, .name = name, .len = len };
	uint64_t h;
	size_t i = find(jd, start, &h);

	jd->changed = true;
	if (i != SIZE_MAX) {
		jd->v[i] = e;
		return 0;
	}
	if (jd->n >= AGENT_PERFMAP_MAX_ENTRIES)
		return -E2BIG;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_PUSH(jd->v, jd->n, jd->alloc, e));
	return ember_hset_insert(&jd->by_start, h, jd->n - 1);
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static int read_header(struct agent_jitdump *jd, const struct jd_src *src)
{
	uint8_t h[JD_HEADER] = { 0 }; /* read_at fills it or fails */
	uint32_t size;

	if (src->size < JD_HEADER)
		return 0; /* not written yet */
	EMBER_FORWARD_IF_ERROR(src->read_at(src->ctx, 0, h, sizeof(h)));
	if (u32_at(h) != JD_MAGIC)
		return u32_at(h) == __builtin_bswap32(JD_MAGIC) ? -EPROTONOSUPPORT : -EBADMSG;
	if (u32_at(h + 4) != JD_VERSION)
		return -EPROTONOSUPPORT;
	size = u32_at(h + 8);
	if (size < JD_HEADER || size > JD_HEADER_MAX)
		return -EBADMSG;
	if (size <= src->size)
		jd->offset = size;
	return 0;
}

/* CODE_LOAD at off, of total bytes (>= JD_RECORD checked). */
static int code_load(struct agent_jitdump *jd, const struct jd_src *src, uint64_t off,
		     uint32_t total)
{
	uint8_t f[JD_LOAD] = { 0 }, name[AGENT_JIT_NAME_MAX];
	size_t room = total - JD_RECORD, want;
	const uint8_t *nul;
	uint64_t addr, size;
	size_t at = jd->names.len;

	if (room < JD_LOAD + 1)
		return -EBADMSG;
	EMBER_FORWARD_IF_ERROR(src->read_at(src->ctx, off + JD_RECORD, f, sizeof(f)));
	room -= JD_LOAD;
	want = room < sizeof(name) ? room : sizeof(name);
	EMBER_FORWARD_IF_ERROR(src->read_at(src->ctx, off + JD_RECORD + JD_LOAD, name, want));
	nul = memchr(name, '\0', want);
	if (!nul)
		return want < room ? 0 : -EBADMSG; /* too long for a function name: skipped */
	addr = u64_at(f + 16);
	size = u64_at(f + 24);
	if (size == 0 || addr + size < addr)
		return 0; /* names no code */
	EMBER_FORWARD_IF_ERROR(ember_buf_append(&jd->names, name, (size_t)(nul - name)));
	return put(jd, addr, size, (uint32_t)at, (uint32_t)(nul - name));
}

/* CODE_MOVE at off: the name of the code at the old address goes with it. */
static int code_move(struct agent_jitdump *jd, const struct jd_src *src, uint64_t off,
		     uint32_t total)
{
	uint8_t f[JD_MOVE] = { 0 };
	uint64_t h, from, to, size;
	size_t i;

	if (total - JD_RECORD < JD_MOVE)
		return -EBADMSG;
	EMBER_FORWARD_IF_ERROR(src->read_at(src->ctx, off + JD_RECORD, f, sizeof(f)));
	from = u64_at(f + 16);
	to = u64_at(f + 24);
	size = u64_at(f + 32);
	i = find(jd, from, &h);
	if (i == SIZE_MAX || !jd->v[i].size || size == 0 || to + size < to)
		return 0; /* moves code this file never named */
	jd->v[i].size = 0;
	return put(jd, to, size, jd->v[i].name, jd->v[i].len);
}

static int read_record(struct agent_jitdump *jd, const struct jd_src *src, uint32_t *total)
{
	uint8_t r[JD_RECORD] = { 0 };
	uint32_t id;

	EMBER_FORWARD_IF_ERROR(src->read_at(src->ctx, jd->offset, r, sizeof(r)));
	id = u32_at(r);
	*total = u32_at(r + 4);
	if (*total < JD_RECORD)
		return -EBADMSG;
	if (*total > src->size - jd->offset)
		return -EAGAIN; /* still being written */
	if (id == JD_CODE_LOAD)
		return code_load(jd, src, jd->offset, *total);
	if (id == JD_CODE_MOVE)
		return code_move(jd, src, jd->offset, *total);
	if (id == JD_CODE_CLOSE)
		jd->closed = true;
	return 0; /* DEBUG_INFO, UNWINDING_INFO, a kind of a later version: skipped */
}

/* The sorted snapshot lookups read. */
static int build_map(struct agent_jitdump *jd)
{
	int err = 0;
	struct agent_perfmap *m = agent_perfmap_new(&err);

	for (size_t i = 0; m && !err && i < jd->n; i++)
		if (jd->v[i].size)
			err = agent_perfmap_add(m, jd->v[i].start, jd->v[i].size,
						jd->names.data + jd->v[i].name, jd->v[i].len);
	if (!m)
		return err;
	if (err) {
		agent_perfmap_free(m);
		return err;
	}
	agent_perfmap_sort(m);
	agent_perfmap_free(jd->map);
	jd->map = m;
	jd->changed = false;
	return 0;
}

/* Parse src from where the last parse stopped to its end (a record not
 * complete yet stays for the next).  0, or a negative errno: -EBADMSG
 * malformed, -EPROTONOSUPPORT another version or byte order, -E2BIG past
 * the entries or names a map holds. */
static int parse(struct agent_jitdump *jd, const struct jd_src *src)
{
	uint32_t total = 0;
	int err = 0;

	if (!jd->offset)
		err = read_header(jd, src);
	while (!err && jd->offset && !jd->closed && src->size - jd->offset >= JD_RECORD) {
		err = read_record(jd, src, &total);
		if (!err)
			jd->offset += total;
	}
	if (err == -EAGAIN)
		err = 0;
	if (!err && jd->changed)
		err = build_map(jd);
	return err;
}

struct mem_src {
	const uint8_t *data;
};

static int mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct mem_src *m = ctx;

	memcpy(buf, m->data + off, len); /* parse never asks past size */
	return 0;
}

int agent_jitdump_feed(struct agent_jitdump *jd, const void *data, size_t size)
{
	struct mem_src m = { .data = data };
	struct jd_src src = { .read_at = mem_read, .ctx = &m, .size = size };

	if (size < jd->offset)
		return -EINVAL;
	return parse(jd, &src);
}

/* A file read through a window of its bytes: a record is a few pread()s
 * of the window, not one each. */
struct file_src {
	int fd;
	uint64_t off;
	size_t len;
	uint8_t buf[65536];
};

static int file_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct file_src *f = ctx;
	ssize_t n;

	if (off < f->off || off + len > f->off + f->len) {
		n = pread(f->fd, f->buf, sizeof(f->buf), (off_t)off);
		if (n < 0)
			return -errno;
		f->off = off;
		f->len = (size_t)n;
		if ((size_t)n < len)
			return -EIO; /* shorter than fstat said: truncated under us */
	}
	memcpy(buf, f->buf + (off - f->off), len);
	return 0;
}

/* Read jd's file, size bytes now, from where the last read stopped. */
static int feed_file(struct agent_jitdump *jd, uint64_t size)
{
	struct file_src *f;
	struct jd_src src = { .read_at = file_read, .size = size };
	int err;

	if (size < jd->offset)
		return -EIO; /* truncated under us */
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = jd->fd;
	f->off = f->len = 0;
	src.ctx = f;
	err = parse(jd, &src);
	free(f);
	return err;
}

const char *agent_jitdump_lookup(const struct agent_jitdump *jd, uint64_t addr)
{
	return jd->map ? agent_perfmap_lookup(jd->map, addr) : NULL;
}

/* ---- a process's jitdump ------------------------------------------------ */

/* The executable mapping of pr's jit-NSPID.dump, or NULL. */
static const struct agent_proc_map *dump_mapping(const struct agent_process *pr)
{
	char name[32];
	size_t nlen = (size_t)snprintf(name, sizeof(name), "/jit-%d.dump", (int)pr->nspid);

	for (size_t i = 0; i < pr->nmaps; i++) {
		const char *path = pr->maps[i].path;
		size_t len = path ? strlen(path) : 0;

		if (len > nlen && !strcmp(path + len - nlen, name))
			return &pr->maps[i];
	}
	return NULL;
}

/* Open pr's jitdump into jd: the mapped file itself, else its path in
 * pr's root (never through a symlink).  0, or -ENOENT when pr maps none. */
static int open_dump(const struct agent_process *pr, struct agent_jitdump *jd)
{
	const struct agent_proc_map *m = dump_mapping(pr);
	char path[600];
	struct stat st;
	int fd;

	if (!m)
		return -ENOENT;
	snprintf(jd->path, sizeof(jd->path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)pr->pid, m->start, m->end);
	fd = agent_open_mapped(jd->path, &st);
	if (fd < 0 && fd != -EINVAL) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pr->pid, m->path);
		snprintf(jd->path, sizeof(jd->path), "%s", m->path);
		fd = agent_open_mapped(path, &st);
	}
	if (fd >= 0)
		jd->fd = fd;
	return fd < 0 ? fd : 0;
}

static void explain(int err, char *why, size_t size)
{
	if (err == -E2BIG)
		snprintf(why, size, "more than %zu entries or %zu MiB of names",
			 AGENT_PERFMAP_MAX_ENTRIES, AGENT_PERFMAP_MAX_BYTES >> 20);
	else if (err == -EBADMSG)
		snprintf(why, size, "malformed (not a jitdump, or a record's size wrong)");
	else if (err == -EPROTONOSUPPORT)
		snprintf(why, size, "not version %d in this machine's byte order", JD_VERSION);
	else
		snprintf(why, size, "%s", strerror(-err));
}

/* Read more of jd's file, open: 0, 1 when it is unchanged, or a negative
 * errno and the refusal in why. */
static int read_more(const struct agent_process *pr, struct agent_jitdump *jd, char *why,
		     size_t size)
{
	struct stat st;
	int err;

	if (fstat(jd->fd, &st)) {
		err = -errno;
		explain(err, why, size);
		return err;
	}
	if ((uint64_t)st.st_size == jd->offset)
		return 1;
	if (agent_jit_file_refusal(pr, &st, AGENT_JITDUMP_MAX_BYTES, why, size))
		return -EPERM;
	err = feed_file(jd, (uint64_t)st.st_size);
	if (err)
		explain(err, why, size);
	return err;
}

int agent_jitdump_open(struct agent_process *pr)
{
	int err = 0;

	if (pr->jit.dump_refused || (pr->jit.dump && pr->jit.dump->fd >= 0) ||
	    !dump_mapping(pr))
		return 0;
	if (!pr->jit.dump && !(pr->jit.dump = agent_jitdump_new(&err)))
		return err;
	return open_dump(pr, pr->jit.dump);
}

void agent_jitdump_refresh(struct agent_procs *p, struct agent_process *pr)
{
	struct agent_jitdump *jd;
	char why[160];
	int err = agent_jitdump_open(pr);

	jd = pr->jit.dump;
	if (err || !jd || jd->fd < 0) {
		if (jd && (err == -ELOOP || err == -EINVAL)) {
			pr->jit.dump_refused = true;
			agent_jit_refuse(p, pr, &pr->jit.dump_warned, "jitdump", jd->path,
				 err == -ELOOP ? "a symlink" : "not a regular file");
		}
		return; /* none, gone (an exit), or not readable now */
	}
	err = read_more(pr, jd, why, sizeof(why));
	if (err < 0) {
		pr->jit.dump_refused = true; /* the names read so far are kept */
		agent_jit_refuse(p, pr, &pr->jit.dump_warned, "jitdump", jd->path, why);
	}
	if (err)
		return;
	agent_procs_note_perfmap(p, false);
	pr_debug("agent: pid %d (%s): jitdump '%s' read to byte %" PRIu64 ": %zu entries",
		 (int)pr->pid, pr->comm, jd->path, jd->offset, jd->n);
}
