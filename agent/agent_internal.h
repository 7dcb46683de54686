/*
 * agent_internal.h - the parts of ember-agent and how they fit (private
 * to agent/; the agent is a program, it has no public header).
 *
 *   profile.c      the BPF object: open, set tunables, load, attach one
 *                  CPU-clock perf event per CPU, ring buffer of events
 *   events.c       events from BPF (unknown process or pc, exec, exit)
 *   procs.c        the processes: their executable mappings (procmaps.c),
 *                  each file's ELF facts (elf_info.c), labels;
 *                  writes each process' mappings into the BPF procs map
 *   tables.c       one entry per file (build ID): where its unwind table
 *                  came from (table_cache.c on disk, table_fetch.c from
 *                  --server, or compiled here with the unwind compiler),
 *                  loaded into the BPF maps by table_load.c over the
 *                  allocator of range_alloc.c, unloaded when unused
 *   drain.c        every --interval: flip the aggregation maps, read them
 *   profile_build.c  the drained counts -> a pprof profile (kernel frames
 *                  named by kallsyms.c, JIT frames by perfmap.c)
 *   output.c, push.c  the profile to --output DIR, or POST to --server
 *   safe_files.c   the files the agent writes (cache, output) and the
 *                  processes' files it opens, as root among other users'
 *   upload_missing.c  --upload-missing: executables the server lacks
 *   agent_metrics.c  the agent's own /metrics (--metrics-listen)
 *   python_elf.c   CPython in a mapped file; the offsets of each version read
 *   python_proc.c  a process' CPython: its pyprocs entry, its frames' names
 *   python_code.c  code objects read from a process: names, lines
 *   summary.c      the info log: a line an interval, one at exit
 *   http.c         HTTP client handles (ember_httpc) shared by fetch, push and upload
 *   caps.c         the checks with clear errors: capabilities, BTF, kernel
 *
 * Ownership: a struct agent owns every part; each part's _free/_release
 * accepts NULL.  One thread (main's loop) does everything; nothing here
 * is global.
 */
#ifndef EMBER_AGENT_INTERNAL_H
#define EMBER_AGENT_INTERNAL_H

#include "common.h"
#include "profile_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- sorted tables of address ranges ---------------------------------- */

/*
 * The index of the last of n elements (stride bytes each, sorted by the
 * u64 at their offset 0) whose key is <= addr, or SIZE_MAX: the lookup of
 * kernel symbols, perf-map entries and process mappings (range_alloc.c).
 */
size_t agent_last_at_or_below(const void *base, size_t n, size_t stride, uint64_t addr);

/* ---- options (opts.c) ------------------------------------------------- */

struct agent_label {
	char *key, *value;
	char *service;	/* --label 'service_name=S:k=v': S; NULL: every process */
};

struct agent_opts {
	unsigned frequency;	   /* Hz per CPU, --frequency (19) */
	unsigned interval_s;	   /* --interval (10) */
	double duration_s;	   /* --duration: stop after, 0 = run until a signal */
	pid_t *pids;		   /* --pid (repeatable or comma list) */
	size_t npids;
	const char *cgroup;	   /* --cgroup PATH (cgroup v2 directory) */
	const char *server;	   /* --server URL */
	const char *cache_dir;	   /* --cache-dir (unwind tables across restarts) */
	const char *output_dir;	   /* --output DIR */
	char *token;		   /* --token, --token-file or EMBER_TOKEN */
	const char *tenant;	   /* --tenant: X-Scope-OrgID of every push (NULL: none) */
	bool upload_missing;	   /* --upload-missing */
	bool local_compile;	   /* compile tables here when the server has none */
	bool gzip;		   /* --compression gzip (else zstd) */
	const char *metrics_listen; /* --metrics-listen HOST:PORT */
	struct agent_label *labels; /* --label k=v */
	size_t nlabels;
	size_t buffer_bytes;	   /* --buffer-kb: profiles waiting to be pushed */
	unsigned data_chunks;	   /* unwind_data size in 4 KiB chunks */
	unsigned rule_slots;	   /* unwind_rules entries */
	unsigned page_entries;	   /* unwind_pages entries */
	bool ringbuf;		   /* a record a sample to user space (the default),
				      else (--transport maps, developer) the count maps */
	bool off_cpu;		   /* --off-cpu */
	unsigned off_cpu_threshold_us; /* --off-cpu-threshold: T (10000) */
	unsigned off_cpu_budget;   /* --off-cpu-budget: kept blocks a second (500) */
	bool off_cpu_rseq_only;	   /* --off-cpu-rseq-only: sys_exit never attached */
	uint64_t off_cpu_ns;	   /* T in ns with --off-cpu, else 0 (off) */
	const char *host;	   /* the host label (gethostname) */
	char hostbuf[256];
};

/* Parse argv into o (defaults first).  0; -EINVAL with the reason in
 * why; 1 for --help (usage printed). */
int agent_opts_parse(int argc, char **argv, struct agent_opts *o, char *why,
		     size_t why_size);
void agent_opts_release(struct agent_opts *o);
void agent_label_release(struct agent_label *l);
void agent_opts_usage(FILE *out);

/* ---- environment checks (caps.c) --------------------------------------- */

/* Kernel version, BTF, capabilities: 0, or a negative errno with what is
 * missing in why (e.g. "missing CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)"). */
int agent_check_environment(char *why, size_t why_size);
/* Explain a BPF load or perf_event_open failure err (negative errno). */
void agent_explain_bpf_error(const char *what, int err, char *why, size_t why_size);

/* ---- the BPF object (profile.c) --------------------------------------- */

struct agent_bpf;

typedef int (*agent_event_fn)(void *ctx, const struct agent_event *e);

/* Open, set the tunables from o, load (the verifier runs here), attach
 * the exec/exit tracepoints.  NULL with a negative errno in *err and the
 * reason in why. */
struct agent_bpf *agent_bpf_new(const struct agent_opts *o, agent_event_fn fn, void *ctx,
				int *err, char *why, size_t why_size);
/* Start sampling: one perf event per online CPU.  0 or a negative errno
 * (why says which capability or setting refused it). */
int agent_bpf_start(struct agent_bpf *b, unsigned frequency, char *why, size_t why_size);
void agent_bpf_free(struct agent_bpf *b);
/* Map fds (the two unwind arrays are BPF_F_MMAPABLE: size in bytes, in
 * rule slots). */
int agent_bpf_procs_fd(const struct agent_bpf *b);
int agent_bpf_pyprocs_fd(const struct agent_bpf *b);
int agent_bpf_pages_fd(const struct agent_bpf *b);
int agent_bpf_data_fd(const struct agent_bpf *b, size_t *size);
int agent_bpf_rules_fd(const struct agent_bpf *b, size_t *nrules);
/* Wait up to timeout_ms for events and hand them to the callback; with
 * 0, every queued event, also those that did not wake the loop. */
