/*
 * pyroscope.c - Pyroscope's name parameter "APP{k=v,k2=v2}" (tags,
 * dotted names allowed) and the profile kind an APP suffix names (".cpu",
 * ".alloc_space", ...: Grafana Pyroscope's table); pyroscope.h.  Outside
 * input: fuzzed by tests/fuzz/fuzz_profile_input.c.
 */
#include "pyroscope.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- name=APP{k=v,...} -------------------------------------------------------- */

static int parse_tags(char *p, struct pyro_tags *t, char *why, size_t size)
{
	while (*p && *p != '}') {
		char *comma = p + strcspn(p, ",}"), *eq, stop = *comma;

		*comma = '\0';
		eq = strchr(p, '=');
		if (!eq || eq == p) {
			snprintf(why, size, "name: tag '%.64s' is not k=v", p);
			return -EINVAL;
		}
		if (t->n == PYRO_MAX_TAGS) {
			snprintf(why, size, "name: more than %d tags", PYRO_MAX_TAGS);
			return -EINVAL;
		}
		*eq = '\0';
		t->v[t->n++] = (struct pyro_tag){ p, eq + 1 };
		p = stop ? comma + 1 : comma;
		if (stop == '}')
			break;
	}
	return 0;
}

bool pyro_tags_has(const struct pyro_tags *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			return true;
	return false;
}

int pyro_name_parse(const char *name, struct pyro_tags *t, char *why, size_t size)
{
	char *brace;

	if (!name || !*name) {
		snprintf(why, size, "name: required (APP or APP{k=v,...})");
		return -EINVAL;
	}
	if (strlen(name) >= sizeof(t->buf)) {
		snprintf(why, size, "name: longer than %zu bytes", sizeof(t->buf) - 1);
		return -EINVAL;
	}
	strcpy(t->buf, name);
	brace = strchr(t->buf, '{');
	if (brace) {
		*brace = '\0';
		EMBER_FORWARD_IF_ERROR(parse_tags(brace + 1, t, why, size));
	}
	if (strlen(t->buf) >= sizeof(t->app)) {
		snprintf(why, size, "name: the application name is longer than %zu bytes",
			 sizeof(t->app) - 1);
		return -EINVAL;
	}
	memcpy(t->app, t->buf, strlen(t->buf) + 1);
	return 0;
}

/* ---- the type of a folded profile -------------------------------------------- */

static const struct pyro_kind kinds[] = {
	{ "cpu", "process_cpu", "cpu", "nanoseconds", true },
	{ "itimer", "process_cpu", "cpu", "nanoseconds", true },
	{ "wall", "wall", "wall", "nanoseconds", true },
	{ "inuse_objects", "memory", "inuse_objects", "count", false },
	{ "inuse_space", "memory", "inuse_space", "bytes", false },
	{ "alloc_objects", "memory", "alloc_objects", "count", false },
	{ "alloc_space", "memory", "alloc_space", "bytes", false },
	{ "goroutines", "goroutine", "goroutines", "count", false },
	{ "mutex_count", "mutex", "contentions", "count", false },
	{ "mutex_duration", "mutex", "delay", "nanoseconds", false },
	{ "block_count", "block", "contentions", "count", false },
	{ "block_duration", "block", "delay", "nanoseconds", false },
	{ "objects", "memory", "inuse_objects", "count", false },
	{ "bytes", "memory", "inuse_space", "bytes", false },
};

/* APP's suffix (cut from t->app), else the units parameter, else CPU. */
const struct pyro_kind *pyro_kind_of(struct pyro_tags *t, const char *units)
{
	char *dot = strrchr(t->app, '.');

	for (size_t i = 0; dot && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(dot + 1, kinds[i].suffix) == 0) {
			*dot = '\0';
			return &kinds[i];
		}
	for (size_t i = 0; units && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(units, kinds[i].suffix) == 0)
			return &kinds[i];
	return &kinds[0];
}
