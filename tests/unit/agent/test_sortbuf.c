/* Unit tests for agent/pipeline/sortbuf: key names, the order of every key type (nulls
 * first, bytewise strings), tags before keys, stability, a full buffer, a failing drain,
 * exact copies (attrs and null-ness) and allocation failures at every step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/schema/record.h"
#include "agent/pipeline/sortbuf.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

/* What a drain delivered: tags and message texts, in order. */
struct seen {
	size_t n;
	uint32_t tags[4096];
	char msgs[4096][24];
	size_t fail_at; /* the callback fails on this record (0 = never) */
};

static int collect(void *ctx, uint32_t tag, const struct floe_record *rec)
{
	struct seen *s = ctx;
	if (s->fail_at && s->n + 1 == s->fail_at) {
		s->fail_at = 0;
		return -EIO;
	}
	assert_true(s->n < 4096);
	assert_true(rec->message.len < sizeof(s->msgs[0]));
	s->tags[s->n] = tag;
	memcpy(s->msgs[s->n], rec->message.p, rec->message.len);
	s->msgs[s->n][rec->message.len] = '\0';
	s->n++;
	return 0;
}

static struct floe_str str(const char *s)
{
	struct floe_str r = {s, s ? strlen(s) : 0};
	return r;
}

static struct floe_record rec_msg(const char *msg)
{
	struct floe_record r;
	memset(&r, 0, sizeof(r));
	r.message = str(msg);
	return r;
}

static struct floe_sortbuf *new_sb(struct floe_alloc *a, const enum floe_sort_key *keys, size_t n,
				   size_t max)
{
	struct floe_sortbuf *sb = NULL;
	assert_int_equal(floe_sortbuf_new(a, keys, n, max, &sb), 0);
	assert_non_null(sb);
	return sb;
}

/* Drains sb and checks the messages came in the order of want (NULL-terminated). */
static void expect_order(struct floe_sortbuf *sb, const char *const *want)
{
	static struct seen s;
	memset(&s, 0, sizeof(s));
	assert_int_equal(floe_sortbuf_drain(sb, collect, &s), 0);
	size_t n = 0;
	while (want[n])
		n++;
	for (size_t i = 0; i < n && i < s.n; i++)
		if (strcmp(s.msgs[i], want[i]) != 0)
			fail_msg("position %zu: got %s, want %s", i, s.msgs[i], want[i]);
	assert_int_equal(s.n, n);
	assert_int_equal(floe_sortbuf_rows(sb), 0);
}

