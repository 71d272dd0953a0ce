/* mbedtls' TLS and X.509 functions that the TLS server (platform/tls.c) calls, reached
 * through a table rather than linked: libmbedtls and libmbedx509 map about 0.17 MiB into
 * every agent, and only one with a tls:// syslog listener uses them. They are loaded when
 * the first TLS server is made (tls_lib_dl.c); a static build links them instead
 * (tls_lib_linked.c). libmbedcrypto (keys, hashes, the random generator, mbedtls_strerror)
 * stays linked: S3 signing and every commit use it. The sonames are named once, in
 * tls_lib_dl.c. Each member has the type of the function it stands for (__typeof__), so
 * a call through the table is checked against mbedtls' own prototypes. */
#ifndef FLOE_PLATFORM_TLS_LIB_H
#define FLOE_PLATFORM_TLS_LIB_H

#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#define FLOE_TLS_LIB_FN(name) __typeof__(mbedtls_##name) *name

struct floe_tls_lib {
	FLOE_TLS_LIB_FN(ssl_config_init);
	FLOE_TLS_LIB_FN(ssl_config_defaults);
	FLOE_TLS_LIB_FN(ssl_config_free);
	FLOE_TLS_LIB_FN(ssl_conf_min_version);
	FLOE_TLS_LIB_FN(ssl_conf_rng);
	FLOE_TLS_LIB_FN(ssl_conf_own_cert);
	FLOE_TLS_LIB_FN(ssl_conf_ca_chain);
	FLOE_TLS_LIB_FN(ssl_conf_authmode);
	FLOE_TLS_LIB_FN(ssl_init);
	FLOE_TLS_LIB_FN(ssl_setup);
	FLOE_TLS_LIB_FN(ssl_set_bio);
	FLOE_TLS_LIB_FN(ssl_handshake);
	FLOE_TLS_LIB_FN(ssl_read);
	FLOE_TLS_LIB_FN(ssl_check_pending);
	FLOE_TLS_LIB_FN(ssl_close_notify);
	FLOE_TLS_LIB_FN(ssl_free);
	FLOE_TLS_LIB_FN(ssl_get_verify_result);
	FLOE_TLS_LIB_FN(ssl_get_version);
	FLOE_TLS_LIB_FN(ssl_get_ciphersuite);
	FLOE_TLS_LIB_FN(x509_crt_init);
	FLOE_TLS_LIB_FN(x509_crt_parse);
	FLOE_TLS_LIB_FN(x509_crt_verify_info);
	FLOE_TLS_LIB_FN(x509_crt_free);
};

/* The table, once floe_tls_lib_load (platform/tls.h) has returned 0; NULL before. */
const struct floe_tls_lib *floe_tls_lib_get(void);

#endif
