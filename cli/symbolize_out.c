/*
 * symbolize_out.c - the output buffer of `ember symbolize`: a fixed 32 KB buffer
 * written to a file descriptor with write(2) when full or flushed.  stdio
 * costs more than the lookup itself for short answers (its per-call
 * locking, vtable dispatch and format parsing); this is a memcpy.  A
 * write error is sticky and reported by cli_out_flush().
 */
#include "cli.h"
#include "common.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

void cli_out_init(struct cli_out *o, int fd)
{
	o->fd = fd;
	o->len = 0;
	o->err = 0;
}

int cli_out_flush(struct cli_out *o)
{
	if (!o->err)
		o->err = ember_write_all(o->fd, o->buf, o->len);
	o->len = 0;
	return o->err;
}

void cli_out_write(struct cli_out *o, const char *s, size_t n)
{
	while (n) {
		size_t room = sizeof(o->buf) - o->len, k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			cli_out_flush(o);
	}
}

static unsigned digits10(uint64_t v)
{
	unsigned n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Decimal digits straight into the buffer (line numbers, columns). */
void cli_out_u64(struct cli_out *o, uint64_t v)
{
	unsigned n;
	char *p;

	if (sizeof(o->buf) - o->len < 20)
		cli_out_flush(o);
	if (v < 10) { /* most columns */
		o->buf[o->len++] = (char)('0' + v);
		return;
	}
	n = digits10(v);
	p = o->buf + o->len + n;
	o->len += n;
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10));
}

void cli_out_hex(struct cli_out *o, uint64_t v)
{
	char buf[19] = "0x";

	cli_out_write(o, buf, 2 + ember_hex_u64(v, buf + 2));
}
