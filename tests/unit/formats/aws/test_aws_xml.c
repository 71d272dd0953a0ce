/* Tests of formats/aws/xml: the bounded scanner (entities, CDATA, comments, namespaces,
 * limits, malformed input with offsets) and the S3 list/upload readers, all allocation
 * through a budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/aws/xml.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct floe_alloc budget;

static int find(const char *doc, const char *name, char *out, size_t cap)
{
	floe_alloc_init(&budget, 64 * 1024);
	int rc = floe_aws_xml_find(&budget, doc, strlen(doc), name, out, cap, NULL);
	assert_int_equal(budget.used, 0);
	return rc;
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
	assert_int_equal(find(doc, "Missing", out, sizeof(out)), FLOE_ENOTFOUND);
	assert_int_equal(find(doc, "Code", out, 4), FLOE_ELIMIT);
	/* The scanner's state comes from the budget: none left, none taken. */
	floe_alloc_init(&budget, 1024);
	assert_int_equal(floe_aws_xml_find(&budget, doc, strlen(doc), "Code", out, sizeof(out), NULL),
			 FLOE_ENOMEM);
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
		if (rc != FLOE_EPARSE)
			fail_msg("case %zu (%s): %d", i, bad[i], rc);
	}
	struct floe_err e;
	floe_err_clear(&e);
	struct floe_aws_xml_handler h = {0};
	assert_int_equal(floe_aws_xml_walk(NULL, "<a><b></c></a>", 14, &h, &e), FLOE_EPARSE);
	assert_int_equal(e.code, FLOE_EPARSE);
	assert_int_equal(e.offset, 6);
	assert_string_equal(e.msg, "XML: an end tag that closes no open element at byte 6");

	/* Nesting beyond the limit, and text beyond the limit. */
	char deep[40 * 3 + 1] = "";
	for (int i = 0; i < 40; i++)
		strcat(deep, "<a>");
	assert_int_equal(find(deep, "zz", out, sizeof(out)), FLOE_ELIMIT);
	size_t n = FLOE_AWS_XML_MAX_TEXT + 16;
	char *big = malloc(n + 8);
	memcpy(big, "<a>", 3);
	memset(big + 3, 'x', n);
	memcpy(big + 3 + n, "</a>", 5);
	assert_int_equal(find(big, "a", out, sizeof(out)), FLOE_ELIMIT);
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
	assert_int_equal(floe_aws_xml_list(NULL, doc, strlen(doc), collect, acc, &tr, tok, 8, NULL),
			 0);
	assert_string_equal(acc, "a:1,b/ c:2,");
	assert_true(tr);
	assert_string_equal(tok, "T");
	int count = 0;
	struct floe_err e;
	floe_err_clear(&e);
	assert_int_equal(
	    floe_aws_xml_list(NULL, doc, strlen(doc), stop_at_two, &count, &tr, tok, 8, &e), 77);
	assert_int_equal(e.code, 0); /* the callback's code: the reader did not fail */
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
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		floe_err_clear(&e);
		int rc = floe_aws_xml_list(NULL, bad[i], strlen(bad[i]), collect, acc, &tr, tok, 8, &e);
		if (rc != FLOE_EFORMAT && rc != FLOE_EPARSE)
			fail_msg("case %zu (%s): %d", i, bad[i], rc);
		assert_int_equal(e.code, rc);
	}
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
	struct floe_aws_xml_markers next = {km, 8, um, 8};
	assert_int_equal(
	    floe_aws_xml_uploads(NULL, doc, strlen(doc), collect_up, acc, &tr, &next, NULL), 0);
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
