/* Tests of agent/input/preflight: which patterns could match files in a directory (the
 * agent's own state and warehouse), braces included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/input/preflight.h"

static void test_could_match_under(void **state)
{
	static const struct {
		const char *pattern, *dir;
		bool want;
	} cases[] = {
	    {"/var/lib/floe/*.json", "/var/lib/floe", true},
	    {"/var/lib/floe/state/*.json", "/var/lib/floe", true},
	    {"/var/lib/*", "/var/lib/floe", false}, /* the directory itself, not a file in it */
	    {"/var/lib/*/*", "/var/lib/floe", true},
	    {"/var/*/*/*", "/var/lib/floe", true},
	    {"/var/log/*.log", "/var/lib/floe", false},
	    {"/var/l?b/fl[a-z]e/x", "/var/lib/floe", true},
	    {"/var/{log,lib}/floe/*", "/var/lib/floe", true},
	    {"/var/{log,tmp}/floe/*", "/var/lib/floe", false},
	    {"/var/{log,l{a,i}b}/floe/*", "/var/lib/floe", true},
	    {"/*/*/*/m", "/", true},
	    {"/srv/*/x", "/srv/.floe", false}, /* a wildcard matches no leading dot */
	    {"/srv/.*/x", "/srv/.floe", true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = floe_preflight_could_match_under(cases[i].pattern, cases[i].dir);
		if (got != cases[i].want)
			fail_msg("%s under %s: got %d", cases[i].pattern, cases[i].dir, got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_could_match_under),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
