/*
 * relabel_regex.cc - the regexes of ingest relabel rules (relabel.c)
 * compiled and matched by RE2 (re2/re2.h), the engine the store's
 * selectors use (profile-store/selector_regex.cc says why RE2: linear
 * time, a compiled regex held within a max_mem), behind the C interface
 * of relabel_regex.h.  What this adds to the selectors' use: the
 * capturing groups of a match, numbered and named, for a rule's
 * replacement ($1, ${name}).  As Prometheus compiles a relabel regex
 * ("^(?s:" + re + ")$"), the match is anchored at both ends and '.'
 * matches a newline.  std::bad_alloc while compiling becomes -ENOMEM.
 */
#include "relabel_regex.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <new>

#include <re2/re2.h>

struct profsvc_regex {
	re2::RE2 re;

	profsvc_regex(const re2::StringPiece &p, const re2::RE2::Options &o) : re(p, o) {}
};

static re2::RE2::Options relabel_options(void)
{
	re2::RE2::Options o;

	o.set_log_errors(false); /* a bad pattern is the rules file's refusal */
	o.set_max_mem(PROFSVC_REGEX_MAX_MEM);
	o.set_dot_nl(true);
	return o;
}

extern "C" int profsvc_regex_new(const char *pattern, size_t len, struct profsvc_regex **out,
				 char *why, size_t why_size)
{
	struct profsvc_regex *r;
	int err;

	try {
		r = new profsvc_regex(re2::StringPiece(pattern, len), relabel_options());
		if (r->re.ok() && r->re.NumberOfCapturingGroups() < PROFSVC_REGEX_MAX_GROUPS) {
			*out = r;
			return 0;
		}
		if (!r->re.ok()) {
			snprintf(why, why_size, "%s", r->re.error().c_str());
			err = r->re.error_code() == re2::RE2::ErrorPatternTooLarge ||
					      r->re.error_code() == re2::RE2::ErrorRepeatSize
				      ? -E2BIG
				      : -EINVAL;
		} else {
			snprintf(why, why_size, "more than %d capturing groups",
				 PROFSVC_REGEX_MAX_GROUPS - 1);
			err = -E2BIG;
		}
		delete r;
		return err;
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
}

extern "C" bool profsvc_regex_match(const struct profsvc_regex *r, const char *text, size_t len,
				    struct profsvc_span *groups)
{
	re2::StringPiece sub[PROFSVC_REGEX_MAX_GROUPS];
	int n = groups ? r->re.NumberOfCapturingGroups() + 1 : 0;

	if (!r->re.Match(re2::StringPiece(text, len), 0, len, re2::RE2::ANCHOR_BOTH, sub, n))
		return false;
	for (int i = 0; i < PROFSVC_REGEX_MAX_GROUPS && groups; i++)
		groups[i] = i < n && sub[i].data()
				    ? (struct profsvc_span){ (size_t)(sub[i].data() - text),
							     sub[i].size(), true }
				    : (struct profsvc_span){ 0, 0, false };
	return true;
}

extern "C" int profsvc_regex_group_named(const struct profsvc_regex *r, const char *name,
					 size_t len)
{
	try {
		const std::map<std::string, int> &m = r->re.NamedCapturingGroups();
		auto it = m.find(std::string(name, len));

		return it == m.end() ? -1 : it->second;
	} catch (const std::bad_alloc &) {
		return -1; /* a name of a few bytes: only a process out of memory */
	}
}

extern "C" void profsvc_regex_free(struct profsvc_regex *r)
{
	delete r;
}
