/* Tests of agent/parse/syslog (RFC 3164 and its variants): the examples of RFC 3164
 * section 5.4, what logger, rsyslog, syslog-ng and systemd's /dev/log clients send,
 * Cisco IOS and ASA lines, messages without PRI or hostname, tags, year inference across
 * New Year with clock skew and zones, invalid dates, and every prefix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/fields.h"
#include "agent/parse/syslog.h"
#include "formats/base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t utc_us(int y, int mo, int d, int h, int mi, int s, int64_t frac)
{
	struct tm tm = {.tm_year = y - 1900,
			.tm_mon = mo - 1,
			.tm_mday = d,
			.tm_hour = h,
			.tm_min = mi,
			.tm_sec = s};
	return (int64_t)timegm(&tm) * 1000000 + frac;
}

/* Received 2024-06-15 12:00:00 UTC unless a test says otherwise. */
static struct floe_syslog_opts opts;

static void setup_opts(void)
{
	memset(&opts, 0, sizeof(opts));
	opts.received_us = utc_us(2024, 6, 15, 12, 0, 0, 0);
}

static void str_eq(struct floe_str s, const char *want)
{
	if (!want) {
		assert_null(s.p);
		return;
	}
	assert_non_null(s.p);
	assert_int_equal(s.len, strlen(want));
	if (s.len)
		assert_memory_equal(s.p, want, s.len);
}

static int parse(const char *s, struct floe_syslog_msg *m, struct floe_fields *f)
{
	size_t n = strlen(s);
	static char *copy;
	free(copy);
	copy = malloc(n ? n : 1);
	memcpy(copy, s, n);
	if (f)
		floe_fields_reset(f);
	return floe_syslog_parse(copy, n, &opts, m, f);
}

/* Parses s and checks format, PRI (-1: none), host, app, proc_id and message. */
static void expect(const char *s, enum floe_syslog_format fmt, int pri, const char *host,
		   const char *app, const char *pid, const char *msg, struct floe_syslog_msg *m)
{
	assert_int_equal(parse(s, m, NULL), 0);
	assert_int_equal(m->format, fmt);
	assert_int_equal(m->has_facility, pri >= 0);
	assert_int_equal(m->has_severity, pri >= 0);
	if (pri >= 0) {
		assert_int_equal(m->facility, pri / 8);
		assert_int_equal(m->severity, pri % 8);
	}
	str_eq(m->host, host);
	str_eq(m->app, app);
	str_eq(m->proc_id, pid);
	str_eq(m->message, msg);
	assert_null(m->error);
}

static void test_rfc_examples(void **state)
{
	setup_opts();
	struct floe_syslog_msg m;
	expect("<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
	       FLOE_SYSLOG_3164, 34, "mymachine", "su", NULL,
	       "'su root' failed for lonvick on /dev/pts/8", &m);
	assert_true(m.has_ts);
	assert_int_equal(m.ts_us, utc_us(2023, 10, 11, 22, 14, 15, 0));
	/* No PRI and no header: a plain line, nothing guessed. */
	expect("Use the BFG!", FLOE_SYSLOG_PLAIN, -1, NULL, NULL, NULL, "Use the BFG!", &m);
	assert_false(m.has_ts);
	/* A word after the host without ':' is the TAG, as rsyslog reads it. */
	expect("<13>Feb  5 17:32:18 10.0.0.99 Use the BFG!", FLOE_SYSLOG_3164, 13, "10.0.0.99",
	       "Use", NULL, "the BFG!", &m);
	assert_int_equal(m.ts_us, utc_us(2024, 2, 5, 17, 32, 18, 0));
	/* "CST 1987" is no part of a BSD timestamp: CST reads as the host. */
	expect("<165>Aug 24 05:34:00 CST 1987 mymachine myproc[10]: %% It's time to make the "
	       "do-nuts.",
	       FLOE_SYSLOG_3164, 165, "CST", "1987", NULL,
	       "mymachine myproc[10]: %% It's time to make the do-nuts.", &m);
	assert_int_equal(m.ts_us, utc_us(2023, 8, 24, 5, 34, 0, 0));
	/* A year first is no timestamp: PRI, then the message. */
	expect("<0>1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's "
	       "too early to be this late.",
	       FLOE_SYSLOG_3164, 0, NULL, NULL, NULL,
	       "1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's "
	       "too early to be this late.",
	       &m);
	assert_false(m.has_ts);
	assert_null(m.ts_error);
	expect("<0>Oct 22 10:52:12 scapegoat 1990 Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org "
	       "10.1.2.3 sched[0]: That's too early to be this late.",
	       FLOE_SYSLOG_3164, 0, "scapegoat", "1990", NULL,
	       "Oct 22 10:52:01 TZ-6 scapegoat.dmz.example.org 10.1.2.3 sched[0]: That's too "
	       "early to be this late.",
	       &m);
}

