/* The batch: records of the logs table on their way to the spool. The first partitions
 * of a batch, up to max_writers, each get a streaming Parquet writer that writes straight
 * into a temporary spool file, so memory is bounded by the writers' open row groups, not
 * by the batch. The rows of further partitions wait in a stage (copied, as cheap as their
 * bytes); when it is full, the partitions with the most rows there go, whole, each to a
 * file of its own that is finished at once, and the others wait for the seal. Sealing
 * finishes every writer, makes the files durable, and writes the spool entry that
 * records them all with the input positions they cover: files finished before keep a
 * temporary name until then, so that they are debris if the entry is never written. */
#ifndef FLOE_BATCH_H
#define FLOE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "agent/schema/partition.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/sortbuf.h"
#include "formats/parquet/writer.h"

struct floe_alloc;
struct floe_record;

/* The writers' dictionary cap per column chunk and their budget for finished pages
 * waiting for their row group (floe_pq_options), as the runner sets them. */
#define FLOE_BATCH_DICTIONARY_CAP ((size_t)256 << 10)
#define FLOE_BATCH_PAGE_BUDGET ((size_t)1 << 20)

struct floe_batch_options {
	struct floe_pq_options pq;  /* codec, level, sizes; kv and created_by borrowed */
	uint64_t target_file_size;  /* a file this large asks for a seal */
	size_t max_writers;         /* open writers at most (0 = 8); further partitions stage */
	/* The stage of partitions beyond max_writers (0 = 4 MiB), made when first needed;
	 * with sort_by the sort buffer is the stage. */
	size_t stage_buffer;
	/* Rows of a fragment sorted by these columns (borrowed, copied), in runs: records
	 * are copied into a sort buffer of sort_buffer bytes (0 = 4 MiB; at least 4 KiB),
	 * which goes sorted to the writers whenever it is full and at the seal. A file
	 * written in one run is fully sorted. nsort_by = 0: no copy, rows go straight to
	 * the writers in arrival order. */
	const enum floe_sort_key *sort_by;
	size_t nsort_by;
	size_t sort_buffer;
	/* The writers' columns (borrowed, copied; their names borrowed: they outlive the
	 * batch): the logs table's built-in ones, then the typed ones, with the field ids of
	 * the table's schema (agent/schema/columns.h). NULL: the built-in ones alone. */
	const struct floe_pq_column *cols;
	size_t ncols;
};

struct floe_batch;

int floe_batch_new(struct floe_alloc *a, const struct floe_part_spec *spec,
		   const struct floe_batch_options *opt, struct floe_spool *spool, struct floe_batch **out);
void floe_batch_free(struct floe_batch *b);

/* Adds a record to the batch that will become spool entry seq (fixed by the first add
 * after a seal). rec is borrowed during the call (with sort_by it is copied). Returns 0
 * (added), 1 (added, and a file reached its target size: seal before the next add; with
 * sort_by this is noticed when the sort buffer goes to the writers), 2 (NOT added: rec
 * has a large value the memory budget cannot take beside the batch's rows, or the stage
 * is full and the budget cannot take a writer for it now; seal, then add it again), 3 (NOT added: the
 * batch is empty and the budget still cannot take rec's large value: cut its message to
 * floe_batch_room, or drop it), or a negative error (rec not added). With sort_by, an error of a writer while the full sort
 * buffer goes to the writers is returned as well: the batch is then only good for
 * floe_batch_abort (or a seal that will most likely fail). */
int floe_batch_add(struct floe_batch *b, uint64_t seq, const struct floe_record *rec);
/* The longest prefix of rec's message (whole UTF-8 sequences) that an empty batch can take
 * with the memory there is now (0: none). */
size_t floe_batch_room(const struct floe_batch *b, const struct floe_record *rec);
/* Rows added since the last seal, those waiting in the sort buffer included. */
uint64_t floe_batch_rows(const struct floe_batch *b);
/* Data files of the batch so far: those open and those finished early. */
size_t floe_batch_files(const struct floe_batch *b);
/* Why the batch last asked for a seal ("target_file_size", "memory budget";
 * static), or NULL when it has not since the last seal. */
const char *floe_batch_seal_reason(const struct floe_batch *b);
/* The writers' columns from the next file on (as floe_batch_options.cols): 0, or
 * FLOE_EINVAL while the batch holds rows (between a seal and the next add only). */
int floe_batch_set_columns(struct floe_batch *b, const struct floe_pq_column *cols, size_t ncols);
/* Passes the sort buffer's rows to the writers, finishes the files and writes the spool
 * entry (seq, positions). Afterwards the batch is empty. On error the batch's files are
 * removed and the batch is empty; the caller must re-read its input from the last
 * durable positions. */
int floe_batch_seal(struct floe_batch *b, int64_t now_us, const uint8_t *positions, size_t positions_len);
/* As floe_batch_seal, and the entry also records from (borrowed; may be NULL), the input
 * positions where its rows start, so that they can be read again if a file is damaged. */
int floe_batch_seal_range(struct floe_batch *b, int64_t now_us, const uint8_t *from, size_t from_len,
			  const uint8_t *positions, size_t positions_len);
/* Names the files of the batch being built <seq>-<base + k>.parquet instead of from 0
 * (for the next seal only; call before its first add): a rebuilt entry's files must not
 * take the names of the damaged ones it replaces. */
void floe_batch_set_name_base(struct floe_batch *b, size_t base);
/* Drops everything not yet sealed (temporary files removed, sort buffer emptied). */
void floe_batch_abort(struct floe_batch *b);

/* Converts a writer's leaf statistics into Iceberg column metrics with string bounds
 * truncated to 16 code points (Iceberg's default truncate(16)); bounds are allocated
 * from a. */
int floe_batch_metrics(struct floe_alloc *a, const struct floe_pq_writer *w,
		       struct floe_ice_column_metrics **out, size_t *n);
/* The same for a writer of other columns than the logs table's (cols, ncols: those the
 * writer was made with). */
int floe_batch_metrics_of(struct floe_alloc *a, const struct floe_pq_writer *w,
			  const struct floe_pq_column *cols, size_t ncols,
			  struct floe_ice_column_metrics **out, size_t *n);

#endif
