/* The agent's status pages (agent.http.listen): /metrics in the Prometheus text format
 * (version 0.0.4), /healthz and /livez, served by platform/httpd.c's thread from documents the
 * main loop renders and publishes at most once a second. The counters are metrics.json's,
 * rendered from the same table (counters.h); the commit histogram, the S3 client's
 * requests, the last commit's age and floe_healthy are this page's own. Nothing here
 * changes the runner's state.
 *
 * What /healthz calls unhealthy, each with its reason in the body (503), a line each:
 * - the configuration file could not be used, and the last good one runs instead;
 * - the store cannot be reached or refuses for now (the spool keeps the data);
 * - tables are behind this agent's record of its commits (named; their spools keep
 *   their rows);
 * - the spool is over spool.max_bytes, so the inputs wait (policy block);
 * - sealed data has waited in the spool for three commit intervals without a commit
 *   (the store refuses or is unreachable); an idle agent with an empty spool is fine;
 * - an input matches files it cannot open (permissions);
 * - the committer thread made no progress for its bound (runner_stall.c: stuck in a
 *   hung file system's call, a deadlock), named with what it was doing;
 * - the main loop published nothing for STALE_MS (stuck), which the server itself
 *   answers for every page. That allowance is long because a commit to a slow store
 *   runs on the main loop (request deadlines and retries) and is no failure.
 * /livez answers 200 whatever /healthz says, 503 only in those last two cases: it is the
 * page for a liveness probe (Kubernetes', a fleet manager's), which restarts what it
 * finds dead; /healthz is for alerts and readiness. */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/decode.h"
#include "agent/run/progress.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/clock.h"
#include "platform/httpd.h"
#include "platform/listen.h"
#include "platform/log.h"
#include "platform/owner.h"
#ifndef FLOE_NO_S3
#include "platform/s3/s3_stats.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PUBLISH_US 1000000LL
#define PROGRESS_US 1000000LL
#define STALE_MS (10 * 60 * 1000LL)
/* The /metrics document: the runner's families (about 10 KiB), the per-input families'
 * HELP lines (6 KiB), S3's (5 KiB) and the histogram, with room to grow; and about 1 KiB
 * more per input for their samples. 16 KiB was too small once S3's families were there:
 * /metrics was then never updated. */
#define DOC_BASE (48u << 10)
#define DOC_PER_INPUT 1536u
/* /healthz's reasons: the longest is the store's error (up to STORE_ERROR_MAX) in its
 * sentence, which must not be cut (a gcc build without link-time optimisation refused the
 * 512 bytes this was: the error alone may fill them), beside the configuration's note
 * and a line per unhealthy input. */
#define REASON_MAX (STORE_ERROR_MAX + 4096)
/* A status address that cannot be taken (another service holds the port, the address is
 * not on an interface yet at boot, a port below 1024 without the capability) is tried
 * again this often: the pages are for watching the agent, and the agent must not stop
 * reading for want of them, which exiting (and a service manager's restart loop) did. */
#define RETRY_US (5 * 1000000LL)

enum { DOC_METRICS, DOC_HEALTHZ, DOC_LIVEZ };

struct run_status {
	struct floe_httpd *httpd; /* NULL while the address cannot be taken (retry_us) */
	/* The listener to take again: its address, a try at most every RETRY_US. */
	struct floe_listen_uri u;
	struct floe_httpd_opts opts;
	int64_t retry_us;
	uint64_t tries;
	int64_t published_us; /* monotonic, the last publish; 0: none yet */
	int64_t started_us;
	int64_t last_commit_us;	     /* monotonic; 0: none by this process */
	int64_t last_commit_wall_us; /* for the timestamp gauge */
	int64_t pending_since_us;    /* the spool was first seen holding data since then */
	uint64_t commits_seen;
	size_t cap; /* the documents' capacity */
};