/* Lines as real senders write them (logger 2.38 captured on this machine, the others
 * from their documented formats). */
static void test_real_senders(void **state)
{
	setup_opts();
	struct floe_syslog_msg m;
	/* logger --rfc3164 -i */
	expect("<13>Dec  3 11:42:40 vm myapp[23970]: hello 3164", FLOE_SYSLOG_3164, 13, "vm",
	       "myapp", "23970", "hello 3164", &m);
	assert_int_equal(m.ts_us, utc_us(2023, 12, 3, 11, 42, 40, 0));
	/* logger to a unix socket: no hostname. */
	expect("<13>Dec  3 11:42:40 root: default local", FLOE_SYSLOG_3164, 13, NULL, "root", NULL,
	       "default local", &m);
	/* logger --rfc3164 over TCP (non-transparent: the LF is not part of it). */
	expect("<13>Dec  3 11:42:46 vm myapp: tcp3164\n", FLOE_SYSLOG_3164, 13, "vm", "myapp", NULL,
	       "tcp3164", &m);
	/* systemd and glibc syslog(3) on /dev/log. */
	expect("<30>Jun 14 15:16:01 systemd[1]: Started Session 3 of user root.", FLOE_SYSLOG_3164,
	       30, NULL, "systemd", "1", "Started Session 3 of user root.", &m);
	expect("<86>Jun 14 15:16:01 sshd[1234]: pam_unix(sshd:session): session opened",
	       FLOE_SYSLOG_3164, 86, NULL, "sshd", "1234", "pam_unix(sshd:session): session opened",
	       &m);
	expect("<22>Jun 14 15:16:01 postfix/smtpd[77]: connect from unknown[10.0.0.1]",
	       FLOE_SYSLOG_3164, 22, NULL, "postfix/smtpd", "77", "connect from unknown[10.0.0.1]",
	       &m);
	expect("<6>Jun 14 15:16:01 kernel: [    0.000000] Linux version 6.1.0", FLOE_SYSLOG_3164, 6,
	       NULL, "kernel", NULL, "[    0.000000] Linux version 6.1.0", &m);
	/* rsyslog's default forwarding format, and its high-precision (RFC 3339) one. */
	expect("<38>Jun 14 15:16:01 web01 sshd[1234]: Accepted publickey for root",
	       FLOE_SYSLOG_3164, 38, "web01", "sshd", "1234", "Accepted publickey for root", &m);
	expect("<38>2024-06-14T15:16:01.123456+02:00 web01 sshd[1234]: Accepted", FLOE_SYSLOG_3164,
	       38, "web01", "sshd", "1234", "Accepted", &m);
	assert_int_equal(m.ts_us, utc_us(2024, 6, 14, 13, 16, 1, 123456));
	/* syslog-ng's BSD output with an FQDN, and an IPv6 source. */
	expect("<13>Jun 14 15:16:01 host.example.org prog: text", FLOE_SYSLOG_3164, 13,
	       "host.example.org", "prog", NULL, "text", &m);
	expect("<13>Jun 14 15:16:01 fe80::1 prog: text", FLOE_SYSLOG_3164, 13, "fe80::1", "prog",
	       NULL, "text", &m);
	/* A single-digit day with one space, and a zero-padded one. */
	expect("<13>Jun 4 15:16:01 h p: x", FLOE_SYSLOG_3164, 13, "h", "p", NULL, "x", &m);
	assert_int_equal(m.ts_us, utc_us(2024, 6, 4, 15, 16, 1, 0));
	expect("<13>jun 04 15:16:01 h p: x", FLOE_SYSLOG_3164, 13, "h", "p", NULL, "x", &m);
	assert_int_equal(m.ts_us, utc_us(2024, 6, 4, 15, 16, 1, 0));
	/* Header only. */
	expect("<13>Jun 14 15:16:01 host ", FLOE_SYSLOG_3164, 13, "host", NULL, NULL, "", &m);
	expect("<13>Jun 14 15:16:01", FLOE_SYSLOG_3164, 13, NULL, NULL, NULL, "", &m);
	expect("<13>", FLOE_SYSLOG_3164, 13, NULL, NULL, NULL, "", &m);
	expect("", FLOE_SYSLOG_PLAIN, -1, NULL, NULL, NULL, "", &m);
}

