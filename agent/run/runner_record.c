/* Records on their way into the batch: an input's record, or its line (or an assembler's
 * record) decoded into one, kept for after the seal when the batch refuses it, and cut to what the
 * memory budget can take when even an empty batch cannot take it whole. */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/decode.h"
#include "agent/pipeline/route.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/clock.h"
#include "platform/log.h"

#include <inttypes.h>
#include <string.h>

void floe_runner_check_host(struct floe_runner *r)
{
	char name[sizeof(r->host.name)];
	/* One that cannot be read now keeps the name there is. */
	if (floe_hostname(name, sizeof(name)) != 0 || !name[0] || strcmp(name, r->host.name) == 0)
		return;
	floe_warn("runner: the host name changed from %s to %s: records read from now on carry "
		  "%s in the host column",
		  r->host.name, name, name);
	memcpy(r->host.name, name, sizeof(name));
	r->host.len = strlen(name);
	floe_input_shared_set_host(r->in.shared, r->host.name, r->host.len);
}

/* A record the memory budget cannot take even in an empty batch. The configuration check
 * makes room for the longest record an input can make, but memory held elsewhere at that
 * moment (other files' partial lines, record assembly) can leave less; the record is then
 * cut to what fits (whole UTF-8 sequences) and counted, or dropped and counted when
 * nothing fits. Cut rather than split: the pieces of a split line would all have to go
 * into this one batch, each needing as much memory as the budget just refused, while the
 * earlier pieces' pages are still held; the cut keeps the line's start (its time, its
 * level), its offset and one row. */
