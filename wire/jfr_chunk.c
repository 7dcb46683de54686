/*
 * jfr_chunk.c - jfr_decode (jfr.h): a recording is chunks one after the
 * other, each self-contained (docs/formats.md, "JFR recordings"): a
 * header of 68 bytes (magic "FLR\0", major and minor version, the
 * chunk's size, the offsets of its last checkpoint and of its metadata
 * event, its start in ns since the epoch, its duration, its start in
 * ticks and the ticks a second, all big-endian; then 4 bytes of flags),
 * then events: a compressed size (its own bytes included) and type, the
 * body.  Type 0 is the metadata, 1 a checkpoint (constant pools), any
 * other a class of the metadata.  Each chunk's metadata is read first,
 * then all of its events in order, then its samples are resolved: the
 * IDs of constants are a chunk's own.  Every offset and size is checked
 * against the chunk before it is followed.  Outside input: fuzzed by
 * tests/fuzz/fuzz_jfr.c.
 */
#include "jfr_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct header {
	uint16_t major, minor;
	uint64_t size, cpool, meta, start_ns, duration_ns, ticks_per_s;
};

static uint64_t be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static int read_header(struct jfr_dec *x, const uint8_t *p, const uint8_t *end, struct header *h)
{
	size_t left = (size_t)(end - p);

	EMBER_FAIL_IF(left < JFR_HEADER_SIZE || memcmp(p, "FLR\0", 4) != 0, x->d, -EINVAL,
		      "jfr: %s%zu bytes without the 'FLR' header of a chunk",
		      x->chunk ? "after the last chunk, " : "not a JFR recording: ", left);
	h->major = (uint16_t)be(p + 4, 2);
	h->minor = (uint16_t)be(p + 6, 2);
	h->size = be(p + 8, 8);
	h->cpool = be(p + 16, 8);
	h->meta = be(p + 24, 8);
	h->start_ns = be(p + 32, 8);
	h->duration_ns = be(p + 40, 8);
	h->ticks_per_s = be(p + 56, 8);
	EMBER_FAIL_IF(h->major != 2, x->d, -EINVAL,
		      "jfr: chunk %zu: format version %u.%u; this server reads 2.x (JDK 11 and later)",
		      x->chunk, h->major, h->minor);
	EMBER_FAIL_IF(h->size < JFR_HEADER_SIZE || h->size > left, x->d, -EINVAL,
		      "jfr: chunk %zu: its header gives a size of %llu bytes, %zu are left (a "
		      "truncated or unfinished recording)",
		      x->chunk, (unsigned long long)h->size, left);
	EMBER_FAIL_IF(h->meta < JFR_HEADER_SIZE || h->meta >= h->size ||
			      h->cpool < JFR_HEADER_SIZE || h->cpool >= h->size,
		      x->d, -EINVAL,
		      "jfr: chunk %zu: metadata offset %llu or constant pool offset %llu is "
		      "outside the chunk's %llu bytes",
		      x->chunk, (unsigned long long)h->meta, (unsigned long long)h->cpool,
		      (unsigned long long)h->size);
	return 0;
}

/* The event at *pos: its bounds [*pos, *ev_end) and type; body after both. */
static int event_head(struct jfr_dec *x, const uint8_t *pos, const uint8_t *end,
		      const uint8_t **body, const uint8_t **ev_end, uint64_t *type)
{
	const uint8_t *p = pos;
	uint64_t size;

	EMBER_FORWARD_IF_ERROR(jfr_varlong(x, &p, end, &size));
	EMBER_FAIL_IF(size > (uint64_t)(end - pos), x->d, -EINVAL,
		      "jfr: chunk %zu offset %zu: an event of %llu bytes, past the chunk's end "
		      "(%zu bytes left)",
		      x->chunk, jfr_off(x, pos), (unsigned long long)size, (size_t)(end - pos));
	EMBER_FORWARD_IF_ERROR(jfr_varlong(x, &p, pos + size, type));
	*body = p;
	*ev_end = pos + size;
	return 0;
}

static int read_meta(struct jfr_dec *x, const struct header *h)
{
	const uint8_t *body, *ev_end;
	uint64_t type;

	EMBER_FORWARD_IF_ERROR(event_head(x, x->base + h->meta, x->base + h->size, &body, &ev_end,
					  &type));
	EMBER_FAIL_IF(type != JFR_EVENT_METADATA, x->d, -EINVAL,
		      "jfr: chunk %zu offset %llu: the header's metadata offset holds an event of "
		      "type %llu, not the metadata",
		      x->chunk, (unsigned long long)h->meta, (unsigned long long)type);
	return jfr_meta_read(x, body, ev_end);
}

static int read_events(struct jfr_dec *x, const struct header *h)
{
	const uint8_t *pos = x->base + JFR_HEADER_SIZE, *end = x->base + h->size;

	while (pos < end) {
		const uint8_t *body, *ev_end;
		uint64_t type;

		EMBER_FORWARD_IF_ERROR(event_head(x, pos, end, &body, &ev_end, &type));
		if (type == JFR_EVENT_CHECKPOINT) {
			EMBER_FORWARD_IF_ERROR(jfr_checkpoint_read(x, body, ev_end));
		} else if (type != JFR_EVENT_METADATA) {
			const struct jfr_class *c = jfr_class_find(x, (int64_t)type);

			if (c) /* an event of a type the metadata lacks carries nothing kept */
				EMBER_FORWARD_IF_ERROR(jfr_event_read(x, c, body, ev_end));
		}
		pos = ev_end;
	}
	return 0;
}

