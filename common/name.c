/*
 * name.c - names from outside (the `?name=` of an upload, kept as the
 * X-DEBUGINFOD-FILE of what it stored) made safe to keep and show: a
 * header value must not hold control characters, JSON text must be
 * UTF-8.  The bytes that are neither become "%XX", as in a URL; a name
 * that is fine already comes out as it went in, so names read back from
 * the store go through it again whatever version stored them.  And the
 * rules a series label name and a tenant ID are held to, by the server
 * and by the agent alike.
 */
#include "common.h"

#include <errno.h>

int ember_name_escape(const char *in, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)in;
	size_t n = strlen(in), o = 0;

	for (size_t i = 0; i < n;) {
		size_t k = s[i] >= 0x80 ? ember_utf8_len(s + i, n - i) : 0;

		if (k || (s[i] >= 0x20 && s[i] < 0x7f)) {
			k = k ? k : 1;
			if (o + k >= size)
				return -ENAMETOOLONG;
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		if (o + 3 >= size)
			return -ENAMETOOLONG;
		out[o++] = '%';
		out[o++] = hex[s[i] >> 4];
		out[o++] = hex[s[i] & 0xf];
		i++;
	}
	if (o >= size)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return (int)o;
}

bool ember_label_name_valid(const char *name)
{
	if (!name || !(*name == '_' || (*name >= 'a' && *name <= 'z') ||
		       (*name >= 'A' && *name <= 'Z')))
		return false;
	for (const char *p = name + 1; *p; p++)
		if (!(*p == '_' || *p == '.' || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

static bool tenant_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       strchr("!-_.*'()", ch) != NULL;
}

bool ember_tenant_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (!n || n > EMBER_TENANT_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!tenant_char(id[i]))
			return false;
	return true;
}
