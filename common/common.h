/*
 * common.h - the bottom layer of Ember, shared by every component:
 * logging, the kinds of errors, the guard macros of parsers, options
 * structs' size checks, growable arrays, bounded buffers, the hash
 * functions and hash set, hex, JSON string escaping, build-ID helpers,
 * bounded byte cursors and LEB128 (cursor.c), the bounded cache of local
 * files (file_cache.c), memory budgets, errors remembered by key, the
 * clocks and libraries loaded with dlopen.
 *
 * Nothing here knows about ELF, DWARF, HTTP or either store (the bounded
 * cache of local files counts files, whatever they hold).  Library code
 * never prints: it reports through ember_log(), whose handler and level
 * the program (or a test) installs.  There is no global mutable state
 * besides that handler and level, which main() sets before starting any
 * thread.
 */
#ifndef EMBER_COMMON_H
#define EMBER_COMMON_H

#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>
#include <stdlib.h>

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
 * writes each message as one line to stderr (info and debug prefixed with
 * their level).  Call from main() only, before any thread starts.
 */
void ember_log_set_handler(ember_log_fn fn, void *ctx);
/* Messages above max_level are dropped before formatting (default: warn).
 * From main() only, like the handler. */
void ember_log_set_level(enum ember_log_level max_level);
enum ember_log_level ember_log_get_level(void);
bool ember_log_enabled(enum ember_log_level level);
/* "error", "warn" (or "warning"), "info", "debug", any case: 0 or -EINVAL. */
int ember_log_level_parse(const char *s, enum ember_log_level *out);
const char *ember_log_level_name(enum ember_log_level level);

/* Format and hand a message to the handler.  Messages follow the
 * "component: 'thing': reason" shape of STYLE.md. */
void ember_log(enum ember_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...) ember_log(EMBER_LOG_ERROR, __VA_ARGS__)
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
struct ember_mem_account;

struct ember_buf {
	char *data;
	size_t len;
	size_t alloc;
	size_t cap;
	struct ember_mem_account *acct; /* growth taken from it; NULL: none */
};

void ember_buf_init(struct ember_buf *b, size_t cap);
/* The same, growing through acct (borrowed: it must outlive the buffer's
 * allocation): past its share or budget an append fails with its error
 * (-E2BIG, -EAGAIN) and leaves the buffer as it was. */
void ember_buf_init_account(struct ember_buf *b, size_t cap, struct ember_mem_account *acct);
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

/* ---- kinds of errors (errkind.c) --------------------------------------- */

/*
 * What an error means to whoever asked, whatever its message says: the
 * HTTP layer chooses a status from the kind alone (api/'s one table;
 * docs/http-api.md), so rewording a message never changes an answer.
 * A component whose errors reach an answer offers `x_error_kind(int err)`
 * for its negative errors; errnos it does not give a meaning of its own
 * go through ember_errkind_of_errno().
 */
enum ember_errkind {
	EMBER_ERRK_UNAVAILABLE = 0, /* we failed (I/O, memory): try again later */
	EMBER_ERRK_MALFORMED,	    /* the request does not parse or breaks a rule */
	EMBER_ERRK_OVER_LIMIT,	    /* the request is past one of its limits (labels, depth) */
	EMBER_ERRK_TOO_LARGE,	    /* the request is larger than we take (bytes, samples) */
	EMBER_ERRK_CAPACITY,	    /* a store-wide count is at its limit (series) */
	EMBER_ERRK_UNSUPPORTED,	    /* an encoding or format we do not read */
	EMBER_ERRK_UNPROCESSABLE,   /* a well-formed upload whose content is unusable */
	EMBER_ERRK_CONFLICT,	    /* the upload contradicts its request (build ID) */
	EMBER_ERRK_NOT_FOUND,	    /* the thing asked for does not exist */
	EMBER_ERRK_CORRUPT,	    /* stored data fails its checks */
	EMBER_ERRK_NO_SPACE,	    /* the disk refuses the bytes (full, quota) */
	EMBER_ERRK_BUSY,	    /* no memory or slot free now: ask again */
	EMBER_ERRK_INTERNAL,	    /* a failure of ours that asking again will not fix */
	EMBER_ERRK_TIMEOUT,	    /* the request's deadline passed before the answer */
	EMBER_ERRK_COUNT
};

/*
 * The kind of a negative errno a component returns for its own failure:
 * EMBER_ERRK_NO_SPACE for -ENOSPC, -EDQUOT and -EFBIG, EMBER_ERRK_BUSY for
 * -EAGAIN (a memory budget or slot taken by others now), else
 * EMBER_ERRK_UNAVAILABLE.  An errno never means "not found" or "bad
 * request" by itself (a store's -ENOENT is a file it lost, not a miss):
 * a component that means one says so in its x_error_kind().
 */
