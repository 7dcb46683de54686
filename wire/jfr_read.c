/*
 * jfr_read.c - the primitives of a JFR recording (docs/formats.md, "JFR
 * recordings"): compressed integers, strings in their six encodings, and
 * the decoder's memory, every growth charged to the request's account
 * before it is made.  Outside input: every read is bounded by the end of
 * the event it is in; fuzzed by tests/fuzz/fuzz_jfr.c.
 */
#include "jfr_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int jfr_reserve(struct jfr_dec *x, void **v, size_t *alloc, size_t need, size_t elem)
{
	size_t n = *alloc ? *alloc : 8;

	if (need <= *alloc)
		return 0;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / 2 / elem)
		return -E2BIG;
	EMBER_FORWARD_IF_ERROR(ember_mem_account_take(x->lim.account, (n - *alloc) * elem));
	return ember_vec_reserve(v, alloc, n, elem);
}

int jfr_varlong(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pos;
	uint64_t v = 0;

	for (unsigned i = 0; i < 9; i++) {
		EMBER_FAIL_IF(p >= end, x->d, -EINVAL,
			      "jfr: chunk %zu offset %zu: a number runs past the end of its event",
			      x->chunk, jfr_off(x, *pos));
		if (i == 8) { /* the 9th byte: all 8 bits */
			v |= (uint64_t)*p++ << 56;
			break;
		}
		v |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (!(*p++ & 0x80))
			break;
	}
	*pos = p;
	*out = v;
	return 0;
}

int jfr_varcount(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, uint64_t max,
		 const char *what, uint64_t *out)
{
	const uint8_t *p = *pos;
	uint64_t v;

	EMBER_FORWARD_IF_ERROR(jfr_varlong(x, &p, end, &v));
	EMBER_FAIL_IF(v > max, x->d, -EINVAL,
		      "jfr: chunk %zu offset %zu: %s %llu is more than the %llu the event can "
		      "hold",
		      x->chunk, jfr_off(x, *pos), what, (unsigned long long)v,
		      (unsigned long long)max);
	*pos = p;
	*out = v;
	return 0;
}

/* Append code point c (< 0x10000; others as U+FFFD) as UTF-8. */
static int put_utf8(struct jfr_dec *x, uint64_t c)
{
	char u[3];
	size_t n;
	int err;

	if (c > 0xffff)
		c = 0xfffd;
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | (c >> 6));
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else {
		u[0] = (char)(0xe0 | (c >> 12));
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	}
	for (size_t i = 0; i < n; i++)
		if (JFR_PUSH(x, &x->text, u[i], err))
			return err;
	return 0;
}

/* len bytes or chars of encoding enc (3 UTF-8, 4 chars, 5 Latin-1). */
static int string_body(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, uint8_t enc,
		       uint64_t len)
{
	if (enc == 3) { /* copied as is; len <= end - pos: checked by the caller */
		EMBER_FORWARD_IF_ERROR(jfr_reserve(x, (void **)&x->text.v, &x->text.alloc,
						   x->text.n + len + 1, 1));
		memcpy(x->text.v + x->text.n, *pos, len);
		x->text.n += len;
		*pos += len;
		return 0;
	}
	for (uint64_t i = 0; i < len; i++) {
		uint64_t c;

		if (enc == 4)
			EMBER_FORWARD_IF_ERROR(jfr_varlong(x, pos, end, &c));
		else
			c = *(*pos)++;
		EMBER_FORWARD_IF_ERROR(put_utf8(x, c));
	}
	return 0;
}

int jfr_string(struct jfr_dec *x, const uint8_t **pos, const uint8_t *end, struct jfr_str *out)
{
	const uint8_t *p = *pos;
	struct jfr_str s = { .set = true };
	uint64_t len, v;
	int err;

	EMBER_FAIL_IF(p >= end, x->d, -EINVAL,
		      "jfr: chunk %zu offset %zu: a string runs past the end of its event",
		      x->chunk, jfr_off(x, p));
	switch (*p++) {
	case 0: /* null */
	case 1: /* "" */
		s.set = false;
		break;
	case 2: /* a java.lang.String constant */
		EMBER_FORWARD_IF_ERROR(jfr_varlong(x, &p, end, &v));
		s.ref = (int64_t)v;
		s.is_ref = true;
		break;
	case 3:
	case 4:
	case 5:
		EMBER_FORWARD_IF_ERROR(jfr_varlong(x, &p, end, &len));
		EMBER_FAIL_IF(len > (uint64_t)(end - p), x->d, -EINVAL,
			      "jfr: chunk %zu offset %zu: a string of %llu bytes, past the end of "
			      "its event",
			      x->chunk, jfr_off(x, *pos), (unsigned long long)len);
		EMBER_FAIL_IF(len > x->lim.max_string_bytes, x->d, -E2BIG,
			      "jfr: chunk %zu offset %zu: a string of %llu bytes, past the limit "
			      "of %zu",
			      x->chunk, jfr_off(x, *pos), (unsigned long long)len,
			      x->lim.max_string_bytes);
		EMBER_FAIL_IF(x->text.n > UINT32_MAX - 3 * len - 1, x->d, -E2BIG,
			      "jfr: chunk %zu: its strings pass 4 GiB", x->chunk);
		s.off = (uint32_t)x->text.n;
		EMBER_FORWARD_IF_ERROR(string_body(x, &p, end, (*pos)[0], len));
		s.len = (uint32_t)(x->text.n - s.off);
		if (JFR_PUSH(x, &x->text, '\0', err))
			return err;
		break;
	default:
		return EMBER_FAIL(x->d, -EINVAL,
				  "jfr: chunk %zu offset %zu: string encoding %u is none of 0-5",
				  x->chunk, jfr_off(x, *pos), (*pos)[0]);
	}
	*pos = p;
	*out = s;
	return 0;
}

void jfr_chunk_reset(struct jfr_dec *x)
{
	x->text.n = 0;
	x->classes.n = 0;
	x->fields.n = 0;
	for (size_t i = 0; i < JFR_ROLE_COUNT; i++)
		x->pools[i].n = 0;
	x->frames.n = 0;
	x->events.n = 0;
}

void jfr_dec_release(struct jfr_dec *x)
{
	free(x->text.v);
	free(x->classes.v);
	free(x->fields.v);
	for (size_t i = 0; i < JFR_ROLE_COUNT; i++)
		free(x->pools[i].v);
	free(x->frames.v);
	free(x->events.v);
	jfr_builders_free(x);
	free(x->locs.v);
	jfr_labels_free(x->labels);
}
