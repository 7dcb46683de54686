/*
 * profile_tenant.c - the tenant of a profile request (issue 27): with
 * --multitenancy, X-Scope-OrgID (Pyroscope's, Mimir's and Grafana's
 * header; OTLP/gRPC's x-scope-orgid metadata) names it and a request
 * without one is refused; without, every request is the tenant
 * "anonymous" and the header is not read (as Pyroscope does with
 * multitenancy off).  The tenant's profile service (profsvc_tenant: its
 * own store, opened at its first request) is then the one every call of
 * the request goes to (req->profiles, x->svc, held until the request
 * completes), so no route can reach another tenant's profiles; a read
 * of a tenant never written opens no store (it answers as empty).  A write with a tenant's token (--tokens,
 * profile-service/tenant_tokens.c) is that tenant's: another named is refused 403.  A
 * write's whole body is then admitted by the tenant's ingest rate
 * (--limits, profsvc_ingest_admit) before it is decoded.  And GET
 * /api/v1/tenants/TENANT/usage, answered to that tenant only.
 * docs/http-api.md, "Tenants".
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int api_profile_tenant(struct api_server *srv, const char *id, const char *token_tenant,
		       bool write, struct profsvc **out, unsigned *status, char *msg,
		       size_t msg_size)
{
	struct api_profiles *pr = srv->profiles;
	int err;

	if (!pr->multitenancy)
		id = PROFSVC_TENANT_ANONYMOUS;
	if (token_tenant && id && *id && strcmp(id, token_tenant)) {
		*status = MHD_HTTP_FORBIDDEN;
		snprintf(msg, msg_size, "this token writes the profiles of tenant '%s' only, not "
					"of '%.160s' (" API_TENANT_HEADER ")", token_tenant, id);
		return -EPERM;
	}
	if (token_tenant && (!id || !*id))
		id = token_tenant;
	*status = MHD_HTTP_UNAUTHORIZED;
	if (!id || !*id) {
		snprintf(msg, msg_size, "this server keeps profiles by tenant: name yours with "
					"the header " API_TENANT_HEADER ": TENANT");
		return -EACCES;
	}
	err = profsvc_tenant(pr->svc, id, write ? PROFSVC_TENANT_CREATE : 0, out);
	*status = err == -EINVAL   ? MHD_HTTP_BAD_REQUEST
		  : err == -EUSERS ? MHD_HTTP_TOO_MANY_REQUESTS
				   : api_profile_error_status(err);
	if (err == -EINVAL)
		snprintf(msg, msg_size, "tenant '%.160s' of " API_TENANT_HEADER " is not one: at "
					"most %d characters of a-z A-Z 0-9 !-_.*'(), not . or ..",
			 id, PROFSVC_TENANT_MAX);
	else if (err == -EUSERS)
		snprintf(msg, msg_size, "tenant '%s' is new, and the server has as many tenants "
					"open as it keeps (--max-tenants)", id);
	else if (err)
		snprintf(msg, msg_size, "profile store of tenant '%s' unavailable: %s", id,
			 pstore_strerror(err));
	return err;
}

enum MHD_Result api_profile_tenant_of(struct api_server *srv, struct MHD_Connection *c,
				      struct api_request *req, const char *token_tenant,
				      bool write)
{
	const char *id = MHD_lookup_connection_value(c, MHD_HEADER_KIND, API_TENANT_HEADER);
	unsigned status;
	char msg[400];
	int err = api_profile_tenant(srv, id, token_tenant, write, &req->profiles, &status, msg,
				     sizeof(msg));

	if (!err)
		return MHD_YES;
	req->upload_err = err; /* answered now: a write's body is not read */
	if (write)
		profsvc_count_reject(srv->profiles->svc, PROFSVC_REJECT_TENANT);
	return api_profile_text(srv, c, req, status, msg, NULL);
}

enum MHD_Result api_profile_admit(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req, bool *admitted)
{
	char why[400], secs[16];
	const char *retry[] = { MHD_HTTP_HEADER_RETRY_AFTER, secs, NULL };
	unsigned retry_s;
	int err = profsvc_ingest_admit(req->profiles, req->body.len, &retry_s, why, sizeof(why));

	*admitted = !err;
	if (!err)
		return MHD_YES;
	snprintf(secs, sizeof(secs), "%u", retry_s);
	return api_profile_text(srv, c, req, api_profile_error_status(err), why,
				retry_s ? retry : NULL);
}

enum MHD_Result api_tenant_usage(struct api_server *srv, struct MHD_Connection *c,
				 struct api_request *req, const struct api_profile_ctx *x)
{
	struct profsvc_answer a;
	char msg[400];

	if (strcmp(req->route.path, profsvc_tenant_id(x->svc))) {
		snprintf(msg, sizeof(msg), srv->profiles->multitenancy
			 ? "the usage of tenant '%.160s' is read as that tenant (" API_TENANT_HEADER
			   ": %.160s)"
			 : "no tenant '%.160s': without --multitenancy every profile is the tenant "
			   "anonymous's", req->route.path, req->route.path);
		return api_profile_text(srv, c, req, srv->profiles->multitenancy
						     ? MHD_HTTP_FORBIDDEN : MHD_HTTP_NOT_FOUND,
					msg, NULL);
	}
	return api_profile_answer(srv, c, req, x, profsvc_usage(x->svc, &a), &a, NULL, NULL);
}
