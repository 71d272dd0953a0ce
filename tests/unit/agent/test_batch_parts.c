/* Unit tests for agent/pipeline/batch with many partitions: how many there are is bounded
 * by memory, not by a count of writers. Partitions beyond the writers wait in the stage
 * and get one file each at the seal; when the stage is full the partitions with the most
 * rows there are flushed, whole, and the others go on; a file finished before the seal
 * is debris until the entry that lists it is written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/schema/partition.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/sortbuf.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include "table_fixture.h"

/* The fixture partitioned by part, with a budget of limit bytes, at most writers open
 * writers and a stage of stage bytes. */
static void open_parts(struct fixture *f, const char *part, size_t limit, size_t writers, size_t stage)
{
	char *entries[] = {(char *)part};
	assert_int_equal(floe_part_spec_from_config(&f->spec, entries, 1, NULL), 0);
	floe_alloc_init(&f->alloc, limit);
	char spool[128];
	snprintf(spool, sizeof(spool), "%s/spool", f->dir);
	assert_int_equal(floe_spool_open(&f->alloc, spool, &f->spec, &f->spool), 0);
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.pq.dictionary_cap = 256u << 10;
	bo.pq.memory_budget = 1u << 20;
	bo.target_file_size = 64u << 20;
	bo.max_writers = writers;
	bo.stage_buffer = stage;
	assert_int_equal(floe_batch_new(&f->alloc, &f->spec, &bo, f->spool, &f->batch), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/floe-test-batch-parts.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

/* Line i of a run over nparts apps (round robin), with a 60-byte message. */
static void line(struct floe_record *r, char *msg, char *app, uint64_t i, unsigned nparts)
{
	memset(r, 0, sizeof(*r));
	snprintf(app, 16, "app%u", (unsigned)(i % nparts));
	snprintf(msg, 96, "GET /api/v1/items/%08llu 200 0.%03u ms from 10.0.0.%u",
		 (unsigned long long)i, (unsigned)(i * 7 % 1000), (unsigned)(i % 250));
	r->ts = r->received_at = 19000LL * 86400 * 1000000 + (int64_t)i;
	r->host = (struct floe_str){"edge-1", 6};
	r->source = (struct floe_str){"/var/log/app.log", 16};
	r->app = (struct floe_str){app, strlen(app)};
	r->has_offset = true;
	r->offset = (int64_t)i * 100;
	r->message = (struct floe_str){msg, strlen(msg)};
}

struct run {
	unsigned seals;
	uint64_t files, rows;
	unsigned most_files_per_part; /* in one seal */
};

/* Seals the batch as entry seq and adds what its files hold to out. */
static void seal(struct fixture *f, uint64_t seq, struct run *out)
{
	const uint8_t pos[] = {1};
	assert_int_equal(floe_batch_seal(f->batch, 1, pos, sizeof(pos)), 0);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, seq, &e), 0);
	out->seals++;
	out->files += e->nfiles;
	for (size_t i = 0; i < e->nfiles; i++) {
		out->rows += (uint64_t)e->files[i].records;
		unsigned same = 0;
		for (size_t k = 0; k < e->nfiles; k++)
			same += floe_part_key_equal(&f->spec, &e->files[i].key, &e->files[k].key);
		if (same > out->most_files_per_part)
			out->most_files_per_part = same;
	}
	floe_spool_entry_free(&f->alloc, e);
}

/* Adds n lines over nparts apps, sealing whenever the batch asks for it, then seals. */
static struct run add_lines(struct fixture *f, uint64_t n, unsigned nparts)
{
	struct run out = {0};
	uint64_t seq = 1;
	for (uint64_t i = 0; i < n; i++) {
		char msg[96], app[16];
		struct floe_record r;
		line(&r, msg, app, i, nparts);
		int rc = floe_batch_add(f->batch, seq, &r);
		if (rc == 2) {
			seal(f, seq++, &out);
			rc = floe_batch_add(f->batch, seq, &r);
		}
		if (rc < 0 || rc > 1)
			fprintf(stderr, "line %llu: %s\n", (unsigned long long)i, floe_strerror(rc));
		assert_true(rc == 0 || rc == 1);
		if (rc == 1)
			seal(f, seq++, &out);
	}
	if (floe_batch_rows(f->batch))
		seal(f, seq, &out);
	return out;
}

