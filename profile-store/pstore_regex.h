/*
 * pstore_regex.h - the selectors' regex engine (selector_regex.cc): RE2
 * behind a C interface, so the store stays C.
 *
 * RE2's default syntax (Go's and Perl's classes: \d, \w, (?i), ...), as
 * Prometheus and Grafana Pyroscope match selector regexes, matched against
 * the whole value (anchored at both ends, as Prometheus anchors them) with
 * '.' matching a newline too (Prometheus' (?s)).  RE2 matches in time
 * linear in the text, and keeps a compiled regex (its programs and the DFA
 * caches matching grows) within the max_mem given to the compile: a
 * pattern that needs more fails to compile, it never takes more.  RE2's
 * own logging is off.  Thread-safe: a compiled regex may be matched from
 * several threads at once.
 */
#ifndef EMBER_PSTORE_REGEX_H
#define EMBER_PSTORE_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pstore_regex;

/*
 * Compile pattern (len bytes, not NUL-terminated, UTF-8) to hold at most
 * max_mem bytes.  0 with *out (to pstore_regex_free); -EINVAL for a
 * pattern RE2 does not parse, -E2BIG for one that needs more than max_mem
 * (or repeats past RE2's 1,000), with RE2's message in why (why_size
 * bytes, NUL-terminated; may be NULL); -ENOMEM.
 */
int pstore_regex_new(const char *pattern, size_t len, int64_t max_mem,
		     struct pstore_regex **out, char *why, size_t why_size);
/* Whether re matches all of text (len bytes). */
bool pstore_regex_match(const struct pstore_regex *re, const char *text, size_t len);
/* The bytes re's program holds now (an estimate: its instructions); the
 * DFA caches matching adds stay within the max_mem it was compiled for. */
size_t pstore_regex_mem(const struct pstore_regex *re);
/* Accepts NULL. */
void pstore_regex_free(struct pstore_regex *re);

#ifdef __cplusplus
}
#endif

#endif /* EMBER_PSTORE_REGEX_H */
