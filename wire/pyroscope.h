/*
 * pyroscope.h - what Grafana Pyroscope's POST /ingest and Grafana's query
 * parameters send besides a pprof: the application name with its tags
 * ("APP{k=v,k2=v2}"), the profile kind an APP suffix names (".cpu",
 * ".alloc_space", ...: Pyroscope's table), folded ("frame;frame;leaf
 * COUNT", the collapsed-stack format of Brendan Gregg's flamegraph.pl)
 * and lines bodies turned into a pprof profile, and the times and
 * durations their parameters carry ("now-1h", RFC 3339, an epoch count;
 * "1h30m").  docs/http-api.md, "Ingest, Pyroscope's protocol", is the
 * version followed.
 *
 * Pipeline position: parsers of outside input, under the profile service
 * (profile-service/) and the HTTP routes that read these parameters; on
 * ember_common and pprof.h only.  Fuzzed by tests/fuzz/fuzz_profile_input.c.
 * Errors: 0 or -EINVAL (-ENOMEM) with the reason written for the sender.
 * No global state.
 */
#ifndef EMBER_WIRE_PYROSCOPE_H
#define EMBER_WIRE_PYROSCOPE_H

#include "pprof.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PYRO_MAX_TAGS 48
#define PYRO_EXTRA_TAGS 4 /* room for the labels a caller adds (app, spy, kind) */

struct pyro_tag {
	const char *name, *value;
};

/* name=APP{k=v,...}: the tags (pointing into buf), room for
 * PYRO_EXTRA_TAGS more, and APP. */
struct pyro_tags {
	char buf[4096];
	struct pyro_tag v[PYRO_MAX_TAGS + PYRO_EXTRA_TAGS];
	size_t n;
	char app[512];
};

/* A kind of folded profile, named by APP's suffix. */
struct pyro_kind {
	const char *suffix;
	const char *name;		/* __name__ */
	const char *type, *unit;	/* its sample type */
	bool timed;			/* counts scaled by the period, cpu:nanoseconds */
};

/* Parse name into t: 0 or -EINVAL with why set. */
int pyro_name_parse(const char *name, struct pyro_tags *t, char *why, size_t size);
bool pyro_tags_has(const struct pyro_tags *t, const char *name);
/* The kind APP's suffix names (cut from t->app), else units', else CPU;
 * points into a static table. */
const struct pyro_kind *pyro_kind_of(struct pyro_tags *t, const char *units);

/* A folded (counted) or lines body as a new profile of kind k at rate
 * samples a second into *out (caller frees): 0 or -EINVAL / -ENOMEM
 * with why set; what the profile and the parse allocate is taken from
 * acct first (borrowed: it must outlive the profile, whose later edits
 * it is charged too; NULL: none), -E2BIG or -EAGAIN when it refuses. */
int pyro_folded_parse(const char *body, size_t len, bool counted, const struct pyro_kind *k,
		      uint64_t rate, struct ember_mem_account *acct, struct pprof_profile **out,
		      char *why, size_t size);

/* An unsigned decimal number up to max: 0 or -EINVAL. */
int pyro_parse_uint(const char *s, uint64_t max, uint64_t *out);
/* "10s", "5m", "1h30m", "250ms", "2d", "1w", or plain seconds: ns > 0. */
int pyro_parse_duration(const char *s, int64_t *out);
/*
 * A time: "now", "now-15m", RFC 3339, or an integer from the epoch whose
 * unit is read from its size (< 1e11 s, < 1e14 ms, < 1e17 us, else ns),
 * into ns.  now_ns is "now".  0 or -EINVAL.
 */
int pyro_parse_time(const char *s, int64_t now_ns, int64_t *out);

#endif /* EMBER_WIRE_PYROSCOPE_H */
