/* The memory rule of `floe check` (and of every command that loads a configuration): the
 * budget must hold the longest record an input can make all the way through sealing.
 * Without it, a single long line in a small budget ran the Parquet writer out of memory
 * in the middle of the row, the seal failed, and every restart failed the same way on
 * the same line (550 KB at memory_limit 4 MiB; 8 MiB at 32 MiB with
 * max_line_bytes 64 MiB). The writer's part comes from formats/parquet
 * (floe_pq_writer_row_need, with the compression context measured), the rest from how
 * the runner and the tail hold a record on its way. */
#include "agent/run/memory.h"
#include "agent/run/settings.h"
#include "agent/run/colplan.h"

#include "agent/config/config.h"
#include "agent/input/input.h"
#include "agent/schema/columns.h"

#include "formats/base/error.h"
#include "formats/parquet/writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* What the agent holds besides a record's way: the table's metadata and the spool, the
 * decoders, the tails' file lists. Measured at 42 KB for a new table with two inputs; the
 * rest is room for the metadata of a table with history. */
#define AGENT_BASE ((uint64_t)128 << 10)

static double mib(uint64_t v)
{
	return (double)v / (1024.0 * 1024.0);
}

/* The Parquet options the runner gives its writers (settings.c), for this check. An
 * offload is assumed whenever compression threads are configured: the runner starts none
 * on a machine with one CPU, which only needs less. */
static void pq_options(const struct floe_config *c, struct floe_pq_options *o, struct floe_pq_offload *off)
{
	floe_run_pq_options(&c->logs, o);
	memset(off, 0, sizeof(*off));
	if (c->agent.compress_threads > 0)
		o->offload = off;
}

/* The longest record input in can make: its own longest, or a multiline group of its
 * lines. */
static uint64_t longest_record(const struct floe_config_input *in)
{
	struct floe_input_need need;
	floe_input_need(in, in->max_line_bytes, &need);
	uint64_t rec = need.longest;
	if (need.lines && in->multiline.start && in->multiline.max_bytes > rec)
		rec = in->multiline.max_bytes;
	return rec;
}

/* The writer's part for a record of rec bytes of input in: its message, and with a
 * parser the attributes it makes of the same bytes (keys and values, in two leaves). */
/* The typed columns of a raw table (run/colplan.h; the table with the most, as a record
 * goes to one) as leaves of a writer, each holding one value: n leaves from v[at] on, at
 * most cap in all. Returns the new count. */
static size_t typed_leaves(const struct floe_config *c, size_t *v, size_t at, size_t cap)
{
	struct floe_colplan p;
	size_t most = 0;
	for (size_t k = 0; k < floe_config_ntables(c); k++)
		if (floe_run_columns_wanted(c, k, &p, NULL) == 0 && p.n > most)
			most = p.n;
	for (size_t i = 0; i < most && at < cap; i++)
		v[at++] = 8;
	return at;
}

/* The writer's part for a record of rec bytes of input in: its message, and with a
 * parser the attributes it makes of the same bytes (keys and values, in two leaves), and
 * each typed column's leaf (the bytes of a string column are some of the same bytes). */
static uint64_t writer_need(const struct floe_config *c, const struct floe_pq_options *o,
			    size_t ctx, const struct floe_config_input *in, uint64_t rec)
{
	size_t v[2 + FLOE_COLS_MAX] = {(size_t)rec, (size_t)rec};
	struct floe_input_need need;
	floe_input_need(in, in->max_line_bytes, &need);
	bool attrs = in->parser != FLOE_PARSER_NONE || need.attrs;
	size_t n = typed_leaves(c, v, attrs ? 2 : 1, 2 + FLOE_COLS_MAX);
	return floe_pq_writer_row_need(o, v, n, true, ctx);
}

/* Everything but the writer: the inputs' own buffers, one assembler state each for the
 * inputs of lines (settings.c's floe_run_assemble_options: two multiline buffers, three
 * container ones), the sort buffer, the agent. max_line replaces input k's max_line_bytes
 * (for the suggestion). */
