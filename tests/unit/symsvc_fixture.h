/*
 * symsvc_fixture.h - a debuginfo store holding fixture ELFs and a
 * symbolization service on it, for the unit tests of the symbolization
 * service and of the profile service above it.
 */
#ifndef EMBER_TEST_SYMSVC_FIXTURE_H
#define EMBER_TEST_SYMSVC_FIXTURE_H

#include "store_fixture.h"
#include "symsvc.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A service over a fresh store holding the fixture name (id its build
 * ID), in *dir (a template the caller owns). */
static inline int service_with(char *dir, const char *name, struct store **s, struct symsvc **svc,
			char *id)
{
	if (!mkdtemp(dir) || store_open(dir, s))
		return -1;
	if (put_file(*s, unit_fixture(name), STORE_KIND_EXECUTABLE, id) ||
	    symsvc_new(*s, NULL, svc)) {
		store_free(*s);
		return -1;
	}
	return 0;
}

/* The address of the first defined function of elf whose symbol matches
 * the awk pattern, or 0. */
static inline uint64_t func_addr(const char *elf, const char *pattern)
{
	char cmd[4400], line[256] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "readelf -sW '%s' | awk '$4 == \"FUNC\" && $7 != \"UND\" && $8 ~ /%s/ "
		 "{ print $2; exit }'",
		 elf, pattern);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	pclose(p);
	return strtoull(line, NULL, 16);
}

#endif /* EMBER_TEST_SYMSVC_FIXTURE_H */