static void test_no_pri_no_host(void **state)
{
	setup_opts();
	struct floe_syslog_msg m;
	/* Some local sockets get no PRI: the header is still read. */
	expect("Oct 11 22:14:15 mymachine su: failed", FLOE_SYSLOG_3164, -1, "mymachine", "su",
	       NULL, "failed", &m);
	assert_true(m.has_ts);
	expect("2024-06-14T15:16:01Z host app[1]: x", FLOE_SYSLOG_3164, -1, "host", "app", "1", "x",
	       &m);
	/* Plain lines that merely start with digits or a date. */
	expect("2024-01-02 12:00:00 text", FLOE_SYSLOG_PLAIN, -1, NULL, NULL, NULL,
	       "2024-01-02 12:00:00 text", &m);
	expect("12:00:00 text", FLOE_SYSLOG_PLAIN, -1, NULL, NULL, NULL, "12:00:00 text", &m);
	expect("app: text", FLOE_SYSLOG_PLAIN, -1, NULL, NULL, NULL, "app: text", &m);
	/* With PRI but no timestamp, only a TAG with ':' (or [pid]:) is taken. */
	expect("<13>myapp: hello", FLOE_SYSLOG_3164, 13, NULL, "myapp", NULL, "hello", &m);
	expect("<13>myapp[9]: hello", FLOE_SYSLOG_3164, 13, NULL, "myapp", "9", "hello", &m);
	expect("<13>hello world", FLOE_SYSLOG_3164, 13, NULL, NULL, NULL, "hello world", &m);
	expect("<13>2024-01-02 12:00:00 text", FLOE_SYSLOG_3164, 13, NULL, NULL, NULL,
	       "2024-01-02 12:00:00 text", &m);
	/* A local socket's TAG without ':' would read as a hostname; no_hostname says there
	 * is none. */
	expect("<13>Jun 14 15:16:01 myscript hello", FLOE_SYSLOG_3164, 13, "myscript", NULL, NULL,
	       "hello", &m);
	opts.no_hostname = true;
	expect("<13>Jun 14 15:16:01 myscript hello", FLOE_SYSLOG_3164, 13, NULL, "myscript", NULL,
	       "hello", &m);
	expect("<13>Jun 14 15:16:01 sshd[5]: x", FLOE_SYSLOG_3164, 13, NULL, "sshd", "5", "x", &m);
}

static void test_tags(void **state)
{
	setup_opts();
	struct floe_syslog_msg m;
	const char *tag48 = "abcdefghijabcdefghijabcdefghijabcdefghijabcdefgh";
	char buf[256];
	snprintf(buf, sizeof(buf), "<13>Jun 14 15:16:01 h %s: x", tag48);
	expect(buf, FLOE_SYSLOG_3164, 13, "h", tag48, NULL, "x", &m);
	snprintf(buf, sizeof(buf), "<13>Jun 14 15:16:01 h %si: x", tag48);
	expect(buf, FLOE_SYSLOG_3164, 13, "h", NULL, NULL, buf + 22, &m);
	/* Characters real tags carry; other ones end the TAG attempt. */
	expect("<13>Jun 14 15:16:01 h org.gnome.Shell_x-1: x", FLOE_SYSLOG_3164, 13, "h",
	       "org.gnome.Shell_x-1", NULL, "x", &m);
	expect("<13>Jun 14 15:16:01 h (sd-pam): x", FLOE_SYSLOG_3164, 13, "h", NULL, NULL,
	       "(sd-pam): x", &m);
	/* [pid] then ':' or, after a timestamp, SP; an empty or unclosed [pid] is no TAG. */
	expect("<13>Jun 14 15:16:01 h app[12] x", FLOE_SYSLOG_3164, 13, "h", "app", "12", "x", &m);
	expect("<13>Jun 14 15:16:01 h app[]: x", FLOE_SYSLOG_3164, 13, "h", NULL, NULL, "app[]: x",
	       &m);
	expect("<13>Jun 14 15:16:01 h app[12: x", FLOE_SYSLOG_3164, 13, "h", NULL, NULL,
	       "app[12: x", &m);
	expect("<13>Jun 14 15:16:01 h app:x", FLOE_SYSLOG_3164, 13, "h", "app", NULL, "x", &m);
	expect("<13>Jun 14 15:16:01 h app:  x", FLOE_SYSLOG_3164, 13, "h", "app", NULL, " x", &m);
	expect("<13>Jun 14 15:16:01 h app:", FLOE_SYSLOG_3164, 13, "h", "app", NULL, "", &m);
	expect("<13>Jun 14 15:16:01 h app", FLOE_SYSLOG_3164, 13, "h", NULL, NULL, "app", &m);
	/* Extra spaces after the timestamp (some senders pad). */
	expect("<13>Jun 14 15:16:01  h app: x", FLOE_SYSLOG_3164, 13, "h", "app", NULL, "x", &m);
	expect("<13>Jun 14 15:16:01 h  app: x", FLOE_SYSLOG_3164, 13, "h", "app", NULL, "x", &m);
}

