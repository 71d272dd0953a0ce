/* The table output (agent/lake/output.h): the commit protocol every table goes through,
 * with the injected clock and randomness of table_writers.h. Lent entries are committed
 * in order and at most max_entries per snapshot; entries the table already holds are
 * removed, not committed twice; a corrupt entry file is quarantined whatever the table;
 * damaged data files are handed back to be rebuilt or counted lost, as the output is
 * made; the spool limit drops the oldest entry that is not lent and not the newest; a
 * table away at the start is opened at the first commit; the output's record of its
 * last commit numbers the entries on without the table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "agent/lake/output.h"
#include "agent/lake/table.h"
#include "formats/iceberg/metadata.h"
#include "formats/base/error.h"
#include "platform/fs.h"

#include "table_writers.h"

/* Overwrites 4 bytes in the middle of spool file name (printf-style). */
static void damage(struct fixture *f, const char *fmt, uint64_t seq)
{
	char name[64], path[256];
	snprintf(name, sizeof(name), fmt, (unsigned long long)seq);
	snprintf(path, sizeof(path), "%s/%s", f->spooldir, name);
	int fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	off_t size = lseek(fd, 0, SEEK_END);
	assert_int_equal(pwrite(fd, "XXXX", 4, size / 2), 4);
	close(fd);
}

static bool in_quarantine(struct fixture *f, const char *fmt, uint64_t seq)
{
	char name[64], path[256];
	snprintf(name, sizeof(name), fmt, (unsigned long long)seq);
	snprintf(path, sizeof(path), "%s/quarantine/%s", f->spooldir, name);
	return floe_fs_exists(path) == 1;
}

static size_t entries(struct fixture *f)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	assert_int_equal(floe_spool_list(f->spool, &seqs, &n), 0);
	floe_free(&f->alloc, seqs);
	return n;
}

/* What an open callback sees: fails while away, then opens the table. */
struct opener {
	struct fixture *f;
	bool away;
	int calls;
};

static int open_table(void *ctx, struct floe_table **out, struct floe_err *err)
{
	struct opener *op = ctx;
	op->calls++;
	if (op->away)
		return floe_err_set(err, -ECONNREFUSED, "the store is away");
	*out = open_as(op->f, "agent", INST_A, NULL);
	return 0;
}

static struct floe_output *output(struct fixture *f, bool rebuildable, bool with_table,
				  struct opener *op)
{
	struct floe_output_options o = {
	    .alloc = &f->alloc,
	    .spool = f->spool,
	    .installation = INST_A,
	    .what = "the test table",
	    .rebuildable = rebuildable,
	    .open = op ? open_table : NULL,
	    .open_ctx = op,
	};
	struct floe_output *out = NULL;
	struct floe_table *t = with_table ? open_as(f, "agent", INST_A, NULL) : NULL;
	assert_int_equal(floe_output_new(&o, t, &out), 0);
	return out;
}

static int64_t committed(struct floe_output *o)
{
	return floe_table_committed_seq(floe_output_table(o), INST_A);
}

static void test_commits_lent_in_order(void **state)
{
	struct fixture *f = *state;
	struct floe_output *o = output(f, true, true, NULL);
	for (uint64_t s = 1; s <= 5; s++)
		seal(f, s);
	struct floe_output_report rep = {0};
	struct floe_err err = {0};
	/* Entries sealed after the lease are the main thread's: left alone. */
	floe_output_lend(o, 3);
	assert_int_equal(floe_output_commit(o, 2, &rep, &err), 0);
	assert_int_equal(committed(o), 3);
	assert_int_equal(rep.commits, 2); /* 1-2, then 3: at most 2 a snapshot */
	assert_int_equal(rep.rows_committed, 9);
	assert_int_equal(entries(f), 2);
	floe_output_lend(o, 5);
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(committed(o), 5);
	assert_int_equal(rep.commits, 3);
	assert_int_equal(rep.rows_committed, 15);
	assert_int_equal(entries(f), 0);
	assert_int_equal(floe_output_bytes(o), 0);
	floe_output_free(o);
}

/* A commit that landed before a crash (or whose answer was lost) is not made again: its
 * entry leaves the spool, its rows counted as committed, and no snapshot is added. */
