/*
 * procs.c - the processes the agent samples: for each, its executable
 * mappings (from /proc/PID/maps), the file behind each (opened through
 * /proc/PID/map_files, else /proc/PID/root, so that a process in another
 * mount namespace or container is read as it sees its files), the load
 * bias of each mapping, and the labels of its samples (executable,
 * cgroup, container ID, service_name: service_id.c).  Each scan rewrites
 * the process' entry in the BPF procs map: its mappings sorted by start, with the file_id of the
 * table the BPF walk uses (0: frame pointers).
 *
 * A process is scanned when the agent starts and when BPF reports a sample
 * of a pid or at a pc it does not know (after an exec, the BPF side drops
 * the entry, so the first sample of the new image asks); it is kept after
 * it exits until its last samples are drained.
 *
 * What a scan holds is bounded (any local user can make a process with
 * 64,000 executable mappings): at most AGENT_PROCESS_MAPPINGS_MAX a
 * process and AGENT_HOST_MAPPINGS_MAX over every process; /proc/PID/maps
 * is read no further than the limit, the process is marked truncated
 * (logged once, counted) and its pcs past the limit stop the walk.
 */
#include "agent_internal.h"

#include <bpf/bpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct agent_procs {
	struct agent_tables *tables;
	int procs_fd;
	int pyprocs_fd;		/* < 0: Python frames not read */
	struct agent_process **v; /* sorted by pid */
	size_t n, alloc;
	struct agent_proc *bpf_val; /* scratch for the BPF entry (8 KiB) */
	size_t process_max, host_max; /* mappings held: a process, every process */
	struct agent_procs_stats st; /* st.mappings: the sum of every process' nmaps */
	unsigned census_gen;	/* the last census of who maps what */
};

struct agent_procs *agent_procs_new(struct agent_tables *t, int procs_fd, int *err)
{
	struct agent_procs *p = calloc(1, sizeof(*p));

	if (p)
		p->bpf_val = calloc(1, sizeof(*p->bpf_val));
	if (!p || !p->bpf_val) {
		free(p);
		*err = -ENOMEM;
		return NULL;
	}
	p->tables = t;
	p->procs_fd = procs_fd;
	p->pyprocs_fd = -1;
	p->process_max = AGENT_PROCESS_MAPPINGS_MAX;
	p->host_max = AGENT_HOST_MAPPINGS_MAX;
	return p;
}

void agent_procs_set_limits(struct agent_procs *p, size_t process_max, size_t host_max)
{
	p->process_max = process_max;
	p->host_max = host_max;
}

void agent_procs_stats(const struct agent_procs *p, struct agent_procs_stats *out)
{
	*out = p->st;
}

void agent_procs_note_deferred(struct agent_procs *p)
{
	p->st.rescans_deferred++;
}

void agent_procs_note_perfmap(struct agent_procs *p, bool refused)
{
	if (refused)
		p->st.perfmaps_refused++;
	else
		p->st.perfmap_reads++;
}

void agent_procs_set_pyprocs(struct agent_procs *p, int pyprocs_fd)
{
	p->pyprocs_fd = pyprocs_fd;
}

int agent_procs_python_frame(struct agent_procs *p, struct agent_process *pr, uint64_t frame,
			     struct agent_py_frame *out)
{
	if (!pr || !pr->python)
		return -ENOENT;
	return agent_python_frame(pr->python, frame, &p->st, out);
}

void agent_procs_python_warm(void *procs, const struct agent_sample_rec *r)
{
	struct agent_procs *p = procs;
	struct agent_process *pr = agent_procs_find(p, (pid_t)r->pid);
	struct agent_py_frame f;

	if (!pr || !pr->python)
		return;
	for (uint16_t i = 0; i < r->nuser && i < AGENT_MAX_FRAMES; i++)
		if (r->ips[i] & AGENT_PY_FRAME_TAG)
			(void)agent_python_frame(pr->python, r->ips[i], &p->st, &f);
}

