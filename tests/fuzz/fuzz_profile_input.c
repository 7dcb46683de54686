/*
 * fuzz_profile_input.c - libFuzzer target for what the profile routes
 * take besides a pprof and a selector (which have their own targets):
 * wire/pyroscope.h's parsers.  The first byte picks the parser, the rest
 * is its input.
 *   0: a time parameter and a duration (pyro_parse_time, pyro_parse_duration)
 *   1: Pyroscope's name=APP{k=v,...} and its kind suffix
 *   2: a folded body ("a;b;c 12" lines), 3: a lines body
 * A folded profile that parses must encode and decode again as a valid
 * pprof (wire/'s checks): what /ingest builds is always a profile.
 */
#include "pprof.h"
#include "pyroscope.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

static void folded(const char *s, size_t n, bool counted)
{
	static const struct pyro_kind cpu = { "cpu", "process_cpu", "cpu", "nanoseconds", true };
	struct pprof_profile *p = NULL, *back = NULL;
	struct ember_buf b;
	char why[512];

	if (pyro_folded_parse(s, n, counted, &cpu, 100, NULL, &p, why, sizeof(why)))
		return;
	ember_buf_init(&b, (size_t)1 << 28);
	if (pprof_encode(p, false, &b) ||
	    pprof_decode(b.data ? b.data : "", b.len, NULL, &back, why, sizeof(why)))
		abort(); /* a profile /ingest built is not one */
	pprof_profile_free(back);
	pprof_profile_free(p);
	ember_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;
	int64_t t;
	struct pyro_tags *tags;
	char why[512];

	ember_log_set_handler(quiet, NULL);
	if (size < 1 || !(s = malloc(size)))
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 4) {
	case 0:
		pyro_parse_time(s, 1800000000000000000ll, &t);
		pyro_parse_duration(s, &t);
		break;
	case 1:
		tags = calloc(1, sizeof(*tags));
		if (tags && !pyro_name_parse(s, tags, why, sizeof(why)))
			pyro_kind_of(tags, "objects");
		free(tags);
		break;
	default:
		folded(s, size - 1, data[0] % 4 == 2);
	}
	free(s);
	return 0;
}