static void test_cisco(void **state)
{
	setup_opts();
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 64, &f), 0);
	struct floe_syslog_msg m;
	const char *v;
	size_t vl;
	assert_int_equal(parse("<189>123: *Mar  1 00:00:00.123: %SYS-5-CONFIG_I: Configured from "
			       "console by vty0 (10.0.0.1)",
			       &m, f),
			 0);
	assert_int_equal(m.format, FLOE_SYSLOG_3164);
	assert_int_equal(m.facility, 23);
	assert_int_equal(m.severity, 5);
	assert_true(m.has_ts);
	assert_int_equal(m.ts_us, utc_us(2024, 3, 1, 0, 0, 0, 123000));
	str_eq(m.host, NULL);
	str_eq(m.app, NULL);
	str_eq(m.msg_id, "SYS-5-CONFIG_I");
	str_eq(m.message, "%SYS-5-CONFIG_I: Configured from console by vty0 (10.0.0.1)");
	assert_true(floe_fields_find(f, "cisco.seq", 9, &v, &vl));
	assert_int_equal(vl, 3);
	assert_memory_equal(v, "123", 3);

	assert_int_equal(parse("<189>45: router1: %LINEPROTO-5-UPDOWN: Line protocol on Interface "
			       "Gi0/1, changed state to up",
			       &m, f),
			 0);
	str_eq(m.host, "router1");
	assert_false(m.has_ts);
	str_eq(m.msg_id, "LINEPROTO-5-UPDOWN");
	str_eq(m.message, "%LINEPROTO-5-UPDOWN: Line protocol on Interface Gi0/1, changed state "
			  "to up");

	/* Origin-id and a timestamp with year and zone (UTC is honoured). */
	opts.zone_off_s = 3600;
	assert_int_equal(
	    parse("<187>46: sw2: .Jun  3 2024 10:00:00.5 UTC: %SEC_LOGIN-5-LOGIN_SUCCESS: "
		  "Login Success",
		  &m, f),
	    0);
	str_eq(m.host, "sw2");
	assert_int_equal(m.ts_us, utc_us(2024, 6, 3, 10, 0, 0, 500000));
	str_eq(m.msg_id, "SEC_LOGIN-5-LOGIN_SUCCESS");
	/* Another zone name leaves the configured zone. */
	assert_int_equal(parse("<187>47: Jun  3 2024 10:00:00 CEST: %X-1-Y: z", &m, f), 0);
	assert_int_equal(m.ts_us, utc_us(2024, 6, 3, 9, 0, 0, 0));
	opts.zone_off_s = 0;

	/* No sequence number (`no service sequence-numbers`). */
	assert_int_equal(
	    parse("<190>*Mar  1 18:46:11: %SYS-6-LOGGINGHOST_STARTSTOP: started", &m, f), 0);
	assert_true(m.has_ts);
	str_eq(m.msg_id, "SYS-6-LOGGINGHOST_STARTSTOP");
	assert_false(floe_fields_find(f, "cisco.seq", 9, &v, &vl));
	/* ASA: no timestamp, and with one and a host followed by " : ". */
	assert_int_equal(parse("<166>%ASA-6-302013: Built outbound TCP connection 1", &m, f), 0);
	str_eq(m.msg_id, "ASA-6-302013");
	str_eq(m.message, "%ASA-6-302013: Built outbound TCP connection 1");
	assert_int_equal(parse("<166>Jun 05 2024 12:00:00 asa-1 : %ASA-6-302013: Built", &m, f), 0);
	str_eq(m.host, "asa-1");
	assert_int_equal(m.ts_us, utc_us(2024, 6, 5, 12, 0, 0, 0));
	str_eq(m.msg_id, "ASA-6-302013");
	str_eq(m.message, "%ASA-6-302013: Built");
	floe_fields_free(f);
}