/* Stops h, a status listener of the process's, its counters kept in c for the next. */
static void release(struct floe_runner_carry *c, struct floe_httpd *h)
{
	struct floe_httpd_stats hs;
	floe_httpd_get_stats(h, &hs);
	c->status.requests += hs.requests;
	c->status.evicted += hs.evicted;
	c->status.timed_out += hs.timed_out;
	floe_httpd_stop(h);
}

void floe_run_status_release(struct floe_runner_carry *c)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (c && c->httpd) {
		release(c, c->httpd);
		c->httpd = NULL;
	}
}

static void announce(struct floe_runner *r, struct run_status *s, bool late, bool kept);

int floe_runner_status_start(struct floe_runner *r, struct floe_err *err)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	const char *listen = r->set.cfg->agent.http_listen;
	if (!listen)
		return 0;
	char uri[FLOE_LISTEN_URI_MAX + 8];
	struct floe_listen_uri u;
	int len = snprintf(uri, sizeof(uri), "tcp://%s", listen);
	if (len < 0 || (size_t)len >= sizeof(uri) ||
	    floe_listen_uri_parse(uri, (size_t)len, &u, NULL) != 0)
		return floe_err_set(err, FLOE_EINVAL, "agent.http.listen: '%s' is not HOST:PORT",
				    listen);
	struct run_status *s = floe_calloc(r->alloc, 1, sizeof(*s));
	if (!s)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	r->status = s;
	s->started_us = floe_run_mono_us(r);
	struct floe_runner_carry *c = r->env.o.carry;
	if (c && c->status.started_us) {
		/* A reload: the process's start and last commit, not this runner's. */
		s->started_us = c->status.started_us;
		s->last_commit_us = c->status.last_commit_us;
		s->last_commit_wall_us = c->status.last_commit_wall_us;
	}
	size_t cap = DOC_BASE;
	if (__builtin_mul_overflow((size_t)DOC_PER_INPUT, r->in.n, &cap) ||
	    __builtin_add_overflow(cap, (size_t)DOC_BASE, &cap))
		return floe_err_set(err, FLOE_ENOMEM, "agent.http.listen: too many inputs");
	s->cap = cap;
	/* The previous configuration's listener, when it listens where this one would and
	 * its documents hold this one's (a reload): no scrape finds it closed. */
	bool kept = c && c->httpd && c->httpd_cap >= cap && strcmp(c->httpd_listen, listen) == 0;
	if (kept) {
		s->httpd = c->httpd;
		s->cap = c->httpd_cap;
		c->httpd = NULL;
	}
	floe_run_status_release(c);
	static const char *const paths[] = {"/metrics", "/healthz", "/livez"};
	s->u = u;
	s->opts = (struct floe_httpd_opts){.alloc = r->alloc,
					   .paths = paths,
					   .npaths = 3,
					   .doc_cap = cap,
					   .max_age_ms = STALE_MS};
	const char *what = "listen";
	int rc = kept ? 0 : floe_httpd_start(&u, &s->opts, &s->httpd, &what);
	if (rc == FLOE_ENOMEM)
		return floe_err_set(err, rc, "agent.http.listen %s: %s: %s", listen, what,
				    floe_strerror(rc));
	if (rc) {
		s->httpd = NULL;
		s->tries = 1;
		s->retry_us = floe_run_mono_us(r) + RETRY_US;
		floe_error("agent.http.listen %s: %s: %s: the agent runs without /metrics, /healthz "
			   "and /livez, and tries the address again every %lld s",
			   listen, what, floe_strerror(rc), RETRY_US / 1000000);
		return 0;
	}
	announce(r, s, false, kept);
	floe_runner_status_publish(r, true);
	return 0;
}

