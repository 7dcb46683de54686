/*
 * table_worker.c - the table manager's threads (two): what takes time to
 * get a file's unwind table (the disk cache, a download from --server, a
 * compilation here, an upload with --upload-missing) runs here, so the
 * agent's loop keeps answering exec events, draining maps and pushing
 * profiles meanwhile.  A job names a file by copies of its build ID and
 * paths and gets back the table's bytes (or why there are none); the
 * main thread loads them into the BPF maps (tables.c).  One mutex guards
 * both queues, another lets one thread compile at a time (the agent's
 * peak memory); each thread has its own curl handle; an eventfd tells
 * the main loop that results are waiting.
 */
#include "agent_internal.h"
#include "unwind.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE_BYTES_MAX ((size_t)256 << 20)
/* Two threads: a big binary's compilation does not hold up the tables
 * of the cache and the server queued behind it (compilations take turns). */
#define WORKER_THREADS 2

struct agent_worker {
	struct agent_tables_opts o;
	struct agent_http *http[WORKER_THREADS]; /* curl handles are per thread */
	pthread_t thread[WORKER_THREADS];
	int nthreads;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	/* One compilation at a time: a big binary's takes some 10 MB (libLLVM's
	 * 11 MB), and two at once were the agent's peak RSS; fetches and the
	 * cache still run on both threads. */
	pthread_mutex_t compile_lock;
	struct agent_table_job *todo, *todo_tail, *done;
	bool stop;
	int efd;
};

/* The job's file opened again as the scan opened it, if it is still the
 * same file (device, inode) and at most AGENT_FILE_MAX bytes: the
 * descriptor or a negative errno. */
static int open_job_file(const struct agent_table_job *j)
{
	struct stat st;
	int fd = agent_open_mapped(j->open_path, &st), err = 0;

	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_dev != j->dev || (uint64_t)st.st_ino != j->ino)
		err = -ESTALE;
	else if ((uint64_t)st.st_size > AGENT_FILE_MAX)
		err = -EFBIG;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* Compile the job's file here (read, never mapped: its owner may truncate
 * it meanwhile): 0, or the compiler's error with j->why. */
static int compile_here(struct agent_table_job *j)
{
	char msg[200] = "";
	struct unwind_compile_opts co = { .sz = sizeof(co), .err_msg = msg,
					  .err_msg_size = sizeof(msg) };
	int fd = open_job_file(j), err;

	ember_buf_release(&j->image);
	ember_buf_init(&j->image, TABLE_BYTES_MAX);
	if (fd < 0) {
		snprintf(j->why, sizeof(j->why), "cannot compile a table: '%.150s': %s", j->path,
			 strerror(-fd));
		return fd;
	}
	err = unwind_table_compile_fd(fd, &co, &j->image);
	close(fd);
	if (err)
		snprintf(j->why, sizeof(j->why), "cannot compile a table: %s%s%s",
			 unwind_strerror(err), msg[0] ? ": " : "", msg);
	return err;
}

/*
 * The table from the cache and the server: 0 with j->source set, or
 * -ENOENT when neither has one (j->why says what the server answered).
 */
static int from_cache_or_server(struct agent_worker *w, struct agent_http *http,
				struct agent_table_job *j, bool *server_lacks)
{
	char etag[160] = "", new_etag[160] = "", why[256] = "";
	const char *id = j->build_id_hex;
	bool cached = false;
	int st;

	if (!id[0])
		return -ENOENT;
	if (w->o.cache_dir)
		cached = agent_cache_read(w->o.cache_dir, id, &j->image, etag, sizeof(etag)) == 0;
	if (!w->o.server) {
		j->source = AGENT_TABLE_CACHE;
		return cached ? 0 : -ENOENT;
	}
	st = agent_fetch_table(http, w->o.server, id, cached ? etag : NULL, &j->image,
			       new_etag, sizeof(new_etag), why, sizeof(why));
	if (st == 304 && cached) {
		j->source = AGENT_TABLE_CACHE;
		return 0;
	}
	if (st == 200) {
		j->source = AGENT_TABLE_SERVER;
		if (w->o.cache_dir && agent_cache_write(w->o.cache_dir, id, j->image.data,
							j->image.len, new_etag))
			pr_warn("agent: cannot write '%s/%s.unwind' to the cache", w->o.cache_dir, id);
		return 0;
	}
	*server_lacks = st == 404;
	if (st < 0)
		pr_warn("agent: server '%s' unreachable for the table of '%s': %s", w->o.server,
			j->path, why[0] ? why : strerror(-st));
	else if (st != 404)
		pr_warn("agent: server '%s' answered %d for the table of '%s': %s", w->o.server, st,
			j->path, why);
	if (cached && (etag[0] == '\0' || st < 0)) {
		/* compiled here before, or the server is away: keep using it */
		j->source = AGENT_TABLE_CACHE;
		return 0;
	}
	snprintf(j->why, sizeof(j->why), "the server has no table (%d%s%.200s)", st,
		 why[0] ? ": " : "", why);
	return -ENOENT;
}

