/*
 * selector.c - Prometheus-style label selectors, as Grafana Pyroscope
 * takes them: an optional profile type, then braces holding matchers
 * separated by commas (a trailing comma allowed):
 *
 *     process_cpu:cpu:nanoseconds:cpu:nanoseconds{service="checkout",version=~"2\\.4.*"}
 *
 * name: [a-zA-Z_][a-zA-Z0-9_.]*; op: = != =~ !~; value: a string in
 * double or single quotes or backticks, with the escapes of PromQL's
 * strings (\\ \" \' \n \t \r \` ; no escapes in backticks).  Regexes are
 * RE2's (Go's syntax, as Prometheus and Pyroscope take them: \d, (?i),
 * ...; pstore_regex.h), matched against the whole value.  A selector has
 * at most 32 matchers, 8 of them regexes of at most 1,024 bytes each,
 * and each compiled regex holds at most 1 MiB (RE2's max_mem), taken from
 * the request's memory account (struct pstore_selection's mem) before it
 * is compiled: no selector costs the server more than 8 MiB or a compile
 * past that bound (docs/security.md).  A missing label
 * has the value "" (so {foo=""} matches series without foo).  The matcher
 * __profile_type__="TYPE" (what Grafana sends) is no label: it gives the
 * selector's type, as "TYPE{...}" does (a different type before the
 * braces is refused, and so is any other operator on it).
 */
#include "pstore_query.h"

#include "pstore_regex.h"

#include <stdio.h>

#define SELECTOR_MAX 16384
#define MATCHERS_MAX 32
#define REGEXES_MAX 8
#define REGEX_MAX 1024
#define REGEX_MEM (1 << 20) /* what one compiled regex may hold (RE2's max_mem) */
#define PROFILE_TYPE_LABEL "__profile_type__"

struct cur {
	const char *p, *start;
	struct ember_diag *d;
	struct ember_mem_account *mem; /* charged REGEX_MEM a regex; NULL: none */
	int regexes;
};

#define SEL_FAIL(c, ...) EMBER_FAIL((c)->d, -PSTORE_ERR_SELECTOR, __VA_ARGS__)

static void skip_ws(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')
		c->p++;
}

static bool name_char(char ch, bool first)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (!first && ((ch >= '0' && ch <= '9') || ch == '.'));
}

static int parse_name(struct cur *c, char **out)
{
	const char *s = c->p;

	if (!name_char(*c->p, true))
		return SEL_FAIL(c, "selector: expected a label name at offset %zu",
				(size_t)(c->p - c->start));
	while (name_char(*c->p, false))
		c->p++;
	*out = strndup(s, (size_t)(c->p - s));
	return *out ? 0 : -ENOMEM;
}

static int unescape(struct cur *c, char q, struct ember_buf *b)
{
	char e = *++c->p;
	char ch = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;

	if (e != 'n' && e != 't' && e != 'r' && e != '\\' && e != '"' && e != '\'' && e != '`')
		return SEL_FAIL(c, "selector: unknown escape '\\%c' at offset %zu (write '\\\\%c')",
				e ? e : '0', (size_t)(c->p - c->start), e ? e : '0');
	(void)q;
	c->p++;
	return ember_buf_putc(b, ch);
}

static int parse_string(struct cur *c, char **out)
{
	char q = *c->p;
	struct ember_buf b;
	int err = 0;

	if (q != '"' && q != '\'' && q != '`')
		return SEL_FAIL(c, "selector: expected a quoted value at offset %zu",
				(size_t)(c->p - c->start));
	ember_buf_init(&b, SELECTOR_MAX);
	c->p++;
	while (!err && *c->p && *c->p != q) {
		if (*c->p == '\\' && q != '`')
			err = unescape(c, q, &b);
		else
			err = ember_buf_putc(&b, *c->p++);
	}
	if (!err && *c->p != q)
		err = SEL_FAIL(c, "selector: unterminated string");
	if (!err)
		err = ember_buf_putc(&b, '\0');
	if (err) {
		ember_buf_release(&b);
		return err;
	}
	c->p++;
	*out = b.data;
	return 0;
}

