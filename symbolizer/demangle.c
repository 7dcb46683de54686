/*
 * demangle.c - names demangled through libiberty (the GNU demangler
 * binutils uses: C++ Itanium ABI, Rust legacy and v0), bounded, and
 * cached per name in the index for lookups on any number of threads.
 *
 * The bounds, because a name comes from a file anybody may have written:
 *   - a mangled name longer than SYM_DEMANGLE_MAX_NAME is not demangled
 *     (libiberty's C++ parser, whose arrays live on the stack, refuses
 *     names past 1024 bytes itself; its Rust one has no such limit);
 *   - the demangled text may not grow past 64 bytes per byte of the name
 *     plus 256, nor past SYM_DEMANGLE_MAX_TEXT: substitutions let a
 *     200-byte name stand for a gigabyte of text (each template argument
 *     twice the one before), which libiberty would print in full.  The
 *     text is written through the callback interfaces
 *     (cplus_demangle_v3_callback, rust_demangle_callback), which
 *     allocate nothing, so the callback can stop the printing with
 *     longjmp as soon as the text is too long: the work is bounded by
 *     the cap, not by what the name would expand to;
 *   - the cached texts of one index hold at most demangle_budget() bytes;
 *     past it, names stay raw.
 * A name past a bound is returned raw, as a name libiberty cannot read
 * is.  Recursion stays under libiberty's own limit
 * (DEMANGLE_RECURSION_LIMIT: DMGL_NO_RECURSE_LIMIT is never passed).
 *
 * Which demangler: cplus_demangle()'s order in its automatic style, Rust
 * first (legacy Rust names are also valid C++ ones), then C++.
 */
#include "sym_internal.h"

#include <libiberty/demangle.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* The text so far; `full` is where the callback jumps when it may not
 * grow (too long, or no memory). */
struct sink {
	char *buf;
	size_t len, alloc, cap;
	jmp_buf full;
};

static void sink_put(const char *s, size_t n, void *arg)
{
	struct sink *k = arg;
	size_t na;
	char *p;

	if (n > k->cap - k->len)
		longjmp(k->full, 1);
	if (k->len + n + 1 > k->alloc) {
		na = k->alloc ? k->alloc : 256;
		while (na < k->len + n + 1)
			na *= 2;
		p = realloc(k->buf, na);
		if (!p)
			longjmp(k->full, 1);
		k->buf = p;
		k->alloc = na;
	}
	memcpy(k->buf + k->len, s, n);
	k->len += n;
	k->buf[k->len] = '\0';
}

typedef int (*demangler_fn)(const char *mangled, int options,
			    demangle_callbackref callback, void *opaque);

/* One demangler into k: whether it read the name and the text fit. */
static bool sink_run(struct sink *k, demangler_fn fn, const char *name, int options)
{
	k->len = 0;
	if (setjmp(k->full))
		return false; /* stopped by sink_put: nothing of libiberty's to free */
	return fn(name, options, sink_put, k) != 0 && k->buf;
}

size_t sym_demangle_cap(size_t len)
{
	size_t cap = 256 + 64 * len;

	return cap < SYM_DEMANGLE_MAX_TEXT ? cap : SYM_DEMANGLE_MAX_TEXT;
}

char *sym_demangle(const char *name, bool params, size_t *work)
{
	int options = DMGL_ANSI | (params ? DMGL_PARAMS : 0);
	size_t len = strnlen(name, SYM_DEMANGLE_MAX_NAME + 1);
	struct sink k = { .cap = sym_demangle_cap(len) };
	bool ok;

	if (work)
		*work = 0;
	if (len > SYM_DEMANGLE_MAX_NAME)
		return NULL;
	ok = sink_run(&k, rust_demangle_callback, name, options);
	if (work)
		*work += k.len;
	if (!ok) {
		ok = sink_run(&k, cplus_demangle_v3_callback, name, options);
		if (work)
			*work += k.len;
	}
	if (!ok) {
		free(k.buf);
		return NULL;
	}
	return k.buf;
}

/* Bytes the demangled texts of idx may hold: 64 MiB, and 16 times its
 * strings (each name has two texts, with and without parameters). */
static size_t demangle_budget(const struct sym_index *idx)
{
	return ((size_t)64 << 20) + 16 * idx->strtab.len;
}

static bool is_mangled(const char *s)
{
	return (s[0] == '_' && (s[1] == 'Z' || s[1] == 'R')) ||
	       (s[0] == '_' && s[1] == '_' && s[2] == 'Z');
}

/* Charge n bytes of text to idx's budget: false (nothing charged) past
 * it.  A negative n gives bytes back. */
static bool demangle_charge(const struct sym_index *idx, ptrdiff_t n)
{
	/* the index is immutable but for its demangling cache: this is it */
	_Atomic size_t *used = &((struct sym_index *)idx)->demangled_bytes;
	size_t was = atomic_fetch_add_explicit(used, (size_t)n, memory_order_relaxed);

	if (n <= 0 || was + (size_t)n <= demangle_budget(idx))
		return true;
	atomic_fetch_sub_explicit(used, (size_t)n, memory_order_relaxed);
	return false;
}

const char *sym_frame_demangled(const struct sym_index *idx,
				const struct sym_frame *frame, bool params)
{
	_Atomic(char *) *slot;
	char *d, *expected = NULL;

	if (!frame->name || frame->name_id == SYM_NONE ||
	    frame->name_id >= idx->nnames || !is_mangled(frame->name))
		return frame->name;
	slot = &idx->demangled[2 * (size_t)frame->name_id + (params ? 1 : 0)];
	d = atomic_load_explicit(slot, memory_order_acquire);
	if (d)
		return d;
	d = sym_demangle(frame->name, params, NULL);
	if (d && !demangle_charge(idx, (ptrdiff_t)strlen(d) + 1)) {
		free(d);
		d = NULL;
	}
	if (!d)
		d = (char *)frame->name; /* not demangleable: keep it raw */
	if (!atomic_compare_exchange_strong(slot, &expected, d)) {
		if (d != frame->name) { /* another thread's text won */
			demangle_charge(idx, -(ptrdiff_t)strlen(d) - 1);
			free(d);
		}
		d = expected;
	}
	return d;
}
