/* For the parser tests: fails the test unless the parsed fields hold key k with exactly
 * the vl bytes at v. Include after cmocka.h and agent/parse/fields.h. */
#ifndef FLOE_TEST_FIELDS_EXPECT_H
#define FLOE_TEST_FIELDS_EXPECT_H

#include <string.h>

static inline void expect_field(const struct floe_fields *f, const char *k, const char *v,
				size_t vl)
{
	const char *got;
	size_t gl;
	if (!floe_fields_find(f, k, strlen(k), &got, &gl))
		fail_msg("no field %s", k);
	if (gl != vl || memcmp(got, v, gl) != 0)
		fail_msg("field %s: got '%.*s', want '%.*s'", k, (int)gl, got, (int)vl, v);
}

#endif
