/* The syslog listeners kept open between two configurations (syslog_handover.h): a list
 * of open listeners, each with the key that says which listener of the next
 * configuration may take it. */
#include "agent/input/syslog_handover.h"

#include "agent/config/config.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/listen.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>


struct kept {
	struct kept *next;
	struct floe_listener *l;
	char key[]; /* key_of's */
};

struct floe_syslog_handover {
	const struct floe_config *next; /* borrowed */
	struct kept *kept;
};

/* What makes a listener the same one: its address as parsed (so that spellings of one
 * address match), the options its socket was made with, and the TLS files its input
 * loads. The key's password is not part of it: it is a secret, and it changes nothing
 * of the socket (the next input loads its TLS files anew either way). A port of 0 asks
 * for a new port each time: never kept. Returns the key's length, 0 for none. */
static size_t key_of(const struct floe_config_input *c, const char *listen, char *out, size_t cap)
{
	struct floe_listen_uri u;
	if (c->type != FLOE_INPUT_SYSLOG ||
	    floe_listen_uri_parse(listen, strlen(listen), &u, NULL) != 0)
		return 0;
	bool local = u.transport == FLOE_LISTEN_UNIX || u.transport == FLOE_LISTEN_UNIX_STREAM;
	if (!local && u.port == 0)
		return 0;
	char uri[FLOE_LISTEN_URI_MAX];
	if (floe_listen_uri_format(&u, u.port, uri, sizeof(uri)) < 0)
		return 0;
	const struct floe_config_input *s = c; /* the syslog settings */
	int n = snprintf(out, cap, "%s|rcvbuf=%" PRIu64 "|mode=%o|owner=%s|group=%s|cert=%s|key=%s|ca=%s",
			 uri, s->syslog.receive_buffer, (unsigned)s->syslog.socket_mode,
			 s->syslog.socket_owner ? s->syslog.socket_owner : "",
			 s->syslog.socket_group ? s->syslog.socket_group : "",
			 s->syslog.tls.cert ? s->syslog.tls.cert : "",
			 s->syslog.tls.key ? s->syslog.tls.key : "", s->syslog.tls.ca ? s->syslog.tls.ca : "");
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

int floe_syslog_handover_new(struct floe_syslog_handover **out)
{
	*out = floe_calloc(NULL, 1, sizeof(**out));
	return *out ? 0 : FLOE_ENOMEM;
}

void floe_syslog_handover_close_rest(struct floe_syslog_handover *h)
{
	while (h && h->kept) {
		struct kept *k = h->kept;
		h->kept = k->next;
		char uri[FLOE_LISTEN_URI_MAX];
		if (floe_listen_uri_format(floe_listener_uri(k->l), floe_listener_port(k->l), uri,
					   sizeof(uri)) > 0)
			floe_info("syslog: %s closed: the configuration no longer lists it so", uri);
		floe_listener_close(k->l);
		floe_free(NULL, k);
	}
}

void floe_syslog_handover_free(struct floe_syslog_handover *h)
{
	if (!h)
		return;
	floe_syslog_handover_close_rest(h);
	floe_free(NULL, h);
}

void floe_syslog_handover_expect(struct floe_syslog_handover *h, const struct floe_config *next)
{
	if (h)
		h->next = next;
}

bool floe_syslog_handover_expecting(const struct floe_syslog_handover *h)
{
	return h && h->next;
}

static int put_str(char *out, size_t cap, size_t *at, const char *k, const char *v)
{
	int n = snprintf(out + *at, cap - *at, "|%s=%zu:%s", k, v ? strlen(v) : 0, v ? v : "");
	if (n < 0 || (size_t)n >= cap - *at)
		return -1;
	*at += (size_t)n;
	return 0;
}

size_t floe_syslog_handover_input_key(const struct floe_config_input *c, size_t index, char *out,
				      size_t cap)
{
	if (c->type != FLOE_INPUT_SYSLOG || cap == 0)
		return 0;
	/* Each string with its length, so that no two settings spell one key. */
	int n = snprintf(out, cap,
			 "#%zu|conns=%" PRIu32 "|idle=%" PRIu64 "|max=%" PRIu64 "|rcvbuf=%" PRIu64
			 "|host=%d|zone=%" PRId32 "|mode=%o",
			 index, c->syslog.max_connections, c->syslog.idle_timeout_ms,
			 c->syslog.max_message_bytes, c->syslog.receive_buffer, (int)c->syslog.host_from,
			 c->syslog.zone_offset_s, (unsigned)c->syslog.socket_mode);
	if (n < 0 || (size_t)n >= cap)
		return 0;
	size_t at = (size_t)n;
	int rc = put_str(out, cap, &at, "name", c->name);
	for (size_t i = 0; rc == 0 && i < c->syslog.nlisten; i++)
		rc = put_str(out, cap, &at, "listen", c->syslog.listen[i]);
	if (rc == 0)
		rc = put_str(out, cap, &at, "owner", c->syslog.socket_owner);
	if (rc == 0)
		rc = put_str(out, cap, &at, "group", c->syslog.socket_group);
	if (rc == 0)
		rc = put_str(out, cap, &at, "cert", c->syslog.tls.cert);
	if (rc == 0)
		rc = put_str(out, cap, &at, "key", c->syslog.tls.key);
	if (rc == 0)
		rc = put_str(out, cap, &at, "ca", c->syslog.tls.ca);
	return rc == 0 ? at : 0;
}

bool floe_syslog_handover_keeps(const struct floe_syslog_handover *h,
				const struct floe_config_input *cfg, size_t index)
{
	if (!h || !h->next || index >= h->next->ninputs)
		return false;
	const struct floe_config_input *o = &h->next->inputs[index];
	/* The key's password is a secret and no part of the key: compared here. */
	const char *p = cfg->syslog.tls.key_password, *q = o->syslog.tls.key_password;
	if ((p == NULL) != (q == NULL) || (p && strcmp(p, q) != 0))
		return false;
	char a[FLOE_SYSLOG_KEY_MAX], b[FLOE_SYSLOG_KEY_MAX];
	size_t n = floe_syslog_handover_input_key(cfg, index, a, sizeof(a));
	return n && floe_syslog_handover_input_key(o, index, b, sizeof(b)) == n && memcmp(a, b, n) == 0;
}

bool floe_syslog_handover_wanted(const struct floe_syslog_handover *h,
				 const struct floe_config_input *cfg, const char *listen)
{
	if (!h || !h->next)
		return false;
	char key[FLOE_SYSLOG_KEY_MAX], other[FLOE_SYSLOG_KEY_MAX];
	if (!key_of(cfg, listen, key, sizeof(key)))
		return false;
	for (size_t i = 0; i < h->next->ninputs; i++) {
		const struct floe_config_input *c = &h->next->inputs[i];
		for (size_t k = 0; c->type == FLOE_INPUT_SYSLOG && k < c->syslog.nlisten; k++)
			if (key_of(c, c->syslog.listen[k], other, sizeof(other)) &&
			    strcmp(key, other) == 0)
				return true;
	}
	return false;
}

bool floe_syslog_handover_put(struct floe_syslog_handover *h, const struct floe_config_input *cfg,
			      const char *listen, struct floe_listener *l)
{
	char key[FLOE_SYSLOG_KEY_MAX];
	size_t n = key_of(cfg, listen, key, sizeof(key));
	struct kept *k = n ? floe_malloc(NULL, sizeof(*k) + n + 1) : NULL;
	if (!k)
		return false;
	memcpy(k->key, key, n + 1);
	k->l = l;
	k->next = h->kept;
	h->kept = k;
	return true;
}

struct floe_listener *floe_syslog_handover_take(struct floe_syslog_handover *h,
						const struct floe_config_input *cfg,
						const char *listen)
{
	char key[FLOE_SYSLOG_KEY_MAX];
	if (!h || !key_of(cfg, listen, key, sizeof(key)))
		return NULL;
	for (struct kept **p = &h->kept; *p; p = &(*p)->next) {
		if (strcmp((*p)->key, key) != 0)
			continue;
		struct kept *k = *p;
		struct floe_listener *l = k->l;
		*p = k->next;
		floe_free(NULL, k);
		return l;
	}
	/* One kept on the same address with other settings (a configuration that did not
	 * start kept it for itself, and the previous one comes back): it would hold the
	 * address the caller is about to bind. */
	size_t at = strcspn(key, "|");
	for (struct kept **p = &h->kept; *p;) {
		struct kept *k = *p;
		if (strncmp(k->key, key, at) != 0 || k->key[at] != '|') {
			p = &k->next;
			continue;
		}
		*p = k->next;
		floe_listener_close(k->l);
		floe_free(NULL, k);
	}
	return NULL;
}
