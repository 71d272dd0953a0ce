/* The syslog and journal keys of an input (inputs[N] with type: syslog or journal): listen URIs checked by the
 * same pure parser the listeners use (platform/listen.h), so that a URI that passes
 * `floe check` cannot fail to parse at start-up; unix socket modes; the tls section; and
 * the rules that keep tail keys off syslog inputs and syslog keys off tail inputs. */
#include "agent/config/keys_impl.h"

#include "agent/config/config.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/journal.h"
#include "platform/listen.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TLS(member) offsetof(struct floe_config_input, syslog.tls.member)

static const struct floe_key tls_keys[] = {
    {.name = "cert",
     .type = FLOE_KT_STRING,
     .off = TLS(cert),
     .flags = FLOE_KF_REQUIRED,
     .help = "PEM: the server certificate, then any intermediates"},
    {.name = "key",
     .type = FLOE_KT_STRING,
     .off = TLS(key),
     .flags = FLOE_KF_REQUIRED,
     .help = "PEM or DER private key"},
    {.name = "key_password",
     .type = FLOE_KT_STRING,
     .off = TLS(key_password),
     .help = "env:NAME or file:/path holding the key's password"},
    {.name = "ca",
     .type = FLOE_KT_STRING,
     .off = TLS(ca),
     .help = "PEM: CAs client certificates must chain to (mutual TLS); off: none asked"},
};
const struct floe_key_section floe_keys_syslog_tls_section = FLOE_KEY_SECTION(tls_keys, NULL, NULL);

int floe_config_check_listen(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			     const char *path, char **value)
{
	struct floe_listen_uri u;
	struct floe_listen_uri_error e = {0};
	char shown[FLOE_KEYMAP_SHOW_CAP];
	size_t n = strlen(*value);
	if (floe_listen_uri_parse(*value, n, &u, &e) == 0)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT, "key '%s': '%s': %s (at byte %zu)", path,
				floe_keymap_show(*value, n, shown), e.msg, e.off);
}

int floe_config_parse_mode(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, const char *s, size_t len, char *field)
{
	uint32_t v = 0;
	bool ok = len >= 1 && len <= 4;
	for (size_t i = 0; ok && i < len; i++) {
		ok = s[i] >= '0' && s[i] <= '7';
		v = v * 8 + (uint32_t)(s[i] - '0');
	}
	if (!ok) {
		char shown[FLOE_KEYMAP_SHOW_CAP];
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected permission bits in octal (0660, 0666), "
					"got '%s'",
					path, floe_keymap_show(s, len, shown));
	}
	memcpy(field, &v, sizeof(v));
	return 0;
}

int floe_config_format_mode(struct floe_buf *out, const char *field)
{
	uint32_t v;
	memcpy(&v, field, sizeof(v));
	return floe_buf_printf(out, "\"%04o\"", (unsigned)v);
}

/* The keys only one type reads. */
static const char *const tail_only[] = {
    "paths",	 "exclude",	"start_at",	  "max_line_bytes", "format",	   "parser",
    "pattern",	 "multiline",	"timestamp",	  "long_lines",	    "rotate_wait", "max_open_files",
    "forget_after", "follow_symlinks", "partial_line_timeout", NULL};
static const char *const syslog_only[] = {
    "listen",	   "max_connections", "idle_timeout", "max_message_bytes", "socket_receive_buffer",
    "host_from",   "zone",	      "socket_mode",  "socket_owner",	   "socket_group",
    "tls",	   NULL};
static const char *const journal_only[] = {"matches", "directory", "fields", "include_own",
					   NULL};

/* A journal field name as journald accepts it: upper-case letters, digits and '_', not
 * starting with a digit, at most 64 bytes. */
static bool field_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

