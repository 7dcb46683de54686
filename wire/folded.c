/*
 * folded.c - folded ("frame;frame;leaf COUNT", flamegraph.pl's collapsed
 * stacks) and lines ("frame;...;leaf", each counting once) bodies, as
 * Pyroscope's /ingest takes them, turned into a pprof profile: one
 * function and one location per distinct frame name, the sample type of
 * the kind, and for CPU and wall the counts scaled by the period
 * 1e9 / sampleRate into nanoseconds, as Pyroscope does; pyroscope.h.
 * What the profile and the parse allocate is charged to the caller's
 * account first (the profile's edits through pprof_charge), so a large
 * body of distinct frames is refused at the request's share.
 * Outside input: fuzzed by tests/fuzz/fuzz_profile_input.c.
 */
#include "pyroscope.h"
#include "wire_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STACK 1024

/* ---- folded and lines bodies ---------------------------------------------------- */

struct folded {
	struct pprof_profile *p;
	struct ember_mem_account *acct;
	uint64_t *loc_of_func; /* function id -> location id */
	size_t nfunc;
};

static int location_of(struct folded *f, const char *name, size_t len, uint64_t *out)
{
	char buf[1024];
	struct pprof_function_desc fd = { .name = buf, .system_name = buf };
	uint64_t fid, lid;
	struct pprof_line ln = { 0 };

	snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1), name);
	EMBER_FORWARD_IF_ERROR(pprof_add_function(f->p, &fd, &fid));
	if (fid >= f->nfunc) {
		size_t n = 2 * fid + 16;
		uint64_t *v = ember_mem_realloc(f->acct, f->loc_of_func, n * sizeof(*v));

		if (!v)
			return f->acct && f->acct->err ? f->acct->err : -ENOMEM;
		memset(v + f->nfunc, 0, (n - f->nfunc) * sizeof(*v));
		f->loc_of_func = v;
		f->nfunc = n;
	}
	if (!f->loc_of_func[fid]) {
		EMBER_FORWARD_IF_ERROR(pprof_add_location(f->p, 0, 0, &lid));
		ln.function_id = fid;
		EMBER_FORWARD_IF_ERROR(pprof_location_set_lines(f->p, lid, &ln, 1));
		f->loc_of_func[fid] = lid;
	}
	*out = f->loc_of_func[fid];
	return 0;
}

/* One line "root;...;leaf COUNT" (lines format: no count, 1). */
static int folded_line(struct folded *f, const char *s, size_t len, bool counted, int64_t scale,
		       char *why, size_t size)
{
	uint64_t locs[MAX_STACK];
	size_t n = 0, end = len;
	int64_t count = 1;

	if (counted) {
		const char *sp = memrchr(s, ' ', len);
		char num[24];

		if (!sp || (size_t)(s + len - sp - 1) >= sizeof(num) || sp + 1 == s + len) {
			snprintf(why, size, "folded: line '%.64s' does not end in a count", s);
			return -EINVAL;
		}
		snprintf(num, sizeof(num), "%.*s", (int)(s + len - sp - 1), sp + 1);
		if (pyro_parse_uint(num, INT64_MAX / (scale ? scale : 1), (uint64_t *)&count)) {
			snprintf(why, size, "folded: '%s' is not a count", num);
			return -EINVAL;
		}
		end = (size_t)(sp - s);
	}
	for (size_t i = 0; i < end && count;) {
		size_t k = i;

		while (k < end && s[k] != ';')
			k++;
		if (n == MAX_STACK) {
			snprintf(why, size, "folded: a stack deeper than %d frames", MAX_STACK);
			return -EINVAL;
		}
		if (k > i)
			EMBER_FORWARD_IF_ERROR(location_of(f, s + i, k - i, &locs[n++]));
		i = k + 1;
	}
	for (size_t a = 0, b = n; b-- > a + 1; a++) { /* leaf first */
		uint64_t x = locs[a];

		locs[a] = locs[b];
		locs[b] = x;
	}
	if (!n || !count)
		return 0;
	count *= scale;
	return pprof_add_sample(f->p, locs, n, &count, 1);
}

/* The why of a failure the body did not explain (memory). */
static void memory_why(int err, char *why, size_t size)
{
	if (err == -E2BIG)
		snprintf(why, size, "folded: the profile needs more memory than the server gives "
				    "one request");
	else if (err == -EAGAIN)
		snprintf(why, size, "folded: the server has no memory free for the profile now");
	else if (err == -ENOMEM)
		snprintf(why, size, "folded: out of memory");
}

int pyro_folded_parse(const char *body, size_t len, bool counted, const struct pyro_kind *k,
		      uint64_t rate, struct ember_mem_account *acct, struct pprof_profile **out,
		      char *why, size_t size)
{
	struct folded f = { .p = pprof_profile_new(), .acct = acct };
	int64_t period = k->timed ? (int64_t)(1000000000 / rate) : 0;
	int err = f.p ? 0 : -ENOMEM;

	if (!err) {
		f.p->acct = acct; /* every location, function and sample charged */
		err = pprof_add_sample_type(f.p, k->type, k->unit);
	}

	if (!err && k->timed)
		err = pprof_set_period(f.p, "cpu", "nanoseconds", period);
	for (size_t i = 0; !err && i < len;) {
		const char *nl = memchr(body + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (body + i)) : len - i;

		while (n && (body[i + n - 1] == '\r' || body[i + n - 1] == ' '))
			n--;
		if (n)
			err = folded_line(&f, body + i, n, counted, k->timed ? period : 1, why, size);
		i += (nl ? (size_t)(nl - (body + i)) : len - i) + 1;
	}
	free(f.loc_of_func);
	if (err) {
		memory_why(err, why, size);
		pprof_profile_free(f.p);
		return err;
	}
	*out = f.p;
	return 0;
}
