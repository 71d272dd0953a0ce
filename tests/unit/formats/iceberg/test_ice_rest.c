/* Tests for the REST catalog's documents: the configuration merged in the spec's order
 * with its endpoints and idempotency window, a loaded table with its metadata and the
 * longest-prefix storage credential, errors and tokens (and the shapes refused), paths,
 * and the create and commit requests byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/iceberg/rest.h"
#include "formats/json/json.h"

#define S(x) x, strlen(x)

static void test_config(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	static const struct floe_ice_kv client[] = {{"b", "client"}, {"c", "client"}};
	const char *json = "{\"defaults\":{\"a\":\"default\",\"b\":\"default\"},"
			   "\"overrides\":{\"c\":\"override\"},\"extra\":[1,2]}";
	struct floe_rest_config *c;
	assert_int_equal(floe_rest_config_parse(&a, S(json), 0, client, 2, &c, NULL), 0);
	assert_string_equal(floe_rest_config_get(c, "a"), "default");
	assert_string_equal(floe_rest_config_get(c, "b"), "client");
	assert_string_equal(floe_rest_config_get(c, "c"), "override");
	assert_null(floe_rest_config_get(c, "d"));
	/* No endpoints listed: the spec's default set, which has no credentials endpoint. */
	assert_true(floe_rest_config_serves(c, "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"));
	assert_false(floe_rest_config_serves(
	    c, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"));
	assert_int_equal(floe_rest_config_idempotency_ms(c), 0);
	floe_rest_config_free(c);

	json = "{\"defaults\":{},\"overrides\":{},\"endpoints\":[\"GET /v1/{prefix}/namespaces/"
	       "{namespace}/tables/{table}/credentials\"],\"idempotency-key-lifetime\":\"PT30M\"}";
	assert_int_equal(floe_rest_config_parse(&a, S(json), 0, NULL, 0, &c, NULL), 0);
	assert_true(floe_rest_config_serves(
	    c, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials"));
	assert_false(floe_rest_config_serves(c, "POST /v1/{prefix}/namespaces"));
	assert_int_equal(floe_rest_config_idempotency_ms(c), 1800000);
	floe_rest_config_free(c);

	static const struct {
		const char *iso;
		int64_t ms;
	} durations[] = {{"P1DT2H", 93600000}, {"PT1H30M", 5400000}, {"PT45S", 45000},
			 {"P1Y", 0},	       {"PT", 0},	       {"P", 0},
			 {"PT1M1H", 0},	       {"30M", 0},	       {"PT1.5S", 0}};
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		char doc[128];
		snprintf(doc, sizeof(doc), "{\"defaults\":{},\"overrides\":{},"
					   "\"idempotency-key-lifetime\":\"%s\"}",
			 durations[i].iso);
		assert_int_equal(floe_rest_config_parse(&a, S(doc), 0, NULL, 0, &c, NULL), 0);
		assert_true(floe_rest_config_idempotency_ms(c) == durations[i].ms);
		floe_rest_config_free(c);
	}

	static const struct {
		const char *doc;
		int rc;
	} bad[] = {
	    {"{\"defaults\":[],\"overrides\":{}}", FLOE_EFORMAT},
	    {"{\"defaults\":{\"a\":1},\"overrides\":{}}", FLOE_EFORMAT},
	    {"{\"defaults\":{},\"overrides\":{},\"endpoints\":\"GET /\"}", FLOE_EFORMAT},
	    {"{\"defaults\":{},\"overrides\":{},\"endpoints\":[7]}", FLOE_EFORMAT},
	    {"[]", FLOE_EFORMAT},
	    {"{\"defaults\":", FLOE_EPARSE},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct floe_err err = {0};
		assert_int_equal(floe_rest_config_parse(&a, S(bad[i].doc), 0, NULL, 0, &c, &err),
				 bad[i].rc);
		assert_null(c);
		assert_true(err.msg[0] != '\0');
	}
	assert_int_equal(floe_rest_config_parse(&a, S(json), 16, NULL, 0, &c, NULL), FLOE_ELIMIT);
	assert_int_equal(a.used, 0);
}

static const struct floe_ice_field FIELDS[] = {
    {.id = 1, .name = "ts", .type = "timestamptz", .required = true},
    {.id = 2, .name = "message", .type = "string"},
};
static const struct floe_ice_partition_field PFIELDS[] = {
    {.source_id = 1, .field_id = 1000, .name = "ts_day", .transform = "day"},
};

/* A LoadTableResult around a real table's metadata. */
static void table_json(struct floe_buf *out, const char *rest)
{
	struct floe_ice_meta *m = NULL;
	assert_int_equal(floe_ice_meta_create(NULL, "9c12d441-03fe-4693-9a96-a0705ddf69c1",
					      "s3://b/wh/tbl", FIELDS, 2, PFIELDS, 1, NULL, 0, 5, &m),
			 0);
	floe_buf_init(out, NULL, 1 << 20);
	assert_int_equal(floe_buf_puts(out, "{\"metadata\":"), 0);
	assert_int_equal(floe_ice_meta_write(m, out), 0);
	assert_int_equal(floe_buf_puts(out, rest), 0);
	floe_ice_meta_free(m);
}

static int collect_signing(void *ctx, char kind, const char *name, const char *value)
{
	char *out = ctx;
	size_t n = strlen(out);
	snprintf(out + n, 512 - n, "%c:%s=%s;", kind, name, value);
	return 0;
}

static void test_table(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_buf b;
	struct floe_rest_table *t;
	table_json(&b, ",\"metadata-location\":\"s3://b/wh/tbl/metadata/1.json\","
		       "\"config\":{\"s3.endpoint\":\"http://127.0.0.1:1\",\"s3.access-key-id\":\"CFG\"},"
		       "\"storage-credentials\":["
		       "{\"prefix\":\"s3://b/\",\"config\":{\"s3.access-key-id\":\"K1\"}},"
		       "{\"prefix\":\"s3://b/wh/tbl\",\"config\":{\"s3.access-key-id\":\"K2\"}},"
		       "{\"prefix\":\"s3://b/wh\",\"config\":{\"s3.access-key-id\":\"K3\"}}],"
		       "\"future-member\":{}}");
	assert_int_equal(floe_rest_table_parse(&a, (const char *)b.data, b.len, 0, &t, NULL), 0);
	assert_string_equal(floe_rest_table_location(t), "s3://b/wh/tbl/metadata/1.json");
	assert_string_equal(floe_ice_meta_location(floe_rest_table_metadata(t)), "s3://b/wh/tbl");
	assert_string_equal(floe_rest_table_config(t, "s3.endpoint"), "http://127.0.0.1:1");
	assert_string_equal(floe_rest_table_storage(t, "s3://b/wh/tbl/data/x.parquet",
						    "s3.access-key-id"),
			    "K2");
	assert_string_equal(floe_rest_table_storage(t, "s3://b/other", "s3.access-key-id"), "K1");
	/* No credential matches: the table's config answers. */
	assert_string_equal(floe_rest_table_storage(t, "s3://c/x", "s3.access-key-id"), "CFG");
	/* A credential matches but lacks the key: its absence is the answer. */
	assert_null(floe_rest_table_storage(t, "s3://b/x", "s3.session-token"));
	/* Where the keys go is not a secret: a credential without it leaves it to the
	 * table's config, then to the catalog's, each asked for every spelling in turn. */
	static const char *const EP[] = {"s3.endpoint", NULL};
	static const char *const RG[] = {"client.region", "s3.region", NULL};
	static const char *const AK[] = {"s3.access-key-id", NULL};
	struct floe_rest_config *conf = NULL;
	static const char CONF[] = "{\"defaults\":{\"s3.region\":\"eu-2\",\"s3.endpoint\":\"http://d\"},"
				   "\"overrides\":{}}";
	assert_int_equal(floe_rest_config_parse(&a, CONF, sizeof(CONF) - 1, 0, NULL, 0, &conf, NULL), 0);
	assert_string_equal(floe_rest_table_setting(t, "s3://b/wh/tbl/d", conf, EP), "http://127.0.0.1:1");
	assert_string_equal(floe_rest_table_setting(t, "s3://b/wh/tbl/d", conf, RG), "eu-2");
	assert_null(floe_rest_table_setting(t, "s3://b/wh/tbl/d", NULL, RG));
	assert_string_equal(floe_rest_table_setting(t, "s3://b/wh/tbl/d", conf, AK), "K2");
	floe_rest_config_free(conf);
	floe_rest_table_free(t);

	/* A LoadCredentialsResponse: its credentials answer as a table's, without metadata. */
	static const char CREDS[] = "{\"storage-credentials\":[{\"prefix\":\"s3://b/wh\","
				    "\"config\":{\"s3.access-key-id\":\"K9\"}}]}";
	assert_int_equal(floe_rest_credentials_parse(&a, S(CREDS), 0, &t, NULL), 0);
	assert_null(floe_rest_table_metadata(t));
	assert_string_equal(floe_rest_table_storage(t, "s3://b/wh/tbl", "s3.access-key-id"), "K9");
	assert_null(floe_rest_table_setting(t, "s3://b/wh/tbl", NULL, EP));
	floe_rest_table_free(t);
	static const char *const BAD[] = {"{}", "{\"storage-credentials\":{}}", "[]",
					  "{\"storage-credentials\":[{\"prefix\":1,\"config\":{}}]}",
					  "{\"storage-credentials\":[{\"prefix\":\"s3://\",\"config\":{\"k\":2}}]}"};
	for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
		assert_int_not_equal(floe_rest_credentials_parse(&a, S(BAD[i]), 0, &t, NULL), 0);
		assert_null(t);
	}
	floe_buf_fini(&b);

	table_json(&b, ",\"metadata-location\":null}");
	assert_int_equal(floe_rest_table_parse(&a, (const char *)b.data, b.len, 0, &t, NULL), 0);
	assert_null(floe_rest_table_location(t));
	assert_null(floe_rest_table_credential(t, "s3://b/"));
	char got[512] = "";
	assert_int_equal(floe_rest_table_signing(t, collect_signing, got), 0);
	assert_string_equal(got, "");
	floe_rest_table_free(t);
	floe_buf_fini(&b);

	/* A remote-signing-config: its properties, then each value of its headers. */
	table_json(&b, ",\"remote-signing-config\":{\"properties\":{\"tenant\":\"t-7\",\"z\":\"1\"},"
		       "\"headers\":{\"X-Sign\":[\"a\",\"b\"]}}}");
	assert_int_equal(floe_rest_table_parse(&a, (const char *)b.data, b.len, 0, &t, NULL), 0);
	assert_int_equal(floe_rest_table_signing(t, collect_signing, got), 0);
	assert_string_equal(got, "p:tenant=t-7;p:z=1;h:X-Sign=a;h:X-Sign=b;");
	floe_rest_table_free(t);
	floe_buf_fini(&b);

	static const char *const bad[] = {
	    ",\"metadata-location\":5}",
	    ",\"config\":{\"k\":true}}",
	    ",\"storage-credentials\":{}}",
	    ",\"storage-credentials\":[{\"config\":{}}]}",
	    ",\"storage-credentials\":[{\"prefix\":\"s3://\"}]}",
	    ",\"storage-credentials\":[{\"prefix\":\"s3://\",\"config\":{\"k\":1}}]}",
	    ",\"remote-signing-config\":[]}",
	    ",\"remote-signing-config\":{\"properties\":{\"k\":1}}}",
	    ",\"remote-signing-config\":{\"headers\":{\"k\":\"v\"}}}",
	    ",\"remote-signing-config\":{\"headers\":[]}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct floe_err err = {0};
		table_json(&b, bad[i]);
		assert_int_equal(floe_rest_table_parse(&a, (const char *)b.data, b.len, 0, &t, &err),
				 FLOE_EFORMAT);
		assert_null(t);
		floe_buf_fini(&b);
	}
	assert_int_equal(floe_rest_table_parse(&a, S("{\"metadata\":{}}"), 0, &t, NULL),
			 FLOE_EFORMAT);
	assert_int_equal(floe_rest_table_parse(&a, S("{}"), 0, &t, NULL), FLOE_EFORMAT);
	assert_int_equal(a.used, 0);
}

static void test_error_and_token(void **state)
{
	(void)state;
	struct floe_rest_error e;
	const char *json = "{\"error\":{\"message\":\"Requirement failed:\\nbranch main has "
			   "changed\",\"type\":\"CommitFailedException\",\"code\":409}}";
	assert_int_equal(floe_rest_error_parse(S(json), &e), 0);
	assert_int_equal(e.code, 409);
	assert_string_equal(e.type, "CommitFailedException");
	assert_string_equal(e.message, "Requirement failed: branch main has changed");
	assert_int_equal(floe_rest_error_parse(S("<html>502</html>"), &e), FLOE_EFORMAT);
	assert_int_equal(floe_rest_error_parse(S("{\"error\":\"x\"}"), &e), FLOE_EFORMAT);
	assert_int_equal(floe_rest_error_parse(S("{\"error\":{\"code\":\"409\"}}"), &e), 0);
	assert_int_equal(e.code, 0);

	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_rest_token tok;
	json = "{\"access_token\":\"abc.def\",\"token_type\":\"Bearer\",\"expires_in\":3600,"
	       "\"issued_token_type\":\"urn:ietf:params:oauth:token-type:access_token\"}";
	assert_int_equal(floe_rest_token_parse(&a, S(json), &tok, NULL), 0);
	assert_string_equal(tok.access_token, "abc.def");
	assert_int_equal(tok.expires_in_s, 3600);
	floe_rest_token_free(&a, &tok);
	assert_int_equal(floe_rest_token_parse(&a, S("{\"access_token\":\"x\",\"token_type\":\"N_A\"}"),
					       &tok, NULL),
			 0);
	assert_int_equal(tok.expires_in_s, -1);
	floe_rest_token_free(&a, &tok);
	static const char *const bad[] = {
	    "{\"token_type\":\"bearer\"}",
	    "{\"access_token\":\"\",\"token_type\":\"bearer\"}",
	    "{\"access_token\":\"a\\u0000b\",\"token_type\":\"bearer\"}",
	    "{\"access_token\":\"x\",\"token_type\":\"mac\"}",
	    "{\"access_token\":\"x\"}",
	    "{\"access_token\":7,\"token_type\":\"bearer\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(floe_rest_token_parse(&a, S(bad[i]), &tok, NULL), FLOE_EFORMAT);
		assert_null(tok.access_token);
	}
	assert_int_equal(a.used, 0);
}

static void assert_buf(struct floe_buf *b, const char *want)
{
	assert_int_equal(floe_buf_terminate(b), 0);
	assert_string_equal((const char *)b->data, want);
	floe_buf_fini(b);
}

static void test_paths_and_requests(void **state)
{
	(void)state;
	struct floe_buf b;
	const char *ns[] = {"a", "b c"};
	floe_buf_init(&b, NULL, 4096);
	assert_int_equal(floe_rest_path("ws 1", ns, 2, NULL, "t/x", "/credentials", &b), 0);
	assert_buf(&b, "/v1/ws%201/namespaces/a%1Fb%20c/tables/t%2Fx/credentials");
	floe_buf_init(&b, NULL, 4096);
	assert_int_equal(floe_rest_path("", ns, 2, ".", NULL, NULL, &b), 0);
	assert_buf(&b, "/v1/namespaces/a.b%20c");
	floe_buf_init(&b, NULL, 4096);
	assert_int_equal(floe_rest_path(NULL, NULL, 0, NULL, NULL, "/config", &b), 0);
	assert_buf(&b, "/v1/config");
	const char *empty[] = {""};
	floe_buf_init(&b, NULL, 4096);
	assert_int_equal(floe_rest_path(NULL, empty, 1, NULL, NULL, NULL, &b), FLOE_EINVAL);
	floe_buf_fini(&b);

	floe_buf_init(&b, NULL, 4096);
	assert_int_equal(floe_rest_namespace_request(ns, 2, &b), 0);
	assert_buf(&b, "{\"namespace\":[\"a\",\"b c\"]}");

	static const struct floe_ice_kv props[] = {{"write.format.default", "parquet"}};
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_rest_create_request(NULL, "logs", NULL, FIELDS, 2, PFIELDS, 1, props,
						  1, &b),
			 0);
	assert_buf(&b, "{\"name\":\"logs\",\"schema\":{\"type\":\"struct\",\"schema-id\":0,"
		       "\"fields\":[{\"id\":1,\"name\":\"ts\",\"required\":true,\"type\":"
		       "\"timestamptz\"},{\"id\":2,\"name\":\"message\",\"required\":false,"
		       "\"type\":\"string\"}]},\"partition-spec\":{\"spec-id\":0,\"fields\":"
		       "[{\"name\":\"ts_day\",\"transform\":\"day\",\"source-id\":1,\"field-id\":"
		       "1000}]},\"write-order\":{\"order-id\":0,\"fields\":[]},\"stage-create\":"
		       "false,\"properties\":{\"write.format.default\":\"parquet\"}}");

	static const struct floe_ice_kv sum[] = {{"floe.commit-seq", "7"}};
	const struct floe_ice_snapshot s = {.snapshot_id = 42,
					    .parent_id = 41,
					    .sequence_number = 3,
					    .timestamp_ms = 1000,
					    .manifest_list = "s3://b/m.avro",
					    .operation = "append",
					    .summary = sum,
					    .summary_count = 1,
					    .schema_id = 0};
	struct floe_rest_commit c = {.table_uuid = "u-1",
				     .ref = "main",
				     .ref_snapshot_id = 41,
				     .snapshot = &s};
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_rest_commit_request(NULL, &c, &b), 0);
	assert_buf(&b, "{\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"u-1\"},"
		       "{\"type\":\"assert-ref-snapshot-id\",\"ref\":\"main\",\"snapshot-id\":41}],"
		       "\"updates\":[{\"action\":\"add-snapshot\",\"snapshot\":{\"snapshot-id\":42,"
		       "\"parent-snapshot-id\":41,\"sequence-number\":3,\"timestamp-ms\":1000,"
		       "\"summary\":{\"operation\":\"append\",\"floe.commit-seq\":\"7\"},"
		       "\"manifest-list\":\"s3://b/m.avro\",\"schema-id\":0}},{\"action\":"
		       "\"set-snapshot-ref\",\"ref-name\":\"main\",\"type\":\"branch\","
		       "\"snapshot-id\":42}]}");

	/* A commit that expires snapshots removes them and sets the raised watermark. */
	static const int64_t gone[] = {7, 9};
	static const struct floe_ice_kv wm[] = {{"floe.committed-seq.i1", "5"}};
	c.remove_ids = gone;
	c.nremove = 2;
	c.props = wm;
	c.nprops = 1;
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_rest_commit_request(NULL, &c, &b), 0);
	assert_int_equal(floe_buf_terminate(&b), 0);
	assert_non_null(strstr((const char *)b.data,
			       "\"snapshot-id\":42},{\"action\":\"remove-snapshots\",\"snapshot-ids\":[7,9]},"
			       "{\"action\":\"set-properties\",\"updates\":{\"floe.committed-seq.i1\":\"5\"}}]}"));
	floe_buf_fini(&b);
	c.remove_ids = NULL;
	c.nremove = 0;
	c.props = NULL;
	c.nprops = 0;

	/* The first snapshot, with a schema change: the branch must not exist yet. */
	struct floe_json_doc *d = NULL;
	assert_int_equal(floe_json_parse(NULL, S("{\"type\":\"struct\",\"fields\":[]}"), 0, &d, NULL),
			 0);
	c.ref_snapshot_id = -1;
	c.schema = floe_json_root(d);
	c.base_schema_id = 3;
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_rest_commit_request(NULL, &c, &b), 0);
	assert_int_equal(floe_buf_terminate(&b), 0);
	const char *j = (const char *)b.data;
	assert_non_null(strstr(j, "\"snapshot-id\":null}"));
	assert_non_null(strstr(j, "{\"type\":\"assert-current-schema-id\",\"current-schema-id\":3}"));
	assert_non_null(strstr(j, "{\"action\":\"add-schema\",\"schema\":{\"type\":\"struct\","
				  "\"fields\":[]}},{\"action\":\"set-current-schema\",\"schema-id\":-1},"
				  "{\"action\":\"add-snapshot\""));
	floe_buf_fini(&b);

	/* A schema change alone: no snapshot, and no assertion of the branch's head. */
	c.snapshot = NULL;
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_rest_commit_request(NULL, &c, &b), 0);
	assert_buf(&b, "{\"requirements\":[{\"type\":\"assert-table-uuid\",\"uuid\":\"u-1\"},"
		       "{\"type\":\"assert-current-schema-id\",\"current-schema-id\":3}],"
		       "\"updates\":[{\"action\":\"add-schema\",\"schema\":{\"type\":\"struct\","
		       "\"fields\":[]}},{\"action\":\"set-current-schema\",\"schema-id\":-1}]}");
	/* Neither a snapshot nor a schema: nothing to ask. */
	c.schema = NULL;
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_rest_commit_request(NULL, &c, &b), FLOE_EINVAL);
	floe_buf_fini(&b);
	floe_json_doc_free(d);
}

