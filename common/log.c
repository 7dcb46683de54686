/*
 * log.c - the one settable log handler of Ember (see common.h).
 */
#include "common.h"

#include <stdio.h>

static void default_log(enum ember_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level <= EMBER_LOG_WARN)
		fprintf(stderr, "%s\n", msg);
}

/* Set once from main() before threads start; read-only afterwards. */
static ember_log_fn log_fn = default_log;
static void *log_ctx;
static enum ember_log_level log_max = EMBER_LOG_INFO;

void ember_log_set_handler(ember_log_fn fn, void *ctx)
{
	log_fn = fn ? fn : default_log;
	log_ctx = ctx;
}

void ember_log_set_level(enum ember_log_level max_level)
{
	log_max = max_level;
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