static void other_parts(const struct floe_config *c, size_t k, uint64_t max_line, struct floe_memory_need *n)
{
	n->read = n->assemble = 0;
	for (size_t i = 0; i < c->ninputs; i++) {
		const struct floe_config_input *in = &c->inputs[i];
		uint64_t line = i == k ? max_line : in->max_line_bytes;
		struct floe_input_need need;
		floe_input_need(in, line, &need);
		n->read += need.read;
		if (!need.lines)
			continue;
		if (in->multiline.start)
			n->assemble += 2 * in->multiline.max_bytes;
		if (in->format != FLOE_FORMAT_RAW)
			n->assemble += 3 * line;
	}
	n->sort = c->logs.nsort_by ? c->logs.sort_buffer : 0;
	n->base = AGENT_BASE;
}

int floe_memory_need(const struct floe_config *c, struct floe_memory_need *out)
{
	struct floe_pq_options o;
	struct floe_pq_offload off;
	pq_options(c, &o, &off);
	size_t ctx = 0;
	int rc = floe_pq_writer_context_bytes(&o, &ctx);
	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < c->ninputs; i++) {
		uint64_t rec = longest_record(&c->inputs[i]);
		uint64_t w = writer_need(c, &o, ctx, &c->inputs[i], rec);
		if (w > out->writer || i == 0) {
			out->writer = w;
			out->input = i;
			out->record = rec;
		}
	}
	other_parts(c, SIZE_MAX, 0, out);
	out->total = out->writer + out->read + out->assemble + out->sort + out->base;
	return 0;
}

/* The longest max_line_bytes for input k that fits (0 if none does, down to 256 B). */
static uint64_t line_that_fits(const struct floe_config *c, const struct floe_pq_options *o, size_t ctx, size_t k)
{
	const struct floe_config_input *in = &c->inputs[k];
	uint64_t lo = 0, hi = in->max_line_bytes;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		struct floe_config_input t = *in;
		t.max_line_bytes = mid;
		struct floe_memory_need n;
		memset(&n, 0, sizeof(n));
		other_parts(c, k, mid, &n);
		uint64_t w = 0;
		for (size_t i = 0; i < c->ninputs; i++) {
			const struct floe_config_input *x = i == k ? &t : &c->inputs[i];
			uint64_t wi = writer_need(c, o, ctx, x, longest_record(x));
			w = wi > w ? wi : w;
		}
		if (w + n.read + n.assemble + n.sort + n.base <= c->agent.memory_limit)
			lo = mid;
		else
			hi = mid - 1;
	}
	lo = lo / 1024 * 1024;
	return lo >= 1024 ? lo : (lo >= 256 ? 256 : 0);
}

/* Each raw table's batch needs a writer of its own at least: the writers the budget
 * holds are shared by the tables (the runner gives each its share). */
static int tables_check(const struct floe_config *c, const struct floe_memory_need *n,
			struct floe_err *err)
{
	struct floe_memory_partitions p;
	size_t nt = floe_config_ntables(c);
	if (nt == 1 || floe_memory_partitions(c, &p) != 0 || p.writers >= nt)
		return 0;
	/* What floe_memory_partitions counts beside the writers, and one writer a table. */
	uint64_t want = n->total + (c->logs.nsort_by ? 0 : p.stage) + (nt - 1) * p.per_writer;
	return floe_err_set(err, FLOE_EFORMAT,
			    "%s:%d:%d: key 'agent.memory_limit': %.1fMiB holds %zu open Parquet "
			    "writer(s) (about %.1fMiB each) beside the rest of the agent, and the "
			    "%zu raw tables need one each; raise agent.memory_limit to %" PRIu64 "MiB",
			    c->path, c->agent.memory_limit_line ? c->agent.memory_limit_line : 1,
			    c->agent.memory_limit_line ? c->agent.memory_limit_col : 1,
			    mib(c->agent.memory_limit), p.writers, mib(p.per_writer), nt,
			    (want + (1u << 20) - 1) >> 20);
}

