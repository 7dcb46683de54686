/*
 * status.c - the one table from an error's kind (common.h's enum
 * ember_errkind) to the HTTP status that answers it, as docs/http-api.md
 * lists them.  Every route that answers a component's error chooses its
 * status here, from the kind alone: a message's wording never decides.
 */
#include "api_internal.h"

unsigned api_status_of_kind(enum ember_errkind kind)
{
	static const unsigned status[EMBER_ERRK_COUNT] = {
		[EMBER_ERRK_UNAVAILABLE] = MHD_HTTP_SERVICE_UNAVAILABLE,
		[EMBER_ERRK_MALFORMED] = MHD_HTTP_BAD_REQUEST,
		[EMBER_ERRK_OVER_LIMIT] = MHD_HTTP_BAD_REQUEST,
		[EMBER_ERRK_TOO_LARGE] = MHD_HTTP_CONTENT_TOO_LARGE,
		[EMBER_ERRK_CAPACITY] = MHD_HTTP_TOO_MANY_REQUESTS,
		[EMBER_ERRK_UNSUPPORTED] = MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
		[EMBER_ERRK_UNPROCESSABLE] = MHD_HTTP_UNPROCESSABLE_CONTENT,
		[EMBER_ERRK_CONFLICT] = MHD_HTTP_CONFLICT,
		[EMBER_ERRK_NOT_FOUND] = MHD_HTTP_NOT_FOUND,
		[EMBER_ERRK_CORRUPT] = MHD_HTTP_INTERNAL_SERVER_ERROR,
		[EMBER_ERRK_NO_SPACE] = MHD_HTTP_INSUFFICIENT_STORAGE,
		[EMBER_ERRK_BUSY] = MHD_HTTP_SERVICE_UNAVAILABLE,
		[EMBER_ERRK_INTERNAL] = MHD_HTTP_INTERNAL_SERVER_ERROR,
		[EMBER_ERRK_TIMEOUT] = MHD_HTTP_GATEWAY_TIMEOUT,
	};

	return (unsigned)kind < EMBER_ERRK_COUNT ? status[kind] : MHD_HTTP_SERVICE_UNAVAILABLE;
}
