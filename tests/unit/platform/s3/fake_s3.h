/* For the S3 client tests against fake_http.h's server: the test keys, and the client
 * options every such test starts from (test code only; included once per program). */
#ifndef FLOE_TEST_FAKE_S3_H
#define FLOE_TEST_FAKE_S3_H

#include "fake_http.h"
#include "platform/s3/s3.h"

#define AK "TESTACCESSKEY0000001"
#define SK "testsecretkey000000000000000000000000001"

/* Path-style bucket "bkt" in us-east-1 at sv (its URL into ep[cap], which must outlive
 * the options), signed with AK and SK, 5 s to connect and 5 s of stall at most. The test
 * sets the rest: retries, back-off, multipart sizes, injected time and randomness. */
static inline struct floe_s3_options fake_s3_options(const struct server *sv, char *ep, size_t cap)
{
	snprintf(ep, cap, "http://127.0.0.1:%d", sv->port);
	return (struct floe_s3_options){.endpoint = ep,
					.region = "us-east-1",
					.bucket = "bkt",
					.path_style = true,
					.credentials = {AK, SK, NULL, NULL},
					.connect_timeout_ms = 5000,
					.stall_timeout_ms = 5000};
}

#endif
