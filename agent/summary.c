/*
 * summary.c - what the agent says at info level: one line an interval
 * (samples, processes, tables by where they came from, pushes) and one
 * at exit (the same totals and the run time), so a day's log is a few
 * lines a minute whatever the host maps; each file's table is a debug
 * line (tables.c).  The numbers are those of /metrics (agent_metrics.c).
 */
#include "agent_internal.h"

#include <inttypes.h>
#include <stdio.h>

/* "tables: 12 loaded (3 cache, 4 server, 5 compiled), 2 frame pointers, 0 pending" */
static void tables_text(const struct agent *a, char *out, size_t size)
{
	size_t c[AGENT_TABLE_SOURCE_COUNT], bytes, unloads;

	agent_tables_counts(a->tables, c, &bytes, &unloads);
	snprintf(out, size,
		 "tables: %zu (%zu cache, %zu server, %zu compiled), %zu frame pointers, "
		 "%zu pending",
		 c[AGENT_TABLE_CACHE] + c[AGENT_TABLE_SERVER] + c[AGENT_TABLE_COMPILED],
		 c[AGENT_TABLE_CACHE], c[AGENT_TABLE_SERVER], c[AGENT_TABLE_COMPILED],
		 c[AGENT_TABLE_FRAME_POINTERS], agent_tables_pending(a->tables));
}

/* "pushes: 5 sent, 0 failed, 0 refused" or "profiles: 5 written" */
static void pushes_text(const struct agent *a, char *out, size_t size)
{
	struct agent_push_stats s = { 0 };
	int n = snprintf(out, size, "profiles: %" PRIu64 " written", a->profiles_written);

	if (!a->push || n < 0 || (size_t)n >= size)
		return;
	agent_push_stats(a->push, &s);
	snprintf(out + n, size - (size_t)n,
		 ", %" PRIu64 " sent, %" PRIu64 " failed attempts, %" PRIu64 " refused, %" PRIu64
		 " dropped",
		 s.sent, s.failed_attempts, s.refused, s.dropped);
}

void agent_summary_interval(const struct agent *a, uint64_t samples)
{
	char tables[256], pushes[256];

	tables_text(a, tables, sizeof(tables));
	pushes_text(a, pushes, sizeof(pushes));
	pr_info("agent: interval: %" PRIu64 " samples, %zu processes; %s; %s", samples,
		agent_procs_count(a->procs), pushes, tables);
}

void agent_summary_exit(const struct agent *a)
{
	char tables[256], pushes[256];

	tables_text(a, tables, sizeof(tables));
	pushes_text(a, pushes, sizeof(pushes));
	pr_info("agent: exiting after %.1f s: %" PRIu64 " samples in %" PRIu64 " intervals; %s; %s",
		(double)(ember_monotonic_ns() - a->start_mono_ns) / 1e9, a->samples_drained,
		a->drains, pushes, tables);
}