/* The version in a metadata file's name, as catalogs write them, and names without one. */
static void test_metadata_version(void **state)
{
	(void)state;
	assert_int_equal(floe_rest_metadata_version("file:///w/t/metadata/00003-6f1c.metadata.json"), 3);
	assert_int_equal(floe_rest_metadata_version("s3://b/t/metadata/v12.metadata.json"), 12);
	assert_int_equal(floe_rest_metadata_version("00042-x.gz.metadata.json"), 42);
	assert_int_equal(floe_rest_metadata_version("s3://b/t/metadata/snap-1.metadata.json"), 0);
	assert_int_equal(floe_rest_metadata_version("s3://b/t/metadata/0003-x.json"), 0);
	assert_int_equal(floe_rest_metadata_version("s3://b/t/metadata/v.metadata.json"), 0);
	assert_int_equal(floe_rest_metadata_version("/m/99999999999999999999-a.metadata.json"), 0);
	assert_int_equal(floe_rest_metadata_version(""), 0);
	assert_int_equal(floe_rest_metadata_version(NULL), 0);
}

static int collect(void *ctx, const char *name, const char *value)
{
	char *out = ctx;
	size_t n = strlen(out);
	snprintf(out + n, 512 - n, "%s=%s;", name, value);
	return 0;
}