static void test_landed_entries_are_removed(void **state)
{
	struct fixture *f = *state;
	struct floe_output *o = output(f, true, true, NULL);
	seal(f, 1);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, 1, &e), 0);
	assert_int_equal(floe_table_commit(floe_output_table(o), f->spool, &e, 1, &terr), 0);
	floe_spool_entry_free(&f->alloc, e);
	int64_t version = floe_table_version(floe_output_table(o));
	struct floe_output_report rep = {0};
	struct floe_err err = {0};
	floe_output_lend(o, 1);
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(rep.commits, 0);
	assert_int_equal(rep.rows_committed, 3);
	assert_int_equal(entries(f), 0);
	assert_int_equal(floe_table_version(floe_output_table(o)), version);
	floe_output_free(o);
}

/* An output (rebuildable or not) over entries 1-3, file fmt of entry 2 damaged, after
 * one commit of all three; its report in *rep. */
static struct floe_output *commit_damaged(struct fixture *f, bool rebuildable, const char *fmt,
					  struct floe_output_report *rep)
{
	struct floe_output *o = output(f, rebuildable, true, NULL);
	for (uint64_t s = 1; s <= 3; s++)
		seal(f, s);
	damage(f, fmt, 2);
	struct floe_err err = {0};
	floe_output_lend(o, 3);
	assert_int_equal(floe_output_commit(o, 256, rep, &err), 0);
	return o;
}

/* An entry file that fails its own checksum is quarantined and skipped, whether the
 * output rebuilds damaged entries or not: the others are committed, in order. */
static void corrupt_entry_file(struct fixture *f, bool rebuildable)
{
	struct floe_output_report rep = {0};
	struct floe_output *o = commit_damaged(f, rebuildable, "%020llu.entry", &rep);
	assert_int_equal(committed(o), 3);
	assert_int_equal(rep.rows_committed, 6);
	assert_int_equal(rep.rebuild, 0);
	assert_true(in_quarantine(f, "%020llu.entry", 2));
	assert_int_equal(floe_output_quarantined(o), 1);
	assert_int_equal(entries(f), 0);
	floe_output_free(o);
}

static void test_corrupt_entry_file_rebuildable(void **state)
{
	corrupt_entry_file(*state, true);
}

static void test_corrupt_entry_file_aggregate(void **state)
{
	corrupt_entry_file(*state, false);
}

/* Damaged data files of a rebuildable output: what comes before is committed, the
 * entry is handed back, and nothing from it on is committed. */
static void test_damaged_data_handed_back(void **state)
{
	struct fixture *f = *state;
	struct floe_output_report rep = {0};
	struct floe_err err = {0};
	struct floe_output *o = commit_damaged(f, true, "%020llu-0.parquet", &rep);
	assert_int_equal(committed(o), 1);
	assert_int_equal(rep.damaged, 1);
	assert_int_equal(rep.rebuild, 2);
	assert_int_equal(rep.lost_entries, 0);
	assert_int_equal(entries(f), 2);
	/* The main thread sets the files aside before it rebuilds the entry. */
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_output_load(o, 2, &e), 0);
	assert_int_equal(floe_output_rebuilding(o, e), 0);
	assert_true(in_quarantine(f, "%020llu-0.parquet", 2));
	/* Or, when its input no longer holds it, counts it lost. */
	struct floe_output_report lost = {0};
	assert_int_equal(floe_output_lose(o, e, &lost), 0);
	assert_int_equal(lost.lost_entries, 1);
	assert_int_equal(lost.lost_rows, 3);
	floe_spool_entry_free(&f->alloc, e);
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(committed(o), 3);
	assert_int_equal(entries(f), 0);
	floe_output_free(o);
}

/* Damaged data files of an output that cannot rebuild: lost, counted, quarantined, and
 * the commits go on past it. */
static void test_damaged_data_lost(void **state)
{
	struct fixture *f = *state;
	struct floe_output_report rep = {0};
	struct floe_output *o = commit_damaged(f, false, "%020llu-0.parquet", &rep);
	assert_int_equal(committed(o), 3);
	assert_int_equal(rep.damaged, 1);
	assert_int_equal(rep.rebuild, 0);
	assert_int_equal(rep.lost_entries, 1);
	assert_int_equal(rep.lost_rows, 3);
	assert_int_equal(rep.rows_committed, 6);
	assert_true(in_quarantine(f, "%020llu.entry", 2));
	assert_int_equal(entries(f), 0);
	floe_output_free(o);
}

