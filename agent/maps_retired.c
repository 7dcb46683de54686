/*
 * maps_retired.c - the mappings a rescan of a process no longer saw,
 * kept until the interval's profile is built.  Samples are named at the
 * end of the interval against the process' mappings as last scanned, and
 * a rescan can come after code was unmapped: V8 frees its code space
 * before exit_group (a sample during that teardown, at a pc the agent does
 * not know, asks for the rescan), a library is dlclose'd.  Without these,
 * every earlier sample in that code would lose its mapping, so its JIT
 * name or its module.  A pc no current mapping holds is looked up here;
 * agent_procs_reap empties the list at each interval's end.
 */
#include "agent_internal.h"

#include <stdlib.h>
#include <string.h>

/* Whether the scan's mappings v[0, n) (sorted by start) hold one the same
 * as m: same place, offset and path. */
static bool still_mapped(const struct agent_proc_map *v, size_t n, const struct agent_proc_map *m)
{
	size_t i = agent_last_at_or_below(v, n, sizeof(*v), m->start);

	return i != SIZE_MAX && v[i].start == m->start && v[i].end == m->end &&
	       v[i].offset == m->offset && !strcmp(v[i].path, m->path);
}

static int by_start(const void *a, const void *b)
{
	const struct agent_proc_map *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

void agent_maps_retire(struct agent_tables *t, struct agent_process *pr,
		       const struct agent_proc_map *v, size_t n)
{
	size_t room = AGENT_RETIRED_MAPPINGS_MAX - pr->nretired, added = 0;
	struct agent_proc_map *r;

	if (room > pr->nmaps)
		room = pr->nmaps;
	r = room ? realloc(pr->retired, (pr->nretired + room) * sizeof(*r)) : NULL;
	if (r)
		pr->retired = r;
	for (size_t i = 0; i < pr->nmaps; i++) {
		struct agent_proc_map *m = &pr->maps[i];

		if (r && added < room && !still_mapped(v, n, m)) {
			pr->retired[pr->nretired + added++] = *m; /* its file and path move */
			continue;
		}
		agent_tables_release(t, m->file);
		free(m->path);
	}
	free(pr->maps);
	pr->maps = NULL;
	pr->nmaps = 0;
	pr->nretired += added;
	if (added)
		qsort(pr->retired, pr->nretired, sizeof(*pr->retired), by_start);
}

void agent_maps_retired_drop(struct agent_tables *t, struct agent_process *pr)
{
	for (size_t i = 0; i < pr->nretired; i++) {
		agent_tables_release(t, pr->retired[i].file);
		free(pr->retired[i].path);
	}
	free(pr->retired);
	pr->retired = NULL;
	pr->nretired = 0;
}

struct agent_proc_map *agent_maps_retired_find(struct agent_process *pr, uint64_t addr)
{
	size_t i = agent_last_at_or_below(pr->retired, pr->nretired, sizeof(*pr->retired), addr);

	if (i == SIZE_MAX || addr >= pr->retired[i].end)
		return NULL;
	return &pr->retired[i];
}