int agent_bpf_poll(struct agent_bpf *b, int timeout_ms);
int agent_bpf_events_fd(const struct agent_bpf *b);
/* Sum over CPUs of stats[which]. */
uint64_t agent_bpf_stat(const struct agent_bpf *b, enum agent_stat which);
/* bpf_ktime_get_ns() of the first table-unwound frame, 0 before. */
uint64_t agent_bpf_first_table_ns(const struct agent_bpf *b);
/* --off-cpu, called as often as the main loop wakes (a second at most
 * apart; acts once a second): the T in force set for the next second
 * (agent_offcpu_next_t), and (unless --off-cpu-rseq-only) the sys_exit
 * program attached while tasks without rseq block, detached a minute
 * after the last such block. */
void agent_bpf_offcpu_tick(struct agent_bpf *b, uint64_t now_ns);
/* --off-cpu: the T in force, ns (0 without --off-cpu). */
uint64_t agent_bpf_offcpu_t_ns(const struct agent_bpf *b);
/* --off-cpu: 1 while the sys_exit program is attached, else 0. */
int agent_bpf_offcpu_sys_exit(const struct agent_bpf *b);
/* The T for the next second, from the T t in force during the last, in
 * which blocks were kept at `rate` a second: raised in proportion when
 * the rate passed the budget (short blocks are kept at a rate about 1/T),
 * halved back towards t0 (--off-cpu-threshold) when under half of it,
 * within [t0, AGENT_OFFCPU_T_MAX_NS].  Any T keeps the estimate
 * unbiased (docs/agent.md). */
#define AGENT_OFFCPU_T_MAX_NS (60ull * 1000000000ull)
uint64_t agent_offcpu_next_t(uint64_t t, uint64_t t0, double rate, unsigned budget);
/* --transport ringbuf: the user-space aggregation the samples ring's
 * records go to (consumed by agent_bpf_poll), else NULL. */
struct agent_agg *agent_bpf_agg(const struct agent_bpf *b);
/* Switch samples to the other set of aggregation maps; returns the set
 * to drain (the one samples went to until now). */
unsigned agent_bpf_flip(struct agent_bpf *b);
/* fds of set s: counts, ustacks, kstacks. */
void agent_bpf_set_fds(const struct agent_bpf *b, unsigned s, int *counts, int *ustacks,
		       int *kstacks);

/* ---- /proc/PID/maps (procmaps.c) ---------------------------------------- */

struct agent_map_line {
	uint64_t start, end, offset;
	uint64_t inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	const char *path; /* points into the line; "" for anonymous */
};

typedef int (*agent_map_fn)(void *ctx, const struct agent_map_line *m);
/* What fn returns to stop reading the file there (not an error). */
#define AGENT_MAPS_STOP 1
/* Call fn for each executable mapping of pid.  0, or -ENOENT (gone),
 * -EACCES, or fn's first non-zero result (AGENT_MAPS_STOP: it stopped). */
int agent_maps_foreach(pid_t pid, agent_map_fn fn, void *ctx);
/* Parse one line of a maps file: 0 or -EINVAL.  TESTABLE. */
int agent_maps_parse_line(char *line, struct agent_map_line *out);

/* ---- ELF facts of a mapped file (elf_info.c, on the ELF layer) --------- */

#define AGENT_MAX_LOADS 16

struct agent_load {
	uint64_t offset, vaddr, filesz;
	bool exec;		/* PF_X */
};

/* CPython in a file (python_elf.c): ELF virtual addresses of its symbols. */
struct agent_python_elf {
	bool found;		/* _PyRuntime and _PyEval_EvalFrameDefault are there */
	uint32_t version;	/* Py_Version (PY_VERSION_HEX), 0: none (before 3.11) */
	uint64_t runtime, eval, eval_size;
	uint64_t code_type, unicode_type, bytes_type;
};

struct agent_elf_info {
	uint8_t build_id[EMBER_BUILD_ID_MAX];
	size_t build_id_len;
	char build_id_hex[2 * EMBER_BUILD_ID_MAX + 1];
	struct agent_load loads[AGENT_MAX_LOADS];
	size_t nloads;
	uint16_t machine;
	struct agent_python_elf python;
};

/* Read the build ID and the PT_LOAD segments of the ELF open on fd.
 * 0; -UNWIND_ERR_NOT_ELF-like errors are reported as -ENOEXEC. */
int agent_elf_info_read(int fd, struct agent_elf_info *out);
/* ELF virtual address of file offset off (a mapping's offset, page-aligned)
 * through the loads, an executable one first (pages can hold the end of
 * one segment and the start of the next): 0 or -ENOENT. */
int agent_elf_offset_to_vaddr(const struct agent_elf_info *e, uint64_t off, uint64_t *vaddr);


/* ---- CPython (python_elf.c, python_code.c, python_proc.c) -------------- */

/* What is read of a string (characters) and of a location table (bytes)
 * of a profiled process: a longer one is not read (docs/agent.md). */
#define AGENT_PY_STR_MAX 1024
#define AGENT_PY_LINETABLE_MAX ((size_t)64 << 10)
/* A process' cache of code objects: entries, bytes; a check's period. */
#define AGENT_PY_CACHE_MAX 65536
#define AGENT_PY_CACHE_BYTES ((size_t)16 << 20)
#define AGENT_PY_RECHECK_NS 1000000000ULL

enum agent_py_linetable {
	AGENT_PY_LINETABLE_311 = 1, /* 3.11's location table (python_code.c) */
};

/* The layout of one CPython version: what BPF reads (off) and what user
 * space reads of code objects, strings and bytes. */
struct agent_python_layout {
	const char *name;	/* "3.11" */
	uint32_t min, max;	/* PY_VERSION_HEX in [min, max) */
	struct agent_py_offsets off;
	uint16_t ob_type;	/* PyObject.ob_type */
	uint16_t code_filename, code_name, code_qualname, code_linetable, code_firstlineno;
	uint16_t str_length, str_state;	/* PyASCIIObject.length, .state */
	uint16_t str_ascii_data;	/* sizeof(PyASCIIObject): a compact ASCII string's */
	uint16_t str_compact_data;	/* sizeof(PyCompactUnicodeObject): another's */
	uint8_t str_kind_shift, str_compact_bit, str_ascii_bit; /* in .state */
	uint16_t bytes_size, bytes_data; /* PyVarObject.ob_size, PyBytesObject.ob_sval */
	enum agent_py_linetable linetable;
};

/* The layout of PY_VERSION_HEX version, or NULL: not read.  TESTABLE. */
const struct agent_python_layout *agent_python_layout(uint32_t version);
struct Elf;
/* CPython's symbols in elf (out->found false: not a CPython). */
void agent_python_elf_read(struct Elf *elf, struct agent_python_elf *out);

