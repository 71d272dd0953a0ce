/* floe_strerror describes the platform's S3 codes exactly as the platform does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "formats/base/error.h"
#include "platform/s3.h"

static void test_s3_codes_agree(void **state)
{
	(void)state;
	for (int code = FLOE_S3_ELOWEST; code <= FLOE_S3_EPRECONDITION; code++)
		assert_string_equal(floe_strerror(code), floe_s3_strerror(code));
	assert_string_equal(floe_strerror(FLOE_S3_ELOWEST - 1), "unknown floe error");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_s3_codes_agree)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
