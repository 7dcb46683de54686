/*
 * scrape.c - `ember serve --scrape`: the server pulls Go net/http/pprof
 * endpoints and stores what they answer like a pushed profile
 * (symbolized, with the target's labels; profsvc_ingest), as Parca and
 * Grafana Alloy's pyroscope.scrape do.
 *
 * A target is "URL[,interval=DURATION][,NAME=VALUE...]" (interval 15 s
 * by default).  A URL whose path is empty, "/" or "/debug/pprof[/]" is a
 * Go program's base: its CPU profile (/debug/pprof/profile?seconds=N, N
 * the interval less a second, at least 1) and its heap
 * (/debug/pprof/heap, which also holds the alloc_* types /debug/pprof/
 * allocs reports) are scraped; any other URL is scraped as it is, a
 * .../profile without ?seconds= given the same N.  Every profile gets
 * the target's labels, instance=HOST:PORT and, unless given,
 * service_name=HOST:PORT.  A scraped body has a push's limits: the
 * profile limit on its bytes, the decompression cap, the checks of the
 * decode and of the store, and a memory account from the server's budget
 * for all it costs (body, decompressed bytes, profile, symbolization);
 * its symbolization asks upstream for at most max_fetches build IDs.  A
 * body refused is counted as a push's (ember_profiles_rejected_total)
 * and as a failed scrape.  One thread a target; a scrape that fails is
 * counted, logged (the first of a run of failures at warn), and tried
 * again at the next interval.  A URL may carry credentials
 * ("user:password@", "?token=..."): the requests use them, and what is
 * shown (logs, /metrics, the instance label) is ember_url_shown's form.
 */
#include "profsvc_internal.h"
#include "symsvc.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_INTERVAL_NS ((int64_t)15 * 1000000000)
#define MAX_LABELS 32
#define MAX_URLS 2
#define URL_MAX 1100
#define SHOWN_MAX 2048	/* a shown URL: "k=" may become "k=REDACTED" */

struct target {
	char spec[1024];		/* the option, split in place */
	char url[MAX_URLS][URL_MAX];	/* requested: with any credentials */
	char shown[MAX_URLS][SHOWN_MAX]; /* logged and in /metrics: without */
	size_t nurls;
	char instance[256];
	struct pstore_label labels[MAX_LABELS];
	size_t nlabels;
	int64_t interval_ns;
	long seconds;			/* of a CPU profile */
	_Atomic uint64_t ok, failed;
	bool failing;
	pthread_t thread;
	bool started;
	struct profsvc_scrapers *owner;
};

struct profsvc_scrapers {
	struct profsvc *pr;
	struct api_http *http;
	struct ember_mem_budget *budget; /* a scrape's account draws on it (or none) */
	uint64_t write_bytes;		/* a scrape's share of it */
	unsigned max_fetches;		/* build IDs a scrape may ask upstream */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_bool stop;
	struct target *t;
	size_t n;
};

/* ---- targets ------------------------------------------------------------------ */

/* "http://[USER:PASSWORD@]HOST:PORT/PATH": HOST:PORT (of the URL as
 * shown: never the credentials) into t->instance, *path the rest. */
static int split_url(struct target *t, const char *url, const char **path)
{
	const char *h = strstr(url, "://");
	char shown[SHOWN_MAX];
	size_t n;

	if (!h || (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)))
		return -EINVAL;
	*path = h + 3 + strcspn(h + 3, "/?");
	if (ember_url_shown(url, shown, sizeof(shown)) < 0)
		return -E2BIG;
	h = strstr(shown, "://") + 3;
	n = strcspn(h, "/?#");
	if (!n || n >= sizeof(t->instance))
		return -EINVAL;
	snprintf(t->instance, sizeof(t->instance), "%.*s", (int)n, h);
	return 0;
}

static int add_url(struct target *t, const char *base, size_t blen, const char *tail)
{
	char url[sizeof(t->url[0])]; /* base points into t: no overlapping write */

	snprintf(url, sizeof(url), "%.*s%s", (int)blen, base, tail);
	if (ember_url_shown(url, t->shown[t->nurls], sizeof(t->shown[0])) < 0)
		return -E2BIG;
	memcpy(t->url[t->nurls++], url, sizeof(url));
	return 0;
}

static int expand(struct target *t, const char *url, const char *path)
{
	size_t base = (size_t)(path - url);
	char tail[64];
	int err;

	snprintf(tail, sizeof(tail), "/debug/pprof/profile?seconds=%ld", t->seconds);
	if (!*path || !strcmp(path, "/") || !strcmp(path, "/debug/pprof") ||
	    !strcmp(path, "/debug/pprof/")) {
		err = add_url(t, url, base, tail);
		return err ? err : add_url(t, url, base, "/debug/pprof/heap");
	}
	if (strlen(path) >= 8 && !strcmp(path + strlen(path) - 8, "/profile")) {
		snprintf(tail, sizeof(tail), "?seconds=%ld", t->seconds);
		return add_url(t, url, strlen(url), tail);
	}
	return add_url(t, url, strlen(url), "");
}

