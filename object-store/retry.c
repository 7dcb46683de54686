/*
 * retry.c - the attempts of one request: send it (request.c), read an
 * error answer's XML, decide whether the failure is transient (error.c),
 * wait with capped exponential backoff and full jitter ("Exponential
 * Backoff And Jitter", AWS Architecture Blog, the policy the AWS SDKs
 * use), and try again, at most max_attempts times.  The last failure is
 * reported with its errno and message.
 */
#include "objstore_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

unsigned os_retry_delay_ms(const struct objstore *s, unsigned attempt)
{
	uint64_t cap = s->retry_base_ms;
	uint32_t r = 0;

	for (unsigned i = 1; i < attempt && cap < s->retry_max_ms; i++)
		cap *= 2;
	if (cap > s->retry_max_ms)
		cap = s->retry_max_ms;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)clock(); /* no entropy: any spread will do */
	return (unsigned)(cap ? r % (cap + 1) : 0);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The answer's error document, when it has one (HEAD answers have none). */
static void read_error_answer(struct os_request *r)
{
	struct ember_diag d = ember_diag_make(NULL, 0);

	if (r->errbuf.len &&
	    objstore_xml_parse_error(r->errbuf.data, r->errbuf.len, &r->err, &d) != 0)
		memset(&r->err, 0, sizeof(r->err));
}

static void report(struct objstore_status *st, const struct os_request *r, int err,
		   unsigned attempts)
{
	const char *key = r->key ? r->key : "";

	if (r->http)
		objstore_status_set(st, r->http, r->err.code,
				    "objstore: %s '%s': %d %s%s%s (%s; %u attempt%s%s%s)",
				    r->method, key, r->http,
				    r->err.code[0] ? r->err.code : "error",
				    r->err.message[0] ? ": " : "", r->err.message,
				    objstore_strerror(err), attempts, attempts == 1 ? "" : "s",
				    r->err.request_id[0] ? ", request " : "",
				    r->err.request_id);
	else
		objstore_status_set(st, 0, "", "objstore: %s '%s': %s (%u attempt%s)",
				    r->method, key, objstore_strerror(err), attempts,
				    attempts == 1 ? "" : "s");
}

int os_request_run(struct objstore *s, struct os_request *r, struct objstore_status *st)
{
	unsigned attempt;
	int err = 0;

	for (attempt = 1;; attempt++) {
		bool again;

		if (attempt > 1 && os_request_rewind(r) != 0) {
			attempt--; /* not sent: err is the last attempt's */
			break;
		}
		err = os_request_once(s, r);
		if (!err && r->http >= 200 && r->http < 300)
			break;
		if (!err) {
			read_error_answer(r);
			err = objstore_errno_of(r->http, r->err.code);
		}
		again = objstore_retriable(r->http, r->err.code, r->transport_err) &&
			err != -ENOMEM && attempt < s->max_attempts;
		pr_debug("objstore: %s '%s': attempt %u: %s%s", r->method,
			 r->key ? r->key : "", attempt, objstore_strerror(err),
			 again ? ", retrying" : "");
		if (!again)
			break;
		sleep_ms(os_retry_delay_ms(s, attempt));
	}
	if (st)
		st->attempts += attempt;
	if (err)
		report(st, r, err, attempt);
	else if (st)
		st->http = r->http;
	return err;
}
