/*
 * apibench.c - the timed part of bench/symbolize-api/run.sh (see README.md).
 *
 * A benchmark helper, not part of Ember: it drives `ember serve`'s
 * symbolization API (docs/symbolize-api.md) over HTTP with Ember's HTTP
 * client (http-client/httpc.h, libcurl), and
 * llvm-symbolizer as a coprocess, and prints one line of `key=value`
 * fields per measurement for run.sh to collect.
 *
 *   apibench http URL BUILD_ID ADDRS BATCH MIN_SECONDS MIN_REQS SERVER_PID
 *       POST /api/v1/symbolize with BATCH addresses a request (taken in
 *       order from ADDRS, wrapping around), on one keep-alive connection,
 *       until MIN_SECONDS have passed and MIN_REQS requests were made;
 *       one untimed request first.  Server CPU = utime+stime of
 *       /proc/SERVER_PID/stat over the timed window.
 *   apibench llvm LLVM_SYMBOLIZER BIN ADDRS N
 *       llvm-symbolizer --inlines --demangle --obj=BIN as a coprocess:
 *       started and fed the first address (untimed), then N addresses one
 *       line at a time, each answer read up to its blank line; then the
 *       same N addresses again ("hot": every unit they touch is parsed).
 *   apibench cold EMBER DATA PORT BUILD_ID ADDR LOG TIMEOUT_S
 *       spawns `EMBER serve --listen 127.0.0.1:PORT --data DATA`, waits
 *       (blocked on its stdout, using no CPU) for its "listening on" line,
 *       then POSTs /api/v1/symbolize with one address (retrying every
 *       1 ms should the connection fail) until it answers: time from the
 *       spawn to the first answer.  Then stops the server (SIGTERM).
 *   apibench pprof URL PROFILE N ANSWER SERVER_PID
 *       POST /api/v1/symbolize/pprof with the file PROFILE, once untimed,
 *       then N times; every request's wall time is printed, and the last
 *       answer written to ANSWER.
 *
 * Times are CLOCK_MONOTONIC; CPU times of other processes come from
 * /proc/PID/stat (clock ticks, sysconf(_SC_CLK_TCK)).
 */
#include "httpc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static pid_t child; /* a server to kill when we die */

static void die(const char *fmt, const char *arg)
{
	if (child > 0)
		kill(child, SIGKILL);
	fprintf(stderr, "apibench: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* utime+stime of a process, in seconds; -1 when it cannot be read. */
/* Fields 10 (minflt), 14 (utime) and 15 (stime) of /proc/PID/stat. */
static int proc_stat(pid_t pid, unsigned long *minflt, unsigned long *ticks)
{
	char path[64], buf[2048], *p;
	unsigned long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Field 2 (comm) may hold spaces: count fields after its ')'. */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lu %*u %*u %*u %lu %lu", minflt, &ut, &st) != 3)
		return -1;
	*ticks = ut + st;
	return 0;
}

static double proc_cpu(pid_t pid)
{
	unsigned long minflt, ticks;

	if (proc_stat(pid, &minflt, &ticks))
		return -1;
	return (double)ticks / sysconf(_SC_CLK_TCK);
}

static long proc_minflt(pid_t pid)
{
	unsigned long minflt, ticks;

	return proc_stat(pid, &minflt, &ticks) ? -1 : (long)minflt;
}

static long proc_status_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':')
			v = atol(line + kl + 1);
	fclose(f);
	return v;
}

/* ---- growable buffers ------------------------------------------------- */

struct buf {
	char *data;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(b->data = realloc(b->data, cap)))
			die("out of memory%s", "");
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

static int on_body(void *ud, const char *p, size_t n)
{
	buf_add(ud, p, n);
	return 0;
}

static void on_header(void *ud, const char *p, size_t n)
{
	struct buf *b = ud;
	const char *v;
	size_t vn;

	if (httpc_header_is(p, n, "X-Ember-Locations", &v, &vn)) {
		b->len = 0;
		buf_add(b, v, vn);
	}
}

static size_t count(const char *s, size_t len, const char *needle)
{
	size_t n = 0, nl = strlen(needle);

	for (const char *p = s; (p = memmem(p, len - (size_t)(p - s), needle, nl)); p += nl)
		n++;
	return n;
}