int floe_config_check_match(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			    const char *path, char **value)
{
	const char *eq = strchr(*value, '=');
	if (eq && field_name_ok(*value, (size_t)(eq - *value)))
		return 0;
	char shown[FLOE_KEYMAP_SHOW_CAP];
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected FIELD=value with a journal field name "
				"(A-Z, 0-9, _), got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

int floe_config_check_field_name(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				 const char *path, char **value)
{
	if (field_name_ok(*value, strlen(*value)))
		return 0;
	char shown[FLOE_KEYMAP_SHOW_CAP];
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a journal field name (A-Z, 0-9, _), got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

static const struct floe_cnode *given(const struct floe_cnode *map, const char *name)
{
	const struct floe_cnode *v = floe_keymap_find_value(map, name);
	return v && !floe_cnode_is_null(v) ? v : NULL;
}

/* The first of keys given in map, other than keep (may be NULL), is an error. */
static int refuse_others(struct floe_config_ctx *ctx, const struct floe_cnode *map,
			 const char *path, const char *const *keys, const char *keep,
			 const char *type, const char *why)
{
	for (size_t k = 0; keys[k]; k++) {
		if (keep && strcmp(keys[k], keep) == 0)
			continue;
		const struct floe_cnode *v = given(map, keys[k]);
		if (v)
			return floe_config_fail(ctx, v, FLOE_EFORMAT,
						"key '%s.%s': not a key of a %s input%s", path,
						keys[k], type, why);
	}
	return 0;
}

static int syslog_rules(struct floe_config_ctx *ctx, const struct floe_cnode *map,
			const char *path, struct floe_config_input *in)
{
	int rc = refuse_others(ctx, map, path, tail_only, NULL, "syslog",
			       " (a syslog message is read by its header: RFC 5424 or 3164)");
	if (rc)
		return rc;
	if (in->syslog.nlisten == 0)
		return floe_config_fail(ctx, map, FLOE_EFORMAT,
					"missing required key '%s.listen' (a syslog input listens on "
					"udp://, tcp://, tls://HOST:PORT, unix:///path or "
					"unix+stream:///path)",
					path);
	bool any_tls = false;
	for (size_t i = 0; i < in->syslog.nlisten; i++) {
		struct floe_listen_uri u;
		const char *s = in->syslog.listen[i];
		if (floe_listen_uri_parse(s, strlen(s), &u, NULL) == 0 &&
		    u.transport == FLOE_LISTEN_TLS)
			any_tls = true;
	}
	if (any_tls && !in->syslog.tls.cert)
		return floe_config_fail(ctx, given(map, "listen"), FLOE_EFORMAT,
					"key '%s.listen': a tls:// listener needs %s.tls with cert "
					"and key",
					path, path);
	if (!any_tls && in->syslog.tls.cert)
		return floe_config_fail(ctx, given(map, "tls"), FLOE_EFORMAT,
					"key '%s.tls': no tls:// listener uses it", path);
	return 0;
}

int floe_config_input_type_rules(struct floe_config_ctx *ctx, const struct floe_cnode *map,
				 const char *path, struct floe_config_input *in)
{
	int rc;
	if (in->type == FLOE_INPUT_SYSLOG) {
		if ((rc = refuse_others(ctx, map, path, journal_only, NULL, "syslog",
					" (it is one of type journal)")))
			return rc;
		return syslog_rules(ctx, map, path, in);
	}
	if (in->type == FLOE_INPUT_JOURNAL) {
		if (!floe_journal_supported())
			return floe_config_fail(ctx, given(map, "type"), FLOE_EFORMAT,
						"key '%s.type': this floe was built without the "
						"systemd journal (libsystemd)",
						path);
		if ((rc = refuse_others(ctx, map, path, tail_only, "start_at", "journal",
					" (journal entries come with their fields)")) ||
		    (rc = refuse_others(ctx, map, path, syslog_only, NULL, "journal",
					" (it is one of type syslog)")))
			return rc;
		return 0;
	}
	if ((rc = refuse_others(ctx, map, path, syslog_only, "zone", "tail",
				" (it is one of type syslog)")) ||
	    (rc = refuse_others(ctx, map, path, journal_only, NULL, "tail",
				" (it is one of type journal)")))
		return rc;
	const struct floe_cnode *v = floe_keymap_find_value(map, "paths");
	if (in->npaths == 0 && v)
		return floe_config_fail(ctx, v, FLOE_EFORMAT, "key '%s.paths': a value is required",
					path);
	if (in->npaths == 0)
		return floe_config_fail(ctx, map, FLOE_EFORMAT, "missing required key '%s.paths'",
					path);
	return 0;
}
