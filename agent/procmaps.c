/*
 * procmaps.c - the executable mappings of a process, from
 * /proc/PID/maps (proc(5)): "start-end perms offset major:minor inode
 * path".  Only mappings with 'x' in their permissions are handed out.
 */
#include "agent_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int agent_maps_parse_line(char *line, struct agent_map_line *out)
{
	struct agent_map_line m = { 0 };
	int pos = 0;

	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &m.start, &m.end, m.perms, &m.offset, &m.dev_major, &m.dev_minor, &m.inode,
		   &pos) < 7 ||
	    m.start > m.end || strlen(m.perms) != 4)
		return -EINVAL;
	m.path = pos > 0 ? line + pos : "";
	while (*m.path == ' ')
		m.path++;
	*out = m;
	return 0;
}

int agent_maps_foreach(pid_t pid, agent_map_fn fn, void *ctx)
{
	char path[64], line[4096 + 128];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		struct agent_map_line m;

		if (agent_maps_parse_line(line, &m) || m.perms[2] != 'x')
			continue;
		err = fn(ctx, &m);
	}
	fclose(f);
	return err;
}
