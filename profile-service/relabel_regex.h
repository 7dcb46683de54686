/*
 * relabel_regex.h - the regexes of ingest relabel rules (relabel_regex.cc):
 * RE2 behind C, with the groups of a match.  Its own header (a part of
 * profsvc_internal.h) so that the C++ file includes nothing of C11's.
 */
#ifndef EMBER_RELABEL_REGEX_H
#define EMBER_RELABEL_REGEX_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A relabel regex: RE2, anchored at both ends, '.' matching a newline,
 * compiled within PROFSVC_REGEX_MAX_MEM bytes, fewer than MAX_GROUPS
 * groups (the whole match counted). */
#define PROFSVC_REGEX_MAX_MEM (128 << 10)
#define PROFSVC_REGEX_MAX_GROUPS 33
struct profsvc_regex;
/* A group of a match: text[off, off + len), or not set (unmatched). */
struct profsvc_span {
	size_t off, len;
	bool set;
};
/* 0 with *out (to profsvc_regex_free); -EINVAL for a pattern RE2 does
 * not parse, -E2BIG for one past the memory or the groups, why saying
 * why; -ENOMEM. */
int profsvc_regex_new(const char *pattern, size_t len, struct profsvc_regex **out, char *why,
		      size_t why_size);
/* Whether re matches all of text[0, len); groups (NULL: not wanted, else
 * PROFSVC_REGEX_MAX_GROUPS of them) written when it does: [0] the
 * whole, [i] group i. */
bool profsvc_regex_match(const struct profsvc_regex *re, const char *text, size_t len,
			 struct profsvc_span *groups);
/* The number of the group named name[0, len), or -1. */
int profsvc_regex_group_named(const struct profsvc_regex *re, const char *name, size_t len);
void profsvc_regex_free(struct profsvc_regex *re); /* accepts NULL */

#ifdef __cplusplus
}
#endif

#endif /* EMBER_RELABEL_REGEX_H */
