/*
 * test_jfrdecode.c - unit tests of wire/jfr.h on the recordings
 * tests/fuzz/make_jfr_seeds.py writes (tests/fuzz/corpus/jfr/, its header
 * lists what they hold): frames and lines, the six profile types and
 * their values (durations from ticks into ns, sleeping CPU samples left
 * out), the labels field by context, chunks adding up, and refusals with
 * their reasons (damaged headers, limits, the memory account).
 */
#include "jfr.h"
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EMBER_JFR_SEEDS
#error "EMBER_JFR_SEEDS: the seed directory (tests/wire/CMakeLists.txt)"
#endif

/* The seed name, read whole (caller frees); *len its size. */
static uint8_t *seed(const char *name, size_t *len)
{
	char path[4096];
	FILE *f;
	uint8_t *b = malloc(1 << 16);

	snprintf(path, sizeof(path), "%s/%s", EMBER_JFR_SEEDS, name);
	f = fopen(path, "rb");
	if (!f || !b) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	*len = fread(b, 1, 1 << 16, f);
	fclose(f);
	return b;
}

static const struct jfr_profile *by_event(const struct jfr_recording *r, const char *event)
{
	for (size_t i = 0; i < r->n_profiles; i++)
		if (strcmp(r->profiles[i].event, event) == 0)
			return &r->profiles[i];
	return NULL;
}

/* "root;...;leaf:line" of sample i. */
static void stack_of(const struct pprof_profile *p, size_t i, char *out, size_t size)
{
	const Perftools__Profiles__Sample *s = pprof_message(p)->sample[i];

	out[0] = '\0';
	for (size_t k = s->n_location_id; k-- > 0;) {
		const pprof_location_t *l = pprof_location_by_id(p, s->location_id[k]);
		const pprof_function_t *f = pprof_function_by_id(p, l->line[0]->function_id);

		snprintf(out + strlen(out), size - strlen(out), "%s%s:%lld", strlen(out) ? ";" : "",
			 pprof_string(p, f->name), (long long)l->line[0]->line);
	}
}

/* The sum of value v over the samples. */
static int64_t total(const struct pprof_profile *p, size_t v)
{
	const pprof_message_t *m = pprof_message(p);
	int64_t t = 0;

	for (size_t i = 0; i < m->n_sample; i++)
		t += m->sample[i]->value[v];
	return t;
}

static const char *type_of(const struct pprof_profile *p, size_t v)
{
	return pprof_string(p, pprof_message(p)->sample_type[v]->type);
}

static int decode(const char *name, const struct jfr_opts *o, struct jfr_recording **r,
		  char *why, size_t size)
{
	size_t len;
	uint8_t *b = seed(name, &len);
	int err = jfr_decode(b, len, o, r, why, size);

	free(b);
	return err;
}