/* drop_oldest: never the newest entry, nor one lent to a commit in flight. */
static void test_drop_oldest_spares_lent_and_newest(void **state)
{
	struct fixture *f = *state;
	struct floe_output *o = output(f, true, true, NULL);
	for (uint64_t s = 1; s <= 3; s++)
		seal(f, s);
	struct floe_output_drops d = {0};
	floe_output_lend(o, 1);
	uint64_t before = floe_output_bytes(o);
	assert_int_equal(floe_output_drop_oldest(o, true, &d), 1); /* 2: 1 is lent */
	assert_int_equal(d.entries, 1);
	assert_int_equal(d.rows, 3);
	assert_int_equal(before - floe_output_bytes(o), d.bytes);
	assert_int_equal(floe_output_drop_oldest(o, true, &d), 0); /* 1 lent, 3 the newest */
	assert_int_equal(floe_output_drop_oldest(o, false, &d), 1); /* no commit in flight: 1 */
	assert_int_equal(floe_output_drop_oldest(o, false, &d), 0); /* 3 stays */
	assert_int_equal(d.entries, 2);
	assert_int_equal(entries(f), 1);
	floe_output_free(o);
}

/* A table away at the start is opened at the first commit that reaches it; until then
 * the entries stay. The record of the last commit then numbers the entries on without
 * the table, and start-up's clean-ups work from it. */
static void test_table_opened_later_and_record(void **state)
{
	struct fixture *f = *state;
	struct opener op = {f, true, 0};
	struct floe_output *o = output(f, false, false, &op);
	assert_null(floe_output_table(o));
	assert_int_equal(floe_output_committed(o), -1);
	for (uint64_t s = 1; s <= 2; s++)
		seal(f, s);
	struct floe_output_report rep = {0};
	struct floe_err err = {0};
	floe_output_lend(o, 2);
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), -ECONNREFUSED);
	assert_int_equal(entries(f), 2);
	op.away = false;
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(op.calls, 2);
	assert_int_equal(committed(o), 2);
	assert_int_equal(entries(f), 0);
	floe_output_free(o);
	/* A new start, the store away: the spool is empty, the record says 2. */
	op.away = true;
	o = output(f, false, false, &op);
	assert_int_equal(floe_output_committed(o), 2);
	assert_int_equal(floe_output_last_seq(o), 2);
	seal(f, 3);
	seal(f, 4);
	assert_int_equal(floe_output_last_seq(o), 4);
	/* Start-up's clean-ups: entries after a seal that never became durable go, and
	 * entries the table holds go with their rows counted. */
	assert_int_equal(floe_output_forget_after(o, 3), 0);
	assert_int_equal(entries(f), 1);
	struct floe_output_report landed = {0};
	assert_int_equal(floe_output_drop_landed(o, 3, &landed), 0);
	assert_int_equal(landed.rows_committed, 3);
	assert_int_equal(entries(f), 0);
	floe_output_free(o);
	/* A record that is not a number is ignored (said in the log), not trusted. */
	char path[256];
	snprintf(path, sizeof(path), "%s/.last-commit", f->spooldir);
	assert_int_equal(floe_fs_write_atomic(path, "x\n", 2), 0);
	o = output(f, false, false, &op);
	assert_int_equal(floe_output_committed(o), -1);
	floe_output_free(o);
}

/* write_record F TEXT: the output's record of its last commit, as written by a floe. */
static void write_record(struct fixture *f, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/.last-commit", f->spooldir);
	assert_int_equal(floe_fs_write_atomic(path, text, strlen(text)), 0);
}

/* A table that holds fewer of the installation's commits than the output's record says
 * lost commits: found behind at the start's check and at a later first contact, whatever
 * the table; only its commits wait (the table let go, read again at every commit), and
 * they go on once it is no longer behind. A record of another table (uuid) or of an older
 * floe (no uuid) is no loss, nor a table whose last-sequence-number reached the
 * record's (another engine's expiry took the commit-seqs). */
