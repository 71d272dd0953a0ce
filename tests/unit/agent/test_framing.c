/* Tests of agent/parse/framing (RFC 6587): octet counting and non-transparent frames (LF,
 * CRLF, NUL) told apart per frame, oversized frames truncated and skipped, bad counts
 * re-read as text, half-sent frames flushed at close, counters, memory, and the same
 * frames whatever the chunking (whole, byte by byte, every two-way split, random). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/framing.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAXF 64

struct got {
	size_t n;
	char *data[MAXF];
	size_t len[MAXF];
	unsigned flags[MAXF];
};

static void got_add(struct got *g, const struct floe_frame *f)
{
	assert_true(g->n < MAXF);
	assert_non_null(f->p);
	g->data[g->n] = malloc(f->len + 1);
	memcpy(g->data[g->n], f->p, f->len);
	g->len[g->n] = f->len;
	g->flags[g->n] = f->flags;
	g->n++;
}

static void got_free(struct got *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->data[i]);
	g->n = 0;
}

/* Feeds p[0..n) in chunks of the sizes sizes[] (cycled; NULL = all at once), each chunk a
 * heap copy of exactly its bytes, then closes when close is set. */
static void feed(struct floe_framer *fr, const char *p, size_t n, const size_t *sizes,
		 size_t nsizes, bool close, struct got *g)
{
	size_t off = 0, k = 0;
	while (off < n) {
		size_t c = sizes ? sizes[k++ % nsizes] : n;
		if (c > n - off)
			c = n - off;
		char *chunk = malloc(c);
		memcpy(chunk, p + off, c);
		size_t at = 0;
		while (at < c) {
			struct floe_frame f;
			size_t used;
			int rc = floe_framer_push(fr, chunk + at, c - at, &used, &f);
			assert_true(used <= c - at);
			if (rc == 1)
				got_add(g, &f);
			else
				assert_int_equal(used, c - at);
			at += used;
		}
		free(chunk);
		off += c;
	}
	struct floe_frame f;
	if (close && floe_framer_close(fr, &f) == 1)
		got_add(g, &f);
}

struct want {
	const char *s;
	unsigned flags;
};

static void expect_frames(size_t max, const char *p, size_t n, bool close, const struct want *w,
			  size_t nw)
{
	struct floe_framer *fr = NULL;
	assert_int_equal(floe_framer_new(NULL, max, &fr), 0);
	assert_non_null(fr);
	struct got g = {0};
	feed(fr, p, n, NULL, 0, close, &g);
	assert_int_equal(g.n, nw);
	for (size_t i = 0; i < nw; i++) {
		assert_int_equal(g.len[i], strlen(w[i].s));
		assert_memory_equal(g.data[i], w[i].s, g.len[i]);
		assert_int_equal(g.flags[i], w[i].flags);
	}
	got_free(&g);
	floe_framer_free(fr);
}

#define EXPECT(max, lit, close, ...)                                                               \
	do {                                                                                       \
		const struct want w_[] = {__VA_ARGS__};                                            \
		expect_frames(max, lit, sizeof(lit) - 1, close, w_, sizeof(w_) / sizeof(w_[0]));   \
	} while (0)
#define EXPECT_NONE(max, lit, close) expect_frames(max, lit, sizeof(lit) - 1, close, NULL, 0)

enum { T = FLOE_FRAME_TRUNCATED, C = FLOE_FRAME_AT_CLOSE, B = FLOE_FRAME_BAD_LENGTH };

