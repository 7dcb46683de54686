/*
 * tables.c - the table manager: one entry per mapped file (by build ID),
 * holding where its unwind table came from and where it sits in the BPF
 * maps.  The first mapping of a file asks the worker thread
 * (table_worker.c) for its table, which tries, in this order:
 *
 *   1. --cache-dir: DIR/BUILDID.unwind, revalidated with the server's
 *      ETag (If-None-Match: a 304 keeps it);
 *   2. --server: GET /api/v1/unwind/BUILDID (then written to the cache);
 *   3. the server has none (404), is unreachable, or there is no server:
 *      compiled here with the unwind compiler (and cached);
 *   4. nothing compiles (no CFI, no build ID and no compiler, maps full):
 *      frame pointers, with the reason.
 *
 * A build ID is only what a file claims: a file not agent_file_trusted
 * (another user's, or writable by others) is keyed by build ID, owner
 * and mode, so it never shares the table of root's file of that build ID
 * (nor its compiled table the cache), and is not uploaded.
 *
 * The main thread loads what comes back (agent_tables_collect) and has
 * the processes that map the file rewritten; until then their walks use
 * frame pointers in it.  Each outcome is logged once per file and counted (/metrics).  A table
 * no mapping uses any more is unloaded by the next agent_tables_gc()
 * after it has been idle a whole interval, so the short-lived processes
 * of a build or a shell loop do not load and unload libc each time.
 *
 * The maps are shared by rule (agent_internal.h, AGENT_TABLE_SHARE_DIV):
 * a process' private tables within a quarter of them; a table that does
 * not fit evicts the idle tables, then the newest private tables of the
 * process holding the most (make_room) down to what the newcomer's
 * process would hold, so that when the maps are full every process
 * holding private tables ends with about as much as the others.
 */
#include "agent_internal.h"
#include "unwind.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


struct agent_tables {
	struct agent_tables_opts o;
	struct agent_table_maps *maps;
	struct agent_http *http;
	struct agent_file **files;
	size_t nfiles, alloc;
	uint64_t next_file_id;
	size_t unloads;
	size_t uploads;
	size_t reuses;
	size_t npending;
	struct agent_worker *worker;
	struct agent_table_users users; /* users.file NULL: no rule */
	size_t refused_share, refused_full, evicted;
};

static const char *const source_names[AGENT_TABLE_SOURCE_COUNT] = {
	[AGENT_TABLE_NONE] = "none",
	[AGENT_TABLE_CACHE] = "cache",
	[AGENT_TABLE_SERVER] = "server",
	[AGENT_TABLE_COMPILED] = "compiled",
	[AGENT_TABLE_FRAME_POINTERS] = "frame_pointers",
};

const char *agent_table_source_name(enum agent_table_source s)
{
	return s < AGENT_TABLE_SOURCE_COUNT ? source_names[s] : "?";
}

struct agent_tables *agent_tables_new(const struct agent_tables_opts *o,
				      struct agent_table_maps *maps, struct agent_http *http,
				      int *err)
{
	struct agent_tables *t = calloc(1, sizeof(*t));

	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	t->o = *o;
	t->maps = maps;
	t->http = http;
	t->next_file_id = 1;
	t->worker = agent_worker_new(o, err);
	if (!t->worker) {
		free(t);
		return NULL;
	}
	return t;
}

void agent_tables_free(struct agent_tables *t)
{
	if (!t)
		return;
	agent_worker_free(t->worker); /* first: its jobs name the files */
	for (size_t i = 0; i < t->nfiles; i++) {
		if (t->files[i]->loaded)
			agent_table_unload(t->maps, &t->files[i]->table);
		free(t->files[i]);
	}
	free(t->files);
	free(t);
}

static struct agent_file *find(struct agent_tables *t, const char *key)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (!strcmp(t->files[i]->key, key))
			return t->files[i];
	return NULL;
}

static void log_outcome(const struct agent_file *f, size_t size)
{
	const char *id = f->elf.build_id_len ? f->elf.build_id_hex : "none";

	switch (f->source) {
	case AGENT_TABLE_SERVER:
		pr_debug("agent: '%s' (build ID %s): unwind table from the server (%zu bytes)",
			f->path, id, size);
		break;
	case AGENT_TABLE_CACHE:
		pr_debug("agent: '%s' (build ID %s): unwind table from the cache (%zu bytes)",
			f->path, id, size);
		break;
	case AGENT_TABLE_COMPILED:
		pr_debug("agent: '%s' (build ID %s): unwind table compiled by the agent "
			"(%zu bytes)%s%s",
			f->path, id, size, f->why[0] ? ": " : "", f->why);
		break;
	default:
		pr_debug("agent: '%s' (build ID %s): frame pointers: %s", f->path, id, f->why);
		break;
	}
}

