/*
 * server_tls_off.c - ember-server never initializes GnuTLS.
 *
 * The server speaks plain HTTP: TLS, where wanted, is a proxy's job, as
 * with debuginfod, and api/server.c never sets MHD_USE_TLS.  Debian builds
 * libmicrohttpd with HTTPS support, so linking it links GnuTLS, and every
 * start used to initialize GnuTLS (ASN.1 trees of PKIX, the random
 * generator, the FIPS and system-priority checks): about 50 page faults
 * and 2 ms of a 10 ms restart (docs/benchmarks.md, cold start).
 *
 * - GNUTLS_SKIP_GLOBAL_INIT is GnuTLS's own switch (gnutls/gnutls.h) that
 *   turns off the initialization its constructor does.
 * - libmicrohttpd's constructor (MHD_init) and destructor call
 *   gnutls_global_init/deinit themselves; the link binds those two calls
 *   to the functions below (-Wl,--wrap, cli/CMakeLists.txt), which do
 *   nothing.
 *
 * Built only when GnuTLS is linked statically (EMBER_STATIC_DEPS), where
 * both take effect.  Upstream fetches load libdebuginfod with dlopen; its
 * libcurl brings a shared GnuTLS and initializes it explicitly, unaffected
 * by this file.  Serving TLS in-process would mean removing this file.
 */
#include <gnutls/gnutls.h>

GNUTLS_SKIP_GLOBAL_INIT

int __wrap_gnutls_global_init(void);
void __wrap_gnutls_global_deinit(void);

int __wrap_gnutls_global_init(void)
{
	return 0;
}

void __wrap_gnutls_global_deinit(void)
{
}
