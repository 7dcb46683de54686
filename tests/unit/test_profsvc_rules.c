/*
 * test_profsvc_rules.c - unit tests of the ingest rules of profile-service/
 * (ingest_rules.c, relabel.c, relabel_regex.cc): each relabel action
 * against Prometheus' documented semantics (relabel_config; expansion as
 * Go's Regexp.Expand), the rules file's refusals naming their line, and
 * the bounds on a rule's cost; sampling rules (ingest_sampling.c): the
 * decision deterministic and near its probability, a profile's totals.
 */
#include "pprof.h"
#include "profsvc_internal.h"
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ls from "a=1,b=2" (parsed in place). */
static int labels_of(char *spec, struct profsvc_labels *ls)
{
	struct pstore_label in[32];
	size_t n = 0;

	for (char *save, *kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		*eq = '\0';
		in[n++] = (struct pstore_label){ kv, eq + 1 };
	}
	return profsvc_labels_copy(ls, in, n);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct pstore_label *)a)->name,
		      ((const struct pstore_label *)b)->name);
}

/* ls as "a=1,b=2", sorted by name, into out. */
static void labels_str(struct profsvc_labels *ls, char *out, size_t size)
{
	size_t at = 0;

	out[0] = '\0';
	qsort(ls->v, ls->n, sizeof(ls->v[0]), by_name);
	for (size_t i = 0; i < ls->n && at < size; i++)
		at += (size_t)snprintf(out + at, size - at, "%s%s=%s", i ? "," : "", ls->v[i].name,
				       ls->v[i].value);
}

/* The rules text (for the tenant "t") applied to the labels spec: the
 * result (PROFSVC_RELABEL_DROP, 0, an error) and the labels in out. */
static int relabel(const char *rules, const char *spec, char *out, size_t size)
{
	struct profsvc_rules *t = NULL;
	struct profsvc_labels ls = { 0 };
	char why[512], copy[8192];
	int err;

	snprintf(copy, sizeof(copy), "%s", spec);
	err = profsvc_rules_parse(rules, strlen(rules), &t, why, sizeof(why));
	if (err) {
		fprintf(stderr, "rules refused: %s\n", why);
		return err;
	}
	err = labels_of(copy, &ls);
	err = err ? err : profsvc_rules_apply(t, "t", &ls, why, sizeof(why));
	labels_str(&ls, out, size);
	profsvc_labels_release(&ls);
	profsvc_rules_free(t);
	return err;
}

#define RELABELS_TO(rules, in, want)                                           \
	do {                                                                   \
		char got_[512];                                                \
		CHECK_INT(relabel(rules, in, got_, sizeof(got_)), ==, 0);      \
		CHECK_STR(got_, want);                                         \
	} while (0)

/*
 * replace: the joined source value matched whole; target and replacement
 * expanded ($1, ${1}, $name, ${name}, "$$"; "$1x" is the group "1x", so
 * ""); no match or an expanded target that is not a name: no change; an
 * empty replacement removes the target; a missing source label is "".
 */
static int test_profsvc__relabel_replace(void)
{
	RELABELS_TO("t relabel source_labels=pod regex='(.*)-[a-z0-9]+' target_label=app\n",
		    "pod=api-7f9c", "app=api,pod=api-7f9c");
	RELABELS_TO("t relabel source_labels=a,b target_label=c\n", "a=1,b=2", "a=1,b=2,c=1;2");
	RELABELS_TO("t relabel source_labels=a,b separator=/ target_label=c\n", "a=1",
		    "a=1,c=1/");
	RELABELS_TO("t relabel source_labels=a regex='(x)(y)' target_label=c "
		    "replacement='${2}_$1x$$_$1'\n",
		    "a=xy", "a=xy,c=y_$_x");
	RELABELS_TO("t relabel source_labels=a regex='(?P<first>.)(.*)' target_label=c "
		    "replacement='$first-${2}'\n",
		    "a=xyz", "a=xyz,c=x-yz");
	/* anchored: "pi" does not match all of "api" */
	RELABELS_TO("t relabel source_labels=a regex=pi target_label=c replacement=set\n",
		    "a=api", "a=api");
	/* an empty replacement removes the target */
	RELABELS_TO("t relabel source_labels=a regex=api target_label=b replacement=''\n",
		    "a=api,b=2", "a=api");
	/* the target itself expanded; "1bad" is not a label name: no change */
	RELABELS_TO("t relabel source_labels=a regex='(.*)' target_label=l_$1 replacement=v\n",
		    "a=x", "a=x,l_x=v");
	RELABELS_TO("t relabel source_labels=a regex='(.*)' target_label=$1 replacement=v\n",
		    "a=1bad", "a=1bad");
	/* '.' matches a newline, as Prometheus' (?s) */
	RELABELS_TO("t relabel source_labels=a regex='a.b' target_label=c replacement=ok\n",
		    "a=a\nb", "a=a\nb,c=ok");
	return 0;
}

