// SPDX-License-Identifier: GPL-2.0
/*
 * profile.bpf.c - the kernel side of ember-agent: on every CPU-clock perf
 * event, record the running task's kernel stack (bpf_get_stackid) and
 * user stack, and count the distinct (process, thread name, stacks) in
 * maps that user space drains every --interval seconds.
 *
 * The user stack is walked here, frame by frame (bpf_loop): a frame whose
 * pc lies in a mapping whose file has an Ember unwind table is unwound by
 * that table, exactly as docs/unwind-format.md sections 3 and 4 say (page
 * hash map, bounded binary search of pc_low in the mmapable data array,
 * the rule from the rules array); any other frame by the frame pointer.
 * Both mix per frame.  A walk deeper than AGENT_MAX_FRAMES is marked
 * truncated; every other stop says why (enum agent_stack_flags).
 *
 * In a CPython process (pyprocs: user space found the interpreter and
 * knows its version's offsets), the walk also follows the thread's chain
 * of Python frames (_PyInterpreterFrame.previous, from the thread state
 * whose thread_id is the task's fs base): where the native walk meets the
 * eval function (_PyEval_EvalFrameDefault), the Python frames it runs
 * are recorded in its place, up to the one it was entered for (is_entry),
 * so a C extension that calls back into Python shows Python, native,
 * Python.  A Python frame is its code object and instruction
 * (AGENT_PY_FRAME_TAG), named by user space (python_proc.c).
 *
 * Aggregation is double-buffered: samples go to the maps of set `gen`
 * (0 or 1), user space flips `gen` and drains the other set, so nothing
 * it reads can change under it.  With transport_ringbuf (the agent's
 * developer option --transport ringbuf, kept to measure the two against
 * each other: docs/performance-notes.md), each sample is instead one
 * record in the samples ring buffer, counted by user space.
 *
 * With --off-cpu (offcpu_threshold_ns > 0), blocked time too, in three
 * steps on tracepoints only, so that kernels built without kprobes or
 * fentry (no hook in a task right after it is switched back in) have it:
 *  - sched_switch, prev: a chosen user task that leaves the CPU blocked
 *    (not preempted) is stamped in its task-local storage, so a task
 *    woken on another CPU finds its own stamp (a per-CPU key would not);
 *  - sched_switch, next: the stamp taken, a block of d ns is kept with
 *    probability min(1, d / T) and weighted max(d, T), T the value in
 *    force (offcpu_t_ns, raised by user space past its budget of kept
 *    blocks a second; unbiased at any T: docs/agent.md); a kept one
 *    records the task's kernel stack (still the blocked one:
 *    bpf_get_task_stack) and its user registers;
 *  - rseq_update, in the task itself, on its return to user space after
 *    a switch (tasks with rseq; sys_exit, attached by user space only
 *    while tasks without rseq block, for the others): when its
 *    user registers are those it blocked with, the user stack is walked
 *    as a CPU sample's, and the record sent.  Only kept blocks pay for a
 *    walk; a switch pays two task-storage lookups, a system call nothing
 *    (unless sys_exit is attached).
 * Off-CPU records go through the samples ring only (--transport ringbuf).
 *
 * Shared types: profile_types.h.  Loader: profile.c (skeleton).
 * CO-RE: vmlinux.h is generated in the build from the running kernel's
 * BTF (agent/CMakeLists.txt).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "profile_types.h"
#define EFAULT 14

char LICENSE[] SEC("license") = "GPL";

/* ---- tunables, set by user space between open and load ---------------- */

const volatile bool filter_pids = false;   /* only pids in pid_filter */
const volatile bool filter_cgroup = false; /* only tasks under cgroup_filter[0] */
const volatile __u64 notify_interval_ns = 200000000; /* per pid, at most */
const volatile bool transport_ringbuf = false; /* samples ring, not the count maps */
const volatile __u64 samples_wake_bytes = 65536; /* wake user space past this */
const volatile bool time_transport = false; /* developer: AGENT_STAT_TRANSPORT_NS */
const volatile __u64 offcpu_threshold_ns = 0; /* --off-cpu: T at start, 0 = off */
const volatile bool offcpu_rseq_hook = false; /* --off-cpu: on_rseq_update loaded */

/* ---- state user space reads and writes through the skeleton ----------- */

__u32 gen = 0;		  /* which set of aggregation maps samples go to */
__u64 first_table_ns = 0; /* bpf_ktime_get_ns() of the first table-unwound frame */
__u64 offcpu_t_ns = 0;	  /* --off-cpu: the T in force (user space raises it) */
__u32 offcpu_sys_exit_on = 0; /* --off-cpu: on_sys_exit attached (user space) */

