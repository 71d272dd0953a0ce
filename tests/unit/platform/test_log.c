/* Tests of platform/log: the text line, and the JSON line of agent.log_format: json, whose
 * message is escaped (quotes, backslashes, control characters) with ill-formed UTF-8
 * replaced, and cut at a whole character when long, so that every line parses. stderr
 * is redirected to a temporary file for each test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/log.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs floe_log(level, "%s", msg) with stderr in a temporary file; returns what it wrote
 * (owned by the caller). */
static char *capture(enum floe_log_format format, enum floe_log_level level, const char *msg)
{
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	assert_true(dup2(fileno(tmp), 2) >= 0);
	floe_log_set_format(format);
	floe_log(level, "%s", msg);
	fflush(stderr);
	floe_log_set_format(FLOE_LOG_TEXT);
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	long n = ftell(tmp);
	assert_true(n >= 0);
	char *out = calloc(1, (size_t)n + 1);
	assert_non_null(out);
	rewind(tmp);
	assert_int_equal(fread(out, 1, (size_t)n, tmp), (size_t)n);
	fclose(tmp);
	return out;
}

static void assert_matches(const char *s, const char *pattern)
{
	regex_t re;
	assert_int_equal(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
	int rc = regexec(&re, s, 0, NULL, 0);
	regfree(&re);
	if (rc != 0)
		fail_msg("'%s' does not match %s", s, pattern);
}

static void test_text(void **state)
{
	(void)state;
	char *out = capture(FLOE_LOG_TEXT, FLOE_LOG_WARN, "disk \"full\"");
	assert_matches(
	    out, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z floe warn: "
		 "disk \"full\"\n$");
	free(out);
}

static void test_json_escapes(void **state)
{
	(void)state;
	char *out =
	    capture(FLOE_LOG_JSON, FLOE_LOG_ERROR, "a \"b\" c\\d\ne\tf\x01g \xc3\xa9 \xff\xc3");
	const char *tail = strstr(out, ",\"level\"");
	assert_non_null(tail);
	assert_string_equal(tail,
			    ",\"level\":\"error\",\"msg\":\"a \\\"b\\\" c\\\\d\\ne\\tf\\u0001g "
			    "\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd\"}\n");
	assert_matches(out,
		       "^\\{\"time\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\."
		       "[0-9]{3}Z\",");
	free(out);
}

/* A message that escapes to more than the line holds is cut before a whole escape, and
 * the line still closes. */
static void test_json_long_message(void **state)
{
	(void)state;
	char msg[1000];
	memset(msg, '\x02', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	char *out = capture(FLOE_LOG_JSON, FLOE_LOG_INFO, msg);
	size_t n = strlen(out);
	assert_true(n < 2048);
	assert_matches(out,
		       "^\\{\"time\":\"[^\"]*\",\"level\":\"info\",\"msg\":\"(\\\\u0002)+\"\\}\n$");
	free(out);
}

/* A status line: drawn in place, log lines go above it (it is cleared and drawn again
 * after them), a newline in it ends it, and NULL clears it. */
static void test_status_line(void **state)
{
	(void)state;
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	assert_true(dup2(fileno(tmp), 2) >= 0);
	floe_log_status("progress: 1\nnot this");
	floe_log_set_format(FLOE_LOG_JSON);
	floe_log(FLOE_LOG_INFO, "x");
	floe_log_set_format(FLOE_LOG_TEXT);
	floe_log_status(NULL);
	floe_log(FLOE_LOG_INFO, "y");
	fflush(stderr);
	assert_true(dup2(saved, 2) >= 0);
	close(saved);
	char out[512] = {0};
	rewind(tmp);
	size_t n = fread(out, 1, sizeof(out) - 1, tmp);
	fclose(tmp);
	out[n] = '\0';
	assert_matches(out, "^\rprogress: 1\033\\[K"
			    "\r\033\\[K\\{\"time\":\"[^\"]*\",\"level\":\"info\",\"msg\":\"x\"\\}\n"
			    "progress: 1\033\\[K"
			    "\r\033\\[K"
			    "[0-9T:.Z-]+ floe info: y\n$");
}

static void test_below_threshold(void **state)
{
	(void)state;
	char *out = capture(FLOE_LOG_JSON, FLOE_LOG_DEBUG, "quiet");
	assert_string_equal(out, "");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_text),
	    cmocka_unit_test(test_json_escapes),
	    cmocka_unit_test(test_json_long_message),
	    cmocka_unit_test(test_below_threshold),
	    cmocka_unit_test(test_status_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
