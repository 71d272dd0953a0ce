/* The counter tables and their two renderers (counters.h). A counter added here appears
 * in metrics.json and in /metrics at once; tests check that the two documents name the
 * same counters both ways. */
#include "agent/run/counters.h"

#include "formats/base/buf.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum {
	GAUGE = 1, /* else a counter, whose family ends in _total */
	MS = 2,	   /* milliseconds in metrics.json, seconds (with a fraction) in /metrics */
};

struct ctr {
	const char *json, *prom, *help;
	size_t off;
	unsigned flags;
	unsigned kinds; /* per input: the kinds that have it */
};

#define G(f) offsetof(struct floe_run_counters, f)
#define I(f) offsetof(struct floe_input_counters, f)
#define ALL (FLOE_CTR_TAIL | FLOE_CTR_SYSLOG | FLOE_CTR_JOURNAL)

/* In metrics.json's historical order: its readers look for `"parse_failures":N,`. */
static const struct ctr glob[] = {
    {"lines", "floe_lines_total", "Lines read by every input.", G(lines), 0, 0},
    {"seals", "floe_seals_total", "Batches sealed into the spool.", G(seals), 0, 0},
    {"commits", "floe_commits_total", "Successful commits to the table.", G(commits), 0, 0},
    {"commit_failures", "floe_commit_failures_total", "Commits that failed (retried later).",
     G(commit_failures), 0, 0},
    {"commit_attempts", "floe_commit_attempts_total",
     "Attempts to create the next metadata version (a lost race is retried).",
     G(commit_attempts), 0, 0},
    {"commit_conflicts", "floe_commit_conflicts_total",
     "Attempts another writer won (the commit was retried on its version).",
     G(commit_conflicts), 0, 0},
    {"rows_committed", "floe_rows_committed_total", "Rows committed to the table.",
     G(rows_committed), 0, 0},
    {"replaced_utf8", "floe_replaced_utf8_total",
     "Lines whose invalid UTF-8 bytes were replaced.", G(replaced_utf8), 0, 0},
    {"dropped_entries", "floe_spool_dropped_entries_total",
     "Spool entries dropped by policy drop_oldest.", G(dropped_entries), 0, 0},
    {"dropped_rows", "floe_spool_dropped_rows_total", "Rows of the dropped entries.",
     G(dropped_rows), 0, 0},
    {"dropped_bytes", "floe_spool_dropped_bytes_total", "Bytes of the dropped entries.",
     G(dropped_bytes), 0, 0},
    {"quarantined", "floe_spool_quarantined_entries", "Damaged spool entries set aside.",
     G(quarantined), GAUGE, 0},
    {"blocked_ms", "floe_spool_blocked_seconds_total",
     "Time the inputs waited for a full spool (policy block), the wait under way included.",
     G(blocked_ms), MS, 0},
    {"spool_bytes", "floe_spool_bytes",
     "Bytes of sealed files waiting in the spool (raw and aggregate tables').",
     G(spool_bytes), GAUGE, 0},
    {"spool_max_bytes", "floe_spool_max_bytes", "spool.max_bytes.", G(spool_max_bytes), GAUGE,
     0},
    {"spool_entries", "floe_spool_entries", "Sealed batches waiting in the spool.",
     G(spool_entries), GAUGE, 0},
    {"next_seq", "floe_spool_next_seq", "The sequence number of the next sealed batch.",
     G(next_seq), GAUGE, 0},
    {"groups_evicted", "floe_multiline_groups_evicted_total",
     "Multiline groups closed early: too many open at once.", G(groups_evicted), 0, 0},
    {"group_timeouts", "floe_multiline_group_timeouts_total",
     "Multiline groups closed by their timeout.", G(group_timeouts), 0, 0},
    {"container_format_errors", "floe_container_format_errors_total",
     "Container log lines (cri, docker) that did not parse, kept as they were.",
     G(container_format_errors), 0, 0},
    {"records_truncated", "floe_records_truncated_total",
     "Assembled records cut at their size limit.", G(records_truncated), 0, 0},
    {"partial_incomplete", "floe_partial_incomplete_total",
     "Partial container lines whose end never came, committed as they were.",
     G(partial_incomplete), 0, 0},
    {"spool_damaged", "floe_spool_damaged_total",
     "Spool entries whose data files failed their check before upload.", G(spool_damaged), 0,
     0},
    {"spool_reread_entries", "floe_spool_reread_entries_total",
     "Damaged spool entries rebuilt from their inputs.", G(spool_reread_entries), 0, 0},
    {"spool_reread_rows", "floe_spool_reread_rows_total", "Rows of the rebuilt entries.",
     G(spool_reread_rows), 0, 0},
    {"spool_lost_entries", "floe_spool_lost_entries_total",
     "Damaged spool entries lost: their input no longer held the bytes.",
     G(spool_lost_entries), 0, 0},
    {"spool_lost_rows", "floe_spool_lost_rows_total", "Rows of the lost entries.",
     G(spool_lost_rows), 0, 0},
    {"state_damaged", "floe_state_damaged_total",
     "Damaged state files set aside (the checkpoint, an aggregation's open windows).",
     G(state_damaged), 0, 0},
    {"lines_truncated_memory", "floe_lines_truncated_memory_total",
     "Lines cut to what the memory budget could take.", G(lines_truncated_memory), 0, 0},
    {"bytes_truncated_memory", "floe_bytes_truncated_memory_total",
     "Bytes cut off those lines.", G(bytes_truncated_memory), 0, 0},
    {"lines_dropped_memory", "floe_lines_dropped_memory_total",
     "Lines dropped: the memory budget could take nothing of them.", G(lines_dropped_memory),
     0, 0},
    {"parse_failures", "floe_parse_failures_total",
     "Lines or messages the inputs' parsers rejected (kept as plain lines).",
     G(parse_failures), 0, 0},
    {"ts_failures", "floe_ts_failures_total",
     "Lines or messages whose timestamp was absent or did not parse (receive time used).",
     G(ts_failures), 0, 0},
    {"memory_used", "floe_memory_used_bytes", "Bytes allocated against agent.memory_limit.",
     G(memory_used), GAUGE, 0},
    {"memory_peak", "floe_memory_peak_bytes", "Most bytes allocated at once.", G(memory_peak),
     GAUGE, 0},
    {"memory_limit", "floe_memory_limit_bytes", "agent.memory_limit.", G(memory_limit), GAUGE,
     0},
    {"state_free_bytes", "floe_state_free_bytes",
     "Free bytes of state_dir's file system when last asked.", G(state_free_bytes), GAUGE, 0},
    {"state_disk_low", "floe_state_disk_low",
     "1 while state_dir's file system is too full for a seal: inputs wait.",
     G(state_disk_low), GAUGE, 0},
    {"store_reachable", "floe_store_reachable",
     "0 while the warehouse cannot be reached or refuses (the spool waits), else 1.",
     G(store_reachable), GAUGE, 0},
    {"agg_late", "floe_agg_late_events_total",
     "Events of the aggregations that came after their window closed.", G(agg_late), 0, 0},
    {"agg_late_dropped", "floe_agg_late_dropped_total", "Late events dropped (policy drop).",
     G(agg_late_dropped), 0, 0},
    {"agg_future", "floe_agg_future_events_total",
     "Events dated further ahead of the clock than max_future_skew (handled as late).",
     G(agg_future), 0, 0},
};

