/*
 * opts.c - ember-agent's command line (docs/cli.md, "ember-agent").
 * Every option has a default but the destination: --output DIR or
 * --server URL (or both).
 */
#include "agent_internal.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_FREQUENCY = 256, OPT_INTERVAL, OPT_DURATION, OPT_PID, OPT_CGROUP, OPT_SERVER,
	OPT_CACHE_DIR, OPT_OUTPUT, OPT_TOKEN, OPT_TOKEN_FILE, OPT_UPLOAD_MISSING,
	OPT_NO_LOCAL_COMPILE, OPT_COMPRESSION, OPT_METRICS_LISTEN, OPT_LABEL, OPT_BUFFER_KB,
	OPT_UNWIND_DATA_MB, OPT_LOG_LEVEL, OPT_HOST, OPT_OFF_CPU, OPT_OFF_CPU_THRESHOLD,
	OPT_OFF_CPU_BUDGET, OPT_OFF_CPU_RSEQ_ONLY, OPT_TRANSPORT, OPT_TENANT, OPT_HELP,
};

static const struct option longopts[] = {
	{ "frequency", required_argument, NULL, OPT_FREQUENCY },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "token", required_argument, NULL, OPT_TOKEN },
	{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
	{ "upload-missing", no_argument, NULL, OPT_UPLOAD_MISSING },
	{ "no-local-compile", no_argument, NULL, OPT_NO_LOCAL_COMPILE },
	{ "compression", required_argument, NULL, OPT_COMPRESSION },
	{ "metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "buffer-kb", required_argument, NULL, OPT_BUFFER_KB },
	{ "unwind-data-mb", required_argument, NULL, OPT_UNWIND_DATA_MB },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-threshold", required_argument, NULL, OPT_OFF_CPU_THRESHOLD },
	{ "off-cpu-budget", required_argument, NULL, OPT_OFF_CPU_BUDGET },
	{ "off-cpu-rseq-only", no_argument, NULL, OPT_OFF_CPU_RSEQ_ONLY },
	{ "transport", required_argument, NULL, OPT_TRANSPORT }, /* developer: not in --help */
	{ "tenant", required_argument, NULL, OPT_TENANT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

void agent_opts_usage(FILE *out)
{
	fputs("usage: ember-agent (--output DIR | --server URL) [options]\n"
	      "  --frequency HZ        samples per second per CPU (19)\n"
	      "  --interval SEC        profile every SEC seconds (10)\n"
	      "  --duration SEC        stop after SEC seconds (default: until SIGINT/SIGTERM)\n"
	      "  --pid PID[,PID...]    only these processes (repeatable)\n"
	      "  --cgroup DIR          only tasks in this cgroup v2 directory and below\n"
	      "  --server URL          ember serve: unwind tables, profile pushes, uploads\n"
	      "  --cache-dir DIR       keep unwind tables across restarts\n"
	      "  --output DIR          write each profile as DIR/ember-HOST-TIME.pb.gz\n"
	      "  --token T, --token-file F   bearer token (else $EMBER_TOKEN)\n"
	      "  --tenant NAME         the tenant of every push (X-Scope-OrgID), for a\n"
	      "                        server with --multitenancy\n"
	      "  --upload-missing      upload executables the server does not know\n"
	      "  --no-local-compile    never compile tables here (frame pointers instead)\n"
	      "  --compression zstd|gzip   of pushed profiles (zstd)\n"
	      "  --metrics-listen HOST:PORT  serve the agent's /metrics\n"
	      "  --label K=V           a series label of every process (repeatable)\n"
	      "  --label 'service_name=S:K=V[:K=V...]'  series labels of service S alone\n"
	      "  --buffer-kb N         compressed profiles kept while the server is down (65536)\n"
	      "  --unwind-data-mb N    size of the unwind_data map (64)\n"
	      "  --host NAME           the host label (the host name)\n"
	      "  --off-cpu             also profile blocked time (sample type off_cpu)\n"
	      "  --off-cpu-threshold USEC  blocks shorter are sampled, weighted (10000)\n"
	      "  --off-cpu-budget N    blocks kept a second at most: T raised past it (500)\n"
	      "  --off-cpu-rseq-only   never hook every system call: blocks of tasks\n"
	      "                        without rseq (Go, musl) are not measured\n"
	      "  --log-level error|warn|info|debug  (info; or $EMBER_LOG_LEVEL)\n",
	      out);
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int add_pids(struct agent_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	int err = copy ? 0 : -ENOMEM;

	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !err;
	     t = strtok_r(NULL, ",", &save)) {
		unsigned v;
		size_t alloc = o->npids;

		err = parse_uint(t, 1, 1u << 30, &v);
		if (!err && ember_vec_reserve((void **)&o->pids, &alloc, o->npids + 1,
					      sizeof(*o->pids)))
			err = -ENOMEM;
		if (!err)
			o->pids[o->npids++] = (pid_t)v;
	}
	free(copy);
	return err;
}

/* Whether o has l's key for l's service already (or l names service_name
 * within a label for one service). */
static bool label_given(const struct agent_opts *o, const struct agent_label *l)
{
	if (l->service && !strcmp(l->key, "service_name"))
		return true;
	for (size_t i = 0; i < o->nlabels; i++)
		if (!strcmp(o->labels[i].key, l->key) && !o->labels[i].service == !l->service &&
		    (!l->service || !strcmp(o->labels[i].service, l->service)))
			return true;
	return false;
}

/* One label k=v ([k, k+n) the text) for service (NULL: all) appended to
 * o; -EINVAL with the reason in why when malformed. */
static int push_label(struct agent_opts *o, const char *k, size_t n, const char *service,
		      char *why, size_t why_size)
{
	const char *eq = memchr(k, '=', n);
	struct agent_label l = { 0 };
	size_t alloc = o->nlabels;

	l.key = eq ? strndup(k, (size_t)(eq - k)) : NULL;
	l.value = eq ? strndup(eq + 1, n - (size_t)(eq - k) - 1) : NULL;
	l.service = service ? strdup(service) : NULL;
	if (eq && (!l.key || !l.value || (service && !l.service) ||
		   ember_vec_reserve((void **)&o->labels, &alloc, o->nlabels + 1, sizeof(l)))) {
		agent_label_release(&l);
		snprintf(why, why_size, "agent: out of memory");
		return -ENOMEM;
	}
	if (!eq || !ember_label_name_valid(l.key) || !l.value[0] ||
	    !strcmp(l.key, "host") || label_given(o, &l)) {
		snprintf(why, why_size, "agent: invalid --label '%.*s': %s", (int)n, k,
			 !eq ? "not K=V" : !ember_label_name_valid(l.key)
				 ? "the name is not [a-zA-Z_][a-zA-Z0-9_.]*"
			 : !l.value[0] ? "the value is empty"
			 : !strcmp(l.key, "host") ? "host is set by --host"
						  : "given twice");
		agent_label_release(&l);
		return -EINVAL;
	}
	o->labels[o->nlabels++] = l;
	return 0;
}

/* --label K=V (every process) or 'service_name=S:K=V[:K=V...]' (the
 * processes of service S alone). */
static int add_label(struct agent_opts *o, const char *arg, char *why, size_t why_size)
{
	static const char sel[] = "service_name=";
	const char *colon = strchr(arg, ':'), *c;
	char service[128];
	int err = 0;

	if (strncmp(arg, sel, sizeof(sel) - 1) || !colon)
		return push_label(o, arg, strlen(arg), NULL, why, why_size);
	snprintf(service, sizeof(service), "%.*s", (int)(colon - arg - (sizeof(sel) - 1)),
		 arg + sizeof(sel) - 1);
	if (!service[0] || strlen(service) != (size_t)(colon - arg - (sizeof(sel) - 1))) {
		snprintf(why, why_size, "agent: invalid --label '%s': %s", arg,
			 service[0] ? "the service name is too long" : "no service name before ':'");
		return -EINVAL;
	}
	for (c = colon + 1; !err; c += strcspn(c, ":") + 1) {
		err = push_label(o, c, strcspn(c, ":"), service, why, why_size);
		if (!c[strcspn(c, ":")])
			break;
	}
	return err;
}

static int read_token_file(struct agent_opts *o, const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	free(o->token);
	o->token = strdup(buf);
	return o->token ? 0 : -ENOMEM;
}

static void defaults(struct agent_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->frequency = 19;
	o->interval_s = 10;
	o->local_compile = true;
	o->buffer_bytes = (size_t)64 << 20;
	o->data_chunks = 16384;
	o->rule_slots = 262144;
	o->page_entries = 65536;
	o->ringbuf = true; /* measured cheaper: docs/performance-notes.md */
	o->off_cpu_threshold_us = 10000;
	o->off_cpu_budget = 500;
	if (gethostname(o->hostbuf, sizeof(o->hostbuf) - 1))
		snprintf(o->hostbuf, sizeof(o->hostbuf), "unknown");
	o->host = o->hostbuf;
}

/* One option: 0, or -EINVAL with why. */
static int one(struct agent_opts *o, int c, const char *arg, char *why, size_t why_size)
{
	unsigned v = 0;
	int err = 0;

	switch (c) {
	case OPT_FREQUENCY: err = parse_uint(arg, 1, 10000, &o->frequency); break;
	case OPT_INTERVAL: err = parse_uint(arg, 1, 86400, &o->interval_s); break;
	case OPT_DURATION: o->duration_s = strtod(arg, NULL); err = o->duration_s > 0 ? 0 : -EINVAL; break;
	case OPT_PID: err = add_pids(o, arg); break;
	case OPT_CGROUP: o->cgroup = arg; break;
	case OPT_SERVER: o->server = arg; break;
	case OPT_CACHE_DIR: o->cache_dir = arg; break;
	case OPT_OUTPUT: o->output_dir = arg; break;
	case OPT_TOKEN: free(o->token); o->token = strdup(arg); break;
	case OPT_TOKEN_FILE:
		err = read_token_file(o, arg);
		if (err) {
			snprintf(why, why_size, "agent: cannot read --token-file '%s': %s", arg,
				 strerror(-err));
			return -EINVAL;
		}
		break;
	case OPT_UPLOAD_MISSING: o->upload_missing = true; break;
	case OPT_NO_LOCAL_COMPILE: o->local_compile = false; break;
	case OPT_COMPRESSION:
		if (strcmp(arg, "zstd") && strcmp(arg, "gzip"))
			err = -EINVAL;
		o->gzip = !strcmp(arg, "gzip");
		break;
	case OPT_METRICS_LISTEN: o->metrics_listen = arg; break;
	case OPT_LABEL: return add_label(o, arg, why, why_size);
	case OPT_BUFFER_KB:
		err = parse_uint(arg, 1, 1u << 30, &v);
		o->buffer_bytes = (size_t)v << 10;
		break;
	case OPT_UNWIND_DATA_MB:
		err = parse_uint(arg, 1, 4096, &v);
		o->data_chunks = v * 256;
		break;
	case OPT_HOST: snprintf(o->hostbuf, sizeof(o->hostbuf), "%s", arg); break;
	case OPT_OFF_CPU: o->off_cpu = true; break;
	case OPT_OFF_CPU_THRESHOLD:
		err = parse_uint(arg, 1, 10 * 1000 * 1000, &o->off_cpu_threshold_us);
		break;
	case OPT_OFF_CPU_BUDGET:
		err = parse_uint(arg, 1, 1000 * 1000, &o->off_cpu_budget);
		break;
	case OPT_OFF_CPU_RSEQ_ONLY: o->off_cpu_rseq_only = true; break;
	case OPT_TENANT:
		if (!ember_tenant_valid(arg)) {
			snprintf(why, why_size, "agent: invalid --tenant '%.*s': not a tenant ID (1 to "
				 "%d characters of a-z A-Z 0-9 !-_.*'(), not . or ..)",
				 EMBER_TENANT_MAX + 1, arg, EMBER_TENANT_MAX);
			return -EINVAL;
		}
		o->tenant = arg;
		break;
	case OPT_TRANSPORT:
		if (strcmp(arg, "maps") && strcmp(arg, "ringbuf"))
			err = -EINVAL;
		o->ringbuf = !strcmp(arg, "ringbuf");
		break;
	case OPT_LOG_LEVEL: {
		enum ember_log_level l;

		err = ember_log_level_parse(arg, &l);
		if (!err)
			ember_log_set_level(l);
		break;
	}
	default:
		snprintf(why, why_size, "agent: unknown option (see --help)");
		return -EINVAL;
	}
	if (err)
		snprintf(why, why_size, "agent: invalid value '%s' for --%s", arg,
			 longopts[c - OPT_FREQUENCY].name);
	return err ? -EINVAL : 0;
}

int agent_opts_parse(int argc, char **argv, struct agent_opts *o, char *why, size_t why_size)
{
	const char *env = getenv("EMBER_TOKEN");
	int c;

	defaults(o);
	if (env && *env)
		o->token = strdup(env);
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == OPT_HELP)
			return 1;
		if (one(o, c, optarg, why, why_size))
			return -EINVAL;
	}
	if (optind < argc) {
		snprintf(why, why_size, "agent: unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	if (!o->output_dir && !o->server) {
		snprintf(why, why_size, "agent: nowhere to send profiles: give --output DIR or "
			 "--server URL");
		return -EINVAL;
	}
	if ((o->upload_missing || o->tenant) && !o->server) {
		snprintf(why, why_size, "agent: --%s needs --server",
			 o->upload_missing ? "upload-missing" : "tenant");
		return -EINVAL;
	}
	if (o->off_cpu && !o->ringbuf) {
		snprintf(why, why_size, "agent: --off-cpu needs --transport ringbuf");
		return -EINVAL;
	}
	o->off_cpu_ns = o->off_cpu ? (uint64_t)o->off_cpu_threshold_us * 1000 : 0;
	return 0;
}

void agent_label_release(struct agent_label *l)
{
	free(l->key);
	free(l->value);
	free(l->service);
}

void agent_opts_release(struct agent_opts *o)
{
	for (size_t i = 0; i < o->nlabels; i++)
		agent_label_release(&o->labels[i]);
	free(o->labels);
	free(o->pids);
	free(o->token);
	memset(o, 0, sizeof(*o));
}
