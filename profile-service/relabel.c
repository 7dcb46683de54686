/*
 * relabel.c - one relabel rule applied to a profile's labels at ingest
 * (issue 27), with Prometheus' semantics (the relabel_config of
 * https://prometheus.io/docs/prometheus/latest/configuration/configuration/#relabel_config
 * and model/relabel/relabel.go): the source value is the values of
 * source_labels joined by separator (a missing label: ""), the regex
 * is matched against all of it (anchored at both ends), and
 *   replace    on a match: target_label (itself expanded) set to the
 *              expanded replacement, or removed when that is empty; an
 *              expanded target that is not a label name: nothing changes;
 *   keep/drop  the profile dropped when the value does not / does match;
 *   labeldrop/labelkeep  each label whose name matches / does not match
 *              removed (only regex may be given);
 *   labelmap   each label whose name matches copied to the expanded
 *              replacement (the original stays);
 *   hashmod    target_label set to the MD5 of the value, its last 8 bytes
 *              read big-endian, modulo modulus (Prometheus' sum64);
 *   lowercase/uppercase  target_label set to the value in lower / upper
 *              case (ASCII letters only: Go's strings.ToLower maps every
 *              Unicode letter);
 *   keepequal/dropequal  the profile dropped when the value is not / is
 *              the value of target_label (a missing label: "").
 * hashmod, lowercase, uppercase, keepequal and dropequal apply no regex;
 * their target_label is a label name, never expanded.
 * Defaults: action=replace, separator=";", regex="(.*)",
 * replacement="$1".  Expansion is Go's Regexp.Expand: $1, ${1}, $name,
 * ${name}, "$$" a '$'; a name runs over [A-Za-z0-9_] (so "$1x" is the
 * group named "1x": write "${1}x"); an unknown group is ""; a '$' that
 * starts no name is kept.  The cost of a rule is bounded: RE2 (linear in
 * the value, relabel_regex.cc), values and sets capped (profsvc_internal.h).
 */
#include "profsvc_internal.h"

#include <ctype.h>
#include <errno.h>
#include <nettle/md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SOURCES 16
#define SOURCE_CAP (MAX_SOURCES * (PROFSVC_RELABEL_MAX_VALUE + 1))

enum action { A_REPLACE, A_KEEP, A_DROP, A_LABELDROP, A_LABELKEEP, A_LABELMAP, A_HASHMOD,
	      A_LOWERCASE, A_UPPERCASE, A_KEEPEQUAL, A_DROPEQUAL, A_COUNT };

static const char *const action_names[A_COUNT] = {
	"replace", "keep", "drop", "labeldrop", "labelkeep", "labelmap", "hashmod",
	"lowercase", "uppercase", "keepequal", "dropequal",
};

enum key { K_ACTION, K_SOURCES, K_SEPARATOR, K_REGEX, K_TARGET, K_REPLACEMENT, K_MODULUS,
	   K_COUNT };

static const char *const key_names[K_COUNT] = {
	"action", "source_labels", "separator", "regex", "target_label", "replacement",
	"modulus",
};

struct profsvc_relabel {
	enum action action;
	uint64_t modulus;		/* hashmod's; 0: not given */
	char *sources[MAX_SOURCES];
	size_t n_sources;
	char *separator, *target, *replacement; /* owned */
	struct profsvc_regex *re;
};

/* ---- the label set ---------------------------------------------------------------- */

int profsvc_labels_copy(struct profsvc_labels *ls, const struct pstore_label *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct pstore_label l = { strdup(in[i].name), strdup(in[i].value) };

		if (!l.name || !l.value || EMBER_VEC_APPEND(ls, l)) {
			free((char *)l.name);
			free((char *)l.value);
			profsvc_labels_release(ls);
			return -ENOMEM;
		}
	}
	return 0;
}

void profsvc_labels_release(struct profsvc_labels *ls)
{
	for (size_t i = 0; i < ls->n; i++) {
		free((char *)ls->v[i].name);
		free((char *)ls->v[i].value);
	}
	EMBER_VEC_FREE(ls);
}