static void test_octet_counting(void **state)
{
	EXPECT(64, "5 hello6 world!", false, {"hello", 0}, {"world!", 0});
	/* Counted bytes may hold LF, tabs and digits. */
	EXPECT(64, "7 a\nb\tc 12 0", false, {"a\nb\tc 1", 0});
	/* logger --octet-count --rfc5424 over TCP. */
	EXPECT(128,
	       "96 <13>1 2026-12-03T11:42:46.850740+00:00 vm myapp - - [timeQuality tzKnown=\"1\" "
	       "isSynced=\"0\"] octet",
	       false,
	       {"<13>1 2026-12-03T11:42:46.850740+00:00 vm myapp - - [timeQuality tzKnown=\"1\" "
		"isSynced=\"0\"] octet",
		0});
	/* A LF after each counted frame (some senders add one) is an empty frame. */
	EXPECT(64, "3 abc\n3 def\n", false, {"abc", 0}, {"def", 0});
	/* Exactly max, then over max: the first max bytes, the rest skipped exactly. */
	EXPECT(8, "8 abcdefgh12 abcdefghijkl3 xyz", false, {"abcdefgh", 0}, {"abcdefgh", T},
	       {"xyz", 0});
}

static void test_non_transparent(void **state)
{
	EXPECT(64, "a\nb\r\nc\0d\n", false, {"a", 0}, {"b", 0}, {"c", 0}, {"d", 0});
	/* Empty frames are skipped; a CR not before LF is content. */
	EXPECT(64, "\n\n\r\n\0\0a\rb\n", false, {"a\rb", 0});
	/* Octet counting and text can alternate frame by frame. */
	EXPECT(64, "5 hello<13>x\n3 abc<14>y\0", false, {"hello", 0}, {"<13>x", 0}, {"abc", 0},
	       {"<14>y", 0});
	/* Over max: the first max bytes, then skipped up to the trailer. */
	EXPECT(8, "abcdefghijkl\nxy\n", false, {"abcdefgh", T}, {"xy", 0});
	EXPECT(8, "abcdefghi\n", false, {"abcdefgh", T});
	/* Exactly max with a CRLF trailer is not over max; with CR then NUL or another byte
	 * the CR is content, one byte too many. */
	EXPECT(8, "abcdefgh\r\nz\n", false, {"abcdefgh", 0}, {"z", 0});
	EXPECT(8, "abcdefgh\r\0z\n", false, {"abcdefgh", T}, {"z", 0});
	EXPECT(8, "abcdefgh\rx\nz\n", false, {"abcdefgh", T}, {"z", 0});
	EXPECT(8, "abcdefgh\r\r\nz\n", false, {"abcdefgh", T}, {"z", 0});
	EXPECT(8, "abcdefg\r\r\n", false, {"abcdefg\r", 0});
}

static void test_bad_length(void **state)
{
	/* A leading zero, a digit run not ended by SP, too many digits: read as text. */
	EXPECT(64, "05 hello\n3 abc", false, {"05 hello", B}, {"abc", 0});
	EXPECT(64, "0\n", false, {"0", B});
	EXPECT(64, "2024-01-01 msg\n", false, {"2024-01-01 msg", B});
	EXPECT(64, "123456789 x\n", false, {"123456789 x", B});
	EXPECT(64, "12345678\n", false, {"12345678", B});
	EXPECT(64, "123\0", false, {"123", B});
	/* Eight digits are a count (skipped past max), nine are not. */
	EXPECT(8, "99999999 abcdefghij", false, {"abcdefgh", T});
	/* The digits of a bad count count against max like any other byte. */
	EXPECT(8, "12345678x\n", false, {"12345678", T | B});
	EXPECT(8, "1234567890\nz\n", false, {"12345678", T | B}, {"z", 0});
}

