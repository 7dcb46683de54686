/*
 * connect_stats.c - GetProfileStats of Pyroscope's query API over Connect
 * (connect.c routes it; docs/http-api.md, "Pyroscope's query API
 * (Connect)"): whether the store holds a profile and the times of its
 * oldest and newest (profsvc_time_range), in milliseconds since the
 * epoch; a store without profiles answers false and zeros.
 */
#include "api_profiles.h"
#include "querier.pb-c.h"

#define MS_NS 1000000LL

enum MHD_Result api_connect_profile_stats(struct api_server *srv, struct MHD_Connection *c,
					  struct api_request *req,
					  const struct api_profile_ctx *x,
					  const struct ProtobufCMessage *m)
{
	Types__V1__GetProfileStatsResponse out = TYPES__V1__GET_PROFILE_STATS_RESPONSE__INIT;
	struct pstore_time_range r;
	int err = profsvc_time_range(x->svc, &r);

	(void)m;
	if (err)
		return api_connect_read_failed(srv, c, req, x, err, "out of memory");
	out.data_ingested = r.any;
	out.oldest_profile_time = r.oldest_ns / MS_NS;
	out.newest_profile_time = r.newest_ns / MS_NS;
	return api_connect_reply(srv, c, req, &out.base);
}