/* keep and drop: the profile dropped when the value does not (keep) or
 * does (drop) match; the rules after a drop are not applied. */
static int test_profsvc__relabel_keep_drop(void)
{
	char out[512];

	CHECK_INT(relabel("t relabel action=keep source_labels=env regex=prod\n", "env=dev", out,
			  sizeof(out)), ==, PROFSVC_RELABEL_DROP);
	RELABELS_TO("t relabel action=keep source_labels=env regex=prod|staging\n", "env=prod",
		    "env=prod");
	CHECK_INT(relabel("t relabel action=drop source_labels=env regex='de.*'\n", "env=dev",
			  out, sizeof(out)), ==, PROFSVC_RELABEL_DROP);
	RELABELS_TO("t relabel action=drop source_labels=env regex=dev\n", "env=develop",
		    "env=develop");
	/* a missing source label is "": a keep of ".+" drops it */
	CHECK_INT(relabel("t relabel action=keep source_labels=env regex='.+'\n", "a=1", out,
			  sizeof(out)), ==, PROFSVC_RELABEL_DROP);
	return 0;
}

/* labeldrop and labelkeep on names, matched whole; labelmap copies each
 * matching label to its expanded name, the original kept. */
static int test_profsvc__relabel_label_actions(void)
{
	RELABELS_TO("t relabel action=labeldrop regex=request_id\n",
		    "service_name=api,request_id=8f3a", "service_name=api");
	RELABELS_TO("t relabel action=labeldrop regex=id\n", "request_id=8f3a,id=1",
		    "request_id=8f3a");
	RELABELS_TO("t relabel action=labelkeep regex='service_name|__name__'\n",
		    "service_name=api,request_id=8f3a,__name__=cpu",
		    "__name__=cpu,service_name=api");
	RELABELS_TO("t relabel action=labelmap regex='k8s_(.+)' replacement=$1\n",
		    "k8s_pod=p1,k8s_ns=n,a=1", "a=1,k8s_ns=n,k8s_pod=p1,ns=n,pod=p1");
	/* rules apply in the file's order */
	RELABELS_TO("t relabel action=labelmap regex='k8s_(.+)'\n"
		    "t relabel action=labeldrop regex='k8s_.*'\n",
		    "k8s_pod=p1,a=1", "a=1,pod=p1");
	return 0;
}

/*
 * hashmod: Prometheus' sum64 of the MD5 (its last 8 bytes, big-endian)
 * modulo modulus, as Prometheus' own test gives ("baz" % 1000: 976; the
 * others computed by Python's hashlib the same way); lowercase and
 * uppercase of the joined value; keepequal and dropequal against the
 * target's value (missing: ""); no regex applies to any of them.
 */
static int test_profsvc__relabel_hash_case_equal(void)
{
	char out[512];

	RELABELS_TO("t relabel action=hashmod source_labels=c target_label=d modulus=1000\n",
		    "a=foo,c=baz", "a=foo,c=baz,d=976");
	RELABELS_TO("t relabel action=hashmod source_labels=a target_label=shard modulus=1000\n",
		    "a=foo", "a=foo,shard=696");
	RELABELS_TO("t relabel action=hashmod source_labels=s,r target_label=h modulus=7 "
		    "regex=nomatch\n", "s=shop,r=eu", "h=4,r=eu,s=shop");
	RELABELS_TO("t relabel action=lowercase source_labels=a,b target_label=c\n",
		    "a=MiXeD-1,b=X", "a=MiXeD-1,b=X,c=mixed-1;x");
	RELABELS_TO("t relabel action=uppercase source_labels=env target_label=env\n", "env=prod",
		    "env=PROD");
	RELABELS_TO("t relabel action=keepequal source_labels=a target_label=b\n", "a=1,b=1",
		    "a=1,b=1");
	CHECK_INT(relabel("t relabel action=keepequal source_labels=a target_label=b\n", "a=1,b=2",
			  out, sizeof(out)), ==, PROFSVC_RELABEL_DROP);
	CHECK_INT(relabel("t relabel action=keepequal source_labels=a target_label=b\n", "a=1",
			  out, sizeof(out)), ==, PROFSVC_RELABEL_DROP);
	CHECK_INT(relabel("t relabel action=dropequal source_labels=a target_label=b\n", "c=1",
			  out, sizeof(out)), ==, PROFSVC_RELABEL_DROP); /* "" == "" */
	RELABELS_TO("t relabel action=dropequal source_labels=a target_label=b\n", "a=1,b=2",
		    "a=1,b=2");
	return 0;
}

