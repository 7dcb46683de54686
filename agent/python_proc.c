/*
 * python_proc.c - a process' CPython: found at each scan of its mappings
 * (a file python_elf.c recognized), its entry in the BPF pyprocs map
 * (where _PyRuntime and the eval function are, and the offsets of its
 * version), and the names of its Python frames.
 *
 * A Python frame arrives as a code object's address and an instruction
 * (AGENT_PY_FRAME_TAG); the code object is read from the process
 * (process_vm_readv: the agent needs CAP_SYS_PTRACE, as root has) once,
 * cached per process, and checked again when used after
 * AGENT_PY_RECHECK_NS (an object freed and its address reused by another
 * code object is read anew; one that cannot be read any more, its
 * process gone, keeps its names).  With the ring transport the code
 * objects of each distinct stack are read as its first sample arrives
 * (agent_procs_python_warm), so a process that exits before its
 * interval's profile is built is named too.  The cache is bounded (AGENT_PY_CACHE_MAX
 * code objects, AGENT_PY_CACHE_BYTES of names and tables): past it, it is
 * emptied and refilled.
 */
/* process_vm_readv: _GNU_SOURCE, defined for every file by the build */
#include "agent_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

struct py_entry {
	uint64_t code;
	struct agent_py_code c;
	uint64_t checked_ns;	/* ember_monotonic_ns() of its last read or check */
	int err;		/* 0, or why it could not be read (not named) */
};

struct agent_python {
	const struct agent_python_layout *layout;
	struct agent_py_reader reader;
	pid_t pid;
	uint64_t runtime;	/* where the pyprocs entry says _PyRuntime is */
	struct py_entry *v;
	size_t n, alloc, bytes;
	struct ember_hset index;
};