/* Drop pr's CPython (its pyprocs entry goes with its procs entry). */
static void process_drop_python(struct agent_process *pr)
{
	agent_python_free(pr->python);
	pr->python = NULL;
	pr->python_warned = false;
}

static void release_maps(struct agent_procs *p, struct agent_proc_map *maps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		agent_tables_release(p->tables, maps[i].file);
		free(maps[i].path);
	}
	free(maps);
}

/* Drop pr's mappings (their files released) from the host's count. */
static void process_drop_maps(struct agent_procs *p, struct agent_process *pr)
{
	release_maps(p, pr->maps, pr->nmaps);
	p->st.mappings -= pr->nmaps;
	pr->maps = NULL;
	pr->nmaps = 0;
}

static void process_free(struct agent_procs *p, struct agent_process *pr)
{
	process_drop_maps(p, pr);
	agent_maps_retired_drop(p->tables, pr);
	agent_perfmap_forget(pr);
	process_drop_python(pr);
	free(pr);
}

void agent_procs_free(struct agent_procs *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		process_free(p, p->v[i]);
	free(p->v);
	free(p->bpf_val);
	free(p);
}

/* Index of pid in p->v, or where it would go (*found false). */
static size_t slot_of(const struct agent_procs *p, pid_t pid, bool *found)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->v[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < p->n && p->v[lo]->pid == pid;
	return lo;
}

struct agent_process *agent_procs_find(struct agent_procs *p, pid_t pid)
{
	bool found;
	size_t i = slot_of(p, pid, &found);

	return found ? p->v[i] : NULL;
}

static struct agent_process *process_get(struct agent_procs *p, pid_t pid)
{
	bool found;
	size_t i = slot_of(p, pid, &found);
	struct agent_process *pr;

	if (found)
		return p->v[i];
	if (p->n >= p->alloc && ember_vec_grow((void **)&p->v, &p->alloc, p->n, sizeof(*p->v)))
		return NULL;
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->pid = pid;
	pr->nspid = pid;
	memmove(&p->v[i + 1], &p->v[i], (p->n - i) * sizeof(*p->v));
	p->v[i] = pr;
	p->n++;
	return pr;
}

/* ---- labels ------------------------------------------------------------- */

static void read_small(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, out, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* A container ID in a cgroup path: the last run of 64 hex digits
 * (docker-ID.scope, /docker/ID, cri-containerd-ID.scope, /kubepods/.../ID). */
static void container_of(const char *cgroup, char *out, size_t size)
{
	size_t run = 0;

	out[0] = '\0';
	for (const char *c = cgroup;; c++) {
		if (*c && isxdigit((unsigned char)*c) && !isupper((unsigned char)*c)) {
			run++;
			continue;
		}
		if (run == 64 && size > 64) {
			memcpy(out, c - 64, 64);
			out[64] = '\0';
		}
		run = 0;
		if (!*c)
			break;
	}
}

/* The cgroup v2 path of pid: the "0::/path" line of /proc/PID/cgroup, the
 * only line on a v2 host, one beside the v1 hierarchies' on a hybrid one
 * (none on a v1-only host: no label). */
static void read_cgroup(pid_t pid, char *out, size_t size)
{
	char path[64], buf[4096];
	int fd;
	ssize_t n;
	const char *line;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW); /* the kernel's text, bounded */
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	line = !strncmp(buf, "0::", 3) ? buf : strstr(buf, "\n0::");
	if (line)
		line += line[0] == '\n' ? 4 : 3;
	snprintf(out, size, "%.*s", line ? (int)strcspn(line, "\n") : 0, line ? line : "");
}

