/*
 * xml_escape.c - XML 1.0 character data or an attribute value from any
 * bytes: '&', '<', '>', '"' and '\'' as entities, valid UTF-8 passed
 * through, and every character XML 1.0 cannot carry as it is replaced by
 * U+FFFD: control characters (tab, LF and CR too: an attribute folds
 * them, and XML reads CR as LF), U+FFFE, U+FFFF and each byte that starts
 * no valid UTF-8 sequence (XML §2.2 Char).  Names come from files anyone
 * may upload: an SVG or a JUnit report stays well-formed whatever they
 * hold.
 */
#include "common.h"

static const char *xml_entity(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&apos;";
	default:
		return NULL;
	}
}

size_t ember_xml_char(const void *p, size_t n, bool *ok)
{
	const unsigned char *s = p;
	size_t len;

	if (*s < 0x80) {
		*ok = *s >= 0x20;
		return 1;
	}
	len = ember_utf8_len(s, n);
	*ok = len && !(len == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe);
	return len ? len : 1;
}

int ember_xml_escape(const char *s, size_t n, ember_write_fn write, void *ctx)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
	int err = 0;

	while (!err && p < end) {
		bool ok;
		size_t len = ember_xml_char(p, (size_t)(end - p), &ok);
		const char *rep = ok ? xml_entity(*p) : "\xef\xbf\xbd"; /* U+FFFD */

		if (!rep) {
			p += len;
			continue;
		}
		if (p > run)
			err = write(ctx, run, (size_t)(p - run));
		if (!err)
			err = write(ctx, rep, strlen(rep));
		p += len;
		run = p;
	}
	if (!err && p > run)
		err = write(ctx, run, (size_t)(p - run));
	return err;
}

int ember_xml_str(struct ember_buf *b, const char *s, size_t n)
{
	return ember_xml_escape(s, n, ember_buf_write, b);
}