/* Regression: with more partitions than writers (4 then), every record of a partition
 * without a writer sealed the batch, and 2,000 lines over 8 apps made 2,000 files. Now
 * one seal takes them all: one file per partition. */
static void test_more_partitions_than_writers(void **state)
{
	struct fixture *f = *state;
	open_parts(f, "app", 32u << 20, 4, 0);
	struct run r8 = add_lines(f, 2000, 8);
	assert_int_equal(r8.rows, 2000);
	assert_int_equal(r8.seals, 1);
	assert_int_equal(r8.files, 8);
	assert_int_equal(r8.most_files_per_part, 1);
	struct run r64 = add_lines(f, 2000, 64);
	assert_int_equal(r64.rows, 2000);
	assert_int_equal(r64.seals, 1);
	assert_int_equal(r64.files, 64);
	assert_int_equal(r64.most_files_per_part, 1);
}

/* The same under bucket(16, host) with 1,000 hosts, and hour(ts) over a backfill of six
 * interleaved hours. */
static void test_bucket_and_hour(void **state)
{
	struct fixture *f = *state;
	open_parts(f, "bucket(16, host)", 32u << 20, 4, 0);
	struct run out = {0};
	for (uint64_t i = 0; i < 3000; i++) {
		char msg[96], app[16], host[16];
		struct floe_record r;
		line(&r, msg, app, i, 8);
		snprintf(host, sizeof(host), "h%llu", (unsigned long long)(i % 1000));
		r.host = (struct floe_str){host, strlen(host)};
		assert_int_equal(floe_batch_add(f->batch, 1, &r), 0);
	}
	seal(f, 1, &out);
	assert_int_equal(out.rows, 3000);
	assert_true(out.files <= 16);
	assert_int_equal(out.most_files_per_part, 1);

	floe_batch_free(f->batch);
	floe_spool_free(f->spool);
	f->batch = NULL;
	f->spool = NULL;
	open_parts(f, "hour(ts)", 32u << 20, 4, 0);
	memset(&out, 0, sizeof(out));
	for (uint64_t i = 0; i < 3000; i++) {
		char msg[96], app[16];
		struct floe_record r;
		line(&r, msg, app, i, 8);
		r.ts = 19000LL * 86400 * 1000000 + (int64_t)(i % 6) * 3600 * 1000000 + (int64_t)i;
		assert_int_equal(floe_batch_add(f->batch, 2, &r), 0);
	}
	seal(f, 2, &out);
	assert_int_equal(out.rows, 3000);
	assert_int_equal(out.files, 6);
}

/* A stage of 256 KiB (about 800 of these rows) and 20,000 lines: 49 in 50 over 20 busy
 * apps, the rest over 200 quiet ones. The stage fills many times; each time the busy
 * partitions with the most rows there go, whole, to files of their own, and the quiet
 * ones wait for the seal: one file each, and the busy ones' files hold many rows. */
