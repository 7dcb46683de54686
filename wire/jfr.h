/*
 * jfr.h - JDK Flight Recorder recordings in: what Pyroscope's Java agent
 * (and `java -XX:StartFlightRecording`, `jcmd PID JFR.dump`) writes, read
 * into one pprof profile a profile type, as Grafana Pyroscope's server
 * reads the body of POST /ingest?format=jfr.  docs/formats.md, "JFR
 * recordings", gives the versions followed (the chunk format 2.x the JDK
 * writes since 11, the event-to-type table of grafana/jfr-parser) and the
 * byte layout this parser checks.
 *
 * Profile types, one pprof profile each, their __name__ and sample types
 * as Pyroscope names them:
 *   jdk.ExecutionSample             process_cpu  cpu:nanoseconds (a sample
 *                                                counts the CPU period)
 *   jdk.ObjectAllocationInNewTLAB   memory       alloc_in_new_tlab_objects:count,
 *                                                alloc_in_new_tlab_bytes:bytes
 *   jdk.ObjectAllocationOutsideTLAB memory       alloc_outside_tlab_objects:count,
 *                                                alloc_outside_tlab_bytes:bytes
 *   jdk.ObjectAllocationSample      memory       alloc_sample_objects:count,
 *                                                alloc_sample_bytes:bytes
 *   jdk.JavaMonitorEnter            mutex        contentions:count, delay:nanoseconds
 *   jdk.ThreadPark                  block        contentions:count, delay:nanoseconds
 * Java frames are functions named "pkg.Class.method" with the recording's
 * line numbers, one location a (method, line), no mappings.
 *
 * Pipeline position: a parser of outside input under POST /ingest
 * (api/pyroscope_ingest.c), on ember_common and pprof.h only.  Every
 * size, count, offset and nesting of the recording is checked against
 * the input and the limits below before it is used; what the parse
 * holds and the profiles it builds are charged to the caller's account.
 * Fuzzed by tests/fuzz/fuzz_jfr.c.
 *
 * Errors: 0 or a negative errno with a reason for the sender: -EINVAL
 * (not a recording, or a malformed one: the reason names the chunk, the
 * offset and the check), -E2BIG (a limit), -EAGAIN (the memory budget is
 * taken), -ENOMEM.  No global state; a recording is used by one thread at
 * a time.
 */
#ifndef EMBER_WIRE_JFR_H
#define EMBER_WIRE_JFR_H

#include "common.h"
#include "pprof.h"

#include <stddef.h>
#include <stdint.h>

/* The profile types, in the order a recording lists them. */
enum jfr_kind {
	JFR_KIND_CPU,
	JFR_KIND_ALLOC_IN_NEW_TLAB,
	JFR_KIND_ALLOC_OUTSIDE_TLAB,
	JFR_KIND_ALLOC_SAMPLE,
	JFR_KIND_LOCK,
	JFR_KIND_PARK,
	JFR_KIND_COUNT
};

/*
 * Caps on what one decode may cost; past any of them the recording is
 * refused with -E2BIG.  Zero fields take the default shown; NULL: all.
 */
struct jfr_limits {
	size_t sz;		  /* sizeof(struct jfr_limits) */
	size_t max_input_bytes;	  /* the recording: 64 MiB */
	size_t max_chunks;	  /* chunks of the recording: 1024 */
	size_t max_classes;	  /* classes of one chunk's metadata: 16 Ki */
	size_t max_fields;	  /* fields of one class: 1024 */
	size_t max_meta_strings;  /* strings of one metadata event: 256 Ki */
	size_t max_string_bytes;  /* one string: 64 KiB */
	size_t max_constants;	  /* constant pool entries of one chunk: 8 Mi */
	size_t max_events;	  /* sample events of the recording: 8 Mi */
	size_t max_stack_depth;	  /* frames of one stack trace: 4096 */
	size_t max_nesting;	  /* values inside values (and metadata elements): 32 */
	/* Charged for what the parse holds (metadata, constants, events) and
	 * for every profile built, before each is allocated (-E2BIG past its
	 * share, -EAGAIN when the budget is taken).  Borrowed: it must
	 * outlive the recording and its profiles.  NULL: caps only. */
	struct ember_mem_account *account;
};

/* How the recording is read; NULL: defaults. */
struct jfr_opts {
	size_t sz;			/* sizeof(struct jfr_opts) */
	const struct jfr_limits *lim;	/* NULL: defaults */
	int64_t cpu_period_ns;		/* what a CPU sample counts; 0: 10 ms (100 Hz) */
	/* Pyroscope's LabelsSnapshot (the "labels" field of the Java agent's
	 * form: contexts of label pairs by context ID, and their strings):
	 * an event whose contextId names a context gets its labels (the first
	 * 64) as sample labels.  NULL: none. */
	const void *labels;
	size_t labels_len;
};

/* One profile type of the recording. */
struct jfr_profile {
	struct pprof_profile *p; /* owned by the recording until jfr_profile_take */
	enum jfr_kind kind;
	const char *name;	/* __name__ as Pyroscope gives it (static) */
	const char *event;	/* the JFR event type it was read from (static) */
	size_t n_events;	/* events of that type read */
};

struct jfr_recording {
	struct jfr_profile profiles[JFR_KIND_COUNT]; /* those with events, in kind order */
	size_t n_profiles;
	size_t n_chunks;
	int64_t start_ns, duration_ns; /* the chunks' span, from their headers */
};

/*
 * Read data (a recording: one or more chunks, each "FLR\0" and its
 * header; not compressed: the caller undoes gzip) into *out, one pprof
 * profile a profile type that has events, each with the recording's
 * time span.  On success returns 0 and *out is new (caller frees with
 * jfr_recording_free); a recording without any event of the types above
 * decodes to no profiles.  On failure returns an error of the header
 * comment, leaves *out unchanged and writes the reason to why (why_size
 * bytes, NUL-terminated) when why is non-NULL.
 */
int jfr_decode(const void *data, size_t size, const struct jfr_opts *o,
	       struct jfr_recording **out, char *why, size_t why_size);

/* Take profile i's pprof profile (the caller frees it; the entry's p
 * becomes NULL).  NULL when i is out of range or it was taken. */
struct pprof_profile *jfr_profile_take(struct jfr_recording *r, size_t i);

/* Release a recording and every profile not taken.  Accepts NULL. */
void jfr_recording_free(struct jfr_recording *r);

#endif /* EMBER_WIRE_JFR_H */
