/*
 * clock.c - the clocks: CLOCK_MONOTONIC for deadlines, expiry times and
 * durations (it never jumps), CLOCK_REALTIME for the times a profile or a
 * record carries (the wall clock, which may).
 */
#include "common.h"

#include <time.h>

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t ember_monotonic_ms(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000000;
}

uint64_t ember_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t ember_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}
