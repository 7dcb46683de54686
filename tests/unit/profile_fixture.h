/*
 * profile_fixture.h - shared by the profile store's and the profile
 * model's unit tests (profile_fixture.c).
 */
#ifndef EMBER_TEST_PROFILE_FIXTURE_H
#define EMBER_TEST_PROFILE_FIXTURE_H

#include "common.h"
#include "pprof.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmodel_result;

#define SEC ((int64_t)1000000000)
#define MS ((int64_t)1000000)
#define HOUR (3600 * SEC)
#define T0 ((int64_t)1700000000 * SEC) /* a fixed "now" */

/* The test's temporary directory (make_dir, remove_dir). */
extern char dir[256];
int make_dir(void);
void remove_dir(void);

/* Function name (file "name.c", line 1).  A location with one line of
 * function name (one location per name);
 * a location without lines at address (unsymbolized). */
int func_of(struct pprof_profile *p, const char *name, uint64_t *id);
int loc_of(struct pprof_profile *p, uint64_t mid, const char *name, uint64_t *id);
int raw_loc(struct pprof_profile *p, uint64_t mid, uint64_t addr, uint64_t *id);
/*
 * A CPU profile (samples/count, cpu/nanoseconds, period 10 ms) of stacks
 * "root;...;leaf" with counts[i] samples each.  A frame "0xADDR" is an
 * unsymbolized address in the mapping of build ID "beef" (others are in
 * the mapping of "cafe").  NULL on failure.
 */
struct pprof_profile *mkprof(const char *const *stacks, const int64_t *counts, size_t n,
			     int64_t time);

/* A result built by hand (profile-model's dictionary calls): main;work;inner
 * 3 (work and inner one location, inner inlined, the 3 attributed
 * "thread=t"), main;work 2 (work's own location), main;idle 4,
 * main;libx.so+0x10 1 (unsymbolized), other 5; 2 profiles, period 10.
 * NULL on failure; pmodel_result_free. */
struct pmodel_result *focus_result(void);

/* Stacks with recursion (outputs), and a base and a new side (diffs). */
extern const char *const SREC[];
extern const int64_t CREC[];
extern const char *const SB[], *const SN[];
extern const int64_t CB[], CN[];

/* Run cmd (a shell line), its stdout into out; the exit status. */
int run_cmd(const char *cmd, struct ember_buf *out);
bool have(const char *tool);
int write_file(const char *path, const void *data, size_t len);
/* xmllint finds the SVG at path well-formed with frames: 0, UNIT_SKIP
 * without xmllint, else -1. */
int check_svg(const char *path, const char *frame);

#endif /* EMBER_TEST_PROFILE_FIXTURE_H */