/* Remote signing: the request as the spec's RemoteSignRequest, the result's headers
 * handed over one value at a time, an answer of another shape refused whole. */
static void test_sign(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 16);
	const struct floe_rest_header h[] = {{"host", "s3.example:9000"}, {"x-amz-date", "20260301T000000Z"}};
	struct floe_rest_sign_in in = {"eu-1", "http://s3.example:9000/b/k%20x?uploads=", "PUT", h, 2, NULL, 0, NULL, 0};
	assert_int_equal(floe_rest_sign_request(&in, &b), 0);
	assert_int_equal(floe_buf_terminate(&b), 0);
	assert_string_equal((const char *)b.data,
			    "{\"region\":\"eu-1\",\"uri\":\"http://s3.example:9000/b/k%20x?uploads=\",\"method\":\"PUT\","
			    "\"headers\":{\"host\":[\"s3.example:9000\"],\"x-amz-date\":[\"20260301T000000Z\"]},"
			    "\"provider\":\"s3\"}");
	/* The table's remote-signing-config properties, and a body the signer must see. */
	const struct floe_rest_header props[] = {{"tenant", "t-7"}};
	struct floe_rest_sign_in del = {"eu-1", "http://s3/b?delete=", "POST", h, 1, props, 1, "<Delete/>", 9};
	floe_buf_reset(&b);
	assert_int_equal(floe_rest_sign_request(&del, &b), 0);
	assert_int_equal(floe_buf_terminate(&b), 0);
	assert_string_equal((const char *)b.data,
			    "{\"region\":\"eu-1\",\"uri\":\"http://s3/b?delete=\",\"method\":\"POST\","
			    "\"headers\":{\"host\":[\"s3.example:9000\"]},\"properties\":{\"tenant\":\"t-7\"},"
			    "\"body\":\"<Delete/>\",\"provider\":\"s3\"}");
	floe_buf_fini(&b);
	char got[512] = "";
	const char ok[] = "{\"uri\":\"http://x/b/k\",\"headers\":{\"Authorization\":[\"AWS4 sig\"],\"x-a\":[\"1\",\"2\"]},\"more\":1}";
	assert_int_equal(floe_rest_sign_result_parse(NULL, ok, strlen(ok), 1 << 20, collect, got, NULL), 0);
	assert_string_equal(got, "Authorization=AWS4 sig;x-a=1;x-a=2;");
	static const char *const bad[] = {
	    "{\"headers\":{}}",				/* no uri */
	    "{\"uri\":\"u\",\"headers\":[]}",		/* headers not an object */
	    "{\"uri\":\"u\",\"headers\":{\"a\":\"v\"}}",	/* a value not in an array */
	    "{\"uri\":\"u\",\"headers\":{\"a\":[\"v\",1]}}", /* a value not a string */
	    "[1]",
	    "{\"uri\":",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct floe_err e = {0};
		got[0] = '\0';
		assert_int_not_equal(floe_rest_sign_result_parse(NULL, bad[i], strlen(bad[i]), 1 << 20, collect, got, &e), 0);
		assert_string_equal(got, "");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_sign),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_error_and_token),
	    cmocka_unit_test(test_paths_and_requests),
	    cmocka_unit_test(test_metadata_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
