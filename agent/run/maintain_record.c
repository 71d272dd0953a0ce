/* The record of the last `floe maintain` run, per table (state_dir/maintain/metrics.json):
 * written by the command when it ends, and shown by the agent of the same state_dir in its
 * metrics.json and /metrics, so that an operator sees what maintenance did, and which
 * table it failed on, without logging in to the device. One table of fields names each
 * figure in both documents. */
#include "agent/run/maintain.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"
#include "platform/fs.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define RECORD_MAX (1u << 20)

enum {
	F_FAILED,
	F_PARTITIONS,
	F_FILES_IN,
	F_FILES_OUT,
	F_BYTES_IN,
	F_BYTES_OUT,
	F_ROWS,
	F_COMMITS,
	F_ABANDONED,
	F_LEFT,
	F_RESPECCED,
	F_EXPIRED,
	F_ORPHANS,
	F_N
};

static const struct {
	const char *json, *prom, *help;
} fields[F_N] = {
    {"failed", "floe_maintain_failed", "1 when the last floe maintain failed on the table"},
    {"partitions", "floe_maintain_partitions",
     "Partitions whose files the last floe maintain rewrote"},
    {"files_rewritten", "floe_maintain_files_rewritten",
     "Data files the last floe maintain replaced"},
    {"files_written", "floe_maintain_files_written",
     "Data files the last floe maintain wrote in their place"},
    {"bytes_rewritten", "floe_maintain_bytes_rewritten",
     "Bytes of the files the last floe maintain replaced"},
    {"bytes_written", "floe_maintain_bytes_written",
     "Bytes of the files the last floe maintain wrote"},
    {"rows_rewritten", "floe_maintain_rows_rewritten", "Rows the last floe maintain copied"},
    {"replace_commits", "floe_maintain_replace_commits",
     "Replace snapshots the last floe maintain committed"},
    {"abandoned", "floe_maintain_abandoned",
     "Replaces the last floe maintain abandoned (their files rewritten meanwhile by another)"},
    {"files_left", "floe_maintain_files_left",
     "Candidate files the last floe maintain left for a later run"},
    {"files_respecced", "floe_maintain_files_respecced",
     "Files of older partition specs the last floe maintain rewrote into the current one"},
    {"snapshots_expired", "floe_maintain_snapshots_expired",
     "Snapshots the last floe maintain expired"},
    {"orphans_deleted", "floe_maintain_orphans_deleted",
     "Output files of interrupted runs the last floe maintain deleted"},
};

static void values(const struct floe_maintain_result *r, uint64_t v[F_N])
{
	const struct floe_maintain_stats *s = &r->stats;
	v[F_FAILED] = r->rc != 0;
	v[F_PARTITIONS] = s->partitions;
	v[F_FILES_IN] = s->files_in;
	v[F_FILES_OUT] = s->files_out;
	v[F_BYTES_IN] = s->bytes_in;
	v[F_BYTES_OUT] = s->bytes_out;
	v[F_ROWS] = s->rows;
	v[F_COMMITS] = s->commits;
	v[F_ABANDONED] = s->abandoned;
	v[F_LEFT] = s->left;
	v[F_RESPECCED] = s->respecced;
	v[F_EXPIRED] = s->expired;
	v[F_ORPHANS] = s->orphans;
}

int floe_maintain_record_save(const char *path, const struct floe_maintain_result *r, size_t n,
			      int64_t now_ms)
{
	struct floe_buf b;
	floe_buf_init(&b, NULL, RECORD_MAX);
	int rc = floe_buf_printf(&b, "{\"finished_ms\":%" PRId64 ",\"tables\":{", now_ms);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		uint64_t v[F_N];
		values(&r[i], v);
		rc = floe_buf_printf(&b, "%s", i ? "," : "");
		if (rc == 0)
			rc = floe_json_write_str(&b, r[i].table, strlen(r[i].table));
		if (rc == 0)
			rc = floe_buf_printf(&b, ":{");
		for (size_t f = 0; rc == 0 && f < F_N; f++)
			rc = floe_buf_printf(&b, "%s\"%s\":%" PRIu64, f ? "," : "", fields[f].json,
					     v[f]);
		if (rc == 0 && r[i].rc) {
			rc = floe_buf_printf(&b, ",\"error\":");
			if (rc == 0)
				rc = floe_json_write_str(&b, r[i].error, strlen(r[i].error));
		}
		if (rc == 0)
			rc = floe_buf_printf(&b, "}");
	}
	if (rc == 0)
		rc = floe_buf_printf(&b, "}}\n");
	if (rc == 0)
		rc = floe_fs_write_atomic(path, b.data, b.len);
	floe_buf_fini(&b);
	return rc;
}

/* The record's tables as Prometheus gauges, labelled table="NAME" (names are Iceberg
 * identifiers: nothing to escape), and its time. */
static int prom(const struct floe_json *root, struct floe_buf *b)
{
	const struct floe_json *tables = floe_json_get(root, "tables");
	int64_t ms;
	int rc = 0;
	if (floe_json_get_int(root, "finished_ms", &ms) == 0)
		rc = floe_buf_printf(
		    b,
		    "# HELP floe_maintain_last_run_timestamp_seconds When the last floe maintain "
		    "of this state_dir ended. state_dir/maintain/metrics.json: finished_ms.\n"
		    "# TYPE floe_maintain_last_run_timestamp_seconds gauge\n"
		    "floe_maintain_last_run_timestamp_seconds %" PRId64 ".%03" PRId64 "\n",
		    ms / 1000, ms % 1000);
	for (size_t f = 0; rc == 0 && f < F_N && floe_json_len(tables); f++) {
		rc =
		    floe_buf_printf(b,
				    "# HELP %s %s. state_dir/maintain/metrics.json: "
				    "tables.NAME.%s.\n# TYPE %s gauge\n",
				    fields[f].prom, fields[f].help, fields[f].json, fields[f].prom);
		for (size_t i = 0; rc == 0 && i < floe_json_len(tables); i++) {
			int64_t v = 0;
			if (floe_json_get_int(floe_json_at(tables, i), fields[f].json, &v) || v < 0)
				continue;
			rc = floe_buf_printf(b, "%s{table=\"%s\"} %" PRId64 "\n", fields[f].prom,
					     floe_json_key_at(tables, i), v);
		}
	}
	return rc;
}

int floe_maintain_record_render(struct floe_alloc *a, const char *path, bool as_prom,
				struct floe_buf *b)
{
	void *text = NULL;
	size_t len = 0;
	struct floe_json_doc *doc = NULL;
	/* No record (maintain never ran here) or an unreadable one: nothing to show. */
	if (floe_fs_read_file(a, path, RECORD_MAX, &text, &len) != 0)
		return 0;
	int rc = 0;
	if (floe_json_parse(a, text, len, 4 * (size_t)RECORD_MAX, &doc, NULL) == 0 &&
	    floe_json_is(floe_json_get(floe_json_root(doc), "tables"), FLOE_JSON_OBJECT)) {
		size_t before = b->len;
		rc = as_prom ? prom(floe_json_root(doc), b)
			     : floe_json_write(floe_json_root(doc), b);
		if (rc)
			b->len = before;
	}
	floe_json_doc_free(doc);
	floe_free(a, text);
	return rc;
}
