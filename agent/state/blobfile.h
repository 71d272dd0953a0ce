/* The checkpoint store: one opaque blob (the tail positions) kept durably in one file,
 * framed with a magic, a version, its length and a CRC32C, and replaced atomically
 * (temp file, fsync, rename, fsync dir). A torn or damaged file is reported, never
 * trusted. */
#ifndef FLOE_INPUT_CHECKPOINT_H
#define FLOE_INPUT_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

/* File layout, little-endian: "FLCK" | u32 version (1) | u64 payload length |
 * u32 CRC32C of the payload | payload. */
#define FLOE_CHECKPOINT_VERSION 1
#define FLOE_CHECKPOINT_HEADER 20
/* Largest payload accepted on load (and on save). */
#define FLOE_CHECKPOINT_MAX ((size_t)64 << 20)

/* Replaces the checkpoint at path with blob[0..len) (borrowed). On failure the previous
 * checkpoint is left intact. FLOE_ELIMIT if len exceeds FLOE_CHECKPOINT_MAX. */
int floe_checkpoint_save(const char *path, const uint8_t *blob, size_t len);

/* As floe_checkpoint_save for a file made once (up to 4 KiB): created only if path does
 * not exist (-EEXIST otherwise, also when processes race), never replaced. */
int floe_checkpoint_create(const char *path, const uint8_t *blob, size_t len);

/* Loads the checkpoint at path: *blob (owned by the caller, from a; free with floe_free;
 * never NULL on success, even when *len is 0). -ENOENT when there is none; FLOE_ECORRUPT
 * on a bad magic, version, length or CRC; FLOE_ENOMEM. On failure *blob is untouched. */
int floe_checkpoint_load(struct floe_alloc *a, const char *path, uint8_t **blob, size_t *len);

#endif