static void test_key_names(void **state)
{
	(void)state;
	static const char *const names[] = {"ts",	"received_at", "host", "source",  "offset",
					    "facility", "severity",    "app",  "proc_id", "msg_id"};
	for (size_t i = 0; i < FLOE_SORT_NKEYS; i++) {
		enum floe_sort_key k = FLOE_SORT_MSG_ID;
		assert_int_equal(floe_log_sort_key_parse(names[i], strlen(names[i]), &k), 0);
		assert_int_equal(k, (enum floe_sort_key)i);
		assert_string_equal(floe_log_sort_key_name(k), names[i]);
	}
	enum floe_sort_key k = FLOE_SORT_APP;
	static const char *const bad[] = {"message", "attrs", "", "t", "tss", "ts ", "TS", "App"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(floe_log_sort_key_parse(bad[i], strlen(bad[i]), &k), FLOE_EINVAL);
	assert_int_equal(k, FLOE_SORT_APP); /* untouched */
	/* Length, not NUL, ends the name. */
	assert_int_equal(floe_log_sort_key_parse("appx", 3, &k), 0);
	assert_int_equal(k, FLOE_SORT_APP);
	assert_null(floe_log_sort_key_name((enum floe_sort_key)FLOE_SORT_NKEYS));
}

static void test_new_args(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_sortbuf *sb = NULL;
	enum floe_sort_key keys[FLOE_SORT_NKEYS + 1] = {FLOE_SORT_TS};
	assert_int_equal(floe_sortbuf_new(&a, keys, 1, 4095, &sb), FLOE_EINVAL);
	assert_int_equal(floe_sortbuf_new(&a, keys, FLOE_SORT_NKEYS + 1, 1 << 20, &sb),
			 FLOE_EINVAL);
	keys[0] = (enum floe_sort_key)FLOE_SORT_NKEYS;
	assert_int_equal(floe_sortbuf_new(&a, keys, 1, 1 << 20, &sb), FLOE_EINVAL);
	assert_int_equal(floe_sortbuf_new(&a, NULL, 1, 1 << 20, &sb), FLOE_EINVAL);
	assert_null(sb);
	assert_int_equal(a.used, 0);
	a.fail_after = 0;
	assert_int_equal(floe_sortbuf_new(&a, NULL, 0, 1 << 20, &sb), FLOE_ENOMEM);
	assert_null(sb);
	a.fail_after = -1;
	sb = new_sb(&a, NULL, 0, 4096);
	assert_int_equal(floe_sortbuf_rows(sb), 0);
	assert_int_equal(floe_sortbuf_bytes(sb), 0);
	expect_order(sb, (const char *const[]){NULL}); /* draining nothing is fine */
	floe_sortbuf_free(sb);
	floe_sortbuf_free(NULL);
	assert_int_equal(a.used, 0);
}

/* Integer keys: ts and received_at are never null; offset, facility, severity may be. */
static void test_int_keys(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);

	static const int64_t ts[] = {30, -5, 10, INT64_MAX, 10, INT64_MIN, 0};
	static const char *const ids[] = {"a", "b", "c", "d", "e", "f", "g"};
	static const char *const want_ts[] = {"f", "b", "g", "c", "e", "a", "d", NULL};
	for (int key = 0; key < 2; key++) {
		enum floe_sort_key k = key ? FLOE_SORT_RECEIVED_AT : FLOE_SORT_TS;
		struct floe_sortbuf *sb = new_sb(&a, &k, 1, 1 << 16);
		for (size_t i = 0; i < 7; i++) {
			struct floe_record r = rec_msg(ids[i]);
			/* The other time column runs the opposite way: it must not matter. */
			r.ts = key ? ~ts[i] : ts[i];
			r.received_at = key ? ts[i] : ~ts[i];
			assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
		}
		assert_int_equal(floe_sortbuf_rows(sb), 7);
		expect_order(sb, want_ts);
		floe_sortbuf_free(sb);
	}

	/* Nullable ints: nulls first, in arrival order among themselves. */
	static const bool has[] = {true, false, true, true, false, true, true};
	static const int32_t v32[] = {3, 99, -1, 2147483647, -99, 3, -2147483647 - 1};
	static const char *const want_n[] = {"b", "e", "g", "c", "a", "f", "d", NULL};
	for (int key = 0; key < 3; key++) {
		enum floe_sort_key k = key == 0	  ? FLOE_SORT_OFFSET
				       : key == 1 ? FLOE_SORT_FACILITY
						  : FLOE_SORT_SEVERITY;
		struct floe_sortbuf *sb = new_sb(&a, &k, 1, 1 << 16);
		for (size_t i = 0; i < 7; i++) {
			struct floe_record r = rec_msg(ids[i]);
			if (key == 0) {
				r.has_offset = has[i];
				r.offset = has[i] ? (int64_t)v32[i] * 4096 : 0;
			} else if (key == 1) {
				r.has_facility = has[i];
				r.facility = v32[i];
			} else {
				r.has_severity = has[i];
				r.severity = v32[i];
			}
			assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
		}
		expect_order(sb, want_n);
		floe_sortbuf_free(sb);
	}
	assert_int_equal(a.used, 0);
}