/* Reading a process' objects: read(ctx, addr, buf, n) is 0 or < 0. */
struct agent_py_reader {
	const struct agent_python_layout *layout;
	struct {
		uint64_t code, unicode, bytes; /* the type objects' addresses */
	} types;
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t n);
	void *ctx;
};

/* What identifies a code object's contents (checked again before reuse). */
struct agent_py_code_id {
	uint64_t filename, qualname, linetable; /* the objects' addresses */
	int64_t firstlineno;
};

struct agent_py_code {
	struct agent_py_code_id id;
	char *qualname, *filename; /* UTF-8 */
	uint8_t *linetable;
	size_t linetable_len;
};

/* A str object at addr as a new UTF-8 string: 0; -EINVAL not a compact
 * str, -E2BIG longer than AGENT_PY_STR_MAX, -EFAULT unreadable.  TESTABLE. */
int agent_py_str_read(const struct agent_py_reader *r, uint64_t addr, char **out);
/* The code object at code: its id only, or everything (release it). */
int agent_py_code_head(const struct agent_py_reader *r, uint64_t code,
		       struct agent_py_code_id *id);
int agent_py_code_read(const struct agent_py_reader *r, uint64_t code, struct agent_py_code *out);
void agent_py_code_release(struct agent_py_code *c);
/* The line of instruction idx - 1 (idx 0: before the first, the first
 * line) from a 3.11 location table; firstlineno when the table does not
 * say (malformed, no location).  TESTABLE. */
int64_t agent_py_line(const uint8_t *table, size_t len, int64_t firstlineno, uint32_t idx);

/* ---- allocator of ranges (range_alloc.c) ------------------------------- */

/*
 * struct agent_ranges - first-fit allocation of [0, size) in units, with
 * coalescing on free.  Invariant: free ranges are sorted, disjoint and
 * never adjacent.
 */
struct agent_range {
	uint64_t off, len;
};

struct agent_ranges {
	struct agent_range *free;
	size_t nfree, alloc;
	uint64_t size, used;
};

int agent_ranges_init(struct agent_ranges *r, uint64_t size);
void agent_ranges_release(struct agent_ranges *r);
/* len units aligned to align (a power of two): 0 with *off, or -ENOSPC. */
int agent_ranges_alloc(struct agent_ranges *r, uint64_t len, uint64_t align, uint64_t *off);
/* Give back [off, off + len): 0 or -ENOMEM (the range then stays used). */
int agent_ranges_free(struct agent_ranges *r, uint64_t off, uint64_t len);

/* ---- loading a table into the maps (table_load.c) ----------------------- */

struct agent_table_maps {
	int pages_fd;
	int data_fd;		/* unwind_data: mmap'ed a window at a time */
	size_t data_size;
	int rules_fd;		/* unwind_rules: the same */
	size_t nrules;
	struct agent_ranges data_free; /* in bytes (8-aligned) */
	struct agent_ranges rules_free; /* in rule slots */
	size_t npages;		/* unwind_pages entries (0: not shared by rule) */
	size_t pages_used;	/* of them, held by loaded tables */
};

/* What tables take, or a table needs, in the maps: unwind_data bytes,
 * unwind_rules slots, unwind_pages entries. */
struct agent_table_use {
	uint64_t data, rules, pages;
};

/* Where one loaded table lives. */
struct agent_loaded {
	uint64_t file_id;
	uint64_t data_base, data_len;
	uint64_t rule_base, rule_len;
	uint32_t npages;
	uint32_t *pages; /* page numbers, to delete on unload */
};

int agent_table_maps_init(struct agent_table_maps *t, int pages_fd, int data_fd,
			  size_t data_size, int rules_fd, size_t nrules);
void agent_table_maps_release(struct agent_table_maps *t);
/* Verify image and load it under file_id: 0, -ENOSPC (maps full), or the
 * image's error (-UNWIND_ERR_*).  On failure nothing stays loaded. */
int agent_table_load(struct agent_table_maps *t, const void *image, size_t size,
		     uint64_t file_id, struct agent_loaded *out);
void agent_table_unload(struct agent_table_maps *t, struct agent_loaded *l);
/* u += what the loaded table l takes. */
void agent_table_use_add(struct agent_table_use *u, const struct agent_loaded *l);
/* u -= the same (u holds l). */
void agent_table_use_drop(struct agent_table_use *u, const struct agent_loaded *l);
/* What image needs: only for an image agent_table_load verified (it
 * answered 0 or -ENOSPC). */
void agent_table_needs(const void *image, struct agent_table_use *out);
/* Whether the maps have need free (in all; their free ranges may still
 * be too scattered for it). */
bool agent_table_maps_room(const struct agent_table_maps *t, const struct agent_table_use *need);
/* The largest fraction of one of the maps that u takes (0..1): how the
 * holders of tables are compared. */
double agent_table_maps_weight(const struct agent_table_maps *t, const struct agent_table_use *u);

/* ---- tables (tables.c, table_fetch.c, table_cache.c) ------------------- */

enum agent_table_source {
	AGENT_TABLE_NONE = 0,	  /* not tried yet */
	AGENT_TABLE_CACHE,	  /* --cache-dir, checked against --server's ETag */
	AGENT_TABLE_SERVER,	  /* downloaded from --server */
	AGENT_TABLE_COMPILED,	  /* compiled here (the server had none) */
	AGENT_TABLE_FRAME_POINTERS, /* no table: frame pointers */
	AGENT_TABLE_SOURCE_COUNT
};

const char *agent_table_source_name(enum agent_table_source s);

struct agent_http;
struct agent_tables;

/* A file as the table manager knows it (one per build ID, or per
 * device:inode for files without one). */
struct agent_file {
	char key[2 * EMBER_BUILD_ID_MAX + 32];
	struct agent_elf_info elf;
	char path[512];		/* a path the agent opened it by (for logs, upload) */
	char open_path[600];	/* /proc/PID/map_files/... or /proc/PID/root/... */
	uint64_t dev, ino;	/* of the file first opened: opened again, it must match */
	bool trusted;		/* root's, not writable by group or others: keyed by
				   its build ID alone, uploaded, cached (agent_file_trusted) */
	unsigned refs;		/* process mappings using it */
	enum agent_table_source source;
	bool loaded;
	struct agent_loaded table;
	char why[256];		/* why it fell back to frame pointers */
	uint64_t idle_since_ns;	/* when refs dropped to 0 */
	bool pending;		/* a job is out on the worker */
	/* procs.c's census of who maps it (valid while census_gen is the
	 * census'): live processes, the last of them (the only one when 1),
	 * its table counted in that process' private tables */
	unsigned census_gen, census_procs;
	struct agent_process *census_by;
	bool census_summed;
};

