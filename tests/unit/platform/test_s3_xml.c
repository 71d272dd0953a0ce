/* Tests of platform/s3_xml: the bounded scanner (entities, CDATA, comments, namespaces,
 * limits, malformed input with offsets) and the S3 list/upload readers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/s3.h"
#include "platform/s3_xml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find(const char *doc, const char *name, char *out, size_t cap)
{
	return floe_s3_xml_find(doc, strlen(doc), name, out, cap);
}

static void test_find_and_entities(void **state)
{
	char out[64];
	const char *doc = "<?xml version=\"1.0\"?>\n<!-- c -->\n"
			  "<s3:Error xmlns:s3=\"x\" a='>/'><s3:Code>A&amp;B&lt;&gt;&quot;&apos;"
			  "&#65;&#x42;&#xe9;<![CDATA[<raw&>]]></s3:Code><Empty/></s3:Error>\n";
	assert_int_equal(find(doc, "Code", out, sizeof(out)), 0);
	assert_string_equal(out, "A&B<>\"'AB\xc3\xa9<raw&>");
	assert_int_equal(find(doc, "Empty", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(find(doc, "Missing", out, sizeof(out)), -ENOENT);
	assert_int_equal(find(doc, "Code", out, 4), -ENOSPC);
}

static void test_malformed(void **state)
{
	const char *bad[] = {
	    "",
	    "<a>",
	    "<a></b>",
	    "<a>&bogus;</a>",
	    "<a>&#0;</a>",
	    "<a>&#xD800;</a>",
	    "<a>&#x110000;</a>",
	    "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>",
	    "<a></a><b></b>",
	    "text<a></a>",
	    "<a b=\"unterminated></a>",
	    "<a><![CDATA[x</a>",
	    "<a><!-- x </a>",
	    "</a>",
	    "<>",
	};
	char out[16];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = find(bad[i], "zz", out, sizeof(out));
		if (rc != FLOE_S3_EPROTO)
			fail_msg("case %zu (%s): %d", i, bad[i], rc);
	}
	size_t off = 0;
	struct floe_s3_xml_handler h = {0};
	assert_int_equal(floe_s3_xml_walk("<a><b></c></a>", 14, &h, &off), FLOE_S3_EPROTO);
	assert_int_equal(off, 6);

	/* Nesting beyond the limit, and text beyond the limit. */
	char deep[40 * 3 + 1] = "";
	for (int i = 0; i < 40; i++)
		strcat(deep, "<a>");
	assert_int_equal(find(deep, "zz", out, sizeof(out)), FLOE_S3_EPROTO);
	size_t n = FLOE_S3_XML_MAX_TEXT + 16;
	char *big = malloc(n + 8);
	memcpy(big, "<a>", 3);
	memset(big + 3, 'x', n);
	memcpy(big + 3 + n, "</a>", 5);
	assert_int_equal(find(big, "a", out, sizeof(out)), FLOE_S3_EPROTO);
	free(big);
}

static int collect(void *ctx, const char *key, int64_t size)
{
	char line[64];
	snprintf(line, sizeof(line), "%s:%lld,", key, (long long)size);
	strcat(ctx, line);
	return 0;
}

static int stop_at_two(void *ctx, const char *key, int64_t size)
{
	int *n = ctx;
	return ++*n == 2 ? 77 : 0;
}

static void test_list(void **state)
{
	const char *doc = "<ListBucketResult><IsTruncated>true</IsTruncated>"
			  "<Contents><Key>a</Key><Size>1</Size></Contents>"
			  "<CommonPrefixes><Prefix>p/</Prefix></CommonPrefixes>"
			  "<Contents><Size>2</Size><Key>b/&#x20;c</Key></Contents>"
			  "<NextContinuationToken>T</NextContinuationToken></ListBucketResult>";
	char acc[128] = "", tok[8];
	bool tr = false;
	assert_int_equal(floe_s3_xml_parse_list(doc, strlen(doc), collect, acc, &tr, tok, 8), 0);
	assert_string_equal(acc, "a:1,b/ c:2,");
	assert_true(tr);
	assert_string_equal(tok, "T");
	int count = 0;
	assert_int_equal(floe_s3_xml_parse_list(doc, strlen(doc), stop_at_two, &count, &tr, tok, 8),
			 77);
	/* Truncated without a token, bad sizes, missing keys, bad booleans. */
	const char *bad[] = {
	    "<L><IsTruncated>true</IsTruncated></L>",
	    "<L><Contents><Key>a</Key><Size>-1</Size></Contents></L>",
	    "<L><Contents><Key>a</Key><Size>99999999999999999999</Size></Contents></L>",
	    "<L><Contents><Size>1</Size></Contents></L>",
	    "<L><Contents><Key>a</Key></Contents></L>",
	    "<L><IsTruncated>yes</IsTruncated></L>",
	    "<L><Contents><Key>a&#0;</Key><Size>1</Size></Contents></L>",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(
		    floe_s3_xml_parse_list(bad[i], strlen(bad[i]), collect, acc, &tr, tok, 8),
		    FLOE_S3_EPROTO);
}

static int collect_up(void *ctx, const char *key, const char *id, const char *when)
{
	char line[128];
	snprintf(line, sizeof(line), "%s/%s/%s,", key, id, when);
	strcat(ctx, line);
	return 0;
}

static void test_uploads(void **state)
{
	const char *doc = "<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
			  "<NextKeyMarker>k2</NextKeyMarker><NextUploadIdMarker>u2"
			  "</NextUploadIdMarker><Upload><Key>k1</Key><UploadId>u1</UploadId>"
			  "<Initiated>2020</Initiated><Owner><ID>x</ID></Owner></Upload>"
			  "</ListMultipartUploadsResult>";
	char acc[128] = "", km[8], um[8];
	bool tr = false;
	assert_int_equal(
	    floe_s3_xml_parse_uploads(doc, strlen(doc), collect_up, acc, &tr, km, 8, um, 8), 0);
	assert_string_equal(acc, "k1/u1/2020,");
	assert_true(tr);
	assert_string_equal(km, "k2");
	assert_string_equal(um, "u2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_find_and_entities),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_list),
	    cmocka_unit_test(test_uploads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