static int test_jfrdecode__frames_lines_and_six_types(void)
{
	struct jfr_recording *r = NULL;
	const struct jfr_profile *cpu;
	char why[256], st[512];
	int found = 0;

	CHECK_INT(decode("recording", NULL, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(r->n_profiles, ==, 5); /* no jdk.ObjectAllocationOutsideTLAB events */
	CHECK_INT(r->n_chunks, ==, 1);
	CHECK_INT(r->start_ns, ==, 1700000000000000000);
	CHECK_INT(r->duration_ns, ==, 10000000000);
	cpu = by_event(r, "jdk.ExecutionSample");
	CHECK(cpu && strcmp(cpu->name, "process_cpu") == 0);
	CHECK_INT(cpu->n_events, ==, 7); /* 3 sleeping ones left out */
	CHECK_STR(type_of(cpu->p, 0), "cpu");
	CHECK_INT(pprof_message(cpu->p)->period, ==, 10000000);
	CHECK_INT(total(cpu->p, 0), ==, 7 * 10000000);
	CHECK_INT(pprof_message(cpu->p)->n_sample, ==, 2);
	/* symbols in UTF-8 (main), UTF-16 chars (work), Latin-1 (hot) */
	stack_of(cpu->p, 0, st, sizeof(st));
	CHECK_STR(st, "com.example.App.main:10;com.example.App.work:20;com.example.App.hot:30");
	stack_of(cpu->p, 1, st, sizeof(st));
	CHECK_STR(st, "com.example.App.main:10;com.example.App.work:21");
	CHECK(strcmp(by_event(r, "jdk.JavaMonitorEnter")->name, "mutex") == 0);
	CHECK(strcmp(by_event(r, "jdk.ThreadPark")->name, "block") == 0);
	/* a native frame: its class named "", no line (-1) */
	for (size_t i = 0; i < pprof_message(by_event(r, "jdk.ThreadPark")->p)->n_sample; i++) {
		stack_of(by_event(r, "jdk.ThreadPark")->p, i, st, sizeof(st));
		found += strcmp(st, "com.example.App.main:10;JVM_Sleep:0") == 0;
	}
	CHECK_INT(found, ==, 1);
	CHECK(strcmp(by_event(r, "jdk.ObjectAllocationSample")->name, "memory") == 0);
	CHECK(strcmp(by_event(r, "jdk.ObjectAllocationInNewTLAB")->name, "memory") == 0);
	jfr_recording_free(r);
	return 0;
}

static int test_jfrdecode__durations_in_ns_bytes_and_counts(void)
{
	struct jfr_recording *r = NULL;
	const struct jfr_profile *p;
	char why[256];

	CHECK_INT(decode("recording", NULL, &r, why, sizeof(why)), ==, 0);
	p = by_event(r, "jdk.JavaMonitorEnter"); /* 2000 ticks at 1000 a second */
	CHECK_STR(type_of(p->p, 0), "contentions");
	CHECK_STR(type_of(p->p, 1), "delay");
	CHECK_INT(total(p->p, 0), ==, 1);
	CHECK_INT(total(p->p, 1), ==, 2000000000);
	p = by_event(r, "jdk.ThreadPark");
	CHECK_INT(total(p->p, 0), ==, 2);
	CHECK_INT(total(p->p, 1), ==, 500000000);
	p = by_event(r, "jdk.ObjectAllocationSample");
	CHECK_STR(type_of(p->p, 1), "alloc_sample_bytes");
	CHECK_INT(total(p->p, 1), ==, 4096);
	p = by_event(r, "jdk.ObjectAllocationInNewTLAB");
	CHECK_STR(type_of(p->p, 0), "alloc_in_new_tlab_objects");
	CHECK_INT(total(p->p, 0), ==, 2);
	CHECK_INT(total(p->p, 1), ==, 2048);
	jfr_recording_free(r);
	return 0;
}

static int test_jfrdecode__cpu_period_and_chunks_add_up(void)
{
	struct jfr_opts o = { .sz = sizeof(o), .cpu_period_ns = 1000000000 / 97 };
	struct jfr_recording *r = NULL;
	const struct jfr_profile *cpu;
	char why[256];

	CHECK_INT(decode("two_chunks", &o, &r, why, sizeof(why)), ==, 0);
	CHECK_INT(r->n_chunks, ==, 2);
	CHECK_INT(r->duration_ns, ==, 20000000000);
	cpu = by_event(r, "jdk.ExecutionSample");
	CHECK_INT(cpu->n_events, ==, 14);
	CHECK_INT(total(cpu->p, 0), ==, 14 * (1000000000 / 97));
	CHECK_INT(pprof_message(cpu->p)->time_nanos, ==, 1700000000000000000);
	jfr_recording_free(r);
	return 0;
}

static int test_jfrdecode__labels_by_context(void)
{
	size_t len;
	uint8_t *b = seed("with_labels", &len); /* "LBL", its length, labels, the recording */
	struct jfr_opts o = { .sz = sizeof(o), .labels = b + 4, .labels_len = b[3] };
	struct jfr_recording *r = NULL;
	const pprof_message_t *m;
	const struct pprof_profile *p;
	char why[256];

	CHECK_INT(jfr_decode(b + 4 + b[3], len - 4 - b[3], &o, &r, why, sizeof(why)), ==, 0);
	p = by_event(r, "jdk.ExecutionSample")->p;
	m = pprof_message(p);
	for (size_t i = 0; i < m->n_sample; i++) {
		bool deep = m->sample[i]->n_location_id == 3; /* context 1 */

		CHECK_INT(m->sample[i]->n_label, ==, deep ? 1 : 0);
		if (deep) {
			CHECK_STR(pprof_string(p, m->sample[i]->label[0]->key), "span");
			CHECK_STR(pprof_string(p, m->sample[i]->label[0]->str), "checkout");
		}
	}
	jfr_recording_free(r);
	/* a label naming a string the snapshot lacks */
	b[4 + 9] = 9;
	CHECK_INT(jfr_decode(b + 4 + b[3], len - 4 - b[3], &o, &r, why, sizeof(why)), ==, -EINVAL);
	CHECK(strstr(why, "string 9") != NULL);
	free(b);
	return 0;
}

/* name refused with err and a reason holding what. */
static int refused(const char *name, const struct jfr_opts *o, int err, const char *what)
{
	struct jfr_recording *r = NULL;
	char why[256];

	CHECK_INT(decode(name, o, &r, why, sizeof(why)), ==, err);
	if (!strstr(why, what)) {
		fprintf(stderr, "%s: '%s' does not say '%s'\n", name, why, what);
		return 1;
	}
	CHECK(r == NULL);
	return 0;
}

static int test_jfrdecode__damaged_recordings_refused_with_a_reason(void)
{
	struct jfr_recording *r = NULL;
	char why[256];

	CHECK_INT(refused("truncated", NULL, -EINVAL, "truncated or unfinished"), ==, 0);
	CHECK_INT(refused("version_1", NULL, -EINVAL, "format version 1.1"), ==, 0);
	CHECK_INT(refused("metadata_offset_past_end", NULL, -EINVAL, "outside the chunk"), ==, 0);
	CHECK_INT(jfr_decode("", 0, NULL, &r, why, sizeof(why)), ==, -EINVAL);
	CHECK(strstr(why, "not a JFR recording") != NULL);
	CHECK_INT(jfr_decode("\x1f\x8b\x08\x00", 4, NULL, &r, why, sizeof(why)), ==, -EINVAL);
	CHECK(r == NULL);
	return 0;
}

static int test_jfrdecode__limits_and_the_account(void)
{
	struct jfr_limits lim = { .sz = sizeof(lim), .max_stack_depth = 2 };
	struct jfr_opts o = { .sz = sizeof(o), .lim = &lim };
	struct ember_mem_account acct;

	CHECK_INT(refused("recording", &o, -E2BIG, "more than 2 frames"), ==, 0);
	lim = (struct jfr_limits){ .sz = sizeof(lim), .max_events = 4 };
	CHECK_INT(refused("recording", &o, -E2BIG, "more than 4 sample events"), ==, 0);
	lim = (struct jfr_limits){ .sz = sizeof(lim), .max_classes = 3 };
	CHECK_INT(refused("recording", &o, -E2BIG, "more than 3 classes"), ==, 0);
	lim = (struct jfr_limits){ .sz = sizeof(lim), .max_nesting = 1 }; /* frames are 2 deep */
	CHECK_INT(refused("recording", &o, -EINVAL, "nested deeper than 1"), ==, 0);
	lim = (struct jfr_limits){ .sz = sizeof(lim), .max_input_bytes = 100 };
	CHECK_INT(refused("recording", &o, -E2BIG, "past the limit of 100"), ==, 0);
	lim = (struct jfr_limits){ .sz = sizeof(lim), .max_chunks = 1 };
	CHECK_INT(refused("two_chunks", &o, -E2BIG, "more than 1 chunks"), ==, 0);
	ember_mem_account_init(&acct, NULL, 2000);
	lim = (struct jfr_limits){ .sz = sizeof(lim), .account = &acct };
	CHECK_INT(refused("recording", &o, -E2BIG, "more memory than the server gives"), ==, 0);
	ember_mem_account_release(&acct);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_jfrdecode__frames_lines_and_six_types),
	UNIT_CASE(test_jfrdecode__durations_in_ns_bytes_and_counts),
	UNIT_CASE(test_jfrdecode__cpu_period_and_chunks_add_up),
	UNIT_CASE(test_jfrdecode__labels_by_context),
	UNIT_CASE(test_jfrdecode__damaged_recordings_refused_with_a_reason),
	UNIT_CASE(test_jfrdecode__limits_and_the_account),
};

UNIT_MAIN_QUIET(cases)
