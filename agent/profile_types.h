/*
 * profile_types.h - what the BPF side (profile.bpf.c) and the agent's
 * user space share: map keys and values, events, counters.  Fixed-width
 * types only, no pointers; the user-space build checks every size with
 * _Static_assert, so both sides agree on every byte.
 *
 * The unwind maps are the three of docs/unwind-format.md section 4; their
 * values are the table's own bytes (struct unwind_rule is repeated here as
 * struct agent_unwind_rule because the BPF build cannot include
 * unwind.h; the user-space build asserts the two are the same layout).
 */
#ifndef EMBER_AGENT_PROFILE_TYPES_H
#define EMBER_AGENT_PROFILE_TYPES_H

#ifndef __bpf__
#include <linux/types.h> /* __u8 ... __u64, as vmlinux.h has them */
#endif

#define AGENT_MAX_FRAMES 127	 /* user frames a sample keeps (perf's default) */
#define AGENT_MAX_KFRAMES 127	 /* kernel frames, bpf_get_stackid's */
#define AGENT_PROC_MAPPINGS 256	 /* executable mappings a process can have */
#define AGENT_DATA_CHUNK 4096	 /* bytes of one unwind_data value */
#define AGENT_COMM_LEN 16

/* struct agent_ustack.flags and struct agent_count_key.flags */
enum agent_stack_flags {
	AGENT_STACK_TRUNCATED = 1 << 0,	 /* deeper than AGENT_MAX_FRAMES */
	AGENT_STACK_COMPLETE = 1 << 1,	 /* reached the outermost frame (RA undefined,
					    or a zero frame pointer) */
	AGENT_STACK_NO_MAPPING = 1 << 2, /* stopped at a pc in no known mapping */
	AGENT_STACK_NO_CFI = 1 << 3,	 /* stopped at an END or INVALID row */
	AGENT_STACK_READ_FAILED = 1 << 4, /* stopped: user memory not readable */
	AGENT_STACK_UNSUPPORTED = 1 << 5, /* stopped: a rule the BPF walk cannot apply */
	AGENT_STACK_TABLE = 1 << 6,	 /* at least one frame from an unwind table */
	AGENT_STACK_KERNEL_THREAD = 1 << 7, /* no user space (kernel thread) */
	AGENT_STACK_UNKNOWN_PROC = 1 << 8, /* the process' mappings are not known yet */
	AGENT_STACK_OFF_CPU = 1 << 9,	 /* --off-cpu: a block, its value weighted ns */
	AGENT_STACK_PYTHON = 1 << 10,	 /* at least one Python frame */
};

/*
 * A Python frame in a user stack (struct agent_ustack.ips and the
 * samples' records): bit 63 set (no user pc has it), the instruction
 * index + 1 in bits 44-62 (0: before the first instruction), the code
 * object's address >> 3 in bits 0-43 (objects are 8-byte aligned, user
 * addresses below 2^47).  User space names it (python_code.c).
 */
#define AGENT_PY_FRAME_TAG (1ULL << 63)
#define AGENT_PY_FRAME_IDX_SHIFT 44
#define AGENT_PY_FRAME_IDX_MAX ((1ULL << 19) - 1)
#define AGENT_PY_FRAME_CODE_MASK ((1ULL << 44) - 1)

/* Byte offsets in a CPython's structures (one set per CPython version,
 * python_elf.c; docs/agent.md says where each comes from). */
struct agent_py_offsets {
	__u16 runtime_interp_head;	/* _PyRuntimeState.interpreters.head */
	__u16 runtime_tstate_current;	/* _PyRuntimeState.gilstate.tstate_current */
	__u16 interp_threads_head;	/* PyInterpreterState.threads.head */
	__u16 tstate_next;		/* PyThreadState.next */
	__u16 tstate_thread_id;		/* PyThreadState.thread_id (pthread_self) */
	__u16 tstate_cframe;		/* PyThreadState.cframe */
	__u16 cframe_current_frame;	/* _PyCFrame.current_frame */
	__u16 frame_code;		/* _PyInterpreterFrame.f_code */
	__u16 frame_previous;		/* _PyInterpreterFrame.previous */
	__u16 frame_prev_instr;		/* _PyInterpreterFrame.prev_instr */
	__u16 frame_is_entry;		/* _PyInterpreterFrame.is_entry (a bool) */
	__u16 code_adaptive;		/* PyCodeObject.co_code_adaptive: instruction 0 */
};

