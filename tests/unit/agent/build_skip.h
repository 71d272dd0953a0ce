/* For the tests with cases that a smaller build cannot run, skipped there (cmocka lists
 * them as SKIPPED): NEEDS_PCRE2() at the top of a case that uses a pattern (a regex
 * parser, a multiline start, a where.matches) in a build without PCRE2 (FLOE_NO_PCRE2,
 * where agent/parse/regex_none.c refuses every pattern), NEEDS_S3() in one with an s3://
 * warehouse in a build without the S3 client (FLOE_NO_S3). PATTERN_ERROR(code) is what a
 * bad pattern gets: code, or FLOE_EUNSUPPORTED without PCRE2 (every pattern is refused).
 * Include after cmocka.h. */
#ifndef FLOE_TEST_BUILD_SKIP_H
#define FLOE_TEST_BUILD_SKIP_H

#include "formats/base/error.h"

#ifdef FLOE_NO_PCRE2
#define NEEDS_PCRE2() skip()
#define PATTERN_ERROR(code) FLOE_EUNSUPPORTED
#else
#define NEEDS_PCRE2() ((void)0)
#define PATTERN_ERROR(code) (code)
#endif

#ifdef FLOE_NO_S3
#define NEEDS_S3() skip()
#else
#define NEEDS_S3() ((void)0)
#endif

#endif