/* ---- maps -------------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct agent_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct agent_page_key);
	__type(value, struct agent_page_val);
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct agent_data_chunk);
} unwind_data SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 262144);
	__type(key, __u32);
	__type(value, struct agent_unwind_rule);
} unwind_rules SEC(".maps");

#define USTACKS_MAP(name)                                                    \
	struct {                                                             \
		__uint(type, BPF_MAP_TYPE_HASH);                             \
		__uint(map_flags, BPF_F_NO_PREALLOC);                        \
		__uint(max_entries, 16384);                                  \
		__type(key, __u64);                                          \
		__type(value, struct agent_ustack);                          \
	} name SEC(".maps")
#define COUNTS_MAP(name)                                                     \
	struct {                                                             \
		__uint(type, BPF_MAP_TYPE_HASH);                             \
		__uint(map_flags, BPF_F_NO_PREALLOC);                        \
		__uint(max_entries, 16384);                                  \
		__type(key, struct agent_count_key);                         \
		__type(value, __u64);                                        \
	} name SEC(".maps")
#define KSTACKS_MAP(name)                                                    \
	struct {                                                             \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                      \
		__uint(max_entries, 8192);                                   \
		__type(key, __u32);                                          \
		__uint(value_size, AGENT_MAX_KFRAMES * sizeof(__u64));        \
	} name SEC(".maps")

USTACKS_MAP(ustacks0);
USTACKS_MAP(ustacks1);
COUNTS_MAP(counts0);
COUNTS_MAP(counts1);
KSTACKS_MAP(kstacks0);
KSTACKS_MAP(kstacks1);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct agent_pyproc);
} pyprocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

/* --off-cpu: per task, in task-local storage (a lookup in the task
 * itself, no hash; freed with the task), so a task woken on another CPU
 * finds its own stamp: bpf_ktime_get_ns() when it blocked, 0 when not. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} offcpu_start SEC(".maps");

/* --off-cpu: a kept block, from its end (the switch-in) to the return to
 * user space that sends it; created when kept, deleted when sent. */
struct offcpu_pending {
	__u64 weight_ns;
	__u64 pc, sp, fp;	/* user registers when it blocked */
	__s64 nkernel;		/* frames in kips */
	__u64 kips[AGENT_MAX_KFRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_pending);
} offcpu_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} notified SEC(".maps");

/* --transport ringbuf: sized by user space (a page when unused) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_sample_rec);
} rec_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AGENT_STAT_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_ustack);
} scratch SEC(".maps");

/* ---- helpers ----------------------------------------------------------- */

static __always_inline void stat_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n; /* per-CPU: no other writer */
}

/*
 * Tell user space about pid: an unknown process or pc at most once per
 * notify_interval_ns, waking it at once (a scan is wanted now; forced:
 * records that did not wake it may be queued before); exec and exit
 * without a wakeup, read at its next one (at most a second later): a
 * build's short processes then cost user space nothing but that read.
 */
static __always_inline void notify(__u32 kind, __u32 pid, __u64 addr)
{
	__u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&notified, &pid);
	__u64 wake = BPF_RB_NO_WAKEUP;
	struct agent_event *e;

	if (kind != AGENT_EVENT_EXEC && kind != AGENT_EVENT_EXIT) {
		if (last && now - *last < notify_interval_ns)
			return;
		bpf_map_update_elem(&notified, &pid, &now, BPF_ANY);
		wake = BPF_RB_FORCE_WAKEUP;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		stat_add(AGENT_STAT_EVENTS_LOST, 1);
		return;
	}
	e->kind = kind;
	e->pid = pid;
	e->addr = addr;
	e->ktime_ns = now;
	bpf_ringbuf_submit(e, wake);
}

static __always_inline bool task_chosen(__u32 pid)
{
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &pid))
		return false;
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	return true;
}

/* ---- the user-stack walk ----------------------------------------------- */

struct walk {
	__u64 pc, sp, fp;
	__u64 hash;
	__u32 pid;
	__u32 n;	/* frames recorded */
	__u32 flags;	/* enum agent_stack_flags */
	__u32 exact;	/* pc is exact (innermost, or after a signal frame),
			   not a return address */
	/* a Python process (pyprocs): its thread's frames, walked where the
	 * native walk meets the interpreter's eval function */
	__u64 py_frame;	/* the next _PyInterpreterFrame, 0: none (left) */
	__u64 eval_start, eval_len;
	__u32 py_done;	/* the Python frames of the eval frame at pc are recorded:
			   step it without recording it */
	__u32 pad;
	struct agent_py_offsets off;
};

/*
 * The searches are global (noinline, non-static) functions: the verifier
 * checks such a function once, with every argument unknown, instead of
 * once per path of its caller, and a bounded binary search over unknown
 * bounds converges where one over known constants would explode.  So even
 * the bounds the caller knows (lo = 0) are passed in.
 */