/* Ask the worker for f's table. */
static int submit(struct agent_tables *t, struct agent_file *f)
{
	struct agent_table_job *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->file = f;
	snprintf(j->build_id_hex, sizeof(j->build_id_hex), "%s",
		 f->elf.build_id_len ? f->elf.build_id_hex : "");
	snprintf(j->path, sizeof(j->path), "%s", f->path);
	snprintf(j->open_path, sizeof(j->open_path), "%s", f->open_path);
	j->dev = f->dev;
	j->ino = f->ino;
	j->trusted = f->trusted;
	f->pending = true;
	t->npending++;
	agent_worker_submit(t->worker, j);
	return 0;
}

void agent_tables_set_users(struct agent_tables *t, const struct agent_table_users *u)
{
	t->users = *u;
}

void agent_tables_refused(const struct agent_tables *t, size_t *share, size_t *full)
{
	*share = t->refused_share;
	*full = t->refused_full;
}

size_t agent_tables_evicted(const struct agent_tables *t)
{
	return t->evicted;
}

static void file_drop(struct agent_tables *t, struct agent_file *f);

/* Forget the files no mapping uses whose tables are loaded (kept for a
 * while in case the file is mapped again), but keep: the maps are full.
 * How many were dropped; mapped again, such a file is asked for anew. */
static size_t evict_idle(struct agent_tables *t, const struct agent_file *keep)
{
	size_t k = 0, n = t->nfiles;

	for (size_t i = 0; i < n; i++) {
		struct agent_file *f = t->files[i];

		if (f != keep && f->refs == 0 && f->loaded && !f->pending) {
			file_drop(t, f);
			continue;
		}
		t->files[k++] = f;
	}
	t->nfiles = k;
	return n - k;
}

static bool over(uint64_t have, uint64_t add, uint64_t cap)
{
	return cap && have + add > cap / AGENT_TABLE_SHARE_DIV;
}

/* f's table (taking mine) within the share of the one process mapping
 * it (a table two processes map is always admitted): 0, or -EDQUOT with
 * f->why (counted). */
static int share_check(struct agent_tables *t, struct agent_file *f,
		       const struct agent_table_use *mine)
{
	struct agent_file_users u;

	if (!t->users.file)
		return 0;
	t->users.file(t->users.ctx, f, &u);
	if (u.processes != 1 ||
	    (!over(u.held.data, mine->data, t->maps->data_size) &&
	     !over(u.held.rules, mine->rules, t->maps->nrules) &&
	     !over(u.held.pages, mine->pages, t->maps->npages)))
		return 0;
	t->refused_share++;
	snprintf(f->why, sizeof(f->why),
		 "refused: pid %d, the one process mapping it, has used its share of the unwind "
		 "maps (a quarter: %llu of %zu data bytes, %llu of %zu rules, %llu pages)",
		 (int)u.pid, (unsigned long long)u.held.data, t->maps->data_size,
		 (unsigned long long)u.held.rules, t->maps->nrules,
		 (unsigned long long)u.held.pages);
	if (u.warned && !*u.warned) {
		*u.warned = true;
		pr_warn("agent: pid %d maps more binaries than its share of the unwind maps holds: "
			"their tables are refused, its frames there walked by frame pointers "
			"(ember_agent_tables_refused_total)", (int)u.pid);
	}
	return -EDQUOT;
}

/* h's newest private table out of the maps, for another process' table:
 * its processes' walks use frame pointers in that file from now on. */
static void evict(struct agent_tables *t, const struct agent_table_holder *h)
{
	struct agent_file *f = h->newest;

	f->loaded = false;
	t->users.rewrite(t->users.ctx, f); /* before its ranges go to another table */
	agent_table_unload(t->maps, &f->table);
	f->source = AGENT_TABLE_FRAME_POINTERS;
	snprintf(f->why, sizeof(f->why),
		 "evicted: pid %d, the one process mapping it, held the most of the unwind maps "
		 "when another process' table needed room", (int)h->pid);
	log_outcome(f, 0);
	t->evicted++;
	if (h->warned && !*h->warned) {
		*h->warned = true;
		pr_warn("agent: pid %d holds more of the unwind maps than the other processes: "
			"its tables loaded last are evicted when another process' table needs room, "
			"its frames there walked by frame pointers (ember_agent_tables_evicted_total)",
			(int)h->pid);
	}
}