static int parse_op(struct cur *c, enum pstore_match_op *op)
{
	if (c->p[0] == '=' && c->p[1] == '~')
		*op = PS_RE;
	else if (c->p[0] == '!' && c->p[1] == '~')
		*op = PS_NRE;
	else if (c->p[0] == '!' && c->p[1] == '=')
		*op = PS_NE;
	else if (c->p[0] == '=')
		*op = PS_EQ;
	else
		return SEL_FAIL(c, "selector: expected =, !=, =~ or !~ at offset %zu",
				(size_t)(c->p - c->start));
	c->p += *op == PS_EQ ? 1 : 2;
	return 0;
}

/* The regex of m compiled into m->re, its bound taken from the request's
 * account first: a regex past the count, the length or the memory bound is
 * refused before RE2 sees it or as soon as RE2 passes the bound. */
static int compile(struct cur *c, struct pstore_matcher *m)
{
	size_t n = strlen(m->value);
	char msg[160] = "";
	int err;

	if (++c->regexes > REGEXES_MAX)
		return SEL_FAIL(c, "selector: more than %d regex matchers (=~, !~)", REGEXES_MAX);
	if (n > REGEX_MAX)
		return SEL_FAIL(c, "selector: regex longer than %d bytes", REGEX_MAX);
	err = ember_mem_account_take(c->mem, REGEX_MEM);
	if (err == -E2BIG)
		return EMBER_FAIL(c->d, -PSTORE_ERR_LIMIT, "selector: its regexes need more than "
				  "the request's share of the server's memory");
	if (err)
		return EMBER_FAIL(c->d, err, "selector: no memory free for its regexes now; "
				  "try again");
	err = pstore_regex_new(m->value, n, REGEX_MEM, &m->re, msg, sizeof(msg));
	if (err == -E2BIG)
		return SEL_FAIL(c, "selector: regex '%.64s' too large: %s (at most %d KiB "
				"compiled, 1000 repetitions)", m->value, msg, REGEX_MEM >> 10);
	if (err == -EINVAL)
		return SEL_FAIL(c, "selector: bad regex '%.64s': %s", m->value, msg);
	return err;
}

static void matcher_release(struct pstore_matcher *m)
{
	free(m->name);
	free(m->value);
	pstore_regex_free(m->re);
}

/* {__profile_type__="TYPE"} (m, released here): the selector's type, as
 * Grafana sends it, and no label matcher. */
static int type_matcher(struct cur *c, struct pstore_selector *sel, struct pstore_matcher *m)
{
	int err = 0;

	if (m->op != PS_EQ)
		err = SEL_FAIL(c, "selector: %s takes '=' only", PROFILE_TYPE_LABEL);
	else if (sel->type && strcmp(sel->type, m->value))
		err = SEL_FAIL(c, "selector: two profile types ('%s', '%s')", sel->type, m->value);
	else if (!sel->type) {
		sel->type = m->value;
		m->value = NULL;
	}
	matcher_release(m);
	return err;
}

static int parse_matcher(struct cur *c, struct pstore_selector *sel)
{
	struct pstore_matcher m = { 0 };
	int err;

	if (sel->m.n >= MATCHERS_MAX)
		return SEL_FAIL(c, "selector: more than %d matchers", MATCHERS_MAX);
	err = parse_name(c, &m.name);
	if (!err) {
		skip_ws(c);
		err = parse_op(c, &m.op);
	}
	if (!err) {
		skip_ws(c);
		err = parse_string(c, &m.value);
	}
	if (!err && strcmp(m.name, PROFILE_TYPE_LABEL) == 0)
		return type_matcher(c, sel, &m);
	if (!err && (m.op == PS_RE || m.op == PS_NRE))
		err = compile(c, &m);
	if (!err)
		err = EMBER_VEC_APPEND(&sel->m, m);
	if (err)
		matcher_release(&m);
	return err;
}