static void test_close(void **state)
{
	EXPECT(64, "5 hel", true, {"hel", C});
	EXPECT(64, "abc", true, {"abc", C});
	EXPECT(64, "abc\r", true, {"abc", C});
	EXPECT(64, "a\nbc", true, {"a", 0}, {"bc", C});
	EXPECT(64, "12", true, {"12", C});
	EXPECT(64, "05 x", true, {"05 x", B | C});
	/* Nothing half-sent: no frame. */
	EXPECT_NONE(64, "5 ", true);
	EXPECT(64, "a\n", true, {"a", 0});
	EXPECT_NONE(64, "", true);
	/* The truncated head is out already; the skipped rest gives nothing. */
	EXPECT(8, "19 abcdefghijk", true, {"abcdefgh", T});
	EXPECT(8, "abcdefghijk", true, {"abcdefgh", T});
	/* Close resets for the next connection; counters stay. */
	struct floe_framer *fr = NULL;
	assert_int_equal(floe_framer_new(NULL, 16, &fr), 0);
	struct got g = {0};
	feed(fr, "10 abc", 6, NULL, 0, true, &g);
	feed(fr, "3 xyz", 5, NULL, 0, true, &g);
	assert_int_equal(g.n, 2);
	assert_memory_equal(g.data[0], "abc", 3);
	assert_int_equal(g.flags[0], C);
	assert_memory_equal(g.data[1], "xyz", 3);
	assert_int_equal(g.flags[1], 0);
	struct floe_framer_stats st;
	floe_framer_stats(fr, &st);
	assert_int_equal(st.frames, 2);
	assert_int_equal(st.flushed_at_close, 1);
	/* reset drops a partial frame without a frame. */
	feed(fr, "abc", 3, NULL, 0, false, &g);
	floe_framer_reset(fr);
	feed(fr, "def\n", 4, NULL, 0, false, &g);
	assert_int_equal(g.n, 3);
	assert_memory_equal(g.data[2], "def", 3);
	got_free(&g);
	floe_framer_free(fr);
}

/* A stream with every case in it. */
static const char stream[] = "5 hello<13>x\n3 abc<14>y\0\n\r\n"
			     "12 abcdefghijkl"
			     "abcdefghijklmnop\nxy\r\n"
			     "05 bad\n2024-01-01 msg\r\n123456789 x\n"
			     "abcdefghij\r\nabcdefghij\r\0abcdefghij\rq\n"
			     "10 0123456789"
			     "1 z"
			     "tail\r";

static void frames_of(const size_t *sizes, size_t nsizes, struct got *g,
		      struct floe_framer_stats *st)
{
	struct floe_framer *fr = NULL;
	assert_int_equal(floe_framer_new(NULL, 10, &fr), 0);
	feed(fr, stream, sizeof(stream) - 1, sizes, nsizes, true, g);
	floe_framer_stats(fr, st);
	floe_framer_free(fr);
}

static void same(const struct got *a, const struct floe_framer_stats *sa, const struct got *b,
		 const struct floe_framer_stats *sb)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_int_equal(a->len[i], b->len[i]);
		assert_memory_equal(a->data[i], b->data[i], a->len[i]);
		assert_int_equal(a->flags[i], b->flags[i]);
	}
	assert_memory_equal(sa, sb, sizeof(*sa));
}

static void test_chunking(void **state)
{
	struct got whole = {0}, g = {0};
	struct floe_framer_stats sw, s;
	frames_of(NULL, 0, &whole, &sw);
	const struct want w[] = {
	    {"hello", 0},	   {"<13>x", 0},	  {"abc", 0},	     {"<14>y", 0},
	    {"abcdefghij", T},	   {"abcdefghij", T},	  {"xy", 0},	     {"05 bad", B},
	    {"2024-01-01", T | B}, {"123456789 ", T | B}, {"abcdefghij", 0}, {"abcdefghij", T},
	    {"abcdefghij", T},	   {"0123456789", 0},	  {"z", 0},	     {"tail", C},
	};
	assert_int_equal(whole.n, sizeof(w) / sizeof(w[0]));
	for (size_t i = 0; i < whole.n; i++) {
		assert_int_equal(whole.len[i], strlen(w[i].s));
		assert_memory_equal(whole.data[i], w[i].s, whole.len[i]);
		assert_int_equal(whole.flags[i], w[i].flags);
	}
	assert_int_equal(sw.frames, 16);
	assert_int_equal(sw.truncated, 6);
	assert_int_equal(sw.bad_length, 3);
	assert_int_equal(sw.flushed_at_close, 1);

	/* Byte by byte. */
	const size_t one = 1;
	frames_of(&one, 1, &g, &s);
	same(&whole, &sw, &g, &s);
	got_free(&g);
	/* Every split into two chunks. */
	for (size_t cut = 1; cut < sizeof(stream) - 1; cut++) {
		size_t sizes[2] = {cut, sizeof(stream)};
		frames_of(sizes, 2, &g, &s);
		same(&whole, &sw, &g, &s);
		got_free(&g);
	}
	/* Random chunk sizes from a fixed seed (xorshift), many rounds. */
	uint32_t x = 2463534242u;
	for (int round = 0; round < 200; round++) {
		size_t sizes[32];
		for (size_t k = 0; k < 32; k++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			sizes[k] = 1 + x % 23;
		}
		frames_of(sizes, 32, &g, &s);
		same(&whole, &sw, &g, &s);
		got_free(&g);
	}
	got_free(&whole);
}