static void set_str_key(struct floe_record *r, enum floe_sort_key k, const char *v)
{
	struct floe_str s = str(v);
	switch (k) {
	case FLOE_SORT_HOST:
		r->host = s;
		break;
	case FLOE_SORT_SOURCE:
		r->source = s;
		break;
	case FLOE_SORT_APP:
		r->app = s;
		break;
	case FLOE_SORT_PROC_ID:
		r->proc_id = s;
		break;
	default:
		r->msg_id = s;
		break;
	}
}

/* Strings: nulls first, then bytewise, so a prefix comes before its extensions and code
 * points order as UTF-8 bytes do (U+FFFD before U+1F600, unlike UTF-16 order). */
static void test_string_keys(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	static const char *const vals[] = {
	    "b", NULL, "a", "", "ab", "\xc3\xa9", "z", NULL, "\xf0\x9f\x98\x80", "\xef\xbf\xbd",
	    "B", "a",
	};
	static const char *const ids[] = {"0", "1", "2", "3", "4",  "5",
					  "6", "7", "8", "9", "10", "11"};
	/* B(0x42) < a < a(second) < ab < b < z < é(C3) < U+FFFD(EF) < U+1F600(F0). */
	static const char *const want[] = {"1", "7", "3", "10", "2", "11", "4",
					   "0", "6", "5", "9",	"8", NULL};
	static const enum floe_sort_key keys[] = {FLOE_SORT_HOST, FLOE_SORT_SOURCE, FLOE_SORT_APP,
						  FLOE_SORT_PROC_ID, FLOE_SORT_MSG_ID};
	for (size_t k = 0; k < 5; k++) {
		struct floe_sortbuf *sb = new_sb(&a, &keys[k], 1, 1 << 16);
		for (size_t i = 0; i < 12; i++) {
			struct floe_record r = rec_msg(ids[i]);
			/* Every other string column holds a decoy in the opposite order. */
			for (size_t o = 0; o < 5; o++)
				if (o != k)
					set_str_key(&r, keys[o], vals[11 - i]);
			set_str_key(&r, keys[k], vals[i]);
			assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
		}
		expect_order(sb, want);
		floe_sortbuf_free(sb);
	}
	/* Bytes past a NUL count: the strings are (pointer, length). */
	enum floe_sort_key k = FLOE_SORT_APP;
	struct floe_sortbuf *sb = new_sb(&a, &k, 1, 1 << 16);
	struct floe_record r = rec_msg("x1");
	r.app = (struct floe_str){"a\0b", 3};
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	r = rec_msg("x2");
	r.app = (struct floe_str){"a\0a", 3};
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	r = rec_msg("x3");
	r.app = (struct floe_str){"a", 1};
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	expect_order(sb, (const char *const[]){"x3", "x2", "x1", NULL});
	floe_sortbuf_free(sb);
	assert_int_equal(a.used, 0);
}

/* Tags come first; the keys order records within a tag; with no keys, arrival order. */
static void test_tags(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	enum floe_sort_key k = FLOE_SORT_TS;
	struct floe_sortbuf *sb = new_sb(&a, &k, 1, 1 << 16);
	static const uint32_t tags[] = {2, 0, 1, 0, 2, 4000000000u, 1};
	static const int64_t ts[] = {1, 5, 3, 2, 0, 0, 3};
	static const char *const ids[] = {"a", "b", "c", "d", "e", "f", "g"};
	for (size_t i = 0; i < 7; i++) {
		struct floe_record r = rec_msg(ids[i]);
		r.ts = ts[i];
		assert_int_equal(floe_sortbuf_add(sb, tags[i], &r), 0);
	}
	static struct seen s;
	memset(&s, 0, sizeof(s));
	assert_int_equal(floe_sortbuf_drain(sb, collect, &s), 0);
	static const char *const want[] = {"d", "b", "c", "g", "e", "a", "f"};
	static const uint32_t want_tags[] = {0, 0, 1, 1, 2, 2, 4000000000u};
	assert_int_equal(s.n, 7);
	for (size_t i = 0; i < 7; i++) {
		assert_string_equal(s.msgs[i], want[i]);
		assert_int_equal(s.tags[i], want_tags[i]);
	}
	floe_sortbuf_free(sb);

	sb = new_sb(&a, NULL, 0, 1 << 16);
	for (size_t i = 0; i < 7; i++) {
		struct floe_record r = rec_msg(ids[i]);
		r.ts = ts[i];
		assert_int_equal(floe_sortbuf_add(sb, tags[i], &r), 0);
	}
	expect_order(sb, (const char *const[]){"b", "d", "c", "g", "a", "e", "f", NULL});
	floe_sortbuf_free(sb);
	assert_int_equal(a.used, 0);
}