struct agent_tables_opts {
	const char *server;
	const char *cache_dir;
	bool local_compile;
	bool upload_missing;
	const char *token;
};

/* table_worker.c: one job a file, run on the worker thread. */
struct agent_table_job {
	struct agent_file *file; /* identity only: the worker never reads it */
	char build_id_hex[2 * EMBER_BUILD_ID_MAX + 1]; /* "" without one */
	char path[512], open_path[600];
	uint64_t dev, ino;	/* the agent_file's */
	bool trusted;		/* the agent_file's: else never uploaded nor cached */
	/* filled by the worker */
	struct ember_buf image;	/* the table's bytes, when err == 0 */
	enum agent_table_source source;
	char why[256];
	bool uploaded;
	int err;
	uint64_t queued_ns, started_ns, done_ns; /* ember_monotonic_ns() */
	struct agent_table_job *next;
};

struct agent_worker;
struct agent_worker *agent_worker_new(const struct agent_tables_opts *o, int *err);
/* Stops the thread (after its current job) and frees every job. */
void agent_worker_free(struct agent_worker *w);
/* Queue j (the worker owns it until it comes back from take_done). */
void agent_worker_submit(struct agent_worker *w, struct agent_table_job *j);
/* The finished jobs, oldest first (caller frees each with
 * agent_table_job_free); clears the eventfd. */
struct agent_table_job *agent_worker_take_done(struct agent_worker *w);
/* Readable when finished jobs wait. */
int agent_worker_fd(const struct agent_worker *w);
void agent_table_job_free(struct agent_table_job *j);

struct agent_tables *agent_tables_new(const struct agent_tables_opts *o,
				      struct agent_table_maps *maps, struct agent_http *http,
				      int *err);
void agent_tables_free(struct agent_tables *t);
/*
 * The file of a mapping, acquired (refs + 1): found by key, or made from
 * the ELF open on fd, its table asked for on the worker thread (loaded
 * later by agent_tables_collect; until then the walk uses frame
 * pointers).  NULL with *err (-ENOEXEC: not an ELF).
 */
struct agent_file *agent_tables_acquire(struct agent_tables *t, const char *key, int fd,
					const char *path, const char *open_path, int *err);
/* refs - 1 (NULL is ignored). */
void agent_tables_release(struct agent_tables *t, struct agent_file *f);
/* Load the tables the worker brought (or note why there is none), log
 * each outcome, and call ready(ctx, f) for each file whose table is now
 * in the maps.  Returns the number of jobs collected. */
size_t agent_tables_collect(struct agent_tables *t,
			    void (*ready)(void *ctx, struct agent_file *f), void *ctx);
/* Files whose table is still being fetched or compiled. */
size_t agent_tables_pending(const struct agent_tables *t);
/* Executables uploaded with --upload-missing. */
size_t agent_tables_uploads(const struct agent_tables *t);
/* Readable when agent_tables_collect has work. */
int agent_tables_fd(const struct agent_tables *t);
/*
 * Who maps a file, who holds the most (procs.c answers for the table
 * manager).  A private table is the table of a file one live process
 * alone maps; a table two or more map is shared.
 */
struct agent_file_users {
	unsigned processes;	/* live processes mapping it */
	pid_t pid;		/* the one, when processes == 1 */
	struct agent_table_use held; /* its private tables, but the file's */
	bool *warned;		/* its "share used" logged already */
};
struct agent_table_holder {
	pid_t pid;		/* whose private tables weigh the most; 0: none */
	struct agent_table_use held;
	struct agent_file *newest; /* its private table loaded last */
	unsigned holders;	/* live processes holding private tables */
	bool *warned;		/* its eviction logged already */
};
struct agent_table_users {
	void (*file)(void *ctx, const struct agent_file *f, struct agent_file_users *u);
	/* by agent_table_maps_weight */
	void (*largest)(void *ctx, const struct agent_table_maps *m, struct agent_table_holder *h);
	/* f's table loaded or unloaded: the BPF entries of its processes */
	void (*rewrite)(void *ctx, struct agent_file *f);
	void *ctx;
};
/*
 * The maps are shared by rule (tables.c; docs/agent.md, "Limits"):
 * - a private table is refused when its process' private tables would
 *   pass a quarter (AGENT_TABLE_SHARE_DIV) of unwind_data, unwind_rules
 *   or unwind_pages;
 * - a table that does not fit first evicts the tables no mapping uses,
 *   then private tables of the process whose private tables weigh the
 *   most (its newest first), as long as it keeps at least what the
 *   newcomer's process would hold with the new table (for a shared
 *   table: its fair share, the maps over the processes holding private
 *   tables); a shared table is never evicted for a private one.  Only
 *   a newcomer whose own process would hold the most is refused.
 * Without users (tests) every table that fits is admitted.
 */
#define AGENT_TABLE_SHARE_DIV 4
void agent_tables_set_users(struct agent_tables *t, const struct agent_table_users *u);
/* Tables refused: by the process' share, because the maps were full. */
void agent_tables_refused(const struct agent_tables *t, size_t *share, size_t *full);
/* Tables evicted to make room for another process'. */
size_t agent_tables_evicted(const struct agent_tables *t);
/* Unload and forget the files no mapping has used since idle_before_ns. */
void agent_tables_gc(struct agent_tables *t, uint64_t idle_before_ns);
/* Counts by source, for /metrics and the log. */
void agent_tables_counts(const struct agent_tables *t, size_t counts[AGENT_TABLE_SOURCE_COUNT],
			 size_t *loaded_bytes, size_t *unloads);
/* Each loaded or known file: fn(ctx, f). */
void agent_tables_foreach(const struct agent_tables *t,
			  void (*fn)(void *ctx, const struct agent_file *f), void *ctx);

/* table_cache.c: DIR/BUILDID.unwind and DIR/BUILDID.etag (through
 * safe_files.c: a directory others can write is refused, -EPERM). */
int agent_cache_read(const char *dir, const char *build_id, struct ember_buf *image,
		     char *etag, size_t etag_size);
int agent_cache_write(const char *dir, const char *build_id, const void *image, size_t size,
		      const char *etag);

/* table_fetch.c: GET SERVER/api/v1/unwind/ID.  With etag non-empty, sends
 * If-None-Match.  Returns 200 (image and new_etag filled), 304, 404, another
 * HTTP status, or a negative errno (-ECONNREFUSED, -ETIMEDOUT, ...) with
 * why. */
int agent_fetch_table(struct agent_http *h, const char *server, const char *build_id,
		      const char *etag, struct ember_buf *image, char *new_etag,
		      size_t new_etag_size, char *why, size_t why_size);

/* ---- HTTP client (http.c) --------------------------------------------- */