/* The whole job: cache, server, upload, compilation. */
static void run_job(struct agent_worker *w, struct agent_http *http, struct agent_table_job *j)
{
	bool server_lacks = false;
	int err;

	ember_buf_init(&j->image, TABLE_BYTES_MAX);
	err = from_cache_or_server(w, http, j, &server_lacks);
	if (server_lacks && w->o.upload_missing && j->build_id_hex[0]) {
		int fd = open_job_file(j);

		if (fd < 0)
			pr_warn("agent: cannot upload '%s': %s", j->path, strerror(-fd));
		else
			j->uploaded = agent_upload_missing(http, w->o.server, j->build_id_hex,
							   j->path, fd) == 0;
		if (fd >= 0)
			close(fd);
	}
	if (err && w->o.local_compile) {
		char server_why[256];

		snprintf(server_why, sizeof(server_why), "%s", j->why);
		pthread_mutex_lock(&w->compile_lock);
		err = compile_here(j);
		malloc_trim(0); /* before the next compilation starts */
		pthread_mutex_unlock(&w->compile_lock);
		if (!err) {
			j->source = AGENT_TABLE_COMPILED;
			snprintf(j->why, sizeof(j->why), "%s", w->o.server ? server_why : "no --server");
			if (w->o.cache_dir && j->build_id_hex[0] && j->trusted)
				agent_cache_write(w->o.cache_dir, j->build_id_hex, j->image.data,
						  j->image.len, "");
		}
	} else if (err) {
		snprintf(j->why + strlen(j->why), sizeof(j->why) - strlen(j->why),
			 "%slocal compilation is off", j->why[0] ? "; " : "");
	}
	if (err) {
		j->source = AGENT_TABLE_FRAME_POINTERS;
		ember_buf_release(&j->image);
	}
	j->err = err;
}

struct worker_arg {
	struct agent_worker *w;
	struct agent_http *http;
};

static void *worker_main(void *arg)
{
	struct agent_worker *w = ((struct worker_arg *)arg)->w;
	struct agent_http *http = ((struct worker_arg *)arg)->http;
	uint64_t one = 1;

	free(arg);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct agent_table_job *j;

		while (!w->todo && !w->stop)
			pthread_cond_wait(&w->wake, &w->lock);
		if (w->stop)
			break;
		j = w->todo;
		w->todo = j->next;
		if (!w->todo)
			w->todo_tail = NULL;
		pthread_mutex_unlock(&w->lock);
		j->started_ns = ember_monotonic_ns();
		run_job(w, http, j);
		j->done_ns = ember_monotonic_ns();
		pthread_mutex_lock(&w->lock);
		j->next = w->done;
		w->done = j;
		if (write(w->efd, &one, sizeof(one)) < 0)
			pr_debug("agent: table worker: eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct agent_worker *agent_worker_new(const struct agent_tables_opts *o, int *err)
{
	struct agent_worker *w = calloc(1, sizeof(*w));

	if (!w) {
		*err = -ENOMEM;
		return NULL;
	}
	w->o = *o;
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->compile_lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	if (w->efd < 0) {
		*err = -errno;
		free(w);
		return NULL;
	}
	for (int i = 0; i < WORKER_THREADS; i++) {
		struct worker_arg *a = malloc(sizeof(*a));

		w->http[i] = o->server ? agent_http_new(o->token) : NULL; /* none without */
		if (!a || (o->server && !w->http[i])) {
			free(a);
			break;
		}
		*a = (struct worker_arg){ .w = w, .http = w->http[i] };
		if (pthread_create(&w->thread[i], NULL, worker_main, a)) {
			free(a);
			break;
		}
		w->nthreads++;
	}
	if (!w->nthreads) {
		*err = -ENOMEM;
		agent_worker_free(w);
		return NULL;
	}
	return w;
}

static void free_jobs(struct agent_table_job *j)
{
	while (j) {
		struct agent_table_job *next = j->next;

		agent_table_job_free(j);
		j = next;
	}
}

void agent_worker_free(struct agent_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
	for (int i = 0; i < w->nthreads; i++)
		pthread_join(w->thread[i], NULL);
	free_jobs(w->todo);
	free_jobs(w->done);
	for (int i = 0; i < WORKER_THREADS; i++)
		agent_http_free(w->http[i]);
	close(w->efd);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->compile_lock);
	pthread_cond_destroy(&w->wake);
	free(w);
}

void agent_worker_submit(struct agent_worker *w, struct agent_table_job *j)
{
	j->next = NULL;
	j->queued_ns = ember_monotonic_ns();
	pthread_mutex_lock(&w->lock);
	if (w->todo_tail)
		w->todo_tail->next = j;
	else
		w->todo = j;
	w->todo_tail = j;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

struct agent_table_job *agent_worker_take_done(struct agent_worker *w)
{
	struct agent_table_job *list, *rev = NULL;
	uint64_t n;

	if (read(w->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		pr_debug("agent: table worker: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&w->lock);
	list = w->done;
	w->done = NULL;
	pthread_mutex_unlock(&w->lock);
	while (list) { /* oldest first */
		struct agent_table_job *next = list->next;

		list->next = rev;
		rev = list;
		list = next;
	}
	return rev;
}

int agent_worker_fd(const struct agent_worker *w)
{
	return w->efd;
}

void agent_table_job_free(struct agent_table_job *j)
{
	if (!j)
		return;
	ember_buf_release(&j->image);
	free(j);
}