static void test_full_stage_flushes_the_largest(void **state)
{
	struct fixture *f = *state;
	open_parts(f, "app", 32u << 20, 4, 256u << 10);
	for (uint64_t i = 0; i < 20000; i++) {
		char msg[96], app[16];
		struct floe_record r;
		line(&r, msg, app, i, 20);
		if (i % 50 == 0)
			snprintf(app, sizeof(app), "quiet%llu", (unsigned long long)(i / 50 % 200));
		r.app.len = strlen(app);
		int rc = floe_batch_add(f->batch, 1, &r);
		assert_int_equal(rc, 0);
	}
	const uint8_t pos[] = {1};
	assert_int_equal(floe_batch_seal(f->batch, 1, pos, sizeof(pos)), 0);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 1, &e), 0);
	uint64_t rows = 0, busy_rows = 0, busy_files = 0, quiet_files = 0;
	for (size_t i = 0; i < e->nfiles; i++) {
		rows += (uint64_t)e->files[i].records;
		if (strncmp(e->files[i].key.v[0].s, "quiet", 5) == 0) {
			quiet_files++;
		} else {
			busy_files++;
			busy_rows += (uint64_t)e->files[i].records;
		}
	}
	assert_int_equal(rows, 20000);
	assert_int_equal(quiet_files, 200);
	assert_int_equal(busy_rows, 19600);
	/* Files of 8 rows or fewer would mean a flush took the small partitions. */
	assert_true(busy_rows / busy_files >= 8);
	fprintf(stderr, "busy partitions: %llu files, %llu rows each\n", (unsigned long long)busy_files,
		(unsigned long long)(busy_rows / busy_files));
	floe_spool_entry_free(&f->alloc, e);
}

static unsigned count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	unsigned n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(suffix);
		n += len > sl && strcmp(de->d_name + len - sl, suffix) == 0;
	}
	if (d)
		closedir(d);
	return n;
}

/* Files finished before the seal keep their temporary names: a process that dies before
 * the entry is written leaves debris that the next start removes, never a file that
 * looks as if an entry owned it. */
static void test_early_files_are_debris_until_the_seal(void **state)
{
	struct fixture *f = *state;
	open_parts(f, "app", 32u << 20, 2, 16u << 10);
	/* Fewer lines than make 1,024 early files (a seal asked for) with records of any size. */
	for (uint64_t i = 0; i < 1000; i++) {
		char msg[96], app[16];
		struct floe_record r;
		line(&r, msg, app, i, 50);
		assert_int_equal(floe_batch_add(f->batch, 9, &r), 0);
	}
	char spool[128];
	snprintf(spool, sizeof(spool), "%s/spool", f->dir);
	unsigned early = count_files(spool, ".tmp");
	assert_true(early > 2);
	assert_int_equal(count_files(spool, ".parquet"), 0);
	/* A restart on the same directory (the batch's process is gone). */
	struct floe_spool *again = NULL;
	assert_int_equal(floe_spool_open(&f->alloc, spool, &f->spec, &again), 0);
	assert_int_equal(count_files(spool, ".tmp"), 0);
	floe_spool_free(again);
	floe_batch_abort(f->batch);
}

/* A partition that staged gets one file at the seal even with a budget that cannot hold
 * a second writer beside the first (the first finishes before it opens). */
static void test_staged_partition_in_a_small_budget(void **state)
{
	struct fixture *f = *state;
	open_parts(f, "app", 3u << 20, 8, 64u << 10);
	struct run r = add_lines(f, 2000, 3);
	assert_int_equal(r.rows, 2000);
	assert_true(r.seals <= 2);
}

/* A stage larger than what the budget leaves it: the budget, not the stage's size, says
 * when it is full, and nothing fails. */
static void test_stage_bounded_by_the_budget(void **state)
{
	struct fixture *f = *state;
	open_parts(f, "app", 6u << 20, 2, 16u << 20);
	struct run r = add_lines(f, 30000, 64);
	assert_int_equal(r.rows, 30000);
	assert_true(r.files < 30000 / 16);
}

/* The stage's partial drain: the records passed on are those picked, sorted; the others
 * stay, moved to the front with every string and attribute they point to, in order. */
struct seen {
	unsigned n;
	unsigned tags[400];
	char msgs[400][32];
};

static bool pick_even(void *ctx, uint32_t tag)
{
	return tag % 2 == 0;
}