static const struct ctr input[] = {
    {"lines", "floe_input_lines_total", "Lines read (messages, entries).", I(lines), 0, ALL},
    {"bytes", "floe_input_bytes_total", "Bytes read.", I(bytes), 0, ALL},
    {"parse_failures", "floe_input_parse_failures_total",
     "Lines the input's parser rejected (kept as plain lines).", I(parse_failures), 0,
     FLOE_CTR_TAIL | FLOE_CTR_SYSLOG},
    {"ts_failures", "floe_input_ts_failures_total",
     "Lines whose timestamp was absent or did not parse (receive time used).",
     I(ts_failures), 0, FLOE_CTR_TAIL | FLOE_CTR_SYSLOG},
    {"files_open", "floe_input_files_open", "Files followed with an open descriptor.",
     I(files_open), GAUGE, FLOE_CTR_TAIL},
    {"files_parked", "floe_input_files_parked", "Idle files closed, reopened on a change.",
     I(files_parked), GAUGE, FLOE_CTR_TAIL},
    {"files_unreadable", "floe_input_files_unreadable",
     "Matched files (a journal's: its files) that cannot be opened.", I(files_unreadable),
     GAUGE, FLOE_CTR_TAIL | FLOE_CTR_JOURNAL},
    {"patterns_unmatched", "floe_input_patterns_unmatched", "Patterns matching no file.",
     I(patterns_unmatched), GAUGE, FLOE_CTR_TAIL},
    {"files_skipped", "floe_input_files_skipped",
     "Matched files refused (a symlink out of bounds, the agent's own files).",
     I(files_skipped), GAUGE, FLOE_CTR_TAIL},
    {"long_lines_split", "floe_input_long_lines_split_total",
     "Lines over max_line_bytes, split.", I(long_lines_split), 0, FLOE_CTR_TAIL},
    {"long_lines_truncated", "floe_input_long_lines_truncated_total",
     "Lines over max_line_bytes, cut.", I(long_lines_truncated), 0, FLOE_CTR_TAIL},
    {"truncations", "floe_input_truncations_total", "Files truncated while followed.",
     I(truncations), 0, FLOE_CTR_TAIL},
    {"rotated_closed", "floe_input_rotated_closed_total",
     "Rotated files closed once drained.", I(rotated_closed), 0, FLOE_CTR_TAIL},
    {"lag_bytes", "floe_input_lag_bytes", "Bytes written to the open files and not read yet.",
     I(lag_bytes), GAUGE, FLOE_CTR_TAIL},
    {"files_draining", "floe_input_files_draining",
     "Rotated or deleted files still being read.", I(files_draining), GAUGE, FLOE_CTR_TAIL},
    {"truncated", "floe_syslog_truncated_total", "Messages cut at max_message_bytes.",
     I(truncated), 0, FLOE_CTR_SYSLOG},
    {"bad_length", "floe_syslog_bad_length_total",
     "Octet counts that were none (the frame read as text).", I(bad_length), 0,
     FLOE_CTR_SYSLOG},
    {"at_close", "floe_syslog_at_close_total",
     "Frames a closing connection (or the stop) left half sent, kept.", I(at_close), 0,
     FLOE_CTR_SYSLOG},
    {"dropped", "floe_syslog_dropped_total", "Messages that found no room in the queue.",
     I(dropped), 0, FLOE_CTR_SYSLOG},
    {"lost_at_stop", "floe_syslog_lost_at_stop_total",
     "Messages received but still queued when the agent stopped (not committed).",
     I(lost_at_stop), 0, FLOE_CTR_SYSLOG},
    {"kernel_drops", "floe_syslog_kernel_drops_total",
     "Datagrams the kernel dropped, the socket's receive buffer full.", I(kernel_drops), 0,
     FLOE_CTR_SYSLOG},
    {"connections", "floe_syslog_connections_total", "Stream connections accepted.",
     I(connections), 0, FLOE_CTR_SYSLOG},
    {"rejected", "floe_syslog_connections_rejected_total",
     "Connections refused: max_connections, or no memory.", I(rejected), 0, FLOE_CTR_SYSLOG},
    {"open", "floe_syslog_connections_open", "Stream connections open.", I(open), GAUGE,
     FLOE_CTR_SYSLOG},
    {"closed_idle", "floe_syslog_connections_idle_closed_total",
     "Connections closed by idle_timeout.", I(closed_idle), 0, FLOE_CTR_SYSLOG},
    {"handshake_failures", "floe_syslog_handshake_failures_total",
     "TLS handshakes that failed.", I(handshake_failures), 0, FLOE_CTR_SYSLOG},
    {"read_errors", "floe_syslog_read_errors_total", "Connections closed on a read error.",
     I(read_errors), 0, FLOE_CTR_SYSLOG},
    {"paused", "floe_syslog_paused_total", "Times the queue ran low and reading stopped.",
     I(paused), 0, FLOE_CTR_SYSLOG},
    {"truncated", "floe_journal_truncated_total",
     "Entries whose fields were cut (over 160 KiB together).", I(truncated), 0,
     FLOE_CTR_JOURNAL},
    {"resets", "floe_journal_resets_total",
     "Saved cursors not valid here: read from start_at.", I(resets), 0, FLOE_CTR_JOURNAL},
    {"own_skipped", "floe_journal_own_entries_skipped_total",
     "The agent's own journal entries left out (include_own: false).", I(own_skipped), 0,
     FLOE_CTR_JOURNAL},
    {"read_errors", "floe_journal_read_errors_total",
     "Journal reads that failed (a damaged file): logged and counted, not a health problem.",
     I(read_errors), 0, FLOE_CTR_JOURNAL},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t at(const void *base, size_t off)
{
	return *(const uint64_t *)(const void *)((const char *)base + off);
}

static const char *kind_name(unsigned kind)
{
	return kind == FLOE_CTR_SYSLOG ? "syslog" : kind == FLOE_CTR_JOURNAL ? "journal" : "tail";
}

int floe_counters_json(const struct floe_run_counters *g, const struct floe_input_counters *in,
		       size_t n, struct floe_buf *b)
{
	int rc = 0;
	for (size_t k = 0; k < N(glob) && rc == 0; k++)
		rc = floe_buf_printf(b, "%s\"%s\":%" PRIu64, k ? "," : "{", glob[k].json,
				     at(g, glob[k].off));
	if (rc == 0)
		rc = floe_buf_printf(b, ",\"inputs\":[");
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = floe_buf_printf(b, "%s{\"type\":\"%s\"", i ? "," : "", kind_name(in[i].kind));
		if (rc == 0 && in[i].name)
			rc = floe_buf_printf(b, ",\"name\":\"%s\"", in[i].name);
		for (size_t k = 0; k < N(input) && rc == 0; k++)
			if (input[k].kinds & in[i].kind)
				rc = floe_buf_printf(b, ",\"%s\":%" PRIu64, input[k].json,
						     at(&in[i], input[k].off));
		if (rc == 0)
			rc = floe_buf_printf(b, "}");
	}
	return rc ? rc : floe_buf_printf(b, "]}\n");
}