static void expect_year(int64_t recv, const char *ts, int64_t want)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "<13>%s h app: x", ts);
	opts.received_us = recv;
	struct floe_syslog_msg m;
	assert_int_equal(parse(buf, &m, NULL), 0);
	assert_true(m.has_ts);
	assert_int_equal(m.ts_us, want);
}

static void test_year_inference(void **state)
{
	setup_opts();
	/* Across New Year, both ways. */
	expect_year(utc_us(2025, 1, 1, 0, 0, 10, 0), "Dec 31 23:59:59",
		    utc_us(2024, 12, 31, 23, 59, 59, 0));
	expect_year(utc_us(2024, 12, 31, 23, 59, 0, 0), "Jan  1 00:00:10",
		    utc_us(2025, 1, 1, 0, 0, 10, 0));
	/* A few days in the future is clock skew; more is last year's. */
	expect_year(utc_us(2024, 6, 1, 0, 0, 0, 0), "Jun  3 23:00:00",
		    utc_us(2024, 6, 3, 23, 0, 0, 0));
	expect_year(utc_us(2024, 6, 1, 0, 0, 0, 0), "Jun  5 00:00:00",
		    utc_us(2023, 6, 5, 0, 0, 0, 0));
	expect_year(utc_us(2024, 6, 1, 0, 0, 0, 0), "Nov 29 00:00:00",
		    utc_us(2023, 11, 29, 0, 0, 0, 0));
	expect_year(utc_us(2024, 6, 1, 0, 0, 0, 0), "May 31 23:00:00",
		    utc_us(2024, 5, 31, 23, 0, 0, 0));
	/* Feb 29 goes to the nearest leap year at or before the receive year. */
	expect_year(utc_us(2024, 3, 1, 0, 0, 0, 0), "Feb 29 12:00:00",
		    utc_us(2024, 2, 29, 12, 0, 0, 0));
	expect_year(utc_us(2025, 1, 5, 0, 0, 0, 0), "Feb 29 12:00:00",
		    utc_us(2024, 2, 29, 12, 0, 0, 0));
	/* The zone of the sender decides the local year: at 22:40 UTC on Dec 31 it is
	 * already Jan 1 at +02:00. */
	opts.zone_off_s = 7200;
	expect_year(utc_us(2024, 12, 31, 22, 40, 0, 0), "Jan  1 00:30:00",
		    utc_us(2024, 12, 31, 22, 30, 0, 0));
	opts.zone_off_s = -5 * 3600;
	expect_year(utc_us(2025, 1, 1, 3, 0, 0, 0), "Dec 31 22:00:00",
		    utc_us(2025, 1, 1, 3, 0, 0, 0));
	opts.zone_off_s = 0;
	/* An ISO timestamp without offset takes the zone too. */
	opts.zone_off_s = 3600;
	expect_year(0, "2024-06-14T15:16:01.5", utc_us(2024, 6, 14, 14, 16, 1, 500000));
	opts.zone_off_s = 0;
	/* Fractions on a BSD time, kept to the µs (truncated). */
	expect_year(utc_us(2024, 6, 1, 0, 0, 0, 0), "Jun  1 00:00:00.1234567",
		    utc_us(2024, 6, 1, 0, 0, 0, 123456));
}

static void expect_bad_ts(const char *s, const char *why, size_t off, const char *app,
			  const char *msg)
{
	struct floe_syslog_msg m;
	assert_int_equal(parse(s, &m, NULL), 0);
	assert_int_equal(m.format, FLOE_SYSLOG_3164);
	assert_false(m.has_ts);
	assert_string_equal(m.ts_error, why);
	assert_int_equal(m.ts_error_off, off);
	str_eq(m.app, app);
	str_eq(m.message, msg);
}

