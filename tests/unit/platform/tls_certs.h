/* Test certificates made at run time with mbedtls (no key material in the tree, nothing
 * to expire): P-256 keys, a CA, and certificates it signs, written as PEM files. Shared by
 * test_tls.c and bench_listen.c. */
#ifndef FLOE_TEST_TLS_CERTS_H
#define FLOE_TEST_TLS_CERTS_H

#include <stdio.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

struct test_key {
	mbedtls_pk_context pk;
};

static mbedtls_ctr_drbg_context *test_drbg(void)
{
	static mbedtls_entropy_context ent;
	static mbedtls_ctr_drbg_context drbg;
	static int ready;
	if (!ready) {
		mbedtls_entropy_init(&ent);
		mbedtls_ctr_drbg_init(&drbg);
		if (mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &ent, NULL, 0))
			return NULL;
		ready = 1;
	}
	return &drbg;
}

static int write_file(const char *path, const unsigned char *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	size_t w = fwrite(p, 1, n, f);
	return fclose(f) == 0 && w == n ? 0 : -1;
}

/* A new P-256 key, also written to key_path (PEM) when it is not NULL. */
static int test_key_new(struct test_key *k, const char *key_path)
{
	mbedtls_pk_init(&k->pk);
	if (mbedtls_pk_setup(&k->pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) ||
	    mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(k->pk),
				mbedtls_ctr_drbg_random, test_drbg()))
		return -1;
	if (!key_path)
		return 0;
	unsigned char buf[4096];
	if (mbedtls_pk_write_key_pem(&k->pk, buf, sizeof(buf)))
		return -1;
	return write_file(key_path, buf, strlen((char *)buf));
}

static void test_key_free(struct test_key *k)
{
	mbedtls_pk_free(&k->pk);
}

/* Writes a certificate for subject's key, named subject_dn, signed by issuer's key under
 * issuer_dn (the same key and name for a self-signed CA), to cert_path (PEM). */
static int test_cert_write(const char *cert_path, struct test_key *subject, const char *subject_dn,
			   struct test_key *issuer, const char *issuer_dn, int is_ca, int serial_no)
{
	mbedtls_x509write_cert c;
	mbedtls_mpi serial;
	unsigned char buf[4096];
	int rc = -1;
	mbedtls_x509write_crt_init(&c);
	mbedtls_mpi_init(&serial);
	mbedtls_x509write_crt_set_version(&c, MBEDTLS_X509_CRT_VERSION_3);
	mbedtls_x509write_crt_set_md_alg(&c, MBEDTLS_MD_SHA256);
	mbedtls_x509write_crt_set_subject_key(&c, &subject->pk);
	mbedtls_x509write_crt_set_issuer_key(&c, &issuer->pk);
	if (mbedtls_mpi_lset(&serial, serial_no) || mbedtls_x509write_crt_set_serial(&c, &serial) ||
	    mbedtls_x509write_crt_set_subject_name(&c, subject_dn) ||
	    mbedtls_x509write_crt_set_issuer_name(&c, issuer_dn) ||
	    mbedtls_x509write_crt_set_validity(&c, "20200101000000", "20991231235959") ||
	    mbedtls_x509write_crt_set_basic_constraints(&c, is_ca, -1) ||
	    mbedtls_x509write_crt_pem(&c, buf, sizeof(buf), mbedtls_ctr_drbg_random, test_drbg()))
		goto out;
	rc = write_file(cert_path, buf, strlen((char *)buf));
out:
	mbedtls_mpi_free(&serial);
	mbedtls_x509write_crt_free(&c);
	return rc;
}

#endif