/* Says where the pages are served: with port 0 the kernel chose one (tests). */
static void announce(struct floe_runner *r, struct run_status *s, bool late, bool kept)
{
	const char *listen = r->set.cfg->agent.http_listen;
	struct floe_listen_uri u = s->u;
	char bound[FLOE_LISTEN_URI_MAX];
	if (floe_listen_uri_format(&u, floe_httpd_port(s->httpd), bound, sizeof(bound)) < 0)
		snprintf(bound, sizeof(bound), "tcp://%s", listen);
	if (late)
		floe_info("status: serving /metrics, /healthz and /livez on %s (the address taken at "
			  "try %" PRIu64 ")",
			  bound, s->tries + 1);
	else
		floe_info("status: serving /metrics, /healthz and /livez on %s%s", bound,
			  kept ? " (kept open across the reload)" : "");
}

/* The address again, once RETRY_US passed since the last try. Returns whether the pages
 * are served. */
static bool listen_again(struct floe_runner *r, struct run_status *s, int64_t t)
{
	if (s->httpd)
		return true;
	if (t < s->retry_us)
		return false;
	const char *what = "listen";
	int rc = floe_httpd_start(&s->u, &s->opts, &s->httpd, &what);
	if (rc) {
		s->httpd = NULL;
		s->tries++;
		s->retry_us = t + RETRY_US;
		/* Said at the start; again once an hour of tries, not at each. */
		if (s->tries % (3600 / (RETRY_US / 1000000)) == 0)
			floe_warn("agent.http.listen %s: %s: %s, still (%" PRIu64 " tries)",
				  r->set.cfg->agent.http_listen, what, floe_strerror(rc), s->tries);
		return false;
	}
	announce(r, s, true, false);
	return true;
}

void floe_runner_status_stop(struct floe_runner *r)
{
	if (!r->status)
		return;
	struct floe_runner_carry *c = r->env.o.carry;
	const char *listen = r->set.cfg->agent.http_listen;
	if (c && r->status->httpd) {
		c->status.started_us = r->status->started_us;
		c->status.last_commit_us = r->status->last_commit_us;
		c->status.last_commit_wall_us = r->status->last_commit_wall_us;
		if (c->next && c->next->agent.http_listen && listen &&
		    strcmp(c->next->agent.http_listen, listen) == 0 && !c->httpd) {
			/* The next configuration listens here too: it takes this listener over,
			 * which serves the last documents meanwhile (its counters go on). */
			c->httpd = r->status->httpd;
			c->httpd_cap = r->status->cap;
			snprintf(c->httpd_listen, sizeof(c->httpd_listen), "%s", listen);
			r->status->httpd = NULL;
		}
	}
	if (c && r->status->httpd)
		release(c, r->status->httpd);
	else
		floe_httpd_stop(r->status->httpd);
	floe_free(r->alloc, r->status);
	r->status = NULL;
}

