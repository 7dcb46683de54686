/*
 * events.c - what the BPF side reports (ring buffer): a sample of a
 * process the agent does not know yet, a pc outside every known mapping
 * (a library loaded since the last scan), both at once, and, read at the
 * next wakeup, an exec and an exit.  The first two scan the process;
 * rescans for an unknown pc are rate-limited per process, since a pc can
 * lie outside every mapping for good (a frame-pointer walk through code
 * that does not keep them, mappings past the agent's limits): one per
 * 250 ms, or per 50 times what its last scan took when that is longer,
 * and one per 30 s for a process whose scan stopped at its limit (its
 * pcs past the limit are expected and a rescan cannot place them).
 * Refused rescans are counted.  An exec is not scanned: the BPF
 * side has dropped the process' entry, so its first sample asks for the
 * scan, and the processes of a build that exit unsampled cost nothing.
 */
#include "agent_internal.h"

#include <errno.h>
#include <string.h>

#define RESCAN_MIN_NS 250000000ull
#define RESCAN_COST_FACTOR 50
#define RESCAN_TRUNCATED_NS 30000000000ull

/* Whether pr may be rescanned for an unknown pc at now. */
static bool rescan_due(const struct agent_process *pr, uint64_t now)
{
	uint64_t gap = RESCAN_MIN_NS;

	if (pr->scan_cost_ns * RESCAN_COST_FACTOR > gap)
		gap = pr->scan_cost_ns * RESCAN_COST_FACTOR;
	if (pr->scan_truncated && gap < RESCAN_TRUNCATED_NS)
		gap = RESCAN_TRUNCATED_NS;
	return now - pr->seen_ns >= gap;
}

int agent_on_event(void *ctx, const struct agent_event *e)
{
	struct agent *a = ctx;
	struct agent_process *pr = agent_procs_find(a->procs, (pid_t)e->pid);
	uint64_t now = ember_monotonic_ns();
	int err;

	if (e->kind < sizeof(a->events) / sizeof(a->events[0]))
		a->events[e->kind]++;
	switch (e->kind) {
	case AGENT_EVENT_EXIT:
		agent_procs_exited(a->procs, (pid_t)e->pid);
		return 0;
	case AGENT_EVENT_EXEC:
		agent_procs_exec(a->procs, (pid_t)e->pid, e->ktime_ns);
		return 0;
	case AGENT_EVENT_UNKNOWN_PC:
		if (pr && !rescan_due(pr, now)) {
			agent_procs_note_deferred(a->procs);
			return 0;
		}
		break;
	case AGENT_EVENT_UNKNOWN_PROC:
		break;
	default:
		return 0;
	}
	err = agent_procs_scan(a->procs, (pid_t)e->pid);
	if (ember_log_enabled(EMBER_LOG_DEBUG))
		pr_debug("agent: pid %u scanned (event %u) %.1f ms after the event, in %.1f ms",
			 e->pid, e->kind, (double)(now - e->ktime_ns) / 1e6,
			 (double)(ember_monotonic_ns() - now) / 1e6);
	pr = agent_procs_find(a->procs, (pid_t)e->pid);
	if (pr && e->kind == AGENT_EVENT_UNKNOWN_PC)
		pr->seen_ns = now; /* first-sample scans can come before ld.so
				      maps the libraries: no limit after them
				      (but for a truncated one: procs.c) */
	if (err && err != -ENOENT && err != -ESRCH)
		pr_debug("agent: cannot scan pid %u: %s", e->pid, strerror(-err));
	return 0;
}
