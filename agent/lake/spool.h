/* The spool: sealed Parquet fragments waiting in state_dir/spool until a commit puts them
 * in the table. An entry is one seal: its data files (<seq>-<k>.parquet) and an entry
 * file (<seq>.entry, versioned and checksummed) that records each file's row count,
 * size, checksum (XXH64 of its bytes), partition and Iceberg metrics, and the input
 * positions the seal covers (where it started and where it ended). The entry file is
 * written last, atomically: it is the durability point of the rows and of the offsets,
 * so a crash at any moment leaves either a whole entry or debris that open() removes. */
#ifndef FLOE_SPOOL_H
#define FLOE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/schema/partition.h"
#include "formats/iceberg/manifest.h"

struct floe_alloc;
struct floe_err;

struct floe_spool_file {
	char *name;        /* file name inside the spool directory */
	int64_t records;
	int64_t size;
	struct floe_part_key key;
	size_t nparts; /* values in key: the number of fields of its entry's spec */
	struct floe_ice_column_metrics *metrics; /* bounds point into storage owned here */
	size_t nmetrics;
	int64_t *splits;
	size_t nsplits;
	/* XXH64 (seed 0) of the file's bytes, computed as the writer streamed them out;
	 * entries of version 1 have none. */
	bool has_xxh64;
	uint64_t xxh64;
};

/* A typed column whose field id in an entry's files is provisional: chosen while the
 * table was away and nothing said which id the table gives that name (agent/README.md,
 * "Typed columns"). Such an entry is never committed as it is: its files get the table's
 * ids first (spool_reid.c). The type is the Iceberg type's name. */
#define FLOE_SPOOL_PROV_MAX 32
#define FLOE_SPOOL_PROV_NAME 64
struct floe_spool_prov {
	char name[FLOE_SPOOL_PROV_NAME + 1];
	char type[16];
	int32_t id;
};

struct floe_spool_entry {
	uint64_t seq;
	int64_t created_us;
	uint8_t *positions; /* input positions after this seal (tail blob) */
	size_t positions_len;
	/* Input positions where this seal's rows start (those of the seal before, or of the
	 * start-up), so that its rows can be read again; NULL in version 1 entries. */
	uint8_t *from;
	size_t from_len;
	struct floe_spool_file *files;
	size_t nfiles;
	uint64_t replaced_utf8; /* invalid UTF-8 sequences replaced in this seal */
	/* The table's partition spec id the files were written under; -1 when the spool's
	 * spec had none yet (written before the table was reached): then the spec of the
	 * configuration the commit runs with. Entries of one spool may differ when
	 * partition_by changed across a restart. */
	int32_t spec_id;
	/* The columns its files carry under provisional ids (version 3; none before). */
	struct floe_spool_prov *prov;
	size_t nprov;
};

struct floe_spool;

/* Opens (creating) dir and removes debris of interrupted seals: temporary files, data
 * files of no entry, and the files an interrupted rewrite left (its new files or its old
 * ones, whichever the entry does not name: floe_spool_replace_entry). */
int floe_spool_open(struct floe_alloc *a, const char *dir, const struct floe_part_spec *spec,
		    struct floe_spool **out);
/* Another handle on sp's directory and counters that allocates from a (entries it loads,
 * its verify buffer), for another thread: the runner's committer thread commits through
 * one while the main thread seals through sp. The two threads must never work on the
 * same entry at once (the runner lends entries to its committer and takes them back);
 * the byte and quarantine counts are shared and atomic. Freed with floe_spool_free,
 * before sp. */
int floe_spool_share(struct floe_spool *sp, struct floe_alloc *a, struct floe_spool **out);
void floe_spool_free(struct floe_spool *sp);
const char *floe_spool_dir(const struct floe_spool *sp);
/* Sequence numbers of the whole entries, ascending. *seqs is owned by the caller
 * (floe_free with the spool's allocator). */
int floe_spool_list(struct floe_spool *sp, uint64_t **seqs, size_t *n);
/* Loads entry seq; FLOE_ECORRUPT if its file fails the checksum. */
int floe_spool_load(struct floe_spool *sp, uint64_t seq, struct floe_spool_entry **out);
/* An entry file's JSON text: e with the provisional columns pv[0..npv) (npv 0: none, then
 * a version 2 entry), appended to b, under spec (its id and fields). FLOE_ENOMEM when b
 * cannot grow. */
#define FLOE_SPOOL_ENTRY_MAX (64u << 20) /* bytes of an entry file */
struct floe_buf;
int floe_spool_entry_encode(const struct floe_part_spec *spec, const struct floe_spool_entry *e,
			    const struct floe_spool_prov *pv, size_t npv, struct floe_buf *b);