static void test_table_behind_record(void **state)
{
	struct fixture *f = *state;
	struct floe_output *o = output(f, false, true, NULL);
	for (uint64_t s = 1; s <= 2; s++)
		seal(f, s);
	struct floe_output_report rep = {0};
	struct floe_err err = {0};
	floe_output_lend(o, 2);
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(floe_output_check_behind(o, &err), 0);
	assert_false(floe_output_behind(o));
	char text[128], uuid[64];
	snprintf(uuid, sizeof(uuid), "%s",
		 floe_ice_meta_uuid(floe_table_meta(floe_output_table(o))));
	/* One snapshot: the table's last-sequence-number is 1. */
	assert_int_equal(floe_ice_meta_last_sequence(floe_table_meta(floe_output_table(o))), 1);
	floe_output_free(o);
	/* The record says 5, the table holds 2: behind (the record's lines: the number, the
	 * table's location, its uuid). */
	snprintf(text, sizeof(text), "5\n%s\n%s\n", "/somewhere/logs", uuid);
	write_record(f, text);
	o = output(f, false, true, NULL);
	assert_int_equal(floe_output_check_behind(o, &err), FLOE_EBEHIND);
	assert_non_null(strstr(err.msg, "is behind this agent"));
	assert_true(floe_output_behind(o));
	assert_null(floe_output_table(o));
	floe_output_free(o);
	/* With the table's last-sequence-number then: a table below it is behind; one that
	 * reached it moved on, its commit-seqs expired by another engine. */
	snprintf(text, sizeof(text), "5\n%s\n%s\n2\n", "/somewhere/logs", uuid);
	write_record(f, text);
	o = output(f, false, true, NULL);
	assert_int_equal(floe_output_check_behind(o, &err), FLOE_EBEHIND);
	floe_output_free(o);
	snprintf(text, sizeof(text), "5\n%s\n%s\n1\n", "/somewhere/logs", uuid);
	write_record(f, text);
	o = output(f, false, true, NULL);
	assert_int_equal(floe_output_check_behind(o, &err), 0);
	assert_false(floe_output_behind(o));
	floe_output_free(o);
	/* At the first contact of a start without the table: behind, the table let go, the
	 * entry kept; at every try again, until the table is no longer behind. */
	snprintf(text, sizeof(text), "5\n%s\n%s\n2\n", "/somewhere/logs", uuid);
	write_record(f, text);
	struct opener op = {f, false, 0};
	o = output(f, false, false, &op);
	seal(f, 6);
	floe_output_lend(o, 6);
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), FLOE_EBEHIND);
	assert_null(floe_output_table(o));
	assert_true(floe_output_behind(o));
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), FLOE_EBEHIND);
	assert_int_equal(entries(f), 1);
	/* Restored (here: the record of another table's uuid, which nothing can be behind). */
	write_record(f, "5\n/somewhere/logs\n00000000-0000-4000-8000-000000000000\n");
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_false(floe_output_behind(o));
	assert_int_equal(rep.commits, 1);
	assert_int_equal(entries(f), 0);
	floe_output_free(o);
	/* Another table's record, and an older floe's without a uuid: no loss. */
	write_record(f, "5\n/somewhere/logs\n00000000-0000-4000-8000-000000000000\n");
	o = output(f, false, true, NULL);
	assert_int_equal(floe_output_check_behind(o, &err), 0);
	floe_output_free(o);
	write_record(f, "5\n");
	o = output(f, false, true, NULL);
	assert_int_equal(floe_output_check_behind(o, &err), 0);
	assert_int_equal(floe_output_committed(o), 6);
	floe_output_free(o);
}

/* An output of installation B that replaces A (agent.replaces): the spool's record, A's,
 * lags A's last commit (a crash between the two), and A's entry is still in the spool:
 * A's commit-seq in the table says it is in, so it is not committed again; B's own entry
 * is. Without a record of A's, A's commit-seqs say nothing of this spool's entries (a
 * state_dir made anew numbers from 1): they are committed. */
static void test_replaced_installation_entries(void **state)
{
	struct fixture *f = *state;
	struct floe_output *o = output(f, false, true, NULL);
	struct floe_output_report rep = {0};
	struct floe_err err = {0};
	seal(f, 1);
	seal(f, 2);
	floe_output_lend(o, 2);
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	floe_output_free(o);
	char text[160];
	snprintf(text, sizeof(text), "1\n/somewhere\n\n0\n%s\n", INST_A);
	write_record(f, text);
	seal(f, 2); /* A's, committed, left by the crash */
	seal(f, 3); /* B's */
	struct floe_output_options oo = {.alloc = &f->alloc, .spool = f->spool,
					 .installation = INST_B, .what = "B"};
	assert_int_equal(floe_output_new(&oo, open_home(f, "other", INST_B, INST_A, NULL, 0), &o), 0);
	assert_int_equal(floe_output_last_seq(o), 3);
	floe_output_lend(o, 3);
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(rep.commits, 1);
	assert_int_equal(rep.files_committed, 1); /* entry 3's only */
	assert_int_equal(floe_table_committed_seq(floe_output_table(o), INST_B), 3);
	assert_int_equal(entries(f), 0);
	floe_output_free(o);
	/* Installation C, replacing A too, on a spool whose record names no installation:
	 * its entry 2 is its own, and committed, though A's commit-seq covers it. */
	write_record(f, "1\n");
	seal(f, 2);
	oo.installation = "cccccccc-0000-4000-8000-00000000000c";
	assert_int_equal(floe_output_new(&oo, open_home(f, "third", oo.installation, INST_A, NULL, 0), &o), 0);
	assert_int_equal(floe_output_last_seq(o), 2);
	floe_output_lend(o, 2);
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(rep.commits, 1);
	assert_int_equal(rep.files_committed, 1);
	floe_output_free(o);
}

