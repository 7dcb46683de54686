/*
 * common.h - the bottom layer of Ember: logging, bounded buffers and
 * build-ID helpers shared by every component.
 *
 * Nothing here knows about DWARF, HTTP or storage.  Library code never
 * prints: it reports through ember_log(), whose handler the program (or a
 * test) installs.  There is no global mutable state besides that one
 * handler pointer, which main() sets before starting any thread.
 */
#ifndef EMBER_COMMON_H
#define EMBER_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>

/* TESTABLE: file-local in normal builds, exported in test builds. */
#ifdef EMBER_TESTABLE_EXPORT
#define TESTABLE
#else
#define TESTABLE static
#endif

/* ---- logging ---------------------------------------------------------- */

enum ember_log_level {
	EMBER_LOG_ERROR = 0,
	EMBER_LOG_WARN = 1,
	EMBER_LOG_INFO = 2,
	EMBER_LOG_DEBUG = 3,
};

typedef void (*ember_log_fn)(enum ember_log_level level, const char *msg,
			     void *ctx);

/*
 * Install the process-wide log handler.  NULL restores the default, which
 * writes warnings and errors to stderr.  Call from main() only, before any
 * thread starts.
 */
void ember_log_set_handler(ember_log_fn fn, void *ctx);
void ember_log_set_level(enum ember_log_level max_level);

/* Format and hand a message to the handler.  Messages follow the
 * "component: 'thing': reason" shape of STYLE.md. */
void ember_log(enum ember_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_warn(...) ember_log(EMBER_LOG_WARN, __VA_ARGS__)
#define pr_info(...) ember_log(EMBER_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) ember_log(EMBER_LOG_DEBUG, __VA_ARGS__)

/* ---- bounded growable buffer ------------------------------------------ */

/*
 * struct ember_buf - a byte buffer with a hard cap fixed at init.
 * Invariants: len <= alloc <= cap (once allocated); data is NUL-terminated
 * when alloc > 0 (the terminator is not counted in len).  Appending past
 * cap fails with -E2BIG and leaves the buffer as it was.
 */
struct ember_buf {
	char *data;
	size_t len;
	size_t alloc;
	size_t cap;
};

void ember_buf_init(struct ember_buf *b, size_t cap);
void ember_buf_release(struct ember_buf *b);
/* Make room for extra more bytes now (one allocation instead of a series
 * of doublings): 0, -E2BIG past the cap, -ENOMEM. */
int ember_buf_reserve(struct ember_buf *b, size_t extra);
/* Growing the allocation (or -E2BIG / -ENOMEM): ember_buf_append's slow
 * path. */
int ember_buf_append_grow(struct ember_buf *b, const void *data, size_t len);
/* Append len bytes.  Inline: the JSON writers append a few bytes at a
 * time, and the room is there nearly always. */
static inline int ember_buf_append(struct ember_buf *b, const void *data, size_t len)
{
	if (b->alloc - b->len > len) { /* room for the bytes and the NUL */
		memcpy(b->data + b->len, data, len);
		b->len += len;
		b->data[b->len] = '\0';
		return 0;
	}
	return ember_buf_append_grow(b, data, len);
}
int ember_buf_appendf(struct ember_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int ember_buf_putc(struct ember_buf *b, char c)
{
	return ember_buf_append(b, &c, 1);
}
/* Drop the contents, keep the allocation. */
static inline void ember_buf_reset(struct ember_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

/* ---- diagnostics of rejected input ------------------------------------ */

/* Where a parser explains a rejection: the caller's buffer (may be NULL);
 * the first failure wins. */
struct ember_diag {
	char *msg;
	size_t size;
	bool set;
};

/*
 * Record the first failure: "fmt..." and, when where ("file:line") is
 * given, " [where]" cut to start at component (e.g. "wire/"); log it at
 * debug level.  Returns err, so a parser can `return ember_diag_vfail(...)`.
 */
int ember_diag_vfail(struct ember_diag *d, int err, const char *component,
		     const char *where, const char *fmt, va_list ap);

/* ---- build IDs --------------------------------------------------------- */

#define EMBER_BUILD_ID_MAX 64 /* bytes; GNU build IDs are 20 (sha1) */

/*
 * Lowercase hex of a build ID into out (which must hold 2*len+1 bytes).
 * Returns 0, or -E2BIG when len exceeds EMBER_BUILD_ID_MAX.
 */
int ember_build_id_to_hex(const uint8_t *id, size_t len, char *out);

/*
 * Parse lowercase hex (even length, 2..2*EMBER_BUILD_ID_MAX digits) into
 * out.  Returns the number of bytes, or -EINVAL with nothing written to
 * *len semantics: out is only meaningful on success.
 */
int ember_build_id_from_hex(const char *hex, uint8_t *out, size_t out_size);

#endif /* EMBER_COMMON_H */