static void read_labels(struct agent_process *pr)
{
	struct agent_service_id sid;
	char path[64], buf[1024];
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pr->pid);
	n = readlink(path, pr->exe, sizeof(pr->exe) - 1);
	pr->exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pr->pid);
	read_small(path, pr->comm, sizeof(pr->comm));
	read_cgroup(pr->pid, pr->cgroup, sizeof(pr->cgroup));
	container_of(pr->cgroup, pr->container, sizeof(pr->container));
	agent_service_parse_cgroup(pr->cgroup, &sid);
	if (sid.pod_uid[0]) /* else, or none there, the pod's UID */
		agent_service_pod_workload(AGENT_PODS_DIR, sid.pod_uid, sid.workload,
					   sizeof(sid.workload));
	else if (sid.container_full[0]) /* else, or none there, the ID */
		agent_service_container_name(AGENT_DOCKER_DIR, sid.container_full,
					     sid.container_name, sizeof(sid.container_name));
	agent_service_name(&sid, pr->exe, pr->comm, pr->service, sizeof(pr->service));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pr->pid);
	f = fopen(path, "re");
	while (f && fgets(buf, sizeof(buf), f)) {
		if (!strncmp(buf, "NSpid:", 6)) {
			char *last = strrchr(buf, '\t');

			pr->nspid = last ? (pid_t)atoi(last + 1) : pr->pid;
		} else if (!strncmp(buf, "Uid:", 4)) {
			unsigned ruid, euid;

			if (sscanf(buf + 4, "%u %u", &ruid, &euid) == 2)
				pr->uid = (uid_t)euid;
		}
	}
	if (f)
		fclose(f);
}

/* ---- mappings ----------------------------------------------------------- */

/* The mapping of pr's last scan holding addr, or NULL. */
static struct agent_proc_map *current_mapping(struct agent_process *pr, uint64_t addr)
{
	size_t i = agent_last_at_or_below(pr->maps, pr->nmaps, sizeof(*pr->maps), addr);

	if (i == SIZE_MAX || addr >= pr->maps[i].end)
		return NULL;
	return &pr->maps[i];
}

struct scan {
	struct agent_procs *p;
	struct agent_process *pr;
	struct agent_proc_map *maps;
	size_t n, alloc;
	size_t limit;		/* mappings this scan may hold */
	bool truncated;		/* stopped at limit: more mappings follow */
	/* the file of the scan's previous mapping (one file mapped many times
	 * is opened and read once) */
	uint64_t last_inode;
	unsigned last_major, last_minor;
	struct agent_file *last_file;
};

/* The old mapping of the same file at the same place (a binary search:
 * the old mappings are sorted by start), whose file can be reused
 * without opening it again; else the scan's previous file when m is the
 * same device and inode. */
static struct agent_file *reuse(const struct scan *s, const struct agent_map_line *m)
{
	struct agent_proc_map *o = current_mapping(s->pr, m->start);

	if (o && o->start == m->start && o->end == m->end && o->offset == m->offset &&
	    o->file && o->path && !strcmp(o->path, m->path))
		return o->file;
	if (s->last_file && m->inode && m->inode == s->last_inode &&
	    m->dev_major == s->last_major && m->dev_minor == s->last_minor)
		return s->last_file;
	return NULL;
}

/* Open the file of m as pid sees it (a regular file only, without
 * blocking on a FIFO put at its path: agent_open_mapped). */
static int open_mapped(pid_t pid, const struct agent_map_line *m, char *used, size_t size)
{
	struct stat st;
	int fd;

	snprintf(used, size, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start, m->end);
	fd = agent_open_mapped(used, &st);
	if (fd >= 0)
		return fd;
	snprintf(used, size, "/proc/%d/root%s", (int)pid, m->path);
	return agent_open_mapped(used, &st);
}

static struct agent_file *file_of(struct scan *s, const struct agent_map_line *m)
{
	char used[600], ident[64];
	struct agent_file *f = reuse(s, m);
	int fd, err = 0;

