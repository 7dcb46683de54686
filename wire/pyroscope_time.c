/*
 * pyroscope_time.c - the times, durations and numbers of the profile
 * routes' parameters, as Pyroscope and Grafana write them
 * (docs/http-api.md, "Profiles", Conventions): "now-1h", RFC 3339, an
 * epoch count whose unit is read from its size; "10s", "1h30m", "2d";
 * pyroscope.h.  Outside input: fuzzed by tests/fuzz/fuzz_profile_input.c.
 */
#include "pyroscope.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SEC_NS ((int64_t)1000000000)

int pyro_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int64_t unit_ns(char u)
{
	switch (u) {
	case 's':
		return SEC_NS;
	case 'm':
		return 60 * SEC_NS;
	case 'h':
		return 3600 * SEC_NS;
	case 'd':
		return 86400 * SEC_NS;
	case 'w':
		return 7 * 86400 * SEC_NS;
	default:
		return 0;
	}
}

/* "1h30m", "10s", "2d"; "ms" for milliseconds; plain seconds. */
int pyro_parse_duration(const char *s, int64_t *out)
{
	int64_t total = 0;
	uint64_t plain;

	if (!s || !*s)
		return -EINVAL;
	if (!pyro_parse_uint(s, INT64_MAX / SEC_NS, &plain)) {
		*out = (int64_t)plain * SEC_NS;
		return plain ? 0 : -EINVAL;
	}
	while (*s) {
		char *end;
		double v = strtod(s, &end);
		int64_t u;

		if (end == s || v < 0 || !isdigit((unsigned char)*s))
			return -EINVAL;
		if (end[0] == 'm' && end[1] == 's') {
			u = SEC_NS / 1000;
			end += 2;
		} else if (!(u = unit_ns(*end))) {
			return -EINVAL;
		} else {
			end++;
		}
		if (v * (double)u > 9e18 - (double)total)
			return -EINVAL;
		total += (int64_t)(v * (double)u);
		s = end;
	}
	if (total <= 0)
		return -EINVAL;
	*out = total;
	return 0;
}

/* The magnitude rule: seconds, ms, us or ns since the epoch. */
static int epoch_count(const char *s, int64_t *out)
{
	uint64_t v, mult;

	if (pyro_parse_uint(s, INT64_MAX, &v))
		return -EINVAL;
	mult = v < 100000000000ull ? (uint64_t)SEC_NS : v < 100000000000000ull ? 1000000
	       : v < 100000000000000000ull ? 1000 : 1;
	if (v > (uint64_t)INT64_MAX / mult)
		return -EINVAL; /* past 2262 in nanoseconds */
	*out = (int64_t)(v * mult);
	return 0;
}

/* "2026-12-01T14:00:00[.frac](Z|+hh:mm|-hh:mm)". */
static int rfc3339(const char *s, int64_t *out)
{
	struct tm tm = { 0 };
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	int64_t frac = 0, scale = SEC_NS, off = 0;
	time_t t;

	if (!p)
		return -EINVAL;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			if (scale > 1) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) &&
		   isdigit((unsigned char)p[2]) && p[3] == ':' && isdigit((unsigned char)p[4]) &&
		   isdigit((unsigned char)p[5])) {
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 + ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
		off = *p == '-' ? -off : off;
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	t = timegm(&tm);
	if (t == (time_t)-1 || t < 0 || (int64_t)t - off > INT64_MAX / SEC_NS - 1)
		return -EINVAL; /* before 1970 or past 2262: not a profile's time */
	*out = ((int64_t)t - off) * SEC_NS + frac;
	return 0;
}

int pyro_parse_time(const char *s, int64_t now_ns, int64_t *out)
{
	int64_t d;

	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*out = now_ns;
		return 0;
	}
	if (strncmp(s, "now-", 4) == 0) {
		if (pyro_parse_duration(s + 4, &d))
			return -EINVAL;
		*out = now_ns - d;
		return 0;
	}
	if (isdigit((unsigned char)*s) && !strchr(s, '-'))
		return epoch_count(s, out);
	return rfc3339(s, out);
}
