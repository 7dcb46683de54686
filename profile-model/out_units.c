/*
 * out_units.c - a value in its sample type's unit written for a person,
 * with the web UI's choices (web/js/format.js, value()): nanoseconds as
 * h, min, s, ms, µs or ns with two decimals; bytes as B, KiB, MiB, GiB or
 * TiB; anything else as a count with thousands separators ("1,234"),
 * followed by its unit unless that is "count".  The top table's text and
 * the flame graphs' labels use it, so a CLI reader sees what the UI shows.
 */
#include "pmodel_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static void format_time(double v, char *buf, size_t size)
{
	static const struct {
		double ns;
		const char *name;
	} steps[] = { { 3600e9, "h" }, { 60e9, "min" }, { 1e9, "s" }, { 1e6, "ms" },
		      { 1e3, "µs" } };

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (fabs(v) >= steps[i].ns) {
			snprintf(buf, size, "%.2f %s", v / steps[i].ns, steps[i].name);
			return;
		}
	snprintf(buf, size, "%.0f ns", v);
}

static void format_bytes(double v, char *buf, size_t size)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t i = 0;

	while (fabs(v) >= 1024 && i + 1 < sizeof(names) / sizeof(names[0])) {
		v /= 1024;
		i++;
	}
	snprintf(buf, size, i ? "%.2f %s" : "%.0f %s", v, names[i]);
}

/* round(v) with a ',' every three digits. */
static void format_count(double v, const char *unit, char *buf, size_t size)
{
	char digits[32], out[48];
	double r = round(v);
	uint64_t a = (uint64_t)fabs(r > -1e19 && r < 1e19 ? r : 0);
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, a), k = 0;

	if (r < 0)
		out[k++] = '-';
	for (size_t i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = digits[i];
	}
	out[k] = '\0';
	snprintf(buf, size, "%s%s%s", out, *unit && strcmp(unit, "count") ? " " : "",
		 strcmp(unit, "count") ? unit : "");
}

void pmodel_format_value(double v, const char *unit, char *buf, size_t size)
{
	const char *u = unit ? unit : "";

	if (strcmp(u, "nanoseconds") == 0)
		format_time(v, buf, size);
	else if (strcmp(u, "bytes") == 0)
		format_bytes(v, buf, size);
	else
		format_count(v, u, buf, size);
}