int floe_memory_check(const struct floe_config *c, struct floe_err *err)
{
	struct floe_memory_need n;
	int rc = floe_memory_need(c, &n);
	if (rc)
		return floe_err_set(err, rc, "%s: measuring the memory a record needs: %s", c->path,
				    floe_strerror(rc));
	if (c->ninputs == 0)
		return 0;
	if (n.total <= c->agent.memory_limit)
		return tables_check(c, &n, err);
	const struct floe_config_input *in = &c->inputs[n.input];
	struct floe_pq_options o;
	struct floe_pq_offload off;
	pq_options(c, &o, &off);
	size_t ctx = 0;
	floe_pq_writer_context_bytes(&o, &ctx);
	uint64_t fits = line_that_fits(c, &o, ctx, n.input);
	bool multi = in->multiline.start && in->multiline.max_bytes > in->max_line_bytes;
	int line = c->agent.memory_limit_line ? c->agent.memory_limit_line : in->line;
	int col = c->agent.memory_limit_line ? c->agent.memory_limit_col : in->col;
	char lower[160] = "";
	struct floe_input_need need;
	floe_input_need(in, in->max_line_bytes, &need);
	/* An input whose records are bounded by another key than max_line_bytes. */
	bool other = strcmp(need.key, "max_line_bytes") != 0;
	if (other)
		snprintf(lower, sizeof(lower), " or lower inputs[%zu].%s", n.input, need.key);
	else if (fits && !multi)
		snprintf(lower, sizeof(lower), " or lower inputs[%zu].max_line_bytes to %" PRIu64 "KiB", n.input,
			 fits / 1024);
	else if (multi)
		snprintf(lower, sizeof(lower), " or lower inputs[%zu].multiline.max_bytes", n.input);
	return floe_err_set(
	    err, FLOE_EFORMAT,
	    "%s:%d:%d: key 'agent.memory_limit': %.1fMiB cannot hold a record of %.1fMiB "
	    "(inputs[%zu].%s) through sealing: it needs %.1fMiB (its Parquet pages and their "
	    "compression %.1fMiB, read buffers %.1fMiB, record assembly %.1fMiB, sort buffer "
	    "%.1fMiB, the agent %.1fMiB); raise agent.memory_limit to %" PRIu64 "MiB%s",
	    c->path, line, col, mib(c->agent.memory_limit), mib(n.record), n.input,
	    other ? need.key : multi ? "multiline.max_bytes" : "max_line_bytes",
	    mib(n.total), mib(n.writer),
	    mib(n.read), mib(n.assemble), mib(n.sort), mib(n.base),
	    (n.total + (1u << 20) - 1) >> 20, lower);
}

int floe_memory_partitions(const struct floe_config *cfg, struct floe_memory_partitions *out)
{
	struct floe_pq_options o;
	struct floe_pq_offload off;
	struct floe_memory_need need;
	size_t ctx = 0;
	pq_options(cfg, &o, &off);
	int rc = floe_pq_writer_context_bytes(&o, &ctx);
	if (rc == 0)
		rc = floe_memory_need(cfg, &need);
	if (rc)
		return rc;
	/* The stage is the sort buffer with sort_by, else one of the same size; the rule of
	 * memory_need counts the latter only with sort_by. */
	out->stage = (uint64_t)cfg->logs.sort_buffer;
	size_t v[FLOE_COLS_MAX];
	out->per_writer = floe_pq_writer_row_need(&o, v, typed_leaves(cfg, v, 0, FLOE_COLS_MAX), true, ctx);
	uint64_t rest = need.total + (cfg->logs.nsort_by ? 0 : out->stage);
	uint64_t room = cfg->agent.memory_limit > rest ? cfg->agent.memory_limit - rest : 0;
	/* memory_need holds one writer already; the others fit in what is left. */
	uint64_t n = 1 + room / (out->per_writer ? out->per_writer : 1);
	out->writers = n > 4096 ? 4096 : (size_t)n;
	return 0;
}