static void test_memory(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_framer *fr = NULL;
	assert_int_equal(floe_framer_new(&a, 65536, &fr), 0);
	assert_non_null(fr);
	size_t idle = floe_framer_idle_footprint(), foot = floe_framer_footprint(65536);
	assert_int_equal(a.used, idle);
	/* An idle framer is small: a thousand connections hold a thousand of them. */
	assert_true(idle <= 512);
	assert_true(foot - 65536 <= 512);
	/* A frame in progress grows the buffer, never past max + 1 ... */
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	size_t peak = 0;
	for (int i = 0; i < 100; i++) {
		size_t at = 0;
		while (at < sizeof(buf)) {
			struct floe_frame f;
			size_t used;
			floe_framer_push(fr, buf + at, sizeof(buf) - at, &used, &f);
			at += used;
			if (a.used > peak)
				peak = a.used;
		}
	}
	assert_true(peak <= idle + 65537);
	assert_true(peak > idle + 32768);
	/* ... and trim gives it back once the frame is over. */
	size_t used;
	struct floe_frame f;
	assert_int_equal(floe_framer_push(fr, "\n", 1, &used, &f), 0); /* end of the skipped rest */
	floe_framer_trim(fr);
	assert_int_equal(a.used, idle);
	/* Short frames use the framer's own buffer: no allocation. */
	size_t count = a.count;
	assert_int_equal(floe_framer_push(fr, "hello\n", 6, &used, &f), 1);
	assert_int_equal(f.len, 5);
	assert_int_equal(a.count, count);
	floe_framer_free(fr);
	assert_int_equal(a.used, 0);

	/* A budget that refuses the growth cuts the frame there, counted. */
	floe_alloc_init(&a, idle + 1024);
	fr = NULL;
	assert_int_equal(floe_framer_new(&a, 65536, &fr), 0);
	int got = 0;
	size_t at = 0;
	while (at < sizeof(buf)) {
		got += floe_framer_push(fr, buf + at, sizeof(buf) - at, &used, &f);
		if (got == 1 && f.flags) {
			assert_true(f.flags & FLOE_FRAME_TRUNCATED);
			assert_true(f.len < 4096);
		}
		at += used;
	}
	assert_int_equal(got, 1);
	/* The skipped rest ends at the LF; the next frame is whole. */
	assert_int_equal(floe_framer_push(fr, "\nok\n", 4, &used, &f), 1);
	assert_int_equal(f.len, 2);
	assert_int_equal(f.flags, 0);
	struct floe_framer_stats st;
	floe_framer_stats(fr, &st);
	assert_true(st.truncated_memory >= 1);
	assert_int_equal(st.truncated, 1);
	floe_framer_free(fr);

	floe_alloc_init(&a, idle - 1);
	fr = NULL;
	assert_int_equal(floe_framer_new(&a, 65536, &fr), FLOE_ENOMEM);
	assert_int_equal(floe_framer_new(NULL, FLOE_FRAMER_MIN_MESSAGE - 1, &fr), FLOE_EINVAL);
	assert_int_equal(floe_framer_new(NULL, SIZE_MAX, &fr), FLOE_EINVAL);
	assert_null(fr); /* untouched on failure */
	assert_int_equal(floe_framer_footprint(SIZE_MAX), 0);
	floe_framer_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_octet_counting), cmocka_unit_test(test_non_transparent),
	    cmocka_unit_test(test_bad_length),	   cmocka_unit_test(test_close),
	    cmocka_unit_test(test_chunking),	   cmocka_unit_test(test_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
