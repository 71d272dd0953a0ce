/* Who this agent is. An installation is one state_dir: its id, a random UUID, is made
 * once in state_dir/installation (framed like the checkpoint: magic, version, length,
 * CRC32C; written to a temp file, fsynced and linked into place, so two processes racing
 * to make it agree on one). The installation id names the installation's data files and
 * commits (floe.installation-id), so that two agents given one agent.id never take each
 * other's files or commit sequence, and the checkpoint belongs to it, so that a new
 * agent.id (or a renamed host) keeps the positions. The agent id, which operators see,
 * defaults to "<host>-<16 hex digits>" from /etc/machine-id (hashed with a floe-specific
 * key, as systemd asks of applications: the raw id is confidential) or, on a machine
 * without one (containers), from the installation id. */
#ifndef FLOE_PIPELINE_IDENTITY_H
#define FLOE_PIPELINE_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_err;
struct floe_rand;

#define FLOE_IDENTITY_FILE "installation"
/* Its second copy, made beside it (see floe_identity_open). */
#define FLOE_IDENTITY_COPY "installation.copy"
#define FLOE_MACHINE_ID_PATH "/etc/machine-id"

struct floe_identity {
	char installation[37]; /* UUID v4, lowercase */
	/* 16 hex digits of the machine the installation was made on (floe_identity_machine),
	 * "" when that machine had no machine id. */
	char machine[17];
	/* The agent id of a checkpoint from a floe without installation ids that this
	 * installation continues: that agent's commits are this installation's. "" if none. */
	char legacy_agent_id[65];
	int64_t created_ms;
	/* What floe_identity_open found (not in the file): the installation files it set
	 * aside as damaged, and whether it had to make a new id in place of a damaged one. */
	unsigned damaged;
	bool renewed;
	/* Where it runs (not in the file, made at each start by floe_identity_home): "" when
	 * the machine's hardware says nothing of itself. */
	char home[33];
};

/* The file's payload (JSON). decode is pure and checks every field (FLOE_EFORMAT,
 * FLOE_EPARSE); it is the fuzz target's entry point. */
int floe_identity_encode(const struct floe_identity *id, struct floe_buf *out);
int floe_identity_decode(struct floe_alloc *a, const char *text, size_t len, struct floe_identity *out);

/* This machine's id for floe: 16 hex digits of HMAC-SHA256(the machine id at path,
 * "floe agent id"). -ENOENT when path is absent or holds no valid machine id (32 hex
 * digits, not all zero; "uninitialized" on a first boot counts as none). */
int floe_identity_machine(const char *path, char out[17]);

/* An installation's home: 32 hex digits of HMAC-SHA256(hw, machine "\n" state_dir), hw
 * being the machine's hardware fingerprint (platform/machine.h) and machine its
 * floe_identity_machine value ("" without one); "" when hw is NULL or empty. Commits
 * carry it (floe.installation-home). A new installation whose home is that of the
 * installation committing under its agent.id is that installation with its state_dir
 * wiped: the same hardware and the same state_dir path, whose lock says no other agent
 * runs on it. It takes over as agent.replaces would (lake/table.c). A clone of a
 * device's image (the same /etc/machine-id and host name, so the same default agent.id)
 * has other hardware, and a second state_dir on one machine another path: both are
 * still refused. */
void floe_identity_home(const char *hw, const char *machine, const char *state_dir, char out[33]);

/* The default agent id: "<host>-<hex16>", the host name cut to fit 64 bytes with its
 * bytes outside [A-Za-z0-9._-] replaced by '-' ("floe" without a host name). */
void floe_identity_default_agent_id(const char *host, const char *hex16, char out[65]);
/* The first 16 hex digits of an installation id (for the default agent id). */
void floe_identity_hex16(const struct floe_identity *id, char out[17]);

/* Loads state_dir/installation, or with create makes it: a new random id, except that the
 * installation's copy (state_dir/installation.copy) or a checkpoint naming an installation
 * keeps that id, and a checkpoint of a floe without installation ids is continued
 * (legacy_agent_id). With create, a damaged file is no error: it is set aside
 * (quarantine/, counted in out->damaged) and made again from the copy or the checkpoint,
 * else with a new id (out->renewed), since the id names this installation's commits and a
 * new one may commit again what the old one committed but had not recorded. The copy is
 * made (again) when it is missing, damaged or not the file's. Without create nothing is
 * written: the id the file, its copy or the checkpoint gives, or -ENOENT when there is
 * none (FLOE_ECORRUPT when the file is damaged and nothing else names it). machine is
 * this machine's floe_identity_machine value or "" without one. FLOE_EIDENTITY when the
 * file was made on another machine (a copied or cloned state_dir); err (may be NULL)
 * says why and what to do. A new id comes from rand (NULL: the kernel's randomness). */
int floe_identity_open(struct floe_alloc *a, const char *state_dir, const char *machine,
		       bool create, const struct floe_rand *rand, struct floe_identity *out,
		       struct floe_err *err);

#endif