static int collect(void *ctx, uint32_t tag, const struct floe_record *rec)
{
	struct seen *s = ctx;
	char want[32];
	snprintf(want, sizeof(want), "%.*s", (int)rec->message.len, rec->message.p);
	/* attrs: k=<message>, v=<tag>; host and app as made below. */
	assert_int_equal(rec->nattrs, 2);
	assert_memory_equal(rec->attr_keys[0], "k", 1);
	assert_int_equal(rec->attr_val_lens[0], rec->message.len);
	assert_memory_equal(rec->attr_vals[0], rec->message.p, rec->message.len);
	assert_null(rec->attr_vals[1]);
	assert_int_equal(rec->app.len, 0);
	assert_non_null(rec->app.p);
	assert_null(rec->proc_id.p);
	assert_memory_equal(rec->host.p, "host-", 5);
	s->tags[s->n] = tag;
	snprintf(s->msgs[s->n++], 32, "%s", want);
	return 0;
}

static void add_tagged(struct floe_sortbuf *sb, unsigned i)
{
	char msg[32], host[32];
	/* Fixed widths: every record takes the same room, whatever the record's size. */
	snprintf(msg, sizeof(msg), "message %03u", i);
	snprintf(host, sizeof(host), "host-%04u", i * 7);
	const char *keys[] = {"k", "nul"}, *vals[] = {msg, NULL};
	size_t klens[] = {1, 3}, vlens[] = {strlen(msg), 0};
	struct floe_record r;
	memset(&r, 0, sizeof(r));
	r.ts = i;
	r.host = (struct floe_str){host, strlen(host)};
	r.app = (struct floe_str){"", 0};
	r.message = (struct floe_str){msg, strlen(msg)};
	r.nattrs = 2;
	r.attr_keys = keys;
	r.attr_key_lens = klens;
	r.attr_vals = vals;
	r.attr_val_lens = vlens;
	assert_int_equal(floe_sortbuf_add(sb, i % 10, &r), 0);
}

static void test_partial_drain_keeps_the_rest(void **state)
{
	struct fixture *f = *state;
	floe_alloc_init(&f->alloc, 0);
	struct floe_sortbuf *sb = NULL;
	assert_int_equal(floe_sortbuf_new(&f->alloc, NULL, 0, 256u << 10, &sb), 0);
	static struct seen s;
	memset(&s, 0, sizeof(s));
	for (unsigned i = 0; i < 200; i++)
		add_tagged(sb, i);
	size_t before = floe_sortbuf_bytes(sb);
	assert_int_equal(floe_sortbuf_drain_some(sb, pick_even, collect, &s), 0);
	assert_int_equal(s.n, 100);
	for (unsigned k = 1; k < s.n; k++)
		assert_true(s.tags[k - 1] <= s.tags[k]);
	assert_int_equal(floe_sortbuf_rows(sb), 100);
	/* What the drained records took is free again: 100 more fit in the same storage. */
	for (unsigned i = 200; i < 300; i++)
		add_tagged(sb, i);
	assert_int_equal(floe_sortbuf_bytes(sb), before);
	memset(&s, 0, sizeof(s));
	assert_int_equal(floe_sortbuf_drain(sb, collect, &s), 0);
	assert_int_equal(s.n, 200);
	/* Tag by tag, in the order they were added: odd tags kept from the first 200. */
	unsigned k = 0;
	for (unsigned tag = 0; tag < 10; tag++)
		for (unsigned i = 0; i < 300; i++)
			if (i % 10 == tag && (i >= 200 || tag % 2 == 1)) {
				char want[32];
				snprintf(want, sizeof(want), "message %03u", i);
				assert_string_equal(s.msgs[k], want);
				k++;
			}
	assert_int_equal(k, 200);
	floe_sortbuf_free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_more_partitions_than_writers, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_bucket_and_hour, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_full_stage_flushes_the_largest, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_early_files_are_debris_until_the_seal, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_staged_partition_in_a_small_budget, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_stage_bounded_by_the_budget, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_partial_drain_keeps_the_rest, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