/* pyprocs: pid (tgid) -> where its interpreter is, for a process whose
 * CPython the agent reads. */
struct agent_pyproc {
	__u64 runtime;		/* address of _PyRuntime */
	__u64 eval_start;	/* [eval_start, eval_start + eval_len):
				   _PyEval_EvalFrameDefault */
	__u64 eval_len;
	struct agent_py_offsets off;
};

/* One executable mapping of a process, as the walk needs it.  file_id 0:
 * no table, walk by frame pointers. */
struct agent_mapping {
	__u64 start, end;	/* [start, end) */
	__u64 bias;		/* runtime address - ELF virtual address */
	__u64 file_id;		/* key of the file's pages in unwind_pages, or 0 */
};

/* procs: pid (tgid) -> its executable mappings, sorted by start. */
struct agent_proc {
	__u32 nmaps;
	__u32 generation;	/* bumped by user space at every rewrite */
	struct agent_mapping maps[AGENT_PROC_MAPPINGS];
};

/* unwind_pages (docs/unwind-format.md section 4). */
struct agent_page_key {
	__u64 file_id;
	__u64 page;		/* ELF virtual address >> 16 */
};

struct agent_page_val {
	__u32 data_off;		/* global byte offset into unwind_data */
	__u16 nrows_m1;
	__u16 npalette;
	__u32 rule_base;	/* first slot of the file's rules in unwind_rules */
	__u32 pad;
};

/* unwind_data value */
struct agent_data_chunk {
	__u8 b[AGENT_DATA_CHUNK];
};

/* unwind_rules value: struct unwind_rule of unwind.h, byte for byte. */
struct agent_unwind_rule {
	__u8 cfa_kind;
	__u8 reg_kinds;
	__u8 flags;
	__u8 cfa_reg;
	__u8 ra_reg;
	__u8 fp_reg;
	__s16 cfa_aux;
	__s32 cfa_off;
	__s16 ra_off;
	__s16 fp_off;
};

/* ustacks: 64-bit hash of the frames -> the frames. */
struct agent_ustack {
	__u32 len;
	__u32 flags;		/* enum agent_stack_flags */
	__u64 ips[AGENT_MAX_FRAMES];
};

/* counts: one distinct (process, thread, thread name, stacks) -> samples,
 * or with AGENT_STACK_OFF_CPU in flags the weighted ns blocked there. */
struct agent_count_key {
	__u32 pid;		/* tgid */
	__s32 kstack_id;	/* in kstacks, < 0: none */
	__u64 ustack_hash;	/* in ustacks, 0: none */
	__u32 flags;		/* enum agent_stack_flags */
	__u32 tid;		/* the thread (the kernel's pid) */
	char comm[AGENT_COMM_LEN];
};

/*
 * samples (--transport ringbuf only): one record a sample, counted into
 * the profile by user space (sample_agg.c).  ips: nuser user frames, leaf
 * first, then nkernel kernel frames; a record is sent up to its last
 * frame.
 */
struct agent_sample_rec {
	__u32 pid;		/* tgid */
	__u32 flags;		/* enum agent_stack_flags */
	__u16 nuser;
	__u16 nkernel;
	__u32 tid;		/* the thread (the kernel's pid) */
	char comm[AGENT_COMM_LEN];
	__u64 ips[AGENT_MAX_FRAMES + AGENT_MAX_KFRAMES];
};

/* events: what the BPF side tells user space at once (ring buffer). */
enum agent_event_kind {
	AGENT_EVENT_UNKNOWN_PROC = 1, /* a sample of a pid procs does not hold */
	AGENT_EVENT_UNKNOWN_PC = 2,   /* a pc in none of the process' mappings */
	AGENT_EVENT_EXEC = 3,	      /* the process exec'd: new mappings */
	AGENT_EVENT_EXIT = 4,	      /* the process exited */
};