static void test_bad_dates(void **state)
{
	setup_opts();
	expect_bad_ts("<13>Feb 30 10:00:00 h app: x", "day out of range", 4, "app", "x");
	expect_bad_ts("<13>Apr 31 10:00:00 h app: x", "day out of range", 4, "app", "x");
	expect_bad_ts("<13>Apr  0 10:00:00 h app: x", "day out of range", 4, "app", "x");
	expect_bad_ts("<13>Apr 10 24:00:00 h app: x", "time out of range", 4, "app", "x");
	expect_bad_ts("<13>Apr 10 23:60:00 h app: x", "time out of range", 4, "app", "x");
	expect_bad_ts("<13>Feb 29 2023 10:00:00: %A-1-B: x", "day out of range", 4, NULL,
		      "%A-1-B: x");
	expect_bad_ts("<13>2024-02-30T10:00:00Z h app: x", "TIMESTAMP out of range", 12, "app",
		      "x");
	/* Feb 29 received in a year whose neighbours are not leap years. */
	opts.received_us = utc_us(2026, 6, 1, 0, 0, 0, 0);
	expect_bad_ts("<13>Feb 29 10:00:00 h app: x", "day out of range", 4, "app", "x");
	/* A receive time that is no time. */
	opts.received_us = INT64_MAX;
	expect_bad_ts("<13>Feb 28 10:00:00 h app: x", "receive time out of range", 4, "app", "x");
	setup_opts();
	/* Not a BSD timestamp at all: message. */
	struct floe_syslog_msg m;
	expect("<13>Foo 10 10:00:00 h app: x", FLOE_SYSLOG_3164, 13, NULL, NULL, NULL,
	       "Foo 10 10:00:00 h app: x", &m);
	expect("<13>Jun 10 10:00:00x h", FLOE_SYSLOG_3164, 13, NULL, NULL, NULL,
	       "Jun 10 10:00:00x h", &m);
	expect("<13>Jun 100 10:00:00 h", FLOE_SYSLOG_3164, 13, NULL, NULL, NULL,
	       "Jun 100 10:00:00 h", &m);
}

static void test_invalid_pri(void **state)
{
	setup_opts();
	static const struct {
		const char *in, *why;
	} bad[] = {
	    {"<256>Oct 11 22:14:15 h su: x", "PRI over 191"},
	    {"<01>Oct 11 22:14:15 h su: x", "PRI with a leading zero"},
	    {"<13Oct 11 22:14:15 h su: x", "PRI without '>'"},
	    {"<html><body>", "PRI without digits"},
	};
	struct floe_syslog_msg m;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		assert_int_equal(parse(bad[k].in, &m, NULL), FLOE_EPARSE);
		assert_int_equal(m.format, FLOE_SYSLOG_INVALID);
		assert_string_equal(m.error, bad[k].why);
		assert_false(m.has_facility || m.has_severity || m.has_ts);
		str_eq(m.message, bad[k].in);
		str_eq(m.host, NULL);
	}
	size_t n = strlen(bad[0].in);
	assert_int_equal(floe_syslog_parse_3164(bad[0].in, n, &opts, &m, NULL), FLOE_EPARSE);
}

/* Every prefix of each sample, through the detector: parsed or kept whole, never read
 * past the end (heap copies of exactly the prefix). */
static void test_prefixes(void **state)
{
	setup_opts();
	static const char *const samples[] = {
	    "<13>Dec  3 11:42:40 vm myapp[23970]: hello",
	    "<13>Jun  3 2024 10:00:00.5 UTC: %SEC_LOGIN-5-LOGIN_SUCCESS: Login",
	    "<187>46: sw2: .Jun  3 10:00:00: %X-5-Y: z",
	    "Oct 11 22:14:15 mymachine su: failed",
	    "<13>2024-02-30T10:00:00Z h app: x",
	    "<166>Jun 05 2024 12:00:00 asa-1 : %ASA-6-302013: Built",
	};
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 4, 32, &f), 0);
	for (size_t s = 0; s < sizeof(samples) / sizeof(samples[0]); s++) {
		size_t n = strlen(samples[s]);
		for (size_t k = 0; k <= n; k++) {
			char *p = malloc(k ? k : 1);
			memcpy(p, samples[s], k);
			struct floe_syslog_msg m;
			floe_fields_reset(f);
			int rc = floe_syslog_parse(p, k, &opts, &m, f);
			assert_true(rc == 0 || rc == FLOE_EPARSE);
			if (rc)
				assert_ptr_equal(m.message.p, p);
			assert_non_null(m.message.p);
			assert_true(m.message.len <= k);
			free(p);
		}
	}
	floe_fields_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc_examples),   cmocka_unit_test(test_real_senders),
	    cmocka_unit_test(test_no_pri_no_host), cmocka_unit_test(test_tags),
	    cmocka_unit_test(test_cisco),	   cmocka_unit_test(test_year_inference),
	    cmocka_unit_test(test_bad_dates),	   cmocka_unit_test(test_invalid_pri),
	    cmocka_unit_test(test_prefixes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
