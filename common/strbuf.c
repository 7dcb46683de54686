/*
 * strbuf.c - bounded growable byte buffer (see struct ember_buf in
 * common.h).  Modelled on curl's dynbuf: every buffer has a cap set at
 * init, so input from outside can never grow it without limit.
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ember_buf_init(struct ember_buf *b, size_t cap)
{
	ember_buf_init_account(b, cap, NULL);
}

void ember_buf_init_account(struct ember_buf *b, size_t cap, struct ember_mem_account *acct)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap;
	b->acct = acct;
}

void ember_buf_release(struct ember_buf *b)
{
	if (!b)
		return;
	free(b->data);
	ember_buf_init_account(b, b->cap, b->acct);
}

static int buf_reserve(struct ember_buf *b, size_t extra)
{
	size_t need, nalloc;
	char *p;

	if (extra > b->cap || b->len > b->cap - extra)
		return -E2BIG;
	need = b->len + extra + 1;
	if (need <= b->alloc)
		return 0;
	nalloc = b->alloc ? b->alloc : 64;
	while (nalloc < need)
		nalloc *= 2;
	if (nalloc > b->cap + 1)
		nalloc = b->cap + 1; /* doubling never allocates past the cap */
	p = b->acct ? ember_mem_realloc(b->acct, b->data, nalloc) : realloc(b->data, nalloc);
	if (!p)
		return b->acct && b->acct->err ? b->acct->err : -ENOMEM;
	b->data = p;
	b->alloc = nalloc;
	return 0;
}

int ember_buf_reserve(struct ember_buf *b, size_t extra)
{
	return buf_reserve(b, extra);
}

int ember_buf_append_grow(struct ember_buf *b, const void *data, size_t len)
{
	int err = buf_reserve(b, len);

	if (err)
		return err;
	memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int ember_buf_appendf(struct ember_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	err = buf_reserve(b, (size_t)n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}