/* A tenant's own rules, else those of "default"; none: nothing applies. */
static int test_profsvc__rules_per_tenant(void)
{
	const char *text = "default relabel action=labeldrop regex=x\n"
			   "# a comment\n"
			   "t relabel action=labeldrop regex=y\n";
	struct profsvc_rules *t;
	struct profsvc_labels ls = { 0 };
	char why[512], spec[] = "x=1,y=2", out[64];

	RELABELS_TO(text, "x=1,y=2", "x=1");
	CHECK_INT(profsvc_rules_parse(text, strlen(text), &t, why, sizeof(why)), ==, 0);
	CHECK(profsvc_rules_for(t, "other"));
	CHECK_INT(labels_of(spec, &ls), ==, 0);
	CHECK_INT(profsvc_rules_apply(t, "other", &ls, why, sizeof(why)), ==, 0);
	labels_str(&ls, out, sizeof(out));
	CHECK_STR(out, "y=2");
	profsvc_labels_release(&ls);
	profsvc_rules_free(t);
	CHECK_INT(profsvc_rules_parse("t relabel action=labeldrop regex=y\n", 35, &t, why,
				      sizeof(why)), ==, 0);
	CHECK(!profsvc_rules_for(t, "other"));
	CHECK(!profsvc_rules_for(NULL, "t"));
	profsvc_rules_free(t);
	return 0;
}

/* Refused at load, the reason naming the line: a regex that does not
 * compile, one past the memory bound, an unknown key or action, keys an
 * action does not take, a missing target, a bad quote, too many rules. */
static int test_profsvc__rules_file_refused(void)
{
	static const struct {
		const char *text, *why;
		int err;
	} bad[] = {
		{ "# x\n\nt relabel action=labeldrop regex='(a'\n", "line 3: regex=(a: missing )",
		  -EINVAL },
		{ "t relabel action=labeldrop regex='((a{100}){100}){100}'\n", "line 1: regex=",
		  -E2BIG },
		{ "t relabel action=labeldrop regexp=a\n", "line 1: 'regexp' is not a key",
		  -EINVAL },
		{ "t relabel action=hashmod target_label=a\n", "line 1: action=hashmod needs modulus",
		  -EINVAL },
		{ "t relabel action=hashmod target_label=a modulus=0\n",
		  "line 1: modulus=0: want a number above 0", -EINVAL },
		{ "t relabel action=hashmod modulus=4\n", "line 1: action=hashmod needs target_label",
		  -EINVAL },
		{ "t relabel action=lowercase source_labels=a target_label=$1\n",
		  "line 1: target_label=$1: not a label name", -EINVAL },
		{ "t relabel action=keepequal source_labels=a target_label=b regex=x\n",
		  "line 1: action=keepequal takes source_labels and target_label only", -EINVAL },
		{ "t relabel action=hashmodulo\n", "line 1: action=hashmodulo: want", -EINVAL },
		{ "t relabel action=labeldrop regex=a target_label=b\n",
		  "line 1: action=labeldrop takes regex only", -EINVAL },
		{ "t relabel source_labels=a\n", "line 1: action=replace needs target_label",
		  -EINVAL },
		{ "t relabel source_labels=a target_label=1a\n", "line 1: target_label=1a: not",
		  -EINVAL },
		{ "t relabel source_labels=a-b target_label=c\n", "line 1: source_labels: 'a-b'",
		  -EINVAL },
		{ "t relabel regex='a b target_label=c\n", "line 1: regex=: a quote not closed",
		  -EINVAL },
		{ "t relabel action=drop action=keep\n", "line 1: 'action' given twice", -EINVAL },
		{ "t sampel keep=0.1\n", "line 1: want 'TENANT relabel", -EINVAL },
		{ "no/tenant relabel action=drop\n", "line 1: not a tenant ID", -EINVAL },
	};
	struct profsvc_rules *t = NULL;
	struct ember_buf many;
	char why[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		CHECK_INT(profsvc_rules_parse(bad[i].text, strlen(bad[i].text), &t, why,
					      sizeof(why)), ==, bad[i].err);
		if (strncmp(why, bad[i].why, strlen(bad[i].why))) {
			fprintf(stderr, "case %zu: '%s'\n", i, why);
			return 1;
		}
	}
	ember_buf_init(&many, 1 << 20);
	for (int i = 0; i < 65; i++)
		CHECK_INT(ember_buf_appendf(&many, "t relabel action=labeldrop regex=a%d\n", i), ==,
			  0);
	CHECK_INT(profsvc_rules_parse(many.data, many.len, &t, why, sizeof(why)), ==, -E2BIG);
	CHECK(strstr(why, "line 65: tenant 't' has more than 64 rules") != NULL);
	ember_buf_release(&many);
	CHECK_INT(profsvc_rules_parse("a\0b", 3, &t, why, sizeof(why)), ==, -EINVAL);
	return 0;
}