/* What a holder keeps may not go below: what the newcomer's process
 * would hold with the new table (need); for a table several processes
 * map, the holder's fair share (the maps over the processes holding
 * private tables). */
static double floor_of(const struct agent_tables *t, const struct agent_file_users *u,
		       const struct agent_table_use *need, const struct agent_table_holder *h)
{
	struct agent_table_use with = u->held;

	if (u->processes != 1)
		return 1.0 / h->holders;
	with.data += need->data;
	with.rules += need->rules;
	with.pages += need->pages;
	return agent_table_maps_weight(t->maps, &with);
}

/* Whether the holder h may give its newest table for the newcomer u. */
static bool may_evict(const struct agent_tables *t, const struct agent_file_users *u,
		      const struct agent_table_use *need, const struct agent_table_holder *h)
{
	struct agent_table_use left = h->held;

	if (!h->newest || (u->processes == 1 && h->pid == u->pid))
		return false; /* none, or the newcomer's own process holds the most */
	agent_table_use_drop(&left, &h->newest->table);
	return agent_table_maps_weight(t->maps, &left) >= floor_of(t, u, need, h);
}

/* Room for f's table (need), which does not fit: private tables of the
 * processes holding the most evicted while they may give them, until
 * the maps have need free.  The tables evicted (0: f is refused). */
static size_t make_room(struct agent_tables *t, struct agent_file *f,
			const struct agent_table_use *need)
{
	struct agent_file_users u;
	struct agent_table_holder h;
	size_t n = 0;

	if (!t->users.file)
		return 0;
	t->users.file(t->users.ctx, f, &u);
	if (!u.processes)
		return 0; /* no live process maps it any more */
	do {
		t->users.largest(t->users.ctx, t->maps, &h);
		if (!may_evict(t, &u, need, &h))
			break;
		evict(t, &h);
		n++;
	} while (!agent_table_maps_room(t->maps, need));
	return n;
}

static int load_image(struct agent_tables *t, struct agent_file *f,
		      const struct agent_table_job *j)
{
	return agent_table_load(t->maps, j->image.data, j->image.len, t->next_file_id,
				&f->table);
}

/* A verified table that does not fit (need): idle tables evicted, then,
 * within the share of the process mapping it, other processes' private
 * tables (make_room).  0 with the table loaded, -ENOSPC or -EDQUOT. */
static int load_when_full(struct agent_tables *t, struct agent_file *f,
			  const struct agent_table_job *j)
{
	struct agent_table_use need;
	int err = -ENOSPC;

	if (evict_idle(t, f))
		err = load_image(t, f, j);
	if (err != -ENOSPC)
		return err;
	agent_table_needs(j->image.data, &need);
	err = share_check(t, f, &need); /* before evicting anything for it */
	if (err)
		return err;
	do
		err = load_image(t, f, j);
	while (err == -ENOSPC && make_room(t, f, &need));
	t->refused_full += err == -ENOSPC;
	return err;
}

/* Load j's image as f's table (load_when_full when it does not fit),
 * within the share of the process mapping it. */
static int load(struct agent_tables *t, struct agent_file *f, struct agent_table_job *j)
{
	struct agent_table_use mine = { 0 };
	int err = load_image(t, f, j);

	if (err == -ENOSPC)
		err = load_when_full(t, f, j);
	if (err) {
		if (err != -EDQUOT)
			snprintf(f->why, sizeof(f->why), "cannot load its table: %s",
				 err == -ENOSPC ? "the unwind maps are full"
						: unwind_strerror(err));
		return err;
	}
	t->next_file_id++;
	agent_table_use_add(&mine, &f->table);
	err = share_check(t, f, &mine);
	if (err)
		agent_table_unload(t->maps, &f->table);
	return err;
}

/* The worker's result for f: load the table (or settle for frame pointers). */
static bool apply(struct agent_tables *t, struct agent_file *f, struct agent_table_job *j)
{
	int err = j->err;

	f->pending = false;
	t->npending--;
	f->source = j->source;
	snprintf(f->why, sizeof(f->why), "%s", j->why);
	t->uploads += j->uploaded;
	if (!err) {
		err = load(t, f, j);
		f->loaded = !err;
		if (err)
			f->source = AGENT_TABLE_FRAME_POINTERS;
	}
	log_outcome(f, j->image.len);
	pr_debug("agent: '%s': table job waited %.1f ms, ran %.1f ms, loaded %.1f ms later",
		 f->path, (double)(j->started_ns - j->queued_ns) / 1e6,
		 (double)(j->done_ns - j->started_ns) / 1e6,
		 (double)(ember_monotonic_ns() - j->done_ns) / 1e6);
	return f->loaded;
}