	if (f) {
		f->refs++;
		return f;
	}
	if (m->path[0] != '/')
		return NULL; /* anonymous (JIT), [vdso]: frame pointers */
	fd = open_mapped(s->pr->pid, m, used, sizeof(used));
	if (fd < 0) {
		pr_debug("agent: pid %d: cannot open '%s': %s", (int)s->pr->pid, m->path,
			 strerror(-fd));
		return NULL;
	}
	snprintf(ident, sizeof(ident), "inode-%x:%x:%" PRIu64, m->dev_major, m->dev_minor,
		 m->inode);
	f = agent_tables_acquire(s->p->tables, ident, fd, m->path, used, &err);
	close(fd);
	if (!f && err != -ENOEXEC)
		pr_debug("agent: pid %d: '%s': %s", (int)s->pr->pid, m->path, strerror(-err));
	if (f) {
		s->last_file = f;
		s->last_inode = m->inode;
		s->last_major = m->dev_major;
		s->last_minor = m->dev_minor;
	}
	return f;
}

static int on_mapping(void *ctx, const struct agent_map_line *m)
{
	struct scan *s = ctx;
	struct agent_proc_map pm = { .start = m->start, .end = m->end, .offset = m->offset };
	uint64_t vaddr;

	if (m->start >= 0xffff800000000000ULL) /* [vsyscall]: kernel addresses */
		return 0;
	if (s->n >= s->limit) {
		s->truncated = true;
		return AGENT_MAPS_STOP; /* /proc/PID/maps is read no further */
	}
	pm.file = file_of(s, m);
	pm.bias = 0;
	if (pm.file && !agent_elf_offset_to_vaddr(&pm.file->elf, m->offset, &vaddr))
		pm.bias = m->start - vaddr;
	pm.path = strdup(m->path);
	if (!pm.path || EMBER_VEC_PUSH(s->maps, s->n, s->alloc, pm)) {
		agent_tables_release(s->p->tables, pm.file);
		free(pm.path);
		return -ENOMEM;
	}
	return 0;
}

/* The BPF entry: mappings by start, the table's file_id where loaded. */
static int write_bpf(struct agent_procs *p, struct agent_process *pr)
{
	struct agent_proc *v = p->bpf_val;
	uint32_t key = (uint32_t)pr->pid;
	size_t n = pr->nmaps < AGENT_PROC_MAPPINGS ? pr->nmaps : AGENT_PROC_MAPPINGS;

	if (pr->nmaps > AGENT_PROC_MAPPINGS && !pr->bpf_truncated) {
		pr->bpf_truncated = true; /* logged once a process */
		pr_warn("agent: pid %d has %zu executable mappings; the walk knows the first %d",
			(int)pr->pid, pr->nmaps, AGENT_PROC_MAPPINGS);
	}
	memset(v, 0, sizeof(*v));
	v->nmaps = (uint32_t)n;
	v->generation = ++pr->generation;
	for (size_t i = 0; i < n; i++) {
		const struct agent_proc_map *m = &pr->maps[i];

		v->maps[i] = (struct agent_mapping){
			.start = m->start, .end = m->end, .bias = m->bias,
			.file_id = m->file && m->file->loaded ? m->file->table.file_id : 0,
		};
	}
	return bpf_map_update_elem(p->procs_fd, &key, v, BPF_ANY) ? -errno : 0;
}

/* The mappings a scan of pr may hold: its share of the host's budget. */
static size_t scan_limit(const struct agent_procs *p, const struct agent_process *pr)
{
	size_t others = p->st.mappings - pr->nmaps;
	size_t host_left = p->host_max > others ? p->host_max - others : 0;

	return host_left < p->process_max ? host_left : p->process_max;
}

/* A scan stopped at its limit: counted every time, logged once a process. */
static void note_truncated(struct agent_procs *p, struct agent_process *pr, size_t n)
{
	bool host = n < p->process_max;

	if (host)
		p->st.truncated_host++;
	else
		p->st.truncated_process++;
	if (pr->truncated)
		return;
	pr->truncated = true;
	pr_warn("agent: pid %d (%s) has more executable mappings than %s: the first %zu are "
		"kept, pcs past them are not unwound",
		(int)pr->pid, pr->comm,
		host ? "the host's budget leaves it (AGENT_HOST_MAPPINGS_MAX)"
		     : "a process may hold (AGENT_PROCESS_MAPPINGS_MAX)", n);
}

