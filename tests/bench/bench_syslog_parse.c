/* Syslog parsing benchmark (single core): parses N RFC 5424 messages (loggen's shape:
 * full header, one SD element) and N RFC 3164 messages (rsyslog's forwarding shape:
 * host, tag[pid]) from a pool of 4096 distinct generated ones, into the result struct and
 * a field collector as the agent would, then frames N octet-counted RFC 5424 messages fed
 * in 64 KiB reads. Prints messages/s and MB/s for each: figures, not assertions.
 *
 * usage: bench_syslog_parse [N]   (default 1000000) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/parse/fields.h"
#include "agent/parse/framing.h"
#include "agent/parse/syslog.h"

#define POOL 4096
#define MSG_MAX 512

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so every run parses the same messages. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static const char *const words[] = {"connection", "from",    "accepted", "user",  "session",
				    "opened",	  "closed",  "timeout",	 "error", "request",
				    "GET",	  "/api/v1", "status",	 "bytes", "latency"};

/* A message body of 60-120 bytes of words and numbers. */
static size_t body(char *out, size_t cap)
{
	size_t o = 0, target = 60 + rnd() % 60;
	while (o < target && o + 24 < cap) {
		if (rnd() % 3 == 0)
			o += (size_t)snprintf(out + o, cap - o, "%" PRIu64 " ", rnd() % 100000);
		else
			o += (size_t)snprintf(out + o, cap - o, "%s ",
					      words[rnd() % (sizeof(words) / sizeof(words[0]))]);
	}
	return o ? o - 1 : 0;
}

static size_t make_5424(char *out, uint64_t i)
{
	char b[256];
	size_t bl = body(b, sizeof(b));
	return (size_t)snprintf(out, MSG_MAX,
				"<%d>1 2024-06-%02dT%02d:%02d:%02d.%06d+02:00 host-%d app-%d %d "
				"ID%d [meta sequenceId=\"%" PRIu64 "\" sysUpTime=\"%d\"] %.*s",
				(int)(rnd() % 192), (int)(1 + rnd() % 28), (int)(rnd() % 24),
				(int)(rnd() % 60), (int)(rnd() % 60), (int)(rnd() % 1000000),
				(int)(rnd() % 100), (int)(rnd() % 20), (int)(rnd() % 65536),
				(int)(rnd() % 50), i, (int)(rnd() % 100000), (int)bl, b);
}

static size_t make_3164(char *out)
{
	static const char *const mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	char b[256];
	size_t bl = body(b, sizeof(b));
	return (size_t)snprintf(out, MSG_MAX, "<%d>%s %2d %02d:%02d:%02d host-%d app-%d[%d]: %.*s",
				(int)(rnd() % 192), mon[rnd() % 12], (int)(1 + rnd() % 28),
				(int)(rnd() % 24), (int)(rnd() % 60), (int)(rnd() % 60),
				(int)(rnd() % 100), (int)(rnd() % 20), (int)(rnd() % 65536),
				(int)bl, b);
}

static char pool[POOL][MSG_MAX];
static size_t pool_len[POOL];

static void report(const char *what, uint64_t n, uint64_t bytes, double secs)
{
	printf("%-34s %8" PRIu64 " msgs  avg %3" PRIu64 " B  %10.0f msg/s  %7.1f MB/s\n", what, n,
	       bytes / (n ? n : 1), (double)n / secs, (double)bytes / secs / 1e6);
}

static int parse_run(const char *what, uint64_t n, struct floe_fields *f)
{
	struct floe_syslog_opts o = {.received_us = INT64_C(1718370000000000)};
	uint64_t bytes = 0, fails = 0, nattrs = 0;
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++) {
		size_t k = i % POOL;
		struct floe_syslog_msg m;
		floe_fields_reset(f);
		if (floe_syslog_parse(pool[k], pool_len[k], &o, &m, f) != 0)
			fails++;
		nattrs += floe_fields_count(f);
		bytes += pool_len[k];
	}
	double secs = now_s() - t0;
	report(what, n, bytes, secs);
	if (fails) {
		fprintf(stderr, "%" PRIu64 " messages failed to parse\n", fails);
		return 1;
	}
	return nattrs == (uint64_t)-1;
}

static int frame_run(uint64_t n)
{
	/* A stream of octet-counted messages, read again and again in 64 KiB chunks. */
	size_t cap = (size_t)POOL * (MSG_MAX + 8), len = 0;
	char *stream = malloc(cap);
	struct floe_framer *fr = NULL;
	(void)floe_framer_new(NULL, 65536, &fr);
	if (!stream || !fr)
		return 1;
	for (size_t k = 0; k < POOL; k++)
		len += (size_t)snprintf(stream + len, cap - len, "%zu %s", pool_len[k], pool[k]);
	uint64_t frames = 0, bytes = 0;
	double t0 = now_s();
	while (frames < n) {
		for (size_t off = 0; off < len && frames < n;) {
			size_t c = len - off < 65536 ? len - off : 65536, at = 0;
			while (at < c) {
				struct floe_frame f;
				size_t used;
				if (floe_framer_push(fr, stream + off + at, c - at, &used, &f)) {
					frames++;
					bytes += f.len;
				}
				at += used;
			}
			off += c;
		}
	}
	double secs = now_s() - t0;
	report("framing (octet counting, 64 KiB)", frames, bytes, secs);
	floe_framer_free(fr);
	free(stream);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	struct floe_fields *f = NULL;
	if (floe_fields_new(NULL, 64, 4096, &f) != 0)
		return 1;
	if (!f || n == 0)
		return 1;
	int rc = 0;
	for (size_t k = 0; k < POOL; k++)
		pool_len[k] = make_5424(pool[k], k);
	rc |= parse_run("rfc5424 (parse + SD to fields)", n, f);
	rc |= frame_run(n);
	for (size_t k = 0; k < POOL; k++)
		pool_len[k] = make_3164(pool[k]);
	rc |= parse_run("rfc3164 (parse)", n, f);
	floe_fields_free(f);
	return rc;
}
