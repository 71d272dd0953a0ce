/* The installation id (state_dir/installation) and the default agent id; see identity.h. */
#include "agent/state/identity.h"

#include "agent/env/env.h"
#include "agent/state/blobfile.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/base/limits.h"
#include "formats/json/json.h"
#include "platform/clock.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/sha.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PAYLOAD_MAX 4096
#define IDENTITY_VERSION 1

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_uuid(const char *s)
{
	if (strlen(s) != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !is_hex(s[i]))
			return false;
	}
	return true;
}

static bool is_hex_n(const char *s, size_t n)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	return true;
}

static bool is_agent_id(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

int floe_identity_encode(const struct floe_identity *id, struct floe_buf *out)
{
	int rc = floe_buf_printf(out, "{\"version\":%d,\"installation\":\"%s\",\"created_ms\":%" PRId64
				 ",\"machine\":\"%s\",\"legacy_agent_id\":\"%s\"}\n",
				 IDENTITY_VERSION, id->installation, id->created_ms, id->machine,
				 id->legacy_agent_id);
	return rc;
}

int floe_identity_decode(struct floe_alloc *a, const char *text, size_t len, struct floe_identity *out)
{
	struct floe_json_doc *doc = NULL;
	int rc = floe_json_parse(a, text, len, 4 * PAYLOAD_MAX, &doc, NULL);
	if (rc)
		return rc;
	const struct floe_json *root = floe_json_root(doc);
	int64_t version, created;
	const char *inst, *machine, *legacy;
	rc = FLOE_EFORMAT;
	if (floe_json_get_int(root, "version", &version) || version != IDENTITY_VERSION ||
	    floe_json_get_str(root, "installation", &inst) || !is_uuid(inst) ||
	    floe_json_get_int(root, "created_ms", &created) || floe_json_get_str(root, "machine", &machine) ||
	    (machine[0] && !is_hex_n(machine, 16)) || floe_json_get_str(root, "legacy_agent_id", &legacy) ||
	    (legacy[0] && !is_agent_id(legacy)))
		goto out;
	memset(out, 0, sizeof(*out));
	memcpy(out->installation, inst, 36);
	snprintf(out->machine, sizeof(out->machine), "%s", machine);
	snprintf(out->legacy_agent_id, sizeof(out->legacy_agent_id), "%s", legacy);
	out->created_ms = created;
	rc = 0;
out:
	floe_json_doc_free(doc);
	return rc;
}

int floe_identity_machine(const char *path, char out[17])
{
	void *data = NULL;
	size_t len = 0;
	int rc = floe_fs_read_file(NULL, path, 256, &data, &len);
	if (rc)
		return rc == -EFBIG || rc == -EISDIR ? -ENOENT : rc;
	const char *p = data;
	bool ok = len >= 32 && (len == 32 || p[32] == '\n');
	bool zero = true;
	for (size_t i = 0; ok && i < 32; i++) {
		ok = is_hex(p[i]);
		zero = zero && p[i] == '0';
	}
	uint8_t mac[FLOE_SHA256_LEN];
	static const char app[] = "floe agent id";
	if (ok && !zero)
		rc = floe_hmac_sha256(p, 32, app, sizeof(app) - 1, mac);
	floe_free(NULL, data);
	if (!ok || zero)
		return -ENOENT;
	if (rc)
		return rc;
	floe_hex_encode(mac, 8, out);
	return 0;
}

void floe_identity_home(const char *hw, const char *machine, const char *state_dir, char out[33])
{
	out[0] = '\0';
	if (!hw || !*hw)
		return;
	char msg[FLOE_PATH_MAX + 32];
	int n = snprintf(msg, sizeof(msg), "%s\n%s", machine ? machine : "", state_dir ? state_dir : "");
	uint8_t mac[FLOE_SHA256_LEN];
	if (n < 0 || (size_t)n >= sizeof(msg) || floe_hmac_sha256(hw, strlen(hw), msg, (size_t)n, mac))
		return;
	floe_hex_encode(mac, 16, out);
}

void floe_identity_default_agent_id(const char *host, const char *hex16, char out[65])
{
	char h[48];
	size_t n = 0;
	for (const char *p = host ? host : ""; *p && n < sizeof(h) - 1; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			  c == '_' || c == '-';
		h[n++] = ok ? c : '-';
	}
	h[n] = '\0';
	snprintf(out, 65, "%s-%.16s", n ? h : "floe", hex16);
}

void floe_identity_hex16(const struct floe_identity *id, char out[17])
{
	size_t n = 0;
	for (const char *p = id->installation; *p && n < 16; p++)
		if (*p != '-')
			out[n++] = *p;
	out[n] = '\0';
}

static int load(struct floe_alloc *a, const char *path, struct floe_identity *out)
{
	uint8_t *blob = NULL;
	size_t len = 0;
	int rc = floe_blobfile_load(a, path, &blob, &len);
	if (rc)
		return rc;
	rc = len > PAYLOAD_MAX ? FLOE_ECORRUPT : floe_identity_decode(a, (const char *)blob, len, out);
	floe_free(a, blob);
	return rc == FLOE_EPARSE || rc == FLOE_EFORMAT ? FLOE_ECORRUPT : rc;
}

/* What the checkpoint beside a missing installation file says about who made it: the
 * installation id it names (a checkpoint of this floe) or the agent id of one made by a
 * floe without installation ids. Both "" when there is no readable checkpoint. */
static void peek_checkpoint(struct floe_alloc *a, const char *state_dir, char inst[37], char legacy[65])
{
	char path[FLOE_PATH_MAX];
	uint8_t *blob = NULL;
	size_t len = 0;
	struct floe_json_doc *doc = NULL;
	inst[0] = legacy[0] = '\0';
	snprintf(path, sizeof(path), "%s/checkpoint", state_dir);
	if (floe_blobfile_load(a, path, &blob, &len) != 0)
		return;
	if (floe_json_parse(a, (const char *)blob, len, 2 * FLOE_BLOBFILE_MAX, &doc, NULL) == 0) {
		const struct floe_json *root = floe_json_root(doc);
		const char *s;
		if (floe_json_get_str(root, "installation", &s) == 0 && is_uuid(s))
			snprintf(inst, 37, "%s", s);
		else if (floe_json_get_str(root, "agent_id", &s) == 0 && is_agent_id(s))
			snprintf(legacy, 65, "%s", s);
	}
	floe_json_doc_free(doc);
	floe_free(a, blob);
}

/* Writes id as the blob file at path, made once (-EEXIST when there is one). */
static int write_once(struct floe_alloc *a, const char *path, const struct floe_identity *id)
{
	struct floe_buf b;
	floe_buf_init(&b, a, PAYLOAD_MAX);
	int rc = floe_identity_encode(id, &b);
	if (rc == 0)
		rc = floe_blobfile_create(path, b.data, b.len);
	floe_buf_fini(&b);
	return rc;
}

/* Sets a damaged installation file (or copy) aside and counts it. */
static void set_aside(const char *path, struct floe_identity *out)
{
	char to[FLOE_PATH_MAX];
	int rc = floe_blobfile_quarantine(path, to, sizeof(to));
	if (rc)
		floe_error("identity: %s is damaged and cannot be moved aside: %s", path, floe_strerror(rc));
	else
		floe_error("identity: %s is damaged (its checksum or contents fail): moved to %s", path, to);
	out->damaged++;
}

/* Who this installation was, when its file is missing or damaged: the copy, else the
 * checkpoint (which names the installation at every seal), else a new id. The copy and
 * the checkpoint are written at other times than the file, so one power cut rarely
 * damages all three. *from says which one answered ("" for a new id). */
static int recover(struct floe_alloc *a, const char *state_dir, const char *copy,
		   const struct floe_rand *rand, struct floe_identity *id, const char **from)
{
	int rc = load(a, copy, id);
	*from = "its copy";
	if (rc == 0)
		return 0;
	memset(id, 0, sizeof(*id));
	peek_checkpoint(a, state_dir, id->installation, id->legacy_agent_id);
	*from = "the checkpoint";
	if (id->installation[0])
		return 0;
	*from = "";
	return floe_env_uuid4(rand, id->installation); /* no weak fallback for a unique id */
}

/* Makes the installation file, after it was found missing (damaged: found damaged and set
 * aside): see floe_identity_open. */
static int create(struct floe_alloc *a, const char *state_dir, const char *path, const char *copy,
		  const char *machine, const struct floe_rand *rand, struct floe_identity *out)
{
	struct floe_identity id;
	const char *from;
	unsigned damaged = out->damaged;
	int rc = recover(a, state_dir, copy, rand, &id, &from);
	if (rc)
		return rc;
	if (strcmp(from, "its copy") != 0) {
		snprintf(id.machine, sizeof(id.machine), "%s", machine ? machine : "");
		id.created_ms = floe_clock_now_us() / 1000;
	}
	rc = write_once(a, path, &id);
	if (rc == -EEXIST)
		return load(a, path, out); /* another process made it first: use theirs */
	if (rc)
		return rc;
	if (from[0])
		floe_warn("identity: %s was %s; %s names installation %s, which continues", path,
			  damaged ? "damaged" : "missing", from, id.installation);
	else if (damaged)
		floe_error("identity: %s was damaged and neither its copy nor the checkpoint names the "
			   "installation: new installation %s. A table the old one committed to under "
			   "this agent.id gets nothing until agent.replaces names the old one (the "
			   "table's refusal names it); what the old one committed but had not "
			   "removed from the spool is then taken as in by the spool's record of its "
			   "last commit, unless a crash came before that record",
			   path, id.installation);
	else
		floe_info("identity: new installation %s in %s%s%s", id.installation, state_dir,
			  id.legacy_agent_id[0] ? ", continuing agent " : "", id.legacy_agent_id);
	id.damaged = damaged;
	id.renewed = damaged && !from[0];
	*out = id;
	return 0;
}

/* Makes sure the copy holds the installation: made when missing (a state_dir of an older
 * floe, or a copy lost), set aside and made again when damaged or not the file's. A failure
 * is logged: the file still holds the id. */
static void keep_copy(struct floe_alloc *a, const char *copy, struct floe_identity *id)
{
	struct floe_identity c;
	int rc = load(a, copy, &c);
	if (rc == 0 && strcmp(c.installation, id->installation) == 0)
		return;
	if (rc == FLOE_ECORRUPT || rc == 0)
		set_aside(copy, id);
	if (rc == 0 || rc == FLOE_ECORRUPT || rc == -ENOENT)
		rc = write_once(a, copy, id);
	if (rc && rc != -EEXIST)
		floe_warn("identity: cannot write the installation's copy %s: %s", copy, floe_strerror(rc));
}

int floe_identity_open(struct floe_alloc *a, const char *state_dir, const char *machine,
		       bool create_it, const struct floe_rand *rand, struct floe_identity *out,
		       struct floe_err *err)
{
	char path[FLOE_PATH_MAX], copy[FLOE_PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", state_dir, FLOE_IDENTITY_FILE);
	snprintf(copy, sizeof(copy), "%s/%s", state_dir, FLOE_IDENTITY_COPY);
	int rc = load(a, path, out);
	unsigned damaged = rc == FLOE_ECORRUPT;
	if (rc == 0 && create_it) {
		out->damaged = 0;
		out->renewed = false;
		keep_copy(a, copy, out);
	} else if (!create_it && (rc == -ENOENT || rc == FLOE_ECORRUPT)) {
		/* Only looks (floe check): what a run would continue, if anything. */
		const char *from;
		rc = recover(a, state_dir, copy, floe_env_rand(), out, &from);
		if (rc == 0 && !from[0])
			rc = damaged ? FLOE_ECORRUPT : -ENOENT;
		if (rc == -ENOENT)
			return rc;
		out->damaged = damaged;
		out->renewed = false;
	} else if (rc == -ENOENT || rc == FLOE_ECORRUPT) {
		/* Stopping here would stop an unattended device for good: every start would
		 * find the same file. */
		memset(out, 0, sizeof(*out));
		if (damaged)
			set_aside(path, out);
		if ((rc = floe_fs_mkdirs(state_dir)) == 0)
			rc = create(a, state_dir, path, copy, machine, rand ? rand : floe_env_rand(), out);
		if (rc == 0)
			keep_copy(a, copy, out);
	}
	if (rc)
		return floe_err_set(
		    err, rc, "%s: %s (expected floe's installation file, made once in state_dir)",
		    path, floe_strerror(rc));
	if (machine && machine[0] && out->machine[0] && strcmp(machine, out->machine) != 0) {
		return floe_err_set(
		    err, FLOE_EIDENTITY,
		    "state_dir %s was made on another machine (installation %s, machine %s; this "
		    "is "
		    "machine %s): a copied or cloned state_dir would commit another device's data "
		    "as "
		    "its own. On a cloned device, empty state_dir; if this device took over the "
		    "other one's disk for good, remove %s and %s, and floe continues that "
		    "installation here (the checkpoint names it)",
		    state_dir, out->installation, out->machine, machine, path, copy);
	}
	return 0;
}