struct agent_http_reply {
	long status;		/* 0 when no answer */
	struct ember_buf body;	/* capped */
	char etag[160];
	bool challenge;		/* a WWW-Authenticate came: a 401 of the credentials
				   (a server's 401 without: no tenant named) */
	char err[256];		/* curl's reason when status is 0 */
};

struct agent_http *agent_http_new(const char *token);
void agent_http_free(struct agent_http *h);
/* One request: method GET/PUT/POST, url, optional body (and its
 * Content-Type / Content-Encoding), extra header (NULL: none).  0 when
 * an answer came (any status), a negative errno otherwise (r->err). */
struct agent_http_req {
	const char *method, *url;
	const void *body;
	size_t body_len;
	/* when set, the body_len bytes come from it (httpc_read_fn) */
	ssize_t (*read)(void *ctx, uint64_t off, char *buf, size_t n);
	void *read_ctx;
	const char *content_type, *content_encoding;
	const char *if_none_match;
	const char *header;	/* one more header line ("Name: value"), or NULL */
	const char *tenant;	/* X-Scope-OrgID: the tenant of a push, or NULL */
	size_t max_reply;
	long timeout_ms;
};
int agent_http_do(struct agent_http *h, const struct agent_http_req *req,
		  struct agent_http_reply *r);
void agent_http_reply_release(struct agent_http_reply *r);

/* ---- service identity (service_id.c) ------------------------------------- */

/* What a cgroup v2 path says of its process; each field empty when absent. */
struct agent_service_id {
	char pod_uid[40];	/* Kubernetes pod UID, with dashes */
	char container_id[16];	/* container ID, 12 hex digits */
	char container_full[72]; /* the whole ID, 64 hex digits */
	char container_name[128]; /* its name (agent_service_container_name) */
	char unit[128];		/* systemd unit, without .service/.scope */
	char workload[128];	/* the pod's workload (agent_service_pod_workload) */
};

#define AGENT_PODS_DIR "/var/log/pods" /* the kubelet's, on every node */
#define AGENT_DOCKER_DIR "/var/lib/docker/containers" /* dockerd's, ID/config.v2.json */
#define AGENT_CONTAINER_CONFIG_MAX ((size_t)1 << 20) /* a bigger config.v2.json: no name */

/* Parse cgroup (a /proc/PID/cgroup "0::" path) into *id (always written). */
void agent_service_parse_cgroup(const char *cgroup, struct agent_service_id *id);
/* The workload of pod uid from the kubelet's log directory dir
 * (AGENT_PODS_DIR: DIR/NAMESPACE_POD_UID/): 0 with the pod's name, less the
 * suffixes its controller adds (NAME-HASH-XXXXX, NAME-XXXXX: NAME), in
 * name; -ENOENT none; a negative errno opening dir (a symlink refused). */
int agent_service_pod_workload(const char *dir, const char *uid, char *name, size_t size);
/* The name of Docker container id (64 hex digits) from dockerd's state
 * directory dir (AGENT_DOCKER_DIR: DIR/ID/config.v2.json, its "Name"
 * without the leading '/'): 0 with it in name; -ENOENT none there;
 * -EPERM dir or DIR/ID not owned by root (or the euid) or writable by
 * others; -E2BIG past AGENT_CONTAINER_CONFIG_MAX; -EBADMSG not JSON, or a
 * name Docker would not give; another negative errno opening or reading
 * (a symlink refused).  name written only on success. */
int agent_service_container_name(const char *dir, const char *id, char *name, size_t size);
/* The service_name of a process into out (size bytes, truncated): the
 * pod's workload or UID, the container's name or ID, the unit, else the
 * base name of exe (without " (deleted)"), else comm, else "unknown". */
void agent_service_name(const struct agent_service_id *id, const char *exe, const char *comm,
			char *out, size_t size);
/* Whether --label l applies to a process of service (l->service NULL or equal). */
bool agent_label_applies(const struct agent_label *l, const char *service);

/* ---- processes (procs.c) ---------------------------------------------- */

struct agent_proc_map {
	uint64_t start, end, offset, bias;
	struct agent_file *file; /* NULL: anonymous or unreadable (frame pointers) */
	char *path;
	uint64_t pprof_id;	/* mapping id in the profile being built, 0: none */
};

/* A process' perf map and jitdump, read when a JIT frame is not named (at
 * most once per AGENT_PERFMAP_RETRY_NS, again only when the file changed). */
struct agent_jit {
	struct agent_perfmap *map; /* the last map read, NULL: none */
	bool tried;
	bool warned;		/* a refused map logged (once a process) */
	uint64_t tried_ns;	/* ember_monotonic_ns() of the last try */
	int64_t size, mtime_ns;	/* of the file last read or refused */
	struct agent_jitdump *dump; /* its jitdump as read so far, NULL: none */
	bool dump_refused;	/* read no more (logged once) */
	bool dump_warned;
};

struct agent_process {
	pid_t pid;
	pid_t nspid;		/* the pid inside its pid namespace (perf-PID.map) */
	bool exited;
	uint64_t exit_ns;	/* ember_monotonic_ns() when it exited */
	bool scanned;
	uint64_t scan_ns;	/* ember_monotonic_ns() when its maps were read */
	unsigned generation;
	struct agent_proc_map *maps; /* sorted by start */
	size_t nmaps;
	/* mappings a rescan no longer saw (V8 frees its code space before
	 * exit_group; a library is dlclose'd), sorted by start: this
	 * interval's samples taken before the rescan still point into them.
	 * Kept until the next agent_procs_reap, at most
	 * AGENT_RETIRED_MAPPINGS_MAX. */
	struct agent_proc_map *retired;
	size_t nretired;
	char exe[512];
	char comm[AGENT_COMM_LEN];
	char cgroup[512];
	char container[80];
	uid_t uid;		/* effective uid: who may own its perf map (or root) */
	struct agent_jit jit;	/* its perf map (perfmap.c) */
	struct agent_python *python; /* its CPython when read (python_proc.c), or NULL */
	bool python_warned;	/* a CPython not read: logged once */
	char service[128];	/* its service_name (service_id.c), read with cgroup */
	uint64_t seen_ns;	/* its last rescan for an unknown pc */
	uint64_t scan_cost_ns;	/* how long its last scan took (events.c) */
	bool scan_truncated;	/* the last scan stopped at its limit */
	bool truncated;		/* ever: logged once */
	bool bpf_truncated;	/* more than the BPF entry holds: logged once */
	bool share_warned;	/* its unwind-map share used: logged once */
	bool evict_warned;	/* its tables evicted: logged once */
	/* procs.c's census: its private tables, the one loaded last */
	struct agent_table_use held;
	struct agent_file *newest;
};

/* Executable mappings the agent holds (/proc/PID/maps is read no further):
 * a process, every process (docs/agent.md, "Limits"). */