static size_t label_find(const struct profsvc_labels *ls, const char *name)
{
	for (size_t i = 0; i < ls->n; i++)
		if (!strcmp(ls->v[i].name, name))
			return i;
	return SIZE_MAX;
}

static void label_remove(struct profsvc_labels *ls, size_t i)
{
	free((char *)ls->v[i].name);
	free((char *)ls->v[i].value);
	ls->v[i] = ls->v[--ls->n];
}

int profsvc_labels_set(struct profsvc_labels *ls, const char *name, const char *value)
{
	size_t i = label_find(ls, name);
	char *v;

	if (!*value) {
		if (i != SIZE_MAX)
			label_remove(ls, i);
		return 0;
	}
	if (!(v = strdup(value)))
		return -ENOMEM;
	if (i != SIZE_MAX) {
		free((char *)ls->v[i].value);
		ls->v[i].value = v;
		return 0;
	}
	struct pstore_label l = { strdup(name), v };

	if (ls->n >= PROFSVC_RELABEL_MAX_LABELS || !l.name || EMBER_VEC_APPEND(ls, l)) {
		free((char *)l.name);
		free(v);
		return ls->n >= PROFSVC_RELABEL_MAX_LABELS ? -E2BIG : -ENOMEM;
	}
	return 0;
}

/* ---- expansion: Go's Regexp.Expand -------------------------------------------------- */

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* The group a reference at t names ("1", "{1}", "name", "{name}"):
 * its length in *used, the group's number (-1: none such) in *group;
 * false when t starts no reference. */
static bool reference(const struct profsvc_regex *re, const char *t, size_t *used, int *group)
{
	bool brace = *t == '{';
	const char *name = t + brace;
	size_t n = 0;
	long num = 0;

	while (name_char(name[n]))
		n++;
	if (!n || (brace && name[n] != '}'))
		return false;
	*used = brace + n + brace;
	for (size_t i = 0; i < n && num >= 0; i++)
		num = name[i] < '0' || name[i] > '9' || num >= 100000000 ? -1
								: num * 10 + (name[i] - '0');
	if (name[0] == '0' && n > 1)
		num = -1;
	*group = num >= 0 ? (num < PROFSVC_REGEX_MAX_GROUPS ? (int)num : -1)
			  : profsvc_regex_group_named(re, name, n);
	return true;
}

/* tmpl expanded with the groups g of a match of re in src, into out. */
static int expand(const struct profsvc_regex *re, const char *tmpl, const char *src,
		  const struct profsvc_span *g, struct ember_buf *out)
{
	int err = 0;

	ember_buf_reset(out);
	while (!err && *tmpl) {
		const char *d = strchr(tmpl, '$');
		size_t used;
		int k;

		if (!d)
			return ember_buf_append(out, tmpl, strlen(tmpl));
		err = ember_buf_append(out, tmpl, (size_t)(d - tmpl));
		tmpl = d + 1;
		if (*tmpl == '$' || !reference(re, tmpl, &used, &k)) {
			err = err ? err : ember_buf_putc(out, '$');
			tmpl += *tmpl == '$';
			continue;
		}
		tmpl += used;
		if (!err && k >= 0 && g[k].set)
			err = ember_buf_append(out, src + g[k].off, g[k].len);
	}
	return err ? err : ember_buf_append(out, "", 0); /* NUL-terminated when empty */
}

/* ---- applying a rule ---------------------------------------------------------------- */

/* The source value: the source labels' values joined by the separator. */
static int source_value(const struct profsvc_relabel *r, const struct profsvc_labels *ls,
			struct ember_buf *out)
{
	int err = ember_buf_append(out, "", 0);

	for (size_t i = 0; !err && i < r->n_sources; i++) {
		size_t k = label_find(ls, r->sources[i]);
		const char *v = k == SIZE_MAX ? "" : ls->v[k].value;

		if (i)
			err = ember_buf_append(out, r->separator, strlen(r->separator));
		err = err ? err : ember_buf_append(out, v, strlen(v));
	}
	return err;
}