enum ember_errkind ember_errkind_of_errno(int err);

/* The kind's name ("too_large"), for logs and tests; "?" past the enum. */
const char *ember_errkind_name(enum ember_errkind kind);

/* ---- diagnostics of rejected input and parser guards (diag.c) ---------- */

/* Where a parser explains a rejection: the caller's buffer (may be NULL);
 * the first failure wins. */
struct ember_diag {
	char *msg;
	size_t size;
	bool set;
};

/* A diag over msg[0..size), emptied. */
static inline struct ember_diag ember_diag_make(char *msg, size_t size)
{
	struct ember_diag d = { .msg = msg, .size = size, .set = false };

	if (msg && size)
		msg[0] = '\0';
	return d;
}

/*
 * Record the first failure: "fmt..." and, in debug builds, when where
 * ("path/file.c:line") is given, " [folder/file.c:line]"; log it at debug
 * level as "folder: fmt... (folder/file.c:line)" in every build.  Returns
 * err, so a parser can `return ember_diag_fail(...)`.  d may be NULL.
 */
int ember_diag_vfail(struct ember_diag *d, int err, const char *where,
		     const char *fmt, va_list ap);
int ember_diag_fail(struct ember_diag *d, int err, const char *where,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define EMBER_STR_(x) #x
#define EMBER_STR(x) EMBER_STR_(x)
#define EMBER_WHERE __FILE__ ":" EMBER_STR(__LINE__)

/*
 * The guards every parser of outside input uses (zstd's RETURN_ERROR_IF
 * and FORWARD_IF_ERROR): fail saying which check failed, with the file
 * and line of the check in debug builds.  The value is err itself (a
 * constant at every use), so the compiler sees that a failed check never
 * returns 0.
 */
#define EMBER_FAIL(d, err, ...)                                              \
	(ember_diag_fail((d), (err), EMBER_WHERE, __VA_ARGS__), (err))
#define EMBER_FAIL_IF(cond, d, err, ...)                                     \
	do {                                                                 \
		if (cond)                                                    \
			return EMBER_FAIL((d), (err), __VA_ARGS__);          \
	} while (0)
#define EMBER_FORWARD_IF_ERROR(expr)                                         \
	do {                                                                 \
		int e_ = (expr);                                             \
		if (e_ < 0)                                                  \
			return e_;                                           \
	} while (0)

/* ---- options structs -------------------------------------------------- */

/*
 * An options struct opens with `size_t sz`, the sizeof of the caller's
 * struct (libbpf's *_opts): a caller built against an older, shorter
 * struct passes a smaller sz, and the fields past it are not read.
 * EMBER_OPTS_HAS: whether o (may be NULL) has field f; EMBER_OPTS_GET: f,
 * or def when o has not.  Plain C11: the offset is taken from the pointer
 * (no typeof), so o is evaluated more than once: pass a plain name.
 */
#define EMBER_OPTS_HAS(o, f)                                                 \
	((o) && (o)->sz >= (size_t)((const char *)&(o)->f - (const char *)(o)) + \
				   sizeof((o)->f))
#define EMBER_OPTS_GET(o, f, def) (EMBER_OPTS_HAS(o, f) ? (o)->f : (def))
/* f when o has it and it is not zero (zero asking for the default), else def. */
#define EMBER_OPTS_OR(o, f, def) (EMBER_OPTS_HAS(o, f) && (o)->f ? (o)->f : (def))

/* ---- growable arrays (vec.c) ------------------------------------------- */

/*
 * Room for need elements of elem bytes in *data (*alloc of them now):
 * capacity doubles, so pushes are amortized O(1).  0; -E2BIG when the
 * bytes would overflow size_t; -ENOMEM.  On failure *data is untouched.
 */
int ember_vec_reserve(void **data, size_t *alloc, size_t need, size_t elem);
/* Room for element len (one more than len elements). */
int ember_vec_grow(void **data, size_t *alloc, size_t len, size_t elem);
/* Append val to arr[0..len) of capacity alloc: 0, -E2BIG or -ENOMEM. */
#define EMBER_VEC_PUSH(arr, len, alloc, val)                                 \
	((len) >= (alloc) &&                                                 \
			 ember_vec_grow((void **)&(arr), &(alloc), (len),    \
					sizeof(*(arr)))                      \
		 ? -ENOMEM                                                   \
		 : ((arr)[(len)++] = (val), 0))

/*
 * The same as one struct: EMBER_VEC(T) is v[0..n) of capacity alloc,
 * zero-initialized empty; EMBER_VEC_DEF names one, for the vectors passed
 * between functions.  The macros grow by ember_vec_reserve (0, -E2BIG,
 * -ENOMEM; nothing changed on failure) and free the array.
 */
#define EMBER_VEC(T)                                                         \
	struct {                                                             \
		T *v;                                                        \
		size_t n, alloc;                                             \
	}
#define EMBER_VEC_DEF(name, T)                                               \
	struct name {                                                        \
		T *v;                                                        \
		size_t n, alloc;                                             \
	}
#define EMBER_VEC_RESERVE(vec, need)                                         \
	ember_vec_reserve((void **)&(vec)->v, &(vec)->alloc, (need), sizeof(*(vec)->v))
#define EMBER_VEC_APPEND(vec, val) EMBER_VEC_PUSH((vec)->v, (vec)->n, (vec)->alloc, (val))
#define EMBER_VEC_FREE(vec)                                                  \
	do {                                                                 \
		free((vec)->v);                                              \
		(vec)->v = NULL;                                             \
		(vec)->n = (vec)->alloc = 0;                                 \
	} while (0)

/* ---- bounded byte cursors, LEB128 (cursor.c) ---------------------------
 *
 * Readers of outside bytes, (pos, end, out): each reads one value at
 * *pos, never at or past end whatever a length says, and rejects
 * *pos > end; on success it advances *pos and writes *out, on failure it
 * leaves both alone.  Errors: -ENODATA when the bytes run out (truncated),
 * -ERANGE when a value does not fit (past 64 bits, or past a caller's
 * maximum), -EINVAL for a bad argument.  Neither is -ENOENT, which would
 * read as "absent".  Fixed-size values are little-endian.
 *
 * LEB128 (DWARF 5 section 7.6; protobuf's varints are the unsigned one):
 * 7 bits a byte, low first.  A value must fit 64 bits: the 10th byte may
 * carry only bit 63 (signed: and copies of it), later bytes only padding
 * (0x00/0x80 unsigned, the sign signed), which changes no value.  The
 * writers write the shortest form (at most EMBER_LEB_MAX bytes).  Zigzag
 * maps signed to unsigned as protobuf's sint64 does, so small negative
 * numbers stay short.
 */
#define EMBER_LEB_MAX 10

/* Whether n bytes are left at pos. */
static inline bool ember_cur_has(const uint8_t *pos, const uint8_t *end, uint64_t n)
{
	return pos <= end && (uint64_t)(end - pos) >= n;
}

static inline int ember_cur_skip(const uint8_t **pos, const uint8_t *end, uint64_t n)
{
	if (!ember_cur_has(*pos, end, n))
		return -ENODATA;
	*pos += n;
	return 0;
}

/* n bytes: *out points at them. */
static inline int ember_cur_bytes(const uint8_t **pos, const uint8_t *end, uint64_t n,
				  const uint8_t **out)
{
	if (!ember_cur_has(*pos, end, n))
		return -ENODATA;
	*out = *pos;
	*pos += n;
	return 0;
}

static inline int ember_cur_u8(const uint8_t **pos, const uint8_t *end, uint8_t *out)
{
	if (*pos >= end)
		return -ENODATA;
	*out = *(*pos)++;
	return 0;
}

/* An unsigned little-endian value of n bytes, 1 <= n <= 8 (-EINVAL
 * otherwise).  Inline, with the constant sizes a case each (no call to
 * memcpy): DWARF forms and CFI read most of their values here. */
static inline int ember_cur_uint(const uint8_t **pos, const uint8_t *end, unsigned n,
				 uint64_t *out)
{
	uint64_t v = 0;
	uint32_t v4;
	uint16_t v2;

	if (n - 1 > 7)
		return -EINVAL;
	if (!ember_cur_has(*pos, end, n))
		return -ENODATA;
	switch (n) {
	case 1:
		v = **pos;
		break;
	case 2:
		memcpy(&v2, *pos, 2);
		v = le16toh(v2);
		break;
	case 4:
		memcpy(&v4, *pos, 4);
		v = le32toh(v4);
		break;
	case 8:
		memcpy(&v, *pos, 8);
		v = le64toh(v);
		break;
	default:
		for (unsigned i = 0; i < n; i++)
			v |= (uint64_t)(*pos)[i] << (8 * i);
		break;
	}
	*pos += n;
	*out = v;
	return 0;
}

/* A LEB128 number of any length (the out-of-line path of the two below). */
int ember_cur_leb(const uint8_t **pos, const uint8_t *end, bool is_signed, uint64_t *out);

/* Unsigned LEB128; values below 2^14 inline. */
static inline int ember_cur_uleb(const uint8_t **pos, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pos;

	if (p < end && !(p[0] & 0x80)) {
		*out = p[0];
		*pos = p + 1;
		return 0;
	}
	if (p < end && end - p >= 2 && !(p[1] & 0x80)) {
		*out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		*pos = p + 2;
		return 0;
	}
	return ember_cur_leb(pos, end, false, out);
}

/* Signed LEB128 (two's complement, sign-extended from the last byte);
 * one byte inline. */
static inline int ember_cur_sleb(const uint8_t **pos, const uint8_t *end, int64_t *out)
{
	uint64_t v;
	int err;

	if (*pos < end && !(**pos & 0x80)) {
		uint8_t b = *(*pos)++;

		*out = (b & 0x40) ? (int64_t)b - 0x80 : (int64_t)b;
		return 0;
	}
	err = ember_cur_leb(pos, end, true, &v);
	if (!err)
		*out = (int64_t)v;
	return err;
}

/* An unsigned LEB128 of at most max: -ERANGE above it. */
int ember_cur_uleb_max(const uint8_t **pos, const uint8_t *end, uint64_t max, uint64_t *out);
/* Step over a LEB128 number without decoding it (only its end is
 * checked: a skipped value is no value, however long; libdw steps over
 * the same bytes). */
static inline int ember_cur_skip_leb(const uint8_t **pos, const uint8_t *end)
{
	const uint8_t *p = *pos;

	do {
		if (p >= end) /* also *pos > end */
			return -ENODATA;
	} while (*p++ & 0x80);
	*pos = p;
	return 0;
}

/* A NUL-terminated string that ends before end. */
static inline int ember_cur_cstr(const uint8_t **pos, const uint8_t *end, const char **out)
{
	const uint8_t *nul = *pos < end ? memchr(*pos, 0, (size_t)(end - *pos)) : NULL;

	if (!nul)
		return -ENODATA;
	*out = (const char *)*pos;
	*pos = nul + 1;
	return 0;
}

/* A length-prefixed run of bytes (unsigned LEB128 length, then that many
 * bytes; protobuf's length-delimited field): at most max bytes
 * (-ERANGE past it), *out pointing at them and *len their count. */
int ember_cur_lenbytes(const uint8_t **pos, const uint8_t *end, uint64_t max,
		       const uint8_t **out, size_t *len);

static inline uint64_t ember_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t ember_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* An unsigned LEB128 that was written zigzagged. */
static inline int ember_cur_zigzag(const uint8_t **pos, const uint8_t *end, int64_t *out)
{
	uint64_t v;
	int err = ember_cur_uleb(pos, end, &v);

	if (!err)
		*out = ember_unzigzag(v);
	return err;
}

/* Writers: v into out (EMBER_LEB_MAX bytes of room), returning the
 * bytes written; or appended to b (0, or ember_buf_append's error). */
size_t ember_uleb_encode(uint64_t v, uint8_t out[EMBER_LEB_MAX]);
size_t ember_sleb_encode(int64_t v, uint8_t out[EMBER_LEB_MAX]);
int ember_buf_put_uleb(struct ember_buf *b, uint64_t v);
int ember_buf_put_sleb(struct ember_buf *b, int64_t v);
static inline int ember_buf_put_zigzag(struct ember_buf *b, int64_t v)
{
	return ember_buf_put_uleb(b, ember_zigzag(v));
}
/* A length-prefixed run of bytes, as ember_cur_lenbytes reads it. */
int ember_buf_put_lenbytes(struct ember_buf *b, const void *data, size_t len);

/* qsort, qsort_r and memcpy that accept (NULL, 0), which libc's do not
 * promise (UBSan holds them to it): empty vectors are NULL. */
static inline void ember_qsort(void *base, size_t n, size_t size,
			       int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void ember_qsort_r(void *base, size_t n, size_t size,
				 int (*cmp)(const void *, const void *, void *), void *ctx)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, ctx);
}