/* Index in procs[pid] of the mapping holding pc (sorted by start), or -1. */
__noinline int agent_find_mapping(__u32 pid, __u64 pc, __u32 lo)
{
	const struct agent_proc *p = bpf_map_lookup_elem(&procs, &pid);
	__u32 hi, idx;

	if (!p)
		return -1;
	hi = p->nmaps;
	if (hi > AGENT_PROC_MAPPINGS)
		return -1;
	for (int i = 0; i < 9; i++) { /* 2^9 > AGENT_PROC_MAPPINGS */
		__u32 mid;

		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		if (p->maps[mid & (AGENT_PROC_MAPPINGS - 1)].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || lo > AGENT_PROC_MAPPINGS)
		return -1;
	idx = (lo - 1) & (AGENT_PROC_MAPPINGS - 1);
	if (pc >= p->maps[idx].end)
		return -1;
	return idx;
}

/* u16 at global byte offset off (even) of unwind_data; -1 if absent. */
static __always_inline int data_u16(__u32 off)
{
	__u32 chunk = off / AGENT_DATA_CHUNK;
	struct agent_data_chunk *c = bpf_map_lookup_elem(&unwind_data, &chunk);

	if (!c)
		return -1;
	return *(__u16 *)&c->b[off & (AGENT_DATA_CHUNK - 2)];
}

static __always_inline int data_u8(__u32 off)
{
	__u32 chunk = off / AGENT_DATA_CHUNK;
	struct agent_data_chunk *c = bpf_map_lookup_elem(&unwind_data, &chunk);

	if (!c)
		return -1;
	return c->b[off & (AGENT_DATA_CHUNK - 1)];
}

/* Index of the last row of pc_low[lo..hi) at global offset pcl that is
 * <= low (docs/unwind-format.md section 3, step 2), or -1. */
__noinline int agent_search_page(__u32 pcl, __u32 lo, __u32 hi, __u32 low)
{
	for (int i = 0; i < 17; i++) { /* 2^17 > 65,536 rows */
		__u32 mid;
		int v;

		if (lo >= hi)
			break;
		mid = (lo + hi) / 2;
		v = data_u16(pcl + 2 * mid);
		if (v < 0)
			return -1;
		if ((__u32)v <= low)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo - 1;
}

/*
 * The rule covering ELF address addr of file_id (section 3, steps 1-3),
 * with its push/pop merge applied.  0; 1 when no page holds addr (END);
 * -1 when a map read fails.
 */
static __always_inline int lookup_rule(__u64 file_id, __u64 addr,
				       struct agent_unwind_rule *out)
{
	struct agent_page_key k = { .file_id = file_id, .page = addr >> 16 };
	struct agent_page_val *pg = bpf_map_lookup_elem(&unwind_pages, &k);
	__u32 nrows, low = addr & 0xffff, pcl, rule_id;
	struct agent_unwind_rule *r;
	int v, at, pal, row;

	if (!pg)
		return 1;
	nrows = (__u32)pg->nrows_m1 + 1;
	pcl = pg->data_off + 2 * (__u32)pg->npalette;
	row = agent_search_page(pcl, 0, nrows, low);
	if (row < 0) /* pc_low[0] == 0: not with a checked image */
		return -1;
	at = data_u16(pcl + 2 * (__u32)row);
	if (at < 0)
		return -1;
	if (pg->npalette <= 256)
		pal = data_u8(pcl + 2 * nrows + (__u32)row);
	else
		pal = data_u16(pcl + 2 * nrows + 2 * (__u32)row);
	if (pal < 0)
		return -1;
	v = data_u16(pg->data_off + 2 * (__u32)pal);
	if (v < 0)
		return -1;
	rule_id = pg->rule_base + (__u32)v;
	r = bpf_map_lookup_elem(&unwind_rules, &rule_id);
	if (!r)
		return -1;
	*out = *r;
	if ((r->flags & 15) && low - (__u32)at >= (__u32)(r->flags & 15))
		out->cfa_off += (r->flags & (1 << 4)) ? -8 : 8;
	return 0;
}

static __always_inline int read_user_u64(__u64 addr, __u64 *out)
{
	return bpf_probe_read_user(out, sizeof(*out), (const void *)addr);
}

/* The value of register reg (DWARF number) in the current frame: only
 * rsp and rbp are known past the innermost frame. */
static __always_inline int reg_value(const struct walk *w, __u8 reg, __u64 *v)
{
	if (reg == 7)
		*v = w->sp;
	else if (reg == 6)
		*v = w->fp;
	else
		return -1;
	return 0;
}

/* One step by rule r (section 3, step 4).  0: w holds the caller;
 * 1: outermost frame reached; < 0: stop, w->flags says why. */
static __always_inline int step_table(struct walk *w, const struct agent_unwind_rule *r,
				      __u64 addr)
{
	__u64 cfa, base, ra, fp = w->fp;
	__u8 ra_kind = r->reg_kinds & 15, fp_kind = r->reg_kinds >> 4;

	switch (r->cfa_kind) {
	case 1: /* REG */
		if (reg_value(w, r->cfa_reg, &base))
			goto unsupported;
		cfa = base + (__s64)r->cfa_off;
		break;
	case 2: /* PLT */
		cfa = w->sp + (__s64)r->cfa_off + ((addr & 15) >= (__u64)r->cfa_aux ? 8 : 0);
		break;
	case 3: /* DEREF */
		if (reg_value(w, r->cfa_reg, &base))
			goto unsupported;
		if (read_user_u64(base + (__s64)r->cfa_off, &cfa))
			goto read_failed;
		cfa += (__s64)r->cfa_aux;
		break;
	case 4: { /* SIGNAL: the ucontext's mcontext at sp + 40 */
		__u64 mc = w->sp + 40, sp;

		if (read_user_u64(mc + 80, &fp) || read_user_u64(mc + 120, &sp) ||
		    read_user_u64(mc + 128, &ra))
			goto read_failed;
		w->pc = ra;
		w->sp = sp;
		w->fp = fp;
		w->exact = 1;
		return 0;
	}
	default: /* END, INVALID */
		w->flags |= AGENT_STACK_NO_CFI;
		stat_add(AGENT_STAT_STOP_NO_CFI, 1);
		return -1;
	}
	switch (ra_kind) {
	case 1: /* UNDEFINED: the outermost frame */
		return 1;
	case 2: /* AT_CFA */
		if (read_user_u64(cfa + r->ra_off, &ra))
			goto read_failed;
		break;
	default:
		goto unsupported;
	}
	switch (fp_kind) {
	case 0: /* SAME */
		break;
	case 1: /* UNDEFINED */
		fp = 0;
		break;
	case 2: /* AT_CFA */
		if (read_user_u64(cfa + r->fp_off, &fp))
			goto read_failed;
		break;
	case 3: /* VAL_CFA */
		fp = cfa + r->fp_off;
		break;
	default:
		fp = 0; /* unknown: a later frame-pointer step stops on it */
		break;
	}
	w->pc = ra;
	w->sp = cfa;
	w->fp = fp;
	w->exact = 0;
	return 0;
unsupported:
	w->flags |= AGENT_STACK_UNSUPPORTED;
	stat_add(AGENT_STAT_STOP_UNSUPPORTED, 1);
	return -1;
read_failed:
	w->flags |= AGENT_STACK_READ_FAILED;
	stat_add(AGENT_STAT_STOP_READ, 1);
	return -1;
}

/* One step by the frame pointer: [fp] is the caller's fp, [fp + 8] the
 * return address.  0, 1 (a zero frame pointer: outermost) or < 0. */
static __always_inline int step_fp(struct walk *w)
{
	__u64 frame[2];

	if (w->fp == 0)
		return 1;
	if (w->fp < w->sp || bpf_probe_read_user(frame, sizeof(frame), (const void *)w->fp)) {
		w->flags |= AGENT_STACK_READ_FAILED;
		stat_add(AGENT_STAT_STOP_READ, 1);
		return -1;
	}
	w->sp = w->fp + 16;
	w->fp = frame[0];
	w->pc = frame[1];
	w->exact = 0;
	return 0;
}

/* Record v (a pc or a Python frame) as the next frame. */
static __always_inline void record(struct walk *w, struct agent_ustack *st, __u64 v)
{
	__u32 n = w->n;

	if (n >= AGENT_MAX_FRAMES)
		return; /* checked before: said again for the verifier */
	st->ips[n] = v;
	w->n = n + 1;
	w->hash = (w->hash ^ v) * 0x100000001b3ULL;
}

/*
 * Record the Python frame w->py_frame (its code object and instruction:
 * AGENT_PY_FRAME_TAG) and move to the one it was called from.  The frames
 * of one call of the eval function end at an entry frame (is_entry: the
 * eval function was called from C for it), so its caller is the native
 * frame at w->pc again, stepped without being recorded (w->py_done).
 */
static __always_inline void py_step(struct walk *w, struct agent_ustack *st)
{
	__u64 f = w->py_frame, code = 0, prev = 0, instr = 0, base, idx = 0;
	__u8 entry = 1;

	if (read_user_u64(f + w->off.frame_code, &code) ||
	    read_user_u64(f + w->off.frame_previous, &prev) ||
	    read_user_u64(f + w->off.frame_prev_instr, &instr) ||
	    bpf_probe_read_user(&entry, 1, (const void *)(f + w->off.frame_is_entry))) {
		w->py_frame = 0;
		w->py_done = 1;
		return;
	}
	base = code + w->off.code_adaptive;
	if (instr >= base)
		idx = ((instr - base) >> 1) + 1;
	if (idx > AGENT_PY_FRAME_IDX_MAX)
		idx = AGENT_PY_FRAME_IDX_MAX;
	record(w, st, AGENT_PY_FRAME_TAG | idx << AGENT_PY_FRAME_IDX_SHIFT |
			      ((code >> 3) & AGENT_PY_FRAME_CODE_MASK));
	w->flags |= AGENT_STACK_PYTHON;
	stat_add(AGENT_STAT_PY_FRAMES, 1);
	w->py_frame = prev;
	if (entry || !prev)
		w->py_done = 1;
}

/* Whether w->pc is in the interpreter's eval function with Python frames
 * left to record for it. */
static __always_inline bool in_eval(const struct walk *w)
{
	__u64 pc = w->pc - (w->exact ? 0 : 1);

	return w->py_frame && !w->py_done && pc - w->eval_start < w->eval_len;
}

/* bpf_loop callback: record w->pc (or, in the eval function, the Python
 * frames it runs), then step to its caller.  Returns 1 to stop the loop. */
static long walk_one(__u32 i, void *ctx)
{
	struct walk *w = ctx;
	__u32 zero = 0;
	struct agent_ustack *st = bpf_map_lookup_elem(&scratch, &zero);
	const struct agent_proc *p = bpf_map_lookup_elem(&procs, &w->pid);
	const struct agent_mapping *m;
	struct agent_unwind_rule r;
	__u64 addr = 0;
	int res, mi;

	if (!st || !p)
		return 1;
	if (w->pc == 0) {
		w->flags |= AGENT_STACK_COMPLETE;
		return 1;
	}
	if (w->n >= AGENT_MAX_FRAMES) {
		w->flags |= AGENT_STACK_TRUNCATED;
		stat_add(AGENT_STAT_TRUNCATED, 1);
		return 1;
	}
	if (in_eval(w)) {
		py_step(w, st);
		return 0;
	}
	if (w->py_done)
		w->py_done = 0; /* the eval frame, replaced by its Python frames */
	else
		record(w, st, w->pc);
	mi = agent_find_mapping(w->pid, w->pc, 0);
	if (mi < 0) {
		w->flags |= AGENT_STACK_NO_MAPPING;
		stat_add(AGENT_STAT_STOP_NO_MAPPING, 1);
		notify(AGENT_EVENT_UNKNOWN_PC, w->pid, w->pc);
		return 1;
	}
	m = &p->maps[mi & (AGENT_PROC_MAPPINGS - 1)];
	res = 1; /* no table: frame pointers */
	if (m->file_id) {
		addr = w->pc - m->bias - (w->exact ? 0 : 1);
		res = lookup_rule(m->file_id, addr, &r);
		if (res < 0) {
			w->flags |= AGENT_STACK_READ_FAILED;
			return 1;
		}
		/* An END row: no FDE covers addr (V8's embedded builtins inside
		 * node, hand-written stubs), frame pointers as without a table. */
		if (res == 0 && r.cfa_kind == 0)
			res = 1;
	}
	if (res == 0) {
		res = step_table(w, &r, addr);
		if (res == 0) {
			stat_add(AGENT_STAT_FRAMES_TABLE, 1);
			w->flags |= AGENT_STACK_TABLE;
		}
	} else {
		/* No table, or no CFI at this address (code without an FDE
		 * inside a file that has a table): try the frame pointer. */
		res = step_fp(w);
		if (res == 0)
			stat_add(AGENT_STAT_FRAMES_FP, 1);
	}
	if (res > 0)
		w->flags |= AGENT_STACK_COMPLETE;
	return res != 0;
}

/* ---- counting ---------------------------------------------------------- */

static __always_inline void count(void *counts, void *ustacks, void *kstacks,
				  struct agent_count_key *key, struct bpf_perf_event_data *ctx,
				  struct agent_ustack *st)
{
	__u64 one = 1, *c;

	key->kstack_id = bpf_get_stackid(ctx, kstacks, 0);
	if (key->kstack_id < 0 && key->kstack_id != -EFAULT)
		stat_add(AGENT_STAT_KSTACK_FAILED, 1);
	if (key->ustack_hash && !bpf_map_lookup_elem(ustacks, &key->ustack_hash) &&
	    bpf_map_update_elem(ustacks, &key->ustack_hash, st, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(ustacks, &key->ustack_hash)) {
		stat_add(AGENT_STAT_USTACK_DROPPED, 1);
		key->ustack_hash = 0;
	}
	c = bpf_map_lookup_elem(counts, key);
	if (c) {
		__sync_fetch_and_add(c, 1);
		return;
	}
	if (bpf_map_update_elem(counts, key, &one, BPF_NOEXIST) == 0)
		return;
	c = bpf_map_lookup_elem(counts, key);
	if (c)
		__sync_fetch_and_add(c, 1);
	else
		stat_add(AGENT_STAT_COUNT_DROPPED, 1);
}

/* --transport ringbuf: the sample as one record, user frames then kernel
 * frames (the current ones, or with off those of an off-CPU block, and
 * then its weighted ns), sent up to its last frame. */
static __always_inline void send_record(void *ctx, const struct agent_count_key *key,
					const struct agent_ustack *st, __u32 n,
					const struct offcpu_pending *off)
{
	__u32 zero = 0;
	struct agent_sample_rec *r = bpf_map_lookup_elem(&rec_scratch, &zero);
	__u64 size, wake;
	long nk;

	if (!r)
		return;
	r->pid = key->pid;
	r->tid = key->tid;
	r->flags = key->flags;
	__builtin_memcpy(r->comm, key->comm, sizeof(r->comm));
	n &= AGENT_MAX_FRAMES; /* 127: a mask the verifier can bound */
	if (n && bpf_probe_read_kernel(r->ips, n * sizeof(__u64), st->ips))
		n = 0;
	if (off) {
		nk = off->nkernel;
		if (nk > AGENT_MAX_KFRAMES * (long)sizeof(__u64) || nk < 0)
			nk = 0;
		if (nk && bpf_probe_read_kernel(&r->ips[n], nk, off->kips))
			nk = 0;
	} else {
		nk = bpf_get_stack(ctx, &r->ips[n], AGENT_MAX_KFRAMES * sizeof(__u64), 0);
	}
	if (nk < 0) {
		if (nk != -EFAULT)
			stat_add(AGENT_STAT_KSTACK_FAILED, 1);
		nk = 0;
	}
	nk /= sizeof(__u64);
	r->nuser = n;
	r->nkernel = nk;
	n = (n + nk) & 255;
	if (off) {
		if (n >= AGENT_MAX_FRAMES + AGENT_MAX_KFRAMES)
			return;
		r->ips[n++] = off->weight_ns;
	}
	size = __builtin_offsetof(struct agent_sample_rec, ips) + n * sizeof(__u64);
	if (size > sizeof(*r))
		return;
	wake = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= samples_wake_bytes
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(&samples, r, size, wake))
		stat_add(AGENT_STAT_SAMPLES_LOST, 1);
}

/* The user registers at the sample: the interrupted ones when it hit user
 * mode, else those saved at the task's entry into the kernel. */
static __always_inline void user_regs(struct bpf_perf_event_data *ctx,
				      struct task_struct *task, struct walk *w)
{
	struct pt_regs *regs;
	/* cs is a u16 in a union of pt_regs; the context is read in 8 bytes */
	__u64 cs = ((const __u64 *)ctx)[__builtin_offsetof(struct pt_regs, cs) / 8];

	if ((cs & 3) == 3) {
		w->pc = ctx->regs.ip;
		w->sp = ctx->regs.sp;
		w->fp = ctx->regs.bp;
		return;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	w->pc = BPF_CORE_READ(regs, ip);
	w->sp = BPF_CORE_READ(regs, sp);
	w->fp = BPF_CORE_READ(regs, bp);
}

/*
 * The thread state of the current thread in a Python process: the one
 * holding the GIL when it is this thread's (PyThreadState.thread_id is
 * its pthread_self(), the fs base), else searched in the interpreter's
 * list of threads.  Global: verified once, with the offsets unknown.
 */
__noinline __u64 agent_py_tstate(__u64 runtime, const struct agent_py_offsets *off, __u64 fsbase)
{
	__u64 ts = 0, id = 0, interp = 0;

	if (!off)
		return 0;
	if (read_user_u64(runtime + off->runtime_tstate_current, &ts))
		return 0;
	if (ts && !read_user_u64(ts + off->tstate_thread_id, &id) && id == fsbase)
		return ts;
	if (read_user_u64(runtime + off->runtime_interp_head, &interp) || !interp ||
	    read_user_u64(interp + off->interp_threads_head, &ts))
		return 0;
	for (int i = 0; i < 64 && ts; i++) {
		if (read_user_u64(ts + off->tstate_thread_id, &id))
			return 0;
		if (id == fsbase)
			return ts;
		if (read_user_u64(ts + off->tstate_next, &ts))
			return 0;
	}
	return 0;
}

/* A Python process: w learns where its eval function is and the current
 * thread's innermost Python frame (none when the thread runs no Python). */
static __always_inline void py_init(struct walk *w, struct task_struct *task)
{
	const struct agent_pyproc *py = bpf_map_lookup_elem(&pyprocs, &w->pid);
	__u64 ts, cf = 0;

	if (!py)
		return;
	w->off = py->off;
	w->eval_start = py->eval_start;
	w->eval_len = py->eval_len;
	ts = agent_py_tstate(py->runtime, &w->off, BPF_CORE_READ(task, thread.fsbase));
	if (!ts || read_user_u64(ts + w->off.tstate_cframe, &cf) || !cf ||
	    read_user_u64(cf + w->off.cframe_current_frame, &w->py_frame))
		stat_add(AGENT_STAT_PY_NO_THREAD, 1);
}

/* Walk the current task's user stack from w's registers into st and
 * fill key's stack fields; key->flags keeps the bits it has. */
static __always_inline void walk_user(struct task_struct *task, __u32 pid, struct walk *w,
				      struct agent_count_key *key, struct agent_ustack *st)
{
	if (!task->mm) {
		key->flags |= AGENT_STACK_KERNEL_THREAD;
		return;
	}
	if (!bpf_map_lookup_elem(&procs, &pid)) {
		/* Mappings not known yet: keep the leaf pc only. */
		st->ips[0] = w->pc;
		w->n = 1;
		w->hash = (w->hash ^ w->pc) * 0x100000001b3ULL;
		w->flags = AGENT_STACK_UNKNOWN_PROC;
		notify(AGENT_EVENT_UNKNOWN_PROC, pid, 0);
	} else {
		py_init(w, task);
		/* each eval frame costs one more step than it records */
		bpf_loop(2 * AGENT_MAX_FRAMES + 1, walk_one, w, 0);
	}
	st->len = w->n;
	st->flags = w->flags;
	key->flags |= w->flags;
	if (w->n) {
		key->ustack_hash = (w->hash ^ w->n) * 0x100000001b3ULL;
		if (!key->ustack_hash)
			key->ustack_hash = 1;
	}
	if ((w->flags & AGENT_STACK_TABLE) && !first_table_ns)
		__sync_val_compare_and_swap(&first_table_ns, 0, bpf_ktime_get_ns());
}

static __always_inline void walk_init(struct walk *w, __u32 pid)
{
	w->pid = pid;
	w->hash = 0xcbf29ce484222325ULL;
	w->exact = 1;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, zero = 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct agent_count_key key = {};
	struct walk w = {};
	struct agent_ustack *st;
	__u64 t0;

	stat_add(AGENT_STAT_SAMPLES, 1);
	if (pid == 0 || !task_chosen(pid)) {
		stat_add(AGENT_STAT_SAMPLES_FILTERED, 1);
		return 0;
	}
	st = bpf_map_lookup_elem(&scratch, &zero);
	if (!st)
		return 0;
	key.pid = pid;
	key.tid = (__u32)id;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	walk_init(&w, pid);
	if (task->mm)
		user_regs(ctx, task, &w);
	walk_user(task, pid, &w, &key, st);
	t0 = time_transport ? bpf_ktime_get_ns() : 0;
	if (transport_ringbuf)
		send_record(ctx, &key, st, w.n, NULL);
	else if (gen & 1)
		count(&counts1, &ustacks1, &kstacks1, &key, ctx, st);
	else
		count(&counts0, &ustacks0, &kstacks0, &key, ctx, st);
	if (time_transport)
		stat_add(AGENT_STAT_TRANSPORT_NS, bpf_ktime_get_ns() - t0);
	return 0;
}

/* Keep a block of d ns with probability min(1, d / t): d >= t always,
 * else when a uniform draw in [0, t) falls below d (64 bits: t may pass
 * 2^32 ns when user space raises it). */
static __always_inline bool offcpu_keep(__u64 d, __u64 t)
{
	__u64 r;

	if (d >= t)
		return true;
	r = (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32();
	return r % t < d;
}

/* next's block ended: keep it or not, by the T in force (offcpu_t_ns, read
 * once: the draw and the weight use the same); a kept one waits in
 * offcpu_pending with its kernel stack and user registers for next's
 * return to user space. */
static __always_inline void offcpu_switch_in(struct task_struct *next, __u64 now)
{
	__u64 *t0 = bpf_task_storage_get(&offcpu_start, next, 0, 0), d, t;
	struct offcpu_pending *p;
	struct pt_regs *regs;

	if (!t0 || !*t0)
		return;
	d = now - *t0;
	*t0 = 0;
	t = *(volatile __u64 *)&offcpu_t_ns;
	if (!t)
		t = offcpu_threshold_ns;
	stat_add(AGENT_STAT_OFFCPU_BLOCKS, 1);
	if (!offcpu_rseq_hook || !bpf_core_field_exists(next->rseq) || !BPF_CORE_READ(next, rseq)) {
		/* only the sys_exit program can send it: measured while attached */
		stat_add(AGENT_STAT_OFFCPU_NO_RSEQ, 1);
		if (!*(volatile __u32 *)&offcpu_sys_exit_on)
			return;
	}
	if (!offcpu_keep(d, t))
		return;
	stat_add(AGENT_STAT_OFFCPU_KEPT, 1);
	p = bpf_task_storage_get(&offcpu_pending, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!p) {
		stat_add(AGENT_STAT_OFFCPU_LOST, 1);
		return;
	}
	p->weight_ns = d > t ? d : t;
	regs = (struct pt_regs *)bpf_task_pt_regs(next);
	p->pc = BPF_CORE_READ(regs, ip);
	p->sp = BPF_CORE_READ(regs, sp);
	p->fp = BPF_CORE_READ(regs, bp);
	p->nkernel = bpf_get_task_stack(next, p->kips, sizeof(p->kips), 0);
}

/* --off-cpu: prev blocks (prev_state not TASK_RUNNING; a preempted task
 * is runnable, waiting for a CPU, and not counted) and is stamped when
 * chosen (this runs in prev: task_chosen reads prev's pid and cgroup);
 * next's block, if it was stamped, ends. */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 pid = prev->tgid;
	__u64 now = bpf_ktime_get_ns(), *t0;

	if (!preempt && prev_state != 0 && pid != 0 && prev->mm && task_chosen(pid)) {
		/* a kept block not sent yet did not end where it could be */
		if (!bpf_task_storage_delete(&offcpu_pending, prev))
			stat_add(AGENT_STAT_OFFCPU_LOST, 1);
		t0 = bpf_task_storage_get(&offcpu_start, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (t0)
			*t0 = now;
	}
	offcpu_switch_in(next, now);
	return 0;
}

/* The current task's kept block, if any, once it returns to user space
 * with the user registers it blocked with (so its user stack is the
 * blocked one): walked here, in the task, and sent with the block's
 * kernel stack. */
static __always_inline void offcpu_send(void *ctx, struct pt_regs *uregs)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct offcpu_pending *p = bpf_task_storage_get(&offcpu_pending, task, 0, 0);
	__u64 id;
	__u32 pid, zero = 0;
	struct agent_count_key key = { .flags = AGENT_STACK_OFF_CPU };
	struct walk w = {};
	struct agent_ustack *st;

	if (!p)
		return;
	id = bpf_get_current_pid_tgid();
	pid = id >> 32;
	walk_init(&w, pid);
	w.pc = BPF_CORE_READ(uregs, ip);
	w.sp = BPF_CORE_READ(uregs, sp);
	w.fp = BPF_CORE_READ(uregs, bp);
	st = bpf_map_lookup_elem(&scratch, &zero);
	if (st && w.pc == p->pc && w.sp == p->sp && w.fp == p->fp) {
		key.pid = pid;
		key.tid = (__u32)id;
		bpf_get_current_comm(key.comm, sizeof(key.comm));
		walk_user(task, pid, &w, &key, st);
		send_record(ctx, &key, st, w.n, p);
	} else {
		stat_add(AGENT_STAT_OFFCPU_LOST, 1);
	}
	bpf_task_storage_delete(&offcpu_pending, task);
}

/* --off-cpu: the return to user space of a task switched back in, for a
 * task with restartable sequences registered (glibc 2.35 and later does
 * for every thread): the kernel's rseq update runs then, after a
 * context switch only, so a system call that does not switch pays
 * nothing.  Loaded when the kernel has the tracepoint (offcpu_rseq_hook;
 * without it every task counts as one without rseq). */
SEC("tp_btf/rseq_update")
int BPF_PROG(on_rseq_update, struct task_struct *t)
{
	offcpu_send(ctx, (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()));
	return 0;
}

/* --off-cpu: the system call return, for the tasks without restartable
 * sequences; attached by user space only while such tasks block
 * (AGENT_STAT_OFFCPU_NO_RSEQ grows; their blocks are kept only while
 * offcpu_sys_exit_on): every system call of the host pays for it while
 * attached. */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *uregs, long ret)
{
	offcpu_send(ctx, uregs);
	return 0;
}

/* BTF tracepoints (tp_btf): attached without tracefs, which need not be
 * mounted. */
/* An exec replaces every mapping: the process' entry goes at once, so
 * its next sample asks user space for a scan (UNKNOWN_PROC); a process
 * that exits before it is sampled is never scanned. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;

	if (!task_chosen(pid))
		return 0;
	bpf_map_delete_elem(&procs, &pid);
	bpf_map_delete_elem(&pyprocs, &pid);
	bpf_map_delete_elem(&notified, &pid);
	notify(AGENT_EVENT_EXEC, pid, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;

	if (pid == (__u32)id && task_chosen(pid))
		notify(AGENT_EVENT_EXIT, pid, 0);
	return 0;
}