#define AGENT_PROCESS_MAPPINGS_MAX 1024
#define AGENT_RETIRED_MAPPINGS_MAX 1024 /* a process, per interval */
#define AGENT_HOST_MAPPINGS_MAX 65536

struct agent_procs_stats {
	size_t mappings;		/* held now, every process */
	uint64_t scans;
	uint64_t truncated_process;	/* scans stopped at AGENT_PROCESS_MAPPINGS_MAX */
	uint64_t truncated_host;	/* scans stopped by AGENT_HOST_MAPPINGS_MAX */
	uint64_t rescans_deferred;	/* unknown-pc rescans refused by the rate limit */
	uint64_t perfmap_reads;		/* perf maps read (perfmap.c) */
	uint64_t perfmaps_refused;	/* refused: owner, symlink, type, size, entries */
	uint64_t python_processes;	/* CPython processes whose frames are read */
	uint64_t python_unsupported;	/* scans of a CPython whose version is not read */
	uint64_t python_code_read;	/* code objects read (named) */
	uint64_t python_code_unread;	/* code objects not readable (frames unnamed) */
	uint64_t python_cache_cleared;	/* a process' code cache emptied at its bound */
};

struct agent_procs;

struct agent_procs *agent_procs_new(struct agent_tables *t, int procs_fd, int *err);
void agent_procs_free(struct agent_procs *p);
/* Other limits than AGENT_PROCESS_MAPPINGS_MAX and AGENT_HOST_MAPPINGS_MAX
 * (tests). */
void agent_procs_set_limits(struct agent_procs *p, size_t process_max, size_t host_max);
void agent_procs_stats(const struct agent_procs *p, struct agent_procs_stats *out);
/* An unknown-pc rescan of pid refused by the rate limit (events.c). */
void agent_procs_note_deferred(struct agent_procs *p);
/* A perf map read (refused false) or refused (perfmap.c). */
void agent_procs_note_perfmap(struct agent_procs *p, bool refused);
/* The BPF pyprocs map: scans then write each CPython process' entry
 * (without it, < 0: Python frames are not read). */
void agent_procs_set_pyprocs(struct agent_procs *p, int pyprocs_fd);
/* A Python frame of pr's samples (AGENT_PY_FRAME_TAG): 0 with *out
 * (pointing into pr's cache: valid until the next call for pr), or < 0:
 * not named (pr has no CPython read, the code object unreadable). */
struct agent_py_frame {
	const char *qualname, *filename;
	int64_t firstlineno, line;
};
int agent_procs_python_frame(struct agent_procs *p, struct agent_process *pr, uint64_t frame,
			     struct agent_py_frame *out);
/* An agent_agg_new_fn (ctx: the struct agent_procs): the code objects of
 * the record's Python frames read now, so a process that exits before
 * the interval's profile is built still has them named. */
void agent_procs_python_warm(void *procs, const struct agent_sample_rec *r);
/* The table manager's questions about who maps what, answered over p. */
void agent_procs_table_users(struct agent_procs *p, struct agent_table_users *out);
/* f's table is loaded or unloaded: rewrite the BPF entry of every process
 * mapping it. */
void agent_procs_file_ready(void *procs, struct agent_file *f);
/* (Re)read pid's mappings, acquire their files, write the BPF entry. */
int agent_procs_scan(struct agent_procs *p, pid_t pid);
/* Scan every process under /proc (or only those of pids). */
int agent_procs_scan_all(struct agent_procs *p, const pid_t *pids, size_t npids);
/* The process exec'd at exec_ns (CLOCK_MONOTONIC): mappings read before
 * are dropped, its BPF entry too, so that its next sample asks for a scan. */
void agent_procs_exec(struct agent_procs *p, pid_t pid, uint64_t exec_ns);
/* The process has exited: kept (for the profile) until agent_procs_reap. */
void agent_procs_exited(struct agent_procs *p, pid_t pid);
/* Forget processes that exited before before_ns (the last flip: their
 * samples are all drained) and every process' retired mappings, unload
 * the tables nothing maps any more. */
void agent_procs_reap(struct agent_procs *p, uint64_t before_ns);
struct agent_process *agent_procs_find(struct agent_procs *p, pid_t pid);
/* The mapping of proc holding addr, or NULL: one its last scan saw, else
 * one an earlier scan of this interval saw (retired). */
struct agent_proc_map *agent_process_mapping(struct agent_process *proc, uint64_t addr);
size_t agent_procs_count(const struct agent_procs *p);

/* ---- mappings a rescan no longer saw (maps_retired.c) ------------------- */

/* pr's mappings that v[0, n) (a new scan's, sorted by start) does not
 * hold moved to pr's retired ones (past AGENT_RETIRED_MAPPINGS_MAX, or
 * without memory, released), the others released; pr->maps left empty. */
void agent_maps_retire(struct agent_tables *t, struct agent_process *pr,
		       const struct agent_proc_map *v, size_t n);
/* Release pr's retired mappings. */
void agent_maps_retired_drop(struct agent_tables *t, struct agent_process *pr);
/* The retired mapping of pr holding addr, or NULL. */
struct agent_proc_map *agent_maps_retired_find(struct agent_process *pr, uint64_t addr);
void agent_procs_foreach(struct agent_procs *p, void (*fn)(void *ctx, struct agent_process *pr),
			 void *ctx);

/* ---- kernel symbols (kallsyms.c) -------------------------------------- */

struct agent_kallsyms;
/* Read /proc/kallsyms (runtime addresses: KASLR is already applied there).
 * NULL with *err; -EPERM when every address reads as 0 (kptr_restrict). */
struct agent_kallsyms *agent_kallsyms_new(const char *path, int *err);
void agent_kallsyms_free(struct agent_kallsyms *k);
/* Name of the function holding addr, or NULL; *mod the module ("" for
 * vmlinux).  Both valid until the next lookup (the names are kept
 * compressed, a block at a time decompressed) or agent_kallsyms_free. */
const char *agent_kallsyms_lookup(const struct agent_kallsyms *k, uint64_t addr,
				  const char **mod);
/* The kernel text range (_stext .. _etext) */
void agent_kallsyms_text(const struct agent_kallsyms *k, uint64_t *start, uint64_t *end);

/* ---- a process' CPython (python_proc.c) -------------------------------- */

struct agent_python;
/* After a scan of pr: its pyprocs entry written (a CPython whose version
 * has a layout), or deleted; pr->python kept, made or freed with it. */
int agent_python_attach(int pyprocs_fd, struct agent_procs_stats *st, struct agent_process *pr);
void agent_python_free(struct agent_python *py);
int agent_python_frame(struct agent_python *py, uint64_t frame, struct agent_procs_stats *st,
		       struct agent_py_frame *out);