static int apply_replace(const struct profsvc_relabel *r, struct profsvc_labels *ls,
			 const char *val, const struct profsvc_span *g)
{
	struct ember_buf target, value;
	int err;

	ember_buf_init(&target, PROFSVC_RELABEL_MAX_VALUE);
	ember_buf_init(&value, PROFSVC_RELABEL_MAX_VALUE);
	err = expand(r->re, r->target, val, g, &target);
	err = err ? err : expand(r->re, r->replacement, val, g, &value);
	if (!err && ember_label_name_valid(target.data))
		err = profsvc_labels_set(ls, target.data, value.data);
	ember_buf_release(&target);
	ember_buf_release(&value);
	return err;
}

/* labeldrop, labelkeep: every label whose name matches (does not). */
static void apply_labeldrop(const struct profsvc_relabel *r, struct profsvc_labels *ls,
			    bool drop_matching)
{
	for (size_t i = ls->n; i-- > 0;)
		if (profsvc_regex_match(r->re, ls->v[i].name, strlen(ls->v[i].name), NULL) ==
		    drop_matching)
			label_remove(ls, i);
}

/* labelmap: the labels as they were when it began, each that matches
 * copied to its expanded replacement. */
static int apply_labelmap(const struct profsvc_relabel *r, struct profsvc_labels *ls)
{
	struct profsvc_span g[PROFSVC_REGEX_MAX_GROUPS];
	struct profsvc_labels was = { 0 };
	struct ember_buf name;
	int err = profsvc_labels_copy(&was, ls->v, ls->n);

	ember_buf_init(&name, PROFSVC_RELABEL_MAX_VALUE);
	for (size_t i = 0; !err && i < was.n; i++) {
		const char *n = was.v[i].name;

		if (!profsvc_regex_match(r->re, n, strlen(n), g))
			continue;
		err = expand(r->re, r->replacement, n, g, &name);
		if (!err && ember_label_name_valid(name.data))
			err = profsvc_labels_set(ls, name.data, was.v[i].value);
	}
	ember_buf_release(&name);
	profsvc_labels_release(&was);
	return err;
}

/* hashmod: Prometheus' sum64 of the value's MD5 (its last 8 bytes, big-endian). */
static int apply_hashmod(const struct profsvc_relabel *r, struct profsvc_labels *ls,
			 const char *val, size_t len)
{
	uint8_t d[MD5_DIGEST_SIZE];
	struct md5_ctx c;
	uint64_t h = 0;
	char out[24];

	md5_init(&c);
	md5_update(&c, len, (const uint8_t *)val);
	md5_digest(&c, sizeof(d), d);
	for (size_t i = MD5_DIGEST_SIZE - 8; i < MD5_DIGEST_SIZE; i++)
		h = h << 8 | d[i];
	snprintf(out, sizeof(out), "%llu", (unsigned long long)(h % r->modulus));
	return profsvc_labels_set(ls, r->target, out);
}

/* lowercase, uppercase: the value's ASCII letters mapped, into the target. */
static int apply_case(const struct profsvc_relabel *r, struct profsvc_labels *ls, char *val)
{
	for (char *p = val; *p; p++)
		*p = (char)(r->action == A_LOWERCASE ? tolower((unsigned char)*p)
						     : toupper((unsigned char)*p));
	return profsvc_labels_set(ls, r->target, val);
}

/* keepequal, dropequal: PROFSVC_RELABEL_DROP or 0. */
static int apply_equal(const struct profsvc_relabel *r, const struct profsvc_labels *ls,
		       const char *val)
{
	size_t k = label_find(ls, r->target);
	bool equal = !strcmp(k == SIZE_MAX ? "" : ls->v[k].value, val);

	return equal == (r->action == A_DROPEQUAL) ? PROFSVC_RELABEL_DROP : 0;
}

