/*
 * clock.c - the monotonic clock in milliseconds: deadlines of requests
 * and connections, expiry times (never the wall clock, which jumps).
 */
#include "common.h"

#include <time.h>

uint64_t ember_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