/* ---- JIT symbols, /tmp/perf-PID.map (perfmap.c), jitdump (jitdump.c) --- */

/* Bounds of a perf map, written by the profiled (unprivileged) process:
 * a bigger file, or one with more entries, is refused (docs/agent.md). */
#define AGENT_PERFMAP_MAX_BYTES ((size_t)64 << 20)
#define AGENT_PERFMAP_MAX_ENTRIES ((size_t)1 << 20)
#define AGENT_PERFMAP_RETRY_NS 2000000000ULL /* a process' map tried at most this often */
#define AGENT_JIT_NAME_MAX 4096 /* a longer name is no function's: its entry skipped */
/* A jitdump holds the code too: a bigger one is read no further (its
 * entries and names are bounded as a perf map's). */
#define AGENT_JITDUMP_MAX_BYTES ((size_t)1 << 30)

struct agent_perfmap;
/* Parse a map from memory (data need not be NUL-terminated): NULL with
 * *err, -E2BIG past AGENT_PERFMAP_MAX_ENTRIES. */
struct agent_perfmap *agent_perfmap_parse(const char *data, size_t size, int *err);
/* A map built by another parser (jitdump.c): new, add each entry (name:
 * len bytes, copied), sort before the first lookup.  add: -E2BIG past
 * AGENT_PERFMAP_MAX_ENTRIES or AGENT_PERFMAP_MAX_BYTES of names. */
struct agent_perfmap *agent_perfmap_new(int *err);
int agent_perfmap_add(struct agent_perfmap *m, uint64_t start, uint64_t size, const char *name,
		      size_t len);
void agent_perfmap_sort(struct agent_perfmap *m);
void agent_perfmap_free(struct agent_perfmap *m);
const char *agent_perfmap_lookup(const struct agent_perfmap *m, uint64_t addr);
/* The name of JIT code at addr in pr, or NULL: from pr's jitdump, else
 * its perf map (a jitdump's entry wins where both name addr), both read
 * again when neither names addr: the map from
 * /proc/PID/root/tmp/perf-NSPID.map, the jitdump from the executable
 * mapping of a jit-NSPID.dump (rate limited, only when the file changed;
 * owner, type and size checked, a refusal counted in p and logged once
 * for pr).  Points into pr's map or jitdump: valid until the next call for
 * pr or agent_perfmap_forget. */
const char *agent_perfmap_name(struct agent_procs *p, struct agent_process *pr, uint64_t addr);
/* Why a perf map or jitdump of pr (st its fstat) is refused, in why: owned
 * by another uid than pr's or root, or larger than max_bytes; NULL when
 * it is not. */
struct stat;
const char *agent_jit_file_refusal(const struct agent_process *pr, const struct stat *st,
				   size_t max_bytes, char *why, size_t size);
/* A perf map or jitdump (what) of pr refused: counted in p, logged once
 * for pr (*warned). */
void agent_jit_refuse(struct agent_procs *p, struct agent_process *pr, bool *warned,
		      const char *what, const char *path, const char *why);
/* Drop pr's map, jitdump and their state (an exec, the process freed). */
void agent_perfmap_forget(struct agent_process *pr);

/* A jitdump as read so far (jitdump.c; the format: perf's jitdump.h,
 * version 1): its entries, added to as the file grows. */
struct agent_jitdump;
struct agent_jitdump *agent_jitdump_new(int *err);
void agent_jitdump_free(struct agent_jitdump *jd);
/* Parse data, the file's first size bytes, from where the last call
 * stopped (size never less than then: -EINVAL); a record not complete
 * yet is left for the next call.  0, or -EBADMSG (malformed),
 * -EPROTONOSUPPORT (another version or byte order), -E2BIG (past a
 * perf map's entries or names); after an error jd is left as it was read
 * up to the bad record.  TESTABLE (the file is read by
 * agent_jitdump_refresh). */
int agent_jitdump_feed(struct agent_jitdump *jd, const void *data, size_t size);
/* The name of the code at addr, or NULL; valid until the next feed. */
const char *agent_jitdump_lookup(const struct agent_jitdump *jd, uint64_t addr);
/* Open pr's jitdump, if it maps one and it is not open yet (after each
 * scan: the descriptor kept, so the file can be read after pr's exit).
 * 0, or a negative errno (-ELOOP, -EINVAL: refused at the next refresh). */
int agent_jitdump_open(struct agent_process *pr);
/* Read pr's jitdump, if it maps one, from where the last read stopped
 * (perfmap.c's rate limit applies): into pr->jit.dump. */
void agent_jitdump_refresh(struct agent_procs *p, struct agent_process *pr);

/* ---- draining and building profiles (drain.c, profile_build.c) -------- */

struct agent_sample {
	uint32_t pid;
	uint32_t tid;		/* the thread; an attribute, never a series */
	uint32_t flags;		/* AGENT_STACK_OFF_CPU: count is off-CPU ns */
	char comm[AGENT_COMM_LEN];
	uint64_t count;		/* samples, or weighted off-CPU ns */
	uint32_t nuser, nkernel;
	const uint64_t *user;	/* leaf first */
	const uint64_t *kernel; /* leaf first */
};

typedef int (*agent_sample_fn)(void *ctx, const struct agent_sample *s);

/* --transport ringbuf (sample_agg.c): the samples ring's records counted
 * here, as the count maps count them in BPF. */
struct agent_agg;
struct agent_agg *agent_agg_new(int *err);
void agent_agg_free(struct agent_agg *g);
/* One record of the samples ring (struct agent_sample_rec, size bytes):
 * always 0 (a malformed record is ignored, one past the bound counted). */
int agent_agg_add(struct agent_agg *g, const void *data, size_t size);
/* fn once per distinct stack, then empty; *nsamples the samples. */
int agent_agg_drain(struct agent_agg *g, agent_sample_fn fn, void *ctx, size_t *nsamples);
/* Samples not counted: the bound of distinct stacks reached. */
uint64_t agent_agg_dropped(const struct agent_agg *g);
/* fn(ctx, record) at the first record of each distinct stack of an
 * interval, as it arrives (procs.c reads its Python code objects then,
 * while the process lives). */
typedef void (*agent_agg_new_fn)(void *ctx, const struct agent_sample_rec *r);
void agent_agg_on_new(struct agent_agg *g, agent_agg_new_fn fn, void *ctx);

/* Flip and read the set samples went to: fn once per distinct stack.
 * Entries are deleted as they are read. */
int agent_drain(struct agent_bpf *b, agent_sample_fn fn, void *ctx, size_t *nsamples);