int agent_procs_scan(struct agent_procs *p, pid_t pid)
{
	struct agent_process *pr = process_get(p, pid);
	struct scan s = { .p = p, .pr = pr };
	uint64_t now = ember_monotonic_ns();
	int err;

	if (!pr)
		return -ENOMEM;
	s.limit = scan_limit(p, pr);
	err = agent_maps_foreach(pid, on_mapping, &s);
	if (err && err != AGENT_MAPS_STOP) {
		release_maps(p, s.maps, s.n);
		if (err == -ENOENT || err == -ESRCH)
			agent_procs_exited(p, pid);
		return err;
	}
	read_labels(pr);
	p->st.mappings -= pr->nmaps;
	agent_maps_retire(p->tables, pr, s.maps, s.n); /* after the new ones took their refs */
	pr->maps = s.maps;
	pr->nmaps = s.n;
	p->st.mappings += s.n;
	p->st.scans++;
	if (s.truncated) {
		note_truncated(p, pr, s.n);
		pr->seen_ns = now; /* its rescans for an unknown pc wait (events.c) */
	}
	pr->scan_truncated = s.truncated;
	pr->scanned = true;
	pr->scan_ns = now;
	pr->exited = false;
	pr->scan_cost_ns = ember_monotonic_ns() - now;
	agent_jitdump_open(pr); /* kept open: its last records come at exit */
	err = write_bpf(p, pr);
	if (!err && p->pyprocs_fd >= 0)
		err = agent_python_attach(p->pyprocs_fd, &p->st, pr);
	return err;
}

/* ---- who maps what: the table manager's questions ---------------------- */

/* g is mapped by pr (a live process), in census gen. */
static void count_user(struct agent_file *g, struct agent_process *pr, unsigned gen)
{
	if (g->census_gen != gen) {
		g->census_gen = gen;
		g->census_procs = 0;
		g->census_by = NULL;
		g->census_summed = false;
	}
	if (g->census_by != pr) {
		g->census_by = pr;
		g->census_procs++;
	}
}

/* pr's private tables (the loaded tables of the files it alone maps). */
static void sum_private(struct agent_process *pr)
{
	memset(&pr->held, 0, sizeof(pr->held));
	pr->newest = NULL;
	for (size_t i = 0; i < pr->nmaps; i++) {
		struct agent_file *g = pr->maps[i].file;

		if (!g || !g->loaded || g->census_procs != 1 || g->census_summed)
			continue;
		g->census_summed = true;
		agent_table_use_add(&pr->held, &g->table);
		if (!pr->newest || g->table.file_id > pr->newest->table.file_id)
			pr->newest = g;
	}
}

/* Who maps each file and what each live process' private tables take:
 * two passes over the mappings held (at most AGENT_HOST_MAPPINGS_MAX). */
static void census(struct agent_procs *p)
{
	unsigned gen = ++p->census_gen;

	for (size_t i = 0; i < p->n; i++) {
		struct agent_process *pr = p->v[i];

		for (size_t k = 0; !pr->exited && k < pr->nmaps; k++)
			if (pr->maps[k].file)
				count_user(pr->maps[k].file, pr, gen);
	}
	for (size_t i = 0; i < p->n; i++)
		if (!p->v[i]->exited)
			sum_private(p->v[i]);
}

static void file_users(void *ctx, const struct agent_file *f, struct agent_file_users *u)
{
	struct agent_procs *p = ctx;
	struct agent_process *only;

	census(p);
	memset(u, 0, sizeof(*u));
	if (f->census_gen != p->census_gen)
		return; /* no live process maps it */
	u->processes = f->census_procs;
	if (u->processes != 1)
		return;
	only = f->census_by;
	u->pid = only->pid;
	u->held = only->held;
	u->warned = &only->share_warned;
	if (f->loaded) /* the held without it */
		agent_table_use_drop(&u->held, &f->table);
}