/* An optional type before the braces: name characters and colons. */
static int parse_type(struct cur *c, struct pstore_selector *sel)
{
	const char *s = c->p;

	while (name_char(*c->p, false) || *c->p == ':' || *c->p == '-')
		c->p++;
	if (c->p == s)
		return 0;
	sel->type = strndup(s, (size_t)(c->p - s));
	return sel->type ? 0 : -ENOMEM;
}

static int parse_body(struct cur *c, struct pstore_selector *sel)
{
	skip_ws(c);
	EMBER_FORWARD_IF_ERROR(parse_type(c, sel));
	skip_ws(c);
	if (!*c->p)
		return 0;
	if (*c->p != '{')
		return SEL_FAIL(c, "selector: expected '{' at offset %zu",
				(size_t)(c->p - c->start));
	c->p++;
	for (;;) {
		skip_ws(c);
		if (*c->p == '}')
			break;
		EMBER_FORWARD_IF_ERROR(parse_matcher(c, sel));
		skip_ws(c);
		if (*c->p == ',') {
			c->p++;
			continue;
		}
		if (*c->p != '}')
			return SEL_FAIL(c, "selector: expected ',' or '}' at offset %zu",
					(size_t)(c->p - c->start));
	}
	c->p++;
	skip_ws(c);
	if (*c->p)
		return SEL_FAIL(c, "selector: unexpected text after '}' at offset %zu",
				(size_t)(c->p - c->start));
	return 0;
}

static int parse(const char *text, struct ember_mem_account *mem, struct pstore_selector **out,
		 struct ember_diag *d)
{
	struct cur c = { text ? text : "", text ? text : "", d, mem, 0 };
	struct pstore_selector *sel;
	int err;

	if (strlen(c.p) > SELECTOR_MAX)
		return EMBER_FAIL(d, -PSTORE_ERR_SELECTOR, "selector longer than %d bytes",
				  SELECTOR_MAX);
	sel = calloc(1, sizeof(*sel));
	if (!sel)
		return EMBER_FAIL(d, -ENOMEM, "out of memory");
	err = parse_body(&c, sel);
	if (err) {
		pstore_selector_free(sel);
		return err == -ENOMEM ? EMBER_FAIL(d, err, "out of memory") : err;
	}
	*out = sel;
	return 0;
}

int pstore_selector_parse(const char *text, struct pstore_selector **out, char *why,
			  size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);

	return parse(text, NULL, out, &d);
}

void pstore_selector_free(struct pstore_selector *sel)
{
	if (!sel)
		return;
	for (size_t i = 0; i < sel->m.n; i++)
		matcher_release(&sel->m.v[i]);
	EMBER_VEC_FREE(&sel->m);
	free(sel->type);
	free(sel);
}

bool pstore_matcher_value(const struct pstore_matcher *m, const char *value)
{
	switch (m->op) {
	case PS_EQ:
		return strcmp(value, m->value) == 0;
	case PS_NE:
		return strcmp(value, m->value) != 0;
	case PS_RE:
		return pstore_regex_match(m->re, value, strlen(value));
	case PS_NRE:
		return !pstore_regex_match(m->re, value, strlen(value));
	}
	return false;
}

size_t pstore_selector_names(const struct pstore_selector *sel, const char **names,
			     size_t max)
{
	for (size_t i = 0; i < sel->m.n && i < max; i++)
		names[i] = sel->m.v[i].name;
	return sel->m.n;
}

bool pstore_selector_matches(const struct pstore_selector *sel,
			     const struct pstore_label *labels, size_t n)
{
	for (size_t i = 0; i < sel->m.n; i++) {
		const struct pstore_matcher *m = &sel->m.v[i];
		const char *v = "";

		for (size_t k = 0; k < n; k++)
			if (strcmp(labels[k].name, m->name) == 0)
				v = labels[k].value;
		if (!pstore_matcher_value(m, v))
			return false;
	}
	return true;
}

int pstore_selection_parse(const struct pstore_selection *sel, struct pstore_selector **out,
		       struct ember_diag *d)
{
	return parse(sel && sel->selector ? sel->selector : "", sel && sel->request ? sel->request->account : NULL, out, d);
}