struct agent_profile;
struct agent_profile_opts {
	const struct agent_opts *opts;
	struct agent_procs *procs;
	const struct agent_kallsyms *kallsyms;
	uint64_t start_ns;	/* wall clock of the interval's start */
	uint64_t duration_ns;
};
struct agent_profile *agent_profile_new(const struct agent_profile_opts *o, int *err);
void agent_profile_free(struct agent_profile *pr);
int agent_profile_add(void *profile, const struct agent_sample *s);
/* Encode (gzip or raw protobuf) into out. */
int agent_profile_encode(struct agent_profile *pr, bool gzip, struct ember_buf *out);
/* The pprof samples added (a CPU stack's or an off-CPU one's; 0: an
 * interval with nothing to send, whatever the kind). */
size_t agent_profile_samples(const struct agent_profile *pr);

/* ---- files the agent writes and reads as root (safe_files.c) ----------- */

/* The largest file of a process the agent compiles a table of or uploads
 * (docs/agent.md): a bigger one keeps frame pointers. */
#define AGENT_FILE_MAX ((uint64_t)1 << 30)

/* Open (made 0755 if missing) a directory to write in: its descriptor, or
 * a negative errno with why naming it; -EPERM when it is not owned by
 * root or the euid, or group or others may write to it. */
int agent_dir_open(const char *dir, char *why, size_t why_size);
/* data as dfd/name: a new 0600 file under a random temporary name
 * (O_EXCL | O_NOFOLLOW), renamed over name.  0 or a negative errno. */
int agent_file_write(int dfd, const char *name, const void *data, size_t size);
/* Why a directory (st) is unsafe to trust as root: NULL when it is owned
 * by root or the euid and no one else may write to it (with sticky_ok, a
 * sticky directory others may write to, like /tmp, is safe too); else
 * the reason, a static string. */
struct stat;
const char *agent_dir_unsafe(const struct stat *st, bool sticky_ok);
/* Append dfd/name (a regular file, not through a symlink) to b. */
int agent_file_read(int dfd, const char *name, struct ember_buf *b);
/* Open a process' file by its open_path without blocking or following a
 * symlink out of the process' root; -EINVAL unless a regular file.  The
 * descriptor, st filled, or a negative errno. */
struct stat;
int agent_open_mapped(const char *open_path, struct stat *st);

/* output.c: DIR/ember-HOST-STARTNS.pb.gz, written to a temporary name and
 * renamed, mode 0600. */
int agent_output_write(const char *dir, const char *host, uint64_t start_ns,
		       const struct ember_buf *gz, char *path, size_t path_size);

/* ---- pushing (push.c) -------------------------------------------------- */

struct agent_push;
struct agent_push_stats {
	uint64_t sent, failed_attempts, dropped, dropped_bytes, refused;
	size_t queued, queued_bytes;
	uint64_t backoff_ms;
	long last_status;
};
/* Pushes to server through h (borrowed: it must outlive p); tenant
 * (NULL: none; copied) is the X-Scope-OrgID of every push and check. */
struct agent_push *agent_push_new(struct agent_http *h, const char *server, const char *tenant,
				  bool gzip, size_t cap_bytes, int *err);
void agent_push_free(struct agent_push *p);
/* Queue an encoded profile (raw protobuf): it is compressed (zstd, or
 * gzip) and kept until sent; the oldest are dropped (and counted) when
 * the buffer would pass its cap.  raw is left to the caller. */
int agent_push_enqueue(struct agent_push *p, const struct ember_buf *raw);
/* Send what is due (respecting the backoff); returns ms until the next
 * attempt is due, or -1 when the queue is empty. */
long agent_push_run(struct agent_push *p, uint64_t now_ms);
/* NULL, or why the server refused a push for good (400, 401, 403: the
 * token, the labels or the tenant), the agent's cue to stop; the queue then rests.
 * Valid until agent_push_free. */
const char *agent_push_refusal(const struct agent_push *p);
/* Before sampling: POST empty (an encoded profile without samples) with
 * labels as query parameters and X-Ember-Check: 1 (the server checks it
 * as a push and stores nothing).
 * 0 taken; -EACCES refused (a wrong or missing token, a bad label, no
 * tenant named to a server with --multitenancy); -EAGAIN
 * no answer or a transient one (5xx, 404, 429); why says which and the
 * server's reason. */
int agent_push_check(struct agent_push *p, const struct ember_buf *empty,
		     const struct agent_label *labels, size_t n, char *why, size_t why_size);
void agent_push_stats(const struct agent_push *p, struct agent_push_stats *s);

/* ---- upload-missing (upload_missing.c) ----------------------------------------- */

/*
 * Whether a process' file (st) may speak for its build ID beyond the
 * processes that map it: owned by root and not writable by group or
 * others.  Anyone can write an ELF note claiming any build ID; only such
 * a file is uploaded (--upload-missing), written to the table cache
 * (keyed by build ID) or shares its table with other files of its build
 * ID.  Any other is keyed by build ID and owner (tables.c).
 */
bool agent_file_trusted(const struct stat *st);

/* Ask the server whether it knows build_id (GET /api/v1/artifacts/ID) and
 * upload the file open on fd (named path) if not.  0, -EPERM for a file
 * that is not agent_file_trusted (logged, never sent), or a negative
 * errno / HTTP status > 0 when refused (logged with the server's reason). */
int agent_upload_missing(struct agent_http *h, const char *server, const char *build_id,
			 const char *path, int fd);

/* ---- metrics (agent_metrics.c) ----------------------------------------------- */

struct agent_metrics;
struct agent;
struct agent_metrics *agent_metrics_new(const char *listen, int *err, char *why,
					size_t why_size);
void agent_metrics_free(struct agent_metrics *m);
int agent_metrics_fd(const struct agent_metrics *m);
/* Answer the connections waiting on the listening socket. */
void agent_metrics_serve(struct agent_metrics *m, struct agent *a);
/* The Prometheus text of a's counters (agent_metrics.c). */
int agent_metrics_text(struct agent *a, struct ember_buf *out);

/* ---- the agent (agent_main.c) ------------------------------------------------ */

struct agent {
	struct agent_opts *opts;
	struct agent_bpf *bpf;
	struct agent_table_maps maps;
	struct agent_http *http;
	struct agent_tables *tables;
	struct agent_procs *procs;
	struct agent_kallsyms *kallsyms;
	struct agent_push *push;
	struct agent_metrics *metrics;
	uint64_t start_mono_ns;
	uint64_t profiles_written, samples_drained, drains;
	uint64_t events[5];
	uint64_t last_drain_mono_ns;
	uint64_t interval_start_ns; /* wall clock */
};

/* summary.c: the info lines, one an interval (its samples) and one at exit. */
void agent_summary_interval(const struct agent *a, uint64_t samples);
void agent_summary_exit(const struct agent *a);

/* events.c: the handler of BPF events (ctx is the struct agent). */
int agent_on_event(void *ctx, const struct agent_event *e);

#endif /* EMBER_AGENT_INTERNAL_H */