static int family(struct floe_buf *b, const struct ctr *c, const char *where)
{
	const char *type = c->flags & GAUGE ? "gauge" : "counter";
	return floe_buf_printf(b, "# HELP %s %s metrics.json: %s%s.\n# TYPE %s %s\n", c->prom,
			       c->help, where, c->json, c->prom, type);
}

static int sample(struct floe_buf *b, const struct ctr *c, const char *labels, uint64_t v)
{
	if (c->flags & MS)
		return floe_buf_printf(b, "%s%s %" PRIu64 ".%03u\n", c->prom, labels, v / 1000,
				       (unsigned)(v % 1000));
	return floe_buf_printf(b, "%s%s %" PRIu64 "\n", c->prom, labels, v);
}

int floe_counters_prom(const struct floe_run_counters *g, const struct floe_input_counters *in,
		       size_t n, struct floe_buf *b)
{
	int rc = 0;
	for (size_t k = 0; k < N(glob) && rc == 0; k++) {
		rc = family(b, &glob[k], "");
		if (rc == 0)
			rc = sample(b, &glob[k], "", at(g, glob[k].off));
	}
	for (size_t k = 0; k < N(input) && rc == 0; k++) {
		bool any = false;
		for (size_t i = 0; i < n && !any; i++)
			any = (input[k].kinds & in[i].kind) != 0;
		if (!any)
			continue;
		rc = family(b, &input[k], "inputs[].");
		for (size_t i = 0; i < n && rc == 0; i++) {
			char labels[64];
			if (!(input[k].kinds & in[i].kind))
				continue;
			if (in[i].name)
				snprintf(labels, sizeof(labels), "{input=\"%s\"}", in[i].name);
			else
				snprintf(labels, sizeof(labels), "{input=\"%zu\"}", i + 1);
			rc = sample(b, &input[k], labels, at(&in[i], input[k].off));
		}
	}
	return rc;
}