static int read_process(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct agent_python *py = ctx;
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	ssize_t got = process_vm_readv(py->pid, &local, 1, &remote, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == n ? 0 : -EFAULT;
}

static void cache_clear(struct agent_python *py)
{
	for (size_t i = 0; i < py->n; i++)
		agent_py_code_release(&py->v[i].c);
	py->n = 0;
	py->bytes = 0;
	ember_hset_clear(&py->index);
}

void agent_python_free(struct agent_python *py)
{
	if (!py)
		return;
	cache_clear(py);
	ember_hset_release(&py->index);
	free(py->v);
	free(py);
}

/* The first mapping of pr whose file is a CPython, or NULL. */
static const struct agent_proc_map *python_mapping(const struct agent_process *pr)
{
	for (size_t i = 0; i < pr->nmaps; i++)
		if (pr->maps[i].file && pr->maps[i].file->elf.python.found)
			return &pr->maps[i];
	return NULL;
}

static struct agent_python *python_new(const struct agent_python_layout *l, pid_t pid,
				       const struct agent_python_elf *e, uint64_t bias)
{
	struct agent_python *py = calloc(1, sizeof(*py));

	if (!py)
		return NULL;
	if (ember_hset_init(&py->index)) {
		free(py);
		return NULL;
	}
	py->layout = l;
	py->pid = pid;
	py->runtime = e->runtime + bias;
	py->reader = (struct agent_py_reader){
		.layout = l, .read = read_process, .ctx = py,
		.types = { .code = e->code_type + bias, .unicode = e->unicode_type + bias,
			   .bytes = e->bytes_type + bias },
	};
	return py;
}

/* An interpreter of a version without a layout: said once a process. */
static void note_unknown(struct agent_procs_stats *st, struct agent_process *pr,
			 const struct agent_proc_map *m)
{
	uint32_t v = m->file->elf.python.version;

	st->python_unsupported++;
	if (pr->python_warned)
		return;
	pr->python_warned = true;
	if (v)
		pr_info("agent: pid %d (%s) runs CPython %u.%u (%s), whose frames this agent does "
			"not read: its native frames only",
			(int)pr->pid, pr->comm, v >> 24, (v >> 16) & 0xff, m->path);
	else
		pr_info("agent: pid %d (%s) runs a CPython without Py_Version (before 3.11: %s): "
			"its native frames only", (int)pr->pid, pr->comm, m->path);
}

int agent_python_attach(int pyprocs_fd, struct agent_procs_stats *st, struct agent_process *pr)
{
	const struct agent_proc_map *m = python_mapping(pr);
	const struct agent_python_layout *l;
	const struct agent_python_elf *e;
	struct agent_pyproc v = { 0 };
	uint32_t key = (uint32_t)pr->pid;
	uint64_t runtime;

	l = m ? agent_python_layout(m->file->elf.python.version) : NULL;
	if (m && !l)
		note_unknown(st, pr, m);
	if (!l) {
		agent_python_free(pr->python);
		pr->python = NULL;
		bpf_map_delete_elem(pyprocs_fd, &key);
		return 0;
	}
	e = &m->file->elf.python;
	runtime = e->runtime + m->bias;
	if (pr->python && (pr->python->runtime != runtime || pr->python->layout != l)) {
		agent_python_free(pr->python);
		pr->python = NULL;
	}
	if (!pr->python) {
		pr->python = python_new(l, pr->pid, e, m->bias);
		if (!pr->python)
			return -ENOMEM;
		st->python_processes++;
		pr_debug("agent: pid %d (%s): CPython %s at %s", (int)pr->pid, pr->comm, l->name,
			 m->path);
	}
	v.runtime = runtime;
	v.eval_start = e->eval + m->bias;
	v.eval_len = e->eval_size;
	v.off = l->off;
	return bpf_map_update_elem(pyprocs_fd, &key, &v, BPF_ANY) ? -errno : 0;
}

static bool entry_equal(const void *ctx, size_t idx, const void *key)
{
	const struct agent_python *py = ctx;

	return py->v[idx].code == *(const uint64_t *)key;
}

static size_t entry_bytes(const struct py_entry *e)
{
	return sizeof(*e) + e->c.linetable_len + (e->c.qualname ? strlen(e->c.qualname) : 0) +
	       (e->c.filename ? strlen(e->c.filename) : 0);
}

/* The entry of code, read now when new or when its check is due. */
static struct py_entry *code_entry(struct agent_python *py, uint64_t code, uint64_t now,
				   struct agent_procs_stats *st)
{
	uint64_t h = ember_hash(&py->index.key, &code, sizeof(code));
	size_t i = ember_hset_find(&py->index, h, entry_equal, py, &code);
	struct agent_py_code_id id;
	struct py_entry *e;

	if (i != SIZE_MAX) {
		e = &py->v[i];
		if (now - e->checked_ns < AGENT_PY_RECHECK_NS)
			return e;
		/* named: kept unless the object now says otherwise (one that
		 * cannot be read, its process gone, keeps its names) */
		if (!e->err && (agent_py_code_head(&py->reader, code, &id) ||
				!memcmp(&id, &e->c.id, sizeof(id)))) {
			e->checked_ns = now;
			return e;
		}
		py->bytes -= entry_bytes(e);
		agent_py_code_release(&e->c);
	} else {
		if (py->n >= AGENT_PY_CACHE_MAX || py->bytes > AGENT_PY_CACHE_BYTES) {
			cache_clear(py);
			st->python_cache_cleared++;
		}
		if (py->n >= py->alloc &&
		    ember_vec_grow((void **)&py->v, &py->alloc, py->n, sizeof(*py->v)))
			return NULL;
		if (ember_hset_insert(&py->index, h, py->n))
			return NULL;
		e = &py->v[py->n++];
		*e = (struct py_entry){ .code = code }; /* the vector's new slot is not zeroed */
	}
	e->err = agent_py_code_read(&py->reader, code, &e->c);
	e->checked_ns = now;
	py->bytes += entry_bytes(e);
	if (e->err) {
		st->python_code_unread++;
		pr_debug("agent: pid %d: code object at 0x%" PRIx64 " not read: %s", (int)py->pid,
			 code, strerror(-e->err));
	} else {
		st->python_code_read++;
	}
	return e;
}

int agent_python_frame(struct agent_python *py, uint64_t frame, struct agent_procs_stats *st,
		       struct agent_py_frame *out)
{
	uint64_t code = (frame & AGENT_PY_FRAME_CODE_MASK) << 3;
	uint32_t idx = (uint32_t)((frame >> AGENT_PY_FRAME_IDX_SHIFT) & AGENT_PY_FRAME_IDX_MAX);
	struct py_entry *e = py ? code_entry(py, code, ember_monotonic_ns(), st) : NULL;

	if (!e)
		return -ENOMEM;
	if (e->err)
		return e->err;
	out->qualname = e->c.qualname;
	out->filename = e->c.filename;
	out->firstlineno = e->c.id.firstlineno;
	out->line = agent_py_line(e->c.linetable, e->c.linetable_len, e->c.id.firstlineno, idx);
	return 0;
}