/* Many records with few distinct keys: the result must equal a reference stable sort
 * (an insertion sort written here), across several runs of one buffer. */
struct ref {
	uint32_t tag;
	int app; /* -1 = null */
	int64_t ts;
	unsigned idx;
};

static int ref_cmp(const struct ref *x, const struct ref *y)
{
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	if (x->app != y->app)
		return x->app < y->app ? -1 : 1; /* -1 (null) first; names sort as indexes */
	return (x->ts > y->ts) - (x->ts < y->ts);
}

static void test_stable(void **state)
{
	(void)state;
	static const char *const apps[] = {"api", "cron", "db", "web"};
	enum floe_sort_key keys[] = {FLOE_SORT_APP, FLOE_SORT_TS};
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_sortbuf *sb = new_sb(&a, keys, 2, 1 << 20);
	static struct ref refs[3000];
	uint32_t seed = 12345;
	for (int round = 0; round < 3; round++) {
		size_t n = round == 0 ? 3000 : round == 1 ? 17 : 1;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			struct ref *f = &refs[i];
			f->tag = (seed >> 8) % 3;
			f->app = (int)((seed >> 12) % 5) - 1;
			f->ts = (int64_t)((seed >> 20) % 7) - 3;
			f->idx = (unsigned)i;
			char msg[24];
			snprintf(msg, sizeof(msg), "%u", f->idx);
			struct floe_record r = rec_msg(msg);
			r.ts = f->ts;
			r.app = str(f->app < 0 ? NULL : apps[f->app]);
			assert_int_equal(floe_sortbuf_add(sb, f->tag, &r), 0);
		}
		for (size_t i = 1; i < n; i++) {
			struct ref x = refs[i];
			size_t j = i;
			while (j > 0 && ref_cmp(&refs[j - 1], &x) > 0) {
				refs[j] = refs[j - 1];
				j--;
			}
			refs[j] = x;
		}
		static struct seen s;
		memset(&s, 0, sizeof(s));
		assert_int_equal(floe_sortbuf_drain(sb, collect, &s), 0);
		assert_int_equal(s.n, n);
		for (size_t i = 0; i < n; i++) {
			char msg[24];
			snprintf(msg, sizeof(msg), "%u", refs[i].idx);
			assert_string_equal(s.msgs[i], msg);
			assert_int_equal(s.tags[i], refs[i].tag);
		}
	}
	floe_sortbuf_free(sb);
	assert_int_equal(a.used, 0);
}

/* Every byte is copied: the caller's buffers are overwritten before the drain. Null and
 * empty strings stay apart, attributes keep null values and a NULL value array. */
struct check {
	int calls;
};