struct agent_event {
	__u32 kind;
	__u32 pid;
	__u64 addr;		/* UNKNOWN_PC: the pc */
	__u64 ktime_ns;		/* bpf_ktime_get_ns() when it happened */
};

/* stats: one per-CPU array slot each. */
enum agent_stat {
	AGENT_STAT_SAMPLES,	     /* perf events handled */
	AGENT_STAT_SAMPLES_FILTERED, /* not a chosen pid or cgroup, or idle */
	AGENT_STAT_COUNT_DROPPED,    /* counts map full */
	AGENT_STAT_USTACK_DROPPED,   /* ustacks map full */
	AGENT_STAT_TRUNCATED,	     /* stacks deeper than the walk's bound */
	AGENT_STAT_FRAMES_TABLE,     /* frames unwound by an Ember table */
	AGENT_STAT_FRAMES_FP,	     /* frames unwound by frame pointers */
	AGENT_STAT_EVENTS_LOST,	     /* ring buffer full */
	AGENT_STAT_STOP_NO_MAPPING,
	AGENT_STAT_STOP_NO_CFI,
	AGENT_STAT_STOP_READ,
	AGENT_STAT_STOP_UNSUPPORTED,
	AGENT_STAT_KSTACK_FAILED,    /* bpf_get_stackid error other than none */
	AGENT_STAT_SAMPLES_LOST,     /* --transport ringbuf: samples ring full */
	AGENT_STAT_TRANSPORT_NS,     /* EMBER_AGENT_TIME_TRANSPORT: ns counting samples */
	AGENT_STAT_OFFCPU_BLOCKS,    /* --off-cpu: blocks of chosen tasks ended */
	AGENT_STAT_OFFCPU_KEPT,	     /* --off-cpu: of them, kept (to be walked and sent) */
	AGENT_STAT_OFFCPU_LOST,	     /* --off-cpu: kept, not sent (the task blocked again
					before its return to user space, its user
					registers changed, or no room) */
	AGENT_STAT_OFFCPU_NO_RSEQ,   /* --off-cpu: blocks ended of tasks without rseq
					(measured while sys_exit is attached) */
	AGENT_STAT_PY_FRAMES,	     /* Python frames recorded */
	AGENT_STAT_PY_NO_THREAD,     /* samples of a Python process' thread without
					a thread state (not running Python) */
	AGENT_STAT_COUNT
};

#ifndef __bpf__
#include <stddef.h>
_Static_assert(sizeof(struct agent_mapping) == 32, "agent_mapping");
_Static_assert(sizeof(struct agent_proc) == 8 + 32 * AGENT_PROC_MAPPINGS, "agent_proc");
_Static_assert(sizeof(struct agent_page_key) == 16, "agent_page_key");
_Static_assert(sizeof(struct agent_page_val) == 16, "agent_page_val");
_Static_assert(sizeof(struct agent_data_chunk) == AGENT_DATA_CHUNK, "agent_data_chunk");
_Static_assert(sizeof(struct agent_unwind_rule) == 16 &&
		       offsetof(struct agent_unwind_rule, cfa_aux) == 6 &&
		       offsetof(struct agent_unwind_rule, cfa_off) == 8 &&
		       offsetof(struct agent_unwind_rule, fp_off) == 14,
	       "agent_unwind_rule is struct unwind_rule");
_Static_assert(sizeof(struct agent_ustack) == 8 + 8 * AGENT_MAX_FRAMES, "agent_ustack");
_Static_assert(sizeof(struct agent_count_key) == 40 &&
		       offsetof(struct agent_count_key, tid) == 20,
	       "agent_count_key");
_Static_assert(sizeof(struct agent_event) == 24, "agent_event");
_Static_assert(sizeof(struct agent_py_offsets) == 24, "agent_py_offsets");
_Static_assert(sizeof(struct agent_pyproc) == 48, "agent_pyproc");
_Static_assert(sizeof(struct agent_sample_rec) ==
		       32 + 8 * (AGENT_MAX_FRAMES + AGENT_MAX_KFRAMES) &&
		       offsetof(struct agent_sample_rec, tid) == 12 &&
		       offsetof(struct agent_sample_rec, ips) == 32,
	       "agent_sample_rec");
#endif

#endif /* EMBER_AGENT_PROFILE_TYPES_H */
