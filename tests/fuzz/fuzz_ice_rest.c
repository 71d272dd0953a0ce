/* Fuzz target for the REST catalog's answers: whatever bytes a catalog sends, each parser
 * answers or refuses cleanly, what parsed answers every accessor, and nothing leaks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/iceberg/rest.h"

static void touch(const char *s)
{
	if (s && strlen(s) == SIZE_MAX)
		abort();
}

static void table(struct floe_alloc *a, const char *p, size_t n)
{
	struct floe_rest_table *t = NULL;
	if (floe_rest_table_parse(a, p, n, (size_t)1 << 20, &t, NULL)) {
		if (t)
			abort();
		return;
	}
	touch(floe_rest_table_location(t));
	if (!floe_rest_table_metadata(t))
		abort();
	touch(floe_ice_meta_location(floe_rest_table_metadata(t)));
	static const char *const locs[] = {"", "s3://", "s3://b/wh/t/data/x.parquet", "file:///x"};
	for (size_t i = 0; i < 4; i++) {
		touch(floe_rest_table_storage(t, locs[i], "s3.access-key-id"));
		static const char *const keys[] = {"client.region", "s3.region", NULL};
		touch(floe_rest_table_setting(t, locs[i], NULL, keys));
		(void)floe_rest_table_credential(t, locs[i]);
	}
	touch(floe_rest_table_config(t, "s3.endpoint"));
	if (floe_rest_metadata_version(floe_rest_table_location(t)) < 0)
		abort();
	/* Taken, the metadata is the caller's: the table no longer frees it. */
	struct floe_ice_meta *m = floe_rest_table_take_metadata(t);
	if (!m || floe_rest_table_metadata(t))
		abort();
	floe_rest_table_free(t);
	floe_ice_meta_free(m);
}

/* A LoadCredentialsResponse: refused cleanly, or its credentials answer. */
static void credentials(struct floe_alloc *a, const char *p, size_t n)
{
	struct floe_rest_table *t = NULL;
	if (floe_rest_credentials_parse(a, p, n, (size_t)1 << 20, &t, NULL)) {
		if (t)
			abort();
		return;
	}
	if (floe_rest_table_metadata(t))
		abort();
	static const char *const keys[] = {"s3.endpoint", NULL};
	touch(floe_rest_table_storage(t, "s3://b/wh/t", "s3.access-key-id"));
	touch(floe_rest_table_setting(t, "s3://b/wh/t", NULL, keys));
	floe_rest_table_free(t);
}

/* Each header value of a RemoteSignResult: a C string of the length it says. */
static int sign_header(void *ctx, const char *name, const char *value)
{
	++*(size_t *)ctx;
	touch(name);
	touch(value);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)64 << 20);
	char *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);

	static const struct floe_ice_kv client[] = {{"warehouse", "w"}};
	struct floe_rest_config *c = NULL;
	if (floe_rest_config_parse(&a, p, size, (size_t)1 << 20, client, 1, &c, NULL) == 0) {
		if (!floe_rest_config_get(c, "warehouse"))
			abort();
		touch(floe_rest_config_get(c, "prefix"));
		(void)floe_rest_config_serves(c, "POST /v1/{prefix}/namespaces");
		if (floe_rest_config_idempotency_ms(c) < 0)
			abort();
		floe_rest_config_free(c);
	} else if (c) {
		abort();
	}
	table(&a, p, size);
	credentials(&a, p, size);
	size_t nh = 0;
	if (floe_rest_sign_result_parse(&a, p, size, (size_t)1 << 20, sign_header, &nh, NULL) && nh)
		abort(); /* a refused answer gives no header */
	struct floe_rest_error e;
	if (floe_rest_error_parse(p, size, &e) == 0 &&
	    (strlen(e.type) >= sizeof(e.type) || strlen(e.message) >= sizeof(e.message)))
		abort();
	struct floe_rest_token tok;
	if (floe_rest_token_parse(&a, p, size, &tok, NULL) == 0) {
		if (!tok.access_token || !*tok.access_token)
			abort();
		floe_rest_token_free(&a, &tok);
	} else if (tok.access_token) {
		abort();
	}
	free(p);
	if (a.used != 0)
		abort();
	return 0;
}