static int check_copy(void *ctx, uint32_t tag, const struct floe_record *r)
{
	struct check *c = ctx;
	c->calls++;
	if (c->calls == 1) {
		assert_int_equal(tag, 7);
		assert_int_equal(r->ts, 1700000000000001);
		assert_int_equal(r->received_at, -3);
		assert_int_equal(r->host.len, 5);
		assert_memory_equal(r->host.p, "node1", 5);
		assert_non_null(r->source.p); /* empty but not null */
		assert_int_equal(r->source.len, 0);
		assert_true(r->has_offset);
		assert_int_equal(r->offset, INT64_MAX);
		assert_false(r->has_facility);
		assert_true(r->has_severity);
		assert_int_equal(r->severity, 3);
		assert_int_equal(r->app.len, 4);
		assert_memory_equal(r->app.p, "ap\0p", 4);
		assert_null(r->proc_id.p);
		assert_non_null(r->msg_id.p);
		assert_int_equal(r->msg_id.len, 0);
		assert_int_equal(r->message.len, 11);
		assert_memory_equal(r->message.p, "hello world", 11);
		assert_int_equal(r->nattrs, 3);
		assert_int_equal(r->attr_key_lens[0], 5);
		assert_memory_equal(r->attr_keys[0], "level", 5);
		assert_int_equal(r->attr_val_lens[0], 4);
		assert_memory_equal(r->attr_vals[0], "warn", 4);
		assert_int_equal(r->attr_key_lens[1], 4);
		assert_memory_equal(r->attr_keys[1], "user", 4);
		assert_null(r->attr_vals[1]);
		assert_int_equal(r->attr_val_lens[1], 0);
		assert_int_equal(r->attr_key_lens[2], 0);
		assert_non_null(r->attr_keys[2]);
		assert_non_null(r->attr_vals[2]);
		assert_int_equal(r->attr_val_lens[2], 0);
	} else if (c->calls == 2) {
		assert_int_equal(tag, 7);
		assert_null(r->host.p);
		assert_null(r->source.p);
		assert_null(r->app.p);
		assert_null(r->message.p);
		assert_false(r->has_offset);
		assert_true(r->has_facility);
		assert_int_equal(r->facility, 23);
		assert_int_equal(r->nattrs, 2);
		assert_memory_equal(r->attr_keys[0], "k1", 2);
		assert_memory_equal(r->attr_keys[1], "k2", 2);
		assert_null(r->attr_vals[0]);
		assert_null(r->attr_vals[1]);
	} else {
		assert_int_equal(tag, 9);
		assert_int_equal(r->nattrs, 0);
		assert_int_equal(r->message.len, 3);
		assert_memory_equal(r->message.p, "end", 3);
	}
	return 0;
}