/* A value a rule makes is capped: a replacement that repeats a long value
 * past PROFSVC_RELABEL_MAX_VALUE fails the write with -E2BIG, the line named. */
static int test_profsvc__relabel_value_capped(void)
{
	char rules[256], spec[PROFSVC_RELABEL_MAX_VALUE], out[512];

	snprintf(rules, sizeof(rules),
		 "t relabel source_labels=a target_label=b replacement='$1$1'\n");
	memset(spec, 'x', sizeof(spec) - 1);
	spec[sizeof(spec) - 1] = '\0';
	memcpy(spec, "a=", 2);
	CHECK_INT(relabel(rules, spec, out, sizeof(out)), ==, -E2BIG);
	return 0;
}

/* ---- sampling ------------------------------------------------------------------- */

#define SEC ((int64_t)1000000000)
#define T0 ((int64_t)1700000040 * SEC) /* the start of a minute */

/* Of 10,000 series the selector matches, how many the rules keep at time t. */
static size_t kept_of(const struct profsvc_rules *t, int64_t time_ns, const char *service)
{
	size_t kept = 0;

	for (int i = 0; i < 10000; i++) {
		char pod[32];
		struct pstore_label l[2] = { { "service_name", service }, { "pod", pod } };

		snprintf(pod, sizeof(pod), "pod-%d", i);
		kept += profsvc_rules_keep(t, "t", l, 2, time_ns);
	}
	return kept;
}

/*
 * A sampling rule keeps a fraction near its probability of the series
 * its selector matches (10,000 series: 1,000 +- 150, five standard
 * deviations), the same ones again for any time of the window and on any
 * replica (the hash is unkeyed), others in another window; series the
 * selector does not match are all kept; keep=0 keeps none, keep=1 all;
 * the order of the labels does not matter.
 */
static int test_profsvc__sampling_deterministic_and_near_its_probability(void)
{
	const char *text = "t sample selector='{service_name=\"noisy\"}' keep=0.1\n"
			   "u sample selector='{}' keep=0\n"
			   "v sample selector='{}' keep=1 window=5m\n";
	struct profsvc_rules *t;
	char why[512];
	size_t k0, same = 0;

	CHECK_INT(profsvc_rules_parse(text, strlen(text), &t, why, sizeof(why)), ==, 0);
	k0 = kept_of(t, T0, "noisy");
	CHECK_INT(k0, >=, 850);
	CHECK_INT(k0, <=, 1150);
	CHECK_INT(kept_of(t, T0 + 59 * SEC, "noisy"), ==, k0);
	CHECK_INT(kept_of(t, T0, "quiet"), ==, 10000);
	for (int i = 0; i < 10000; i++) { /* the next window draws afresh */
		char pod[32];
		struct pstore_label l[2] = { { "service_name", "noisy" }, { "pod", pod } },
				    r[2] = { { "pod", pod }, { "service_name", "noisy" } };

		snprintf(pod, sizeof(pod), "pod-%d", i);
		bool now = profsvc_rules_keep(t, "t", l, 2, T0);

		CHECK_INT(now, ==, profsvc_rules_keep(t, "t", r, 2, T0));
		same += now && profsvc_rules_keep(t, "t", l, 2, T0 + 60 * SEC);
	}
	CHECK_INT(same, <, 300); /* about 100 kept in both */
	{
		struct pstore_label l[1] = { { "service_name", "x" } };

		CHECK(!profsvc_rules_keep(t, "u", l, 1, T0));
		CHECK(profsvc_rules_keep(t, "v", l, 1, T0));
	}
	profsvc_rules_free(t);
	return 0;
}