static bool labelled(const struct target *t, const char *name)
{
	for (size_t i = 0; i < t->nlabels; i++)
		if (strcmp(t->labels[i].name, name) == 0)
			return true;
	return false;
}

/* One option: "URL[,interval=D][,k=v...]". */
static int parse_target(struct target *t, const char *spec)
{
	const char *path;
	char *url, *p;

	if (strlen(spec) >= sizeof(t->spec))
		return -E2BIG;
	strcpy(t->spec, spec);
	url = t->spec;
	p = strchr(url, ',');
	if (p)
		*p++ = '\0';
	t->interval_ns = DEFAULT_INTERVAL_NS;
	while (p && *p) {
		char *next = strchr(p, ','), *eq = strchr(p, '=');

		if (next)
			*next++ = '\0';
		if (!eq || eq == p || t->nlabels + 2 >= MAX_LABELS)
			return -EINVAL;
		*eq = '\0';
		if (strcmp(p, "interval") == 0) {
			if (pyro_parse_duration(eq + 1, &t->interval_ns))
				return -EINVAL;
		} else {
			t->labels[t->nlabels++] = (struct pstore_label){ p, eq + 1 };
		}
		p = next;
	}
	EMBER_FORWARD_IF_ERROR(split_url(t, url, &path));
	t->seconds = (long)(t->interval_ns / 1000000000) - 1;
	t->seconds = t->seconds < 1 ? 1 : t->seconds > 60 ? 60 : t->seconds;
	EMBER_FORWARD_IF_ERROR(expand(t, url, path));
	if (!labelled(t, "instance"))
		t->labels[t->nlabels++] = (struct pstore_label){ "instance", t->instance };
	if (!labelled(t, "service_name"))
		t->labels[t->nlabels++] = (struct pstore_label){ "service_name", t->instance };
	return 0;
}

/* ---- scraping ------------------------------------------------------------------- */

/* url: as shown */
static void outcome(struct target *t, const char *url, int err, const char *why)
{
	if (!err) {
		atomic_fetch_add(&t->ok, 1);
		if (t->failing)
			pr_info("scrape: '%s' answers again", url);
		t->failing = false;
		return;
	}
	atomic_fetch_add(&t->failed, 1);
	if (!t->failing)
		pr_warn("scrape: '%s': %s", url, why);
	else
		pr_info("scrape: '%s': %s", url, why);
	t->failing = true;
}

/* The symbolization's check: the scrapers stopping. */
static int stopping(void *arg)
{
	const struct profsvc_scrapers *s = arg;

	return atomic_load(&s->stop) ? -ECANCELED : 0;
}

/* The answer of url into body (under its cap and account): 0, or the
 * error with why set; a body past its limits counted as a push's. */
static int fetch(struct target *t, const char *url, struct ember_buf *body, char *why,
		 size_t size)
{
	long status = 0;
	int err = api_http_get(t->owner->http, url, t->seconds + 30, &t->owner->stop, body,
			       &status, why, size);

	if (err == -E2BIG && !(body->acct && body->acct->err))
		snprintf(why, size, "answer larger than the profile limit of %zu bytes",
			 body->cap);
	else if (err == -E2BIG || err == -EAGAIN)
		snprintf(why, size, err == -E2BIG ? "answer needs more memory than the server "
						    "gives one write"
						  : "the server has no memory free for the answer now");
	if (err == -E2BIG || err == -EAGAIN)
		profsvc_count_reject(t->owner->pr, profsvc_decode_reject(err));
	if (!err && status != 200) {
		snprintf(why, size, "HTTP %ld", status);
		err = -EIO;
	}
	return err;
}

/* The body decoded and stored as a push is, under the scrape's limits. */
static int store(struct target *t, struct ember_buf *body, char *why, size_t size)
{
	struct profsvc_scrapers *s = t->owner;
	struct symsvc_request_opts ro = { .sz = sizeof(ro), .check = stopping, .check_arg = s,
					  .max_fetches = s->max_fetches, .account = body->acct };
	struct profsvc_in in = { .route = PROFSVC_ROUTE_SCRAPE, .labels = t->labels,
				 .n_labels = t->nlabels, .time_ns = profsvc_now_ns(),
				 .request = &ro };
	struct profsvc_out out = { .err = 0 };
	int err = profsvc_decode(s->pr, body->data ? body->data : "", body->len, NULL, body->acct,
				 &in.p, why, size);

	if (err) {
		profsvc_count_reject(s->pr, profsvc_decode_reject(err));
		return err;
	}
	in.body = body->data;
	in.body_len = in.input_bytes = body->len;
	profsvc_ingest(s->pr, &in, &out);
	err = out.err;
	if (err)
		snprintf(why, size, "not stored: %.480s", out.why);
	ember_buf_release(&out.body);
	return err;
}