/* "0x..." lines of a file; *n gets their number. */
static char **read_addrs(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char **v = NULL, *line = NULL;
	size_t cap = 0, lcap = 0;
	ssize_t len;

	if (!f)
		die("cannot open '%s'", path);
	*n = 0;
	while ((len = getline(&line, &lcap, f)) > 0) {
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!len)
			continue;
		if (*n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 1024) * sizeof(*v))))
			die("out of memory%s", "");
		v[(*n)++] = strdup(line);
	}
	free(line);
	fclose(f);
	if (!*n)
		die("no addresses in '%s'", path);
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- one POST on a reused handle -------------------------------------- */

struct client {
	struct httpc *h;
	const char *url;
	char content_type[128];
	const char *headers[2];
	unsigned connect_timeout_ms;
	struct buf answer, locations;
	long code;
	double connect_s;
};

static void client_init(struct client *c, const char *url, const char *content_type)
{
	memset(c, 0, sizeof(*c));
	if (httpc_new(NULL, &c->h))
		die("cannot start an HTTP client (%s)", HTTPC_SONAME);
	c->url = url;
	snprintf(c->content_type, sizeof(c->content_type), "Content-Type: %s", content_type);
	c->headers[0] = c->content_type;
	/* No "Expect: 100-continue" round trip before large bodies. */
	c->headers[1] = "Expect:";
}

static void client_release(struct client *c)
{
	httpc_free(c->h);
	free(c->answer.data);
	free(c->locations.data);
}

/* POST body (method "POST") or GET (body NULL) on c's URL: 0 or httpc's
 * negative errno; c->code the status. */
static int client_post(struct client *c, const void *body, size_t len)
{
	struct httpc_req q = { .method = body ? "POST" : "GET", .url = c->url,
			       .headers = c->headers, .nheaders = body ? 2 : 0,
			       .body = body, .body_len = len, .write = on_body,
			       .write_ctx = &c->answer, .header = on_header,
			       .header_ctx = &c->locations,
			       .connect_timeout_ms = c->connect_timeout_ms };
	struct httpc_answer a;
	int err;

	c->answer.len = 0;
	c->code = 0;
	err = httpc_do(c->h, &q, &a);
	c->code = a.status;
	c->connect_s = a.connect_s;
	return err;
}

/* The request for addrs[first .. first+n) (wrapping around). */
static void make_request(struct buf *b, const char *build_id, char **addrs, size_t naddrs,
			 size_t first, size_t n)
{
	b->len = 0;
	buf_str(b, "{\"modules\":[{\"build_id\":\"");
	buf_str(b, build_id);
	buf_str(b, "\",\"addresses\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_add(b, ",", 1);
		buf_add(b, "\"", 1);
		buf_str(b, addrs[(first + i) % naddrs]);
		buf_add(b, "\"", 1);
	}
	buf_str(b, "]}],\"options\":{\"inlines\":true,\"demangle\":true}}");
}

/* The module's "resolved" count in an answer, or -1. */
static long answer_resolved(const struct buf *a)
{
	const char *p = a->len ? strstr(a->data, "\"resolved\":") : NULL;

	return p ? atol(p + strlen("\"resolved\":")) : -1;
}

/* ---- http: warm throughput through POST /api/v1/symbolize ------------- */

