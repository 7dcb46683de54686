/*
 * types.c - profile types, named as Grafana Pyroscope names them:
 * "name:sample_type:sample_unit:period_type:period_unit", e.g.
 * "process_cpu:cpu:nanoseconds:cpu:nanoseconds" (the cpu column of a Go
 * CPU profile) or "memory:inuse_space:bytes:space:bytes".  The name is
 * the profile's __name__ label, given by the caller or derived here from
 * its period and sample types; a query may also name a type by an alias,
 * its sample type alone ("cpu", "alloc_space") or "name:sample_type"
 * ("block:delay"), resolved by a fixed rule (pmodel_type_resolve) that
 * never fails for a type someone else pushed.
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

/* The built-in types, in the order an alias prefers them (the rule is
 * docs/http-api.md's, "Selections"): the first one an alias matches wins
 * whatever else the store holds, so a pushed type cannot take an alias
 * from the type everyone means by it. */
static const char *const builtin[] = {
	"process_cpu:cpu:nanoseconds:cpu:nanoseconds",
	"process_cpu:samples:count:cpu:nanoseconds",
	"wall:wall:nanoseconds:wall:nanoseconds",
	"memory:alloc_space:bytes:space:bytes",
	"memory:alloc_objects:count:space:bytes",
	"memory:inuse_space:bytes:space:bytes",
	"memory:inuse_objects:count:space:bytes",
	"goroutine:goroutine:count:goroutine:count",
	"mutex:contentions:count:contentions:count",
	"mutex:delay:nanoseconds:contentions:count",
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

static bool is_held(const char *id, char *const *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], id) == 0)
			return true;
	return false;
}

/* The first built-in type alias matches, among the held ones (held) or
 * all of them (!held); NULL if none. */
static const char *builtin_match(const char *alias, char *const *ids, size_t n, bool held)
{
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (alias_matches(alias, builtin[i]) && (!held || is_held(builtin[i], ids, n)))
			return builtin[i];
	return NULL;
}

/* The held type alias matches that sorts first byte-wise; NULL if none. */
static const char *held_match(const char *alias, char *const *ids, size_t n)
{
	const char *first = NULL;

	for (size_t i = 0; i < n; i++)
		if (alias_matches(alias, ids[i]) && (!first || strcmp(ids[i], first) < 0))
			first = ids[i];
	return first;
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
	found = builtin_match(text, ids, n, true);
	found = found ? found : held_match(text, ids, n);
	found = found ? found : builtin_match(text, ids, n, false);
	EMBER_FAIL_IF(!found, d, -PMODEL_ERR_TYPE,
		      "unknown profile type '%.64s' (see the profile types the store lists)",
		      text);
	*out = strdup(found);
	return *out ? 0 : -ENOMEM;
}