/* The actions on the source value that apply no regex. */
static int apply_plain(const struct profsvc_relabel *r, struct profsvc_labels *ls,
		       struct ember_buf *val)
{
	if (r->action == A_HASHMOD)
		return apply_hashmod(r, ls, val->data, val->len);
	if (r->action == A_LOWERCASE || r->action == A_UPPERCASE)
		return apply_case(r, ls, val->data);
	return apply_equal(r, ls, val->data);
}

int profsvc_relabel_apply(const struct profsvc_relabel *r, struct profsvc_labels *ls)
{
	struct profsvc_span g[PROFSVC_REGEX_MAX_GROUPS];
	struct ember_buf val;
	bool match;
	int err = 0;

	if (r->action == A_LABELDROP || r->action == A_LABELKEEP) {
		apply_labeldrop(r, ls, r->action == A_LABELDROP);
		return 0;
	}
	if (r->action == A_LABELMAP)
		return apply_labelmap(r, ls);
	ember_buf_init(&val, SOURCE_CAP);
	err = source_value(r, ls, &val);
	if (!err && r->action >= A_HASHMOD) {
		err = apply_plain(r, ls, &val);
		ember_buf_release(&val);
		return err;
	}
	match = !err && profsvc_regex_match(r->re, val.data, val.len, g);
	if (!err && r->action == A_KEEP)
		err = match ? 0 : PROFSVC_RELABEL_DROP;
	else if (!err && r->action == A_DROP)
		err = match ? PROFSVC_RELABEL_DROP : 0;
	else if (!err && match)
		err = apply_replace(r, ls, val.data, g);
	ember_buf_release(&val);
	return err;
}

/* ---- parsing a rule ----------------------------------------------------------------- */

void profsvc_relabel_free(struct profsvc_relabel *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_sources; i++)
		free(r->sources[i]);
	free(r->separator);
	free(r->target);
	free(r->replacement);
	profsvc_regex_free(r->re);
	free(r);
}

/* source_labels=a,b,c: each a label name. */
static int parse_sources(struct profsvc_relabel *r, const char *list, char *why,
			 size_t why_size)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		char *name = strndup(p, n);

		if (!name)
			return -ENOMEM;
		if (r->n_sources == MAX_SOURCES || !ember_label_name_valid(name)) {
			snprintf(why, why_size, "source_labels: '%.60s' %s", name,
				 r->n_sources == MAX_SOURCES ? "is one more than 16"
							     : "is not a label name");
			free(name);
			return -EINVAL;
		}
		r->sources[r->n_sources++] = name;
		p += n + (p[n] == ',');
	}
	return 0;
}

static int parse_action(struct profsvc_relabel *r, const char *v, char *why, size_t why_size)
{
	for (int a = 0; a < A_COUNT; a++)
		if (!strcmp(v, action_names[a])) {
			r->action = (enum action)a;
			return 0;
		}
	snprintf(why, why_size, "action=%.40s: want keep, drop, replace, labeldrop, labelkeep, "
				"labelmap, hashmod, lowercase, uppercase, keepequal or dropequal", v);
	return -EINVAL;
}

/* modulus=N: a number above 0. */
static int parse_modulus(struct profsvc_relabel *r, const char *v, char *why, size_t why_size)
{
	char *end;
	unsigned long long m;

	errno = 0;
	m = *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
	if (!m || errno || *end) {
		snprintf(why, why_size, "modulus=%.40s: want a number above 0", v);
		return -EINVAL;
	}
	r->modulus = m;
	return 0;
}

/* One key=value into r (the regex's text into *regex). */
static int parse_key(struct profsvc_relabel *r, enum key k, const char *v, const char **regex,
		     char *why, size_t why_size)
{
	char **s = k == K_SEPARATOR ? &r->separator : k == K_TARGET ? &r->target
						    : &r->replacement;

	if (k == K_ACTION)
		return parse_action(r, v, why, why_size);
	if (k == K_SOURCES)
		return parse_sources(r, v, why, why_size);
	if (k == K_REGEX) {
		*regex = v;
		return 0;
	}
	if (k == K_MODULUS)
		return parse_modulus(r, v, why, why_size);
	free(*s);
	*s = strdup(v);
	return *s ? 0 : -ENOMEM;
}

