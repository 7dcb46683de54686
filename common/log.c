/*
 * log.c - the one settable log handler of Ember (see common.h) and its
 * level, which a user raises with --log-level or EMBER_LOG_LEVEL.
 */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const level_names[] = { "error", "warn", "info", "debug" };

static void default_log(enum ember_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= EMBER_LOG_WARN)
		fprintf(stderr, "%s\n", msg);
	else
		fprintf(stderr, "%s: %s\n", level_names[level], msg);
}

/* Set from main() before threads start; read-only afterwards. */
static ember_log_fn log_fn = default_log;
static void *log_ctx;
static enum ember_log_level log_max = EMBER_LOG_WARN;

void ember_log_set_handler(ember_log_fn fn, void *ctx)
{
	log_fn = fn ? fn : default_log;
	log_ctx = ctx;
}

void ember_log_set_level(enum ember_log_level max_level)
{
	log_max = max_level;
}

enum ember_log_level ember_log_get_level(void)
{
	return log_max;
}

bool ember_log_enabled(enum ember_log_level level)
{
	return level <= log_max;
}

int ember_log_level_parse(const char *s, enum ember_log_level *out)
{
	for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
		if (strcasecmp(s, level_names[i]) == 0) {
			*out = (enum ember_log_level)i;
			return 0;
		}
	if (strcasecmp(s, "warning") == 0) {
		*out = EMBER_LOG_WARN;
		return 0;
	}
	return -EINVAL;
}

const char *ember_log_level_name(enum ember_log_level level)
{
	return (unsigned)level < 4 ? level_names[level] : "?";
}

void ember_log(enum ember_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_fn(level, msg, log_ctx);
}