static inline void ember_memcpy(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

/* ---- hashing (hash.c, checksum64.c, hset.c) ------------------------------------------ */

/* 128 random bits keying one table's hash (SipHash-1-3). */
struct ember_hash_key {
	uint64_t k0, k1;
};

/* Fill k from the kernel's random source: 0 or a negative errno. */
int ember_hash_key_init(struct ember_hash_key *k);
uint64_t ember_hash(const struct ember_hash_key *k, const void *data, size_t len);
uint64_t ember_hash_u64(const struct ember_hash_key *k, uint64_t v);

/* The 64-bit finalizer of MurmurHash3 (fmix64): every input bit moves
 * every output bit. */
static inline uint64_t ember_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* An unkeyed 64-bit hash of data[0..len), the same on every machine
 * (checksum64.c): the profile store's checksum of block sections and log
 * records, and the flame graph's colours.  Guards against damage, not
 * against an adversary. */
uint64_t ember_checksum64(const void *data, size_t len, uint64_t seed);

/*
 * A keyed hash of a few 32-bit words (ids read from a file: offsets,
 * rules), for tables whose every probe it is on: multiply-add-shift
 * (Dietzfelbinger, "Universal hashing and k-wise independent random
 * variables via integer arithmetic without primes", 1996): k[0] + k[1]
 * w[0] + ... in 64-bit arithmetic, random k, whose top bits are
 * 2-independent, so two distinct inputs share a slot with probability
 * 2^-bits for whoever does not know the key.  Pairwise independence is
 * not enough for linear probing, though: on keys in an arithmetic
 * progression (DIE offsets, say) the sums are one too, and their top bits
 * fall in long runs for some keys (Patrascu and Thorup, "On the
 * k-independence required by linear probing and minwise independence",
 * 2010; test_symbolizer__origin_cache_keyed failed 18 times in 300 on
 * such keys).  So the sum is mixed before its top bits are taken: an
 * xor-shift and a multiplication by the odd k[5], which break the
 * progression's lattice.  A multiplication a word and one at the end,
 * where SipHash costs some forty instructions: 15% of an unwind table's
 * compile, for a hash per row.  Strings: ember_hash.
 */
struct ember_words_key {
	uint64_t k[6];
};

/* Fill k from the kernel's random source: 0 or a negative errno. */
int ember_words_key_init(struct ember_words_key *k);

/* The top bits (1..32) of the hash of w[0..n), n <= 4. */
static inline uint32_t ember_hash_words(const struct ember_words_key *k,
					const uint32_t *w, unsigned n, unsigned bits)
{
	uint64_t h = k->k[0];

	for (unsigned i = 0; i < n; i++)
		h += k->k[i + 1] * w[i];
	h ^= h >> 29;
	h *= k->k[5] | 1;
	return (uint32_t)(h >> (64 - bits));
}

/*
 * struct ember_hset - a set of element indexes (< 2^32 - 2) that the
 * caller's elements are deduplicated with.  The caller hashes an element
 * with ember_hash(&set->key, ...) and says when an index's element equals
 * a key; the set keeps index + 1 and 32 bits of the hash per slot (0:
 * empty), at most half full.  Invariant: every element was inserted with
 * the hash of its bytes under key.
 */
struct ember_hset_slot {
	uint32_t idx1, tag;
};

struct ember_hset {
	struct ember_hset_slot *slots;
	size_t mask;	/* slots - 1, a power of two; 0 when unallocated */
	size_t used;
	struct ember_hash_key key;
};

typedef bool (*ember_hset_equal_fn)(const void *ctx, size_t idx, const void *key);

/* An empty set with a new random key: 0 or a negative errno. */
int ember_hset_init(struct ember_hset *s);
void ember_hset_release(struct ember_hset *s);
/* Empty the set, keeping its slots (and its key) for reuse. */
void ember_hset_clear(struct ember_hset *s);
/* The index of an element equal to key (whose hash is hash), or SIZE_MAX. */
size_t ember_hset_find(const struct ember_hset *s, uint64_t hash,
		       ember_hset_equal_fn equal, const void *ctx, const void *key);
/* Add index idx (not yet in the set) under hash: 0, -ENOMEM or -E2BIG. */
int ember_hset_insert(struct ember_hset *s, uint64_t hash, size_t idx);

/* ---- a bounded cache of local files (file_cache.c) --------------------
 *
 * struct ember_fcache - the files of up to EMBER_FCACHE_NS_MAX
 * directories (namespaces: the debuginfo store's blobs/ and derived/, the
 * profile blocks' cache), each counted with its size and its last use,
 * under one byte budget shared by all.  Past the budget the least
 * recently used files, except those used within the grace, are unlinked
 * until a tenth of it is free; a reader that has one open keeps reading
 * it (sendfile included), and its owner fetches it again when next asked.
 * Files are named by their path relative to their directory.  What a
 * directory holds when it is added is counted then, each file's mtime as
 * its last use, so a restart keeps the order (last use is the wall clock).
 * Thread-safe (one mutex); the caller owns the files' writing and
 * reading, the cache only their count and their removal.
 */
#define EMBER_FCACHE_NS_MAX 8
/* The grace the server gives: a file found by its path a moment ago is
 * still there when its caller opens it. */
#define EMBER_FCACHE_GRACE_MS 10000

enum ember_fcache_dir_flags {
	/* files are one level down, NAME = SUB/FILE (the store's xx/ fan-out) */
	EMBER_FCACHE_FANOUT = 1 << 0,
	/* files named *.tmp.* are a crashed writer's: removed when added */
	EMBER_FCACHE_DROP_TEMP = 1 << 1,
};

struct ember_fcache_stats {
	uint64_t bytes, files;
	uint64_t evictions; /* files removed for the budget */
};

struct ember_fcache;

/* An empty cache of max_bytes (0: no bound, only counted) sparing files
 * used in the last grace_ms: NULL when out of memory.  Free it after
 * every user of it. */
struct ember_fcache *ember_fcache_new(uint64_t max_bytes, unsigned grace_ms);
void ember_fcache_free(struct ember_fcache *c);
/* Add directory dir_fd (duplicated: the caller keeps its own) as a
 * namespace and count what it holds (flags: enum ember_fcache_dir_flags),
 * evicting if that is past the budget.  The namespace's number (>= 0), or
 * -EMFILE (EMBER_FCACHE_NS_MAX reached) or the errno of its descriptor. */
int ember_fcache_add_dir(struct ember_fcache *c, int dir_fd, unsigned flags);
/* File name of namespace ns was opened: its last use is now (a name not
 * counted is ignored). */
void ember_fcache_used(struct ember_fcache *c, int ns, const char *name);
/* File name of namespace ns was put in place with size bytes (again: its
 * new size counts); then evicts past the budget.  Without memory for the
 * entry the file stays uncounted until the directory is added again. */
void ember_fcache_written(struct ember_fcache *c, int ns, const char *name, uint64_t size);
/* Unlink file name of namespace ns (its owner deleted it) and uncount it. */
void ember_fcache_remove(struct ember_fcache *c, int ns, const char *name);
/* The counts of namespace ns, or of all for ns < 0 (zero for c NULL). */
void ember_fcache_stats(struct ember_fcache *c, int ns, struct ember_fcache_stats *out);

/* ---- hex and JSON strings (hex.c, json_escape.c) ----------------------- */

/* The value of hex digit c (either case), or -1. */
static inline int ember_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
/* Lowercase hex of data[0..len) into out (2 * len + 1 bytes, NUL-ended). */
void ember_hex_encode(const void *data, size_t len, char *out);
/* The len bytes whose hex (either case) is exactly hex (2 * len digits,
 * then its NUL) into out: 0, or -EINVAL (out partly written). */
int ember_hex_decode(const char *hex, void *out, size_t len);
/* Lowercase hex of v without a prefix or leading zeros; its length. */
size_t ember_hex_u64(uint64_t v, char out[17]);

/* A sink of bytes: 0 or a negative errno, which stops the writer. */
typedef int (*ember_write_fn)(void *ctx, const void *data, size_t len);

/*
 * The inside of a JSON string from s[0..n), any bytes: escapes as
 * LLVM's JSON writer writes them, and invalid UTF-8 replaced by U+FFFD,
 * so the output is always valid JSON.  Returns write's first error.
 */
int ember_json_escape(const char *s, size_t n, ember_write_fn write, void *ctx);
/* The whole string, quotes included, appended to b. */
int ember_json_str(struct ember_buf *b, const char *s, size_t n);
/*
 * XML 1.0 character data or an attribute value from s[0..n), any bytes
 * (xml_escape.c): the five specials as entities, and what XML cannot
 * carry (control characters, tab and LF included; invalid UTF-8; U+FFFE,
 * U+FFFF) as U+FFFD.  Returns write's first error.
 */
int ember_xml_escape(const char *s, size_t n, ember_write_fn write, void *ctx);
/* The same appended to b (no quotes). */
int ember_xml_str(struct ember_buf *b, const char *s, size_t n);
/* The bytes of the character at s[0..n) (1 for a byte that starts no
 * valid UTF-8 sequence), and in *ok whether XML 1.0 carries it as it is
 * (U+0020 up, no U+FFFE or U+FFFF, valid UTF-8). */
size_t ember_xml_char(const void *s, size_t n, bool *ok);
/* An ember_write_fn appending to the struct ember_buf ctx. */
int ember_buf_write(void *ctx, const void *data, size_t len);
/* Length of the valid multi-byte UTF-8 sequence at s[0..n) (2..4), or 0
 * (ASCII, a stray byte, overlong forms, surrogates, past U+10FFFF). */
size_t ember_utf8_len(const void *s, size_t n);

/*
 * A name from outside (an uploaded file's name) as one safe to keep, put
 * in a header and in JSON: printable ASCII and valid UTF-8 kept, every
 * other byte (control characters, invalid UTF-8) as "%XX"; a safe name
 * comes out unchanged.  Into out (size bytes, NUL-terminated): its
 * length, or -ENAMETOOLONG when it does not fit (name.c).
 */
int ember_name_escape(const char *in, char *out, size_t size);
/* Whether name is a valid series label name, [a-zA-Z_][a-zA-Z0-9_.]*
 * (the profile store's rule, which the agent checks its --label by). */
bool ember_label_name_valid(const char *name);
/* The longest tenant ID (X-Scope-OrgID; Mimir's rule). */
#define EMBER_TENANT_MAX 150
/* Whether id may name a tenant: 1 to EMBER_TENANT_MAX characters of
 * [a-zA-Z0-9!-_.*'()], not "." or ".." (Mimir's rule: no '/', so a
 * tenant's directory cannot be outside its parent).  The server's rule
 * for X-Scope-OrgID, which the agent checks its --tenant by. */
bool ember_tenant_valid(const char *id);

/*
 * A URL as it may be shown (logs, metrics, labels, messages): without
 * its "user:password@" and with the value of every query parameter whose
 * name says it is a secret (token, key, secret, passw, pwd, auth, sig,
 * credential, session, in any case) replaced by REDACTED.  Into out
 * (size bytes, NUL-terminated): its length, or -ENAMETOOLONG with out ""
 * when it does not fit (url_shown.c).
 */
int ember_url_shown(const char *url, char *out, size_t size);

/* ---- configuration files (config_lines.c) ------------------------------ */

/* The lines text[0, len) holds (1 + its newlines): at most that many
 * entries. */
size_t ember_config_line_count(const char *text, size_t len);
/* Each line of text (NUL-terminated; cut into lines in place) whose
 * first byte past blanks is neither the end nor '#', from that byte, with
 * its number (1 the first): fn(arg, no, line), stopping at fn's first
 * non-zero return, which is returned; else 0. */
int ember_config_lines(char *text, int (*fn)(void *arg, unsigned no, char *line), void *arg);
/* The file at path read whole into *text (caller frees; NUL-terminated)
 * and *len, which is max + 1 when the file holds more than max bytes (the
 * caller refuses it); 0, or a negative errno with why saying
 * "cannot read 'PATH': REASON". */
int ember_config_read(const char *path, size_t max, char **text, size_t *len, char *why,
		      size_t why_size);

/* ---- token files and tokens (secret.c) --------------------------------- */

#define EMBER_TOKEN_MIN 16	/* bytes: a guessable token is no token */
#define EMBER_TOKEN_MAX 128	/* a token's bytes and its NUL */

/* A token file (fd, opened from path) is a secret: refused (-EPERM,
 * -EINVAL, said) when others may read or write it, it is not a regular
 * file, or it belongs to someone else (as ssh refuses a private key). */
int ember_secret_check(int fd, const char *path);
/* A token's n bytes from path: printable ASCII without spaces,
 * EMBER_TOKEN_MIN to size - 1 of them; -EINVAL (said) otherwise. */
int ember_token_check(const char *path, const char *tok, size_t n, size_t size);
/* Whether given[0..len) is token (non-empty), in the same time wherever
 * they differ. */
bool ember_token_equal(const char *given, size_t len, const char *token);

/* ---- memory budgets (mem_budget.c) ---------------------------------------- */

/*
 * struct ember_mem_budget - the bytes a process may hand out to its
 * requests at once, counted before they are allocated.  Thread-safe
 * (atomic); a take that does not fit fails at once, never waits.
 * Invariant: used <= limit.
 */
struct ember_mem_budget {
	_Atomic uint64_t used;
	uint64_t limit;
};

void ember_mem_budget_init(struct ember_mem_budget *b, uint64_t limit);
/* Take n bytes: 0, or -EAGAIN when the budget has not that much free. */
int ember_mem_budget_take(struct ember_mem_budget *b, uint64_t n);
void ember_mem_budget_give(struct ember_mem_budget *b, uint64_t n);
uint64_t ember_mem_budget_used(const struct ember_mem_budget *b);

/*
 * struct ember_mem_account - what one request holds of a budget (NULL:
 * none, only the cap counts), at most cap bytes.  One thread at a time.
 * A take past the cap fails with -E2BIG, one the budget cannot give with
 * -EAGAIN; the first failure sticks (every later take returns it), so a
 * request that ran out stops cleanly.  Frees are not credited: used only
 * grows until ember_mem_account_release() gives it all back.
 */
struct ember_mem_account {
	struct ember_mem_budget *budget;
	uint64_t used, cap;
	int err;
};

void ember_mem_account_init(struct ember_mem_account *a, struct ember_mem_budget *b,
			    uint64_t cap);
/* Take n bytes for the request (a NULL account takes nothing): 0, -E2BIG
 * or -EAGAIN. */
int ember_mem_account_take(struct ember_mem_account *a, uint64_t n);
/* Count n bytes already allocated (by a library that cannot be refused
 * memory): always counted, in the budget too; past the share or the
 * budget the account's error is set (and returned), for its owner to
 * stop at the next step. */
int ember_mem_account_charge(struct ember_mem_account *a, uint64_t n);
/* Give back everything the account took; it can be used again. */
void ember_mem_account_release(struct ember_mem_account *a);
/* malloc / realloc once the account took the bytes (realloc: the growth
 * over the block's usable size); NULL when it could not, or malloc failed.
 * The memory is freed with free(). */
void *ember_mem_alloc(struct ember_mem_account *a, size_t n);
void *ember_mem_realloc(struct ember_mem_account *a, void *p, size_t n);

/* ---- durable directory entries (sync_dir.c) ------------------------------- */

/* fsync the directory path (relative to dirfd, or AT_FDCWD): 0 or -errno. */
int ember_sync_dir(int dirfd, const char *path);
/* fsync the directory holding path, so that its entry for path is durable. */
int ember_sync_parent(const char *path);

/* ---- writing a whole buffer (write_all.c) -------------------------------- */

/* write(2) all len bytes of data to fd, again after EINTR and short
 * writes: 0, or the first failure's negative errno (-EIO when write
 * returns 0). */
int ember_write_all(int fd, const void *data, size_t len);

/* ---- errors remembered by key (err_cache.c) ------------------------------ */

/*
 * struct ember_errcache - keys remembered for ttl seconds, each with the
 * (negative) error it failed with; at most max_entries live ones (new
 * keys are then not remembered: memory stays bounded however many keys
 * clients invent).  Keyed by ember_hash.  Not thread-safe: the caller
 * holds its lock.
 */
struct ember_errcache;

struct ember_errcache *ember_errcache_new(unsigned ttl_s, size_t max_entries);
void ember_errcache_free(struct ember_errcache *c); /* NULL is fine */
/* Remember key with err (< 0) for ttl seconds from now (a key already
 * there takes the new error and time). */
void ember_errcache_put(struct ember_errcache *c, const char *key, int err);
/* Whether key was put less than ttl seconds ago: then *err is its error. */
bool ember_errcache_get(struct ember_errcache *c, const char *key, int *err);
/* The same with a message kept beside the error (copied; "" for none). */
void ember_errcache_put_msg(struct ember_errcache *c, const char *key, int err,
			    const char *msg);
bool ember_errcache_get_msg(struct ember_errcache *c, const char *key, int *err, char *msg,
			    size_t size);
/* The bucket key falls in: keyed per cache, so the same keys spread
 * differently in every cache and cannot be aimed at one chain. */
size_t ember_errcache_bucket(const struct ember_errcache *c, const char *key);

/* ---- time (clock.c) ------------------------------------------------------ */

/* CLOCK_MONOTONIC in milliseconds: for deadlines and expiry times. */
uint64_t ember_monotonic_ms(void);
/* CLOCK_MONOTONIC in nanoseconds: durations, and the times BPF's
 * bpf_ktime_get_ns() is compared with (the same clock). */
uint64_t ember_monotonic_ns(void);
/* CLOCK_REALTIME in nanoseconds since the epoch: the time a profile covers. */
uint64_t ember_realtime_ns(void);

/* ---- libraries loaded when first needed (dl.c) --------------------------
 *
 * A caller lists the functions it calls in an X-macro and gets a struct of
 * typed function pointers; ember_dl_load loads the library and fills every
 * pointer, or fails whole.  For libraries whose start-up cost (their own
 * dependencies' page faults) a run that never needs them should not pay.
 */

/* One function to resolve: its symbol, and the pointer that receives it. */
struct ember_dl_fn {
	const char *name;
	void **slot;
};

/* dlopen soname (RTLD_NOW | RTLD_LOCAL) and fill fns[0..n): its handle, or
 * NULL with the reason logged ("WHO: ...") and the library closed. */
void *ember_dl_load(const char *soname, const char *who, const struct ember_dl_fn *fns,
		    size_t n);

/* ---- build IDs --------------------------------------------------------- */

#define EMBER_BUILD_ID_MAX 64 /* bytes; GNU build IDs are 20 (sha1) */

/*
 * Lowercase hex of a build ID into out (which must hold 2*len+1 bytes).
 * Returns 0, or -E2BIG when len exceeds EMBER_BUILD_ID_MAX.
 */
int ember_build_id_to_hex(const uint8_t *id, size_t len, char *out);
/* A build ID as pprof and clients write it (hex, any case) as lowercase
 * hex into out: false unless s is an even number (>= 2) of hex digits that
 * fits out (size bytes, NUL included). */
bool ember_build_id_hex_normalize(const char *s, char *out, size_t size);

#endif /* EMBER_COMMON_H */
