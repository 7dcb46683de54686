/*
 * selector_regex.cc - the regexes of label selectors (selector.c) compiled
 * and matched by RE2 (https://github.com/google/re2, re2/re2.h), behind
 * the C interface of pstore_regex.h: the one C++ file of the store.
 *
 * RE2 was chosen over libc's regcomp because its cost is bounded: it
 * matches in time linear in the text, and RE2::Options::set_max_mem caps
 * what a compiled regex holds (programs and DFA caches), where one
 * 45-byte POSIX regex took glibc's regcomp 1.1 GB (docs/profile-store.md,
 * "Selectors").  It is also the dialect of Prometheus' and Pyroscope's
 * selectors (Go's regexp is RE2's syntax).  std::bad_alloc while compiling
 * becomes -ENOMEM; a match allocates only within the max_mem given when
 * its regex was compiled (RE2 falls back from its DFA to the NFA when
 * that budget is spent), so only a process out of memory could throw
 * there, as a malloc would fail in C.
 */
#include "pstore_regex.h"

#include <errno.h>
#include <stdio.h>

#include <new>

#include <re2/re2.h>

struct pstore_regex {
	re2::RE2 re;

	pstore_regex(const re2::StringPiece &p, const re2::RE2::Options &o) : re(p, o) {}
};

static re2::RE2::Options regex_options(int64_t max_mem)
{
	re2::RE2::Options o;

	o.set_log_errors(false); /* a bad pattern is the caller's answer, not a log line */
	o.set_max_mem(max_mem);
	o.set_dot_nl(true); /* Prometheus compiles "^(?s:" + re + ")$" */
	return o;
}

static int regex_error(const re2::RE2 &re)
{
	switch (re.error_code()) {
	case re2::RE2::ErrorPatternTooLarge:
	case re2::RE2::ErrorRepeatSize:
		return -E2BIG;
	default:
		return -EINVAL;
	}
}

extern "C" int pstore_regex_new(const char *pattern, size_t len, int64_t max_mem,
				struct pstore_regex **out, char *why, size_t why_size)
{
	struct pstore_regex *r;
	int err;

	try {
		r = new pstore_regex(re2::StringPiece(pattern, len), regex_options(max_mem));
		if (r->re.ok()) {
			*out = r;
			return 0;
		}
		if (why && why_size)
			snprintf(why, why_size, "%s", r->re.error().c_str());
		err = regex_error(r->re);
		delete r;
		return err;
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
}

extern "C" bool pstore_regex_match(const struct pstore_regex *r, const char *text, size_t len)
{
	return r->re.Match(re2::StringPiece(text, len), 0, len, re2::RE2::ANCHOR_BOTH, NULL, 0);
}

extern "C" size_t pstore_regex_mem(const struct pstore_regex *r)
{
	return sizeof(*r) + (size_t)r->re.ProgramSize() * 16; /* an instruction and its lists */
}

extern "C" void pstore_regex_free(struct pstore_regex *r)
{
	delete r;
}
