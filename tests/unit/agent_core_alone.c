/*
 * agent_core_alone.c - the check that the agent's library, ember_agent_core,
 * links on its own: without agent/agent_main.c, with every object of the
 * archive (used or not) and the libraries its target names.
 *
 * The build links this program with the archive whole: an object that
 * needed a symbol only agent_main.c defines (as the clocks once were) fails the
 * link, and so the build.  Run, it names each table source through
 * tables.c and reads the clock procs.c uses, so the test has an answer
 * to check.
 *
 *   agent_core_alone     prints "agent core: SOURCE..." and exits 0
 */
#include "agent_internal.h"

#include <stdio.h>

int main(void)
{
	if (!ember_monotonic_ns())
		return 1;
	printf("agent core:");
	for (int s = 0; s < AGENT_TABLE_SOURCE_COUNT; s++)
		printf(" %s", agent_table_source_name((enum agent_table_source)s));
	printf("\n");
	return 0;
}