static int add_cut(struct floe_runner *r, size_t k, struct floe_record *rec, uint64_t seq)
{
	struct floe_batch *b = r->raw[k].batch;
	size_t len = rec->message.len, room = floe_batch_room(b, rec);
	int rc = 3;
	if (room > 0) {
		rec->message.len = room;
		rc = floe_batch_add(b, seq, rec);
	}
	if (rc == 3 || rc == FLOE_ENOMEM) {
		/* The batch is empty: nothing but this record is dropped with it. */
		floe_batch_abort(b);
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
int floe_runner_batch_add(struct floe_runner *r, size_t k, struct floe_record *rec, uint64_t seq)
{
	struct floe_batch *b = r->raw[k].batch;
	int rc = floe_batch_add(b, seq, rec);
	if (rc == 3)
		rc = add_cut(r, k, rec, seq);
	if (rc == FLOE_ENOMEM && floe_runner_rows(r) > 0) {
		rc = 2; /* out of budget: seal what we have, then retry this line */
	} else if (rc == FLOE_ENOMEM) {
		/* The writer that ran out in the middle of this row holds nothing else. */
		floe_batch_abort(b);
		rc = add_cut(r, k, rec, seq);
	}
	return rc;
}

size_t floe_runner_route(struct floe_runner *r, size_t input, const struct floe_record *rec)
{
	return floe_route_pick(r->in.routes ? r->in.routes[input] : NULL, rec);
}

/* A record no decoder typed (a routed input's, syslog's structured data, the journal's
 * fields) takes its typed values here, under the plan of table k it is routed to: route
 * first, then convert, by the same rule as the decoders. */
static void typed_for(struct floe_runner *r, size_t k, struct floe_record *rec)
{
	struct run_table *rt = &r->raw[k];
	const struct floe_colplan *p = &rt->cols;
	if (!rec->typed_plan && p->planned && p->n && rec->nattrs <= ATTRS_MAX)
		floe_colplan_take(p, rec, r->scratch.typed, r->scratch.tkeys, r->scratch.tklens,
				  r->scratch.tvals, r->scratch.tvlens, rt->conv_failures);
}

/* rec of input into its raw table's batch, as floe_runner_batch_add. */
static int add_routed(struct floe_runner *r, size_t input, struct floe_record *rec)
{
	size_t k = floe_runner_route(r, input, rec);
	typed_for(r, k, rec);
	return floe_runner_batch_add(r, k, rec, r->raw[k].next_seq);
}

/* Adds the runtime's stream to the decoded attrs (it replaces a parsed "stream"). */
static void add_stream(struct floe_runner *r, struct floe_record *rec, const char *st, size_t sl)
{
	size_t n = rec->nattrs < ATTRS_MAX ? rec->nattrs : ATTRS_MAX - 1;
	size_t at = n;
	for (size_t k = 0; k < n; k++) {
		r->scratch.akeys[k] = rec->attr_keys[k];
		r->scratch.aklens[k] = rec->attr_key_lens[k];
		r->scratch.avals[k] = rec->attr_vals[k];
		r->scratch.avlens[k] = rec->attr_val_lens[k];
		if (r->scratch.aklens[k] == 6 && memcmp(r->scratch.akeys[k], "stream", 6) == 0)
			at = k;
	}
	if (at == n && n == ATTRS_MAX)
		return;
	r->scratch.akeys[at] = "stream";
	r->scratch.aklens[at] = 6;
	r->scratch.avals[at] = st;
	r->scratch.avlens[at] = sl;
	rec->nattrs = at == n ? n + 1 : n;
	rec->attr_keys = r->scratch.akeys;
	rec->attr_key_lens = r->scratch.aklens;
	rec->attr_vals = r->scratch.avals;
	rec->attr_val_lens = r->scratch.avlens;
}

static void assembled_record(struct floe_runner *r, size_t input, const struct floe_assemble_rec *a,
			     int64_t received_at, struct floe_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->ts = a->has_ts ? a->ts_us : received_at;
	rec->received_at = received_at;
	rec->host.p = r->host.name;
	rec->host.len = r->host.len;
	rec->source.p = a->path;
	rec->source.len = strlen(a->path);
	rec->has_offset = true;
	rec->offset = a->offset;
	rec->message.p = a->msg;
	rec->message.len = a->len;
	/* The runtime's time stays unless a timestamp option finds one in the message. */
	floe_decoder_apply(r->in.decoders[input], rec);
	if (a->stream)
		add_stream(r, rec, a->stream, a->stream_len);
}

int floe_runner_add_record(struct floe_runner *r, size_t input, const struct floe_assemble_rec *a,
			   int64_t received_at, size_t k, uint64_t seq)
{
	struct floe_record rec;
	assembled_record(r, input, a, received_at, &rec);
	return floe_runner_add_to(r, input, &rec, k, seq);
}

int floe_runner_add_to(struct floe_runner *r, size_t input, struct floe_record *rec, size_t k,
		       uint64_t seq)
{
	if (floe_runner_route(r, input, rec) != k)
		return 4;
	typed_for(r, k, rec);
	return floe_runner_batch_add(r, k, rec, seq);
}

/* The record of rec, already filled, into the batch: the line and record callbacks'
 * returns (floe_runner_on_line). */
int floe_runner_on_input_record(void *ctx, struct floe_record *rec)
{
	struct floe_runner *r = ctx;
	/* An input with raw: false only feeds the aggregations: the logs table's plan types
	 * its records for them, as its decoder's does. */
	bool raw = r->set.cfg->inputs[r->in.cur].raw;
	if (!raw)
		typed_for(r, 0, rec);
	int rc = raw ? add_routed(r, r->in.cur, rec) : 0;
	if (rc == 2) {
		r->b.line_refused = true;
		r->b.seal_needed = true;
		return FLOE_ELIMIT;
	}
	int ag = rc < 0 ? 0 : floe_run_aggs_record(r, r->in.cur, rec);
	if (rc < 0 || ag < 0) {
		r->b.add_error = rc < 0 ? rc : ag;
		return r->b.add_error;
	}
	r->stats.lines++;
	if (rc == 1) {
		r->b.seal_needed = true;
		return 1;
	}
	return 0;
}

static int on_line_assembled(struct floe_runner *r, const struct floe_input_line *line);

/* A line of an input becomes a record in the batch. Returning a negative code leaves
 * the line unconsumed in the input, to be read again after the seal. */
int floe_runner_on_line(void *ctx, const struct floe_input_line *line)
{
	struct floe_runner *r = ctx;
	if (r->in.asm_[r->in.cur])
		return on_line_assembled(r, line);
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.ts = r->in.read_us;
	rec.received_at = r->in.read_us;
	rec.host.p = r->host.name;
	rec.host.len = r->host.len;
	rec.source.p = line->path;
	rec.source.len = strlen(line->path);
	rec.has_offset = true;
	rec.offset = (int64_t)line->offset;
	rec.message.p = line->data;
	rec.message.len = line->len;
	floe_decoder_apply(r->in.decoders[r->in.cur], &rec);
	return floe_runner_on_input_record(r, &rec);
}

/* Decodes an assembled record and adds it: floe_batch_add's result (2 also for a full
 * budget with rows to seal). */
static int add_assembled(struct floe_runner *r, size_t input, const struct floe_assemble_rec *a,
			 int64_t received_at)
{
	/* Not floe_runner_add_record: a replayed entry's records were aggregated already. */
	struct floe_record rec;
	assembled_record(r, input, a, received_at, &rec);
	int rc = r->set.cfg->inputs[input].raw ? add_routed(r, input, &rec) : 0;
	int ag = rc >= 0 && rc != 2 ? floe_run_aggs_record(r, input, &rec) : 0;
	if (rc >= 0 && rc != 2)
		r->stats.lines++;
	return ag < 0 ? ag : rc;
}

static int defer_rec(struct floe_runner *r, const struct floe_assemble_rec *a)
{
	if (r->b.ndefer == DEFER_MAX) {
		/* Cannot happen: the runner stops feeding assemblers while records wait. */
		floe_error("runner: too many records waiting for a seal");
		return FLOE_ELIMIT;
	}
	struct deferred *d = &r->b.defer[r->b.ndefer];
	memset(d, 0, sizeof(*d));
	d->input = r->in.cur;
	d->file_id = a->file_id;
	d->len = a->len;
	d->offset = a->offset;
	d->received_at = r->in.read_us;
	d->has_ts = a->has_ts;
	d->ts_us = a->ts_us;
	d->stream_len =
	    a->stream ? (a->stream_len < sizeof(d->stream) ? a->stream_len : sizeof(d->stream)) : 0;
	if (d->stream_len)
		memcpy(d->stream, a->stream, d->stream_len);
	d->path = floe_strdup(r->alloc, a->path);
	d->msg = floe_malloc(r->alloc, a->len ? a->len : 1);
	if (!d->path || !d->msg) {
		floe_free(r->alloc, d->path);
		floe_free(r->alloc, d->msg);
		floe_error("runner: no memory to keep a record for the next batch");
		return FLOE_ENOMEM;
	}
	if (a->len)
		memcpy(d->msg, a->msg, a->len);
	r->b.ndefer++;
	r->b.seal_needed = true;
	return 0;
}

/* An assembler's record: into the batch, or kept for after the seal when the batch
 * refuses it (or records are already waiting, to keep the file order). */
int floe_runner_on_record(void *ctx, const struct floe_assemble_rec *a)
{
	struct floe_runner *r = ctx;
	if (r->b.ndefer == 0) {
		int rc = add_assembled(r, r->in.cur, a, r->in.read_us);
		if (rc == 1)
			r->b.seal_needed = true;
		if (rc == 0 || rc == 1)
			return 0;
		if (rc != 2) {
			r->b.add_error = rc;
			return rc;
		}
	}
	int rc = defer_rec(r, a);
	if (rc)
		r->b.add_error = rc;
	return rc ? rc : 1;
}

int floe_runner_add_deferred(struct floe_runner *r)
{
	while (r->b.ndefer) {
		struct deferred *d = &r->b.defer[0];
		struct floe_assemble_rec a = {
		    .file_id = d->file_id,
		    .path = d->path,
		    .msg = d->msg,
		    .len = d->len,
		    .offset = d->offset,
		    .has_ts = d->has_ts,
		    .ts_us = d->ts_us,
		    .stream = d->stream_len ? d->stream : NULL,
		    .stream_len = d->stream_len,
		};
		int rc = add_assembled(r, d->input, &a, d->received_at);
		if (rc == 2) {
			if (floe_runner_rows(r) == 0)
				return FLOE_ENOMEM; /* refused by an empty batch: out of budget */
			r->b.seal_needed = true;
			return 0;
		}
		if (rc < 0)
			return rc;
		if (rc == 1)
			r->b.seal_needed = true;
		floe_free(r->alloc, d->path);
		floe_free(r->alloc, d->msg);
		memmove(&r->b.defer[0], &r->b.defer[1], (r->b.ndefer - 1) * sizeof(r->b.defer[0]));
		r->b.ndefer--;
	}
	return 0;
}

void floe_runner_drop_deferred(struct floe_runner *r)
{
	for (size_t k = 0; k < r->b.ndefer; k++) {
		floe_free(r->alloc, r->b.defer[k].path);
		floe_free(r->alloc, r->b.defer[k].msg);
	}
	r->b.ndefer = 0;
}

/* A line of an input with an assembler. The line is consumed once the assembler has it;
 * while records wait for a seal no line is taken. */
static int on_line_assembled(struct floe_runner *r, const struct floe_input_line *line)
{
	if (r->b.ndefer) {
		r->b.line_refused = true;
		r->b.seal_needed = true;
		return FLOE_ELIMIT;
	}
	int rc = floe_assemble_push(r->in.asm_[r->in.cur], line->file_id, line->path, line->data,
				    line->len, (int64_t)line->offset, (int64_t)line->end,
				    r->in.mono_us, floe_runner_on_record, r);
	if (rc == FLOE_ENOMEM && r->b.add_error == 0 && floe_runner_rows(r) > 0) {
		/* Not consumed: seal to free the budget, then the line comes again. */
		r->b.line_refused = true;
		r->b.seal_needed = true;
		return FLOE_ELIMIT;
	}
	if (rc < 0) {
		if (!r->b.add_error)
			r->b.add_error = rc;
		return rc;
	}
	return r->b.seal_needed || r->b.ndefer ? 1 : 0;
}
