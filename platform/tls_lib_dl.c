/* libmbedtls and libmbedx509 loaded with dlopen when the first TLS server is made
 * (platform/tls_lib.h); floe itself then has neither among its needed libraries. */
#include "platform/tls.h"
#include "platform/tls_lib.h"

#include "platform/dl.h"

#include <stdio.h>

/* Debian 12's sonames (amd64, arm64 and armhf alike) and the packages that ship them. */
#define TLS_SO "libmbedtls.so.14"
#define TLS_PKG "libmbedtls14"
#define X509_SO "libmbedx509.so.1"
#define X509_PKG "libmbedx509-1"

static struct floe_tls_lib fn;
static struct floe_dl_once lib = FLOE_DL_ONCE_INIT;

#define SYM(name)                                                                                  \
	{                                                                                          \
		"mbedtls_" #name, &fn.name                                                         \
	}

/* Resolves every function or none; load_err says why, naming the package to install.
 * libmbedtls needs libmbedx509, so the X.509 library is loaded first: a missing one is
 * then named as itself rather than as libmbedtls' loader error. */
static int load(char *err, size_t cap)
{
	const struct floe_dl_sym x509[] = {
	    SYM(x509_crt_init),
	    SYM(x509_crt_parse),
	    SYM(x509_crt_verify_info),
	    SYM(x509_crt_free),
	};
	const struct floe_dl_sym tls[] = {
	    SYM(ssl_config_init),
	    SYM(ssl_config_defaults),
	    SYM(ssl_config_free),
	    SYM(ssl_conf_min_version),
	    SYM(ssl_conf_rng),
	    SYM(ssl_conf_own_cert),
	    SYM(ssl_conf_ca_chain),
	    SYM(ssl_conf_authmode),
	    SYM(ssl_init),
	    SYM(ssl_setup),
	    SYM(ssl_set_bio),
	    SYM(ssl_handshake),
	    SYM(ssl_read),
	    SYM(ssl_check_pending),
	    SYM(ssl_close_notify),
	    SYM(ssl_free),
	    SYM(ssl_get_verify_result),
	    SYM(ssl_get_version),
	    SYM(ssl_get_ciphersuite),
	};
	char why[256];
	const char *pkg = X509_PKG;
	int rc = floe_dl_load(X509_SO, x509, sizeof(x509) / sizeof(x509[0]), why, sizeof(why));
	if (rc == 0) {
		pkg = TLS_PKG;
		rc = floe_dl_load(TLS_SO, tls, sizeof(tls) / sizeof(tls[0]), why, sizeof(why));
	}
	if (rc)
		snprintf(err, cap, "%s: tls:// listeners need it (Debian: %s)", why, pkg);
	return rc;
}

int floe_tls_lib_load(char *err, size_t cap)
{
	return floe_dl_once(&lib, load, err, cap);
}

const struct floe_tls_lib *floe_tls_lib_get(void)
{
	return floe_dl_ready(&lib) ? &fn : NULL;
}