static void largest(void *ctx, const struct agent_table_maps *m, struct agent_table_holder *h)
{
	struct agent_procs *p = ctx;
	double most = -1;

	census(p);
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < p->n; i++) {
		struct agent_process *pr = p->v[i];
		double w;

		if (pr->exited || !pr->newest)
			continue;
		h->holders++;
		w = agent_table_maps_weight(m, &pr->held);
		if (w <= most)
			continue;
		most = w;
		h->pid = pr->pid;
		h->held = pr->held;
		h->newest = pr->newest;
		h->warned = &pr->evict_warned;
	}
}

void agent_procs_table_users(struct agent_procs *p, struct agent_table_users *out)
{
	*out = (struct agent_table_users){
		.file = file_users, .largest = largest, .rewrite = agent_procs_file_ready, .ctx = p,
	};
}

void agent_procs_file_ready(void *ctx, struct agent_file *f)
{
	struct agent_procs *p = ctx;

	for (size_t i = 0; i < p->n; i++) {
		struct agent_process *pr = p->v[i];

		for (size_t k = 0; k < pr->nmaps; k++) {
			if (pr->maps[k].file == f) {
				if (!pr->exited && write_bpf(p, pr))
					pr_debug("agent: pid %d: cannot update its BPF entry",
						 (int)pr->pid);
				break;
			}
		}
	}
}

int agent_procs_scan_all(struct agent_procs *p, const pid_t *pids, size_t npids)
{
	DIR *d;
	struct dirent *e;

	if (npids) {
		for (size_t i = 0; i < npids; i++)
			agent_procs_scan(p, pids[i]);
		return 0;
	}
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid())
			continue;
		agent_procs_scan(p, (pid_t)pid);
	}
	closedir(d);
	return 0;
}

void agent_procs_exec(struct agent_procs *p, pid_t pid, uint64_t exec_ns)
{
	struct agent_process *pr = agent_procs_find(p, pid);
	uint32_t key = (uint32_t)pid;

	if (!pr || !pr->scanned || pr->scan_ns >= exec_ns)
		return; /* unknown, or scanned after the exec (the new image) */
	pr_debug("agent: pid %d exec'd after its scan: its mappings dropped", (int)pid);
	/* read before the exec, maybe written after the BPF side dropped it */
	bpf_map_delete_elem(p->procs_fd, &key);
	if (p->pyprocs_fd >= 0)
		bpf_map_delete_elem(p->pyprocs_fd, &key);
	process_drop_maps(p, pr);
	agent_perfmap_forget(pr); /* the new image writes its own */
	process_drop_python(pr);
	pr->scanned = false;
}

void agent_procs_exited(struct agent_procs *p, pid_t pid)
{
	struct agent_process *pr = agent_procs_find(p, pid);

	if (pr && !pr->exited) {
		pr->exited = true;
		pr->exit_ns = ember_monotonic_ns();
	}
}

void agent_procs_reap(struct agent_procs *p, uint64_t before_ns)
{
	size_t k = 0;

	for (size_t i = 0; i < p->n; i++) {
		struct agent_process *pr = p->v[i];

		if (pr->exited && pr->exit_ns < before_ns) {
			uint32_t key = (uint32_t)pr->pid;

			bpf_map_delete_elem(p->procs_fd, &key);
			if (p->pyprocs_fd >= 0)
				bpf_map_delete_elem(p->pyprocs_fd, &key);
			process_free(p, pr);
			continue;
		}
		agent_maps_retired_drop(p->tables, pr); /* their samples are drained */
		p->v[k++] = pr;
	}
	p->n = k;
}

struct agent_proc_map *agent_process_mapping(struct agent_process *pr, uint64_t addr)
{
	struct agent_proc_map *m = current_mapping(pr, addr);

	return m ? m : agent_maps_retired_find(pr, addr);
}

size_t agent_procs_count(const struct agent_procs *p)
{
	return p->n;
}

void agent_procs_foreach(struct agent_procs *p, void (*fn)(void *ctx, struct agent_process *pr),
			 void *ctx)
{
	for (size_t i = 0; i < p->n; i++)
		fn(ctx, p->v[i]);
}