static void test_copies(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_sortbuf *sb = new_sb(&a, NULL, 0, 1 << 16);

	char host[] = "node1", app[] = "ap\0p", msg[] = "hello world", k0[] = "level",
	     v0[] = "warn", k1[] = "user", k2[] = "x", v2[] = "y";
	const char *keys[] = {k0, k1, k2}, *vals[] = {v0, NULL, v2};
	size_t klens[] = {5, 4, 0}, vlens[] = {4, 99, 0};
	struct floe_record r;
	memset(&r, 0, sizeof(r));
	r.ts = 1700000000000001;
	r.received_at = -3;
	r.host = (struct floe_str){host, 5};
	r.source = (struct floe_str){msg, 0};
	r.has_offset = true;
	r.offset = INT64_MAX;
	r.has_severity = true;
	r.severity = 3;
	r.facility = 77; /* not set: no facility */
	r.app = (struct floe_str){app, 4};
	r.msg_id = (struct floe_str){host, 0};
	r.message = (struct floe_str){msg, 11};
	r.nattrs = 3;
	r.attr_keys = keys;
	r.attr_key_lens = klens;
	r.attr_vals = vals;
	r.attr_val_lens = vlens;
	assert_int_equal(floe_sortbuf_add(sb, 7, &r), 0);

	/* A NULL value array: every value null. */
	const char *keys2[] = {"k1", "k2"};
	size_t klens2[] = {2, 2};
	struct floe_record r2;
	memset(&r2, 0, sizeof(r2));
	r2.has_facility = true;
	r2.facility = 23;
	r2.nattrs = 2;
	r2.attr_keys = keys2;
	r2.attr_key_lens = klens2;
	assert_int_equal(floe_sortbuf_add(sb, 7, &r2), 0);

	struct floe_record r3 = rec_msg("end");
	r3.attr_keys = keys; /* ignored: nattrs is 0 */
	assert_int_equal(floe_sortbuf_add(sb, 9, &r3), 0);

	memset(host, 'X', sizeof(host));
	memset(app, 'X', sizeof(app));
	memset(msg, 'X', sizeof(msg));
	memset(k0, 'X', sizeof(k0));
	memset(v0, 'X', sizeof(v0));
	memset(k1, 'X', sizeof(k1));
	keys[0] = keys[1] = "ZZZZZ";
	klens[0] = klens[1] = 1;
	vals[0] = "Q";
	vlens[0] = 1;

	struct check c = {0};
	assert_int_equal(floe_sortbuf_drain(sb, check_copy, &c), 0);
	assert_int_equal(c.calls, 3);

	/* Malformed records are refused as the Parquet writer would refuse them. */
	struct floe_record bad = rec_msg("m");
	bad.app = (struct floe_str){NULL, 3};
	assert_int_equal(floe_sortbuf_add(sb, 0, &bad), FLOE_EINVAL);
	bad = rec_msg("m");
	bad.nattrs = 1;
	assert_int_equal(floe_sortbuf_add(sb, 0, &bad), FLOE_EINVAL);
	bad.attr_keys = keys;
	bad.attr_key_lens = klens;
	bad.attr_vals = vals; /* values without lengths */
	assert_int_equal(floe_sortbuf_add(sb, 0, &bad), FLOE_EINVAL);
	assert_int_equal(floe_sortbuf_rows(sb), 0);
	floe_sortbuf_free(sb);
	assert_int_equal(a.used, 0);
}

/* The buffer stays within max_bytes (what the allocator sees included), says 1 when
 * full without taking the record, and takes it after a drain. */
static void test_full(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	enum floe_sort_key k = FLOE_SORT_TS;
	const size_t max = 64 * 1024;
	struct floe_sortbuf *sb = new_sb(&a, &k, 1, max);
	const size_t base = a.used;
	char text[200];
	memset(text, 'm', sizeof(text));
	size_t total = 0, runs = 0;
	static struct seen s;
	memset(&s, 0, sizeof(s));
	for (int i = 0; i < 3000; i++) {
		char id[24];
		int n = snprintf(id, sizeof(id), "%d", i);
		memcpy(text, id, (size_t)n);
		struct floe_record r = rec_msg(NULL);
		r.message = (struct floe_str){text, 20};
		r.ts = 3000 - i; /* descending: every run comes out reversed */
		r.host = (struct floe_str){text, 150};
		int rc = floe_sortbuf_add(sb, 0, &r);
		if (rc == 1) {
			size_t rows = floe_sortbuf_rows(sb);
			assert_true(rows > 100);
			assert_int_equal(floe_sortbuf_add(sb, 0, &r), 1); /* still full */
			assert_int_equal(floe_sortbuf_rows(sb), rows);
			size_t before = s.n;
			assert_int_equal(floe_sortbuf_drain(sb, collect, &s), 0);
			assert_int_equal(s.n - before, rows);
			/* The run came out ascending by ts, i.e. descending by arrival. */
			for (size_t j = before + 1; j < s.n; j++)
				assert_true(atoi(s.msgs[j]) < atoi(s.msgs[j - 1]));
			runs++;
			/* A whole buffer used the space: at least 3/4 of it for records
			 * (struct, tag, 170 bytes of text, two index slots each). */
			assert_true(
			    rows * (sizeof(struct floe_record) + 4 + 170 + 2 * sizeof(void *)) >
			    max * 3 / 4);
			rc = floe_sortbuf_add(sb, 0, &r);
		}
		assert_int_equal(rc, 0);
		total++;
		assert_true(floe_sortbuf_bytes(sb) <= max);
		assert_int_equal(a.used - base, floe_sortbuf_bytes(sb));
	}
	assert_true(runs >= 5);
	assert_int_equal(floe_sortbuf_drain(sb, collect, &s), 0);
	assert_int_equal(s.n, total);
	/* Storage is kept for the next run, within the bound. */
	assert_true(floe_sortbuf_bytes(sb) > 0 && floe_sortbuf_bytes(sb) <= max);

	/* A record larger than the whole buffer: 1 even when empty, and nothing kept. */
	static char big[70 * 1024];
	memset(big, 'b', sizeof(big));
	struct floe_record r = rec_msg(NULL);
	r.message = (struct floe_str){big, sizeof(big)};
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 1);
	assert_int_equal(floe_sortbuf_rows(sb), 0);
	/* One nearly as large as the buffer fits an empty one, whatever the earlier runs
	 * left behind. */
	r.message.len = max - 4096;
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	assert_true(floe_sortbuf_bytes(sb) <= max);
	r.message.len = 8192;
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 1);
	floe_sortbuf_clear(sb);
	assert_int_equal(floe_sortbuf_rows(sb), 0);
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	floe_sortbuf_free(sb);
	assert_int_equal(a.used, 0);
}