static void span(struct jfr_recording *r, const struct header *h)
{
	int64_t start = (int64_t)(h->start_ns & INT64_MAX);
	int64_t duration = (int64_t)(h->duration_ns & INT64_MAX);
	int64_t stop = duration > INT64_MAX - start ? INT64_MAX : start + duration;
	int64_t r_stop = r->start_ns + r->duration_ns; /* no overflow: set below */

	if (!r->n_chunks || start < r->start_ns)
		r->start_ns = start;
	if (!r->n_chunks || stop > r_stop)
		r_stop = stop;
	r->duration_ns = r_stop - r->start_ns;
}

/* One chunk at x->base; its size into *size. */
static int read_chunk(struct jfr_dec *x, const uint8_t *end, size_t *size)
{
	struct header h;

	EMBER_FORWARD_IF_ERROR(read_header(x, x->base, end, &h));
	jfr_chunk_reset(x);
	EMBER_FORWARD_IF_ERROR(read_meta(x, &h));
	EMBER_FORWARD_IF_ERROR(read_events(x, &h));
	jfr_pools_sort(x);
	EMBER_FORWARD_IF_ERROR(jfr_build_chunk(x, h.ticks_per_s));
	span(x->rec, &h);
	x->rec->n_chunks++;
	*size = (size_t)h.size;
	return 0;
}

static void limits_resolve(const struct jfr_limits *in, struct jfr_limits *out)
{
	*out = (struct jfr_limits){
		.sz = sizeof(*out),
		.max_input_bytes = EMBER_OPTS_OR(in, max_input_bytes, (size_t)64 << 20),
		.max_chunks = EMBER_OPTS_OR(in, max_chunks, 1024),
		.max_classes = EMBER_OPTS_OR(in, max_classes, (size_t)16 << 10),
		.max_fields = EMBER_OPTS_OR(in, max_fields, 1024),
		.max_meta_strings = EMBER_OPTS_OR(in, max_meta_strings, (size_t)256 << 10),
		.max_string_bytes = EMBER_OPTS_OR(in, max_string_bytes, (size_t)64 << 10),
		.max_constants = EMBER_OPTS_OR(in, max_constants, (size_t)8 << 20),
		.max_events = EMBER_OPTS_OR(in, max_events, (size_t)8 << 20),
		.max_stack_depth = EMBER_OPTS_OR(in, max_stack_depth, 4096),
		.max_nesting = EMBER_OPTS_OR(in, max_nesting, 32),
		.account = EMBER_OPTS_GET(in, account, NULL),
	};
}

static int decode(struct jfr_dec *x, const struct jfr_opts *o, const uint8_t *data, size_t size)
{
	const uint8_t *end = data + size;

	EMBER_FAIL_IF(size > x->lim.max_input_bytes, x->d, -E2BIG,
		      "jfr: a recording of %zu bytes, past the limit of %zu", size,
		      x->lim.max_input_bytes);
	if (EMBER_OPTS_GET(o, labels, NULL))
		EMBER_FORWARD_IF_ERROR(jfr_labels_parse(x, o->labels, o->labels_len, &x->labels));
	x->work = 16 * (uint64_t)size + (1u << 20);
	x->base = data;
	do {
		size_t n;

		EMBER_FAIL_IF(x->chunk >= x->lim.max_chunks, x->d, -E2BIG,
			      "jfr: more than %zu chunks", x->lim.max_chunks);
		EMBER_FORWARD_IF_ERROR(read_chunk(x, end, &n));
		x->base += n;
		x->chunk++;
	} while (x->base < end);
	return jfr_build_finish(x);
}

int jfr_decode(const void *data, size_t size, const struct jfr_opts *o,
	       struct jfr_recording **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	struct jfr_dec x = { .d = &d };
	int err;

	limits_resolve(EMBER_OPTS_GET(o, lim, NULL), &x.lim);
	x.cpu_period = EMBER_OPTS_OR(o, cpu_period_ns, 10000000);
	x.rec = calloc(1, sizeof(*x.rec));
	if (!x.rec)
		return -ENOMEM;
	err = decode(&x, o, data ? data : "", size);
	jfr_dec_release(&x);
	if (err) {
		if (!d.set)
			ember_diag_fail(&d, err, NULL, "jfr: %s",
					err == -E2BIG ? "the recording needs more memory than the "
							"server gives one request"
					: err == -EAGAIN ? "the server has no memory free for the "
							   "recording now"
							 : "out of memory");
		jfr_recording_free(x.rec);
		return err;
	}
	*out = x.rec;
	return 0;
}

struct pprof_profile *jfr_profile_take(struct jfr_recording *r, size_t i)
{
	struct pprof_profile *p;

	if (!r || i >= r->n_profiles)
		return NULL;
	p = r->profiles[i].p;
	r->profiles[i].p = NULL;
	return p;
}

void jfr_recording_free(struct jfr_recording *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_profiles; i++)
		pprof_profile_free(r->profiles[i].p);
	free(r);
}