static int cmd_http(char **av)
{
	const char *url = av[0], *build_id = av[1];
	size_t batch = strtoul(av[3], NULL, 10), naddrs, nbodies, reqs = 0, addrs_done = 0;
	double min_s = atof(av[4]), *lat;
	size_t min_reqs = strtoul(av[5], NULL, 10), max_reqs;
	pid_t spid = atoi(av[6]);
	char **addrs = read_addrs(av[2], &naddrs);
	struct buf *bodies;
	struct client c;
	double t0, t1, c0, c1, sc0, sc1, med, warm_ms;
	size_t frames, in_bytes, out_bytes;
	long resolved;

	/* Distinct bodies until the address set wraps (at most 100). */
	nbodies = batch >= naddrs ? 1 : (naddrs + batch - 1) / batch;
	nbodies = nbodies > 100 ? 100 : nbodies;
	bodies = calloc(nbodies, sizeof(*bodies));
	for (size_t i = 0; i < nbodies; i++)
		make_request(&bodies[i], build_id, addrs, naddrs, i * batch, batch);
	client_init(&c, url, "application/json");

	/* Not in the figures: connect, and check the answer (its time is
	 * printed: a module's first request builds its index). */
	t0 = now();
	if (client_post(&c, bodies[0].data, bodies[0].len) != 0 || c.code != 200)
		die("warm-up request failed: %s", c.answer.len ? c.answer.data : "no answer");
	warm_ms = 1e3 * (now() - t0);
	resolved = answer_resolved(&c.answer);
	frames = count(c.answer.data, c.answer.len, "\"inlined\":");
	in_bytes = c.answer.len;
	out_bytes = bodies[0].len;

	max_reqs = 1000000;
	lat = calloc(max_reqs, sizeof(*lat));
	sc0 = proc_cpu(spid);
	c0 = self_cpu();
	t0 = now();
	for (t1 = t0; reqs < max_reqs && (t1 - t0 < min_s || reqs < min_reqs);) {
		struct buf *b = &bodies[reqs % nbodies];
		double r0 = t1;

		if (client_post(&c, b->data, b->len) != 0 || c.code != 200)
			die("request failed: %s", c.answer.len ? c.answer.data : "no answer");
		t1 = now();
		lat[reqs++] = t1 - r0;
		addrs_done += batch;
	}
	c1 = self_cpu();
	sc1 = proc_cpu(spid);
	med = median(lat, reqs);
	printf("batch=%zu reqs=%zu addrs=%zu wall_s=%.6f server_cpu_s=%.3f client_cpu_s=%.3f "
	       "req_ms_median=%.3f req_ms_min=%.3f req_ms_max=%.3f resolved_first=%ld "
	       "frames_first=%zu body_bytes=%zu answer_bytes=%zu warmup_ms=%.3f\n",
	       batch, reqs, addrs_done, t1 - t0, sc1 - sc0, c1 - c0,
	       1e3 * med, 1e3 * lat[0], 1e3 * lat[reqs - 1], resolved, frames,
	       out_bytes, in_bytes, warm_ms);
	client_release(&c);
	return 0;
}

/* ---- llvm: warm llvm-symbolizer coprocess ----------------------------- */

struct coproc {
	pid_t pid;
	int in;   /* its stdin */
	FILE *out; /* its stdout */
};

