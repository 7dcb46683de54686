/*
 * types.c - profile types, named as Grafana Pyroscope names them:
 * "name:sample_type:sample_unit:period_type:period_unit", e.g.
 * "process_cpu:cpu:nanoseconds:cpu:nanoseconds" (the cpu column of a Go
 * CPU profile) or "memory:inuse_space:bytes:space:bytes".  The name is
 * the profile's __name__ label, given by the caller or derived here from
 * its period and sample types; a query may also name a type by an alias,
 * its sample type alone ("cpu", "alloc_space") or "name:sample_type"
 * ("block:delay"), resolved against the types the store holds.
 */
#include "pmodel_internal.h"

#include <stdio.h>

static bool has_sample_type(const struct pprof_profile *p, const char *prefix)
{
	const pprof_message_t *m = pprof_message(p);

	for (size_t i = 0; i < m->n_sample_type; i++) {
		const char *t = pprof_string(p, m->sample_type[i]->type);

		if (t && strncmp(t, prefix, strlen(prefix)) == 0)
			return true;
	}
	return false;
}

const char *pmodel_profile_name(const struct pprof_profile *p)
{
	const pprof_message_t *m = pprof_message(p);
	const char *pt = m->period_type ? pprof_string(p, m->period_type->type) : NULL;

	if (!pt)
		pt = "";
	if (strcmp(pt, "cpu") == 0 || has_sample_type(p, "cpu"))
		return "process_cpu";
	if (strcmp(pt, "wall") == 0 || has_sample_type(p, "wall"))
		return "wall";
	if (strcmp(pt, "space") == 0 || has_sample_type(p, "alloc_") ||
	    has_sample_type(p, "inuse_"))
		return "memory";
	if (strncmp(pt, "goroutine", 9) == 0 || has_sample_type(p, "goroutine"))
		return "goroutine";
	if (strcmp(pt, "contentions") == 0 || has_sample_type(p, "contentions") ||
	    has_sample_type(p, "delay"))
		return "mutex";
	return "profile";
}

bool pmodel_type_is_count(const char *sample_unit)
{
	return sample_unit && strcmp(sample_unit, "count") == 0;
}

/* What a built-in alias means when the store holds no such type yet. */
static const char *const defaults[][2] = {
	{ "cpu", "process_cpu:cpu:nanoseconds:cpu:nanoseconds" },
	{ "samples", "process_cpu:samples:count:cpu:nanoseconds" },
	{ "wall", "wall:wall:nanoseconds:wall:nanoseconds" },
	{ "alloc_space", "memory:alloc_space:bytes:space:bytes" },
	{ "alloc_objects", "memory:alloc_objects:count:space:bytes" },
	{ "inuse_space", "memory:inuse_space:bytes:space:bytes" },
	{ "inuse_objects", "memory:inuse_objects:count:space:bytes" },
	{ "goroutine", "goroutine:goroutine:count:goroutine:count" },
	{ "contentions", "mutex:contentions:count:contentions:count" },
	{ "delay", "mutex:delay:nanoseconds:contentions:count" },
};

static size_t count_colons(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == ':';
	return n;
}

/* Whether full ID id has the alias's fields: "st" or "name:st". */
static bool alias_matches(const char *alias, const char *id)
{
	const char *c = strchr(alias, ':'), *st = strchr(id, ':');
	size_t n;

	if (!st)
		return false;
	if (c && (strncmp(alias, id, (size_t)(c - alias)) != 0 || id + (c - alias) != st))
		return false;
	alias = c ? c + 1 : alias;
	n = strlen(alias);
	return strncmp(st + 1, alias, n) == 0 && st[1 + n] == ':';
}

static int ambiguous(const char *text, const char *a, const char *b, struct ember_diag *d)
{
	return EMBER_FAIL(
		d, -PMODEL_ERR_TYPE,
		"profile type '%.64s' is ambiguous: '%s' or '%s' (give the full type)", text, a,
		b);
}

int pmodel_type_resolve(const char *text, char *const *ids, size_t n, char **out,
		    struct ember_diag *d)
{
	size_t colons = count_colons(text);
	const char *found = NULL;

	EMBER_FAIL_IF(!*text || colons == 2 || colons == 3 || colons > 4, d, -PMODEL_ERR_TYPE,
		      "profile type '%.64s' is neither a type ID (name:sample_type:"
		      "sample_unit:period_type:period_unit) nor an alias",
		      text);
	if (colons == 4) {
		*out = strdup(text);
		return *out ? 0 : -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!alias_matches(text, ids[i]))
			continue;
		if (found)
			return ambiguous(text, found, ids[i], d);
		found = ids[i];
	}
	for (size_t i = 0; !found && i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (strcmp(text, defaults[i][0]) == 0)
			found = defaults[i][1];
	EMBER_FAIL_IF(!found, d, -PMODEL_ERR_TYPE,
		      "unknown profile type '%.64s' (see the profile types the store lists)",
		      text);
	*out = strdup(found);
	return *out ? 0 : -ENOMEM;
}
