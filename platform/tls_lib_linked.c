/* libmbedtls and libmbedx509 linked (platform/tls_lib.h), for the static build: a static
 * floe loads nothing at run time (glibc's dlopen from a static program needs that very
 * glibc's shared libraries on the device). */
#include "platform/tls.h"
#include "platform/tls_lib.h"

#define FN(name) .name = mbedtls_##name

static const struct floe_tls_lib fn = {
    FN(ssl_config_init),
    FN(ssl_config_defaults),
    FN(ssl_config_free),
    FN(ssl_conf_min_version),
    FN(ssl_conf_rng),
    FN(ssl_conf_own_cert),
    FN(ssl_conf_ca_chain),
    FN(ssl_conf_authmode),
    FN(ssl_init),
    FN(ssl_setup),
    FN(ssl_set_bio),
    FN(ssl_handshake),
    FN(ssl_read),
    FN(ssl_check_pending),
    FN(ssl_close_notify),
    FN(ssl_free),
    FN(ssl_get_verify_result),
    FN(ssl_get_version),
    FN(ssl_get_ciphersuite),
    FN(x509_crt_init),
    FN(x509_crt_parse),
    FN(x509_crt_verify_info),
    FN(x509_crt_free),
};

int floe_tls_lib_load(char *err, size_t cap)
{
	return 0;
}

const struct floe_tls_lib *floe_tls_lib_get(void)
{
	return &fn;
}
