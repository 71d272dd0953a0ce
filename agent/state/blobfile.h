/* The blob file: one opaque blob kept durably in one file, framed with a magic, a
 * version, its length and a CRC32C, and replaced atomically (temp file, fsync, rename,
 * fsync dir). A torn or damaged file is reported, never trusted. The agent's durable
 * state is made of such files: the checkpoint (input positions, run/runner_state.c),
 * each spool entry (lake/spool.c) and the installation file (state/identity.c). */
#ifndef FLOE_STATE_BLOBFILE_H
#define FLOE_STATE_BLOBFILE_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

/* File layout, little-endian: "FLCK" | u32 version (1) | u64 payload length | u32 CRC32C
 * of the payload | payload. (The magic comes from the checkpoint, the first such file.) */
#define FLOE_BLOBFILE_VERSION 1
#define FLOE_BLOBFILE_HEADER 20
/* Largest payload accepted on load (and on save). */
#define FLOE_BLOBFILE_MAX ((size_t)64 << 20)

/* Replaces the blob file at path with blob[0..len) (borrowed). On failure the previous
 * file is left intact. FLOE_ELIMIT if len exceeds FLOE_BLOBFILE_MAX. */
int floe_blobfile_save(const char *path, const uint8_t *blob, size_t len);

/* As floe_blobfile_save for a file made once (up to 4 KiB): created only if path does
 * not exist (-EEXIST otherwise, also when processes race), never replaced. */
int floe_blobfile_create(const char *path, const uint8_t *blob, size_t len);

/* Loads the blob file at path: *blob (owned by the caller, from a; free with floe_free;
 * never NULL on success, even when *len is 0). -ENOENT when there is none; FLOE_ECORRUPT
 * on a bad magic, version, length or CRC; FLOE_ENOMEM. On failure *blob is untouched. */
int floe_blobfile_load(struct floe_alloc *a, const char *path, uint8_t **blob, size_t *len);

/* Sets a damaged state file aside: moves path into quarantine/ beside it (made if need
 * be), as <name>, or <name>.<k> (k = 1, 2, ...) when one of that name is there already,
 * so that an operator can look at it while the agent starts without it. The new path
 * goes to out (cap bytes). */
int floe_blobfile_quarantine(const char *path, char *out, size_t cap);

#endif