static void coproc_start(struct coproc *cp, char **argv)
{
	int to[2], from[2];

	if (pipe(to) || pipe(from))
		die("pipe: %s", strerror(errno));
	if ((cp->pid = fork()) < 0)
		die("fork: %s", strerror(errno));
	if (cp->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]); close(to[1]); close(from[0]); close(from[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	cp->in = to[1];
	cp->out = fdopen(from[0], "r");
}

/* Send one address, read its answer up to the blank line; returns the
 * number of answer lines (2 a frame). */
static size_t coproc_ask(struct coproc *cp, const char *addr, char **line, size_t *cap)
{
	char req[128];
	int n = snprintf(req, sizeof(req), "%s\n", addr);
	size_t lines = 0;
	ssize_t len;

	if (write(cp->in, req, (size_t)n) != n)
		die("write to llvm-symbolizer: %s", strerror(errno));
	while ((len = getline(line, cap, cp->out)) > 0 && !(len == 1 && (*line)[0] == '\n'))
		lines++;
	if (len <= 0)
		die("llvm-symbolizer stopped answering%s", "");
	return lines;
}

static int cmd_llvm(char **av)
{
	char obj[4096], *line = NULL;
	char *argv[] = { av[0], "--inlines", "--demangle", obj, NULL };
	size_t naddrs, n = strtoul(av[3], NULL, 10), lines = 0, cap = 0;
	char **addrs = read_addrs(av[2], &naddrs);
	struct coproc cp;
	double ts, tw, t0, t1, c0, c1, p0, p1, t2, p2;
	int status;

	snprintf(obj, sizeof(obj), "--obj=%s", av[1]);
	ts = now();
	coproc_start(&cp, argv);
	coproc_ask(&cp, addrs[0], &line, &cap); /* warm: reads the binary */
	tw = now();
	p0 = proc_cpu(cp.pid);
	c0 = self_cpu();
	t0 = now();
	for (size_t i = 0; i < n; i++)
		lines += coproc_ask(&cp, addrs[i % naddrs], &line, &cap);
	t1 = now();
	c1 = self_cpu();
	p1 = proc_cpu(cp.pid);
	for (size_t i = 0; i < n; i++)
		coproc_ask(&cp, addrs[i % naddrs], &line, &cap);
	t2 = now();
	p2 = proc_cpu(cp.pid);
	printf("addrs=%zu wall_s=%.6f llvm_cpu_s=%.3f client_cpu_s=%.3f warmup_s=%.3f "
	       "frames=%zu hot_wall_s=%.6f hot_llvm_cpu_s=%.3f maxrss_kb=%ld\n",
	       n, t1 - t0, p1 - p0, c1 - c0, tw - ts, lines / 2, t2 - t1, p2 - p1,
	       proc_status_kb(cp.pid, "VmHWM"));
	close(cp.in);
	fclose(cp.out);
	waitpid(cp.pid, &status, 0);
	free(line);
	return 0;
}

/* ---- cold: server spawn to first answer -------------------------------- */

static int cmd_cold(char **av)
{
	const char *ember = av[0], *data = av[1], *port = av[2], *build_id = av[3];
	char listen[64], url[128], body[512];
	char *args[] = { (char *)ember, "serve", "--listen", listen, "--data", (char *)data, NULL };
	posix_spawn_file_actions_t fa;
	double timeout = atof(av[6]), t0, t_ready = 0, t_ok = 0, r0 = 0, connect_s = 0, second_s;
	long resolved = -1, attempts = 0, index_mem = -1, flt_ready = -1, flt_ok = -1;
	char *line = NULL;
	size_t lcap = 0;
	struct client c;
	FILE *so;
	int status, out[2];
	pid_t pid;

	snprintf(listen, sizeof(listen), "127.0.0.1:%s", port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%s/api/v1/symbolize", port);
	snprintf(body, sizeof(body),
		 "{\"modules\":[{\"build_id\":\"%s\",\"addresses\":[\"%s\"]}],"
		 "\"options\":{\"inlines\":true,\"demangle\":true}}", build_id, av[4]);
	client_init(&c, url, "application/json");
	c.connect_timeout_ms = 1000;

	if (pipe(out))
		die("pipe: %s", strerror(errno));
	/* posix_spawn (vfork-like, no copy of this process's page tables, as
	 * a fork would make): the clock measures the server's start, not
	 * this client's fork. */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, av[5], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	posix_spawn_file_actions_addclose(&fa, out[1]);
	t0 = now();
	if ((errno = posix_spawn(&pid, ember, &fa, NULL, args, environ)))
		die("cannot start the server: %s", strerror(errno));
	posix_spawn_file_actions_destroy(&fa);
	child = pid;
	close(out[1]);
	/* Block (no CPU) until the server prints that it listens. */
	if (!(so = fdopen(out[0], "r")))
		die("fdopen: %s", strerror(errno));
	while (getline(&line, &lcap, so) > 0)
		if (strstr(line, "listening on")) {
			t_ready = now();
			flt_ready = proc_minflt(pid);
			break;
		}
	if (t_ready == 0) {
		waitpid(pid, &status, 0);
		child = 0;
		die("the server exited without listening (see %s)", av[5]);
	}
	for (;;) {
		int rc;

		r0 = now();
		rc = client_post(&c, body, strlen(body));
		attempts++;
		if (rc == 0 && c.code == 200) {
			t_ok = now();
			flt_ok = proc_minflt(pid);
			resolved = answer_resolved(&c.answer);
			connect_s = c.connect_s;
			break;
		}
		if (rc == 0)
			die("server answered: %s", c.answer.len ? c.answer.data : "(empty)");
		if (waitpid(pid, &status, WNOHANG) == pid) {
			child = 0;
			die("the server exited before answering (see %s)", av[5]);
		}
		if (now() - t0 > timeout)
			die("no answer within the timeout (see %s)", av[5]);
		usleep(1000);
	}
	/* A second request: the warm single-address round trip, for scale. */
	{
		double s0 = now();

		client_post(&c, body, strlen(body));
		second_s = now() - s0;
	}
	/* The loaded index's size in memory, from /metrics. */
	{
		const char *p;

		snprintf(url, sizeof(url), "http://127.0.0.1:%s/metrics", port);
		c.url = url;
		if (client_post(&c, NULL, 0) == 0 && c.answer.len &&
		    (p = strstr(c.answer.data, "\nember_symbol_cache_bytes ")))
			index_mem = atol(p + strlen("\nember_symbol_cache_bytes "));
	}
	printf("first_answer_ms=%.3f listening_ms=%.3f last_attempt_ms=%.3f attempt_start_ms=%.3f connect_ms=%.3f "
	       "attempts=%ld resolved=%ld second_req_ms=%.3f server_cpu_s=%.3f vmhwm_kb=%ld "
	       "vmrss_kb=%ld index_mem_bytes=%ld faults_listening=%ld faults_first_answer=%ld\n",
	       1e3 * (t_ok - t0), 1e3 * (t_ready - t0), 1e3 * (t_ok - r0), 1e3 * (r0 - t0), 1e3 * connect_s, attempts,
	       resolved, 1e3 * second_s, proc_cpu(pid), proc_status_kb(pid, "VmHWM"),
	       proc_status_kb(pid, "VmRSS"), index_mem, flt_ready, flt_ok);
	fflush(stdout);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	child = 0;
	fclose(so);
	free(line);
	client_release(&c);
	return 0;
}

/* ---- pprof: POST /api/v1/symbolize/pprof ------------------------------- */

static int cmd_pprof(char **av)
{
	const char *url = av[0];
	size_t n = strtoul(av[2], NULL, 10);
	pid_t spid = atoi(av[4]);
	struct buf prof = { 0 };
	char chunk[65536];
	double *lat = calloc(n ? n : 1, sizeof(*lat)), t0, c0, c1, sc0, sc1, med, mn = 1e9, mx = 0;
	struct client c;
	size_t k;
	FILE *f = fopen(av[1], "rb");

	if (!f)
		die("cannot open '%s'", av[1]);
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&prof, chunk, k);
	fclose(f);
	client_init(&c, url, "application/octet-stream");
	if (client_post(&c, prof.data, prof.len) != 0 || c.code != 200)
		die("warm-up request failed: %s", c.answer.len ? c.answer.data : "no answer");
	sc0 = proc_cpu(spid);
	c0 = self_cpu();
	for (size_t i = 0; i < n; i++) {
		t0 = now();
		if (client_post(&c, prof.data, prof.len) != 0 || c.code != 200)
			die("request failed: %s", c.answer.len ? c.answer.data : "no answer");
		lat[i] = now() - t0;
		mn = lat[i] < mn ? lat[i] : mn;
		mx = lat[i] > mx ? lat[i] : mx;
		printf("req=%zu ms=%.3f\n", i + 1, 1e3 * lat[i]);
	}
	c1 = self_cpu();
	sc1 = proc_cpu(spid);
	if (!(f = fopen(av[3], "wb")) || fwrite(c.answer.data, 1, c.answer.len, f) != c.answer.len)
		die("cannot write '%s'", av[3]);
	fclose(f);
	med = median(lat, n);
	printf("summary n=%zu ms_median=%.3f ms_min=%.3f ms_max=%.3f server_cpu_ms_per_req=%.2f "
	       "client_cpu_ms_per_req=%.2f profile_bytes=%zu answer_bytes=%zu locations=\"%s\"\n",
	       n, 1e3 * med, 1e3 * mn, 1e3 * mx, 1e3 * (sc1 - sc0) / n,
	       1e3 * (c1 - c0) / n, prof.len, c.answer.len,
	       c.locations.len ? c.locations.data : "");
	client_release(&c);
	free(prof.data);
	free(lat);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int args; int (*fn)(char **); } cmds[] = {
		{ "http", 7, cmd_http }, { "llvm", 4, cmd_llvm },
		{ "cold", 7, cmd_cold }, { "pprof", 5, cmd_pprof },
	};

	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0) {
			if (argc - 2 != cmds[i].args)
				die("%s: wrong number of arguments (see the file header)", argv[1]);
			return cmds[i].fn(argv + 2);
		}
	fprintf(stderr, "usage: apibench http|llvm|cold|pprof ARGS... (see apibench.c)\n");
	return 2;
}