/* One metric family: its HELP and TYPE lines. */
static int family(struct floe_buf *b, const char *name, const char *type, const char *help)
{
	return floe_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int metric(struct floe_buf *b, const char *name, const char *type, const char *help,
		  uint64_t v)
{
	int rc = family(b, name, type, help);
	return rc ? rc : floe_buf_printf(b, "%s %" PRIu64 "\n", name, v);
}

/* floe_commit_duration_seconds: how long commits took, from the hand-over to the
 * committer to its report (uploads included), as a Prometheus histogram. */
static int commit_histogram(struct floe_runner *r, struct floe_buf *b)
{
	int rc = family(b, "floe_commit_duration_seconds", "histogram",
			"Commit duration, uploads included.");
	/* The commits of the configurations that ran before a reload count too. */
	static const struct commit_hist none;
	const struct commit_hist *was = r->env.o.carry ? &r->env.o.carry->hist : &none;
	uint64_t cum = 0;
	for (size_t i = 0; i <= COMMIT_BUCKETS && rc == 0; i++) {
		cum += r->hist.count[i] + was->count[i];
		if (i < COMMIT_BUCKETS)
			rc = floe_buf_printf(b, "floe_commit_duration_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
					     commit_bucket_s[i], cum);
		else
			rc = floe_buf_printf(b, "floe_commit_duration_seconds_bucket{le=\"+Inf\"} %" PRIu64
						"\n",
					     cum);
	}
	if (rc == 0)
		rc = floe_buf_printf(b, "floe_commit_duration_seconds_sum %.6f\n"
					"floe_commit_duration_seconds_count %" PRIu64 "\n",
				     r->hist.sum_s + was->sum_s, r->hist.n + was->n);
	return rc;
}

#ifndef FLOE_NO_S3
/* The S3 client's requests by kind, their errors by class and their retries (the
 * process's, platform/s3/s3_stats.h), only when the warehouse is on S3. There is no REST
 * catalog: the catalog's requests are the S3 requests of its metadata files. */
static int s3_metrics(struct floe_runner *r, struct floe_buf *b)
{
	if (r->set.cfg->lake.catalog != FLOE_CATALOG_S3)
		return 0;
	struct floe_s3_stats st;
	floe_s3_stats_get(&st);
	int rc = family(b, "floe_s3_requests_total", "counter",
			"S3 requests sent (every attempt), by kind.");
	for (int k = 0; k < FLOE_S3_KINDS && rc == 0; k++)
		rc = floe_buf_printf(b, "floe_s3_requests_total{kind=\"%s\"} %" PRIu64 "\n",
				     floe_s3_kind_name(k), st.requests[k]);
	if (rc == 0)
		rc = family(b, "floe_s3_retries_total", "counter",
			    "S3 requests that were retries of a failed attempt, by kind.");
	for (int k = 0; k < FLOE_S3_KINDS && rc == 0; k++)
		rc = floe_buf_printf(b, "floe_s3_retries_total{kind=\"%s\"} %" PRIu64 "\n",
				     floe_s3_kind_name(k), st.retries[k]);
	if (rc == 0)
		rc = family(b, "floe_s3_errors_total", "counter",
			    "S3 requests that failed, by kind and class (auth: 401 and 403; an "
			    "answer the request expects, as the 404 of an existence check or the "
			    "412 of a lost commit race, is not an error).");
	for (int k = 0; k < FLOE_S3_KINDS && rc == 0; k++)
		for (int f = 0; f < FLOE_S3_FAILS && rc == 0; f++)
			rc = floe_buf_printf(b,
					     "floe_s3_errors_total{kind=\"%s\",class=\"%s\"} %" PRIu64
					     "\n",
					     floe_s3_kind_name(k), floe_s3_fail_name(f),
					     st.errors[k][f]);
	return rc;
}
#endif

/* The status page's own: the last commit's age, and the listener's counters (the
 * agent's counters are the table's). */
static int age_metrics(struct floe_runner *r, struct floe_buf *b, int64_t now_us)
{
	struct run_status *s = r->status;
	int64_t since = s->last_commit_us ? s->last_commit_us : s->started_us;
	int rc = metric(b, "floe_last_commit_age_seconds", "gauge",
			"Seconds since the last successful commit (since the start before one).",
			(uint64_t)(now_us - since) / 1000000);
	if (rc == 0)
		rc = metric(b, "floe_last_commit_timestamp_seconds", "gauge",
			    "Unix time of the last successful commit by this process; 0: none yet.",
			    (uint64_t)s->last_commit_wall_us / 1000000);
	/* This listener's own: who holds it (slow clients closed for newer ones, requests
	 * not complete in time) shows here. */
	struct floe_httpd_stats hs;
	floe_httpd_get_stats(s->httpd, &hs);
	if (r->env.o.carry) {
		hs.requests += r->env.o.carry->status.requests;
		hs.evicted += r->env.o.carry->status.evicted;
		hs.timed_out += r->env.o.carry->status.timed_out;
	}
	if (rc == 0)
		rc = metric(b, "floe_http_requests_total", "counter",
			    "Requests the status listener answered.", hs.requests);
	if (rc == 0)
		rc = metric(b, "floe_http_evicted_total", "counter",
			    "Unanswered connections closed for a newer one, the listener full.",
			    hs.evicted);
	if (rc == 0)
		rc = metric(b, "floe_http_timed_out_total", "counter",
			    "Connections closed without a complete request in time.", hs.timed_out);
	return rc;
}

/* Appends a reason line to why (cut at cap, never past it). */
static void reason(char *why, size_t cap, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reason(char *why, size_t cap, size_t *n, const char *fmt, ...)
{
	if (*n >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(why + *n, cap - *n, fmt, ap);
	va_end(ap);
	*n = k < 0 ? *n : *n + (size_t)k < cap ? *n + (size_t)k : cap;
}

/* /healthz: "ok", or the reasons found (see the top of the file), a line each: the
 * configuration's, the first of the store's and spool's (they follow from one another:
 * a store away makes the spool wait), and each input's. */
static bool healthy(struct floe_runner *r, int64_t now_us, char *why, size_t cap)
{
	struct run_status *s = r->status;
	uint64_t spool = floe_runner_spool_bytes(r);
	size_t n = 0;
	why[0] = '\0';
	if (r->env.o.config_note)
		reason(why, cap, &n, "%s\n", r->env.o.config_note);
	if (floe_run_stalled(r))
		reason(why, cap, &n,
		       "the committer thread is stuck: no progress for %" PRId64
		       " s (the last step: %s); commits stop, and the agent exits for a restart "
		       "at %" PRId64 " s\n",
		       (floe_clock_mono_ns() - r->com.stall.seen_ns) / 1000000000,
		       floe_beat_doing(&r->com.beat), r->com.stall.exit_ns / 1000000000);
	char behind[256];
	int64_t since =
	    s->last_commit_us > s->pending_since_us ? s->last_commit_us : s->pending_since_us;
	int64_t limit = 3 * r->set.commit_interval_us;
	if (r->lake.store_down) {
		reason(why, cap, &n,
		       "store unreachable or refusing: %s; the spool holds %" PRIu64
		       " bytes, committed when it answers\n",
		       r->lake.store_error, spool);
	} else if (floe_runner_tables_behind(r, behind, sizeof(behind))) {
		reason(why, cap, &n,
		       "tables behind this agent's record of its commits (their metadata "
		       "restored from an older copy?): %s; their commits wait in the spool "
		       "until it is restored\n",
		       behind);
	} else if (r->lake.blocked && r->lake.disk_low) {
		reason(why, cap, &n,
		       "state_dir's file system full: %" PRIu64 " bytes free; the inputs wait for "
		       "commits to make room\n",
		       r->lake.disk_avail);
	} else if (r->lake.blocked) {
		reason(why, cap, &n,
		       "spool full: %" PRIu64 " bytes, over spool.max_bytes (%" PRIu64
		       "); the inputs wait for commits\n",
		       spool, r->set.spool_max);
	} else if (spool > 0 && s->pending_since_us && now_us - since > limit) {
		reason(why, cap, &n,
		       "no commit for %" PRId64 " s (3 commit intervals) while the spool "
		       "holds %" PRIu64 " bytes; %" PRIu64 " commits failed so far%s%s\n",
		       (now_us - since) / 1000000, spool, r->stats.commit_failures,
		       r->lake.commit_error[0] ? ", the last: " : "", r->lake.commit_error);
	}
	/* Each input says what keeps it from its work (a damaged journal file is counted,
	 * not a health problem). */
	for (size_t i = 0; i < r->in.n && n < cap; i++)
		if (!floe_input_healthy(r->in.all[i], r->set.cfg->inputs[i].name, why + n, cap - n))
			n += strnlen(why + n, cap - n);
	if (n)
		return false;
	snprintf(why, cap, "ok\n");
	return true;
}

/* Notes commits and the spool's first data since the last look, for the ages. */
static void observe(struct floe_runner *r, int64_t now_us)
{
	struct run_status *s = r->status;
	if (r->stats.commits != s->commits_seen) {
		s->commits_seen = r->stats.commits;
		s->last_commit_us = now_us;
		s->last_commit_wall_us = floe_run_wall_us(r);
	}
	if (floe_runner_spool_bytes(r) == 0)
		s->pending_since_us = 0;
	else if (!s->pending_since_us)
		s->pending_since_us = now_us;
}

void floe_runner_show_progress(struct floe_runner *r)
{
	r->progress.on = true;
	r->progress.start_us = r->progress.drawn_us = floe_run_mono_us(r);
}

/* Draws the progress line if it is on and a second has passed: the bytes and lines the
 * inputs read, and what their open files hold beyond (lag), which makes the total. */
static void progress_draw(struct floe_runner *r, int64_t t)
{
	if (!r->progress.on || t - r->progress.drawn_us < PROGRESS_US)
		return;
	r->progress.drawn_us = t;
	uint64_t done = 0, lag = 0, lines = 0;
	for (size_t i = 0; i < r->in.n; i++) {
		uint64_t d, g, n;
		/* A listener or the journal has no bytes still to read. */
		if (floe_input_progress(r->in.all[i], &d, &g, &n)) {
			done += d;
			lag += g;
			lines += n;
		}
	}
	char line[FLOE_LOG_STATUS_MAX];
	floe_progress_format(line, sizeof(line), done, done + lag, lines, t - r->progress.start_us);
	floe_log_status(line);
}

void floe_runner_status_publish(struct floe_runner *r, bool now)
{
	/* It reads the main thread's state as it stands (counters, spool, inputs): the
	 * snapshot is consistent because only that thread writes it. */
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct run_status *s = r->status;
	int64_t t = floe_run_mono_us(r);
	progress_draw(r, t);
	if (!s || (!now && s->published_us && t - s->published_us < PUBLISH_US))
		return;
	s->published_us = t;
	if (!listen_again(r, s, t))
		return;
	observe(r, t);
	char why[REASON_MAX];
	bool ok = healthy(r, t, why, sizeof(why));
	struct floe_buf b;
	floe_buf_init(&b, r->alloc, DOC_BASE);
	int rc = floe_run_counters_render(r, true, &b);
	if (rc == 0)
		rc = commit_histogram(r, &b);
#ifndef FLOE_NO_S3
	if (rc == 0)
		rc = s3_metrics(r, &b);
#endif
	if (rc == 0)
		rc = age_metrics(r, &b, t);
	if (rc == 0)
		rc = metric(&b, "floe_healthy", "gauge", "1 when /healthz answers 200.", ok);
	/* Which build runs, for dashboards and alerts across a fleet: a constant 1 whose
	 * labels name it (the version is the package's for a packaged floe). */
	if (rc == 0)
		rc = family(&b, "floe_build_info", "gauge", "1; the labels name floe's build.");
	if (rc == 0)
		rc = floe_buf_printf(&b, "floe_build_info{version=\"%s\",commit=\"%s\",build_type=\"%s\"} 1\n",
				     FLOE_VERSION, FLOE_GIT_COMMIT, FLOE_BUILD_TYPE);
	if (rc == 0)
		rc = floe_httpd_publish(s->httpd, DOC_METRICS, 200,
					"text/plain; version=0.0.4; charset=utf-8", (char *)b.data,
					b.len);
	if (rc)
		floe_warn("status: /metrics not updated: %s",
			  rc == -E2BIG ? "larger than its buffer" : floe_strerror(rc));
	floe_buf_fini(&b);
	floe_httpd_publish(s->httpd, DOC_HEALTHZ, ok ? 200 : 503, "text/plain; charset=utf-8", why,
			   strlen(why));
	/* /livez: the main loop turns and the committer is not stuck. It answers 503 only
	 * when one of them is (the server says the first after STALE_MS): a liveness probe
	 * restarts a stuck agent, never one that waits for its store, which a restart would
	 * not help. */
	if (floe_run_stalled(r))
		floe_httpd_publish(s->httpd, DOC_LIVEZ, 503, "text/plain; charset=utf-8",
				   "committer stuck\n", 16);
	else
		floe_httpd_publish(s->httpd, DOC_LIVEZ, 200, "text/plain; charset=utf-8", "ok\n", 3);
}