/* The target label: replace's a name or one made by expansion; the
 * actions that take one without a regex, a name.  Prometheus' checks. */
static int check_target(const struct profsvc_relabel *r, char *why, size_t why_size)
{
	bool needs = r->action == A_REPLACE || r->action >= A_HASHMOD;

	if (needs && !*r->target) {
		snprintf(why, why_size, "action=%s needs target_label", action_names[r->action]);
		return -EINVAL;
	}
	if (needs && (r->action != A_REPLACE || !strchr(r->target, '$')) &&
	    !ember_label_name_valid(r->target)) {
		snprintf(why, why_size, "target_label=%.60s: not a label name", r->target);
		return -EINVAL;
	}
	return 0;
}

/* What Prometheus' config checks of a rule: its target (check_target),
 * labeldrop and labelkeep only a regex, keepequal and dropequal only
 * their labels, hashmod a modulus, labelmap a replacement. */
static int check_rule(const struct profsvc_relabel *r, unsigned given, char *why,
		      size_t why_size)
{
	EMBER_FORWARD_IF_ERROR(check_target(r, why, why_size));
	if ((r->action == A_LABELDROP || r->action == A_LABELKEEP) &&
	    given & ~(1u << K_ACTION | 1u << K_REGEX)) {
		snprintf(why, why_size, "action=%s takes regex only", action_names[r->action]);
		return -EINVAL;
	}
	if ((r->action == A_KEEPEQUAL || r->action == A_DROPEQUAL) &&
	    given & ~(1u << K_ACTION | 1u << K_SOURCES | 1u << K_TARGET)) {
		snprintf(why, why_size, "action=%s takes source_labels and target_label only",
			 action_names[r->action]);
		return -EINVAL;
	}
	if (r->action == A_HASHMOD && !r->modulus) {
		snprintf(why, why_size, "action=hashmod needs modulus");
		return -EINVAL;
	}
	if (r->action == A_LABELMAP && !*r->replacement) {
		snprintf(why, why_size, "action=labelmap needs a replacement");
		return -EINVAL;
	}
	return 0;
}

static int parse_keys(struct profsvc_relabel *r, const struct profsvc_rule_kv *kv, size_t n,
		      const char **regex, unsigned *given, char *why, size_t why_size)
{
	for (size_t i = 0; i < n; i++) {
		int k = 0;

		while (k < K_COUNT && strcmp(kv[i].key, key_names[k]))
			k++;
		if (k == K_COUNT || *given & 1u << k) {
			snprintf(why, why_size, "'%.40s' %s", kv[i].key,
				 k == K_COUNT ? "is not a key of a relabel rule" : "given twice");
			return -EINVAL;
		}
		*given |= 1u << k;
		EMBER_FORWARD_IF_ERROR(parse_key(r, (enum key)k, kv[i].value, regex, why,
						 why_size));
	}
	return 0;
}

int profsvc_relabel_parse(const struct profsvc_rule_kv *kv, size_t n,
			  struct profsvc_relabel **out, char *why, size_t why_size)
{
	struct profsvc_relabel *r = calloc(1, sizeof(*r));
	const char *regex = "(.*)";
	char rwhy[200];
	unsigned given = 0;
	int err;

	if (!r)
		return -ENOMEM;
	r->separator = strdup(";");
	r->target = strdup("");
	r->replacement = strdup("$1");
	err = r->separator && r->target && r->replacement ? 0 : -ENOMEM;
	err = err ? err : parse_keys(r, kv, n, &regex, &given, why, why_size);
	if (!err && (err = profsvc_regex_new(regex, strlen(regex), &r->re, rwhy, sizeof(rwhy))))
		snprintf(why, why_size, "regex=%.60s: %s", regex, rwhy);
	err = err ? err : check_rule(r, given, why, why_size);
	if (err) {
		profsvc_relabel_free(r);
		return err;
	}
	*out = r;
	return 0;
}