/* A sampling rule's keys checked at load, naming the line. */
static int test_profsvc__sampling_rule_refused(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "t sample selector='{}' keep=1.5\n", "line 1: keep=1.5: want a probability" },
		{ "t sample selector='{a=}' keep=0.5\n", "line 1: selector={a=}: " },
		{ "t sample selector='{}'\n", "line 1: a sample rule needs selector= and keep=" },
		{ "t sample selector='{}' keep=0.5 window=0\n", "line 1: window=0: want" },
		{ "t sample selector='{}' keep=0.5 every=2\n", "line 1: 'every' is not a key" },
	};
	struct profsvc_rules *t;
	char why[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = strlen(bad[i].text);

		CHECK_INT(profsvc_rules_parse(bad[i].text, len, &t, why, sizeof(why)), ==, -EINVAL);
		if (strncmp(why, bad[i].why, strlen(bad[i].why))) {
			fprintf(stderr, "case %zu: '%s'\n", i, why);
			return 1;
		}
	}
	return 0;
}

/* A profile's totals only: its types, period and times, one sample without
 * a stack holding each type's sum. */
static int test_profsvc__totals_only(void)
{
	struct pprof_profile *p = pprof_profile_new(), *q = NULL;
	const pprof_message_t *m;
	uint64_t map, loc[2];
	int64_t v[3][2] = { { 1, 10 }, { 2, 20 }, { 4, 40 } };

	CHECK(p);
	CHECK_INT(pprof_add_sample_type(p, "samples", "count"), ==, 0);
	CHECK_INT(pprof_add_sample_type(p, "cpu", "nanoseconds"), ==, 0);
	CHECK_INT(pprof_set_period(p, "cpu", "nanoseconds", 10), ==, 0);
	CHECK_INT(pprof_add_mapping(p, &(struct pprof_mapping_desc){ 0x1000, 0x2000, 0, "a", NULL },
				    &map), ==, 0);
	CHECK_INT(pprof_add_location(p, map, 0x1100, &loc[0]), ==, 0);
	CHECK_INT(pprof_add_location(p, map, 0x1200, &loc[1]), ==, 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT(pprof_add_sample(p, loc, (size_t)(i % 2 + 1), v[i], 2), ==, 0);
	pprof_set_time(p, 1700000000 * SEC, 10 * SEC);
	CHECK_INT(profsvc_totals_only(p, &q), ==, 0);
	m = pprof_message(q);
	CHECK_INT(m->n_sample, ==, 1);
	CHECK_INT(m->sample[0]->n_location_id, ==, 0);
	CHECK_INT(m->sample[0]->n_value, ==, 2);
	CHECK_INT(m->sample[0]->value[0], ==, 7);
	CHECK_INT(m->sample[0]->value[1], ==, 70);
	CHECK_INT(m->n_sample_type, ==, 2);
	CHECK_STR(pprof_string(q, m->sample_type[1]->type), "cpu");
	CHECK_INT(m->period, ==, 10);
	CHECK_INT(m->time_nanos, ==, 1700000000 * SEC);
	CHECK_INT(m->duration_nanos, ==, 10 * SEC);
	pprof_profile_free(p);
	pprof_profile_free(q);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_profsvc__relabel_replace),
	UNIT_CASE(test_profsvc__relabel_keep_drop),
	UNIT_CASE(test_profsvc__relabel_label_actions),
	UNIT_CASE(test_profsvc__rules_per_tenant),
	UNIT_CASE(test_profsvc__rules_file_refused),
	UNIT_CASE(test_profsvc__relabel_hash_case_equal),
	UNIT_CASE(test_profsvc__relabel_value_capped),
	UNIT_CASE(test_profsvc__sampling_deterministic_and_near_its_probability),
	UNIT_CASE(test_profsvc__sampling_rule_refused),
	UNIT_CASE(test_profsvc__totals_only),
};

UNIT_MAIN_QUIET(cases)