size_t agent_tables_collect(struct agent_tables *t,
			    void (*ready)(void *ctx, struct agent_file *f), void *ctx)
{
	struct agent_table_job *j = agent_worker_take_done(t->worker);
	size_t n = 0;

	while (j) {
		struct agent_table_job *next = j->next;

		if (apply(t, j->file, j) && ready)
			ready(ctx, j->file);
		agent_table_job_free(j);
		j = next;
		n++;
	}
	/* The images were allocated, and are now freed, in the table threads'
	 * malloc arenas, which their own malloc_trim after each job cannot
	 * give back while the image lives: every arena is trimmed here. */
	if (n)
		malloc_trim(0);
	return n;
}

size_t agent_tables_pending(const struct agent_tables *t)
{
	return t->npending;
}

size_t agent_tables_uploads(const struct agent_tables *t)
{
	return t->uploads;
}

int agent_tables_fd(const struct agent_tables *t)
{
	return agent_worker_fd(t->worker);
}

struct agent_file *agent_tables_acquire(struct agent_tables *t, const char *ident, int fd,
					const char *path, const char *open_path, int *err)
{
	struct agent_elf_info e;
	struct agent_file *f;
	char key[sizeof(f->key)];
	struct stat st;
	int e2 = fstat(fd, &st) ? -errno : agent_elf_info_read(fd, &e);

	if (e2) {
		*err = e2;
		return NULL;
	}
	/* a build ID is any file's claim: another user's file with root's
	 * build ID gets its own entry (its own table) */
	if (!e.build_id_len)
		snprintf(key, sizeof(key), "%s", ident);
	else if (agent_file_trusted(&st))
		snprintf(key, sizeof(key), "%s", e.build_id_hex);
	else
		snprintf(key, sizeof(key), "%s:uid%u:%o", e.build_id_hex, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
	f = find(t, key);
	if (f) {
		if (f->refs++ == 0)
			t->reuses++;
		return f;
	}
	if (t->nfiles >= t->alloc &&
	    ember_vec_grow((void **)&t->files, &t->alloc, t->nfiles, sizeof(*t->files))) {
		*err = -ENOMEM;
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		*err = -ENOMEM;
		return NULL;
	}
	snprintf(f->key, sizeof(f->key), "%s", key);
	f->elf = e;
	snprintf(f->path, sizeof(f->path), "%s", path);
	snprintf(f->open_path, sizeof(f->open_path), "%s", open_path);
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	f->trusted = agent_file_trusted(&st);
	f->refs = 1;
	e2 = submit(t, f);
	if (e2) {
		free(f);
		*err = e2;
		return NULL;
	}
	t->files[t->nfiles++] = f;
	return f;
}

void agent_tables_release(struct agent_tables *t, struct agent_file *f)
{
	if (f && --f->refs == 0)
		f->idle_since_ns = ember_monotonic_ns(); /* unloaded by agent_tables_gc */
}

static void file_drop(struct agent_tables *t, struct agent_file *f)
{
	if (f->loaded) {
		agent_table_unload(t->maps, &f->table);
		t->unloads++;
		pr_debug("agent: '%s': unwind table unloaded (no process maps it)", f->path);
		f->loaded = false;
	}
	free(f);
}

void agent_tables_gc(struct agent_tables *t, uint64_t idle_before_ns)
{
	size_t k = 0;

	for (size_t i = 0; i < t->nfiles; i++) {
		struct agent_file *f = t->files[i];

		if (f->refs == 0 && !f->pending && f->idle_since_ns < idle_before_ns) {
			file_drop(t, f);
			continue;
		}
		t->files[k++] = f;
	}
	t->nfiles = k;
}

void agent_tables_counts(const struct agent_tables *t, size_t counts[AGENT_TABLE_SOURCE_COUNT],
			 size_t *loaded_bytes, size_t *unloads)
{
	memset(counts, 0, sizeof(size_t) * AGENT_TABLE_SOURCE_COUNT);
	*loaded_bytes = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct agent_file *f = t->files[i];

		counts[f->source < AGENT_TABLE_SOURCE_COUNT ? f->source : 0]++;
		if (f->loaded)
			*loaded_bytes += f->table.data_len + 16 * f->table.rule_len +
					 32 * (size_t)f->table.npages;
	}
	*unloads = t->unloads;
}

void agent_tables_foreach(const struct agent_tables *t,
			  void (*fn)(void *ctx, const struct agent_file *f), void *ctx)
{
	for (size_t i = 0; i < t->nfiles; i++)
		fn(ctx, t->files[i]);
}