/* The same without agent.replaces, under one agent.id: installation B runs where A ran
 * (its home, the same hardware and state_dir path), so A is B before its state_dir lost
 * its installation files, and B takes A's agent.id over as agent.replaces would: A's
 * entry left by the crash is not committed again, B's is. An installation elsewhere
 * (another home, or none known) is refused as before: a clone of A. */
static void test_homed_installation_entries(void **state)
{
	struct fixture *f = *state;
	struct floe_output_options oa = {.alloc = &f->alloc, .spool = f->spool,
					 .installation = INST_A, .what = "A"};
	struct floe_output *o = NULL;
	assert_int_equal(floe_output_new(&oa, open_home(f, "agent", INST_A, NULL, "home1", 0), &o), 0);
	struct floe_output_report rep = {0};
	struct floe_err err = {0};
	seal(f, 1);
	seal(f, 2);
	floe_output_lend(o, 2);
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(rep.commits, 1);
	floe_output_free(o);
	char text[160];
	snprintf(text, sizeof(text), "1\n/somewhere\n\n0\n%s\n", INST_A);
	write_record(f, text);
	seal(f, 2); /* A's, committed, left by the crash */
	seal(f, 3); /* B's */
	/* Elsewhere, or nowhere known: refused, and nothing is committed. */
	assert_null(open_home(f, "agent", INST_B, NULL, "home2", FLOE_EIDENTITY));
	assert_null(open_home(f, "agent", INST_B, NULL, NULL, FLOE_EIDENTITY));
	struct floe_output_options ob = {.alloc = &f->alloc, .spool = f->spool,
					 .installation = INST_B, .what = "B"};
	struct floe_table *t = open_home(f, "agent", INST_B, NULL, "home1", 0);
	assert_string_equal(floe_table_replaced(t), INST_A);
	assert_int_equal(floe_output_new(&ob, t, &o), 0);
	assert_int_equal(floe_output_last_seq(o), 3);
	floe_output_lend(o, 3);
	memset(&rep, 0, sizeof(rep));
	assert_int_equal(floe_output_commit(o, 256, &rep, &err), 0);
	assert_int_equal(rep.commits, 1);
	assert_int_equal(rep.files_committed, 1); /* entry 3's only */
	assert_int_equal(floe_table_committed_seq(floe_output_table(o), INST_B), 3);
	assert_int_equal(entries(f), 0);
	floe_output_free(o);
	/* A, come back (its state_dir restored) beside B's commits: two live agents. */
	assert_null(open_home(f, "agent", INST_A, NULL, "home1", FLOE_EIDENTITY));
}

/* An entry file damaged while lent to a later start's first commit, on the main thread's
 * side: load quarantines it and says so. */
static void test_load_quarantines_corrupt(void **state)
{
	struct fixture *f = *state;
	struct floe_output *o = output(f, false, true, NULL);
	seal(f, 1);
	damage(f, "%020llu.entry", 1);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_output_load(o, 1, &e), FLOE_ECORRUPT);
	assert_null(e);
	assert_true(in_quarantine(f, "%020llu.entry", 1));
	assert_int_equal(floe_output_drop_oldest(o, false, &(struct floe_output_drops){0}), 0);
	floe_output_free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_commits_lent_in_order, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_landed_entries_are_removed, setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_corrupt_entry_file_rebuildable, setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_corrupt_entry_file_aggregate, setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_data_handed_back, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_data_lost, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_drop_oldest_spares_lent_and_newest, setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_table_opened_later_and_record, setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_table_behind_record, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_homed_installation_entries, setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_replaced_installation_entries, setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_load_quarantines_corrupt, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
