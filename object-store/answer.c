/*
 * answer.c - the headers of an S3 answer that the operations read: ETag
 * (quotes removed), Content-Length, Content-Range's total (the whole
 * object's size under a range), x-amz-meta-sha256 and Last-Modified.
 * Header lines come from the network: every value is cut to its field.
 */
#include "objstore_internal.h"

#include <string.h>

static void copy_value(char *dst, size_t size, const char *v, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

static uint64_t parse_u64_prefix(const char *v, size_t n, const char **end)
{
	uint64_t x = 0;
	size_t i = 0;

	for (; i < n && v[i] >= '0' && v[i] <= '9' && x < UINT64_MAX / 10; i++)
		x = x * 10 + (uint64_t)(v[i] - '0');
	*end = v + i;
	return x;
}

/* Content-Range: bytes FIRST-LAST/TOTAL. */
static void parse_content_range(struct os_request *r, const char *v, size_t n)
{
	const char *slash = memchr(v, '/', n), *end;

	if (!slash || slash + 1 >= v + n || slash[1] == '*')
		return;
	r->range_total = parse_u64_prefix(slash + 1, (size_t)(v + n - slash - 1), &end);
	r->has_range_total = end == v + n;
}

void os_answer_header(struct os_request *r, const char *line, size_t n)
{
	const char *v, *end;
	size_t vn;
	char tmp[64];

	if (httpc_header_is(line, n, "ETag", &v, &vn)) {
		if (vn >= 2 && v[0] == '"' && v[vn - 1] == '"')
			v++, vn -= 2;
		copy_value(r->etag, sizeof(r->etag), v, vn);
	} else if (httpc_header_is(line, n, "Content-Length", &v, &vn)) {
		r->content_length = parse_u64_prefix(v, vn, &end);
		r->has_content_length = end == v + vn && vn > 0;
	} else if (httpc_header_is(line, n, "Content-Range", &v, &vn)) {
		parse_content_range(r, v, vn);
	} else if (httpc_header_is(line, n, "x-amz-meta-sha256", &v, &vn)) {
		copy_value(r->meta_sha256, sizeof(r->meta_sha256), v, vn);
	} else if (httpc_header_is(line, n, "Last-Modified", &v, &vn)) {
		copy_value(tmp, sizeof(tmp), v, vn);
		r->last_modified = httpc_date(tmp);
	}
}