static int scrape_one(struct target *t, size_t i)
{
	struct profsvc_scrapers *s = t->owner;
	struct ember_mem_account acct;
	struct ember_buf body;
	char why[512] = "";
	int err;

	ember_mem_account_init(&acct, s->budget, s->write_bytes);
	ember_buf_init_account(&body, s->pr->max_body, s->budget ? &acct : NULL);
	err = fetch(t, t->url[i], &body, why, sizeof(why));
	if (!err)
		err = store(t, &body, why, sizeof(why));
	ember_buf_release(&body);
	ember_mem_account_release(&acct);
	if (err != -ECANCELED)
		outcome(t, t->shown[i], err, why);
	return err;
}

/* Sleep until deadline_ns or the stop; false when stopping. */
static bool wait_until(struct profsvc_scrapers *s, int64_t deadline_ns)
{
	struct timespec ts = { .tv_sec = deadline_ns / 1000000000,
			       .tv_nsec = deadline_ns % 1000000000 };

	pthread_mutex_lock(&s->mu);
	while (!atomic_load(&s->stop) && profsvc_now_ns() < deadline_ns)
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	pthread_mutex_unlock(&s->mu);
	return !atomic_load(&s->stop);
}

static void *loop(void *arg)
{
	struct target *t = arg;
	int64_t next = profsvc_now_ns();

	while (wait_until(t->owner, next)) {
		next += t->interval_ns;
		for (size_t i = 0; i < t->nurls && !atomic_load(&t->owner->stop); i++)
			scrape_one(t, i);
		if (next < profsvc_now_ns()) /* a CPU scrape took the interval */
			next = profsvc_now_ns();
	}
	return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------- */

int profsvc_scrapers_start(struct profsvc *pr, const struct profsvc_opts *o,
			   struct profsvc_scrapers **out)
{
	const char *const *targets = o->scrape;
	size_t n = o->n_scrape;
	struct profsvc_scrapers *s = calloc(1, sizeof(*s));
	int err = s ? 0 : -ENOMEM;

	if (!err && !(s->t = calloc(n, sizeof(*s->t))))
		err = -ENOMEM;
	if (!err) {
		s->pr = pr;
		s->n = n;
		s->budget = EMBER_OPTS_GET(o, budget, NULL);
		s->write_bytes = EMBER_OPTS_GET(o, write_bytes, 0);
		s->max_fetches = EMBER_OPTS_GET(o, max_fetches, 0);
		pthread_mutex_init(&s->mu, NULL);
		pthread_cond_init(&s->cv, NULL);
		err = api_http_new(&s->http);
	}
	for (size_t i = 0; !err && i < n; i++) {
		char shown[SHOWN_MAX];

		s->t[i].owner = s;
		err = parse_target(&s->t[i], targets[i]);
		if (err && ember_url_shown(targets[i], shown, sizeof(shown)) < 0)
			strcpy(shown, "(too long to show)");
		if (err)
			pr_err("scrape: bad target '%s': want URL[,interval=DURATION][,NAME=VALUE...]",
			       shown);
	}
	for (size_t i = 0; !err && i < n; i++) {
		err = -pthread_create(&s->t[i].thread, NULL, loop, &s->t[i]);
		s->t[i].started = !err;
		if (!err)
			pr_info("scrape: '%s' every %" PRId64 " s", s->t[i].shown[0],
				s->t[i].interval_ns / 1000000000);
	}
	if (err) {
		profsvc_scrapers_stop(s);
		return err;
	}
	*out = s;
	return 0;
}

void profsvc_scrapers_stop(struct profsvc_scrapers *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	atomic_store(&s->stop, true);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; s->t && i < s->n; i++)
		if (s->t[i].started)
			pthread_join(s->t[i].thread, NULL);
	api_http_free(s->http);
	free(s->t);
	if (s->pr) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->mu);
	}
	free(s);
}

int profsvc_scrapers_metrics(struct profsvc_scrapers *s, struct ember_buf *b)
{
	int err = ember_buf_appendf(b, "# HELP ember_scrapes_total Scrapes of --scrape targets, "
				       "by outcome.\n# TYPE ember_scrapes_total counter\n");

	for (size_t i = 0; !err && i < s->n; i++) {
		err = ember_buf_appendf(b, "ember_scrapes_total{target=\"%s\",result=\"ok\"} %llu\n",
					s->t[i].shown[0], (unsigned long long)s->t[i].ok);
		err = err ? err
			  : ember_buf_appendf(b,
					      "ember_scrapes_total{target=\"%s\",result=\"error\"} "
					      "%llu\n",
					      s->t[i].shown[0], (unsigned long long)s->t[i].failed);
	}
	return err;
}
