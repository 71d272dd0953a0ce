/* Records on their way into the batch: decoded from an assembled record, and cut to what
 * the memory budget can take when even an empty batch cannot take them whole. */
#include "agent/run/runner_impl.h"

#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/decode.h"
#include "agent/schema/record.h"
#include "formats/base/error.h"
#include "platform/log.h"

#include <inttypes.h>
#include <string.h>

/* A record the memory budget cannot take even in an empty batch. The configuration check
 * makes room for the longest record an input can make, but memory held elsewhere at that
 * moment (other files' partial lines, record assembly) can leave less; the record is then
 * cut to what fits (whole UTF-8 sequences) and counted, or dropped and counted when
 * nothing fits. Cut rather than split: the pieces of a split line would all have to go
 * into this one batch, each needing as much memory as the budget just refused, while the
 * earlier pieces' pages are still held; the cut keeps the line's start (its time, its
 * level), its offset and one row. */
static int add_cut(struct floe_runner *r, struct floe_record *rec, uint64_t seq)
{
	size_t len = rec->message.len, room = floe_batch_room(r->batch, rec);
	int rc = 3;
	if (room > 0) {
		rec->message.len = room;
		rc = floe_batch_add(r->batch, seq, rec);
	}
	if (rc == 3 || rc == FLOE_ENOMEM) {
		/* The batch is empty: nothing but this record is dropped with it. */
		floe_batch_abort(r->batch);
		r->stats.lines_dropped_memory++;
		floe_error("runner: %.*s: the line at offset %" PRId64 " (%zu bytes) does not fit in "
			   "agent.memory_limit even alone: dropped", (int)rec->source.len, rec->source.p,
			   rec->offset, len);
		return 0;
	}
	if (rc >= 0 && rc != 2) {
		r->stats.lines_truncated_memory++;
		r->stats.bytes_truncated_memory += len - room;
		floe_warn("runner: %.*s: the line at offset %" PRId64 " (%zu bytes) does not fit in what "
			  "agent.memory_limit has left: cut to %zu bytes", (int)rec->source.len, rec->source.p,
			  rec->offset, len, room);
	}
	return rc;
}

/* Adds rec to the batch as entry seq's: floe_batch_add's result, with a record the budget
 * cannot take cut (add_cut) and, when the batch holds rows, running out of memory turned
 * into 2 (seal, then add again). */
int floe_runner_batch_add(struct floe_runner *r, struct floe_record *rec, uint64_t seq)
{
	int rc = floe_batch_add(r->batch, seq, rec);
	if (rc == 3)
		rc = add_cut(r, rec, seq);
	if (rc == FLOE_ENOMEM && floe_batch_rows(r->batch) > 0) {
		rc = 2; /* out of budget: seal what we have, then retry this line */
	} else if (rc == FLOE_ENOMEM) {
		/* The writer that ran out in the middle of this row holds nothing else. */
		floe_batch_abort(r->batch);
		rc = add_cut(r, rec, seq);
	}
	return rc;
}

/* Adds the runtime's stream to the decoded attrs (it replaces a parsed "stream"). */
static void add_stream(struct floe_runner *r, struct floe_record *rec, const char *st, size_t sl)
{
	size_t n = rec->nattrs < ATTRS_MAX ? rec->nattrs : ATTRS_MAX - 1;
	size_t at = n;
	for (size_t k = 0; k < n; k++) {
		r->akeys[k] = rec->attr_keys[k];
		r->aklens[k] = rec->attr_key_lens[k];
		r->avals[k] = rec->attr_vals[k];
		r->avlens[k] = rec->attr_val_lens[k];
		if (r->aklens[k] == 6 && memcmp(r->akeys[k], "stream", 6) == 0)
			at = k;
	}
	if (at == n && n == ATTRS_MAX)
		return;
	r->akeys[at] = "stream";
	r->aklens[at] = 6;
	r->avals[at] = st;
	r->avlens[at] = sl;
	rec->nattrs = at == n ? n + 1 : n;
	rec->attr_keys = r->akeys;
	rec->attr_key_lens = r->aklens;
	rec->attr_vals = r->avals;
	rec->attr_val_lens = r->avlens;
}

int floe_runner_add_record(struct floe_runner *r, size_t input, const struct floe_assemble_rec *a,
			   int64_t received_at, uint64_t seq)
{
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.ts = a->has_ts ? a->ts_us : received_at;
	rec.received_at = received_at;
	rec.host.p = r->host;
	rec.host.len = r->host_len;
	rec.source.p = a->path;
	rec.source.len = strlen(a->path);
	rec.has_offset = true;
	rec.offset = a->offset;
	rec.message.p = a->msg;
	rec.message.len = a->len;
	/* The runtime's time stays unless a timestamp option finds one in the message. */
	floe_decoder_apply(r->decoders[input], &rec);
	if (a->stream)
		add_stream(r, &rec, a->stream, a->stream_len);
	return floe_runner_batch_add(r, &rec, seq);
}