/* A failing callback stops the drain: what it took is gone, the rest stays in order and
 * comes first among equals in the next drain. */
static void test_drain_error(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	enum floe_sort_key k = FLOE_SORT_APP;
	struct floe_sortbuf *sb = new_sb(&a, &k, 1, 1 << 16);
	static const char *const apps[] = {"c", "a", "b", "a", "c"};
	static const char *const ids[] = {"0", "1", "2", "3", "4"};
	for (size_t i = 0; i < 5; i++) {
		struct floe_record r = rec_msg(ids[i]);
		r.app = str(apps[i]);
		assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	}
	static struct seen s;
	memset(&s, 0, sizeof(s));
	s.fail_at = 3; /* order is 1 3 2 0 4: fails on "2" */
	assert_int_equal(floe_sortbuf_drain(sb, collect, &s), -EIO);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.msgs[0], "1");
	assert_string_equal(s.msgs[1], "3");
	assert_int_equal(floe_sortbuf_rows(sb), 3);
	struct floe_record r = rec_msg("5");
	r.app = str("b");
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	r = rec_msg("6");
	r.app = str("a");
	assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	expect_order(sb, (const char *const[]){"6", "2", "5", "0", "4", NULL});
	floe_sortbuf_free(sb);
	assert_int_equal(a.used, 0);
}

/* Allocation failure at every step: new, index growth, blocks. A failed add leaves the
 * buffer as it was, so adding again after the failure gives the same final order. */