/* Decodes an entry file's JSON text (pure; the fuzz target's entry point). */
int floe_spool_entry_decode(struct floe_alloc *a, const struct floe_part_spec *spec, const char *text,
			    size_t len, struct floe_spool_entry **out);
/* Frees what e owns (entry_fini) and e itself (entry_free); a is the allocator the
 * spool (or decode) was given. */
void floe_spool_entry_fini(struct floe_alloc *a, struct floe_spool_entry *e);
void floe_spool_entry_free(struct floe_alloc *a, struct floe_spool_entry *e);
/* The rows and the data bytes of e's files. */
uint64_t floe_spool_entry_rows(const struct floe_spool_entry *e);
uint64_t floe_spool_entry_bytes(const struct floe_spool_entry *e);
/* The allocator the spool was opened with. */
struct floe_alloc *floe_spool_alloc(const struct floe_spool *sp);
/* Writes e's entry file; its data files must already be durable in the directory. The
 * entry carries e's provisional columns, or when it has none those set on this handle. */
int floe_spool_write_entry(struct floe_spool *sp, const struct floe_spool_entry *e);
/* The columns that the entries written through this handle from now on carry under
 * provisional ids (copied; n 0: none, FLOE_ELIMIT over FLOE_SPOOL_PROV_MAX). A handle
 * made by floe_spool_share starts with none. */
int floe_spool_set_provisional(struct floe_spool *sp, const struct floe_spool_prov *cols, size_t n);
/* Replaces entry old (loaded, borrowed) with now, its rewrite under the same seq, whose
 * data files (other names than old's) are already durable: now's entry file replaces
 * old's atomically (the durability point), then old's data files that now does not name
 * are removed and the byte count follows. A crash before the replace leaves now's files
 * as debris, one after it old's: floe_spool_open removes either. */
#define FLOE_SPOOL_REID_SUFFIX ".ids.parquet" /* a rewrite of <stem>.parquet: <stem>.ids.parquet */
int floe_spool_replace_entry(struct floe_spool *sp, const struct floe_spool_entry *old,
			     const struct floe_spool_entry *now);
/* Deletes entry seq: the entry file first (so a crash leaves only debris), then data. */
int floe_spool_remove(struct floe_spool *sp, const struct floe_spool_entry *e);
/* Data bytes of the whole entries in the spool. */
uint64_t floe_spool_bytes(const struct floe_spool *sp);
/* Whole entries in the spool (kept in memory, as the bytes are). */
uint64_t floe_spool_entries(const struct floe_spool *sp);
/* Entries moved to quarantine since the spool was opened. */
uint64_t floe_spool_quarantined(const struct floe_spool *sp);
/* Checks e's data files against the entry immediately before they leave the spool:
 * each must be there, with the recorded size and (version 2 entries) the recorded XXH64
 * of all its bytes. Returns 0, FLOE_ECORRUPT (logged once, with the path and what did
 * not match; err, may be NULL, gets the same), or an I/O error (in err too). Reads each
 * file once, in 256 KiB pieces from the spool's allocator. */
int floe_spool_verify(struct floe_spool *sp, const struct floe_spool_entry *e,
		      struct floe_err *err);
/* Moves a corrupt entry aside to dir/quarantine/ and counts it. */
int floe_spool_quarantine(struct floe_spool *sp, uint64_t seq);
/* Moves e's data files to dir/quarantine/ and copies its entry file there, counting one
 * quarantined entry, but leaves the entry file in place: for an entry whose rows are
 * being rebuilt, whose new entry file then replaces it (until then a restart finds the
 * files missing and rebuilds again). */
int floe_spool_quarantine_files(struct floe_spool *sp, const struct floe_spool_entry *e);
/* Gives e's files (e loaded, borrowed) the field ids of map (n pairs, old id to new):
 * each data file is rewritten as <stem>.ids.parquet with its footer's ids replaced
 * (everything before the footer copied as it is), then the entry file is replaced by one
 * naming them, with their sizes, XXH64s and metrics under the new ids and no provisional
 * columns (floe_spool_replace_entry: its durability point). e is stale after a success:
 * load the entry again. Errors (err says which file and why): the file's own (a footer
 * that does not parse, a map that gives an id twice), I/O; the entry is then as it was. */
struct floe_pq_reid;
int floe_spool_reid(struct floe_spool *sp, const struct floe_spool_entry *e,
		    const struct floe_pq_reid *map, size_t n, struct floe_err *err);
/* Path of a spool file name; FLOE_ELIMIT if it does not fit in cap bytes. */
int floe_spool_path(const struct floe_spool *sp, const char *name, char *out, size_t cap);

#endif
