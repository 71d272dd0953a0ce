/* What every snapshot commit (the append, compaction's replace, the expiry-only commit)
 * takes the same way: the snapshot summary's entries and totals, the snapshot's time, its
 * id and the commit's UUID, and the backoff after a lost race. Called by table_commit.c,
 * table_attempt.c, table_replace.c and table_expire.c; calls none of them. */
#include "agent/lake/table_impl.h"

#include "agent/env/env.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t summary_int(const struct floe_ice_meta *m, long idx, const char *key, bool *ok)
{
	if (idx < 0)
		return 0;
	const char *v = floe_ice_meta_snapshot_summary(m, (size_t)idx, key);
	if (!v) {
		*ok = false;
		return 0;
	}
	return strtoll(v, NULL, 10);
}

void floe_table_summary_str(struct floe_table_summary *s, const char *key, const char *v)
{
	snprintf(s->v[s->n], sizeof(s->v[s->n]), "%s", v);
	s->kv[s->n].key = key;
	s->kv[s->n].value = s->v[s->n];
	s->n++;
}

void floe_table_summary_int(struct floe_table_summary *s, const char *key, int64_t v)
{
	char num[24];
	snprintf(num, sizeof(num), "%" PRId64, v);
	floe_table_summary_str(s, key, num);
}

/* Totals continue the parent's; a parent without them (another engine's) means floe
 * cannot know them and leaves them out, as Java does. No parent: they start at 0. */
void floe_table_summary_totals(struct floe_table_summary *s, const struct floe_ice_meta *m, long pidx,
			       int64_t records, int64_t bytes, int64_t files)
{
	bool ok = true;
	int64_t tot_records = summary_int(m, pidx, "total-records", &ok);
	int64_t tot_size = summary_int(m, pidx, "total-files-size", &ok);
	int64_t tot_files = summary_int(m, pidx, "total-data-files", &ok);
	int64_t tot_del = summary_int(m, pidx, "total-delete-files", &ok);
	int64_t tot_pos = summary_int(m, pidx, "total-position-deletes", &ok);
	int64_t tot_eq = summary_int(m, pidx, "total-equality-deletes", &ok);
	if (!ok)
		return;
	floe_table_summary_int(s, "total-records", tot_records + records);
	floe_table_summary_int(s, "total-files-size", tot_size + bytes);
	floe_table_summary_int(s, "total-data-files", tot_files + files);
	floe_table_summary_int(s, "total-delete-files", tot_del);
	floe_table_summary_int(s, "total-position-deletes", tot_pos);
	floe_table_summary_int(s, "total-equality-deletes", tot_eq);
}

/* Now, clamped: never before the parent snapshot or the last metadata update, so a
 * device whose clock lags cannot make the history go backwards. */
int64_t floe_table_snapshot_time(const struct floe_table *t, const struct floe_ice_meta *m, long pidx,
				 int64_t *mono_ms)
{
	int64_t now = t->clock->wall_us(t->clock->ctx) / 1000;
	int64_t mono = t->clock->mono_us(t->clock->ctx) / 1000;
	int64_t floor_ms = floe_ice_meta_last_updated_ms(m);
	*mono_ms = mono;
	if (pidx >= 0) {
		int64_t id, pp, ps, pts;
		const char *ml;
		if (floe_ice_meta_snapshot_at(m, (size_t)pidx, &id, &pp, &ps, &pts, &ml) == 0 && pts + 1 > floor_ms)
			floor_ms = pts + 1;
	}
	/* Behind the table's time, the wall clock stepped back (or ran ahead when the last
	 * snapshots were taken) and may stay behind for a year. Rather than a millisecond a
	 * commit, the table's time then goes on from this handle's last snapshot by the
	 * monotonic time since: ages (snapshot expiry) and the times between snapshots stay
	 * true until the wall clock passes it again. */
	int64_t on;
	if (now < floor_ms && t->last_ts_ms > 0 &&
	    !__builtin_add_overflow(t->last_ts_ms, mono - t->last_mono_ms, &on) && on > floor_ms)
		floor_ms = on;
	return now < floor_ms ? floor_ms : now;
}

void floe_table_snapshot_taken(struct floe_table *t, int64_t ts_ms, int64_t mono_ms)
{
	t->last_ts_ms = ts_ms;
	t->last_mono_ms = mono_ms;
}

/* A snapshot id no snapshot of the table has, and the commit's UUID (names its files).
 * 63 random bits meet a taken id about never; a source that keeps giving taken ones is
 * broken, and is refused after a bounded number of draws rather than spun on. */
int floe_table_commit_ids(struct floe_table *t, int64_t *snapshot_id, char commit_uuid[37])
{
	int rc;
	for (int tries = 0;; tries++) {
		uint64_t r = 0;
		if (tries == 64)
			return floe_table_fail(t, FLOE_ELIMIT,
					       "no free snapshot id in 64 random draws: the random "
					       "source repeats itself");
		if ((rc = t->rand->fill(t->rand->ctx, &r, sizeof(r))))
			return rc;
		*snapshot_id = (int64_t)(r & INT64_MAX);
		if (*snapshot_id != 0 && floe_ice_meta_find_snapshot(t->meta, *snapshot_id) < 0)
			break;
	}
	return floe_env_uuid4(t->rand, commit_uuid);
}

/* Lost the race: back off with full jitter (up to *delay_ms, which doubles up to 1 s),
 * then rebuild on the new parent. */
void floe_table_back_off(struct floe_table *t, unsigned attempt_no, unsigned *delay_ms)
{
	uint32_t r = 0;
	(void)t->rand->fill(t->rand->ctx, &r, sizeof(r));
	floe_debug("table: commit attempt %u lost the race, retrying", attempt_no);
	t->clock->sleep_ms(t->clock->ctx, r % *delay_ms + 1);
	if (*delay_ms < 1000)
		*delay_ms *= 2;
}