static void test_alloc_failures(void **state)
{
	(void)state;
	enum floe_sort_key keys[] = {FLOE_SORT_HOST, FLOE_SORT_TS};
	const size_t nrec = 400;
	bool done = false;
	for (long k = 0; !done && k < 10000; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_sortbuf *sb = NULL;
		int rc = floe_sortbuf_new(&a, keys, 2, 256 * 1024, &sb);
		if (rc) {
			assert_int_equal(rc, FLOE_ENOMEM);
			assert_int_equal(a.used, 0);
			continue;
		}
		bool failed = false;
		static struct seen s;
		memset(&s, 0, sizeof(s));
		for (size_t i = 0; i < nrec; i++) {
			char msg[24], host[8];
			snprintf(msg, sizeof(msg), "%zu", i);
			snprintf(host, sizeof(host), "h%zu", (i * 7) % 5);
			const char *akeys[] = {"k", "level"}, *avals[] = {msg, NULL};
			size_t aklens[] = {1, 5}, avlens[] = {strlen(msg), 0};
			struct floe_record r = rec_msg(msg);
			r.host = str(host);
			r.ts = (int64_t)(i % 3);
			r.nattrs = 2;
			r.attr_keys = akeys;
			r.attr_key_lens = aklens;
			r.attr_vals = avals;
			r.attr_val_lens = avlens;
			size_t rows = floe_sortbuf_rows(sb);
			rc = floe_sortbuf_add(sb, (uint32_t)(i % 2), &r);
			if (rc == FLOE_ENOMEM) {
				failed = true;
				assert_int_equal(floe_sortbuf_rows(sb), rows);
				a.fail_after = -1; /* the budget is back: the same add works */
				rc = floe_sortbuf_add(sb, (uint32_t)(i % 2), &r);
			}
			if (rc == 1) {
				assert_int_equal(floe_sortbuf_drain(sb, collect, &s), 0);
				rc = floe_sortbuf_add(sb, (uint32_t)(i % 2), &r);
				if (rc == FLOE_ENOMEM) {
					failed = true;
					a.fail_after = -1;
					rc = floe_sortbuf_add(sb, (uint32_t)(i % 2), &r);
				}
			}
			assert_int_equal(rc, 0);
		}
		assert_int_equal(floe_sortbuf_drain(sb, collect, &s), 0);
		assert_int_equal(s.n, nrec);
		/* One run (256 KiB holds the 400 records): tag, host, ts, arrival. */
		for (size_t i = 1; i < nrec; i++) {
			size_t x = (size_t)atoi(s.msgs[i - 1]), y = (size_t)atoi(s.msgs[i]);
			int hx = (int)((x * 7) % 5), hy = (int)((y * 7) % 5);
			bool ordered =
			    s.tags[i - 1] < s.tags[i] ||
			    (s.tags[i - 1] == s.tags[i] &&
			     (hx < hy ||
			      (hx == hy && (x % 3 < y % 3 || (x % 3 == y % 3 && x < y)))));
			if (!ordered)
				fail_msg("k=%ld: %zu before %zu", k, x, y);
		}
		floe_sortbuf_free(sb);
		assert_int_equal(a.used, 0);
		done = !failed;
	}
	assert_true(done);
}

/* A large run, to show the sort is not quadratic (this takes well under a second). */
struct last {
	int64_t ts, off;
	size_t n;
};

static int check_ascending(void *ctx, uint32_t tag, const struct floe_record *r)
{
	struct last *l = ctx;
	if (r->ts < l->ts || (r->ts == l->ts && r->offset <= l->off))
		return FLOE_EINVAL;
	l->ts = r->ts;
	l->off = r->offset;
	l->n++;
	return 0;
}

static void test_large(void **state)
{
	(void)state;
	enum floe_sort_key k = FLOE_SORT_TS;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_sortbuf *sb = new_sb(&a, &k, 1, 64u << 20);
	uint32_t seed = 99;
	for (int i = 0; i < 200000; i++) {
		seed = seed * 1103515245u + 12345u;
		struct floe_record r = rec_msg("m");
		r.ts = (seed >> 4) % 50000; /* many ties */
		r.has_offset = true;
		r.offset = i;
		assert_int_equal(floe_sortbuf_add(sb, 0, &r), 0);
	}
	struct last l = {-1, -1, 0};
	assert_int_equal(floe_sortbuf_drain(sb, check_ascending, &l), 0);
	assert_int_equal(l.n, 200000);
	floe_sortbuf_free(sb);
	assert_int_equal(a.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_key_names),	cmocka_unit_test(test_new_args),
	    cmocka_unit_test(test_int_keys),	cmocka_unit_test(test_string_keys),
	    cmocka_unit_test(test_tags),	cmocka_unit_test(test_stable),
	    cmocka_unit_test(test_copies),	cmocka_unit_test(test_full),
	    cmocka_unit_test(test_drain_error), cmocka_unit_test(test_alloc_failures),
	    cmocka_unit_test(test_large),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
